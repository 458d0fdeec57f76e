// Test helpers: a real `wfd serve` per test file, clients with the tests'
// timeouts, waits for conditions, a TCP proxy that plays a flaky network.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { wfdClientForNode, type NodeClientOptions, type Protocol, type WfdClient } from "@wfd/client/node";
import { wfdClientForWeb, type WebClientOptions } from "@wfd/client/web";
import type { Record as WfdRecord } from "@wfd/client";

const here = dirname(fileURLToPath(import.meta.url));
/** clients/ts (this file is compiled to clients/ts/build/test). */
export const pkgDir = resolve(here, "../..");
const repoRoot = resolve(pkgDir, "../..");

let builtBin: string | undefined;

/** The wfd binary: $WFD_BIN, or one built from the repository once per process. */
export function wfdBin(): string {
  const env = process.env.WFD_BIN;
  if (env) {
    return env;
  }
  if (builtBin === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "wfd-ts-bin-"));
    const out = join(dir, "wfd");
    execFileSync("go", ["build", "-o", out, "./cmd/wfd"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    builtBin = out;
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return builtBin;
}

/** A free TCP port on 127.0.0.1 (free when asked; the server binds it next). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => res(port));
    });
  });
}

export interface TestServer {
  addr: string;
  dataDir: string;
  proc: ChildProcess;
  /** SIGTERM, and wait for the process to end. */
  stop(): Promise<void>;
}

/**
 * Starts `wfd serve` on a free port with a fresh data directory (or the
 * given one) and waits until it answers ListWorkflows. Handlers idle in
 * memory are never released by time (`--idle-timeout 0`): a test that
 * checks a handler's residency or the release count would otherwise depend
 * on how fast the machine gets there. Tests release by hand.
 */
export async function startServer(dataDir?: string, extraArgs: string[] = [], probe: NodeClientOptions = {}): Promise<TestServer> {
  const bin = wfdBin();
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "wfd-ts-data-"));
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const args = ["serve", "--addr", addr, "--data", dir, "--log-level", "warn", "--idle-timeout", "0", ...extraArgs];
    const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (process.env.WFD_TEST_VERBOSE) process.stderr.write(d);
    });
    const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));
    const stop = async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
      }
      await exited;
    };
    // One attempt per probe: the wait is the retry. Refused connections
    // fail at once; the timeout only bounds a probe the server accepted.
    const c = wfdClientForNode(addr, { ...probe, timeoutMs: 10_000, retry: { maxAttempts: 1 } });
    try {
      let last: unknown;
      await waitFor(
        () => `wfd serve answers ListWorkflows (last error: ${String(last)}; stderr: ${stderr})`,
        async () => {
          if (proc.exitCode !== null || proc.signalCode !== null) {
            throw new Error(`wfd serve exited with ${proc.exitCode ?? proc.signalCode}: ${stderr}`);
          }
          try {
            await c.workflows();
            return true;
          } catch (e) {
            last = e;
            return false;
          }
        },
      );
      return { addr, dataDir: dir, proc, stop };
    } catch (e) {
      await stop();
      // The port may have been taken between freePort and serve: try again.
      if (tries < 3 && /address already in use/.test(stderr)) continue;
      throw e;
    } finally {
      c.close();
    }
  }
}

/**
 * Bounds every wait of the tests. Far above what any condition takes on an
 * idle machine (milliseconds): it only turns a condition that never holds
 * into a failure instead of a hang, and a machine crowded by other work
 * must never reach it. (Go's tests use the same bound: internal/testwait.)
 */
export const WAIT_MS = 120_000;

/**
 * Polls cond until it returns something truthy, and returns that. Fails
 * with what (and the time it waited) if WAIT_MS passes first; an error cond
 * throws ends the wait at once. what may be a function, to describe the
 * state last seen.
 */
