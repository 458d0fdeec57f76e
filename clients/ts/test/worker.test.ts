// Workflows defined by a TypeScript worker, end to end against a real
// `wfd serve`: waits and answers, deadlines, children, tasks, the context's
// store operations, retries, worker limits across workers, refused
// definitions, and a step that swallows Waiting.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, TaskStatus, type Record as WfdRecord, type WfdClient } from "@wfd/client";
import { isWaiting, step, Waiting, WaitTimeout, workflow, type WorkflowSpec } from "@wfd/client/worker";

import { drain, nodeClient, startServer, waitFor, type TestServer } from "./helpers.js";
import { gate, listWorkers, startWorker, waitEnded, waitForWorkers, waitIdle, type RunningWorker } from "./worker-helpers.js";

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

/** Runs a test's workers, stopped after it. */
async function withWorker<T>(workflows: WorkflowSpec[], f: (w: RunningWorker) => Promise<T>): Promise<T> {
  const w = startWorker(server.addr, workflows);
  try {
    await waitForWorkers(server.addr, workflows[0]!.name);
    return await f(w);
  } finally {
    await w.stop();
  }
}

const approvalSchema = {
  type: "object",
  required: ["approved"],
  properties: { approved: { type: "boolean" }, comment: { type: "string" } },
};

const approval = workflow({
  name: "approval-t",
  inputSchema: { type: "object", required: ["amount"], properties: { amount: { type: "number" } } },
  events: [{ type: "approval", schema: approvalSchema }],
  steps: {
    decide: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
      ctx.write("progress", { attempt: ctx.attempt });
      let answer;
      try {
        answer = await ctx.waitFor("approval", { timeoutMs: 600_000 });
      } catch (e) {
        if (isWaiting(e)) ctx.write("question", { request: ev.data });
        throw e;
      }
      ctx.send("stop", { approved: answer.data["approved"]!, comment: answer.data["comment"] ?? "", request: ev.data });
    }),
  },
});

