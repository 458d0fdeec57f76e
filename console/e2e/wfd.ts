// Starts a real `wfd serve` for the tests: free ports (port 0), a fresh
// data directory, JSON logs read until the console's address is logged.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface Wfd {
  /** The console's origin, e.g. http://127.0.0.1:41234 (the API answers there too). */
  origin: string;
  /** The API port's origin. */
  api: string;
  stop(): Promise<void>;
  /** Calls a method of WorkflowService over Connect JSON on the console's port. */
  call<T = any>(method: string, body: object, token?: string, namespace?: string): Promise<T>;
}

export async function startWfd(extraArgs: string[] = [], files: { [name: string]: string } = {}): Promise<Wfd> {
  const bin = process.env.WFD_BIN;
  if (!bin) {
    throw new Error("WFD_BIN must name a built wfd binary (console/test.sh builds one)");
  }
  const dir = mkdtempSync(join(tmpdir(), "wfd-console-e2e-"));
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
  }
  const args = ["serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--data", join(dir, "data"), "--log-format", "json",
    ...extraArgs.map((a) => a.replace("$DIR", dir))];
  const proc: ChildProcess = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const logs: string[] = [];
  const addrs = await new Promise<{ api: string; origin: string }>((resolve, reject) => {
    let api = "";
    let origin = "";
    const timer = setTimeout(() => reject(new Error("wfd did not log listening within 60 s:\n" + logs.join("\n"))), 60_000);
    proc.once("exit", (code) => reject(new Error(`wfd exited with ${code}:\n${logs.join("\n")}`)));
    createInterface({ input: proc.stderr! }).on("line", (line) => {
      logs.push(line);
      let rec: { msg?: string; addr?: string };
      try {
        rec = JSON.parse(line);
      } catch {
        return;
      }
      if (rec.msg === "console" && rec.addr) {
        origin = `http://${rec.addr}`;
      }
      // "listening" comes last, once both ports accept connections.
      if (rec.msg === "listening" && rec.addr) {
        api = `http://${rec.addr}`;
        clearTimeout(timer);
        if (origin) {
          resolve({ api, origin });
        } else {
          reject(new Error("wfd logged no console address:\n" + logs.join("\n")));
        }
      }
    });
  });
  const wfd: Wfd = {
    ...addrs,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async call(method, body, token, namespace) {
      const headers: { [k: string]: string } = { "content-type": "application/json" };
      if (token) {
        headers.authorization = `Bearer ${token}`;
      }
      if (namespace) {
        headers["wfd-namespace"] = namespace;
      }
      const res = await fetch(`${addrs.origin}/wfd.v1.WorkflowService/${method}`, { method: "POST", headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (!res.ok) {
        throw new Error(`${method}: HTTP ${res.status}: ${text}`);
      }
      return JSON.parse(text);
    },
  };
  return wfd;
}
