// The options and results of WfdClient's methods.
import type { Duration } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";

import type { Handler, HandlerStatus, Residency, Task, TaskStatus } from "./gen/wfd/v1/handler_pb.js";
import type { HandlerUpgrade, PublishedEvent, WorkflowService } from "./gen/wfd/v1/service_pb.js";
import type { SearchAttributes } from "./json.js";
import type { RetryPolicy } from "./retry.js";

/** The generated Connect client of `wfd.v1.WorkflowService`. */
export type WorkflowServiceClient = Client<typeof WorkflowService>;

/** Options of a {@link WfdClient}. */
export interface WfdClientOptions {
  /**
   * Timeout of a unary call that does not set its own `timeoutMs`, in
   * milliseconds; it covers the call with all its retries and is sent to
   * the server as the call's deadline. Default 10 s; 0 disables it.
   * Streams never get one.
   */
  timeoutMs?: number;
  /** Retries of unary calls, and reconnects of {@link WfdClient.stream}. */
  retry?: RetryPolicy;
  /** Called by {@link WfdClient.close} (the Node helpers close their HTTP/2 connection here). */
  onClose?: () => void;
}

/** Per-call options of every unary method. */
export interface CallOptions {
  /** Aborting it ends the call (and its retries) with `Code.Canceled`. */
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call (ms; 0: none). */
  timeoutMs?: number;
  /** Extra request headers (for instance authorization). */
  headers?: HeadersInit;
}

/** Options of {@link WfdClient.run}. */
export interface RunOptions extends CallOptions {
  /**
   * Names the handler (at most 128 of `[A-Za-z0-9._:-]`). Running again
   * with the same id and workflow returns the existing handler; with
   * another workflow it fails with `Code.AlreadyExists`. Without it the
   * client makes up a UUIDv7.
   */
  handlerId?: string;
  /**
   * Start this version of the workflow (one of `Workflow.versions`, see
   * {@link WfdClient.workflow}) rather than the current one.
   */
  version?: string;
  /**
   * Wait up to this many milliseconds (at most an hour) for the handler to
   * finish, as {@link WfdClient.wait} does, and return it as it is then.
   * The call's timeout grows by as much.
   */
  waitMs?: number;
  /**
   * Events delivered to the new handler after its start event, in order,
   * in the commit that creates it: nobody ever sees the handler without
   * them (at most 64). Each must be of a type the workflow accepts from
   * outside and match its schema (`Code.InvalidArgument` naming it
   * otherwise, and nothing is created). A repeated run with the same
   * `handlerId` delivers them no second time.
   */
  events?: readonly StartEvent[];
  /**
   * The handler's search attributes, each one the workflow declares
   * (`Workflow.searchAttributes`) with a value of its type: `Date`s are
   * sent as RFC 3339 strings, `null`s are ignored. An undeclared name or a
   * value of the wrong type is `Code.InvalidArgument` naming it, and
   * nothing is created. A repeated run with the same `handlerId` changes
   * nothing.
   */
  attributes?: SearchAttributes;
}

/** An event {@link RunOptions.events} delivers with the start. */
export interface StartEvent {
  type: string;
  data?: { readonly [k: string]: unknown } | null;
}

/** Options of {@link WfdClient.sendOrStart}. */
export interface SendOrStartOptions extends SendOptions {
  /** If the call starts the handler, start this version of the workflow rather than the current one. */
  version?: string;
  /**
   * If the call starts the handler, its search attributes, as
   * {@link RunOptions.attributes} (checked whether or not it starts it).
   */
  attributes?: SearchAttributes;
}

/** What {@link WfdClient.sendOrStart} did. */
export interface SendOrStartResult {
  /** The handler once the event is durable (with `waitMs`, as it is then). */
  handler: Handler;
  /** This call created the handler. */
  started: boolean;
}

/** Options of {@link WfdClient.workflows}. */
export interface WorkflowsOptions extends CallOptions {
  /** List every version of each workflow (`Workflow.versions`, without handler counts). */
  versions?: boolean;
}

