// Test helpers: a real `wfd serve` per test file, a TCP proxy that plays a
// flaky network, and small utilities.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { wfdClientForNode, type NodeClientOptions, type Protocol, type WfdClient } from "@wfd/client/node";
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
 * given one) and waits until it answers ListWorkflows.
 */
export async function startServer(dataDir?: string, extraArgs: string[] = []): Promise<TestServer> {
  const bin = wfdBin();
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "wfd-ts-data-"));
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const proc = spawn(bin, ["serve", "--addr", addr, "--data", dir, "--log-level", "warn", ...extraArgs], {
      stdio: ["ignore", "ignore", "pipe"],
    });
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
    const c = wfdClientForNode(addr, { timeoutMs: 1_000, retry: { maxAttempts: 1 } });
    try {
      const deadline = Date.now() + 15_000;
      for (;;) {
        if (proc.exitCode !== null) {
          throw new Error(`wfd serve exited with ${proc.exitCode}: ${stderr}`);
        }
        try {
          await c.workflows();
          break;
        } catch (e) {
          if (Date.now() > deadline) throw new Error(`wfd serve did not answer: ${String(e)}; ${stderr}`);
          await delay(50);
        }
      }
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

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Clients for every Node protocol, closed by the caller. */
export const protocols: Protocol[] = ["grpc", "connect", "grpcweb"];

export function client(addr: string, opts: NodeClientOptions = {}): WfdClient {
  return wfdClientForNode(addr, opts);
}

/** Every record of a handler's stream, to the terminal one. */
export async function drain(c: WfdClient, id: string, after: bigint | number = 0): Promise<WfdRecord[]> {
  const out: WfdRecord[] = [];
  for await (const r of c.stream(id, { after })) {
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

