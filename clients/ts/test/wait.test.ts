// Waiting for handlers (wait, run and send with waitMs), the stream's
// choices (fromHead, includeInternal) and identity, against a real server.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, type Record as WfdRecord, type WfdClient } from "@wfd/client";

import { drain, nodeClient, Proxy, startServer, waitFor, webClient, type TestServer } from "./helpers.js";

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

/** Starts an approval and returns its id once it waits for its answer. */
async function idleApproval(c: WfdClient): Promise<string> {
  const h = await c.run("approval", { amount: 3 });
  await waitFor(`approval ${h.handlerId} idle`, async () => (await c.get(h.handlerId)).idle !== undefined);
  return h.handlerId;
}

function isInternal(r: WfdRecord): boolean {
  return r.kind.case !== "eventWritten" && r.kind.case !== "handlerFinished";
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

    test("waitIdle answers once the handler is idle after the record named, or finished; getAt looks back", async () => {
      const h = await c.run("approval", { amount: 4 });
      const idle = await c.waitIdle(h.handlerId, h.lastSeq, { waitMs: 30_000 });
      const back = await c.getAt(h.handlerId, idle.lastSeq);
      assert.equal(back.idle?.waiters[0]?.eventType, "approval");
      await rejectsWith(c.getAt(h.handlerId, idle.lastSeq + 1000n), Code.OutOfRange);
      assert.equal(HandlerStatus[idle.status], "RUNNING");
      assert.equal(idle.idle?.waiters[0]?.eventType, "approval");
      const sent = await c.send(h.handlerId, "approval", { approved: true });
      const end = await c.waitIdle(h.handlerId, sent.lastSeq, { waitMs: 30_000 });
      assert.equal(HandlerStatus[end.status], "COMPLETED");
    });

    test("run, send and wait answer once the handler finished, or running when the wait ends", async () => {
      const echo = await c.run("echo", { x: 1 }, { waitMs: 30_000 });
      assert.equal(HandlerStatus[echo.status], "COMPLETED");
      assert.deepEqual(echo.result, { x: 1 });

      const id = await idleApproval(c);
      // The call's timeout (100 ms) grows by the wait: 300 ms end running.
      const running = await c.wait(id, { waitMs: 300, timeoutMs: 100 });
      assert.equal(HandlerStatus[running.status], "RUNNING");
      const done = await c.send(id, "approval", { approved: true }, { waitMs: 30_000 });
      assert.equal(HandlerStatus[done.status], "COMPLETED");
      assert.equal(HandlerStatus[(await c.wait(id)).status], "COMPLETED");

      await rejectsWith(c.wait("nope", { waitMs: 1000 }), Code.NotFound);
      await rejectsWith(c.wait(id, { waitMs: 2 * 3600_000 }), Code.InvalidArgument);
    });

    test("the default stream leaves out internal records", async () => {
      const id = await idleApproval(c);
      await c.release(id);
      await c.send(id, "approval", { approved: true }, { waitMs: 30_000 });
      const all = await drain(c, id);
      const want = all.filter((r) => !isInternal(r)).map((r) => r.seq);
      assert.ok(want.length < all.length, "no internal records to leave out");
      const got: bigint[] = [];
      for await (const r of c.stream(id)) got.push(r.seq);
      assert.deepEqual(got, want);
    });

    test("identity without authentication", async () => {
      const id = await c.identity();
      assert.equal(id.authentication, false);
      assert.equal(id.subject, "");
    });

    test("replicas of a single-process server: none", async () => {
      assert.deepEqual(await c.replicas(), []);
    });
  });
}

test("a fromHead stream cut while it follows resumes after its head with the same choices", async () => {
  const direct = nodeClient(server.addr);
  const proxy = await Proxy.start(server.addr);
  // Patient enough to outlast the refused reconnects below.
  const c = nodeClient(proxy.addr, { retry: { maxAttempts: 100_000, initialBackoffMs: 10, maxBackoffMs: 50 } });
  try {
    const id = await idleApproval(direct);
    const head = (await direct.get(id)).lastSeq;
    const got: WfdRecord[] = [];
    const following = (async () => {
      for await (const r of c.stream(id, { fromHead: true, includeInternal: true })) got.push(r);
    })();
    await waitFor("the stream is subscribed", async () => (await direct.stats()).streams === 1n);
    // Cut it and keep it away until the handler has finished.
    proxy.refuse = 1e9;
    proxy.sever();
    await direct.send(id, "approval", { approved: true }, { waitMs: 30_000 });
    proxy.refuse = 0;
    await following;
    const all = await drain(direct, id);
    assert.deepEqual(
      got.map((r) => r.seq),
      all.filter((r) => r.seq > head).map((r) => r.seq),
    );
    assert.ok(got.some(isInternal), "internal records were left out after the reconnect");
    assert.ok(proxy.accepted >= 2, "the stream never reconnected");
  } finally {
    proxy.refuse = 0;
    c.close();
    direct.close();
    await proxy.close();
  }
});

describe("identity with a token (wfd serve --auth-tokens)", () => {
  let authServer: TestServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "wfd-ts-identity-"));
    const file = join(dir, "tokens.yaml");
    writeFileSync(file, "tokens:\n  - token: ada-token\n    subject: ada\n    roles: [reader, tasks]\n");
    authServer = await startServer(undefined, ["--auth-tokens", file], { token: "ada-token" });
  });
  after(async () => {
    await authServer?.stop();
  });

  test("names the caller, and refuses a bad token", async () => {
    for (const c of [
      nodeClient(authServer.addr, { protocol: "grpc", token: "ada-token" }),
      webClient(`http://${authServer.addr}`, { protocol: "connect", token: "ada-token" }),
    ]) {
      try {
        const id = await c.identity();
        assert.equal(id.authentication, true);
        assert.equal(id.subject, "ada");
        assert.deepEqual(id.roles, ["reader", "tasks"]);
      } finally {
        c.close();
      }
    }
    const bad = nodeClient(authServer.addr, { protocol: "grpc", token: "wrong" });
    try {
      await rejectsWith(bad.identity(), Code.Unauthenticated);
    } finally {
      bad.close();
    }
  });
});
