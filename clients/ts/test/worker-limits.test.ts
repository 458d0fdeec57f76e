// What a TypeScript worker's step may produce, end to end against a real
// `wfd serve`: a run that writes 15 MB (inside the server's budget of
// 16 × --max-payload-bytes per run) completes, and one over the limits
// fails as a step error (retried by its policy), whether the engine
// refuses it or the server's message limit does (RESOURCE_EXHAUSTED for
// the FinishRun or a StepCall): the handler never stays running, waiting
// for the worker.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { HandlerStatus, type WfdClient } from "@wfd/client";
import { step, workflow, type StepContext, type WorkflowSpec } from "@wfd/client/worker";

import { drain, nodeClient, startServer, type TestServer } from "./helpers.js";
import { startWorker, waitEnded, waitForWorkers } from "./worker-helpers.js";

/**
 * A workflow of one step, tried twice: attempt a stores a value of
 * set(a) characters (if given; it goes on whatever set throws: a refused
 * operation fails the run anyway), writes records(a) records of size
 * characters, and completes with its attempt's number.
 */
function writer(name: string, size: number, records: (attempt: number) => number, set?: (attempt: number) => number): WorkflowSpec {
  return workflow({
    name,
    steps: {
      write: step({ accepts: ["start"], emits: ["stop"], retry: { maxAttempts: 2, initialBackoffMs: 1 } }, async (ctx: StepContext) => {
        if (set) {
          await ctx.set("blob", "y".repeat(set(ctx.attempt))).catch(() => {});
        }
        const blob = "x".repeat(size);
        for (let i = 0; i < records(ctx.attempt); i++) ctx.write("chunk", { blob });
        ctx.send("stop", { attempt: ctx.attempt });
      }),
    },
  });
}

/** Runs wf's handler on server's worker to its end: the handler and its step errors. */
async function runToEnd(server: TestServer, c: WfdClient, wf: WorkflowSpec) {
  // Quiet: a refused FinishRun is a warning the worker logs.
  const w = startWorker(server.addr, [wf], { logger: { info: () => {}, warn: () => {} } });
  try {
    await waitForWorkers(server.addr, wf.name);
    const h = await c.run(wf.name, {});
    const got = await waitEnded(c, h.handlerId);
    const recs = await drain(c, h.handlerId);
    const errors = recs.flatMap((r) => (r.kind.case === "stepStateChanged" && r.kind.value.error ? [r.kind.value.error] : []));
    const chunks = recs.filter((r) => r.kind.case === "eventWritten" && r.kind.value.type === "chunk").length;
    return { got, errors, chunks };
  } finally {
    await w.stop();
  }
}

describe("a worker step's output, default limits", () => {
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

  test("a run that writes 15 MB completes", async () => {
    const { got, errors, chunks } = await runToEnd(server, c, writer("big-output-t", 1_000_000, () => 15));
    assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
    assert.deepEqual(got.result, { attempt: 1 });
    assert.deepEqual(errors, []);
    assert.equal(chunks, 15);
  });
});

describe("a worker step's output over the limits", () => {
  // A run may send and write 16 × 64 KiB (1 MiB); the server reads a
  // StepCall or FinishRun of 4 MiB (its message limit, above what the run
  // may produce with these limits).
  let server: TestServer;
  let c: WfdClient;
  before(async () => {
    server = await startServer(undefined, ["--max-payload-bytes", "65536", "--max-record-bytes", "65536", "--max-queued-events", "100"]);
    c = nodeClient(server.addr);
  });
  after(async () => {
    c?.close();
    await server?.stop();
  });

  for (const tc of [
    { name: "over the run's budget (the engine refuses it)", records: 18, want: "over the limit" },
    { name: "over the message limit (the server refuses the FinishRun)", records: 80, want: "larger than" },
    { name: "a StepCall over the message limit", records: 1, set: 5_000_000, want: "larger than" },
  ]) {
    test(`${tc.name}: the run fails, is retried, and the handler fails`, async () => {
      const wf = writer(`over-${tc.records}-${tc.set ?? 0}-t`, 60_000, () => tc.records, tc.set ? () => tc.set : undefined);
      const { got, errors } = await runToEnd(server, c, wf);
      assert.equal(got.status, HandlerStatus.FAILED, `status ${got.status}: ${got.error}`);
      assert.match(got.error, new RegExp(tc.want));
      assert.equal(errors.length, 2, `both attempts failed: ${JSON.stringify(errors)}`);
    });
  }

  test("a run refused as too large, then one that fits: completed on the second attempt", async () => {
    const wf = writer("over-then-fits-t", 60_000, (a) => (a === 1 ? 80 : 1), (a) => (a === 1 ? 5_000_000 : 10));
    const { got, errors } = await runToEnd(server, c, wf);
    assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
    assert.deepEqual(got.result, { attempt: 2 });
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /setting "blob" \(\d+ bytes encoded\) was refused: .*larger than/);
  });
});
