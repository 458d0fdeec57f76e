/**
 * @wfd/client — the TypeScript client of wfd's WorkflowService.
 *
 * This entry point works with any Connect transport and in any runtime.
 * `@wfd/client/node` adds {@link wfdClientForNode} (HTTP/2 through
 * connect-node), `@wfd/client/web` adds `wfdClientForWeb` (fetch through
 * connect-web, for browsers).
 *
 * @packageDocumentation
 */
export {
  WfdClient,
  type WfdClientOptions,
  type WorkflowServiceClient,
  type CallOptions,
  type RunOptions,
  type SendOptions,
  type SendOrStartOptions,
  type SendOrStartResult,
  type StartEvent,
  type WaitOptions,
  type StreamOptions,
  type ListOptions,
  type HandlerPage,
  type HandlerStatusName,
  type ResidencyName,
  type TaskStatusName,
  type TaskListOptions,
  type TaskPage,
  type CompleteTaskOptions,
  type CancelTaskOptions,
  type TaskActionOptions,
  type PublishOptions,
  type PublishResult,
  type PublishedListOptions,
  type PublishedEventPage,
  type WorkflowsOptions,
  type UpgradeOptions,
  type UpgradePage,
  toScheduleInit,
  type OverlapName,
  type ScheduleInit,
  type ScheduleListOptions,
  type SchedulePage,
  type TriggerResult,
  type TriggerScheduleOptions,
  type UpdateScheduleOptions,
} from "./client.js";
export {
  bearerTokenInterceptor,
  isLoopbackUrl,
  assertTokenTransport,
  namespaceInterceptor,
  assertNamespace,
  namespaceHeader,
} from "./auth.js";
export {
  type RetryPolicy,
  type FullRetryPolicy,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_INITIAL_BACKOFF_MS,
  DEFAULT_MAX_BACKOFF_MS,
} from "./retry.js";
export {
  toJsonObject,
  toAttributes,
  handlerToJson,
  recordToJson,
  statsToJson,
  taskToJson,
  type JsonObject,
  type JsonValue,
  type SearchAttributes,
  type SearchAttributeValue,
} from "./json.js";

// Errors: every call fails with a ConnectError whose `code` is the server's.
export { Code, ConnectError, type Transport, type Interceptor } from "@connectrpc/connect";

// The generated API (messages, enums, the service descriptor).
export * from "./gen/wfd/v1/service_pb.js";
export * from "./gen/wfd/v1/handler_pb.js";
export * from "./gen/wfd/v1/schedule_pb.js";