/** Options of {@link WfdClient.upgradeHandlers} and {@link WfdClient.upgradeAllHandlers}. */
export interface UpgradeOptions extends CallOptions {
  /** The version to move handlers to; default the current one. */
  to?: string;
  /**
   * Only these handlers (each a running handler of the version moved
   * from); default every running handler of it, a page at a time.
   */
  handlerIds?: string[];
  /** Report per handler whether it can move (`UpgradeOutcome.CAN_MOVE`), and move none. */
  dryRun?: boolean;
  /** At most this many handlers per call (default 100, at most 1000). */
  pageSize?: number;
  /** Continue from an earlier page's `nextPageToken`. */
  pageToken?: string;
}

/** One page of {@link WfdClient.upgradeHandlers}. */
export interface UpgradePage {
  /** What happened (or, in a dry run, would happen) to each handler. */
  handlers: HandlerUpgrade[];
  /** The version they were (or would be) moved to. */
  toVersion: string;
  /** Empty after the last page. */
  nextPageToken: string;
}

/** Options of {@link WfdClient.wait}. */
export interface WaitOptions extends CallOptions {
  /**
   * How long the server waits at most, in milliseconds (at most an hour);
   * default 60 s. The call's timeout grows by as much.
   */
  waitMs?: number;
}

/** Options of {@link WfdClient.send}. */
export interface SendOptions extends CallOptions {
  /**
   * The key that makes a repeated send a no-op on the server (at most 128
   * characters); a UUIDv7 when not given. The server remembers a handler's
   * latest 1,024 keys.
   */
  idempotencyKey?: string;
  /**
   * Once the event is durable, wait up to this many milliseconds (at most
   * an hour) for the handler to finish, as {@link WfdClient.wait} does.
   * The call's timeout grows by as much.
   */
  waitMs?: number;
}

/** Options of {@link WfdClient.stream}. */
export interface StreamOptions {
  /** Yield the records with a sequence number greater than this (default 0: all). */
  after?: bigint | number;
  /**
   * Yield only records made after the stream subscribed (not with
   * `after`). A reconnect continues after the head it started at.
   */
  fromHead?: boolean;
  /**
   * Yield the internal records too: step state changes, idle changes,
   * releases and restores, runs waiting for a worker. Without it the
   * stream carries the events steps write and the terminal record.
   */
  includeInternal?: boolean;
  /** Aborting it ends the iteration with a `ConnectError` of `Code.Canceled`. */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: HeadersInit;
}

/** Status names accepted wherever a {@link HandlerStatus} is. */
export type HandlerStatusName = "running" | "queued" | "completed" | "failed" | "cancelled";
/** Residency names accepted wherever a {@link Residency} is. */
export type ResidencyName = "active" | "released";

/**
 * Filters and paging of {@link WfdClient.list}. The empty object lists every
 * handler, newest first, in pages of the server's default size (100).
 */
export interface ListOptions {
  /** Only handlers of this workflow. */
  workflow?: string;
  /** Only handlers of this version of the workflow (needs `workflow`). */
  workflowVersion?: string;
  /** Only handlers with one of these statuses. */
  statuses?: ReadonlyArray<HandlerStatus | HandlerStatusName>;
  /** Only idle handlers. */
  idleOnly?: boolean;
  /** Only handlers idle for at least this long: milliseconds, or a Duration (implies idleOnly). */
  idleFor?: number | Duration;
  /** Only handlers in memory (`"active"`) or written to the store (`"released"`). */
  residency?: Residency | ResidencyName;
  /**
   * Only handlers this query selects, in its order: a condition on search
   * attributes and the built-in fields (`workflow`, `status`,
   * `created_at`, `updated_at`), then optionally `order by <field>
   * [desc]`, e.g. `customer = "acme" and amount > 100 order by amount
   * desc`. Conditions on attributes need `workflow`. A malformed query,
   * or one no index answers (only `!=`, `not`, `exists` or a top-level
   * `or`), is `Code.InvalidArgument`.
   */
  where?: string;
  /** At most this many per page (the server allows up to 1000). */
  pageSize?: number;
  /** Continue from an earlier page's `nextPageToken`. */
  pageToken?: string;
}

