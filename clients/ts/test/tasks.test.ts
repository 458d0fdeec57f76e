// Human tasks, published events and child handlers against a real server,
// over gRPC, Connect (JSON over HTTP/1.1) and gRPC-Web through
// connect-node and the Connect protocol through connect-web; and the
// retries of completeTask and publish against an in-memory router.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { create, type JsonObject } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";

import {
  Code,
  ConnectError,
  HandlerStatus,
  Residency,
  TaskSchema,
  TaskStatus,
  WfdClient,
  WorkflowService,
  handlerToJson,
  taskToJson,
  type Task,
} from "@wfd/client";

import { drain, nodeClient, startServer, waitFor, webClient, type TestServer } from "./helpers.js";

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

const clients: [string, () => WfdClient][] = [
  ["node grpc", () => nodeClient(server.addr, { protocol: "grpc" })],
  ["node connect json http/1.1", () => nodeClient(server.addr, { protocol: "connect", httpVersion: "1.1", useBinaryFormat: false })],
  ["node grpcweb", () => nodeClient(server.addr, { protocol: "grpcweb" })],
  ["web connect json", () => webClient(`http://${server.addr}`, { protocol: "connect" })],
];

/** Follows the handler's stream until it is idle. */
async function untilIdle(c: WfdClient, id: string): Promise<void> {
  for await (const r of c.stream(id, { includeInternal: true })) {
    if (r.kind.case === "idleChanged" && r.kind.value.idle) {
      return;
    }
  }
  assert.fail("stream ended before the handler was idle");
}

/** The handler's first task, once the inbox shows it. */
async function waitTask(c: WfdClient, handlerId: string): Promise<Task> {
  return waitFor(`a task for ${handlerId}`, async () => (await c.tasks({ handlerId })).tasks[0]);
}

async function rejectsWith(p: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ConnectError, `not a ConnectError: ${String(e)}`);
    assert.equal(Code[e.code], Code[code], `code of ${e.message}`);
    if (message) assert.match(e.rawMessage, message);
    return e;
  }
  assert.fail(`resolved, want ${Code[code]}`);
}

async function ids(it: AsyncIterable<Task>): Promise<string[]> {
  const out: string[] = [];
  for await (const t of it) out.push(t.taskId);
  return out;
}

