/**
 * @wfd/client/worker — serve your own workflows from Node: steps are plain
 * async functions; the server keeps all handler state.
 *
 * @packageDocumentation
 */
export { Worker, type WorkerOptions, type WorkerLogger } from "./worker.js";
export {
  workflow,
  step,
  type StepFn,
  type StepOptions,
  type StepSpec,
  type StepRetry,
  type EventDeclaration,
  type SearchAttributeType,
  type ConcurrencyOptions,
  type WorkflowOptions,
  type WorkflowSpec,
} from "./definition.js";
export type {
  StepContext,
  WorkflowEvent,
  TaskAnswer,
  HumanTask,
  Published,
  Children,
  ChildResult,
} from "./context.js";
export { Waiting, WaitTimeout, RunLost, isWaiting } from "./errors.js";
export { START, STOP } from "./events.js";
export type { SearchAttributes, SearchAttributeValue } from "../json.js";
export * from "../gen/wfd/v1/worker_pb.js";
