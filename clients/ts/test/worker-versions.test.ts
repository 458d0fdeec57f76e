// Versions of a worker-defined workflow, over the wire against a real
// `wfd serve`: one Worker serves two versions side by side, each handler
// runs its own version's code, UpgradeHandlers moves handlers from one to
// the other (dry run first), a changed definition under a version the
// server has is refused with ALREADY_EXISTS and ends the worker, a standby
// version waits for its promotion, and the SDK checks version names.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, HandlerStatus, UpgradeOutcome, type HandlerUpgrade, type JsonObject, type Transport, type WfdClient } from "@wfd/client";
import { step, Worker, workflow, type WorkflowSpec } from "@wfd/client/worker";

import { drain, nodeClient, startServer, waitFor, type TestServer } from "./helpers.js";
import { listWorkers, startWorker, waitEnded, waitIdle } from "./worker-helpers.js";

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

/** How many runs of "review" each version's code made. */
type Ran = Record<string, number>;

/**
 * The expense workflow as a worker defines it (as server/worker_versions_test.go's
 * expenseVersion): "review" waits for "approve" and finishes with the
 * version that ran it. v2 adds a step ("audit", on an "audit" event from
 * outside) and an optional input field ("note", a string). ("expense" is a
 * built-in name, so the worker's is "expense-report".)
 */
function expenseVersion(version: string, ran: Ran, extra: { standby?: boolean } = {}): WorkflowSpec {
  const v2 = version === "v2";
  const properties: JsonObject = { amount: { type: "number" } };
  if (v2) properties["note"] = { type: "string" };
  const steps: WorkflowSpec["steps"] = {
    review: step({ accepts: ["start"], emits: ["stop"] }, async (ctx) => {
      ran[version] = (ran[version] ?? 0) + 1;
      await ctx.waitFor("approve");
      ctx.send("stop", { version });
    }),
  };
  if (v2) steps["audit"] = step({ accepts: ["audit"] }, () => {});
  return workflow({
    name: "expense-report",
    version,
    ...extra,
    inputSchema: { type: "object", properties, required: ["amount"] },
    events: [{ type: "approve" }],
    external: v2 ? ["audit"] : [],
    steps,
  });
}

/** Waits until a connected worker serves every one of want (workflow@version). */
async function waitServing(...want: string[]): Promise<void> {
  let seen: string[][] = [];
  await waitFor(
    () => `a worker serving ${want.join(", ")}; listed: ${JSON.stringify(seen)}`,
    async () => {
      const ws = await listWorkers(server.addr);
      seen = ws.map((w) => w.versions);
      return ws.some((w) => want.every((v) => w.versions.includes(v)));
    },
  );
}

/** Answers an idle expense handler and returns the version that finished it. */
async function approve(id: string): Promise<string> {
  await c.send(id, "approve", {});
  const h = await waitEnded(c, id);
  assert.equal(h.status, HandlerStatus.COMPLETED, `${id}: ${h.error}`);
  return String(h.result?.["version"]);
}

async function collect(it: AsyncIterable<HandlerUpgrade>): Promise<Map<string, HandlerUpgrade>> {
  const out = new Map<string, HandlerUpgrade>();
  for await (const u of it) out.set(u.handlerId, u);
  return out;
}

