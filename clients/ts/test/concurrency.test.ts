// Concurrency keys against a real server: a workflow a TypeScript worker
// declares with at most one running handler per customer; the second of a
// customer is queued (status QUEUED, its slot's key and place), holds the
// event sent to it, and runs once the first ends; list filters by
// "queued"; a refusing workflow answers RESOURCE_EXHAUSTED. Over gRPC and
// Connect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, type WfdClient } from "@wfd/client";
import { step, workflow } from "@wfd/client/worker";

import { nodeClient, startServer, waitFor, webClient, type TestServer } from "./helpers.js";
import { startWorker, waitForWorkers, type RunningWorker } from "./worker-helpers.js";

const perCustomer = (name: string, refuse: boolean) =>
  workflow({
    name,
    external: ["go"],
    concurrency: { key: "customer", max: 1, refuse },
    steps: {
      begin: step({ accepts: ["start"] }, async () => {}),
      finish: step({ accepts: ["go"], emits: ["stop"] }, async (ctx, ev) => {
        ctx.send("stop", ev.data);
      }),
    },
  });
const serial = perCustomer("serial-ts", false);
const refusing = perCustomer("refusing-ts", true);

let server: TestServer;
let worker: RunningWorker;
before(async () => {
  server = await startServer();
  worker = startWorker(server.addr, [serial, refusing]);
  await waitForWorkers(server.addr, serial.name);
  await waitForWorkers(server.addr, refusing.name);
});
after(async () => {
  await worker?.stop();
  await server?.stop();
});

for (const [proto, make] of [
  ["grpc", () => nodeClient(server.addr, { protocol: "grpc" })],
  ["connect", () => webClient(`http://${server.addr}`, { protocol: "connect" })],
] as const) {
  describe(proto, () => {
    let c: WfdClient;
    before(() => {
      c = make();
    });

    test("the second of a customer waits for the first", async () => {
      const customer = `${proto}-acme`;
      const first = await c.run(serial.name, { customer });
      const second = await c.run(serial.name, { customer });
      assert.equal(first.status, HandlerStatus.RUNNING);
      assert.equal(second.status, HandlerStatus.QUEUED);
      const got = await c.get(second.handlerId);
      assert.equal(got.slot?.key, customer);
      assert.equal(got.slot?.queued, true);
      assert.equal(got.slot?.position, 1);
      // Held until it is admitted.
      await c.send(second.handlerId, "go", { n: 2 });
      assert.equal((await c.get(second.handlerId)).status, HandlerStatus.QUEUED);
      const queued = await c.list({ workflow: serial.name, statuses: ["queued"] });
      assert.deepEqual(
        queued.handlers.map((h) => h.handlerId),
        [second.handlerId],
      );
      await c.send(first.handlerId, "go", { n: 1 });
      const done = await waitFor("the second to run its held event", async () => {
        const h = await c.get(second.handlerId);
        return h.status === HandlerStatus.COMPLETED && h;
      });
      assert.equal(done.result?.["n"], 2);
      const defs = await c.workflows();
      const def = defs.find((w) => w.name === serial.name);
      assert.equal(def?.concurrency?.max, 1);
    });

    test("a refusing workflow refuses over its limit", async () => {
      const customer = `${proto}-busy`;
      await c.run(refusing.name, { customer });
      await assert.rejects(c.run(refusing.name, { customer }), (e: unknown) => {
        assert.ok(e instanceof ConnectError);
        assert.equal(Code[e.code], Code[Code.ResourceExhausted], e.message);
        assert.match(e.rawMessage, new RegExp(customer));
        return true;
      });
    });
  });
}
