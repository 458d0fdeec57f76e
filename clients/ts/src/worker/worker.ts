import { create, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";

import {
  ConnectRequestSchema,
  FinishRunRequestSchema,
  Outcome,
  WorkerService,
  type ConnectRequest,
  type Dispatch,
  type FinishRunRequest,
} from "../gen/wfd/v1/worker_pb.js";
import { nodeTransport, type TlsOptions } from "../node.js";
import { callWithRetry, refusal, RemoteContext, type CallSettings } from "./context.js";
import { versionProblem, type StepFn, type WorkflowSpec } from "./definition.js";
import { isWaiting } from "./errors.js";
import { Finisher } from "./finish.js";

/** What a worker reports; the default logs warnings to the console and nothing per run. */
export interface WorkerLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  /** The server, `host:port` or a base URL (the worker makes its own HTTP/2 connection, closed when run() returns). */
  addr?: string;
  /** Or a Connect transport of your own (gRPC or Connect over HTTP/2: the worker keeps a stream open). */
  transport?: Transport;
  /** With `addr`: TLS settings, as for `wfdClientForNode`. */
  tls?: TlsOptions | boolean;
  /** With `addr`: a bearer token sent with every call. */
  token?: string;
  /** With `addr`: the namespace the worker serves its workflows in (default "default"). */
  namespace?: string;
  /** Names the worker to operators (`wfd workers`); need not be unique. */
  name?: string;
  /** How many step runs it executes at once (default 1). */
  maxRuns?: number;
  /**
   * The workflows it serves: several versions of one workflow (each with
   * its own `version`, or unnamed and different) may be served side by
   * side, each with its own steps' code.
   */
  workflows: WorkflowSpec[];
  /** The first pause before reconnecting (default 100 ms, doubling to 5 s while the server stays away). */
  backoffMs?: number;
  /** Timeout of one context operation's call (default 60 s). */
  callTimeoutMs?: number;
  logger?: WorkerLogger;
}

const permanent = new Set([
  Code.InvalidArgument,
  Code.FailedPrecondition,
  Code.AlreadyExists,
  Code.Unimplemented,
  Code.PermissionDenied,
  Code.Unauthenticated,
]);

/** The code of one registered version: each step's function and the event types it may send. */
type Served = Map<string, { run: StepFn; emits: Set<string> }>;

const consoleLogger: WorkerLogger = {
  info: () => {},
  warn: (msg, fields) => console.warn(`wfd worker: ${msg}`, fields ?? ""),
};

/**
 * A Worker serves workflows to one wfd server: it connects, registers the
 * workflows' definitions, and runs the step runs the server dispatches to
 * it, at most maxRuns at once. The server keeps all handler state; a
 * parked handler costs the worker nothing.
 *
 * ```ts
 * const w = new Worker({ addr: "127.0.0.1:7233", name: "billing", maxRuns: 8, workflows: [approval] });
 * await w.run(signal); // until signal aborts; reconnects on its own
 * ```
 */
export class Worker {
  private readonly client: Client<typeof WorkerService>;
  private readonly close: () => void;
  private readonly req: ConnectRequest;
  /** Each registered version's code, in the order of req.workflows. */
  private readonly code: Served[] = [];
  /**
   * Which of code serves workflow\x00version, as the server named the
   * versions when it connected (Connected.versions).
   */
  private readonly versions = new Map<string, number>();
  private readonly log: WorkerLogger;
  private readonly maxRuns: number;
  private readonly backoffMs: number;
  private readonly callTimeoutMs: number;
  /** Runs in progress, by run id: their controllers. */
  private readonly runs = new Map<string, AbortController>();
  private readonly running = new Set<Promise<void>>();
  private busy = 0;
  private readonly slotWaiters: (() => void)[] = [];
  /** Sends the runs' ends, those that end together in one call (finish.ts). */
  private readonly finisher: Finisher;
  private id = "";
  private started = false;