describe("a worker-defined workflow", () => {
  test("start, stream, wait, answer, completion", async () => {
    await withWorker([approval], async () => {
      const listed = (await c.workflows()).find((w) => w.name === "approval-t");
      assert.ok(listed, "ListWorkflows lists the worker's workflow");
      await assert.rejects(c.run("approval-t", { amount: "many" }), (e: ConnectError) => e.code === Code.InvalidArgument);

      const h = await c.run("approval-t", { amount: 42 });
      const recs: WfdRecord[] = [];
      for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
        recs.push(r);
        if (r.kind.case === "idleChanged" && r.kind.value.idle) {
          const waiters = r.kind.value.info?.waiters ?? [];
          assert.deepEqual(waiters.map((w) => [w.step, w.eventType]), [["decide", "approval"]]);
          await assert.rejects(c.send(h.handlerId, "approval", { approved: "yes" }), (e: ConnectError) => e.code === Code.InvalidArgument);
          await c.send(h.handlerId, "approval", { approved: true, comment: "fine" });
        }
      }
      const events = recs.flatMap((r) => (r.kind.case === "eventWritten" ? [[r.kind.value.type, r.kind.value.data]] : []));
      // The parked run wrote its progress and the question; the re-run its progress.
      assert.deepEqual(events, [
        ["progress", { attempt: 1 }],
        ["question", { request: { amount: 42 } }],
        ["progress", { attempt: 1 }],
      ]);
      const last = recs.at(-1)!;
      assert.ok(last.kind.case === "handlerFinished");
      assert.equal(last.kind.value.status, HandlerStatus.COMPLETED);
      assert.deepEqual(last.kind.value.result, { approved: true, comment: "fine", request: { amount: 42 } });
    });
  });

  test("a wait past its deadline throws WaitTimeout", async () => {
    const wf = workflow({
      name: "deadline-t",
      steps: {
        wait: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          try {
            await ctx.waitFor("never", { timeoutMs: 50 });
          } catch (e) {
            if (e instanceof WaitTimeout) {
              ctx.send("stop", { timedOut: true, name: e.name, message: e.message });
              return;
            }
            throw e;
          }
          ctx.send("stop", { timedOut: false });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("deadline-t", {});
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.equal(got.result?.["timedOut"], true);
      assert.equal(got.result?.["name"], "TimeoutError");
      assert.match(String(got.result?.["message"]), /waiting for "never".*timed out/);
    });
  });

  test("children: started, waited for, their results", async () => {
    const child = workflow({
      name: "double-t",
      steps: {
        double: step({ accepts: ["start"], emits: ["stop"] }, (ctx, ev) => {
          ctx.send("stop", { n: 2 * Number(ev.data["n"]) });
        }),
      },
    });
    const parent = workflow({
      name: "parent-t",
      steps: {
        fan: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          const ids = [await ctx.startChild("double-t", { n: 1 }), await ctx.startChild("double-t", { n: 20 })];
          const kids = await ctx.waitForChildren(ids);
          ctx.send("stop", { ids, completed: kids.completed, results: ids.map((id) => kids.results[id]?.result ?? null) });
        }),
      },
    });
    await withWorker([parent, child], async () => {
      const h = await c.run("parent-t", {});
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      const ids = got.result?.["ids"] as string[];
      assert.equal(ids.length, 2);
      assert.deepEqual(got.result?.["completed"], ids);
      assert.deepEqual(got.result?.["results"], [{ n: 2 }, { n: 40 }]);
      assert.deepEqual(got.children.sort(), [...ids].sort());
    });
  });

  test("a task: askHuman, answered with CompleteTask", async () => {
    const wf = workflow({
      name: "task-t",
      steps: {
        ask: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          const ans = await ctx.askHuman({
            title: "Approve?",
            description: "a test task",
            assignee: "alice",
            schema: { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } },
            input: { lines: [{ item: "taxi", amount: 42 }] },
          });
          ctx.send("stop", { answer: ans.data, by: ans.completedBy, at: ans.completedAt.toISOString() });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("task-t", {});
      const task = await waitFor("the task is listed", async () => (await c.tasks({ handlerId: h.handlerId })).tasks[0]);
      assert.equal(task.title, "Approve?");
      assert.equal(task.assignee, "alice");
      assert.deepEqual(task.input, { lines: [{ item: "taxi", amount: 42 }] });
      await assert.rejects(c.completeTask(task.taskId, { ok: "sure" }), (e: ConnectError) => e.code === Code.InvalidArgument);
      await c.completeTask(task.taskId, { ok: true }, { completedBy: "alice" });
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.deepEqual(got.result?.["answer"], { ok: true });
      assert.equal(got.result?.["by"], "alice");
      assert.ok(!Number.isNaN(Date.parse(String(got.result?.["at"]))));
    });
  });

  test("a task cancelled with a reason: askHuman returns the cancellation", async () => {
    const wf = workflow({
      name: "task-cancel-t",
      steps: {
        ask: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          const ans = await ctx.askHuman({ title: "Approve?", assignee: "alice" });
          ctx.send("stop", { cancelled: ans.cancelled, reason: ans.reason, by: ans.completedBy });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("task-cancel-t", {});
      const task = await waitFor("the task is listed", async () => (await c.tasks({ handlerId: h.handlerId })).tasks[0]);
      const t = await c.cancelTask(task.taskId, "not needed", { cancelledBy: "bob" });
      assert.equal(t.status, TaskStatus.CANCELLED);
      assert.equal(t.cancelReason, "not needed");
      // A retry of a cancellation that got through returns the task.
      assert.equal((await c.cancelTask(task.taskId, "not needed", { cancelledBy: "bob" })).status, TaskStatus.CANCELLED);
      const got = await waitEnded(c, h.handlerId);
      assert.deepEqual(got.result, { cancelled: true, reason: "not needed", by: "bob" });
    });
  });

  test("store, memos, sleep and published keys", async () => {
    let computed = 0;
    const wf = workflow({
      name: "ops-t",
      steps: {
        ops: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          await ctx.set("k", { v: [1, "two"] });
          const got = await ctx.get("k");
          const missing = await ctx.get("nope");
          const memo = await ctx.once("m", () => ++computed);
          await ctx.sleep(10);
          const pub = await ctx.waitForKey("orders/1");
          await ctx.set("k", undefined);
          const gone = await ctx.get("k");
          ctx.send("stop", { got: got ?? null, missing: missing === undefined, memo, pub: pub.data, key: pub.key, gone: gone === undefined });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("ops-t", {});
      await waitFor("parked on the key", async () => {
        const got = await c.get(h.handlerId);
        return got.idle?.waiters.some((w) => w.eventType !== "") && got;
      });
      await c.publish("orders/1", { total: 3 });
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.deepEqual(got.result, { got: { v: [1, "two"] }, missing: true, memo: 1, pub: { total: 3 }, key: "orders/1", gone: true });
      assert.equal(computed, 1, "once ran its function once across the re-runs");
    });
  });

  test("a step that fails is retried", async () => {
    const wf = workflow({
      name: "flaky-t",
      steps: {
        flaky: step({ accepts: ["start"], emits: ["stop"], retry: { maxAttempts: 3, initialBackoffMs: 10 } }, (ctx) => {
          if (ctx.attempt === 1) throw new Error("flaky: first attempt fails");
          ctx.send("stop", { attempt: ctx.attempt });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("flaky-t", {});
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.deepEqual(got.result, { attempt: 2 });
      const recs = await drain(c, h.handlerId);
      const errors = recs.flatMap((r) => (r.kind.case === "stepStateChanged" && r.kind.value.error ? [r.kind.value.error] : []));
      assert.deepEqual(errors, ["flaky: first attempt fails"]);
    });
  });

  test("a step past its timeout: the server takes the run back and its signal aborts", async () => {
    let aborted = 0;
    const wf = workflow({
      name: "slow-t",
      steps: {
        slow: step({ accepts: ["start"], emits: ["stop"], timeoutMs: 100 }, async (ctx) => {
          assert.ok(ctx.deadline instanceof Date, "the dispatch carries the deadline");
          await new Promise<void>((res) => ctx.signal.addEventListener("abort", () => res(), { once: true }));
          aborted++;
          ctx.send("stop", {}); // too late: dropped
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("slow-t", {});
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.FAILED);
      assert.match(got.error, /timed out|deadline/i);
      await waitFor("the run's signal aborted", () => aborted === 1);
    });
  });

  test("a send of an undeclared type throws at once; uncaught, it fails the run with its message", async () => {
    const wf = workflow({
      name: "undeclared-t",
      steps: {
        s: step({ accepts: ["start"], emits: ["stop"] }, (ctx) => {
          ctx.send("surprise", {});
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("undeclared-t", {});
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.FAILED);
      assert.match(got.error, /step "s" sends "surprise": event type not declared in the step's emits/);
    });
  });

  test("a swallowed Waiting parks the run anyway", async () => {
    const wf = workflow({
      name: "swallow-t",
      steps: {
        s: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
          ctx.write("before", {});
          let ev;
          try {
            ev = await ctx.waitFor("go");
          } catch {
            // Wrong: swallows Waiting. The run parks all the same.
          }
          ctx.write("after", {});
          let again: unknown;
          try {
            await ctx.get("x");
          } catch (e) {
            again = e;
          }
          ctx.send("stop", { got: ev?.data ?? null, again: again instanceof Waiting });
        }),
      },
    });
    await withWorker([wf], async () => {
      const h = await c.run("swallow-t", {});
      await waitIdle(c, h.handlerId);
      await c.send(h.handlerId, "go", { n: 1 });
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.deepEqual(got.result, { got: { n: 1 }, again: false });
      const written = (await drain(c, h.handlerId)).flatMap((r) => (r.kind.case === "eventWritten" ? [r.kind.value.type] : []));
      // The parked run keeps what it wrote before the park, not after.
      assert.deepEqual(written, ["before", "before", "after"]);
    });
  });
});

describe("workers", () => {
  test("two workers share a step whose limit is 1 across them", async () => {
    // The limit is the engine's, per handler: one handler fans out six
    // jobs, and its "work" step runs one at a time whichever worker takes it.
    let active = 0;
    let most = 0;
    const held: (() => void)[] = [];
    const jobs = 6;
    const wf = workflow({
      name: "limit-t",
      steps: {
        fan: step({ accepts: ["start"], emits: ["job"] }, (ctx) => {
          for (let i = 0; i < jobs; i++) ctx.send("job", { i });
        }),
        work: step({ accepts: ["job"], emits: ["done"], workers: 1 }, async (ctx, ev) => {
          active++;
          most = Math.max(most, active);
          const g = gate();
          held.push(g.open);
          await g.promise;
          active--;
          ctx.send("done", ev.data);
        }),
        join: step({ accepts: ["done"], emits: ["stop"] }, async (ctx, ev) => {
          const all = await ctx.collect(ev, ...Array<string>(jobs).fill("done"));
          if (all) ctx.send("stop", { done: all.map((e) => Number(e.data["i"])).sort() });
        }),
      },
    });
    const a = startWorker(server.addr, [wf], { name: "a" });
    const b = startWorker(server.addr, [wf], { name: "b" });
    try {
      await waitForWorkers(server.addr, "limit-t", 2);
      const h = await c.run("limit-t", {});
      for (let i = 0; i < jobs; i++) {
        await waitFor(`run ${i + 1} of "work" holds`, () => held.length >= i + 1);
        // While it holds, no other run of "work" is in progress on either worker.
        const runs = (await listWorkers(server.addr)).flatMap((w) =>
          w.runs.filter((r) => r.step === "work").map((r) => ({ worker: w.name, run: r.runId })),
        );
        assert.equal(runs.length, 1, JSON.stringify(runs));
        assert.equal(active, 1);
        held[i]!();
      }
      const got = await waitEnded(c, h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED, got.error);
      assert.deepEqual(got.result, { done: [0, 1, 2, 3, 4, 5] });
      assert.equal(held.length, jobs);
      assert.equal(most, 1, "at most one run of the step at once");
    } finally {
      held.forEach((f) => f());
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  test("a definition that fails validation: run() rejects with the server's InvalidArgument", async () => {
    const bad = workflow({ name: "bad-t", steps: {} });
    const w = startWorker(server.addr, [bad]);
    const err = await w.done;
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.rawMessage, /workflow "bad-t" has no steps/);

    const undeclared = workflow({
      name: "bad2-t",
      steps: { s: step({ accepts: ["nobody-sends-this"], emits: ["stop"] }, () => {}) },
    });
    const err2 = await startWorker(server.addr, [undeclared]).done;
    assert.ok(err2 instanceof ConnectError && err2.code === Code.InvalidArgument, String(err2));

    const builtin = workflow({ name: "approval", steps: { s: step({ accepts: ["start"], emits: ["stop"] }, () => {}) } });
    const err3 = await startWorker(server.addr, [builtin]).done;
    assert.ok(err3 instanceof ConnectError && err3.code === Code.FailedPrecondition, String(err3));
  });
});
