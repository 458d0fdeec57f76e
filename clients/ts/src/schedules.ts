// Workflow schedules: the options and results of WfdClient's schedule
// methods, the friendly ScheduleInit and its conversion to and from the
// API's Schedule message, and the calls themselves (WfdClient delegates).
import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs, timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import { OverlapPolicy, ScheduleSchema, type Schedule } from "./gen/wfd/v1/schedule_pb.js";
import { toJsonObject } from "./json.js";
import type { CallOptions, WorkflowServiceClient } from "./options.js";
import { checkPageSize } from "./requests.js";

/** Overlap policy names accepted wherever an {@link OverlapPolicy} is. */
export type OverlapName = "skip" | "buffer_one" | "allow" | "cancel_previous";

/**
 * A schedule as {@link WfdClient.createSchedule} and
 * {@link WfdClient.updateSchedule} take it: the settable fields of the
 * API's `Schedule`, flat, with times as `Date`s and durations in
 * milliseconds. Exactly one of `cron` and `intervalMs` is required.
 */
export interface ScheduleInit {
  /** 1 to 64 characters of `[A-Za-z0-9._-]`. */
  scheduleId: string;
  /**
   * Five fields (minute, hour, day of month, month, day of week) with
   * lists, ranges, steps and names, or one of `@yearly`, `@monthly`,
   * `@weekly`, `@daily`, `@hourly`…; a malformed one is
   * `Code.InvalidArgument` naming the field ("cron field 2 (hour)").
   */
  cron?: string;
  /** The IANA time zone `cron` is read in (default UTC; not with `intervalMs`). */
  timeZone?: string;
  /** Fire every this many milliseconds: whole seconds, at least 1 s. */
  intervalMs?: number;
  /** Shift the interval's ticks by this many milliseconds (whole seconds, less than the interval). */
  phaseMs?: number;
  /** No tick before this instant. */
  startAt?: Date;
  /** No tick after this instant. */
  endAt?: Date;
  /** The workflow each tick starts (`Code.NotFound` if the server has none of that name). */
  workflow: string;
  /** The version to start; default the workflow's current one when the tick fires. */
  version?: string;
  /** The data of each run's start event (a JSON object). */
  input?: { readonly [k: string]: unknown } | null;
  /** What a tick does while earlier runs still run (default `"skip"`). */
  overlap?: OverlapName | OverlapPolicy;
  /** After downtime, ticks older than this are recorded as missed rather than started (default 1 minute). */
  catchupWindowMs?: number;
  /** A paused schedule starts nothing; its ticks while paused are not caught up. */
  paused?: boolean;
  /** Free text for people (at most 1,024 characters). */
  note?: string;
}

/** Paging of {@link WfdClient.listSchedules}. */
export interface ScheduleListOptions {
  /** At most this many per page (default 100, at most 1000). */
  pageSize?: number;
  /** Continue from an earlier page's `nextPageToken`. */
  pageToken?: string;
}

/** One page of {@link WfdClient.listSchedules}, by id. */
export interface SchedulePage {
  schedules: Schedule[];
  /** Empty after the last page. */
  nextPageToken: string;
}

/** Options of {@link WfdClient.updateSchedule}. */
export interface UpdateScheduleOptions extends CallOptions {
  /**
   * Refuse the update (`Code.FailedPrecondition`) unless the schedule is at
   * this revision (`schedule.revision` of a schedule read earlier; its
   * ticks move it too). Default: whatever it is.
   */
  expectRevision?: bigint | number;
}

/** Options of {@link WfdClient.triggerSchedule}. */
export interface TriggerScheduleOptions extends CallOptions {
  /**
   * The run's instant, which names its handler
   * (`sched:<id>:trigger:<Unix nanoseconds>`): a trigger repeated with the
   * same `at` starts one run. Default: the client's now, sent with the
   * call, so the client's own retries start one run.
   */
  at?: Date;
}

/** What {@link WfdClient.triggerSchedule} and {@link WfdClient.backfillSchedule} did. */
export interface TriggerResult {
  /** The schedule as recorded after the call. */
  schedule: Schedule;
  /** The handlers this call started (or found started by an earlier attempt). */
  started: string[];
}

