// Starting with events, atomically: run's events and sendOrStart
// (signal-with-start), against a real server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, type WfdClient } from "@wfd/client";

import { nodeClient, startServer, webClient, type TestServer } from "./helpers.js";

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

async function rejectsWith(p: Promise<unknown>, code: Code): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ConnectError && e.code === code);
}

const clients: [string, () => WfdClient][] = [
  ["node grpc", () => nodeClient(server.addr, { protocol: "grpc" })],
  ["web connect json", () => webClient(`http://${server.addr}`, { protocol: "connect" })],
];

for (const [name, make] of clients) {
  describe(name, () => {
    let c: WfdClient;
    before(() => {
      c = make();
    });
    after(() => c.close());
    const tag = name.replace(/ /g, "-");

    test("run delivers its events with the start, once", async () => {
      const opts = {
        handlerId: `nb-run-${tag}`,
        events: [{ type: "note", data: { text: "a" } }, { type: "note", data: { text: "b", last: true } }],
        waitMs: 60_000,
      };
      const h = await c.run("notebook", null, opts);
      assert.equal(HandlerStatus[h.status], "COMPLETED");
      assert.deepEqual(h.result, { notes: 2 });
      const again = await c.run("notebook", null, opts);
      assert.deepEqual(again.result, { notes: 2 });
      const bad = `nb-bad-${tag}`;
      await rejectsWith(c.run("notebook", null, { handlerId: bad, events: [{ type: "answer" }] }), Code.InvalidArgument);
      await rejectsWith(c.get(bad), Code.NotFound);
    });

    test("sendOrStart starts a missing handler with its event, then delivers to it", async () => {
      const id = `nb-sos-${tag}`;
      const first = await c.sendOrStart(id, "notebook", null, "note", { text: "a" }, { idempotencyKey: `k1-${tag}` });
      assert.equal(first.started, true);
      const retry = await c.sendOrStart(id, "notebook", null, "note", { text: "a" }, { idempotencyKey: `k1-${tag}` });
      assert.equal(retry.started, false);
      const last = await c.sendOrStart(id, "notebook", null, "note", { text: "b", last: true }, { waitMs: 60_000 });
      assert.equal(last.started, false);
      assert.equal(HandlerStatus[last.handler.status], "COMPLETED");
      assert.deepEqual(last.handler.result, { notes: 2 }, "the retry delivered nothing");
      await rejectsWith(c.sendOrStart(id, "approval", null, "note", { text: "c" }), Code.AlreadyExists);
    });
  });
}
