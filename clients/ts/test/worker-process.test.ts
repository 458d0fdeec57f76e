// Workers and processes dying: a worker process killed with SIGKILL in the
// middle of a step, and wfd restarted under connected workers.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { HandlerStatus, type WfdClient } from "@wfd/client";
import { step, workflow } from "@wfd/client/worker";

import { drain, nodeClient, startServer, waitFor, type TestServer } from "./helpers.js";
import { killWorkflow } from "./kill-workflow.js";
import { gate, restartServer, startWorker, waitEnded, waitForWorkers, waitIdle } from "./worker-helpers.js";

const here = dirname(fileURLToPath(import.meta.url));

let server: TestServer;
let c: WfdClient;
before(async () => {
  server = await startServer();
  c = nodeClient(server.addr);
});
after(async () => {
  c?.close();
  await server?.stop();
});

test("a worker process killed with SIGKILL mid-step: the run finishes on a second worker", async () => {
  const markers = mkdtempSync(join(tmpdir(), "wfd-ts-markers-"));
  const proc = spawn(process.execPath, [join(here, "worker-proc.js"), server.addr, markers, "doomed"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  const second = startWorker(server.addr, [killWorkflow("finish", markers, "second")], { name: "second" });
  try {
    await waitForWorkers(server.addr, "kill-t");
    const stats = await c.stats();
    // Only the worker process serves kill-t until the run is in its hands.
    await second.stop();
    const h = await c.run("kill-t", { n: 1 });
    await waitFor(() => `the step runs in the worker process (stderr: ${stderr})`, () => existsSync(join(markers, "running-1")));
    const again = startWorker(server.addr, [killWorkflow("finish", markers, "second")], { name: "second" });
    try {
      await waitForWorkers(server.addr, "kill-t", 2);
      proc.kill("SIGKILL");
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      // Dispatched again, not retried: the same attempt.
      assert.deepEqual(got.result, { by: "second", attempt: 1 });
      const written = (await drain(c, h.handlerId)).flatMap((r) => (r.kind.case === "eventWritten" ? [r.kind.value.data] : []));
      assert.deepEqual(written, [{ by: "second" }], "the killed run left nothing on the stream");
      const after = await c.stats();
      assert.ok(after.redispatchesTotal > stats.redispatchesTotal, `redispatches ${stats.redispatchesTotal} → ${after.redispatchesTotal}`);
    } finally {
      await again.stop();
    }
  } finally {
    proc.kill("SIGKILL");
    await exited;
    await second.stop();
    rmSync(markers, { recursive: true, force: true });
  }
});

test("wfd restarts with workers connected: they reconnect on their own and handlers continue", async () => {
  const first = await startServer();
  let srv = first;
  const cl = () => nodeClient(srv.addr);
  let holds = 0;
  const held = gate();
  const wf = workflow({
    name: "restart-t",
    steps: {
      s: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
        if (ev.data["hold"]) {
          holds++;
          // Held until the test lets it go; a run cut by the restart ends here.
          await new Promise<void>((res, rej) => {
            void held.promise.then(res);
            ctx.signal.addEventListener("abort", () => rej(new Error("run lost")), { once: true });
          });
          ctx.send("stop", { held: true });
          return;
        }
        const go = await ctx.waitFor("go");
        ctx.send("stop", { go: go.data });
      }),
    },
  });
  const w = startWorker(srv.addr, [wf], { name: "survivor" });
  let c1 = cl();
  try {
    await waitForWorkers(srv.addr, "restart-t");
    const parked = await c1.run("restart-t", {});
    await waitIdle(c1, parked.handlerId);
    const busy = await c1.run("restart-t", { hold: true });
    await waitFor("the held run is in progress", () => holds === 1);
    c1.close();

    await srv.stop();
    srv = await restartServer(first.addr, first.dataDir);
    c1 = cl();
    await waitForWorkers(srv.addr, "restart-t");
    // The run cut by the restart is dispatched again to the reconnected worker.
    await waitFor("the held run is dispatched again", () => holds === 2);
    held.open();
    await c1.send(parked.handlerId, "go", { n: 7 });
    const a = await waitEnded(c1, parked.handlerId);
    assert.equal(a.status, HandlerStatus.COMPLETED, a.error);
    assert.deepEqual(a.result, { go: { n: 7 } });
    const b = await waitEnded(c1, busy.handlerId);
    assert.equal(b.status, HandlerStatus.COMPLETED, b.error);
    assert.deepEqual(b.result, { held: true });
    // A new handler runs on the same worker, still in its first run().
    const fresh = await c1.run("restart-t", {});
    await waitIdle(c1, fresh.handlerId);
    await c1.send(fresh.handlerId, "go", {});
    assert.equal((await waitEnded(c1, fresh.handlerId)).status, HandlerStatus.COMPLETED);
    const state = await Promise.race([w.done.then(() => "ended"), Promise.resolve("running")]);
    assert.equal(state, "running", "run() never gave up");
  } finally {
    held.open();
    c1.close();
    await w.stop();
    await srv.stop();
  }
});