const overlapByName: { [K in OverlapName]: OverlapPolicy } = {
  skip: OverlapPolicy.SKIP,
  buffer_one: OverlapPolicy.BUFFER_ONE,
  allow: OverlapPolicy.ALLOW,
  cancel_previous: OverlapPolicy.CANCEL_PREVIOUS,
};

function invalid(msg: string): ConnectError {
  return new ConnectError(`client: ${msg}`, Code.InvalidArgument);
}

/** A duration in milliseconds as the API wants it: a non-negative whole number, or none. */
function msDuration(what: string, ms: number | undefined) {
  if (ms === undefined) {
    return undefined;
  }
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw invalid(`${what} ${ms} must be a non-negative whole number of milliseconds`);
  }
  return durationFromMs(ms);
}

/** A Date as a Timestamp, refusing an invalid one; undefined stays so. */
function timestampOf(what: string, d: Date | undefined): Timestamp | undefined {
  if (d === undefined) {
    return undefined;
  }
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) {
    throw invalid(`${what} must be a valid Date`);
  }
  return timestampFromDate(d);
}

export function toOverlap(o: OverlapName | OverlapPolicy | undefined): OverlapPolicy {
  if (o === undefined) {
    return OverlapPolicy.UNSPECIFIED;
  }
  if (typeof o === "number") {
    return o;
  }
  const v = Object.hasOwn(overlapByName, o) ? overlapByName[o] : undefined;
  if (v === undefined) {
    throw invalid(`unknown overlap policy ${JSON.stringify(o)} (want ${Object.keys(overlapByName).join(", ")})`);
  }
  return v;
}

/**
 * The API's Schedule message of a {@link ScheduleInit}. Only what the
 * client must is checked here (durations are whole non-negative
 * milliseconds, dates valid, the overlap policy known, the input JSON);
 * the server checks the rest and names the field it refuses.
 */
export function scheduleMessage(s: ScheduleInit): Schedule {
  return create(ScheduleSchema, {
    scheduleId: s.scheduleId,
    spec: {
      cron: s.cron ?? "",
      timeZone: s.timeZone ?? "",
      interval: msDuration("intervalMs", s.intervalMs),
      phase: msDuration("phaseMs", s.phaseMs),
      startAt: timestampOf("startAt", s.startAt),
      endAt: timestampOf("endAt", s.endAt),
    },
    action: { workflow: s.workflow, version: s.version ?? "", input: toJsonObject("input", s.input) },
    policy: { overlap: toOverlap(s.overlap), catchupWindow: msDuration("catchupWindowMs", s.catchupWindowMs) },
    paused: s.paused ?? false,
    note: s.note ?? "",
  });
}

/**
 * The settable fields of a schedule read from the server, as a
 * {@link ScheduleInit}: change some and pass it to
 * {@link WfdClient.updateSchedule} (with `expectRevision: s.revision`)
 * to change only those.
 */
export function toScheduleInit(s: Schedule): ScheduleInit {
  const spec = s.spec;
  const ms = (d: Parameters<typeof durationMs>[0] | undefined) => (d === undefined ? undefined : durationMs(d));
  const date = (t: Timestamp | undefined) => (t === undefined ? undefined : timestampDate(t));
  const out: ScheduleInit = {
    scheduleId: s.scheduleId,
    cron: spec?.cron || undefined,
    timeZone: spec?.timeZone || undefined,
    intervalMs: ms(spec?.interval),
    phaseMs: ms(spec?.phase),
    startAt: date(spec?.startAt),
    endAt: date(spec?.endAt),
    workflow: s.action?.workflow ?? "",
    version: s.action?.version || undefined,
    input: s.action?.input,
    overlap: s.policy?.overlap,
    catchupWindowMs: ms(s.policy?.catchupWindow),
    paused: s.paused,
    note: s.note,
  };
  // Leave the unset fields out, so that a spread of the result does not
  // override with undefined what is given after it.
  for (const k of Object.keys(out) as (keyof ScheduleInit)[]) {
    if (out[k] === undefined) {
      delete out[k];
    }
  }
  return out;
}

function revisionOf(r: bigint | number | undefined): bigint {
  if (r === undefined) {
    return 0n;
  }
  if (typeof r === "number" && (!Number.isSafeInteger(r) || r < 0)) {
    throw invalid(`expectRevision ${r} is not a revision`);
  }
  const v = BigInt(r);
  if (v < 0n || v >= 2n ** 64n) {
    throw invalid(`expectRevision ${r} is not a revision`);
  }
  return v;
}

