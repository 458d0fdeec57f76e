import type { Children } from "./context.js";

// Brands survive two copies of the package in one process (instanceof
// would not), so isWaiting works whichever copy threw.
const waitingBrand = Symbol.for("@wfd/client/worker.Waiting");

/**
 * Waiting is thrown by a context operation whose wait is not resolved yet:
 * the run parks, and the step runs again from the top when the wait is
 * resolved (its earlier waits then answer at once).
 *
 * **Do not catch it** — or, if a `try` around a wait must catch, rethrow it:
 *
 * ```ts
 * try { ev = await ctx.waitFor("approval"); }
 * catch (e) { if (isWaiting(e)) { ctx.write("question", {...}); throw e; } ... }
 * ```
 *
 * A step that swallows it anyway still parks: once the server has said
 * `waiting` (or the worker parked the run on a local wait), the run ends OUTCOME_WAITING whatever the step does next,
 * every later operation throws Waiting again, and what the step sends or
 * writes after the park is dropped (unless it ends by rethrowing Waiting,
 * as above).
 */
export class Waiting extends Error {
  readonly [waitingBrand] = true;
  constructor(what: string) {
    super(`${what}: the run parks (rethrow this; do not catch it)`);
    this.name = "Waiting";
  }
}

/** Says whether e is a {@link Waiting} (the run parks: rethrow it). */
export function isWaiting(e: unknown): e is Waiting {
  return typeof e === "object" && e !== null && (e as { [waitingBrand]?: boolean })[waitingBrand] === true;
}

/**
 * WaitTimeout is thrown by a wait whose timeout passed first (waitFor,
 * askHuman's deadline, waitForKey, waitForChildren — which also says where
 * the children stand).
 */
export class WaitTimeout extends Error {
  /** waitForChildren: where the children stood when it timed out. */
  readonly children?: Children;
  constructor(message: string, children?: Children) {
    super(message);
    this.name = "TimeoutError";
    this.children = children;
  }
}

/**
 * RunLost is thrown by an operation when the run is no longer this
 * worker's: the server cancelled it (step timeout, handler ended), the
 * connection was lost (the server dispatches it again, to this worker or
 * another), or the worker is stopping. Nothing the run did is kept.
 */
export class RunLost extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RunLost";
  }
}
