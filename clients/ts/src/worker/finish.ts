import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

import {
  FinishRunRequestSchema,
  FinishRunsRequestSchema,
  type FinishRunRequest,
  type FinishRunsRequest,
  type FinishRunsResponse,
} from "../gen/wfd/v1/worker_pb.js";

// Bounds of a FinishRuns batch: a run's end larger than batchItemBytes
// goes alone (FinishRun), and a batch stops at batchBytes or batchRuns, far
// below the server's read limit for the runs' effects (about 26 MiB with
// its defaults).
const batchItemBytes = 64 << 10;
const batchBytes = 1 << 20;
const batchRuns = 256;

/** The calls a Finisher makes (the worker's, with its retries and timeout). */
export interface FinishCalls {
  /** FinishRun of one run, with the run's signal. */
  finishRun(fin: FinishRunRequest, signal: AbortSignal): Promise<unknown>;
  /** FinishRuns of several, with their session's signal. */
  finishRuns(req: FinishRunsRequest, signal: AbortSignal): Promise<FinishRunsResponse>;
}

/** One run's end waiting in the queue; settled with FinishRun's answer for it. */
interface Ending {
  fin: FinishRunRequest;
  size: number;
  /** The run's: an end whose run was aborted before its batch left is not sent, as its FinishRun would not have been. */
  signal: AbortSignal;
  /** The run's session's, which a batch is sent with (it serves several runs). */
  session: AbortSignal;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Sends the ends of runs. A run's end is sent at once if no FinishRun or
 * FinishRuns is in flight; otherwise it waits for it, and the ends that
 * gathered meanwhile go in one FinishRuns. Under load, runs that end
 * together cost the server one call instead of one each; alone, a run
 * waits for nothing.
 */
export class Finisher {
  private queue: Ending[] = [];
  /** Whether a call is in flight: the loop sending the queue runs. */
  private busy = false;
  /** That loop, the last one started. */
  private sending: Promise<void> = Promise.resolve();
  /** Set once the server answered FinishRuns Unimplemented (older than it): every end goes by FinishRun from then on. */
  private single = false;

  constructor(private readonly calls: FinishCalls) {}

  /**
   * Delivers fin by FinishRun, or in a FinishRuns with the ends that
   * queue up while another call is in flight. Rejects as FinishRun would
   * for this run (a result's code and message as a ConnectError).
   */
  send(fin: FinishRunRequest, signal: AbortSignal, session: AbortSignal): Promise<void> {
    const size = toBinary(FinishRunRequestSchema, fin).length;
    if (this.single || size > batchItemBytes) {
      return this.calls.finishRun(fin, signal).then(() => undefined);
    }
    const done = new Promise<void>((resolve, reject) => this.queue.push({ fin, size, signal, session, resolve, reject }));
    if (!this.busy) {
      // Not awaited by the run that starts it: each end awaits only its own answer.
      this.busy = true;
      this.sending = this.drain();
    }
    return done;
  }

  /** Resolves once no call is in flight (the worker's close waits for it). */
  async settled(): Promise<void> {
    await this.sending;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        await this.deliver(this.take());
      }
    } finally {
      // At once, not a microtask later: an end queued in between would wait for ever.
      this.busy = false;
    }
  }

  /** Removes the next batch from the queue. */
  private take(): Ending[] {
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < batchRuns && (n === 0 || bytes + this.queue[n]!.size <= batchBytes)) {
      bytes += this.queue[n]!.size;
      n++;
    }
    return this.queue.splice(0, n);
  }

  /**
   * Sends a batch and settles each end with its answer. One end goes by
   * FinishRun with its run's signal, several by FinishRuns with their
   * session's.
   */
  private async deliver(batch: Ending[]): Promise<void> {
    batch = batch.filter((e) => {
      if (!e.signal.aborted) return true;
      e.reject(new ConnectError("the run ended before its end was sent", Code.Canceled));
      return false;
    });
    if (batch.length === 0) return;
    if (batch.length === 1) return this.alone(batch[0]!);
    let res: FinishRunsResponse;
    try {
      // A lost session aborts its runs: the ends left are all of the current one.
      res = await this.calls.finishRuns(create(FinishRunsRequestSchema, { runs: batch.map((e) => e.fin) }), batch[0]!.session);
      if (res.results.length !== batch.length) {
        throw new ConnectError(`FinishRuns answered ${res.results.length} runs of ${batch.length}`, Code.Internal);
      }
    } catch (err) {
      const code = ConnectError.from(err).code;
      if (code === Code.Unimplemented || code === Code.ResourceExhausted) {
        // A server without FinishRuns, or a batch over its read limit:
        // each end alone, as before batches.
        if (code === Code.Unimplemented) this.single = true;
        for (const e of batch) await this.alone(e);
        return;
      }
      for (const e of batch) e.reject(err);
      return;
    }
    batch.forEach((e, i) => {
      const r = res.results[i]!;
      if (r.code === 0) e.resolve();
      else e.reject(new ConnectError(r.message, r.code in Code ? (r.code as Code) : Code.Unknown));
    });
  }

  private async alone(e: Ending): Promise<void> {
    try {
      await this.calls.finishRun(e.fin, e.signal);
      e.resolve();
    } catch (err) {
      e.reject(err);
    }
  }
}