  constructor(opts: WorkerOptions) {
    if (!opts.transport && !opts.addr) {
      throw new TypeError("wfd worker: give addr or transport");
    }
    if (opts.transport) {
      this.client = createClient(WorkerService, opts.transport);
      this.close = () => {};
    } else {
      // Pings find a dead connection within seconds, so the worker
      // reconnects instead of waiting on a stream nobody answers.
      const { transport, close } = nodeTransport(opts.addr!, { pingIntervalMs: 5_000, pingTimeoutMs: 5_000, tls: opts.tls, token: opts.token, namespace: opts.namespace });
      this.client = createClient(WorkerService, transport);
      this.close = close;
    }
    this.maxRuns = Math.max(1, Math.floor(opts.maxRuns ?? 1));
    this.backoffMs = opts.backoffMs && opts.backoffMs > 0 ? opts.backoffMs : 100;
    this.callTimeoutMs = opts.callTimeoutMs && opts.callTimeoutMs > 0 ? opts.callTimeoutMs : 60_000;
    this.log = opts.logger ?? consoleLogger;
    this.req = create(ConnectRequestSchema, { name: opts.name ?? "", maxRuns: this.maxRuns, dispatchBatches: true });
    this.finisher = new Finisher({
      finishRun: (fin, signal) => this.finishRun(fin, signal),
      finishRuns: (req, signal) => callWithRetry(signal, (s) => this.client.finishRuns(req, { signal: s, timeoutMs: this.callTimeoutMs })),
    });
    const named = new Set<string>();
    for (const wf of opts.workflows) {
      const version = wf.definition.version;
      if (version !== "") {
        const problem = versionProblem(version);
        if (problem) throw new TypeError(`wfd worker: workflow "${wf.name}": ${problem}`);
        const key = `${wf.definition.name}\x00${version}`;
        if (named.has(key)) {
          throw new TypeError(`wfd worker: workflow "${wf.definition.name}" version "${version}" is given twice`);
        }
        named.add(key);
      }
      const code: Served = new Map();
      for (const [name, s] of Object.entries(wf.steps)) {
        code.set(name, { run: s.run, emits: new Set(s.emits ?? []) });
      }
      this.code.push(code);
      this.req.workflows.push(wf.definition);
    }
  }

  /** Notes the versions the server named, in the order registered. */
  private connected(versions: string[]): void {
    this.versions.clear();
    versions.forEach((v, i) => {
      const def = this.req.workflows[i];
      if (def) this.versions.set(`${def.name}\x00${v}`, i);
    });
  }

  /**
   * The code of the version a dispatch is for (undefined if this worker
   * does not serve it). A server that names no version gets the only
   * definition of the workflow.
   */
  private codeFor(d: Dispatch): Served | undefined {
    let i = this.versions.get(`${d.workflow}\x00${d.workflowVersion}`);
    if (i === undefined && d.workflowVersion === "") {
      const of = this.req.workflows.flatMap((w, j) => (w.name === d.workflow ? [j] : []));
      if (of.length === 1) i = of[0];
    }
    return i === undefined ? undefined : this.code[i];
  }

  /** The server's id of the current connection ("" while not connected). */
  get workerId(): string {
    return this.id;
  }

