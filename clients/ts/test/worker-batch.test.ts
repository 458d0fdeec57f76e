// Runs' ends sent together: while a FinishRun or FinishRuns is in flight,
// the ends that gather wait for it and go in one FinishRuns (finish.ts),
// and the worker takes runs dispatched together (Dispatches). A spy on
// the worker's own transport sees every FinishRun and FinishRuns, and may
// hold one, so that a batch forms whatever the machine's pace, or answer
// for the server.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { create, isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { HandlerStatus, type Handler, type WfdClient } from "@wfd/client";
import { nodeTransport } from "@wfd/client/node";
import {
  FinishRunRequestSchema,
  FinishRunResultSchema,
  FinishRunsRequestSchema,
  FinishRunsResponseSchema,
  step,
  workflow,
  type FinishRunsResponse,
  type WorkflowSpec,
} from "@wfd/client/worker";

import { nodeClient, startServer, waitFor, type TestServer } from "./helpers.js";
import { gate, startWorker, waitEnded, waitForWorkers, waitIdle } from "./worker-helpers.js";

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

/** What the spy saw of the worker's run ends. */
class FinishSpy {
  /** One entry per call attempt: "one" (FinishRun) or "many:<runs>" (FinishRuns). */
  calls: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** The next finish call waits for it (once). */
  hold: Promise<void> | undefined;
  /** What the next FinishRuns calls answer instead of the server (the code of a whole call's failure). */
  failMany: Code | undefined;
  /** The next FinishRuns answers its first run ResourceExhausted for the server, which gets the others. */
  refuseFirst = false;

  readonly interceptor: Interceptor = (next) => async (req) => {
    const m = req.message;
    const many = isMessage(m, FinishRunsRequestSchema);
    if (req.stream || !(many || isMessage(m, FinishRunRequestSchema))) return next(req);
    this.calls.push(many ? `many:${m.runs.length}` : "one");
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const h = this.hold;
      this.hold = undefined;
      await h;
      if (many && this.failMany !== undefined) throw new ConnectError("refused (test)", this.failMany);
      if (many && this.refuseFirst) {
        this.refuseFirst = false;
        const res = await next({ ...req, message: create(FinishRunsRequestSchema, { runs: m.runs.slice(1) }) });
        if (res.stream) throw new Error("FinishRuns answered a stream");
        const tooLarge = create(FinishRunResultSchema, { code: Code.ResourceExhausted, message: "too large (test)" });
        const results = [tooLarge, ...(res.message as FinishRunsResponse).results];
        return { ...res, message: create(FinishRunsResponseSchema, { results }) };
      }
      return await next(req);
    } finally {
      this.inFlight--;
    }
  };
}

test("100 handlers park and complete; their ends go one call at a time, batched while one is in flight", async () => {
  const N = 100;
  const wf = workflow({
    name: "batch-park-t",
    events: [{ type: "wake", schema: { type: "object" } }],
    steps: {
      wait: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
        const wake = await ctx.waitFor("wake");
        ctx.send("stop", { n: ev.data["n"]!, woken: wake.data["n"]! });
      }),
    },
  });
  const spy = new FinishSpy();
  const { transport, close } = nodeTransport(server.addr, { interceptors: [spy.interceptor] });
  const w = startWorker(server.addr, [wf], { transport, maxRuns: 16 });
  try {
    await waitForWorkers(server.addr, "batch-park-t");
    const ids = await Promise.all(Array.from({ length: N }, async (_, i) => (await c.run("batch-park-t", { n: i })).handlerId));
    await Promise.all(ids.map((id) => waitIdle(c, id)));
    await Promise.all(ids.map((id, i) => c.send(id, "wake", { n: i })));
    const done = await Promise.all(ids.map((id) => waitEnded(c, id)));
    done.forEach((h, i) => {
      assert.equal(h.status, HandlerStatus.COMPLETED, h.error);
      assert.deepEqual(h.result, { n: i, woken: i });
    });
    // Whether batches formed depends on the pace; that the ends queue
    // behind the call in flight does not.
    assert.equal(spy.maxInFlight, 1, `calls: ${spy.calls.join(" ")}`);
    let ends = 0;
    for (const call of spy.calls) {
      const n = call === "one" ? 1 : Number(call.slice("many:".length));
      assert.ok(call === "one" || (n >= 2 && n <= 256), call);
      ends += n;
    }
    assert.ok(ends >= 2 * N, `${ends} ends sent for ${2 * N} runs`);
  } finally {
    await w.stop();
    close();
  }
});

