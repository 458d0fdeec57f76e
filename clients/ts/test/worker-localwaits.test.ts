// Local waits (Dispatch.local_waits): the worker answers waitFor and sleep
// itself — from the waits the dispatch says are resolved, or by parking —
// and reports them with its next StepCall or FinishRun. A spy on the
// worker's own transport sees every StepCall and FinishRun it makes.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { HandlerStatus, type Record as WfdRecord, type WfdClient } from "@wfd/client";
import { nodeTransport } from "@wfd/client/node";
import {
  FinishRunRequestSchema,
  isWaiting,
  Outcome,
  step,
  StepCallRequestSchema,
  WaitTimeout,
  workflow,
  type LocalWait,
} from "@wfd/client/worker";

import { nodeClient, startServer, type TestServer } from "./helpers.js";
import { startWorker, waitEnded, waitForWorkers, waitIdle } from "./worker-helpers.js";

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

/** What the spy saw: one entry per attempt of a StepCall or FinishRun. */
interface Seen {
  call: string; // the StepCall's operation, or "finish:<outcome>"
  seq?: bigint;
  waits: string[]; // its local waits, as "position kind resolved"
}

function waitsOf(lws: LocalWait[]): string[] {
  return lws.map((w) => `${w.position} ${w.kind.case === "waitFor" ? `waitFor:${w.kind.value.type}` : w.kind.case} ${w.resolved}`);
}

test("waitFor and sleep are answered by the worker, not by StepCalls, and the run behaves as before", async () => {
  const seen: Seen[] = [];
  let failedOnce = false;
  const spy: Interceptor = (next) => async (req) => {
    if (req.stream) return next(req);
    const m = req.message;
    if (isMessage(m, StepCallRequestSchema)) {
      seen.push({ call: m.operation.case ?? "", seq: m.seq, waits: waitsOf(m.localWaits) });
      const res = await next(req);
      if (m.localWaits.length > 0 && !failedOnce) {
        // The answer is lost on the way back: the worker tries again,
        // and the server answers the repeated seq from its memory.
        failedOnce = true;
        throw new ConnectError("answer lost (test)", Code.Unavailable);
      }
      return res;
    }
    if (isMessage(m, FinishRunRequestSchema)) {
      seen.push({ call: `finish:${Outcome[m.outcome]}`, waits: waitsOf(m.localWaits) });
    }
    return next(req);
  };

  let runs = 0;
  const wf = workflow({
    name: "localwaits-t",
    events: [
      { type: "go", schema: { type: "object" } },
      { type: "never", schema: { type: "object" } },
    ],
    steps: {
      run: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
        runs++;
        // Position 0: a StepCall still, which takes a position too.
        const pub = await ctx.waitForKey("localwaits/k");
        let go;
        try {
          go = await ctx.waitFor("go"); // position 1
        } catch (e) {
          if (isWaiting(e)) ctx.write("question", { run: runs });
          throw e;
        }
        await ctx.sleep(20); // position 2
        let timedOut = false;
        try {
          await ctx.waitFor("never", { timeoutMs: 20 }); // position 3
        } catch (e) {
          if (!(e instanceof WaitTimeout)) throw e;
          assert.equal(e.message, 'waiting for "never": wait timed out');
          timedOut = true;
        }
        const n = await ctx.once("n", () => 7);
        ctx.send("stop", { key: pub.data, go: go.data, timedOut, n });
      }),
    },
  });

  const { transport, close } = nodeTransport(server.addr, { interceptors: [spy] });
  const w = startWorker(server.addr, [wf], { transport });
  try {
    await waitForWorkers(server.addr, "localwaits-t");
    const h = await c.run("localwaits-t", {});
    await waitIdle(c, h.handlerId);
    await c.publish("localwaits/k", { v: 1 });

    const recs: WfdRecord[] = [];
    for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
      recs.push(r);
      if (r.kind.case === "idleChanged" && r.kind.value.idle) {
        const waiters = (r.kind.value.info?.waiters ?? []).map((x) => [x.step, x.eventType]);
        if (waiters.some(([, t]) => t === "go")) {
          assert.deepEqual(waiters, [["run", "go"]]);
          await c.send(h.handlerId, "go", { ok: true });
        }
      }
    }
    const done = await waitEnded(c, h.handlerId);
    assert.equal(done.status, HandlerStatus.COMPLETED, done.error);
    assert.deepEqual(done.result, { key: { v: 1 }, go: { ok: true }, timedOut: true, n: 7 });
    const questions = recs.flatMap((r) => (r.kind.case === "eventWritten" && r.kind.value.type === "question" ? [r.kind.value.data] : []));
    assert.deepEqual(questions, [{ run: 2 }], "the run parked on go wrote its question, as before");
    assert.equal(runs, 5, "parked on the key, on go, on the sleep, on never; then done");

    assert.deepEqual(seen, [
      // Run 1 parks on the key (a StepCall).
      { call: "waitForKey", seq: 1n, waits: [] },
      { call: "finish:WAITING", waits: [] },
      // Run 2 parks on go itself.
      { call: "waitForKey", seq: 1n, waits: [] },
      { call: "finish:WAITING", waits: ["1 waitFor:go false"] },
      // Run 3 takes go from the dispatch and parks on the sleep.
      { call: "waitForKey", seq: 1n, waits: [] },
      { call: "finish:WAITING", waits: ["1 waitFor:go true", "2 sleep false"] },
      // Run 4 parks on never.
      { call: "waitForKey", seq: 1n, waits: [] },
      { call: "finish:WAITING", waits: ["1 waitFor:go true", "2 sleep true", "3 waitFor:never false"] },
      // Run 5: never timed out; its next StepCall carries the local
      // waits, and its retry (the answer was lost) the same ones.
      { call: "waitForKey", seq: 1n, waits: [] },
      { call: "onceGet", seq: 2n, waits: ["1 waitFor:go true", "2 sleep true", "3 waitFor:never true"] },
      { call: "onceGet", seq: 2n, waits: ["1 waitFor:go true", "2 sleep true", "3 waitFor:never true"] },
      { call: "oncePut", seq: 3n, waits: [] },
      { call: "finish:OK", waits: [] },
    ]);
  } finally {
    await w.stop();
    close();
  }
});
