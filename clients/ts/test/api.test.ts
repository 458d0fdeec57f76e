// Every method of the client against a real server, over every protocol:
// gRPC, Connect and gRPC-Web through connect-node (HTTP/2), and Connect
// (JSON) and gRPC-Web through connect-web (fetch, as in a browser).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Code,
  ConnectError,
  HandlerStatus,
  Residency,
  WfdClient,
  handlerToJson,
  recordToJson,
  statsToJson,
  type Handler,
} from "@wfd/client";

import { drain, nodeClient, startServer, webClient, type TestServer } from "./helpers.js";

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
  ["node connect", () => nodeClient(server.addr, { protocol: "connect" })],
  ["node grpcweb", () => nodeClient(server.addr, { protocol: "grpcweb" })],
  ["node connect json http/1.1", () => nodeClient(server.addr, { protocol: "connect", httpVersion: "1.1", useBinaryFormat: false })],
  ["web connect json", () => webClient(`http://${server.addr}`, { protocol: "connect" })],
  ["web grpcweb", () => webClient(`http://${server.addr}`, { protocol: "grpcweb" })],
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

for (const [name, make] of clients) {
  describe(name, () => {
    let c: WfdClient;
    before(() => {
      c = make();
    });
    after(() => c.close());

    test("workflows", async () => {
      const wfs = await c.workflows();
      const names = wfs.map((w) => w.name).sort();
      for (const name of ["approval", "echo", "fanin"]) assert.ok(names.includes(name), `${name} in ${names}`);
      const fanin = wfs.find((w) => w.name === "fanin")!;
      assert.deepEqual(fanin.steps, ["split", "square", "gather"]);
      // The schemas, and when each event type is taken: approval waits for
      // "approval", notebook takes "note" at any time.
      const approval = wfs.find((w) => w.name === "approval")!;
      assert.equal(approval.inputSchema?.["type"], "object");
      assert.deepEqual(
        approval.eventTypes.map((t) => [t.type, t.external, t.schema?.["required"]]),
        [["approval", false, ["approved"]]],
      );
      assert.match(approval.eventTypes[0]!.description, /approved/);
      const notebook = wfs.find((w) => w.name === "notebook")!;
      assert.deepEqual(
        notebook.eventTypes.map((t) => [t.type, t.external]),
        [["note", true]],
      );
    });

    test("run, stream, get: echo completes with its input", async () => {
      const input = { greeting: "hello", n: 3, nested: { list: [1, "two", null, true] } };
      const h = await c.run("echo", input);
      assert.match(h.handlerId, uuidV7);
      assert.equal(h.workflow, "echo");
      const recs = await drain(c, h.handlerId);
      recs.forEach((r, i) => assert.equal(r.seq, BigInt(i + 1)));
      const last = recs.at(-1)!;
      assert.equal(last.kind.case, "handlerFinished");
      if (last.kind.case === "handlerFinished") {
        assert.equal(last.kind.value.status, HandlerStatus.COMPLETED);
        assert.deepEqual(last.kind.value.result, input);
      }
      const got = await c.get(h.handlerId);
      assert.equal(got.status, HandlerStatus.COMPLETED);
      assert.deepEqual(got.result, input);
      assert.equal(got.lastSeq, last.seq);
      const json = handlerToJson(got);
      assert.equal(json.status, "HANDLER_STATUS_COMPLETED");
      assert.equal(json.handlerId, h.handlerId);
      assert.equal(recordToJson(last).seq, String(last.seq));
      // Resuming after a record replays the rest only.
      const rest = await drain(c, h.handlerId, recs.length - 1);
      assert.deepEqual(rest.map((r) => r.seq), [last.seq]);
    });

    test("run is idempotent per handler id", async () => {
      const id = `ts-${name.replace(/[^a-z]/g, "")}-${Date.now()}`;
      const a = await c.run("approval", { x: 1 }, { handlerId: id });
      const b = await c.run("approval", { x: 2 }, { handlerId: id });
      assert.equal(a.handlerId, id);
      assert.equal(b.handlerId, id);
      assert.deepEqual(b.createdAt, a.createdAt);
      await rejectsWith(c.run("echo", {}, { handlerId: id }), Code.AlreadyExists);
      await c.cancel(id);
    });

    test("list and listAll filter and page", async () => {
      const wf = "fanin";
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await c.run(wf)).handlerId);
      for (const id of ids) await drain(c, id);
      const page = await c.list({ workflow: wf, statuses: ["completed"], pageSize: 2 });
      assert.equal(page.handlers.length, 2);
      assert.notEqual(page.nextPageToken, "");
      assert.ok(page.handlers.every((h) => h.workflow === wf && h.status === HandlerStatus.COMPLETED));
      const all: Handler[] = [];
      for await (const h of c.listAll({ workflow: wf, statuses: [HandlerStatus.COMPLETED], pageSize: 2 })) all.push(h);
      const seen = all.map((h) => h.handlerId);
      assert.equal(new Set(seen).size, seen.length, "a handler listed twice");
      for (const id of ids) assert.ok(seen.includes(id), `${id} not listed`);
      // Newest first: ids are UUIDv7, so they sort by creation time.
      assert.deepEqual(seen, [...seen].sort().reverse());
      const running = await c.list({ workflow: wf, statuses: ["running"] });
      assert.equal(running.handlers.length, 0);

      const idle = await c.run("approval");
      await untilIdle(c, idle.handlerId);
      const idleOnly = await c.list({ workflow: "approval", idleOnly: true, pageSize: 1000 });
      assert.ok(idleOnly.handlers.some((h) => h.handlerId === idle.handlerId));
      assert.ok(idleOnly.handlers.every((h) => h.idle !== undefined));
      const active = await c.list({ workflow: "approval", residency: "active", idleFor: 1, pageSize: 1000 });
      assert.ok(active.handlers.some((h) => h.handlerId === idle.handlerId));
      const released = await c.list({ workflow: "approval", residency: Residency.RELEASED, pageSize: 1000 });
      assert.ok(!released.handlers.some((h) => h.handlerId === idle.handlerId));
      const notYet = await c.list({ workflow: "approval", idleFor: 3_600_000 });
      assert.ok(!notYet.handlers.some((h) => h.handlerId === idle.handlerId));
      await c.cancel(idle.handlerId);

      await rejectsWith(c.list({ pageSize: -1 }), Code.InvalidArgument, /page size/);
      await rejectsWith(c.list({ statuses: ["bogus" as "running"] }), Code.InvalidArgument, /unknown status/);
    });

    test("send, release and cancel", async () => {
      const h = await c.run("approval", { amount: 7 });
      await untilIdle(c, h.handlerId);
      const rel = await c.release(h.handlerId);
      assert.equal(rel.residency, Residency.RELEASED);
      assert.ok(rel.idle, "a released handler keeps its idle info");
      const after = await c.send(h.handlerId, "approval", { approved: false, comment: "no" });
      assert.equal(after.handlerId, h.handlerId);
      const recs = await drain(c, h.handlerId);
      const last = recs.at(-1)!;
      assert.equal(last.kind.case, "handlerFinished");
      const done = await c.get(h.handlerId);
      assert.equal(done.status, HandlerStatus.COMPLETED);
      assert.deepEqual(done.result, { approved: false, comment: "no", request: { amount: 7 } });

      const h2 = await c.run("approval");
      const cancelled = await c.cancel(h2.handlerId);
      assert.equal(cancelled.status, HandlerStatus.CANCELLED);
      const fin = (await drain(c, h2.handlerId)).at(-1)!;
      assert.ok(fin.kind.case === "handlerFinished" && fin.kind.value.status === HandlerStatus.CANCELLED);
    });

    test("stats", async () => {
      const s = await c.stats();
      assert.ok(s.handlersByStatus["completed"]! >= 1n, JSON.stringify(statsToJson(s)));
      assert.ok(s.commitsTotal > 0n);
      assert.ok(s.changesTotal >= s.commitsTotal);
      assert.equal(statsToJson(s).commitsTotal, String(s.commitsTotal)); // int64 in JSON
    });

    test("errors carry the server's code and message", async () => {
      await rejectsWith(c.get("no-such-handler"), Code.NotFound, /no-such-handler/);
      await rejectsWith(c.run("no-such-workflow"), Code.NotFound, /no-such-workflow/);
      await rejectsWith(c.send("no-such-handler", "approval", {}), Code.NotFound);
      await rejectsWith(c.cancel("no-such-handler"), Code.NotFound);
      await rejectsWith(c.release("no-such-handler"), Code.NotFound);
      await rejectsWith(drain(c, "no-such-handler"), Code.NotFound);
      await rejectsWith(c.get("bad id with spaces"), Code.InvalidArgument);
      await rejectsWith(drain(c, "whatever", -1), Code.InvalidArgument, /not a sequence number/);
      const fresh = await c.run("approval");
      await rejectsWith(drain(c, fresh.handlerId, 1000), Code.InvalidArgument, /beyond the last record/);
      await c.cancel(fresh.handlerId);

      const waiting = await c.run("approval");
      await untilIdle(c, waiting.handlerId);
      const bad = await rejectsWith(c.send(waiting.handlerId, "no_such_event", {}), Code.InvalidArgument, /no_such_event/);
      assert.match(bad.message, /^\[invalid_argument\]/);
      // Data and input that their schemas refuse, the failing fields named.
      await rejectsWith(c.send(waiting.handlerId, "approval", { approved: "yes" }), Code.InvalidArgument, /at '\/approved': got string, want boolean/);
      await rejectsWith(c.run("order", {}), Code.InvalidArgument, /at '': missing property 'order_id'/);
      await c.cancel(waiting.handlerId);

      const echo = await c.run("echo", { a: 1 });
      await drain(c, echo.handlerId);
      await rejectsWith(c.send(echo.handlerId, "approval", { approved: true }), Code.FailedPrecondition);
      await rejectsWith(c.release(echo.handlerId), Code.FailedPrecondition);
      await rejectsWith(c.cancel(echo.handlerId), Code.FailedPrecondition);

      // Input that is not JSON never leaves the client.
      await rejectsWith(c.run("echo", { n: NaN }), Code.InvalidArgument, /input\.n: NaN/);
      await rejectsWith(c.send(echo.handlerId, "approval", { f: () => 1 }), Code.InvalidArgument, /data\.f: a function/);
    });
  });
}
