import { Code, ConnectError } from "@connectrpc/connect";

/** Defaults of {@link RetryPolicy} and of the unary call timeout. */
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_ATTEMPTS = 8;
export const DEFAULT_INITIAL_BACKOFF_MS = 100;
export const DEFAULT_MAX_BACKOFF_MS = 2_000;

/** How much a pause varies either way, so that clients cut off together do not come back together. */
const JITTER = 0.2;

/**
 * How often and after what pauses a unary call that failed with
 * `Code.Unavailable` is tried again, and how many reconnects in a row
 * without progress `stream()` makes before it gives up. The pause doubles
 * from `initialBackoffMs` up to `maxBackoffMs`, with 20% jitter. Missing
 * fields take the defaults, which ride out about seven seconds without a
 * server.
 */
export interface RetryPolicy {
  /** Attempts in all, counting the first: 1 disables retries. Default 8. */
  maxAttempts?: number;
  /** The pause before the second attempt. Default 100 ms. */
  initialBackoffMs?: number;
  /** The longest pause. Default 2 s. */
  maxBackoffMs?: number;
}

/** A {@link RetryPolicy} with every field set. */
export type FullRetryPolicy = Required<RetryPolicy>;

export function retryPolicyWithDefaults(p: RetryPolicy = {}): FullRetryPolicy {
  const maxAttempts = p.maxAttempts !== undefined && p.maxAttempts > 0 ? Math.floor(p.maxAttempts) : DEFAULT_MAX_ATTEMPTS;
  const initialBackoffMs =
    p.initialBackoffMs !== undefined && p.initialBackoffMs > 0 ? p.initialBackoffMs : DEFAULT_INITIAL_BACKOFF_MS;
  const maxBackoffMs = Math.max(
    p.maxBackoffMs !== undefined && p.maxBackoffMs > 0 ? p.maxBackoffMs : DEFAULT_MAX_BACKOFF_MS,
    initialBackoffMs,
  );
  return { maxAttempts, initialBackoffMs, maxBackoffMs };
}

/** The pause before retry number `retry` (1 for the first retry). */
export function backoffMs(p: FullRetryPolicy, retry: number): number {
  const base = Math.min(p.maxBackoffMs, p.initialBackoffMs * 2 ** Math.max(0, retry - 1));
  return base * (1 + JITTER * (2 * Math.random() - 1));
}

/**
 * Waits `ms`, or throws a `ConnectError` with `Code.Canceled` as soon as
 * `signal` aborts.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(canceled(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(canceled(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The error a call ends with when the caller's signal aborts. */
export function canceled(signal: AbortSignal): ConnectError {
  const reason: unknown = signal.reason;
  if (reason instanceof ConnectError) {
    return reason;
  }
  return new ConnectError("operation was aborted via signal", Code.Canceled, undefined, undefined, reason);
}