for (const [name, make] of clients) {
  describe(name, () => {
    let c: WfdClient;
    before(() => {
      c = make();
    });
    after(() => c.close());

    test("expense: the inbox, a refused answer, the answer, and a second answer", async () => {
      const h = await c.run("expense", { amount: 120, approver: "ada" });
      const task = await waitTask(c, h.handlerId);
      assert.equal(task.title, "Approve expense");
      assert.equal(task.workflow, "expense");
      assert.equal(task.step, "review");
      assert.equal(task.assignee, "ada");
      assert.equal(task.status, TaskStatus.PENDING);
      assert.ok(task.createdAt);
      assert.deepEqual(task.answerSchema?.["required"], ["approved"]);
      assert.deepEqual(task.answerSchema?.["properties"], { approved: { type: "boolean" }, reason: { type: "string" } });
      const json = taskToJson(task);
      assert.equal(json.status, "TASK_STATUS_PENDING");
      assert.equal(json.taskId, task.taskId);
      assert.deepEqual(json.answerSchema, task.answerSchema);

      // ada's pending inbox holds it; finance's does not.
      const inbox = await ids(c.listAllTasks({ assignee: "ada", statuses: ["pending"] }));
      assert.ok(inbox.includes(task.taskId), "not in ada's inbox");
      const other = await ids(c.listAllTasks({ assignee: "finance", statuses: [TaskStatus.PENDING] }));
      assert.ok(!other.includes(task.taskId), "in finance's inbox");

      // The idle handler shows the task it waits for.
      await untilIdle(c, h.handlerId);
      const idle = await c.get(h.handlerId);
      assert.deepEqual(idle.idle?.waiters.map((w) => w.task?.taskId), [task.taskId]);
      assert.equal(idle.idle?.waiters[0]?.task?.assignee, "ada");

      // Answers that fail the schema change nothing.
      const bad: [JsonObject, RegExp][] = [
        [{ approved: "yes" }, /approved/],
        [{ approved: false }, /reason/],
        [{ approved: true, extra: 1 }, /extra/],
      ];
      for (const [answer, field] of bad) {
        const err = await rejectsWith(c.completeTask(task.taskId, answer, { completedBy: "ada" }), Code.InvalidArgument, /schema/);
        assert.match(err.rawMessage, field);
      }
      const still = await c.task(task.taskId);
      assert.equal(still.status, TaskStatus.PENDING);
      assert.equal(still.answer, undefined);

      // The answer completes the task and the handler.
      const done = await c.completeTask(task.taskId, { approved: true }, { completedBy: "ada" });
      assert.equal(done.taskId, task.taskId);
      assert.equal(done.status, TaskStatus.COMPLETED);
      assert.equal(done.completedBy, "ada");
      assert.deepEqual(done.answer, { approved: true });
      assert.ok(done.completedAt);
      assert.deepEqual(taskToJson(done).answer, { approved: true });
      const recs = await drain(c, h.handlerId);
      const fin = recs.at(-1)!;
      assert.ok(fin.kind.case === "handlerFinished");
      assert.equal(fin.kind.value.status, HandlerStatus.COMPLETED);
      const got = await c.get(h.handlerId);
      assert.deepEqual(got.result?.["decision"], { approved: true });
      assert.equal(got.result?.["reviewed_by"], "ada");
      assert.deepEqual(got.result?.["expense"], { amount: 120, approver: "ada" });

      // Answered once: a second answer, even the same, is refused.
      await rejectsWith(c.completeTask(task.taskId, { approved: true }, { completedBy: "ada" }), Code.FailedPrecondition, /completed/);
      await rejectsWith(c.completeTask(task.taskId, { approved: false, reason: "late" }), Code.FailedPrecondition, /completed/);
      const after = await ids(c.listAllTasks({ assignee: "ada", statuses: ["pending"] }));
      assert.ok(!after.includes(task.taskId), "still in ada's pending inbox");
      const completed = await ids(c.listAllTasks({ assignee: "ada", statuses: ["completed"], workflow: "expense" }));
      assert.ok(completed.includes(task.taskId), "not among ada's completed tasks");
    });

    test("a rejection with its reason; a cancelled handler's task", async () => {
      const h = await c.run("expense", { amount: 5 });
      const task = await waitTask(c, h.handlerId);
      assert.equal(task.assignee, "finance");
      await c.completeTask(task.taskId, { approved: false, reason: "no receipt" });
      await drain(c, h.handlerId);
      const got = await c.get(h.handlerId);
      assert.deepEqual(got.result?.["decision"], { approved: false, reason: "no receipt" });
      assert.equal(got.result?.["reviewed_by"], "");

      const h2 = await c.run("expense", { amount: 6 });
      const t2 = await waitTask(c, h2.handlerId);
      await c.cancel(h2.handlerId);
      assert.equal((await c.task(t2.taskId)).status, TaskStatus.CANCELLED);
      await rejectsWith(c.completeTask(t2.taskId, { approved: true }), Code.FailedPrecondition, /cancelled/);
      const cancelled = await ids(c.listAllTasks({ handlerId: h2.handlerId, statuses: ["cancelled", "expired"] }));
      assert.deepEqual(cancelled, [t2.taskId]);
    });

    test("tasks pages; listAllTasks goes through every page", async () => {
      const approver = `pager-${name.replace(/[^a-z]/g, "")}-${Date.now()}`;
      const hs = [];
      for (let i = 0; i < 5; i++) hs.push(await c.run("expense", { approver, i }));
      for (const h of hs) await waitTask(c, h.handlerId);
      const first = await c.tasks({ assignee: approver, pageSize: 2 });
      assert.equal(first.tasks.length, 2);
      assert.notEqual(first.nextPageToken, "");
      const all = await ids(c.listAllTasks({ assignee: approver, pageSize: 2 }));
      assert.equal(all.length, 5);
      assert.equal(new Set(all).size, 5, "a task listed twice");
      assert.deepEqual(all.slice(0, 2), first.tasks.map((t) => t.taskId));
      const rest = await ids(c.listAllTasks({ assignee: approver, pageSize: 2, pageToken: first.nextPageToken }));
      assert.deepEqual(rest, all.slice(2));
      // Newest first.
      const tasks: Task[] = [];
      for await (const t of c.listAllTasks({ assignee: approver })) tasks.push(t);
      const created = tasks.map((t) => t.createdAt!);
      for (let i = 1; i < created.length; i++) {
        const [a, b] = [created[i - 1]!, created[i]!];
        assert.ok(a.seconds > b.seconds || (a.seconds === b.seconds && a.nanos >= b.nanos), "not newest first");
      }
      assert.deepEqual(new Set(tasks.map((t) => t.handlerId)), new Set(hs.map((h) => h.handlerId)));
      for (const h of hs) await c.cancel(h.handlerId);
      assert.equal((await c.tasks({ assignee: approver, statuses: ["pending"] })).tasks.length, 0);
    });

    test("publish wakes a released order; the event id makes it idempotent", async () => {
      const orderId = `o-${name.replace(/[^a-z]/g, "")}-${Date.now()}`;
      const h = await c.run("order", { order_id: orderId });
      await untilIdle(c, h.handlerId);
      const idle = await c.get(h.handlerId);
      assert.deepEqual(idle.idle?.waiters.map((w) => w.key), [`payment:${orderId}`]);
      const rel = await c.release(h.handlerId);
      assert.equal(rel.residency, Residency.RELEASED);

      const res = await c.publish(`payment:${orderId}`, { amount: 9.5 });
      assert.match(res.eventId, uuidV7);
      assert.ok(res.seq > 0n);
      assert.equal(res.woken, 1);
      const recs = await drain(c, h.handlerId);
      const kinds = recs.map((r) => r.kind.case);
      assert.ok(kinds.includes("handlerRestored"), kinds.join(" "));
      const done = await c.get(h.handlerId);
      assert.equal(done.status, HandlerStatus.COMPLETED);
      assert.equal(done.result?.["order_id"], orderId);
      assert.deepEqual(done.result?.["payment"], { amount: 9.5 });

      // Nobody waits any more.
      const again = await c.publish(`payment:${orderId}`, { amount: 1 });
      assert.equal(again.woken, 0);
      assert.ok(again.seq > res.seq);
      // The same event id is logged once.
      const eventId = `ev-${orderId}`;
      const a = await c.publish("ts-test", undefined, { eventId });
      const b = await c.publish("ts-test", { ignored: true }, { eventId });
      assert.equal(a.eventId, eventId);
      assert.equal(b.eventId, eventId);
      assert.equal(b.seq, a.seq);
    });

    test("publish to one handler wakes only that one", async () => {
      const orderId = `shared-${name.replace(/[^a-z]/g, "")}-${Date.now()}`;
      const x = await c.run("order", { order_id: orderId });
      const y = await c.run("order", { order_id: orderId });
      await untilIdle(c, x.handlerId);
      await untilIdle(c, y.handlerId);
      const res = await c.publish(`payment:${orderId}`, { to: "y" }, { handlerId: y.handlerId });
      assert.equal(res.woken, 1);
      await drain(c, y.handlerId);
      assert.deepEqual((await c.get(y.handlerId)).result?.["payment"], { to: "y" });
      assert.equal((await c.get(x.handlerId)).status, HandlerStatus.RUNNING);
      assert.equal((await c.publish(`payment:${orderId}`, { to: "all" })).woken, 1);
      await drain(c, x.handlerId);
      assert.deepEqual((await c.get(x.handlerId)).result?.["payment"], { to: "all" });
    });

    test("batch: children with their parent, two of five failed", async () => {
      const h = await c.run("batch", { n: 5, fail: [1, 3] });
      const recs = await drain(c, h.handlerId);
      const fin = recs.at(-1)!;
      assert.ok(fin.kind.case === "handlerFinished");
      assert.equal(fin.kind.value.status, HandlerStatus.COMPLETED);
      const result = fin.kind.value.result!;
      const completed = result["completed"] as string[];
      const failed = result["failed"] as string[];
      assert.equal(completed.length, 3);
      assert.equal(failed.length, 2);
      assert.deepEqual(result["pending"], []);

      const parent = await c.get(h.handlerId);
      assert.equal(parent.parentId, "");
      assert.equal(parent.children.length, 5);
      assert.deepEqual(new Set(parent.children), new Set([...completed, ...failed]));
      assert.deepEqual(handlerToJson(parent).children, parent.children);
      for (const id of failed) {
        const child = await c.get(id);
        assert.equal(child.parentId, h.handlerId);
        assert.equal(child.workflow, "job");
        assert.equal(child.status, HandlerStatus.FAILED);
        assert.match(child.error, /failed as asked/);
      }
      const child = await c.get(completed[0]!);
      assert.equal(child.parentId, h.handlerId);
      assert.equal(child.status, HandlerStatus.COMPLETED);
      assert.deepEqual(child.children, []);
      // The children are in order: job i got index i.
      const indexes = [];
      for (const id of parent.children) {
        const ch = await c.get(id);
        indexes.push(ch.status === HandlerStatus.COMPLETED ? ch.result?.["index"] : "failed");
      }
      assert.deepEqual(indexes, [0, "failed", 2, "failed", 4]);
    });

    test("a parent idle while its children wait shows them in its waiter", async () => {
      const h = await c.run("batch", { n: 2, job_wait: "go" });
      await untilIdle(c, h.handlerId);
      const parent = await c.get(h.handlerId);
      const kids = parent.idle?.waiters[0]?.children ?? [];
      assert.equal(kids.length, 2);
      assert.deepEqual(kids, parent.children);
      for (const k of kids) {
        await untilIdle(c, k);
        await c.send(k, "go", {});
      }
      await drain(c, h.handlerId);
      assert.deepEqual((await c.get(h.handlerId)).result?.["completed"], kids);
    });

    test("errors", async () => {
      await rejectsWith(c.task("no-such-task"), Code.NotFound, /no-such-task/);
      await rejectsWith(c.completeTask("no-such-task", { approved: true }), Code.NotFound, /no-such-task/);
      await rejectsWith(c.publish(""), Code.InvalidArgument, /key is required/);
      // Refused by the client before any call.
      await rejectsWith(c.tasks({ statuses: ["bogus" as "pending"] }), Code.InvalidArgument, /unknown task status "bogus"/);
      await rejectsWith(c.tasks({ statuses: ["toString" as "pending"] }), Code.InvalidArgument, /unknown task status/);
      await rejectsWith(c.tasks({ pageSize: 1.5 }), Code.InvalidArgument, /page size/);
      await rejectsWith(c.completeTask("t", { n: NaN }), Code.InvalidArgument, /answer\.n: NaN/);
      await rejectsWith(c.completeTask("t", [true] as unknown as JsonObject), Code.InvalidArgument, /answer must be a JSON object/);
      await rejectsWith(c.publish("k", { f: () => 1 }), Code.InvalidArgument, /data\.f: a function/);
    });

    test("mine without authentication is FailedPrecondition", async () => {
      await rejectsWith(c.tasks({ mine: true }), Code.FailedPrecondition, /authenticated/);
      await rejectsWith(ids(c.listAllTasks({ mine: true })), Code.FailedPrecondition, /authenticated/);
    });
  });
}

