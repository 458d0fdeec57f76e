// Namespaces against a real `wfd serve --namespace acme`: the same handler
// id in two namespaces, a worker serving one, the namespace list, and a
// name that cannot be a namespace's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, type WfdClient } from "@wfd/client";
import { step, workflow } from "@wfd/client/worker";

import { nodeClient, startServer, webClient, type TestServer } from "./helpers.js";
import { startWorker, waitEnded, waitForWorkers } from "./worker-helpers.js";

let server: TestServer;
before(async () => {
  server = await startServer(undefined, ["--namespace", "acme=2h"]);
});
after(async () => {
  await server?.stop();
});

function code(e: unknown): Code | undefined {
  return e instanceof ConnectError ? e.code : undefined;
}

const clients: [string, (ns?: string) => WfdClient][] = [
  ["node grpc", (ns) => nodeClient(server.addr, { protocol: "grpc", namespace: ns })],
  ["node grpcweb", (ns) => nodeClient(server.addr, { protocol: "grpcweb", namespace: ns })],
  ["web connect json", (ns) => webClient(`http://${server.addr}`, { protocol: "connect", namespace: ns })],
];

for (const [name, make] of clients) {
  describe(name, () => {
    test("one id, two namespaces, two handlers", async () => {
      const def = make();
      const acme = make("acme");
      const id = `same-${name.replaceAll(" ", "-")}`;
      await def.run("approval", { who: "default" }, { handlerId: id, attributes: { requester: "ada" } });
      await acme.run("approval", { who: "acme" }, { handlerId: id, attributes: { requester: "bob" } });
      assert.equal((await def.get(id)).attributes?.["requester"], "ada");
      assert.equal((await acme.get(id)).attributes?.["requester"], "bob");
      await acme.send(id, "approval", { approved: true });
      assert.equal((await waitEnded(acme, id)).status, HandlerStatus.COMPLETED);
      assert.equal((await def.get(id)).status, HandlerStatus.RUNNING);
      await assert.rejects(make("nope").get(id), (e) => code(e) === Code.NotFound && /namespace "nope"/.test(String(e)));
      const ns = await acme.namespaces();
      assert.deepEqual(
        ns.map((n) => n.name),
        ["acme", "default"],
      );
      assert.equal(Number(ns[0]!.retention?.seconds), 7200);
      assert.equal((await acme.identity()).namespace, "acme");
      def.close();
      acme.close();
    });
  });
}

test("a worker serves its namespace only", async () => {
  const wf = workflow({
    name: "ns-ts",
    steps: { go: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => ctx.send("stop", { ok: true })) },
  });
  const w = startWorker(server.addr, [wf], { namespace: "acme" });
  const acme = nodeClient(server.addr, { namespace: "acme" });
  const def = nodeClient(server.addr);
  try {
    // Until the worker has connected, the workflow is unknown in acme.
    await waitForWorkers(server.addr, "ns-ts", 1, "acme");
    const h = await acme.run("ns-ts", {}, { handlerId: "ns-ts-1" });
    assert.equal((await waitEnded(acme, h.handlerId)).status, HandlerStatus.COMPLETED);
    await assert.rejects(def.run("ns-ts", {}), (e) => code(e) === Code.NotFound);
  } finally {
    await w.stop();
    acme.close();
    def.close();
  }
});

test("a name that cannot be a namespace's is refused at once", () => {
  assert.throws(() => nodeClient(server.addr, { namespace: "Not_One" }), /is not a namespace/);
});