  /**
   * Connects and serves dispatched runs until signal aborts, reconnecting
   * after a lost connection (100 ms, doubling to 5 s). Resolves once the
   * runs in progress have ended. Rejects with the server's ConnectError if
   * it refuses the registration (InvalidArgument: a definition that fails
   * validation; FailedPrecondition: a built-in name; AlreadyExists: a
   * version the server has with another definition). Call it once per
   * Worker.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (this.started) {
      throw new Error("wfd worker: run() may be called once per Worker");
    }
    this.started = true;
    const stop = signal ?? new AbortController().signal;
    let pause = this.backoffMs;
    try {
      for (;;) {
        const { connected, err } = await this.session(stop);
        if (stop.aborted) return;
        const ce = ConnectError.from(err);
        if (permanent.has(ce.code)) throw ce;
        if (connected) pause = this.backoffMs;
        this.log.info("connection lost; reconnecting", { err: ce.message, inMs: pause });
        await sleep(pause, stop);
        if (stop.aborted) return;
        pause = Math.min(2 * pause, 5_000);
      }
    } finally {
      await Promise.allSettled([...this.running]);
      await this.finisher.settled();
      this.close();
    }
  }

  /** One Connect stream: serves its dispatches until it ends; says whether it got as far as connected. */
  private async session(stop: AbortSignal): Promise<{ connected: boolean; err: unknown }> {
    const ac = new AbortController();
    const onStop = () => ac.abort();
    stop.addEventListener("abort", onStop, { once: true });
    let workerId = "";
    try {
      for await (const m of this.client.connect(this.req, { signal: ac.signal })) {
        switch (m.kind.case) {
          case "connected":
            workerId = this.id = m.kind.value.workerId;
            this.connected(m.kind.value.versions);
            this.log.info("connected", { worker: workerId, versions: m.kind.value.versions });
            break;
          case "dispatch":
            this.start(ac.signal, { client: this.client, workerId, timeoutMs: this.callTimeoutMs }, m.kind.value);
            break;
          case "dispatches":
            // Runs dispatched together: each starts as if dispatched alone, in order.
            for (const d of m.kind.value.dispatches) {
              this.start(ac.signal, { client: this.client, workerId, timeoutMs: this.callTimeoutMs }, d);
            }
            break;
          case "cancelRunId":
            this.runs.get(m.kind.value)?.abort();
            break;
        }
      }
      return { connected: workerId !== "", err: new ConnectError("the server ended the stream", Code.Unavailable) };
    } catch (e) {
      return { connected: workerId !== "", err: e };
    } finally {
      // A lost session loses its runs: the server dispatches them again.
      ac.abort();
      stop.removeEventListener("abort", onStop);
      this.id = "";
    }
  }