describe("mine with a token (wfd serve --auth-tokens)", () => {
  const token = "ada-token";
  let authServer: TestServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "wfd-ts-auth-"));
    const file = join(dir, "tokens.yaml");
    writeFileSync(file, `tokens:\n  - token: ${token}\n    subject: ada\n    roles: [reader, tasks, starter]\n`);
    authServer = await startServer(undefined, ["--auth-tokens", file], { token });
  });
  after(async () => {
    await authServer?.stop();
  });

  const authClients: [string, () => WfdClient][] = [
    ["node grpc", () => nodeClient(authServer.addr, { protocol: "grpc", token })],
    ["web connect json", () => webClient(`http://${authServer.addr}`, { protocol: "connect", token })],
  ];
  for (const [name, make] of authClients) {
    test(`${name}: mine lists ada's task, not bob's`, async () => {
      const c = make();
      try {
        const ada = await c.run("expense", { approver: "ada" });
        const bob = await c.run("expense", { approver: "bob" });
        const adaTask = await waitTask(c, ada.handlerId);
        const bobTask = await waitTask(c, bob.handlerId);
        const page = (await c.tasks({ mine: true })).tasks.map((t) => t.taskId);
        assert.ok(page.includes(adaTask.taskId), "ada's task not in mine");
        assert.ok(!page.includes(bobTask.taskId), "bob's task in mine");
        const all = await ids(c.listAllTasks({ mine: true, statuses: ["pending"], pageSize: 1 }));
        assert.ok(all.includes(adaTask.taskId), "ada's task not in listAllTasks mine");
        assert.ok(!all.includes(bobTask.taskId), "bob's task in listAllTasks mine");
        await rejectsWith(c.tasks({ mine: true, assignee: "bob" }), Code.InvalidArgument, /assignee/);
      } finally {
        c.close();
      }
    });
  }
});

