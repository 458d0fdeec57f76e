// Search attributes against a real server: a workflow a TypeScript worker
// declares them for, handlers given them at run and sendOrStart, a step
// that updates them (setAttributes), list's where over gRPC and Connect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, type Handler, type SearchAttributes, type WfdClient } from "@wfd/client";
import { step, workflow } from "@wfd/client/worker";

import { nodeClient, startServer, waitFor, webClient, type TestServer } from "./helpers.js";
import { startWorker, waitEnded, waitForWorkers, type RunningWorker } from "./worker-helpers.js";

/**
 * orders-ts declares its attributes. Its start step sets stage "open",
 * and amount if the input has one; each "update" event's `set` is an
 * update of the attributes (`bad: true` sets an undeclared one instead,
 * which fails the run), `close: true` ends the handler.
 */
const orders = workflow({
  name: "orders-ts",
  searchAttributes: { customer: "string", amount: "int", tags: "keyword_list", stage: "string", due: "time" },
  external: ["update"],
  steps: {
    open: step({ accepts: ["start"] }, async (ctx, ev) => {
      const amount = ev.data["amount"];
      await ctx.setAttributes(typeof amount === "number" ? { stage: "open", amount } : { stage: "open" });
    }),
    update: step({ accepts: ["update"], emits: ["stop"], retry: { maxAttempts: 1 } }, async (ctx, ev) => {
      if (ev.data["bad"] === true) {
        await ctx.setAttributes({ undeclared_one: 1 });
        return;
      }
      await ctx.setAttributes((ev.data["set"] ?? {}) as SearchAttributes);
      if (ev.data["close"] === true) ctx.send("stop", {});
    }),
  },
});

let server: TestServer;
let worker: RunningWorker;
before(async () => {
  server = await startServer();
  worker = startWorker(server.addr, [orders]);
  await waitForWorkers(server.addr, orders.name);
});
after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function rejectsWith(p: Promise<unknown>, code: Code, message?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ConnectError, `want a ConnectError, got ${String(e)}`);
    assert.equal(Code[e.code], Code[code], e.message);
    if (message) assert.match(e.rawMessage, message);
    return true;
  });
}

/** Every handler of orders-ts the query selects, in its order. */
async function select(c: WfdClient, where: string): Promise<Handler[]> {
  const out: Handler[] = [];
  for await (const h of c.listAll({ workflow: orders.name, where, pageSize: 2 })) out.push(h);
  return out;
}

/** Waits until the query selects exactly the handlers ids (in that order), and returns them. */
async function waitSelects(c: WfdClient, where: string, ids: string[]): Promise<Handler[]> {
  let last: Handler[] = [];
  return waitFor(
    () => `${where} selects ${JSON.stringify(ids)}; last: ${JSON.stringify(last.map((h) => [h.handlerId, h.attributes]))}`,
    async () => {
      last = await select(c, where);
      return JSON.stringify(last.map((h) => h.handlerId)) === JSON.stringify(ids) && last;
    },
  );
}

/** Waits until the handler's attributes are want, and returns it. */
async function waitAttributes(c: WfdClient, id: string, want: object): Promise<Handler> {
  let last: Handler | undefined;
  return waitFor(
    () => `${id}'s attributes are ${JSON.stringify(want)}; last: ${JSON.stringify(last?.attributes)}`,
    async () => {
      last = await c.get(id);
      try {
        assert.deepEqual(last.attributes, want);
        return last;
      } catch {
        return false;
      }
    },
  );
}

