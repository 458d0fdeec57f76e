import { durationFromMs, type Duration } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { v7 as uuidv7 } from "uuid";

import { HandlerStatus, TaskStatus, type Handler, type HandlerAt, type Record, type Task } from "./gen/wfd/v1/handler_pb.js";
import {
  WorkflowService,
  type GetIdentityResponse,
  type Namespace,
  type HandlerUpgrade,
  type GetStatsResponse,
  type PublishedEvent,
  type Replica,
  type Workflow,
} from "./gen/wfd/v1/service_pb.js";
import { sameJson, toAttributes, toJsonObject } from "./json.js";
import {
  backoffMs,
  canceled,
  DEFAULT_TIMEOUT_MS,
  retryPolicyWithDefaults,
  sleep,
  type FullRetryPolicy,
} from "./retry.js";
import { checkPageSize, listRequest, listTasksRequest, publishedListRequest } from "./requests.js";
import {
  ScheduleCalls,
  type ScheduleInit,
  type ScheduleListOptions,
  type SchedulePage,
  type TriggerResult,
  type TriggerScheduleOptions,
  type UpdateScheduleOptions,
} from "./schedules.js";
import type { Schedule } from "./gen/wfd/v1/schedule_pb.js";
import type {
  WorkflowServiceClient,
  WfdClientOptions,
  CallOptions,
  RunOptions,
  WaitOptions,
  SendOptions,
  SendOrStartOptions,
  SendOrStartResult,
  StreamOptions,
  ListOptions,
  HandlerPage,
  TaskListOptions,
  TaskPage,
  CancelTaskOptions,
  TaskActionOptions,
  CompleteTaskOptions,
  PublishOptions,
  PublishedListOptions,
  PublishedEventPage,
  PublishResult,
  WorkflowsOptions,
  UpgradeOptions,
  UpgradePage,
} from "./options.js";

export * from "./options.js";
export {
  toScheduleInit,
  type OverlapName,
  type ScheduleInit,
  type ScheduleListOptions,
  type SchedulePage,
  type TriggerResult,
  type TriggerScheduleOptions,
  type UpdateScheduleOptions,
} from "./schedules.js";

/**
 * A client of one wfd server over any Connect transport (gRPC, Connect or
 * gRPC-Web; Node or browser). Make one and share it.
 *
 * Unary calls get a default timeout and are retried with exponential
 * backoff when they fail with `Code.Unavailable`; no other code is retried.
 * That is safe for every call: {@link run} sends a handler id (a new UUIDv7
 * unless given) so a repeated RunWorkflow returns the handler the first one
 * started, {@link send} sends an idempotency key so a retried event is
 * delivered once, {@link publish} sends an event id (a new UUIDv7 unless
 * given) so a retried publication is logged once, {@link completeTask}
 * returns the task when a retry finds it completed with the same answer,
 * {@link triggerSchedule} sends its instant, which names the run, and a
 * backfill's runs are named by their ticks, so retries start no second
 * run, the reads are reads, and a repeated cancel or release leaves the
 * handler as the first left it (the repeat may report
 * `Code.FailedPrecondition`).
 *
 * Errors are `ConnectError`s: `err.code` is the server's code
 * (`Code.NotFound` for an unknown handler or workflow,
 * `Code.InvalidArgument` for a bad request, an event type the handler does
 * not accept or a task answer that fails the task's schema,
 * `Code.FailedPrecondition` for an event to a finished handler, a release
 * of a busy one or an answer to a task that is no longer pending,
 * `Code.AlreadyExists` for a handler id used by another workflow or a
 * schedule id in use) and `err.rawMessage` the server's message.
 * Input the client rejects before calling (data that is not JSON) is
 * `Code.InvalidArgument` too.
 */
export class WfdClient {
  /**
   * The generated client behind this one, for calls it does not wrap. It
   * has neither the default timeout nor the retries.
   */
  readonly service: WorkflowServiceClient;
  /** The retry policy in force, with defaults filled in. */
  readonly retry: FullRetryPolicy;
  private readonly timeoutMs: number;
  private readonly onClose?: () => void;
  private readonly schedules: ScheduleCalls;

