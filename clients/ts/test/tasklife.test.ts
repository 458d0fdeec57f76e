// A task's life besides its answer against a real server: claim,
// comment, unclaim, reassign, and the answer refused to someone who does
// not hold it (node gRPC and web Connect).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, TaskStatus, type Task, type WfdClient } from "@wfd/client";

import { nodeClient, startServer, waitFor, webClient, type TestServer } from "./helpers.js";

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

const clients: [string, () => WfdClient][] = [
  ["node grpc", () => nodeClient(server.addr, { protocol: "grpc" })],
  ["web connect json", () => webClient(`http://${server.addr}`, { protocol: "connect" })],
];

function code(e: unknown): Code | undefined {
  return e instanceof ConnectError ? e.code : undefined;
}

for (const [name, make] of clients) {
  describe(name, () => {
    test("claim, comment, unclaim, reassign, answer", async () => {
      const c = make();
      const h = await c.run("expense", { amount: 7, approver: "ada" });
      const task: Task = await waitFor(`a task for ${h.handlerId}`, async () => (await c.tasks({ handlerId: h.handlerId })).tasks[0]);
      const claimed = await c.claimTask(task.taskId, { by: "ada" });
      assert.equal(claimed.claimedBy, "ada");
      await assert.rejects(c.claimTask(task.taskId, { by: "bob" }), (e) => code(e) === Code.FailedPrecondition && /claimed by ada/.test(String(e)));
      await assert.rejects(c.completeTask(task.taskId, { approved: true }, { completedBy: "bob" }), (e) => code(e) === Code.FailedPrecondition);
      const commented = await c.commentTask(task.taskId, "receipt attached", { by: "ada" });
      assert.deepEqual(
        commented.comments.map((x) => [x.by, x.text]),
        [["ada", "receipt attached"]],
      );
      assert.equal((await c.unclaimTask(task.taskId, { by: "ada" })).claimedBy, "");
      const moved = await c.reassignTask(task.taskId, "group:finance", { by: "ada" });
      assert.equal(moved.assignee, "group:finance");
      const done = await c.completeTask(task.taskId, { approved: true }, { completedBy: "bob" });
      assert.equal(done.status, TaskStatus.COMPLETED);
      assert.equal(done.comments.length, 1);
      await assert.rejects(c.claimTask(task.taskId, {}), (e) => code(e) === Code.FailedPrecondition);
      c.close();
    });
  });
}

test("a worker's task escalates; the inbox filters by claim and overdue", async () => {
  const { step, workflow } = await import("@wfd/client/worker");
  const { startWorker, waitForWorkers } = await import("./worker-helpers.js");
  const c = nodeClient(server.addr);
  const wf = workflow({
    name: "escalate-ts",
    steps: {
      ask: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
        const a = await ctx.askHuman({ title: "Look", assignee: "ada", escalation: { afterMs: 200, reassign: "group:leads", notify: "ts-escalations" } });
        ctx.send("stop", { by: a.completedBy });
      }),
    },
  });
  const w = startWorker(server.addr, [wf]);
  try {
    await waitForWorkers(server.addr, "escalate-ts");
    const h = await c.run("escalate-ts", {});
    const task: Task = await waitFor("its task", async () => (await c.tasks({ handlerId: h.handlerId })).tasks[0]);
    assert.ok(task.due);
    assert.equal((await c.tasks({ handlerId: h.handlerId, claim: "claimed" })).tasks.length, 0);
    assert.equal((await c.tasks({ handlerId: h.handlerId, claim: "unclaimed" })).tasks.length, 1);
    const escalated = await waitFor("the escalation", async () => {
      const t = await c.task(task.taskId);
      return t.escalated && t;
    });
    assert.equal(escalated.assignee, "group:leads");
    assert.equal((await c.tasks({ handlerId: h.handlerId, overdue: true })).tasks.length, 1);
    const pub = await c.publishedEvents({ key: "ts-escalations" });
    assert.equal(pub.events[0]?.data?.["task_id"], task.taskId);
  } finally {
    await w.stop();
    c.close();
  }
});
