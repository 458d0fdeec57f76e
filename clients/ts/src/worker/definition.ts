import { create, type JsonObject } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";

import { ConcurrencySchema, EventTypeSchema } from "../gen/wfd/v1/service_pb.js";
import {
  RetryPolicySchema,
  StepDefinitionSchema,
  WorkflowDefinitionSchema,
  type WorkflowDefinition,
} from "../gen/wfd/v1/worker_pb.js";
import type { StepContext, WorkflowEvent } from "./context.js";

/**
 * The code of a step: a plain async function of the run's context and the
 * event it runs for. Returning ends the run well; throwing fails the
 * attempt (retried as the step's retry policy says) with the error's
 * message; a wait that parks throws {@link Waiting}, which must not be
 * caught (or must be rethrown).
 */
export type StepFn = (ctx: StepContext, ev: WorkflowEvent) => Promise<void> | void;

/** How a failed step is retried: exponential backoff with a cap; unset fields take the engine's defaults. */
export interface StepRetry {
  /** Attempts in all, counting the first (0 and 1: no retry). */
  maxAttempts?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  multiplier?: number;
}

/** What the server needs to know of a step (the engine's Step, without its code). */
export interface StepOptions {
  /** Event types the step runs for ("start" for the handler's input). */
  accepts: string[];
  /** Event types it may send ("stop" ends the handler with its data as the result). */
  emits?: string[];
  /** How many runs of the step execute at once, across all workers (default 1). */
  workers?: number;
  retry?: StepRetry;
  /** Bounds one run (ms); default none. */
  timeoutMs?: number;
}

/** A step: its options and its code. Made by {@link step}. */
export interface StepSpec extends StepOptions {
  readonly run: StepFn;
}

/** An event type the workflow takes from outside, with its JSON Schema. */
export interface EventDeclaration {
  type: string;
  description?: string;
  /** JSON Schema of the event's data: SendEvent refuses data it refuses. */
  schema?: JsonObject;
  /**
   * true: clients may send it at any time, for the steps that accept it
   * (the engine's Workflow.External); false (default): it is accepted only
   * while a wait of the handler waits for it.
   */
  external?: boolean;
}

/** The type of a search attribute a workflow declares. */
export type SearchAttributeType = "string" | "keyword_list" | "int" | "double" | "bool" | "time";

/** A workflow served by a worker. Made by {@link workflow}. */
export interface WorkflowOptions {
  /** Must not be a built-in workflow's name (approval, expense, echo, ...). */
  name: string;
  /**
   * Names this version of the workflow: 1 to 64 of `[A-Za-z0-9._-]`.
   * Unset, the server names it by the definition's hash. A version never
   * changes: registering a version the server has with another definition
   * is refused (`run()` rejects with `AlreadyExists`). A worker may serve
   * several versions of one workflow, each with its own steps' code;
   * handlers run the version they started on (or were upgraded to).
   */
  version?: string;
  /**
   * Registers a version the server does not have yet without making it
   * current: RunWorkflow goes on starting the current version until it is
   * promoted (`WfdClient.setCurrentVersion`, `wfd workflows promote`).
   * Default false: a new version becomes current when it is registered.
   * A version the server has keeps its standing either way, so an old
   * worker that reconnects does not take current back. (The first version
   * of a workflow is current anyway.)
   */
  standby?: boolean;
  description?: string;
  /** JSON Schema of the input (the start event's data); default any object. */
  inputSchema?: JsonObject;
  /** Outside event types, with their schemas. */
  events?: EventDeclaration[];
  /** More external event types, without schemas. */
  external?: string[];
  /** Bounds the whole run of a handler (ms); default none. */
  timeoutMs?: number;
  /**
   * The search attributes the workflow declares, name → type (names are
   * `[a-z][a-z0-9_]*`, at most 32). Handlers are given them at start
   * (`WfdClient.run`'s `attributes`), steps update them
   * (`ctx.setAttributes`), and `WfdClient.list`'s `where` filters and
   * sorts by them. A changed declaration makes a new version.
   */
  searchAttributes?: Readonly<Record<string, SearchAttributeType>>;
  /**
   * Limits how many handlers run at once, and start per interval, per key
   * of their input (a field's value: `key: "customer_id"`, a dotted path
   * into objects, or "" for one key). A start over the limit is queued
   * (status QUEUED) and runs, in order, when a slot frees, or is refused
   * (RESOURCE_EXHAUSTED) with `refuse`. Not part of the version.
   */
  concurrency?: ConcurrencyOptions;
  /** The steps, by name. */
  steps: Record<string, StepSpec>;
}

