// Deleting finished handlers, the retention sweep and the published-event
// log against a real server, over gRPC, Connect and gRPC-Web (node) and
// Connect (web).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, WfdClient } from "@wfd/client";

import { drain, nodeClient, startServer, waitFor, webClient, type TestServer } from "./helpers.js";

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

function code(e: unknown): Code | undefined {
  return e instanceof ConnectError ? e.code : undefined;
}

for (const [name, make] of clients) {
  describe(name, () => {
    test("delete refuses a running handler and removes a finished one", async () => {
      const c = make();
      const h = await c.run("approval", { amount: 1 });
      await assert.rejects(c.delete(h.handlerId), (e) => code(e) === Code.FailedPrecondition);
      await c.cancel(h.handlerId);
      await drain(c, h.handlerId);
      await c.delete(h.handlerId);
      await assert.rejects(c.get(h.handlerId), (e) => code(e) === Code.NotFound);
      await assert.rejects(c.delete(h.handlerId), (e) => code(e) === Code.NotFound);
      const again = await c.run("approval", { amount: 2 }, { handlerId: h.handlerId });
      assert.equal(again.status, HandlerStatus.RUNNING);
    });

    test("published events latest first, by key and handler, paged", async () => {
      const c = make();
      const key = `ts-${name.replaceAll(" ", "-")}-${Date.now()}`;
      const seqs: bigint[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await c.publish(key, { i }, i === 2 ? { handlerId: "h-ts" } : {});
        seqs.push(res.seq);
      }
      const page = await c.publishedEvents({ key, pageSize: 2 });
      assert.deepEqual(page.events.map((e) => e.seq), [seqs[2], seqs[1]]);
      assert.notEqual(page.nextPageToken, "");
      assert.equal(page.events[0]?.handlerId, "h-ts");
      assert.equal(page.events[0]?.data?.["i"], 2);
      const all: bigint[] = [];
      for await (const e of c.listAllPublishedEvents({ key, pageSize: 1 })) {
        all.push(e.seq);
      }
      assert.deepEqual(all, [seqs[2], seqs[1], seqs[0]]);
      const future = await c.publishedEvents({ key, since: new Date(Date.now() + 3_600_000) });
      assert.equal(future.events.length, 0);
      await assert.rejects(c.publishedEvents({ key, pageToken: "garbage" }), (e) => code(e) === Code.InvalidArgument);
    });
  });
}

test("retention deletes finished handlers", async () => {
  const s = await startServer(undefined, ["--retention", "1ms"]);
  try {
    const c = nodeClient(s.addr);
    const running = await c.run("approval", { amount: 1 });
    const done = await c.run("echo", { x: 1 });
    await waitFor(`handler ${done.handlerId} deleted`, async () => {
      try {
        await c.get(done.handlerId);
        return false;
      } catch (e) {
        return code(e) === Code.NotFound;
      }
    });
    assert.equal((await c.get(running.handlerId)).status, HandlerStatus.RUNNING);
  } finally {
    await s.stop();
  }
});