test("the workflow lists the attributes its worker declares", async () => {
  const c = nodeClient(server.addr);
  try {
    const w = await c.workflow(orders.name);
    assert.deepEqual(
      { ...w.searchAttributes },
      { customer: "string", amount: "int", tags: "keyword_list", stage: "string", due: "time" },
    );
  } finally {
    c.close();
  }
});

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
    // Each client has its own customers, so the two runs of the suite on
    // one server select only their own handlers.
    const tag = name.replace(/ /g, "-");
    const acme = `acme-${tag}`;

    test("run's attributes, a step's updates and where", async () => {
      const due = new Date("2026-07-01T09:30:00.250+02:00");
      const big = await c.run(orders.name, { amount: 500 }, { handlerId: `big-${tag}`, attributes: { customer: acme, amount: 50 } });
      assert.equal(big.attributes?.["customer"], acme, "the run's answer has the attributes given");
      await c.run(orders.name, null, {
        handlerId: `mid-${tag}`,
        attributes: { customer: acme, amount: 150, tags: ["eu", "vip"], due, stage: null },
      });
      await c.run(orders.name, null, { handlerId: `small-${tag}`, attributes: { customer: acme, amount: 20 } });
      await c.run(orders.name, null, { handlerId: `other-${tag}`, attributes: { customer: `globex-${tag}`, amount: 300 } });

      // The start step of big raised its amount from 50 to 500.
      const where = `customer = "${acme}" and amount > 100`;
      const [b, m] = await waitSelects(c, `${where} order by amount desc`, [`big-${tag}`, `mid-${tag}`]);
      assert.deepEqual(b!.attributes, { customer: acme, amount: 500, stage: "open" });
      await waitAttributes(c, `mid-${tag}`, {
        customer: acme,
        amount: 150,
        tags: ["eu", "vip"],
        due: "2026-07-01T07:30:00.25Z",
        stage: "open",
      });
      assert.equal(m!.attributes?.["customer"], acme);
      assert.deepEqual(
        (await waitSelects(c, `${where} order by amount`, [`mid-${tag}`, `big-${tag}`])).map((h) => h.attributes?.["amount"]),
        [150, 500],
      );
      await waitSelects(c, `tags contains "vip" and customer = "${acme}"`, [`mid-${tag}`]);
      await waitSelects(c, `customer = "${acme}" and due < "2026-07-02T00:00:00Z"`, [`mid-${tag}`]);

      // A step's update: a null deletes amount, a value replaces stage.
      await c.send(`mid-${tag}`, "update", { set: { amount: null, stage: "review" } });
      await waitSelects(c, where, [`big-${tag}`]);
      await waitAttributes(c, `mid-${tag}`, {
        customer: acme,
        tags: ["eu", "vip"],
        due: "2026-07-01T07:30:00.25Z",
        stage: "review",
      });
      await waitSelects(c, `customer = "${acme}" and stage = "review"`, [`mid-${tag}`]);

      // The last update ends the handler; its attributes stay.
      await waitAttributes(c, `small-${tag}`, { customer: acme, amount: 20, stage: "open" });
      const done = await c.send(`small-${tag}`, "update", { set: { amount: 120 }, close: true }, { waitMs: 60_000 });
      assert.equal(HandlerStatus[done.status], "COMPLETED");
      const sel = await waitSelects(c, `${where} and status = completed`, [`small-${tag}`]);
      assert.deepEqual(sel[0]!.attributes, { customer: acme, amount: 120, stage: "open" });
    });

    test("sendOrStart's attributes start the handler with them", async () => {
      const id = `sos-${tag}`;
      const customer = `initech-${tag}`;
      const first = await c.sendOrStart(id, orders.name, null, "update", { set: { tags: ["new"] } }, {
        attributes: { customer, amount: 1000 },
      });
      assert.equal(first.started, true);
      const h = await waitSelects(c, `customer = "${customer}" and amount >= 1000 and tags contains "new"`, [id]);
      assert.equal(h[0]!.attributes?.["amount"], 1000);
      // The handler exists: a second call's attributes are not applied.
      const again = await c.sendOrStart(id, orders.name, null, "update", { set: {} }, { attributes: { customer: "nobody" } });
      assert.equal(again.started, false);
      assert.equal((await c.get(id)).attributes?.["customer"], customer);
    });

    test("refusals: a bad query, an undeclared or mistyped attribute at run, a step's undeclared one", async () => {
      await rejectsWith(c.list({ workflow: orders.name, where: "amount >" }), Code.InvalidArgument, /position/);
      await rejectsWith(c.list({ workflow: orders.name, where: "nosuch = 1" }), Code.InvalidArgument, /nosuch/);
      await rejectsWith(c.list({ workflow: orders.name, where: `customer != "x"` }), Code.InvalidArgument);
      const it = c.listAll({ workflow: orders.name, where: "amount > " });
      await rejectsWith(it.next(), Code.InvalidArgument);

      const undeclared = `undeclared-${tag}`;
      await rejectsWith(
        c.run(orders.name, null, { handlerId: undeclared, attributes: { customer: acme, region: "eu" } }),
        Code.InvalidArgument,
        /region/,
      );
      await rejectsWith(c.get(undeclared), Code.NotFound);
      await rejectsWith(c.run(orders.name, null, { handlerId: undeclared, attributes: { amount: 1.5 } }), Code.InvalidArgument, /amount/);
      await rejectsWith(c.run(orders.name, null, { handlerId: undeclared, attributes: { due: "tomorrow" } }), Code.InvalidArgument, /due/);
      await rejectsWith(c.get(undeclared), Code.NotFound);
      // What the client refuses before calling.
      await rejectsWith(c.run(orders.name, null, { attributes: { due: new Date(Number.NaN) } }), Code.InvalidArgument, /due/);
      await rejectsWith(
        c.sendOrStart(`sos-bad-${tag}`, orders.name, null, "update", {}, { attributes: { nope: 1 } }),
        Code.InvalidArgument,
        /nope/,
      );
      await rejectsWith(c.get(`sos-bad-${tag}`), Code.NotFound);

      // A step's update naming an undeclared attribute fails its run.
      const id = `bad-step-${tag}`;
      await c.run(orders.name, null, { handlerId: id, attributes: { customer: acme } });
      await c.send(id, "update", { bad: true });
      const h = await waitEnded(c, id);
      assert.equal(HandlerStatus[h.status], "FAILED");
      assert.match(h.error, /undeclared_one/);
    });
  });
}
