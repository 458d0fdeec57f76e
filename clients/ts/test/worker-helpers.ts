// Helpers of the worker tests: workers started and stopped by the test,
// the WorkerService's ListWorkers, waits for a handler's end.
import { spawn } from "node:child_process";

import { createClient } from "@connectrpc/connect";
import { HandlerStatus, type Handler, type WfdClient } from "@wfd/client";
import { nodeTransport, wfdClientForNode } from "@wfd/client/node";
import { Worker, WorkerService, type WorkerInfo, type WorkerOptions, type WorkflowSpec } from "@wfd/client/worker";

import { waitFor, wfdBin, type TestServer } from "./helpers.js";

export interface RunningWorker {
  worker: Worker;
  /** What run() came to: undefined, or the error it rejected with. */
  done: Promise<unknown>;
  /** Aborts run() and waits for it. */
  stop(): Promise<void>;
}

/** Starts a worker in this process; run() goes on until stop(). */
export function startWorker(addr: string, workflows: WorkflowSpec[], opts: Partial<WorkerOptions> = {}): RunningWorker {
  const worker = new Worker({ addr, name: "test", maxRuns: 4, workflows, ...opts });
  const ac = new AbortController();
  const done = worker.run(ac.signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  return {
    worker,
    done,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

/** The workers connected to the server at addr (in namespace, if given). */
export async function listWorkers(addr: string, namespace?: string): Promise<WorkerInfo[]> {
  const { transport, close } = nodeTransport(addr, { namespace });
  try {
    const res = await createClient(WorkerService, transport).listWorkers({}, { timeoutMs: 60_000 });
    return res.workers;
  } finally {
    close();
  }
}

/** Waits until the server lists n workers serving workflow (in namespace, if given). */
export async function waitForWorkers(addr: string, workflow: string, n = 1, namespace?: string): Promise<WorkerInfo[]> {
  let last: WorkerInfo[] = [];
  return waitFor(
    () => `${n} worker(s) serving ${workflow}; listed: ${JSON.stringify(last.map((w) => [w.name, w.workflows]))}`,
    async () => {
      last = await listWorkers(addr, namespace);
      const serving = last.filter((w) => w.workflows.includes(workflow));
      return serving.length >= n && serving;
    },
  );
}

/** Waits until the handler has ended, and returns it. */
export async function waitEnded(c: WfdClient, id: string): Promise<Handler> {
  let last: Handler | undefined;
  return waitFor(
    () => `handler ${id} ends (last: status ${last?.status}, error ${last?.error})`,
    async () => {
      last = await c.get(id);
      return last.status !== HandlerStatus.RUNNING && last;
    },
  );
}

/** Waits until the handler is idle (parked in a wait), and returns it. */
export async function waitIdle(c: WfdClient, id: string): Promise<Handler> {
  let last: Handler | undefined;
  return waitFor(
    () => `handler ${id} idle (last: status ${last?.status}, error ${last?.error})`,
    async () => {
      last = await c.get(id);
      if (last.status !== HandlerStatus.RUNNING) throw new Error(`handler ${id} ended: ${last.status} ${last.error}`);
      return last.idle !== undefined && last;
    },
  );
}

/** A promise with its resolve, to hold a step until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((res) => (open = res));
  return { promise, open };
}

/**
 * Starts `wfd serve` on addr with dataDir (a restart of an earlier
 * server: same port, same data) and waits until it answers.
 */
export async function restartServer(addr: string, dataDir: string): Promise<TestServer> {
  const proc = spawn(wfdBin(), ["serve", "--addr", addr, "--data", dataDir, "--log-level", "warn", "--idle-timeout", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await exited;
  };
  const c = wfdClientForNode(addr, { timeoutMs: 10_000, retry: { maxAttempts: 1 } });
  try {
    await waitFor(
      () => `wfd serve answers on ${addr} (stderr: ${stderr})`,
      async () => {
        if (proc.exitCode !== null) throw new Error(`wfd serve exited with ${proc.exitCode}: ${stderr}`);
        try {
          await c.workflows();
          return true;
        } catch {
          return false;
        }
      },
    );
  } catch (e) {
    await stop();
    throw e;
  } finally {
    c.close();
  }
  return { addr, dataDir, proc, stop };
}