  constructor(transport: Transport, options: WfdClientOptions = {}) {
    this.service = createClient(WorkflowService, transport);
    this.retry = retryPolicyWithDefaults(options.retry);
    this.timeoutMs = Math.max(0, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.onClose = options.onClose;
    this.schedules = new ScheduleCalls(this.service, (fn, call) => this.unary(fn, call));
  }

  /**
   * Releases what the transport holds (the Node helpers' HTTP/2
   * connection); calls in progress fail. A client over a transport of your
   * own has nothing to close unless you gave `onClose`.
   */
  close(): void {
    this.onClose?.();
  }

  /**
   * The workflows the server runs, each with its current version
   * (`version`); with `versions`, every version of each too.
   */
  async workflows(opts: WorkflowsOptions = {}): Promise<Workflow[]> {
    const res = await this.unary((o) => this.service.listWorkflows({ versions: opts.versions ?? false }, o), opts);
    return res.workflows;
  }

  /**
   * One workflow with every version the server has (`versions`, oldest
   * first): which is current, who serves it, its definition, and how many
   * handlers of it are running, released and finished. `Code.NotFound` if
   * the server has no workflow of that name.
   */
  async workflow(name: string, call?: CallOptions): Promise<Workflow> {
    if (name === "") {
      throw new ConnectError("client: workflow needs a name", Code.InvalidArgument);
    }
    const res = await this.unary((o) => this.service.listWorkflows({ name }, o), call);
    const w = res.workflows[0];
    if (res.workflows.length !== 1 || w === undefined) {
      throw new ConnectError(`client: the server listed ${res.workflows.length} workflows named "${name}"`, Code.Internal);
    }
    return w;
  }

  /**
   * Moves running handlers of version `from` of `workflow` to another
   * version (`opts.to`, default the current one), each where the server can
   * show from its state that the target carries it on, and returns one
   * page of what happened to each: `UpgradeOutcome.MOVED`, `REFUSED` with
   * the reason, or `BUSY` (a step of it runs: retry once it is idle). With
   * `dryRun` it moves none and reports `CAN_MOVE` instead of `MOVED`. Each
   * move is recorded in the handler's stream (`handlerUpgraded`). Pass the
   * page's `nextPageToken` as `pageToken` for the next one, or use
   * {@link upgradeAllHandlers}. An unknown workflow or version is
   * `Code.NotFound`. A call retried after a lost answer reports a handler
   * the lost attempt moved as `REFUSED` ("it runs version …, not …"): it
   * has moved.
   */
  async upgradeHandlers(workflow: string, from: string, opts: UpgradeOptions = {}): Promise<UpgradePage> {
    const req = {
      workflow,
      fromVersion: from,
      toVersion: opts.to ?? "",
      handlerIds: opts.handlerIds ?? [],
      dryRun: opts.dryRun ?? false,
      pageSize: checkPageSize(opts.pageSize ?? 0),
      pageToken: opts.pageToken ?? "",
    };
    const res = await this.unary((o) => this.service.upgradeHandlers(req, o), opts);
    return { handlers: res.handlers, toVersion: res.toVersion, nextPageToken: res.nextPageToken };
  }

  /**
   * {@link upgradeHandlers} page after page from `opts.pageToken` on:
   * yields what happened (or would happen) to every handler. A page
   * continues after the last handler of the previous one, so handlers a
   * real upgrade moved out of the version skip none. A failed page ends
   * the iteration with its error.
   */
  async *upgradeAllHandlers(workflow: string, from: string, opts: UpgradeOptions = {}): AsyncGenerator<HandlerUpgrade, void, undefined> {
    let pageToken = opts.pageToken ?? "";
    for (;;) {
      const page = await this.upgradeHandlers(workflow, from, { ...opts, pageToken });
      yield* page.handlers;
      if (page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  /**
   * Makes `version` the one {@link run} starts for `workflow` (a promotion
   * of a standby version, or a rollback) and returns the workflow.
   */
  async setCurrentVersion(workflow: string, version: string, call?: CallOptions): Promise<Workflow> {
    const res = await this.unary((o) => this.service.setCurrentVersion({ workflow, version }, o), call);
    if (res.workflow === undefined) {
      throw new ConnectError("client: the server's answer holds no workflow", Code.Internal);
    }
    return res.workflow;
  }

  /**
   * Deletes a version of a worker-defined workflow that is not current and
   * that no unfinished handler runs (`Code.FailedPrecondition`, with their
   * count, otherwise). A retry after a lost answer may get
   * `Code.NotFound`: the first attempt deleted it.
   */
  async deleteWorkflowVersion(workflow: string, version: string, call?: CallOptions): Promise<void> {
    await this.unary((o) => this.service.deleteWorkflowVersion({ workflow, version }, o), call);
  }

  /**
   * Starts a handler of `workflow` with `input` as its start event's data
   * and returns it as the server first recorded it (with `waitMs`, as it is
   * once it finished or the wait ended). Without a `handlerId`
   * the client makes up a UUIDv7, so a retry after a lost answer returns
   * the handler rather than starting another. `opts.attributes` gives it
   * its search attributes (`h.attributes` shows them).
   */
  async run(workflow: string, input?: { readonly [k: string]: unknown } | null, opts: RunOptions = {}): Promise<Handler> {
    const req = {
      workflow,
      input: toJsonObject("input", input),
      handlerId: opts.handlerId || uuidv7(),
      version: opts.version ?? "",
      wait: waitDuration("waitMs", opts.waitMs),
      events: (opts.events ?? []).map((e, i) => ({ type: e.type, data: toJsonObject(`events[${i}].data`, e.data) })),
      attributes: toAttributes("attributes", opts.attributes),
    };
    const res = await this.unary((o) => this.service.runWorkflow(req, o), this.waiting(opts, opts.waitMs));
    return mustHandler(res.handler);
  }

  /** The handler with that id (`Code.NotFound` if there is none). */
  async get(id: string, call?: CallOptions): Promise<Handler> {
    const res = await this.unary((o) => this.service.getHandler({ handlerId: id }, o), call);
    return mustHandler(res.handler);
  }

  /**
   * The handler as its stream shows it at record `seq` (folded from its
   * records, not re-executed): status, what it waited for then, its
   * steps' runs, the events written so far. Two of them say what changed
   * in between. `Code.OutOfRange` past the stream's end.
   */
  async getAt(id: string, seq: bigint | number, call?: CallOptions): Promise<HandlerAt> {
    const res = await this.unary((o) => this.service.getHandler({ handlerId: id, atSeq: BigInt(seq) }, o), call);
    if (!res.at) {
      throw new ConnectError("the server answered without the handler at that record", Code.Internal);
    }
    return res.at;
  }

  /**
   * One page of handlers, newest first (or in the order of `opts.where`'s
   * `order by`), and the token of the next page. Each handler's search
   * attributes are `h.attributes`, a plain object (times as RFC 3339
   * strings, keyword lists as arrays).
   */
  async list(opts: ListOptions = {}, call?: CallOptions): Promise<HandlerPage> {
    const req = listRequest(opts);
    const res = await this.unary((o) => this.service.listHandlers(req, o), call);
    return { handlers: res.handlers, nextPageToken: res.nextPageToken };
  }

  /**
   * Every handler that `opts` select, page after page from
   * `opts.pageToken` on. A failed page ends the iteration with its error.
   */
  async *listAll(opts: ListOptions = {}, call?: CallOptions): AsyncGenerator<Handler, void, undefined> {
    let pageToken = opts.pageToken ?? "";
    for (;;) {
      const page = await this.list({ ...opts, pageToken }, call);
      yield* page.handlers;
      if (page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  /**
   * Delivers an event of `type` with `data` to the handler and returns the
   * handler once the event is durable. The type must be one the workflow
   * accepts from outside or one a waiter of the handler waits for
   * (`Code.InvalidArgument` otherwise); a finished handler is
   * `Code.FailedPrecondition`. A released handler is loaded again. Every
   * call carries an idempotency key, so retries deliver the event once.
   */
  async send(
    id: string,
    type: string,
    data?: { readonly [k: string]: unknown } | null,
    opts: SendOptions = {},
  ): Promise<Handler> {
    const req = {
      handlerId: id,
      event: { type, data: toJsonObject("data", data) },
      idempotencyKey: opts.idempotencyKey || uuidv7(),
      wait: waitDuration("waitMs", opts.waitMs),
    };
    const res = await this.unary((o) => this.service.sendEvent(req, o), this.waiting(opts, opts.waitMs));
    return mustHandler(res.handler);
  }

  /**
   * Delivers an event as {@link WfdClient.send} does to handler `id`, and
   * if there is no handler with that id yet, starts one of `workflow` with
   * `input` and the event in the commit that creates it (Temporal's
   * signal-with-start): there is no moment at which the handler exists
   * without its event. `started` says whether this call created it. A
   * handler that exists but runs another workflow is `Code.AlreadyExists`;
   * one that has finished refuses the event (`Code.FailedPrecondition`).
   * Calls racing for one id create one handler and each delivers its event
   * once; the idempotency key every call carries makes a retry deliver
   * nothing again, whether or not its first attempt started the handler.
   */
  async sendOrStart(
    id: string,
    workflow: string,
    input: { readonly [k: string]: unknown } | null | undefined,
    type: string,
    data?: { readonly [k: string]: unknown } | null,
    opts: SendOrStartOptions = {},
  ): Promise<SendOrStartResult> {
    const req = {
      handlerId: id,
      event: { type, data: toJsonObject("data", data) },
      idempotencyKey: opts.idempotencyKey || uuidv7(),
      wait: waitDuration("waitMs", opts.waitMs),
      start: {
        workflow,
        input: toJsonObject("input", input),
        version: opts.version ?? "",
        attributes: toAttributes("attributes", opts.attributes),
      },
    };
    const res = await this.unary((o) => this.service.sendEvent(req, o), this.waiting(opts, opts.waitMs));
    return { handler: mustHandler(res.handler), started: res.started };
  }

  /**
   * Waits until the handler finishes, or until `waitMs` (default 60 s, at
   * most an hour) has passed, and returns it then: its status says which
   * (still running when the time ran out or the server began to shut
   * down). Waiting does not load a released handler: it answers when
   * whatever wakes the handler brings it to its end. `Code.NotFound` for
   * an unknown handler.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<Handler> {
    const req = { handlerId: id, timeout: waitDuration("waitMs", opts.waitMs) };
    const res = await this.unary((o) => this.service.waitHandler(req, o), this.waiting(opts, opts.waitMs ?? DEFAULT_WAIT_MS));
    return mustHandler(res.handler);
  }

  /**
   * Waits as {@link wait} does, and also answers once the handler is idle
   * (waiting only for outside input: an event, a person's answer, a
   * timer) at or after the record `afterSeq`: ask a question, then wait
   * for the next one. Pass the `lastSeq` of the handler a send or run
   * returned, so an idleness from before that event does not count; 0
   * answers at once if the handler is idle now. Its `idle` says what it
   * waits for; its status whether it finished instead.
   */
  async waitIdle(id: string, afterSeq: bigint | number = 0, opts: WaitOptions = {}): Promise<Handler> {
    const req = { handlerId: id, timeout: waitDuration("waitMs", opts.waitMs), untilIdle: true, afterSeq: BigInt(afterSeq) };
    const res = await this.unary((o) => this.service.waitHandler(req, o), this.waiting(opts, opts.waitMs ?? DEFAULT_WAIT_MS));
    return mustHandler(res.handler);
  }

  /**
   * Who the caller is to the server: with authentication on, its subject
   * and roles; without it (`authentication` false) every caller may do
   * everything. Credentials the server refuses are `Code.Unauthenticated`.
   */
  async identity(call?: CallOptions): Promise<GetIdentityResponse> {
    return this.unary((o) => this.service.getIdentity({}, o), call);
  }

  /**
   * The namespaces the server serves where the caller holds a role (all of
   * them when it does not authenticate), with their retention and the
   * caller's roles there. The client's calls are in the namespace of its
   * transport's `namespace` option ("default" without one).
   */
  async namespaces(call?: CallOptions): Promise<Namespace[]> {
    return (await this.unary((o) => this.service.listNamespaces({}, o), call)).namespaces;
  }

  /**
   * The live replicas sharing the server's database (`wfd serve
   * --replica-id`), by id; none for a single-process server. A call for a
   * handler another replica owns is `Code.Unavailable`, its message naming
   * that replica and its address (calls are not forwarded yet).
   */
  async replicas(call?: CallOptions): Promise<Replica[]> {
    const res = await this.unary((o) => this.service.listReplicas({}, o), call);
    return res.replicas;
  }

  /** Call options whose timeout leaves room for a wait of waitMs on the server. */
  private waiting(call: CallOptions, waitMs: number | undefined): CallOptions {
    const timeoutMs = Math.max(0, call.timeoutMs ?? this.timeoutMs);
    if (!waitMs || timeoutMs === 0) {
      return call;
    }
    return { ...call, timeoutMs: timeoutMs + waitMs };
  }

  /** Ends a running handler as cancelled and returns it. */
  async cancel(id: string, call?: CallOptions): Promise<Handler> {
    const res = await this.unary((o) => this.service.cancelHandler({ handlerId: id }, o), call);
    return mustHandler(res.handler);
  }

  /**
   * Writes an idle handler to the server's store and drops it from memory;
   * the next event wakes it. A busy or finished handler is
   * `Code.FailedPrecondition`.
   */
  async release(id: string, call?: CallOptions): Promise<Handler> {
    const res = await this.unary((o) => this.service.releaseHandler({ handlerId: id }, o), call);
    return mustHandler(res.handler);
  }

  /**
   * Removes a finished handler (completed, failed or cancelled) with its
   * stream, checkpoint and tasks; events published for it stay in the log.
   * A running handler is `Code.FailedPrecondition` (cancel it first), as is
   * a finished child whose parent still runs; an unknown one
   * `Code.NotFound`, which a retried call also gets once the first attempt
   * deleted it. The id may be used again afterwards.
   */
  async delete(id: string, call?: CallOptions): Promise<void> {
    await this.unary((o) => this.service.deleteHandler({ handlerId: id }, o), call);
  }

  /** One page of human tasks, newest first, and the token of the next page. */
  async tasks(opts: TaskListOptions = {}, call?: CallOptions): Promise<TaskPage> {
    const req = listTasksRequest(opts);
    const res = await this.unary((o) => this.service.listTasks(req, o), call);
    return { tasks: res.tasks, nextPageToken: res.nextPageToken };
  }

  /**
   * Every task that `opts` select, page after page from `opts.pageToken`
   * on. A failed page ends the iteration with its error.
   */
  async *listAllTasks(opts: TaskListOptions = {}, call?: CallOptions): AsyncGenerator<Task, void, undefined> {
    let pageToken = opts.pageToken ?? "";
    for (;;) {
      const page = await this.tasks({ ...opts, pageToken }, call);
      yield* page.tasks;
      if (page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  /** The human task with that id (`Code.NotFound` if there is none). */
  async task(id: string, call?: CallOptions): Promise<Task> {
    const res = await this.unary((o) => this.service.getTask({ taskId: id }, o), call);
    return mustTask(res.task);
  }

  /**
   * Cancels a pending task for `reason`: the step that waited for it gets
   * its answer with `cancelled` and `reason` set, and the task ends
   * CANCELLED with its `cancelReason`. A task no longer pending is
   * `Code.FailedPrecondition`; a retry of a cancellation that got through
   * (same reason, same person) returns the task.
   */
  async cancelTask(id: string, reason: string, opts: CancelTaskOptions = {}): Promise<Task> {
    const req = { taskId: id, reason, cancelledBy: opts.cancelledBy ?? "" };
    try {
      const res = await this.unary((o) => this.service.cancelTask(req, o), opts);
      return mustTask(res.task);
    } catch (e) {
      return this.doneAsAsked(e, id, opts, (t) => t.status === TaskStatus.CANCELLED && t.cancelReason === reason && t.completedBy === req.cancelledBy);
    }
  }

  /**
   * Takes a pending task to work on it: only its holder may answer it (or
   * someone who may answer others' tasks). Claiming a task one holds
   * changes nothing; one someone else holds is `Code.FailedPrecondition`,
   * naming them.
   */
  async claimTask(id: string, opts: TaskActionOptions = {}): Promise<Task> {
    const res = await this.unary((o) => this.service.claimTask({ taskId: id, by: opts.by ?? "" }, o), opts);
    return mustTask(res.task);
  }

  /** Lets go of a claimed task; an unclaimed one changes nothing. */
  async unclaimTask(id: string, opts: TaskActionOptions = {}): Promise<Task> {
    const res = await this.unary((o) => this.service.unclaimTask({ taskId: id, by: opts.by ?? "" }, o), opts);
    return mustTask(res.task);
  }

  /** Gives a pending task to `assignee` (a person, or `group:<role>`) and ends its claim. */
  async reassignTask(id: string, assignee: string, opts: TaskActionOptions = {}): Promise<Task> {
    const res = await this.unary((o) => this.service.reassignTask({ taskId: id, assignee, by: opts.by ?? "" }, o), opts);
    return mustTask(res.task);
  }

  /**
   * Adds a comment (1 to 4096 bytes; at most 100 per task) to a pending
   * task. It gets an id (a UUIDv7), so a retry adds it once.
   */
  async commentTask(id: string, text: string, opts: TaskActionOptions = {}): Promise<Task> {
    const req = { taskId: id, text, by: opts.by ?? "", commentId: uuidv7() };
    const res = await this.unary((o) => this.service.commentTask(req, o), opts);
    return mustTask(res.task);
  }

  /**
   * The task a call that failed with `e` was to end, if `e` is
   * `Code.FailedPrecondition` and the task ended as `asked` says (an
   * earlier attempt, whose answer was lost, got through); else throws `e`.
   */
  private async doneAsAsked(e: unknown, id: string, opts: CallOptions, asked: (t: Task) => boolean): Promise<Task> {
    if (!(e instanceof ConnectError) || e.code !== Code.FailedPrecondition) {
      throw e;
    }
    let t: Task;
    try {
      t = await this.task(id, opts);
    } catch {
      throw e;
    }
    if (asked(t)) {
      return t;
    }
    throw e;
  }

  /**
   * Answers a pending task with `answer` (a plain JSON object that must
   * satisfy the task's `answerSchema`) and returns the completed task; the
   * answer wakes the task's handler, released or not. An answer that fails
   * the schema is `Code.InvalidArgument` naming the failing fields and
   * changes nothing; a task that is no longer pending (completed, expired,
   * cancelled) is `Code.FailedPrecondition`.
   *
   * When a call is retried after a lost connection and the retry finds the
   * task completed with this very answer and `completedBy` (the first
   * attempt got through), the completed task is returned rather than the
   * retry's `Code.FailedPrecondition`.
   */
  async completeTask(
    id: string,
    answer: { readonly [k: string]: unknown },
    opts: CompleteTaskOptions = {},
  ): Promise<Task> {
    const req = { taskId: id, answer: toJsonObject("answer", answer), completedBy: opts.completedBy ?? "" };
    let attempts = 0;
    try {
      const res = await this.unary((o) => {
        attempts++;
        return this.service.completeTask(req, o);
      }, opts);
      return mustTask(res.task);
    } catch (e) {
      if (attempts < 2) {
        throw e;
      }
      // Did an earlier attempt, whose answer was lost, complete the task?
      return this.doneAsAsked(
        e,
        id,
        opts,
        (t) => t.status === TaskStatus.COMPLETED && t.completedBy === req.completedBy && sameJson(t.answer ?? {}, req.answer),
      );
    }
  }

  /**
   * Appends an event with `data` under `key` to the server's immutable event
   * log, for every handler (or only `opts.handlerId`), and wakes the
   * handlers waiting for that key, in memory or released. Every call
   * carries an event id (a UUIDv7 unless `opts.eventId` is given), so a
   * retried publication is logged once.
   */
  async publish(key: string, data?: { readonly [k: string]: unknown } | null, opts: PublishOptions = {}): Promise<PublishResult> {
    const req = {
      key,
      data: toJsonObject("data", data),
      handlerId: opts.handlerId ?? "",
      eventId: opts.eventId || uuidv7(),
    };
    const res = await this.unary((o) => this.service.publishEvent(req, o), opts);
    return { eventId: res.eventId, seq: res.seq, woken: res.woken };
  }

  /**
   * One page of the published-event log, latest first (by key, since a
   * time, for one handler), and the token of the next page.
   */
  async publishedEvents(opts: PublishedListOptions = {}, call?: CallOptions): Promise<PublishedEventPage> {
    const req = publishedListRequest(opts);
    const res = await this.unary((o) => this.service.listPublishedEvents(req, o), call);
    return { events: res.events, nextPageToken: res.nextPageToken };
  }

  /**
   * Every event that `opts` select, latest first, page after page from
   * `opts.pageToken` on. A failed page ends the iteration with its error.
   */
  async *listAllPublishedEvents(opts: PublishedListOptions = {}, call?: CallOptions): AsyncGenerator<PublishedEvent, void, undefined> {
    let pageToken = opts.pageToken ?? "";
    for (;;) {
      const page = await this.publishedEvents({ ...opts, pageToken }, call);
      yield* page.events;
      if (page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  /**
   * Stores a schedule that starts `schedule.workflow` on its cron
   * expression or interval, and returns it with its next ticks
   * (`info.nextTicks`). Each tick starts one handler,
   * `sched:<id>:<tick, UTC, YYYYMMDDThhmmssZ>`. A malformed spec is
   * `Code.InvalidArgument` naming the field ("cron field 2 (hour)"), an
   * unknown workflow `Code.NotFound`, an id in use `Code.AlreadyExists`
   * (which a retry after a lost answer also gets: the first attempt
   * created it).
   */
  createSchedule(schedule: ScheduleInit, call?: CallOptions): Promise<Schedule> {
    return this.schedules.create(schedule, call);
  }

  /**
   * The schedule with that id (`Code.NotFound` if there is none), with
   * what it did and will do (`info`: next ticks, recent outcomes, counts,
   * the handlers it started that may still run).
   */
  getSchedule(id: string, call?: CallOptions): Promise<Schedule> {
    return this.schedules.get(id, call);
  }

  /** One page of schedules, by id, and the token of the next page. */
  listSchedules(opts: ScheduleListOptions = {}, call?: CallOptions): Promise<SchedulePage> {
    return this.schedules.list(opts, call);
  }

  /**
   * Every schedule, by id, page after page from `opts.pageToken` on. A
   * failed page ends the iteration with its error.
   */
  listAllSchedules(opts: ScheduleListOptions = {}, call?: CallOptions): AsyncGenerator<Schedule, void, undefined> {
    return this.schedules.all(opts, call);
  }

  /**
   * Replaces a schedule's spec, action, policy, paused flag and note with
   * `schedule`'s (a changed spec counts its ticks from now on). Start from
   * {@link toScheduleInit} of a schedule read earlier to change a few
   * fields, with `expectRevision` set to its `revision` to refuse the
   * update (`Code.FailedPrecondition`) if it changed meanwhile.
   */
  updateSchedule(schedule: ScheduleInit, opts: UpdateScheduleOptions = {}): Promise<Schedule> {
    return this.schedules.update(schedule, opts);
  }

  /**
   * Pauses a schedule (with `note`, if given, as its note) and returns it:
   * it starts nothing until resumed. It reads the schedule and writes it
   * back at the revision read, and reads it again if a tick changed it
   * meanwhile.
   */
  pauseSchedule(id: string, note?: string, call?: CallOptions): Promise<Schedule> {
    return this.schedules.setPaused(id, true, note, call);
  }

  /**
   * Resumes a paused schedule, as {@link pauseSchedule} pauses it; the
   * ticks of the pause are not caught up.
   */
  resumeSchedule(id: string, call?: CallOptions): Promise<Schedule> {
    return this.schedules.setPaused(id, false, undefined, call);
  }

  /**
   * Deletes a schedule; the handlers it started go on. An unknown one is
   * `Code.NotFound`, which a retry also gets once the first attempt
   * deleted it.
   */
  async deleteSchedule(id: string, call?: CallOptions): Promise<void> {
    await this.schedules.delete(id, call);
  }

  /**
   * Starts a run of the schedule now (or at `opts.at`) under its overlap
   * policy, paused or not, and returns the schedule and the handler
   * started (`sched:<id>:trigger:<Unix nanoseconds>`; none if the policy
   * skipped it). The instant is sent with the call, so retries start one
   * run.
   */
  triggerSchedule(id: string, opts: TriggerScheduleOptions = {}): Promise<TriggerResult> {
    return this.schedules.trigger(id, opts);
  }

  /**
   * Starts the schedule's ticks in `[from, to]` (both included; at most
   * 1,000, `to` not in the future) under its overlap policy, each with the
   * handler id of its tick: a tick that ran already is not run again.
   * Returns the schedule and the handlers started.
   */
  backfillSchedule(id: string, from: Date, to: Date, call?: CallOptions): Promise<TriggerResult> {
    return this.schedules.backfill(id, from, to, call);
  }

  /** How many handlers are in memory, idle or released, and how releases and rehydrations went. */
  async stats(call?: CallOptions): Promise<GetStatsResponse> {
    return this.unary((o) => this.service.getStats({}, o), call);
  }

  /**
   * Yields the handler's records with a sequence number greater than
   * `after`, first those already recorded and then new ones as they happen,
   * and ends after the terminal record (`rec.kind.case ===
   * "handlerFinished"`). Heartbeats are not yielded. Breaking out of the
   * loop ends the call.
   *
   * A dropped connection (`Code.Unavailable`, a connection the transport
   * reports as reset, aborted or cancelled without `signal` having
   * aborted, or a clean end before the terminal record) does not end the
   * iteration: it reconnects with the client's backoff and asks for the
   * records after the last sequence number it yielded, so each record is
   * yielded once, in order. It gives up, throwing the last error, after
   * `retry.maxAttempts` attempts in a row that made no progress (no record,
   * nor a heartbeat past the one a stream opens with). Resuming after a
   * finished handler's terminal record yields nothing and ends. Any other
   * error (`Code.NotFound` for an unknown handler, `Code.Canceled` when
   * `signal` aborts) is thrown at once.
   */
  async *stream(id: string, opts: StreamOptions = {}): AsyncGenerator<Record, void, undefined> {
    const { signal, headers } = opts;
    const after = opts.after ?? 0;
    if (typeof after === "number" ? !Number.isSafeInteger(after) || after < 0 : after < 0n || after >= 2n ** 64n) {
      throw new ConnectError(`client: after ${after} is not a sequence number`, Code.InvalidArgument);
    }
    if (opts.fromHead && BigInt(after) !== 0n) {
      throw new ConnectError("client: fromHead and after exclude each other", Code.InvalidArgument);
    }
    const includeInternal = opts.includeInternal ?? false;
    let last = BigInt(after);
    if (opts.fromHead) {
      // The head is asked for once, before the stream opens: a stream cut
      // before its first heartbeat (which says where the head was) would
      // otherwise ask for the head again when it reconnects, and skip what
      // was recorded meanwhile.
      last = (await this.get(id, { signal, headers })).lastSeq;
    }
    let failures = 0;
    for (;;) {
      let progressed = false;
      let err: ConnectError;
      const ac = new AbortController();
      const onAbort = () => ac.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        if (signal?.aborted) {
          throw canceled(signal);
        }
        const req = { handlerId: id, afterSeq: last, includeInternal };
        const res = this.service.streamEvents(req, { signal: ac.signal, headers });
        let received = 0;
        for await (const msg of res) {
          // Progress is a record, or a heartbeat after the first message
          // (the server opens a stream with one): a connection that
          // delivers only that first heartbeat and drops again is a failure.
          received++;
          progressed ||= msg.kind.case === "record" || received > 1;
          if (msg.kind.case !== "record" || msg.kind.value.seq <= last) {
            continue; // a heartbeat, or a record already yielded
          }
          const rec = msg.kind.value;
          last = rec.seq;
          yield rec;
          if (rec.kind.case === "handlerFinished") {
            return;
          }
        }
        // A clean end before the terminal record: a proxy or the server
        // closed the stream, or the caller asked for the records after the
        // terminal one, of which there are none.
        if (await this.finishedBy(id, last, signal, headers)) {
          return;
        }
        err = new ConnectError("client: stream ended before the handler finished", Code.Unavailable);
      } catch (e) {
        err = connectionError(e, signal);
      } finally {
        signal?.removeEventListener("abort", onAbort);
        ac.abort();
      }
      if (progressed) {
        failures = 0;
      }
      failures++;
      if (signal?.aborted) {
        throw err.code === Code.Canceled ? err : canceled(signal);
      }
      if (!resumable(err) || failures >= this.retry.maxAttempts) {
        throw err;
      }
      await sleep(backoffMs(this.retry, failures), signal);
    }
  }

  /** Whether the handler has finished and its terminal record is at or before seq. */
  private async finishedBy(id: string, seq: bigint, signal?: AbortSignal, headers?: HeadersInit): Promise<boolean> {
    try {
      const h = await this.get(id, { signal, headers });
      return (
        h.status !== HandlerStatus.RUNNING &&
        h.status !== HandlerStatus.QUEUED &&
        h.status !== HandlerStatus.UNSPECIFIED &&
        h.lastSeq <= seq
      );
    } catch {
      return false; // the stream's own retry decides
    }
  }

  /**
   * Runs one unary call with the client's timeout (for the call and all its
   * retries) and retries of `Code.Unavailable`. It gives up with the last
   * error when the attempts run out or the next pause would pass the
   * deadline.
   */
  private async unary<T>(
    fn: (o: { signal?: AbortSignal; timeoutMs?: number; headers?: HeadersInit }) => Promise<T>,
    call: CallOptions = {},
  ): Promise<T> {
    const timeoutMs = Math.max(0, call.timeoutMs ?? this.timeoutMs);
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
    for (let attempt = 1; ; attempt++) {
      const remaining = deadline === undefined ? undefined : Math.max(1, Math.ceil(deadline - Date.now()));
      try {
        return await fn({ signal: call.signal, headers: call.headers, timeoutMs: remaining });
      } catch (e) {
        const err = connectionError(e, call.signal);
        if (err.code !== Code.Unavailable || attempt >= this.retry.maxAttempts || call.signal?.aborted) {
          throw err;
        }
        const pause = backoffMs(this.retry, attempt);
        if (deadline !== undefined && Date.now() + pause >= deadline) {
          throw err;
        }
        await sleep(pause, call.signal);
      }
    }
  }
}

/** The server's wait when a WaitHandler request sets none. */
const DEFAULT_WAIT_MS = 60_000;

/** A wait in milliseconds as a Duration; undefined when not given. */
function waitDuration(what: string, ms: number | undefined): Duration | undefined {
  if (ms === undefined) {
    return undefined;
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new ConnectError(`client: ${what} ${ms} must be a duration in milliseconds`, Code.InvalidArgument);
  }
  return durationFromMs(ms);
}

/** Whether a stream that ended with err should be opened again. */
function resumable(err: ConnectError): boolean {
  return err.code === Code.Unavailable;
}

/**
 * Messages of the TypeError that fetch throws when the network fails
 * (Chromium, Firefox, Safari, Node's undici), which connect-web passes on
 * as `Code.Unknown`.
 */
const fetchNetworkErrors = new Set([
  "Failed to fetch",
  "NetworkError when attempting to fetch resource.",
  "Load failed",
  "The network connection was lost.",
  "network error",
  "fetch failed",
  "terminated",
]);

/**
 * Turns what a call threw into a ConnectError, and a lost connection into
 * `Code.Unavailable` — the code a gRPC client reports for it, and the only
 * one retried — keeping the original as `cause`. The transports report it
 * otherwise: connect-node as `Code.Canceled` (the HTTP/2 stream closed with
 * CANCEL when the connection ends) or `Code.Aborted` (ECONNRESET),
 * connect-web as `Code.Unknown` with fetch's TypeError. A Canceled while the
 * caller's `signal` has aborted is the caller's and stays as it is.
 */
export function connectionError(e: unknown, signal?: AbortSignal): ConnectError {
  const err = ConnectError.from(e);
  let lost = false;
  switch (err.code) {
    case Code.Canceled:
    case Code.Aborted:
      lost = !signal?.aborted;
      break;
    case Code.Unknown:
      lost = err.cause instanceof TypeError && fetchNetworkErrors.has(err.cause.message);
      break;
  }
  if (!lost) {
    return err;
  }
  const out = new ConnectError(`connection lost: ${err.rawMessage}`, Code.Unavailable, err.metadata, undefined, err);
  out.details.push(...err.details);
  return out;
}

function mustHandler(h: Handler | undefined): Handler {
  if (h === undefined) {
    throw new ConnectError("client: the server's answer holds no handler", Code.Internal);
  }
  return h;
}

function mustTask(t: Task | undefined): Task {
  if (t === undefined) {
    throw new ConnectError("client: the server's answer holds no task", Code.Internal);
  }
  return t;
}