/**
 * A workflow whose step completes at once, and a count of the steps that
 * returned: a returned step's end is in the finisher's queue once the
 * microtasks have run.
 */
function quick(name: string): { wf: WorkflowSpec; ended: () => number } {
  let ended = 0;
  const wf = workflow({
    name,
    steps: {
      done: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
        ctx.send("stop", { n: ev.data["n"]! });
        ended++;
      }),
    },
  });
  return { wf, ended: () => ended };
}

/**
 * Starts 16 handlers (the worker's maxRuns) with the first end held by the
 * spy until every step has returned, so the 15 other ends are queued
 * behind it; then lets it go and waits until all completed.
 */
async function heldRound(spy: FinishSpy, name: string, ended: () => number, round: number): Promise<Handler[]> {
  const g = gate();
  spy.hold = g.promise;
  const ids = await Promise.all(Array.from({ length: 16 }, async (_, i) => (await c.run(name, { n: i })).handlerId));
  await waitFor(`16 more steps returned (${ended()} of ${16 * round})`, async () => ended() >= 16 * round);
  await new Promise((res) => setImmediate(res));
  g.open();
  return Promise.all(ids.map((id) => waitEnded(c, id)));
}

function assertCompleted(hs: Handler[]): void {
  hs.forEach((h, i) => {
    assert.equal(h.status, HandlerStatus.COMPLETED, h.error);
    assert.deepEqual(h.result, { n: i });
  });
}

test("the ends that queue behind a call in flight go in one FinishRuns", async () => {
  const { wf, ended } = quick("batch-held-t");
  const spy = new FinishSpy();
  const { transport, close } = nodeTransport(server.addr, { interceptors: [spy.interceptor] });
  const w = startWorker(server.addr, [wf], { transport, maxRuns: 16 });
  try {
    await waitForWorkers(server.addr, "batch-held-t");
    assertCompleted(await heldRound(spy, "batch-held-t", ended, 1));
    assert.deepEqual(spy.calls, ["one", "many:15"]);
  } finally {
    await w.stop();
    close();
  }
});

for (const code of [Code.Unimplemented, Code.ResourceExhausted]) {
  test(`a FinishRuns failing ${Code[code]} sends its ends one by one${code === Code.Unimplemented ? ", and every end after it" : ""}`, async () => {
    const name = `batch-fail-${code}-t`;
    const { wf, ended } = quick(name);
    const spy = new FinishSpy();
    spy.failMany = code;
    const { transport, close } = nodeTransport(server.addr, { interceptors: [spy.interceptor] });
    const w = startWorker(server.addr, [wf], { transport, maxRuns: 16 });
    try {
      await waitForWorkers(server.addr, name);
      assertCompleted(await heldRound(spy, name, ended, 1));
      assert.deepEqual(spy.calls, ["one", "many:15", ...Array<string>(15).fill("one")]);
      spy.calls = [];
      assertCompleted(await heldRound(spy, name, ended, 2));
      if (code === Code.Unimplemented) {
        // An older server: no FinishRuns again, each end at once.
        assert.deepEqual(spy.calls, Array<string>(16).fill("one"));
      } else {
        // Only that batch was too large: the next is tried again.
        assert.deepEqual(spy.calls, ["one", "many:15", ...Array<string>(15).fill("one")]);
      }
    } finally {
      await w.stop();
      close();
    }
  });
}

test("each end in a FinishRuns gets its own answer: one refused as too large is sent again as the run's error", async () => {
  const { wf, ended } = quick("batch-answer-t");
  const spy = new FinishSpy();
  spy.refuseFirst = true;
  const { transport, close } = nodeTransport(server.addr, { interceptors: [spy.interceptor] });
  const w = startWorker(server.addr, [wf], { transport, maxRuns: 16 });
  try {
    await waitForWorkers(server.addr, "batch-answer-t");
    const hs = await heldRound(spy, "batch-answer-t", ended, 1);
    assert.deepEqual(spy.calls, ["one", "many:15", "one"]);
    // The step has no retries: the handler whose end was refused fails.
    const failed = hs.filter((h) => h.status === HandlerStatus.FAILED);
    assert.equal(failed.length, 1, JSON.stringify(hs.map((h) => [h.status, h.error])));
    assert.equal(hs.filter((h) => h.status === HandlerStatus.COMPLETED).length, 15);
    assert.match(failed[0]!.error, /the run's end \(\d+ bytes encoded\) was refused: too large \(test\)/);
  } finally {
    await w.stop();
    close();
  }
});