export async function waitFor<T>(
  what: string | (() => string),
  cond: () => T | undefined | null | false | Promise<T | undefined | null | false>,
): Promise<T> {
  const start = Date.now();
  let pause = 1;
  for (;;) {
    const got = await cond();
    if (got) return got;
    const waited = Date.now() - start;
    if (waited > WAIT_MS) {
      throw new Error(`waited ${waited} ms: not yet: ${typeof what === "string" ? what : what()}`);
    }
    await delay(pause);
    pause = Math.min(2 * pause, 50);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Clients for every Node protocol, closed by the caller. */
export const protocols: Protocol[] = ["grpc", "connect", "grpcweb"];

/**
 * A client over connect-node whose unary calls (with their retries) may
 * take up to WAIT_MS: the library's default of 10 s is about production
 * latencies, not a crowded test machine. A test about timeouts sets its own.
 */
export function nodeClient(addr: string, opts: NodeClientOptions = {}): WfdClient {
  return wfdClientForNode(addr, { timeoutMs: WAIT_MS, ...opts });
}

/** nodeClient's twin over connect-web (fetch). */
export function webClient(baseUrl: string, opts: WebClientOptions = {}): WfdClient {
  return wfdClientForWeb(baseUrl, { timeoutMs: WAIT_MS, ...opts });
}

/** Every record of a handler's stream, to the terminal one. */
export async function drain(c: WfdClient, id: string, after: bigint | number = 0): Promise<WfdRecord[]> {
  const out: WfdRecord[] = [];
  for await (const r of c.stream(id, { after, includeInternal: true })) {
    out.push(r);
  }
  return out;
}

/**
 * A TCP proxy between client and server that can cut every connection,
 * refuse the next few, or cut each connection after some bytes to the
 * client.
 */
export class Proxy {
  private readonly server: net.Server;
  private readonly conns = new Set<net.Socket>();
  /** Connections still to refuse. */
  refuse = 0;
  /** Bytes a connection forwards to the client before it is cut; 0: no limit. */
  budget = 0;
  /** Connections forwarded. */
  accepted = 0;

  private constructor(
    public target: string,
    server: net.Server,
  ) {
    this.server = server;
  }

  static async start(target: string): Promise<Proxy> {
    const server = net.createServer();
    const p = new Proxy(target, server);
    server.on("connection", (c) => p.onConnection(c));
    await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
    return p;
  }

  get addr(): string {
    const a = this.server.address() as net.AddressInfo;
    return `127.0.0.1:${a.port}`;
  }

  private onConnection(inbound: net.Socket): void {
    if (this.refuse > 0) {
      this.refuse--;
      inbound.destroy();
      return;
    }
    this.accepted++;
    const [host, port] = splitAddr(this.target);
    const outbound = net.connect(port, host);
    this.conns.add(inbound);
    this.conns.add(outbound);
    const budget = this.budget;
    let sent = 0;
    const closeBoth = () => {
      inbound.destroy();
      outbound.destroy();
      this.conns.delete(inbound);
      this.conns.delete(outbound);
    };
    inbound.on("error", closeBoth).on("close", closeBoth);
    outbound.on("error", closeBoth).on("close", closeBoth);
    inbound.on("data", (d: Buffer) => outbound.write(d));
    outbound.on("data", (d: Buffer) => {
      if (budget > 0 && sent + d.length >= budget) {
        inbound.write(d.subarray(0, budget - sent), () => closeBoth());
        sent = budget;
        return;
      }
      sent += d.length;
      inbound.write(d);
    });
  }

  /** Cuts every connection in flight: `reset` sends a TCP RST, else a FIN. */
  sever(reset = false): void {
    for (const s of this.conns) {
      if (reset) s.resetAndDestroy();
      else s.destroy();
    }
    this.conns.clear();
  }

  async close(): Promise<void> {
    this.sever();
    await new Promise<void>((res) => this.server.close(() => res()));
  }
}

function splitAddr(addr: string): [string, number] {
  const i = addr.lastIndexOf(":");
  return [addr.slice(0, i), Number(addr.slice(i + 1))];
}

