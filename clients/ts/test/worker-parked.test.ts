// 1,000 parked handlers of a worker-defined workflow: released to the
// store, woken by their events, all completing. The worker holds nothing
// for a parked handler: the server keeps it all.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { HandlerStatus, type WfdClient } from "@wfd/client";
import { step, workflow } from "@wfd/client/worker";

import { nodeClient, startServer, waitFor, type TestServer } from "./helpers.js";
import { startWorker, waitForWorkers } from "./worker-helpers.js";

let server: TestServer;
let c: WfdClient;
before(async () => {
  server = await startServer();
  c = nodeClient(server.addr);
});
after(async () => {
  c?.close();
  await server?.stop();
});

const N = 1000;

/** Runs f over items, at most `width` at once. */
async function each<T>(items: T[], width: number, f: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await f(items[next++]!);
    }),
  );
}

/** How many handlers of the workflow the list selects. */
async function count(opts: Parameters<WfdClient["list"]>[0]): Promise<number> {
  let n = 0;
  for await (const _ of c.listAll({ workflow: "parked-t", pageSize: 1000, ...opts })) n++;
  return n;
}

test("1,000 parked handlers are released and woken by their events, all completing", async () => {
  let runs = 0;
  const wf = workflow({
    name: "parked-t",
    events: [{ type: "wake", schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } } }],
    steps: {
      wait: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
        runs++;
        const wake = await ctx.waitFor("wake");
        ctx.send("stop", { n: ev.data["n"]!, woken: wake.data["n"]! });
      }),
    },
  });
  const w = startWorker(server.addr, [wf], { maxRuns: 16 });
  try {
    await waitForWorkers(server.addr, "parked-t");
    const ids: string[] = [];
    await each(
      Array.from({ length: N }, (_, i) => i),
      32,
      async (i) => ids.push((await c.run("parked-t", { n: i }, { handlerId: `parked-${i}` })).handlerId),
    );
    await waitFor("every handler idle", async () => (await count({ idleOnly: true })) === N);
    await each(ids, 32, (id) => c.release(id));
    assert.equal(await count({ residency: "released" }), N);
    const stats = await c.stats();
    assert.ok(stats.handlersReleased >= BigInt(N), `released ${stats.handlersReleased}`);
    assert.equal(runs, N);

    await each(ids, 32, (id) => c.send(id, "wake", { n: Number(id.slice("parked-".length)) }));
    await waitFor("every handler completed", async () => (await count({ statuses: ["completed"] })) === N);
    await each(ids, 32, async (id) => {
      const h = await c.get(id);
      const n = Number(id.slice("parked-".length));
      assert.equal(h.status, HandlerStatus.COMPLETED);
      assert.deepEqual(h.result, { n, woken: n });
    });
    assert.equal(runs, 2 * N, "each handler ran twice: parked, then woken");
    assert.ok((await c.stats()).rehydrationsTotal >= BigInt(N));
  } finally {
    await w.stop();
  }
});