function mustSchedule(s: Schedule | undefined): Schedule {
  if (s === undefined) {
    throw new ConnectError("client: the server's answer holds no schedule", Code.Internal);
  }
  return s;
}

/** How often pause and resume read a schedule again that changed under them (its ticks change it too). */
const MAX_PAUSE_LAPS = 5;

/** WfdClient's unary call: the client's timeout and retries around fn. */
export type Unary = <T>(
  fn: (o: { signal?: AbortSignal; timeoutMs?: number; headers?: HeadersInit }) => Promise<T>,
  call?: CallOptions,
) => Promise<T>;

/** The schedule calls WfdClient's methods delegate to (documented there). */
export class ScheduleCalls {
  constructor(
    private readonly service: WorkflowServiceClient,
    private readonly unary: Unary,
  ) {}

  async create(s: ScheduleInit, call?: CallOptions): Promise<Schedule> {
    const req = { schedule: scheduleMessage(s) };
    return mustSchedule((await this.unary((o) => this.service.createSchedule(req, o), call)).schedule);
  }

  async get(id: string, call?: CallOptions): Promise<Schedule> {
    return mustSchedule((await this.unary((o) => this.service.getSchedule({ scheduleId: id }, o), call)).schedule);
  }

  async list(opts: ScheduleListOptions = {}, call?: CallOptions): Promise<SchedulePage> {
    const req = { pageSize: checkPageSize(opts.pageSize ?? 0), pageToken: opts.pageToken ?? "" };
    const res = await this.unary((o) => this.service.listSchedules(req, o), call);
    return { schedules: res.schedules, nextPageToken: res.nextPageToken };
  }

  async *all(opts: ScheduleListOptions = {}, call?: CallOptions): AsyncGenerator<Schedule, void, undefined> {
    let pageToken = opts.pageToken ?? "";
    for (;;) {
      const page = await this.list({ ...opts, pageToken }, call);
      yield* page.schedules;
      if (page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  async update(s: ScheduleInit, opts: UpdateScheduleOptions = {}): Promise<Schedule> {
    return this.replace(scheduleMessage(s), revisionOf(opts.expectRevision), opts);
  }

  /** UpdateSchedule with a message as it is (one read from the server: its output fields are ignored). */
  private async replace(schedule: Schedule, expectRevision: bigint, call?: CallOptions): Promise<Schedule> {
    const req = { schedule, expectRevision };
    return mustSchedule((await this.unary((o) => this.service.updateSchedule(req, o), call)).schedule);
  }

  /**
   * Reads the schedule and writes it back paused or not (with note, if
   * given), at the revision read; a schedule changed meanwhile (a tick, say)
   * is read again, a few times.
   */
  async setPaused(id: string, paused: boolean, note: string | undefined, call?: CallOptions): Promise<Schedule> {
    for (let lap = 1; ; lap++) {
      const s = await this.get(id, call);
      s.paused = paused;
      if (note !== undefined) {
        s.note = note;
      }
      try {
        return await this.replace(s, s.revision, call);
      } catch (e) {
        if (!(e instanceof ConnectError) || e.code !== Code.FailedPrecondition || lap >= MAX_PAUSE_LAPS) {
          throw e;
        }
      }
    }
  }

  async delete(id: string, call?: CallOptions): Promise<void> {
    await this.unary((o) => this.service.deleteSchedule({ scheduleId: id }, o), call);
  }

  async trigger(id: string, opts: TriggerScheduleOptions = {}): Promise<TriggerResult> {
    const req = { scheduleId: id, at: timestampOf("at", opts.at ?? new Date()) };
    const res = await this.unary((o) => this.service.triggerSchedule(req, o), opts);
    return { schedule: mustSchedule(res.schedule), started: res.started };
  }

  async backfill(id: string, from: Date, to: Date, call?: CallOptions): Promise<TriggerResult> {
    const req = { scheduleId: id, backfillFrom: timestampOf("from", from), backfillTo: timestampOf("to", to) };
    if (req.backfillFrom === undefined || req.backfillTo === undefined) {
      throw invalid("a backfill needs from and to");
    }
    const res = await this.unary((o) => this.service.triggerSchedule(req, o), call);
    return { schedule: mustSchedule(res.schedule), started: res.started };
  }
}
