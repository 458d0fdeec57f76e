// Human-in-the-loop flows end to end: the approval question and answer, a
// released handler woken by an event, and idempotent sends (to notebook,
// which takes notes at any time).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { HandlerStatus, Residency, type Record as WfdRecord, type WfdClient } from "@wfd/client";
import type { Protocol } from "@wfd/client/node";

import { drain, nodeClient, startServer, type TestServer } from "./helpers.js";

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

function kinds(recs: WfdRecord[]): string[] {
  return recs.map((r) => {
    switch (r.kind.case) {
      case "eventWritten":
        return `event:${r.kind.value.type}`;
      case "idleChanged":
        return r.kind.value.idle ? "idle" : "busy";
      case "stepStateChanged":
        return r.kind.value.running ? "step:start" : r.kind.value.waiting ? "step:wait" : "step:end";
      default:
        return r.kind.case ?? "?";
    }
  });
}

for (const protocol of ["grpc", "connect", "grpcweb"] as Protocol[]) {
  describe(`approval over ${protocol}`, () => {
    let c: WfdClient;
    before(() => {
      c = nodeClient(server.addr, { protocol });
    });
    after(() => c.close());

    test("the stream shows the question and idle; the answer completes it", async () => {
      const h = await c.run("approval", { amount: 42 });
      const recs: WfdRecord[] = [];
      let question: WfdRecord | undefined;
      let answered = false;
      for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
        recs.push(r);
        if (r.kind.case === "eventWritten" && r.kind.value.type === "question") {
          question = r;
        }
        if (r.kind.case === "idleChanged" && r.kind.value.idle) {
          assert.ok(question, "idle before the question was written");
          const waiters = r.kind.value.info?.waiters ?? [];
          assert.deepEqual(waiters.map((w) => [w.step, w.eventType]), [["decide", "approval"]]);
          const got = await c.get(h.handlerId);
          assert.ok(got.idle, "get shows the handler idle");
          await c.send(h.handlerId, "approval", { approved: true, comment: "fine" });
          answered = true;
        }
      }
      assert.ok(answered, "the handler never went idle");
      assert.ok(question?.kind.case === "eventWritten");
      assert.equal(question.kind.value.data?.["question"], "approve this request?");
      assert.deepEqual(question.kind.value.data?.["request"], { amount: 42 });
      const k = kinds(recs);
      assert.ok(k.indexOf("event:question") < k.indexOf("idle"), k.join(" "));
      assert.ok(k.indexOf("idle") < k.indexOf("busy"), k.join(" "));
      assert.equal(k.at(-1), "handlerFinished");
      const last = recs.at(-1)!;
      assert.ok(last.kind.case === "handlerFinished");
      assert.equal(last.kind.value.status, HandlerStatus.COMPLETED);
      assert.deepEqual(last.kind.value.result, { approved: true, comment: "fine", request: { amount: 42 } });
      recs.forEach((r, i) => assert.equal(r.seq, BigInt(i + 1)));
    });
  });
}

describe("release and wake", () => {
  let c: WfdClient;
  before(() => {
    c = nodeClient(server.addr);
  });
  after(() => c.close());

  test("a released handler is woken by an event and completes; the stream follows it", async () => {
    const h = await c.run("approval", { doc: "r-1" });
    const recs: WfdRecord[] = [];
    for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
      recs.push(r);
      if (r.kind.case === "idleChanged" && r.kind.value.idle) {
        const before = await c.stats();
        const rel = await c.release(h.handlerId);
        assert.equal(rel.residency, Residency.RELEASED);
        assert.equal(rel.status, HandlerStatus.RUNNING);
        const got = await c.get(h.handlerId);
        assert.equal(got.residency, Residency.RELEASED);
        const mid = await c.stats();
        assert.ok(mid.releasesTotal > before.releasesTotal);
        assert.ok(mid.handlersReleased >= 1n);
        const released = await c.list({ residency: "released", workflow: "approval", pageSize: 1000 });
        assert.ok(released.handlers.some((x) => x.handlerId === h.handlerId));
      }
      if (r.kind.case === "handlerReleased") {
        const after = await c.send(h.handlerId, "approval", { approved: true });
        assert.equal(after.handlerId, h.handlerId);
      }
    }
    const k = kinds(recs);
    assert.deepEqual(k.slice(k.indexOf("handlerReleased"), k.indexOf("handlerReleased") + 2), ["handlerReleased", "handlerRestored"]);
    assert.equal(k.at(-1), "handlerFinished");
    const done = await c.get(h.handlerId);
    assert.equal(done.status, HandlerStatus.COMPLETED);
    assert.deepEqual(done.result, { approved: true, comment: "", request: { doc: "r-1" } });
    const stats = await c.stats();
    assert.ok(stats.rehydrationsTotal >= 1n);
  });
});

describe("idempotent send", () => {
  let c: WfdClient;
  before(() => {
    c = nodeClient(server.addr, { protocol: "connect" });
  });
  after(() => c.close());

  async function idleApproval(): Promise<string> {
    const h = await c.run("approval");
    for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
      if (r.kind.case === "idleChanged" && r.kind.value.idle) break;
    }
    return h.handlerId;
  }

  test("the same key twice delivers the event once", async () => {
    const h = await c.run("notebook");
    const id = h.handlerId;
    // Each note runs the step, which writes "noted": a second delivery
    // would write it twice.
    const note = { text: "once" };
    const first = await c.send(id, "note", note, { idempotencyKey: "note-1" });
    const again = await c.send(id, "note", note, { idempotencyKey: "note-1" });
    assert.equal(again.handlerId, first.handlerId);
    // The same data under another key is another event, and so is a send
    // without a key (the client makes up a fresh one each time).
    await c.send(id, "note", note, { idempotencyKey: "note-2" });
    await c.send(id, "note", note);
    await c.send(id, "note", { text: "done", last: true });
    const recs = await drain(c, id);
    const k = kinds(recs);
    // Each delivered event runs the step once: the start, three notes (not
    // four) and the last one.
    assert.equal(k.filter((x) => x === "step:start").length, 5, k.join(" "));
    assert.equal(k.filter((x) => x === "event:noted").length, 4, k.join(" "));
    assert.equal(k.filter((x) => x === "handlerFinished").length, 1);
    const done = await c.get(id);
    assert.equal(done.status, HandlerStatus.COMPLETED);
    assert.deepEqual(done.result, { notes: 4 });
  });

  // A retry after a lost answer: the server acknowledges the key it took.
  test(
    "a retried answer that completed the handler is acknowledged",
    async () => {
      const id = await idleApproval();
      await c.send(id, "approval", { approved: true }, { idempotencyKey: "final" });
      await drain(c, id);
      await c.send(id, "approval", { approved: true }, { idempotencyKey: "final" });
      const k = kinds(await drain(c, id));
      assert.equal(k.filter((x) => x === "handlerFinished").length, 1);
    },
  );
});
