// Requests built from WfdClient's options, and the names it takes for enums.
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate, type Duration } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import { HandlerStatus, Residency, TaskStatus } from "./gen/wfd/v1/handler_pb.js";
import {
  TaskClaim,
  ListHandlersRequestSchema,
  ListPublishedEventsRequestSchema,
  ListTasksRequestSchema,
  type ListHandlersRequest,
  type ListPublishedEventsRequest,
  type ListTasksRequest,
} from "./gen/wfd/v1/service_pb.js";
import type {
  HandlerStatusName,
  ListOptions,
  PublishedListOptions,
  ResidencyName,
  TaskListOptions,
  TaskStatusName,
} from "./options.js";

const statusByName: { [K in HandlerStatusName]: HandlerStatus } = {
  running: HandlerStatus.RUNNING,
  queued: HandlerStatus.QUEUED,
  completed: HandlerStatus.COMPLETED,
  failed: HandlerStatus.FAILED,
  cancelled: HandlerStatus.CANCELLED,
};

const taskStatusByName: { [K in TaskStatusName]: TaskStatus } = {
  pending: TaskStatus.PENDING,
  completed: TaskStatus.COMPLETED,
  expired: TaskStatus.EXPIRED,
  cancelled: TaskStatus.CANCELLED,
};

const residencyByName: { [K in ResidencyName]: Residency } = {
  active: Residency.ACTIVE,
  released: Residency.RELEASED,
};


export function checkPageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > 0x7fffffff) {
    throw new ConnectError(`client: page size ${pageSize} out of range`, Code.InvalidArgument);
  }
  return pageSize;
}

export function listTasksRequest(o: TaskListOptions): ListTasksRequest {
  return create(ListTasksRequestSchema, {
    statuses: (o.statuses ?? []).map(toTaskStatus),
    assignee: o.assignee ?? "",
    mine: o.mine ?? false,
    workflow: o.workflow ?? "",
    handlerId: o.handlerId ?? "",
    claim: o.claim === "claimed" ? TaskClaim.CLAIMED : o.claim === "unclaimed" ? TaskClaim.UNCLAIMED : TaskClaim.UNSPECIFIED,
    overdue: o.overdue ?? false,
    pageSize: checkPageSize(o.pageSize ?? 0),
    pageToken: o.pageToken ?? "",
  });
}

export function publishedListRequest(o: PublishedListOptions): ListPublishedEventsRequest {
  const pageSize = checkPageSize(o.pageSize ?? 0);
  return create(ListPublishedEventsRequestSchema, {
    key: o.key ?? "",
    since: o.since ? timestampFromDate(o.since) : undefined,
    handlerId: o.handlerId ?? "",
    pageSize,
    pageToken: o.pageToken ?? "",
  });
}

export function listRequest(o: ListOptions): ListHandlersRequest {
  const pageSize = checkPageSize(o.pageSize ?? 0);
  let idleFor: Duration | undefined;
  if (typeof o.idleFor === "number") {
    if (!Number.isFinite(o.idleFor) || o.idleFor < 0) {
      throw new ConnectError(`client: idleFor ${o.idleFor} must be a duration in milliseconds`, Code.InvalidArgument);
    }
    idleFor = o.idleFor > 0 ? durationFromMs(o.idleFor) : undefined;
  } else {
    idleFor = o.idleFor;
  }
  return create(ListHandlersRequestSchema, {
    workflow: o.workflow ?? "",
    workflowVersion: o.workflowVersion ?? "",
    statuses: (o.statuses ?? []).map(toStatus),
    idleOnly: o.idleOnly ?? false,
    idleFor,
    residency: toResidency(o.residency),
    where: o.where ?? "",
    pageSize,
    pageToken: o.pageToken ?? "",
  });
}

export function toStatus(s: HandlerStatus | HandlerStatusName): HandlerStatus {
  if (typeof s === "number") {
    return s;
  }
  const v = Object.hasOwn(statusByName, s) ? statusByName[s] : undefined;
  if (v === undefined) {
    throw new ConnectError(
      `client: unknown status ${JSON.stringify(s)} (want ${Object.keys(statusByName).join(", ")})`,
      Code.InvalidArgument,
    );
  }
  return v;
}

export function toTaskStatus(s: TaskStatus | TaskStatusName): TaskStatus {
  if (typeof s === "number") {
    return s;
  }
  const v = Object.hasOwn(taskStatusByName, s) ? taskStatusByName[s] : undefined;
  if (v === undefined) {
    throw new ConnectError(
      `client: unknown task status ${JSON.stringify(s)} (want ${Object.keys(taskStatusByName).join(", ")})`,
      Code.InvalidArgument,
    );
  }
  return v;
}

export function toResidency(r: Residency | ResidencyName | undefined): Residency {
  if (r === undefined) {
    return Residency.UNSPECIFIED;
  }
  if (typeof r === "number") {
    return r;
  }
  const v = Object.hasOwn(residencyByName, r) ? residencyByName[r] : undefined;
  if (v === undefined) {
    throw new ConnectError(
      `client: unknown residency ${JSON.stringify(r)} (want ${Object.keys(residencyByName).join(", ")})`,
      Code.InvalidArgument,
    );
  }
  return v;
}