  /** Runs d on its own; its signal ends with the session, a cancel or its deadline. */
  private start(session: AbortSignal, calls: CallSettings, d: Dispatch): void {
    const ac = new AbortController();
    const onLost = () => ac.abort();
    session.addEventListener("abort", onLost, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (d.deadline) {
      timer = setTimeout(() => ac.abort(), Math.max(0, timestampDate(d.deadline).getTime() - Date.now()));
    }
    this.runs.set(d.runId, ac);
    const p = (async () => {
      try {
        // The server dispatches no more than maxRuns at once; the slots
        // guard against a redispatch arriving before an old run is done.
        if (!(await this.acquire(ac.signal))) return;
        try {
          await this.execute(calls, d, ac.signal, session);
        } finally {
          this.releaseSlot();
        }
      } catch (e) {
        this.log.warn("run failed", { run: d.runId, err: String(e) });
      } finally {
        clearTimeout(timer);
        session.removeEventListener("abort", onLost);
        if (this.runs.get(d.runId) === ac) this.runs.delete(d.runId);
      }
    })();
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /**
   * Runs the user's step for d and reports its end, unless the run was
   * lost meanwhile. signal is the run's; session its connection's, which a
   * batch of run ends is sent with (finish.ts).
   */
  private async execute(calls: CallSettings, d: Dispatch, signal: AbortSignal, session: AbortSignal): Promise<void> {
    const fin = create(FinishRunRequestSchema, { runId: d.runId, workerId: calls.workerId });
    const s = this.codeFor(d)?.get(d.step);
    if (!s) {
      fin.outcome = Outcome.ERROR;
      fin.errorMessage = `worker serves no step "${d.step}" of workflow ${d.workflow}@${d.workflowVersion}`;
      return this.finish(fin, signal, session);
    }
    const ctx = new RemoteContext(calls, d, s.emits, signal);
    let threw: unknown;
    let failed = false;
    try {
      await s.run(ctx, { id: d.input?.id ?? "", type: d.input?.type ?? "", data: d.input?.data ?? {} });
    } catch (e) {
      threw = e;
      failed = true;
    }
    if (ctx.lost || signal.aborted) {
      this.log.info("run abandoned", { run: d.runId, err: String(ctx.lost ?? "aborted") });
      return;
    }
    // The waits it answered itself since its last call: the server applies them first.
    fin.localWaits = ctx.pendingWaits;
    if (ctx.refused) {
      // The server took no later call: the run fails with the refusal,
      // whatever the step made of it, without the waits it answered
      // itself since (their positions no longer match the server's).
      fin.outcome = Outcome.ERROR;
      fin.errorMessage = ctx.refused.message;
      fin.localWaits = [];
    } else if (ctx.fault) {
      fin.outcome = Outcome.ERROR;
      fin.errorMessage = ctx.fault.message;
    } else if (ctx.parked) {
      fin.outcome = Outcome.WAITING;
      if (failed && isWaiting(threw)) {
        // Parked as the rules say: what it sent and wrote stands (the
        // engine keeps a parked run's writes, such as the question it asks).
        fin.sent = ctx.sent;
        fin.written = ctx.written;
      } else {
        // It swallowed Waiting: it parks anyway, with what it did before.
        fin.sent = ctx.sent.slice(0, ctx.sentAtPark);
        fin.written = ctx.written.slice(0, ctx.writtenAtPark);
      }
    } else if (failed) {
      fin.outcome = Outcome.ERROR;
      fin.errorMessage = messageOf(threw);
    } else {
      fin.outcome = Outcome.OK;
      fin.sent = ctx.sent;
      fin.written = ctx.written;
    }
    return this.finish(fin, signal, session);
  }

  /**
   * Reports a run's end; a refusal means the run is no longer ours
   * (dispatched again, or ended). A FinishRun too large for the server
   * (RESOURCE_EXHAUSTED: what the run sent and wrote is over the server's
   * limits) is reported again without them, as the run's error: the run
   * fails as a step (retried by its policy) instead of staying this
   * worker's, unfinished, for ever.
   */
  private async finish(fin: FinishRunRequest, signal: AbortSignal, session: AbortSignal): Promise<void> {
    try {
      try {
        await this.finisher.send(fin, signal, session);
      } catch (e) {
        const ce = ConnectError.from(e);
        if (ce.code !== Code.ResourceExhausted) throw e;
        this.log.warn("the server refused the run's end as too large; failing the run", { run: fin.runId, err: ce.message });
        await this.finishRun(
          create(FinishRunRequestSchema, {
            runId: fin.runId,
            workerId: fin.workerId,
            outcome: Outcome.ERROR,
            errorMessage: refusal("the run's end", toBinary(FinishRunRequestSchema, fin).length, ce),
          }),
          signal,
        );
      }
    } catch (e) {
      const ce = ConnectError.from(e);
      if (ce.code === Code.FailedPrecondition || signal.aborted) {
        this.log.info("run no longer ours", { run: fin.runId, err: ce.message });
      } else {
        this.log.warn("finishing run", { run: fin.runId, err: ce.message });
      }
    }
  }

  /** One run's FinishRun, with the run's signal. */
  private finishRun(fin: FinishRunRequest, signal: AbortSignal): Promise<unknown> {
    return callWithRetry(signal, (s) => this.client.finishRun(fin, { signal: s, timeoutMs: this.callTimeoutMs }));
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    while (this.busy >= this.maxRuns) {
      if (signal.aborted) return false;
      await new Promise<void>((res) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          res();
        };
        this.slotWaiters.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted) return false;
    this.busy++;
    return true;
  }

  private releaseSlot(): void {
    this.busy--;
    this.slotWaiters.shift()?.();
  }
}

function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return `step threw ${String(e)}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((res) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      res();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