/** One page of {@link WfdClient.list}. */
export interface HandlerPage {
  handlers: Handler[];
  /** Empty after the last page. */
  nextPageToken: string;
}

/** Status names accepted wherever a {@link TaskStatus} is. */
export type TaskStatusName = "pending" | "completed" | "expired" | "cancelled";

/**
 * Filters and paging of {@link WfdClient.tasks}. The empty object lists
 * every task, newest first, in pages of the server's default size (100).
 */
export interface TaskListOptions {
  /** Only tasks with one of these statuses. */
  statuses?: ReadonlyArray<TaskStatus | TaskStatusName>;
  /** Only tasks assigned to this person, or group (`group:<role>`): an inbox. */
  assignee?: string;
  /**
   * Only the caller's tasks: those assigned to its authenticated subject
   * or to `group:<role>` for one of its roles. Needs authentication
   * (`Code.FailedPrecondition` without it); not together with `assignee`
   * (`Code.InvalidArgument`).
   */
  mine?: boolean;
  /** Only tasks of handlers of this workflow. */
  workflow?: string;
  /** Only tasks of this handler. */
  handlerId?: string;
  /** Only tasks someone holds ("claimed") or nobody does ("unclaimed"). */
  claim?: "claimed" | "unclaimed";
  /** Only pending tasks past their due time (their escalation's). */
  overdue?: boolean;
  /** At most this many per page (the server allows up to 1000; with `claim` or `overdue` a page may hold fewer). */
  pageSize?: number;
  /** Continue from an earlier page's `nextPageToken`. */
  pageToken?: string;
}

/** One page of {@link WfdClient.tasks}. */
export interface TaskPage {
  tasks: Task[];
  /** Empty after the last page. */
  nextPageToken: string;
}

/** Options of {@link WfdClient.completeTask}. */
export interface CompleteTaskOptions extends CallOptions {
  /** Who answered (recorded on the task and passed to the step). */
  completedBy?: string;
}

/** Options of {@link WfdClient.cancelTask}. */
export interface CancelTaskOptions extends CallOptions {
  /** Who cancels it (recorded on the task and passed to the step). */
  cancelledBy?: string;
}

/**
 * Options of {@link WfdClient.claimTask}, `unclaimTask`, `reassignTask`
 * and `commentTask`.
 */
export interface TaskActionOptions extends CallOptions {
  /**
   * Who acts, recorded on the task: required when the server does not
   * authenticate; with authentication the server records the caller.
   */
  by?: string;
}

/** Options of {@link WfdClient.publish}. */
export interface PublishOptions extends CallOptions {
  /** Only this handler sees the event. */
  handlerId?: string;
  /**
   * The event's id, which makes a repeated publish a no-op on the server; a
   * UUIDv7 when not given.
   */
  eventId?: string;
}

/**
 * Filters and paging of {@link WfdClient.publishedEvents}. The empty object
 * lists the whole published-event log, latest first, in pages of the
 * server's default size (100).
 */
export interface PublishedListOptions {
  /** Only events published under this key (empty: every key). */
  key?: string;
  /** Only events published at or after this time. */
  since?: Date;
  /** Only events published for this handler alone. */
  handlerId?: string;
  /** At most this many per page (the server allows up to 1000). */
  pageSize?: number;
  /** Continue from an earlier page's `nextPageToken`. */
  pageToken?: string;
}

/** One page of {@link WfdClient.publishedEvents}. */
export interface PublishedEventPage {
  events: PublishedEvent[];
  /** Empty after the last page. */
  nextPageToken: string;
}

/** What {@link WfdClient.publish} returns. */
export interface PublishResult {
  /** The event's id (the one given, or the one the client made up). */
  eventId: string;
  /** The event's position in the server's event log. */
  seq: bigint;
  /** How many handlers waiting for the key were woken. */
  woken: number;
}