/** A workflow's concurrency limit, per key of its input. */
export interface ConcurrencyOptions {
  /** The input field whose value names the key; "" (default): one key. */
  key?: string;
  /** Running handlers per key at most; 0 (default): no maximum. */
  max?: number;
  /** Starts per key within any `perMs`; 0 (default): no rate limit. */
  rate?: number;
  perMs?: number;
  /** Refuse a start over the limit instead of queueing it. */
  refuse?: boolean;
}

/** A workflow definition with its steps' code, ready for a {@link Worker}. */
export interface WorkflowSpec extends WorkflowOptions {
  /** The definition the worker registers (what the server validates). */
  readonly definition: WorkflowDefinition;
}

/** Declares a step: `step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {...})`. */
export function step(opts: StepOptions, run: StepFn): StepSpec {
  if (typeof run !== "function") {
    throw new TypeError("wfd worker: step() needs the step's function");
  }
  return { ...opts, run };
}

/**
 * Declares a workflow. The definition is checked by the server when a
 * worker registers it, exactly as a Go workflow is (the worker's run()
 * rejects with the server's InvalidArgument if it is not valid).
 */
export function workflow(opts: WorkflowOptions): WorkflowSpec {
  if (opts.version !== undefined) {
    const problem = versionProblem(opts.version);
    if (problem) throw new TypeError(`wfd worker: workflow "${opts.name}": ${problem}`);
  }
  return { ...opts, definition: toDefinition(opts) };
}

/** The longest version name the server takes. */
export const MAX_VERSION_LEN = 64;

/** What is wrong with a version's name (as the server checks it), or undefined. */
export function versionProblem(v: string): string | undefined {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_VERSION_LEN) {
    return `version ${JSON.stringify(v)} must have 1 to ${MAX_VERSION_LEN} characters`;
  }
  const bad = /[^A-Za-z0-9._-]/.exec(v);
  if (bad) {
    return `version ${JSON.stringify(v)} has ${JSON.stringify(bad[0])}: use letters, digits, '.', '_' and '-'`;
  }
  return undefined;
}

function toDefinition(w: WorkflowOptions): WorkflowDefinition {
  const external = [...(w.external ?? [])];
  for (const e of w.events ?? []) {
    if (e.external && !external.includes(e.type)) external.push(e.type);
  }
  return create(WorkflowDefinitionSchema, {
    name: w.name,
    version: w.version ?? "",
    makeCurrent: !w.standby,
    description: w.description ?? "",
    externalEventTypes: external,
    eventTypes: (w.events ?? []).map((e) =>
      create(EventTypeSchema, { type: e.type, description: e.description ?? "", schema: e.schema }),
    ),
    inputSchema: w.inputSchema,
    timeout: ms(w.timeoutMs),
    searchAttributes: { ...(w.searchAttributes ?? {}) },
    concurrency: w.concurrency
      ? create(ConcurrencySchema, {
          key: w.concurrency.key ?? "",
          max: w.concurrency.max ?? 0,
          rate: w.concurrency.rate ?? 0,
          per: ms(w.concurrency.perMs),
          refuse: w.concurrency.refuse ?? false,
        })
      : undefined,
    steps: Object.entries(w.steps).map(([name, s]) =>
      create(StepDefinitionSchema, {
        name,
        accepts: s.accepts,
        emits: s.emits ?? [],
        workers: s.workers ?? 0,
        timeout: ms(s.timeoutMs),
        retry: create(RetryPolicySchema, {
          maxAttempts: s.retry?.maxAttempts ?? 0,
          initialBackoff: ms(s.retry?.initialBackoffMs),
          maxBackoff: ms(s.retry?.maxBackoffMs),
          multiplier: s.retry?.multiplier ?? 0,
        }),
      }),
    ),
  });
}

/** A positive number of milliseconds as a Duration; undefined for none. */
export function ms(v: number | undefined) {
  return v !== undefined && v > 0 ? durationFromMs(v) : undefined;
}