describe("workflow versions", () => {
  test("one worker serves v1 and v2; handlers run their own version; an upgrade moves them to v2", async () => {
    const ran: Ran = {};
    const w = startWorker(server.addr, [expenseVersion("v1", ran), expenseVersion("v2", ran)]);
    try {
      await waitServing("expense-report@v1", "expense-report@v2");
      // Both are new in one registration: the last that asks to be current is.
      const listed = await c.workflow("expense-report");
      assert.equal(listed.version, "v2");
      assert.deepEqual(listed.versions.map((v) => [v.version, v.current]), [["v1", false], ["v2", true]]);

      // v2 refuses a note that is not a string; v1 does not know notes.
      await assert.rejects(c.run("expense-report", { amount: 1, note: 7 }), (e: ConnectError) => e.code === Code.InvalidArgument);
      const h1 = await c.run("expense-report", { amount: 1 }, { version: "v1" });
      const h2 = await c.run("expense-report", { amount: 2, note: "new" });
      assert.equal(h1.workflowVersion, "v1");
      assert.equal(h2.workflowVersion, "v2");
      await waitIdle(c, h1.handlerId);
      await waitIdle(c, h2.handlerId);
      assert.equal(await approve(h1.handlerId), "v1");
      assert.equal(await approve(h2.handlerId), "v2");

      // Three more on v1; the last has a note v2's schema refuses.
      const movable = [];
      for (const amount of [10, 11]) {
        movable.push((await c.run("expense-report", { amount }, { version: "v1" })).handlerId);
      }
      const odd = (await c.run("expense-report", { amount: 12, note: 7 }, { version: "v1" })).handlerId;
      for (const id of [...movable, odd]) await waitIdle(c, id);

      // The dry run says who can move (a page of 2: paging goes on), and moves none.
      const dry = await collect(c.upgradeAllHandlers("expense-report", "v1", { dryRun: true, pageSize: 2 }));
      assert.deepEqual([...dry.keys()].sort(), [...movable, odd].sort());
      for (const id of movable) assert.equal(dry.get(id)!.outcome, UpgradeOutcome.CAN_MOVE, dry.get(id)!.reason);
      assert.equal(dry.get(odd)!.outcome, UpgradeOutcome.REFUSED);
      assert.match(dry.get(odd)!.reason, /input schema of v2/);
      for (const id of movable) assert.equal((await c.get(id)).workflowVersion, "v1");

      const page = await c.upgradeHandlers("expense-report", "v1", { to: "v2", handlerIds: [movable[0]!] });
      assert.equal(page.toVersion, "v2");
      assert.deepEqual(page.handlers.map((u) => [u.handlerId, u.outcome]), [[movable[0], UpgradeOutcome.MOVED]]);
      const moved = await collect(c.upgradeAllHandlers("expense-report", "v1", { pageSize: 1 }));
      assert.deepEqual([...moved.keys()].sort(), [movable[1], odd].sort());
      assert.equal(moved.get(movable[1]!)!.outcome, UpgradeOutcome.MOVED);
      assert.equal(moved.get(odd)!.outcome, UpgradeOutcome.REFUSED);

      // Moved handlers take what only v2 takes, finish on v2's code, and
      // say so in their streams; v1's code runs none of their runs.
      const v1Runs = ran["v1"];
      for (const id of movable) {
        assert.equal((await c.get(id)).workflowVersion, "v2");
        await c.send(id, "audit", {});
        await waitIdle(c, id);
        assert.equal(await approve(id), "v2");
        const recs = await drain(c, id);
        const up = recs.flatMap((r) => (r.kind.case === "handlerUpgraded" ? [[r.kind.value.fromVersion, r.kind.value.toVersion]] : []));
        assert.deepEqual(up, [["v1", "v2"]]);
      }
      assert.equal(ran["v1"], v1Runs, "v1's code ran runs of upgraded handlers");
      // The refused one still runs v1, on v1's code.
      await assert.rejects(c.send(odd, "audit", {}), (e: ConnectError) => e.code === Code.InvalidArgument);
      assert.equal(await approve(odd), "v1");

      const counts = new Map((await c.workflow("expense-report")).versions.map((v) => [v.version, [v.running + v.released, v.finished]]));
      assert.deepEqual(counts.get("v1"), [0n, 2n]);
      assert.deepEqual(counts.get("v2"), [0n, 3n]);
      assert.ok((await c.list({ workflow: "expense-report", workflowVersion: "v2" })).handlers.length === 3);
    } finally {
      await w.stop();
    }
    assert.equal(await w.done, undefined);
  });

  test("a changed definition under a version the server has: ALREADY_EXISTS ends the worker", async () => {
    const def = (steps: string[]) =>
      workflow({
        name: "changed-t",
        version: "v1",
        external: steps.filter((s) => s !== "first"),
        steps: Object.fromEntries(
          steps.map((s) => [s, step({ accepts: [s === "first" ? "start" : s], emits: ["stop"] }, (ctx) => ctx.send("stop", {}))]),
        ),
      });
    const w1 = startWorker(server.addr, [def(["first"])]);
    await waitServing("changed-t@v1");
    await w1.stop();

    // The same definition again is fine; a changed one is refused for good.
    const again = startWorker(server.addr, [def(["first"])]);
    await waitFor("the same definition connects again", () => again.worker.workerId !== "");
    await again.stop();
    assert.equal(await again.done, undefined);
    const changed = startWorker(server.addr, [def(["first", "second"])]);
    const err = await changed.done;
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.AlreadyExists);
    assert.match(err.rawMessage, /version "v1" of workflow "changed-t"/);
  });

  test("a standby version is current once promoted; an unused version no worker serves can be deleted", async () => {
    const def = (version: string, standby?: boolean) =>
      workflow({
        name: "standby-t",
        version,
        standby,
        steps: { only: step({ accepts: ["start"], emits: ["stop"] }, (ctx) => ctx.send("stop", { version })) },
      });
    const w1 = startWorker(server.addr, [def("v1")]);
    await waitServing("standby-t@v1");
    await w1.stop();
    const w2 = startWorker(server.addr, [def("v1"), def("v2", true)]);
    try {
      await waitServing("standby-t@v1", "standby-t@v2");
      assert.equal((await c.workflow("standby-t")).version, "v1");
      const h1 = await c.run("standby-t", {});
      assert.equal((await waitEnded(c, h1.handlerId)).result?.["version"], "v1");

      const promoted = await c.setCurrentVersion("standby-t", "v2");
      assert.equal(promoted.version, "v2");
      const h2 = await c.run("standby-t", {});
      assert.equal((await waitEnded(c, h2.handlerId)).result?.["version"], "v2");
      assert.ok((await c.workflows({ versions: true })).find((w) => w.name === "standby-t")?.versions.length === 2);

      await assert.rejects(c.deleteWorkflowVersion("standby-t", "v2"), (e: ConnectError) => e.code === Code.FailedPrecondition);
      // A worker that still serves v1 would register it again.
      await assert.rejects(
        c.deleteWorkflowVersion("standby-t", "v1"),
        (e: ConnectError) => e.code === Code.FailedPrecondition && /still serve/.test(e.rawMessage),
      );
    } finally {
      await w2.stop();
    }
    await waitFor("v1 deleted once no worker serves it", async () => {
      try {
        await c.deleteWorkflowVersion("standby-t", "v1");
        return true;
      } catch (e) {
        if (!(e instanceof ConnectError) || e.code !== Code.FailedPrecondition) throw e;
        return false;
      }
    });
    assert.deepEqual((await c.workflow("standby-t")).versions.map((v) => v.version), ["v2"]);
  });

  test("the SDK checks version names and refuses a version given twice", () => {
    const steps = { s: step({ accepts: ["start"], emits: ["stop"] }, () => {}) };
    for (const bad of ["", "a b", "v@1", "x".repeat(65), "vé"]) {
      assert.throws(() => workflow({ name: "names-t", version: bad, steps }), TypeError, JSON.stringify(bad));
    }
    workflow({ name: "names-t", version: "A-z_0.9" + "x".repeat(57), steps });
    const v1 = workflow({ name: "names-t", version: "v1", steps });
    const v2 = workflow({ name: "names-t", version: "v2", steps });
    // A transport that is never called: the constructor checks, nothing connects.
    const transport = {} as Transport;
    assert.throws(() => new Worker({ transport, workflows: [v1, v2, { ...v1 }] }), /version "v1" is given twice/);
    // Unnamed versions of one name, and the same version of other names, are fine.
    const other = workflow({ name: "other-t", version: "v1", steps });
    const unnamed = workflow({ name: "names-t", steps });
    new Worker({ transport, workflows: [v1, v2, other, unnamed] });
  });
});
