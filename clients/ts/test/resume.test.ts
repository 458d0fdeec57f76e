// stream() across dropped connections: a TCP proxy between client and
// server cuts them, and every record must still arrive exactly once, in
// order. Unary calls are retried through the same kind of failures.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, type Record as WfdRecord, type WfdClient } from "@wfd/client";
import type { Protocol } from "@wfd/client/node";

import { drain, nodeClient, Proxy, startServer, waitFor, webClient, type TestServer } from "./helpers.js";

let server: TestServer;
let direct: WfdClient;
before(async () => {
  server = await startServer();
  direct = nodeClient(server.addr);
});
after(async () => {
  direct?.close();
  await server?.stop();
});

/** Fails unless got holds exactly the records of want, in order. */
function sameRecords(got: WfdRecord[], want: WfdRecord[]): void {
  assert.deepEqual(
    got.map((r) => r.seq),
    want.map((r) => r.seq),
  );
  got.forEach((r, i) => assert.equal(r.seq, BigInt(i + 1), "sequence numbers start at 1 without gaps"));
  assert.deepEqual(got, want);
  assert.equal(got.at(-1)?.kind.case, "handlerFinished");
}

const fast = { retry: { initialBackoffMs: 20, maxBackoffMs: 200 } };

const makers: [string, (addr: string) => WfdClient][] = [
  ...(["grpc", "connect", "grpcweb"] as Protocol[]).map(
    (p): [string, (addr: string) => WfdClient] => [`node ${p}`, (addr) => nodeClient(addr, { protocol: p, ...fast })],
  ),
  ["web connect", (addr) => webClient(`http://${addr}`, { protocol: "connect", ...fast })],
];

for (const [name, make] of makers) {
  describe(`stream resumes over ${name}`, () => {
    let proxy: Proxy;
    let c: WfdClient;
    before(async () => {
      proxy = await Proxy.start(server.addr);
      c = make(proxy.addr);
    });
    after(async () => {
      c.close();
      await proxy.close();
    });

    for (const reset of [false, true]) {
      test(`while following a live handler (cut with ${reset ? "RST" : "FIN"})`, async () => {
        const h = await c.run("approval", { cut: reset ? "rst" : "fin" });
        const before = proxy.accepted;
        const got: WfdRecord[] = [];
        let cuts = 0;
        for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
          got.push(r);
          if (r.kind.case === "idleChanged" && r.kind.value.idle) {
            // The handler waits for its answer: cut the stream, then
            // answer through another connection.
            proxy.sever(reset);
            cuts++;
            await direct.send(h.handlerId, "approval", { approved: true });
          }
        }
        assert.equal(cuts, 1);
        sameRecords(got, await drain(direct, h.handlerId));
        assert.ok(proxy.accepted > before, "the stream never reconnected");
      });
    }

    test("while replaying, cut again and again in the middle of messages", async () => {
      const h = await direct.run("fanin");
      const want = await drain(direct, h.handlerId);
      assert.ok(want.length > 10, `${want.length} records`);
      const before = proxy.accepted;
      // Each new connection carries its set-up, a few records and part of
      // the next; the one the client holds goes first.
      proxy.sever();
      proxy.budget = name.startsWith("web") ? 700 : 500;
      try {
        sameRecords(await drain(c, h.handlerId), want);
      } finally {
        proxy.budget = 0;
      }
      // Usually 5 to 14 connections for the 15 records.
      assert.ok(proxy.accepted - before >= 2, `${proxy.accepted - before} connections: the cuts did not happen`);
    });
  });
}

describe("stream follows a restart", () => {
  test("the old server ends the stream as it stops, the new one recovers the handler, the stream carries on", async () => {
    const old = await startServer();
    const proxy = await Proxy.start(old.addr);
    const c = nodeClient(proxy.addr, fast);
    let restarted: TestServer | undefined;
    try {
      const h = await c.run("approval", { restart: true });
      const got: WfdRecord[] = [];
      for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
        got.push(r);
        if (r.kind.case === "idleChanged" && r.kind.value.idle && restarted === undefined) {
          await old.stop();
          restarted = await startServer(old.dataDir);
          proxy.target = restarted.addr;
          const d = nodeClient(restarted.addr);
          await d.send(h.handlerId, "approval", { approved: true });
          d.close();
        }
      }
      assert.ok(restarted, "the handler never became idle");
      const d = nodeClient(restarted.addr);
      sameRecords(got, await drain(d, h.handlerId));
      d.close();
    } finally {
      c.close();
      await proxy.close();
      await restarted?.stop();
      await old.stop();
    }
  });
});

