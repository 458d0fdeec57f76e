import { create, fromJson, toBinary, toJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";

import { EventSchema as WireEventSchema, type Event, type HandlerStatus } from "../gen/wfd/v1/handler_pb.js";
import {
  LocalWaitSchema,
  StepCallRequestSchema,
  StepCallResponseSchema,
  WorkerService,
  type Dispatch,
  type LocalWait,
  type ResolvedWait,
  type StepCallResponse,
} from "../gen/wfd/v1/worker_pb.js";
import { toAttributes, toJsonObject, type SearchAttributes } from "../json.js";
import { ms } from "./definition.js";
import { RunLost, WaitTimeout, Waiting } from "./errors.js";

/** An event as a step sees it. */
export interface WorkflowEvent {
  id: string;
  type: string;
  data: JsonObject;
}

/** A person's answer to {@link StepContext.askHuman}. */
export interface TaskAnswer {
  /** The answer; empty when the task was cancelled. */
  data: JsonObject;
  /** Who answered (or cancelled), and when. */
  completedBy: string;
  completedAt: Date;
  /** Nobody answered: the task was cancelled (CancelTask), for `reason`. */
  cancelled: boolean;
  reason: string;
}

/** What {@link StepContext.askHuman} asks. */
export interface HumanTask {
  title: string;
  description?: string;
  /** JSON Schema the answer must satisfy. */
  schema?: JsonObject;
  assignee?: string;
  /** After this long (ms) the task expires and askHuman throws WaitTimeout. */
  deadlineMs?: number;
  /** What the person is to look at (shown as a table in the console). */
  input?: JsonObject;
  /** JSON Schema `input` must match (its titles label the display). */
  inputSchema?: JsonObject;
  /**
   * If nobody answered after `afterMs`, the task is reassigned (`reassign`,
   * a person or `group:<role>`) and/or an event is published under the key
   * `notify`; it stays pending.
   */
  escalation?: { afterMs: number; reassign?: string; notify?: string };
}

/** An event published under a key, as {@link StepContext.waitForKey} returns it. */
export interface Published {
  id: string;
  key: string;
  data: JsonObject;
  at: Date;
  handlerId: string;
}

/** How a child ended. */
export interface ChildResult {
  status: HandlerStatus;
  result?: JsonObject;
  error: string;
}

/** Where a set of children stands. */
export interface Children {
  completed: string[];
  /** Children that failed or were cancelled. */
  failed: string[];
  pending: string[];
  results: Record<string, ChildResult>;
}

/**
 * What a step uses to talk to its handler: the operations of the Go
 * engine's StepContext. Every operation but send and write is a call to
 * the server, which executes it on the run's real context; sends and
 * writes are kept and travel with the run's end.
 *
 * Waits (waitFor, sleep, askHuman, waitForKey, waitForChildren) throw
 * {@link Waiting} when the run must park: let it propagate. A wait whose
 * timeout passed throws {@link WaitTimeout}. An operation the server
 * refuses (a bad payload, a limit) throws, and the run fails with it
 * whatever the step does next; so does one whose call is too large for
 * the server to take (RESOURCE_EXHAUSTED), and the run makes no more calls.
 */
export interface StepContext {
  readonly handlerId: string;
  readonly runId: string;
  readonly workflow: string;
  readonly step: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When the step's timeout ends the run, if it has one. */
  readonly deadline?: Date;
  /**
   * Aborted when the run is no longer this worker's (cancelled, timed out,
   * the connection lost, the worker stopping): pass it to what the step
   * awaits outside wfd (fetch, timers) so it stops too.
   */
  readonly signal: AbortSignal;
  /** Sends an event the step declared in its emits ("stop": the result). Throws on an undeclared type. */
  send(type: string, data?: JsonObject): void;
  /** Writes a record to the handler's stream. */
  write(type: string, data?: JsonObject): void;
  /** Waits for an event of type (matching opts.match's fields). */
  waitFor(type: string, opts?: { match?: JsonObject; timeoutMs?: number }): Promise<WorkflowEvent>;
  /** Parks the run on a durable timer. */
  sleep(ms: number): Promise<void>;
  /** Fan-in: adds ev to the step's buffer; the set (in the order of types) once complete, else null (return to wait for the rest). */
  collect(ev: WorkflowEvent, ...types: string[]): Promise<WorkflowEvent[] | null>;
  /** A key of the handler's store; undefined if not set. */
  get(key: string): Promise<JsonValue | undefined>;
  /** Sets a key of the handler's store (undefined deletes it). */
  set(key: string, value: JsonValue | undefined): Promise<void>;
  /**
   * Updates the handler's search attributes (ones its workflow declares):
   * each given attribute is replaced, a `null` deletes it, `Date`s are
   * sent as RFC 3339 strings. The update is stored with the run's change.
   * An undeclared name or a value of the wrong type rejects, and the run
   * fails with it.
   */
  setAttributes(attrs: SearchAttributes): Promise<void>;
  /** fn's result, computed once for this run's input event across re-runs and retries. */
  once<T extends JsonValue>(key: string, fn: () => T | Promise<T>): Promise<T>;
  /** Asks a person (a task); the answer, once given. */
  askHuman(task: HumanTask): Promise<TaskAnswer>;
  /** Waits for an event published under key (since a time, if given). */
  waitForKey(key: string, opts?: { since?: Date; timeoutMs?: number }): Promise<Published>;
  /** Starts a child handler; its id (the same on every re-run). */
  startChild(workflow: string, input?: JsonObject): Promise<string>;
  /** Waits until every child in ids has ended. */
  waitForChildren(ids: string[], opts?: { timeoutMs?: number }): Promise<Children>;
}

type Operation = MessageInitShape<typeof StepCallRequestSchema>["operation"];

/** The operations that are waits: each takes the run's next wait position. */
const waits = new Set<NonNullable<Operation>["case"]>(["waitFor", "sleep", "askHuman", "waitForKey", "waitForChildren"]);

/** How a remote context's calls are made (the worker's side). */
export interface CallSettings {
  client: Client<typeof WorkerService>;
  workerId: string;
  timeoutMs: number;
}

/**
 * The worker's StepContext: numbered StepCalls (one at a time, in the
 * order the step makes them), and the sends and writes kept for FinishRun.
 *
 * When the dispatch allows it (Dispatch.localWaits), waitFor and sleep
 * are answered here, in the same order, without a StepCall: from the
 * waits the dispatch says are resolved, or by parking. The server learns
 * of them (LocalWait) with the next StepCall or the FinishRun.
 */
export class RemoteContext implements StepContext {
  readonly deadline?: Date;
  readonly sent: Event[] = [];
  readonly written: Event[] = [];
  /** How many sends and writes came before the run parked (kept if the step swallows Waiting). */
  sentAtPark = -1;
  writtenAtPark = -1;
  /** The server answered waiting: the run parks whatever the step does. */
  parked = false;
  /** A refused operation: the run fails with it. */
  fault?: Error;
  /** A failed call: the run is abandoned (no FinishRun). */
  lost?: Error;
  /**
   * A call the server refused as too large (RESOURCE_EXHAUSTED): the run
   * fails with it whatever the step does next, and makes no more calls.
   */
  refused?: Error;
  /** The waits answered here since the last StepCall, in order: sent with the next call or the FinishRun. */
  pendingWaits: LocalWait[] = [];
  private seq = 0n;
  private queue: Promise<unknown> = Promise.resolve();
  /** The position of the run's next wait (0 for its first), as the server counts them. */
  private pos = 0;
  private readonly resolved: ReadonlyMap<number, ResolvedWait>;

  constructor(
    private readonly calls: CallSettings,
    private readonly d: Dispatch,
    private readonly emits: ReadonlySet<string>,
    readonly signal: AbortSignal,
  ) {
    if (d.deadline) this.deadline = timestampDate(d.deadline);
    this.resolved = new Map(d.resolved.map((r) => [r.position, r]));
  }

  get handlerId() {
    return this.d.handlerId;
  }
  get runId() {
    return this.d.runId;
  }
  get workflow() {
    return this.d.workflow;
  }
  get step() {
    return this.d.step;
  }
  get attempt() {
    return this.d.attempt;
  }

  send(type: string, data?: JsonObject): void {
    if (!this.emits.has(type)) {
      throw new Error(`step "${this.step}" sends "${type}": event type not declared in the step's emits`);
    }
    this.sent.push(create(WireEventSchema, { type, data: toJsonObject(`the data of "${type}"`, data) }));
  }

  write(type: string, data?: JsonObject): void {
    this.written.push(create(WireEventSchema, { type, data: toJsonObject(`the data of "${type}"`, data) }));
  }

  async waitFor(type: string, opts: { match?: JsonObject; timeoutMs?: number } = {}): Promise<WorkflowEvent> {
    const r = await this.call(`waiting for "${type}"`, {
      case: "waitFor",
      value: { type, match: opts.match && toJsonObject("match", opts.match), timeout: ms(opts.timeoutMs) },
    });
    return eventOf(r.event);
  }

  async sleep(d: number): Promise<void> {
    await this.call("sleeping", { case: "sleep", value: ms(Math.max(d, 1))! });
  }

  async collect(ev: WorkflowEvent, ...types: string[]): Promise<WorkflowEvent[] | null> {
    const r = await this.call("collecting", {
      case: "collect",
      value: { event: create(WireEventSchema, { id: ev.id, type: ev.type, data: ev.data }), types },
    });
    return r.events.length > 0 ? r.events.map(eventOf) : null;
  }

  async get(key: string): Promise<JsonValue | undefined> {
    const r = await this.call(`getting "${key}"`, { case: "get", value: key });
    return r.found && r.value ? toJson(ValueSchema, r.value) : undefined;
  }

  async set(key: string, value: JsonValue | undefined): Promise<void> {
    await this.call(`setting "${key}"`, {
      case: "set",
      value: { key, value: value === undefined ? undefined : valueOf(key, value) },
    });
  }

  async setAttributes(attrs: SearchAttributes): Promise<void> {
    await this.call("setting search attributes", {
      case: "setAttributes",
      value: toAttributes("the search attributes", attrs) ?? {},
    });
  }

  async once<T extends JsonValue>(key: string, fn: () => T | Promise<T>): Promise<T> {
    const got = await this.call(`once "${key}"`, { case: "onceGet", value: key });
    if (got.found) {
      return (got.value ? toJson(ValueSchema, got.value) : null) as T;
    }
    const v = await fn();
    const put = await this.call(`once "${key}"`, {
      case: "oncePut",
      value: { key, value: valueOf(key, v ?? null) },
    });
    return (put.value ? toJson(ValueSchema, put.value) : null) as T;
  }

  async askHuman(t: HumanTask): Promise<TaskAnswer> {
    const r = await this.call(`task "${t.title}"`, {
      case: "askHuman",
      value: {
        title: t.title,
        description: t.description ?? "",
        answerSchema: t.schema,
        assignee: t.assignee ?? "",
        deadline: ms(t.deadlineMs),
        input: t.input,
        inputSchema: t.inputSchema,
        escalation: t.escalation && {
          after: ms(t.escalation.afterMs),
          reassign: t.escalation.reassign ?? "",
          notify: t.escalation.notify ?? "",
        },
      },
    });
    const f = r.event?.data ?? {};
    const cancelled = f["cancelled"] === true;
    return {
      data: cancelled ? {} : ((f["answer"] ?? {}) as JsonObject),
      completedBy: String(f["completed_by"] ?? ""),
      completedAt: new Date(String(f["completed_at"] ?? "")),
      cancelled,
      reason: cancelled ? String(f["reason"] ?? "") : "",
    };
  }

  async waitForKey(key: string, opts: { since?: Date; timeoutMs?: number } = {}): Promise<Published> {
    const r = await this.call(`waiting for key "${key}"`, {
      case: "waitForKey",
      value: {
        key,
        since: opts.since ? timestampFromDate(opts.since) : undefined,
        timeout: ms(opts.timeoutMs),
      },
    });
    const f = r.event?.data ?? {};
    return {
      id: String(f["event_id"] ?? ""),
      key: String(f["key"] ?? ""),
      data: (f["data"] ?? {}) as JsonObject,
      at: new Date(String(f["published_at"] ?? "")),
      handlerId: String(f["handler_id"] ?? ""),
    };
  }

  async startChild(workflow: string, input?: JsonObject): Promise<string> {
    const r = await this.call("starting a child", {
      case: "startChild",
      value: { workflow, input: toJsonObject("the child's input", input) },
    });
    return r.childId;
  }

  async waitForChildren(ids: string[], opts: { timeoutMs?: number } = {}): Promise<Children> {
    const r = await this.call(
      "waiting for children",
      { case: "waitForChildren", value: { handlerIds: ids, timeout: ms(opts.timeoutMs) } },
      childrenOf,
    );
    return childrenOf(r);
  }

  /**
   * Makes one numbered StepCall, after the run's earlier ones, and turns
   * its answer into what the step sees: Waiting, WaitTimeout, a refused
   * operation's error.
   */
  private call(
    what: string,
    operation: Operation,
    partial?: (r: StepCallResponse) => Children,
  ): Promise<StepCallResponse> {
    const next = this.queue.then(() => this.callNow(what, operation, partial));
    this.queue = next.catch(() => {});
    return next;
  }

  private async callNow(
    what: string,
    operation: Operation,
    partial?: (r: StepCallResponse) => Children,
  ): Promise<StepCallResponse> {
    if (this.lost) throw this.lost;
    if (this.refused) throw this.refused;
    if (this.parked) throw new Waiting(`${what} after the run parked`);
    const r =
      this.d.localWaits && (operation?.case === "waitFor" || operation?.case === "sleep")
        ? this.answerLocally(operation)
        : await this.stepCall(what, operation);
    if (r.waiting) {
      this.parked = true;
      this.sentAtPark = this.sent.length;
      this.writtenAtPark = this.written.length;
      throw new Waiting(what);
    }
    if (r.timedOut) {
      throw new WaitTimeout(r.error || `${what}: wait timed out`, partial?.(r));
    }
    if (r.error) {
      const err = new Error(r.error);
      this.fault ??= err;
      throw err;
    }
    return r;
  }

  /** Makes the StepCall, with the waits answered here since the last one. */
  private async stepCall(what: string, operation: Operation): Promise<StepCallResponse> {
    this.seq++;
    if (waits.has(operation?.case)) this.pos++;
    // A retry sends this same request: the same seq and local waits.
    const req = create(StepCallRequestSchema, {
      runId: this.d.runId,
      workerId: this.calls.workerId,
      seq: this.seq,
      operation,
      localWaits: this.pendingWaits,
    });
    this.pendingWaits = [];
    try {
      return await callWithRetry(this.signal, (signal) =>
        this.calls.client.stepCall(req, { signal, timeoutMs: this.calls.timeoutMs }),
      );
    } catch (e) {
      const ce = ConnectError.from(e);
      if (ce.code === Code.ResourceExhausted) {
        // Too large for the server (or for this transport's writeMaxBytes):
        // the run fails with it instead of being abandoned, which would
        // leave it this worker's, unfinished, for ever.
        this.refused = new Error(`step "${this.step}": ${refusal(what, toBinary(StepCallRequestSchema, req).length, ce)}`, { cause: e });
        throw this.refused;
      }
      this.lost = new RunLost(`run ${this.d.runId}: ${what}: ${ce.message}`, { cause: e });
      throw this.lost;
    }
  }

  /**
   * Answers a waitFor or sleep as the server would: from the dispatch's
   * resolved wait at its position, else waiting; and records it.
   */
  private answerLocally(operation: Extract<Operation, { case: "waitFor" | "sleep" }>): StepCallResponse {
    const position = this.pos++;
    const r = this.resolved.get(position);
    this.pendingWaits.push(create(LocalWaitSchema, { position, kind: operation, resolved: r !== undefined }));
    if (!r) return create(StepCallResponseSchema, { waiting: true });
    // A sleep is resolved by its timer running out: that is no timeout.
    return create(StepCallResponseSchema, { event: r.event, timedOut: operation.case === "waitFor" && r.timedOut });
  }
}

/**
 * Runs an idempotent call (a numbered StepCall, a FinishRun), trying again
 * while it fails with Unavailable, until signal aborts: the server may be
 * restarting, and a lost session aborts signal anyway.
 */
export async function callWithRetry<T>(signal: AbortSignal, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let pause = 50;
  for (let attempt = 1; ; attempt++) {
    try {
      return await f(signal);
    } catch (e) {
      const ce = ConnectError.from(e);
      if (ce.code !== Code.Unavailable || signal.aborted || attempt >= 8) throw e;
    }
    await new Promise<void>((res) => {
      const t = setTimeout(done, pause);
      function done() {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        res();
      }
      signal.addEventListener("abort", done, { once: true });
    });
    pause = Math.min(2 * pause, 1_000);
  }
}

/** The run's error for a call the server refused as too large (RESOURCE_EXHAUSTED). */
export function refusal(what: string, size: number, e: ConnectError): string {
  return `${what} (${size} bytes encoded) was refused: ${e.rawMessage}`;
}

function eventOf(e: Event | undefined): WorkflowEvent {
  return { id: e?.id ?? "", type: e?.type ?? "", data: e?.data ?? {} };
}

function valueOf(key: string, v: JsonValue) {
  const checked = toJsonObject(`the value of "${key}"`, { v })["v"] as JsonValue;
  return fromJson(ValueSchema, checked);
}

function childrenOf(r: StepCallResponse): Children {
  const c = r.children;
  const results: Record<string, ChildResult> = {};
  for (const [id, res] of Object.entries(c?.results ?? {})) {
    results[id] = { status: res.status, result: res.result, error: res.error };
  }
  return { completed: c?.completed ?? [], failed: c?.failed ?? [], pending: c?.pending ?? [], results };
}
