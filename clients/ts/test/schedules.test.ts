// Workflow schedules through the client (create, get, list, update, pause
// and resume, trigger, backfill, delete, and the refusals' codes), against
// a real server. The schedules tick hourly or yearly, or not at all while
// the test runs that counts on it: nothing here waits for a tick.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, OverlapPolicy, toScheduleInit, type ScheduleInit, type WfdClient } from "@wfd/client";

import { nodeClient, startServer, webClient, type TestServer } from "./helpers.js";

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** Asserts p fails with code, and with a message holding text if given. */
async function rejectsWith(p: Promise<unknown>, code: Code, text?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ConnectError, `not a ConnectError: ${String(e)}`);
    assert.equal(Code[e.code], Code[code], e.rawMessage);
    if (text !== undefined) assert.ok(e.rawMessage.includes(text), `${JSON.stringify(e.rawMessage)} does not say ${JSON.stringify(text)}`);
    return true;
  });
}

const HOUR_MS = 3600_000;
/** Once a year (1 January, 00:00 UTC): never during a test. */
const YEARLY = "0 0 1 1 *";

/** The handler id of a schedule's tick: sched:<id>:<YYYYMMDDThhmmssZ>. */
function tickId(scheduleId: string, tick: Date): string {
  return `sched:${scheduleId}:${tick.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}`;
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

    test("create, get, update, pause, resume and delete a schedule", async () => {
      const id = `hourly-${tag}`;
      const init: ScheduleInit = { scheduleId: id, intervalMs: HOUR_MS, workflow: "echo", input: { x: 1 }, overlap: "allow", note: "first" };
      const created = await c.createSchedule(init);
      assert.equal(created.scheduleId, id);
      assert.equal(created.spec?.interval?.seconds, 3600n);
      assert.equal(created.policy?.overlap, OverlapPolicy.ALLOW);
      assert.deepEqual(created.action?.input, { x: 1 });
      assert.equal(created.paused, false);
      const next = created.info!.nextTicks.map(timestampMs);
      assert.equal(next.length, 5, "five next ticks");
      assert.ok(next[0]! > Date.now() - HOUR_MS && next[0]! % HOUR_MS === 0, `first tick ${next[0]} is not the next whole hour`);
      next.slice(1).forEach((t, i) => assert.equal(t - next[i]!, HOUR_MS));

      const got = await c.getSchedule(id);
      assert.equal(got.revision, created.revision);
      assert.deepEqual(toScheduleInit(got), { ...init, overlap: OverlapPolicy.ALLOW, paused: false });

      const updated = await c.updateSchedule({ ...toScheduleInit(got), note: "second" }, { expectRevision: got.revision });
      assert.equal(updated.note, "second");
      assert.ok(updated.revision > got.revision);
      await rejectsWith(c.updateSchedule({ ...init, note: "stale" }, { expectRevision: got.revision }), Code.FailedPrecondition, "revision");

      const paused = await c.pauseSchedule(id, "maintenance");
      assert.equal(paused.paused, true);
      assert.equal(paused.note, "maintenance");
      assert.deepEqual(paused.info?.nextTicks, [], "a paused schedule has no next ticks");
      assert.equal((await c.getSchedule(id)).paused, true);
      const resumed = await c.resumeSchedule(id);
      assert.equal(resumed.paused, false);
      assert.equal(resumed.note, "maintenance", "resume keeps the note");
      assert.equal(resumed.info?.nextTicks.length, 5);
      assert.equal(resumed.spec?.interval?.seconds, 3600n, "pause and resume keep the spec");

      await c.deleteSchedule(id);
      await rejectsWith(c.getSchedule(id), Code.NotFound, id);
      await rejectsWith(c.deleteSchedule(id), Code.NotFound);
      await rejectsWith(c.pauseSchedule(id), Code.NotFound);
    });

    test("trigger starts a run now; repeated with the same instant, no other", async () => {
      const id = `trig-${tag}`;
      await c.createSchedule({ scheduleId: id, cron: YEARLY, timeZone: "Europe/Paris", workflow: "echo", overlap: "allow" });
      const tr = await c.triggerSchedule(id);
      assert.equal(tr.started.length, 1);
      assert.ok(tr.started[0]!.startsWith(`sched:${id}:trigger:`), tr.started[0]);
      const h = await c.get(tr.started[0]!);
      assert.equal(h.workflow, "echo");
      assert.equal(h.scheduleId, id);

      const at = new Date(Date.now() - 5_000);
      const first = await c.triggerSchedule(id, { at });
      const again = await c.triggerSchedule(id, { at });
      assert.deepEqual(again.started, first.started);
      assert.equal(first.started[0], `sched:${id}:trigger:${BigInt(at.getTime()) * 1_000_000n}`);
      assert.notEqual(first.started[0], tr.started[0]);
    });

    test("backfill starts each tick of a past range", async () => {
      const id = `backfill-${tag}`;
      await c.createSchedule({ scheduleId: id, intervalMs: HOUR_MS, workflow: "echo", overlap: "allow", paused: true });
      const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      const ticks = [3, 2, 1].map((n) => new Date(hour - n * HOUR_MS));
      const bf = await c.backfillSchedule(id, ticks[0]!, ticks[2]!);
      assert.deepEqual(bf.started, ticks.map((t) => tickId(id, t)), "a paused schedule is backfilled too");
      assert.equal(bf.schedule.paused, true);
      for (const hid of bf.started) {
        const h = await c.get(hid);
        assert.equal(h.scheduleId, id);
        assert.equal(timestampMs(h.scheduleTick!), ticks[bf.started.indexOf(hid)]!.getTime());
      }
      await rejectsWith(c.backfillSchedule(id, ticks[0]!, new Date(Date.now() + HOUR_MS)), Code.InvalidArgument, "future");
    });

    test("listSchedules pages by id; listAllSchedules walks the pages", async () => {
      const prefix = `list-${tag}-`;
      const ids = ["a", "b", "c"].map((s) => prefix + s);
      for (const id of [...ids].reverse()) {
        await c.createSchedule({ scheduleId: id, cron: YEARLY, workflow: "echo" });
      }
      const seen: string[] = [];
      let pages = 0;
      let pageToken = "";
      do {
        const page = await c.listSchedules({ pageSize: 2, pageToken });
        assert.ok(page.schedules.length <= 2);
        seen.push(...page.schedules.map((s) => s.scheduleId));
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken !== "");
      assert.ok(pages >= 2, `${pages} page(s) of 2`);
      assert.deepEqual(seen, [...seen].sort(), "by id");
      assert.deepEqual(seen.filter((s) => s.startsWith(prefix)), ids);
      const all: string[] = [];
      for await (const s of c.listAllSchedules({ pageSize: 2 })) all.push(s.scheduleId);
      assert.deepEqual(all, seen);
    });

    test("refusals: the server's codes, and what the client checks itself", async () => {
      const id = `refused-${tag}`;
      const base: ScheduleInit = { scheduleId: id, cron: YEARLY, workflow: "echo" };
      await rejectsWith(c.createSchedule({ ...base, cron: "0 25 * * *" }), Code.InvalidArgument, "cron field 2 (hour)");
      await rejectsWith(c.createSchedule({ ...base, workflow: "nope" }), Code.NotFound, "nope");
      await c.createSchedule(base);
      await rejectsWith(c.createSchedule(base), Code.AlreadyExists, id);
      await rejectsWith(c.updateSchedule({ ...base, cron: "61 * * * *" }), Code.InvalidArgument, "cron field 1 (minute)");
      await rejectsWith(c.triggerSchedule("no-such-schedule"), Code.NotFound);
      // Refused before any call.
      await rejectsWith(c.createSchedule({ ...base, cron: undefined, intervalMs: -1000 }), Code.InvalidArgument, "intervalMs");
      await rejectsWith(c.createSchedule({ ...base, catchupWindowMs: 1.5 }), Code.InvalidArgument, "catchupWindowMs");
      await rejectsWith(c.createSchedule({ ...base, overlap: "sometimes" as "skip" }), Code.InvalidArgument, "overlap");
      await rejectsWith(c.backfillSchedule(id, new Date(Number.NaN), new Date()), Code.InvalidArgument, "from");
      await rejectsWith(c.updateSchedule(base, { expectRevision: -1 }), Code.InvalidArgument, "expectRevision");
    });
  });
}