describe("retries of completeTask and publish (in-memory router)", () => {
  const taskId = "h1:w1";
  const completedTask = (answer: JsonObject, by: string): Task =>
    create(TaskSchema, { taskId, status: TaskStatus.COMPLETED, answer, completedBy: by });

  /** A router whose first CompleteTask takes the answer and loses the reply. */
  function lossyRouter(stored: { answer: JsonObject; by: string } | undefined) {
    const calls = { complete: 0, get: 0, publish: [] as string[] };
    let done: { answer: JsonObject; by: string } | undefined;
    const transport = createRouterTransport(({ service }) => {
      service(WorkflowService, {
        completeTask(req) {
          calls.complete++;
          if (done !== undefined) {
            throw new ConnectError(`task "${taskId}" is completed`, Code.FailedPrecondition);
          }
          done = stored ?? { answer: req.answer ?? {}, by: req.completedBy };
          throw new ConnectError("connection lost", Code.Unavailable);
        },
        getTask() {
          calls.get++;
          return { task: done ? completedTask(done.answer, done.by) : { taskId, status: TaskStatus.PENDING } };
        },
        publishEvent(req) {
          calls.publish.push(req.eventId);
          if (calls.publish.length === 1) {
            throw new ConnectError("connection lost", Code.Unavailable);
          }
          return { eventId: req.eventId, seq: 7n, woken: 2 };
        },
      });
    });
    return { calls, client: new WfdClient(transport, { retry: { initialBackoffMs: 1, maxBackoffMs: 2 } }) };
  }

  test("a retry that finds its own answer returns the completed task", async () => {
    const { calls, client } = lossyRouter(undefined);
    const t = await client.completeTask(taskId, { approved: false, reason: "x" }, { completedBy: "ada" });
    assert.equal(t.status, TaskStatus.COMPLETED);
    assert.deepEqual(t.answer, { approved: false, reason: "x" });
    assert.equal(calls.complete, 2);
    assert.equal(calls.get, 1);
  });

  test("a retry that finds another answer is FailedPrecondition", async () => {
    const others: { answer: JsonObject; by: string }[] = [
      { answer: { approved: true }, by: "ada" },
      { answer: { approved: false, reason: "x" }, by: "bob" },
    ];
    for (const stored of others) {
      const { calls, client } = lossyRouter(stored);
      await rejectsWith(client.completeTask(taskId, { approved: false, reason: "x" }, { completedBy: "ada" }), Code.FailedPrecondition, /completed/);
      assert.equal(calls.get, 1);
    }
  });

  test("a first attempt's FailedPrecondition is not looked into", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(WorkflowService, {
        completeTask() {
          throw new ConnectError("task is completed", Code.FailedPrecondition);
        },
        getTask() {
          assert.fail("GetTask called");
        },
      });
    });
    const client = new WfdClient(transport);
    await rejectsWith(client.completeTask(taskId, { approved: true }), Code.FailedPrecondition);
  });

  test("a retried publish carries the same event id", async () => {
    const { calls, client } = lossyRouter(undefined);
    const res = await client.publish("k", { a: 1 });
    assert.deepEqual(res, { eventId: calls.publish[0], seq: 7n, woken: 2 });
    assert.equal(calls.publish.length, 2);
    assert.match(calls.publish[0]!, uuidV7);
    assert.equal(calls.publish[1], calls.publish[0]);
    const mine = lossyRouter(undefined);
    assert.equal((await mine.client.publish("k", undefined, { eventId: "mine" })).eventId, "mine");
    assert.deepEqual(mine.calls.publish, ["mine", "mine"]);
  });
});