describe("stream ends", () => {
  let proxy: Proxy;
  before(async () => {
    proxy = await Proxy.start(server.addr);
  });
  after(async () => {
    await proxy.close();
  });

  test("gives up with Unavailable after maxAttempts reconnects without progress", async () => {
    const c = nodeClient(proxy.addr, { retry: { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 20 } });
    try {
      const h = await c.run("approval");
      let n = 0;
      const before = proxy.accepted;
      await assert.rejects(
        (async () => {
          for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
            n++;
            if (r.kind.case === "idleChanged" && r.kind.value.idle) {
              proxy.refuse = 1000;
              proxy.sever();
            }
          }
        })(),
        (e: unknown) => e instanceof ConnectError && e.code === Code.Unavailable,
      );
      assert.ok(n >= 3, `${n} records before the cut`);
      assert.equal(proxy.accepted, before, "refused connections are not forwarded");
      await direct.cancel(h.handlerId);
    } finally {
      proxy.refuse = 0;
      c.close();
    }
  });

  test("breaking out of the loop ends the stream", async () => {
    const c = nodeClient(server.addr);
    try {
      const h = await c.run("approval");
      for await (const r of c.stream(h.handlerId, { includeInternal: true })) {
        assert.equal(r.seq, 1n);
        break;
      }
      // The server sees the stream go.
      let open = -1n;
      await waitFor(
        () => `the server closes the stream (${open} streams open)`,
        async () => (open = (await c.stats()).streams) === 0n,
      );
      await c.cancel(h.handlerId);
    } finally {
      c.close();
    }
  });

  test("aborting the signal ends the stream with Canceled, without retries", async () => {
    const c = nodeClient(server.addr);
    try {
      const h = await c.run("approval");
      const ac = new AbortController();
      let n = 0;
      await assert.rejects(
        (async () => {
          for await (const r of c.stream(h.handlerId, { signal: ac.signal, includeInternal: true })) {
            n++;
            if (r.kind.case === "idleChanged" && r.kind.value.idle) {
              // Abort while the loop waits for the next record: a task
              // queued now runs after the loop has asked for it (the
              // generator resumes and awaits the network in microtasks),
              // and the idle handler sends nothing more.
              setImmediate(() => ac.abort());
            }
          }
        })(),
        (e: unknown) => e instanceof ConnectError && e.code === Code.Canceled,
      );
      assert.ok(n >= 1);
      await c.cancel(h.handlerId);
    } finally {
      c.close();
    }
  });

  test("a stream of a finished handler replays and ends; after the last record it ends at once", async () => {
    const h = await direct.run("echo", { v: 1 });
    const all = await drain(direct, h.handlerId);
    assert.deepEqual(await drain(direct, h.handlerId, all.at(-1)!.seq), []);
  });
});

describe("unary retries", () => {
  let proxy: Proxy;
  before(async () => {
    proxy = await Proxy.start(server.addr);
  });
  after(async () => {
    await proxy.close();
  });

  for (const protocol of ["grpc", "connect"] as Protocol[]) {
    test(`a call through refused connections succeeds (${protocol})`, async () => {
      const c = nodeClient(proxy.addr, { protocol, ...fast });
      try {
        proxy.refuse = 3;
        const h = await c.run("echo", { retried: true });
        assert.equal(proxy.refuse, 0, "the refusals were not all used");
        const recs = await drain(c, h.handlerId);
        assert.equal(recs.at(-1)?.kind.case, "handlerFinished");
      } finally {
        proxy.refuse = 0;
        c.close();
      }
    });
  }

  test("a call through a web transport is retried too", async () => {
    const c = webClient(`http://${proxy.addr}`, fast);
    try {
      proxy.refuse = 2;
      assert.ok((await c.workflows()).some((w) => w.name === "echo"));
      assert.equal(proxy.refuse, 0);
    } finally {
      proxy.refuse = 0;
    }
  });

  test("gives up with Unavailable when the server stays away", async () => {
    const c = nodeClient(proxy.addr, { retry: { maxAttempts: 3, initialBackoffMs: 10 } });
    try {
      proxy.refuse = 1000;
      const err = await c.get("whatever").then(
        () => assert.fail("resolved"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.Unavailable);
      assert.equal(proxy.refuse, 1000 - 3, "three attempts");
    } finally {
      proxy.refuse = 0;
      c.close();
    }
  });

  test("the timeout bounds a call with all its retries", async () => {
    const c = nodeClient(proxy.addr, { timeoutMs: 2_000, retry: { maxAttempts: 100, initialBackoffMs: 50, maxBackoffMs: 100 } });
    try {
      proxy.refuse = 1000;
      const start = Date.now();
      await assert.rejects(
        c.workflows(),
        (e: unknown) => e instanceof ConnectError && (e.code === Code.Unavailable || e.code === Code.DeadlineExceeded),
      );
      // It retried until the deadline was near, and the timeout, not the
      // attempts, ended it: the pauses (40 ms and more) leave room for
      // about 25 attempts in 2 s; 100 would take over 7 s. Counted in
      // attempts, which a slow machine only makes fewer; a bound on the
      // time taken would depend on the machine.
      const took = Date.now() - start;
      const attempts = 1000 - proxy.refuse;
      assert.ok(took >= 1_500, `took ${took} ms`);
      assert.ok(attempts >= 2 && attempts < 50, `${attempts} attempts`);
    } finally {
      proxy.refuse = 0;
      c.close();
    }
  });

  test("no retry for other codes; an aborted signal is Canceled", async () => {
    const c = nodeClient(server.addr);
    try {
      await assert.rejects(c.get("nope"), (e: unknown) => e instanceof ConnectError && e.code === Code.NotFound);
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(c.workflows({ signal: ac.signal }), (e: unknown) => e instanceof ConnectError && e.code === Code.Canceled);
    } finally {
      c.close();
    }
  });
});
