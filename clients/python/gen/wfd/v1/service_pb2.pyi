import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from wfd.v1 import handler_pb2 as _handler_pb2
from wfd.v1 import schedule_pb2 as _schedule_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskClaim(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_CLAIM_UNSPECIFIED: _ClassVar[TaskClaim]
    TASK_CLAIM_CLAIMED: _ClassVar[TaskClaim]
    TASK_CLAIM_UNCLAIMED: _ClassVar[TaskClaim]

class UpgradeOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UPGRADE_OUTCOME_UNSPECIFIED: _ClassVar[UpgradeOutcome]
    UPGRADE_OUTCOME_CAN_MOVE: _ClassVar[UpgradeOutcome]
    UPGRADE_OUTCOME_MOVED: _ClassVar[UpgradeOutcome]
    UPGRADE_OUTCOME_REFUSED: _ClassVar[UpgradeOutcome]
    UPGRADE_OUTCOME_BUSY: _ClassVar[UpgradeOutcome]
TASK_CLAIM_UNSPECIFIED: TaskClaim
TASK_CLAIM_CLAIMED: TaskClaim
TASK_CLAIM_UNCLAIMED: TaskClaim
UPGRADE_OUTCOME_UNSPECIFIED: UpgradeOutcome
UPGRADE_OUTCOME_CAN_MOVE: UpgradeOutcome
UPGRADE_OUTCOME_MOVED: UpgradeOutcome
UPGRADE_OUTCOME_REFUSED: UpgradeOutcome
UPGRADE_OUTCOME_BUSY: UpgradeOutcome

class Workflow(_message.Message):
    __slots__ = ("name", "description", "external_event_types", "steps", "input_schema", "event_types", "served_by_workers", "workers_connected", "version", "versions", "search_attributes", "concurrency")
    class SearchAttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    SERVED_BY_WORKERS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    external_event_types: _containers.RepeatedScalarFieldContainer[str]
    steps: _containers.RepeatedScalarFieldContainer[str]
    input_schema: _struct_pb2.Struct
    event_types: _containers.RepeatedCompositeFieldContainer[EventType]
    served_by_workers: bool
    workers_connected: int
    version: str
    versions: _containers.RepeatedCompositeFieldContainer[WorkflowVersion]
    search_attributes: _containers.ScalarMap[str, str]
    concurrency: Concurrency
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., external_event_types: _Optional[_Iterable[str]] = ..., steps: _Optional[_Iterable[str]] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., event_types: _Optional[_Iterable[_Union[EventType, _Mapping]]] = ..., served_by_workers: _Optional[bool] = ..., workers_connected: _Optional[int] = ..., version: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[WorkflowVersion, _Mapping]]] = ..., search_attributes: _Optional[_Mapping[str, str]] = ..., concurrency: _Optional[_Union[Concurrency, _Mapping]] = ...) -> None: ...

class Concurrency(_message.Message):
    __slots__ = ("key", "max", "rate", "per", "refuse")
    KEY_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    PER_FIELD_NUMBER: _ClassVar[int]
    REFUSE_FIELD_NUMBER: _ClassVar[int]
    key: str
    max: int
    rate: int
    per: _duration_pb2.Duration
    refuse: bool
    def __init__(self, key: _Optional[str] = ..., max: _Optional[int] = ..., rate: _Optional[int] = ..., per: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., refuse: _Optional[bool] = ...) -> None: ...

class WorkflowVersion(_message.Message):
    __slots__ = ("version", "current", "built_in", "source", "created_at", "workers", "workers_connected", "running", "released", "finished", "definition")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    BUILT_IN_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    version: str
    current: bool
    built_in: bool
    source: str
    created_at: _timestamp_pb2.Timestamp
    workers: _containers.RepeatedScalarFieldContainer[str]
    workers_connected: int
    running: int
    released: int
    finished: int
    definition: Workflow
    def __init__(self, version: _Optional[str] = ..., current: _Optional[bool] = ..., built_in: _Optional[bool] = ..., source: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., workers: _Optional[_Iterable[str]] = ..., workers_connected: _Optional[int] = ..., running: _Optional[int] = ..., released: _Optional[int] = ..., finished: _Optional[int] = ..., definition: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class EventType(_message.Message):
    __slots__ = ("type", "description", "schema", "external")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    type: str
    description: str
    schema: _struct_pb2.Struct
    external: bool
    def __init__(self, type: _Optional[str] = ..., description: _Optional[str] = ..., schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., external: _Optional[bool] = ...) -> None: ...

class ListWorkflowsRequest(_message.Message):
    __slots__ = ("name", "versions")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    versions: bool
    def __init__(self, name: _Optional[str] = ..., versions: _Optional[bool] = ...) -> None: ...

class ListWorkflowsResponse(_message.Message):
    __slots__ = ("workflows",)
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    workflows: _containers.RepeatedCompositeFieldContainer[Workflow]
    def __init__(self, workflows: _Optional[_Iterable[_Union[Workflow, _Mapping]]] = ...) -> None: ...

class RunWorkflowRequest(_message.Message):
    __slots__ = ("workflow", "input", "handler_id", "wait", "version", "events", "attributes")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    input: _struct_pb2.Struct
    handler_id: str
    wait: _duration_pb2.Duration
    version: str
    events: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Event]
    attributes: _struct_pb2.Struct
    def __init__(self, workflow: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., handler_id: _Optional[str] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., version: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_handler_pb2.Event, _Mapping]]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RunWorkflowResponse(_message.Message):
    __slots__ = ("handler",)
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ...) -> None: ...

class GetHandlerRequest(_message.Message):
    __slots__ = ("handler_id", "at_seq")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    AT_SEQ_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    at_seq: int
    def __init__(self, handler_id: _Optional[str] = ..., at_seq: _Optional[int] = ...) -> None: ...

class GetHandlerResponse(_message.Message):
    __slots__ = ("handler", "at")
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    at: _handler_pb2.HandlerAt
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ..., at: _Optional[_Union[_handler_pb2.HandlerAt, _Mapping]] = ...) -> None: ...

class ListHandlersRequest(_message.Message):
    __slots__ = ("workflow", "workflow_version", "statuses", "idle_only", "idle_for", "residency", "page_size", "page_token", "where")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    IDLE_ONLY_FIELD_NUMBER: _ClassVar[int]
    IDLE_FOR_FIELD_NUMBER: _ClassVar[int]
    RESIDENCY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WHERE_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    workflow_version: str
    statuses: _containers.RepeatedScalarFieldContainer[_handler_pb2.HandlerStatus]
    idle_only: bool
    idle_for: _duration_pb2.Duration
    residency: _handler_pb2.Residency
    page_size: int
    page_token: str
    where: str
    def __init__(self, workflow: _Optional[str] = ..., workflow_version: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[_handler_pb2.HandlerStatus, str]]] = ..., idle_only: _Optional[bool] = ..., idle_for: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., residency: _Optional[_Union[_handler_pb2.Residency, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., where: _Optional[str] = ...) -> None: ...

class ListHandlersResponse(_message.Message):
    __slots__ = ("handlers", "next_page_token")
    HANDLERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    handlers: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Handler]
    next_page_token: str
    def __init__(self, handlers: _Optional[_Iterable[_Union[_handler_pb2.Handler, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SendEventRequest(_message.Message):
    __slots__ = ("handler_id", "event", "idempotency_key", "wait", "start")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    event: _handler_pb2.Event
    idempotency_key: str
    wait: _duration_pb2.Duration
    start: StartIfMissing
    def __init__(self, handler_id: _Optional[str] = ..., event: _Optional[_Union[_handler_pb2.Event, _Mapping]] = ..., idempotency_key: _Optional[str] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., start: _Optional[_Union[StartIfMissing, _Mapping]] = ...) -> None: ...

class StartIfMissing(_message.Message):
    __slots__ = ("workflow", "input", "version", "attributes")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    input: _struct_pb2.Struct
    version: str
    attributes: _struct_pb2.Struct
    def __init__(self, workflow: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., version: _Optional[str] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class SendEventResponse(_message.Message):
    __slots__ = ("handler", "started")
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    started: bool
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ..., started: _Optional[bool] = ...) -> None: ...

class StreamEventsRequest(_message.Message):
    __slots__ = ("handler_id", "after_seq", "from_head", "include_internal")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    FROM_HEAD_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_INTERNAL_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    after_seq: int
    from_head: bool
    include_internal: bool
    def __init__(self, handler_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., from_head: _Optional[bool] = ..., include_internal: _Optional[bool] = ...) -> None: ...

class StreamEventsResponse(_message.Message):
    __slots__ = ("record", "heartbeat")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    record: _handler_pb2.Record
    heartbeat: Heartbeat
    def __init__(self, record: _Optional[_Union[_handler_pb2.Record, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("last_seq",)
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    last_seq: int
    def __init__(self, last_seq: _Optional[int] = ...) -> None: ...

class CancelHandlerRequest(_message.Message):
    __slots__ = ("handler_id",)
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    def __init__(self, handler_id: _Optional[str] = ...) -> None: ...

class CancelHandlerResponse(_message.Message):
    __slots__ = ("handler",)
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ...) -> None: ...

class ReleaseHandlerRequest(_message.Message):
    __slots__ = ("handler_id",)
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    def __init__(self, handler_id: _Optional[str] = ...) -> None: ...

class ReleaseHandlerResponse(_message.Message):
    __slots__ = ("handler",)
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatsResponse(_message.Message):
    __slots__ = ("handlers_active", "handlers_idle_in_memory", "handlers_released", "handlers_by_status", "releases_total", "rehydrations_total", "rehydrate_latency_p50", "rehydrate_latency_p99", "streams", "commits_total", "changes_total", "workers_connected", "dispatches_total", "redispatches_total", "dispatch_latency_p50", "dispatch_latency_p99", "tasks_pending")
    class HandlersByStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    HANDLERS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    HANDLERS_IDLE_IN_MEMORY_FIELD_NUMBER: _ClassVar[int]
    HANDLERS_RELEASED_FIELD_NUMBER: _ClassVar[int]
    HANDLERS_BY_STATUS_FIELD_NUMBER: _ClassVar[int]
    RELEASES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REHYDRATIONS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REHYDRATE_LATENCY_P50_FIELD_NUMBER: _ClassVar[int]
    REHYDRATE_LATENCY_P99_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    COMMITS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CHANGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    WORKERS_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    DISPATCHES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REDISPATCHES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_LATENCY_P50_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_LATENCY_P99_FIELD_NUMBER: _ClassVar[int]
    TASKS_PENDING_FIELD_NUMBER: _ClassVar[int]
    handlers_active: int
    handlers_idle_in_memory: int
    handlers_released: int
    handlers_by_status: _containers.ScalarMap[str, int]
    releases_total: int
    rehydrations_total: int
    rehydrate_latency_p50: _duration_pb2.Duration
    rehydrate_latency_p99: _duration_pb2.Duration
    streams: int
    commits_total: int
    changes_total: int
    workers_connected: int
    dispatches_total: int
    redispatches_total: int
    dispatch_latency_p50: _duration_pb2.Duration
    dispatch_latency_p99: _duration_pb2.Duration
    tasks_pending: int
    def __init__(self, handlers_active: _Optional[int] = ..., handlers_idle_in_memory: _Optional[int] = ..., handlers_released: _Optional[int] = ..., handlers_by_status: _Optional[_Mapping[str, int]] = ..., releases_total: _Optional[int] = ..., rehydrations_total: _Optional[int] = ..., rehydrate_latency_p50: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., rehydrate_latency_p99: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., streams: _Optional[int] = ..., commits_total: _Optional[int] = ..., changes_total: _Optional[int] = ..., workers_connected: _Optional[int] = ..., dispatches_total: _Optional[int] = ..., redispatches_total: _Optional[int] = ..., dispatch_latency_p50: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., dispatch_latency_p99: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., tasks_pending: _Optional[int] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("statuses", "assignee", "workflow", "handler_id", "page_size", "page_token", "mine", "claim", "overdue")
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MINE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    OVERDUE_FIELD_NUMBER: _ClassVar[int]
    statuses: _containers.RepeatedScalarFieldContainer[_handler_pb2.TaskStatus]
    assignee: str
    workflow: str
    handler_id: str
    page_size: int
    page_token: str
    mine: bool
    claim: TaskClaim
    overdue: bool
    def __init__(self, statuses: _Optional[_Iterable[_Union[_handler_pb2.TaskStatus, str]]] = ..., assignee: _Optional[str] = ..., workflow: _Optional[str] = ..., handler_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., mine: _Optional[bool] = ..., claim: _Optional[_Union[TaskClaim, str]] = ..., overdue: _Optional[bool] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Task]
    next_page_token: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[_handler_pb2.Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    def __init__(self, task_id: _Optional[str] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class CompleteTaskRequest(_message.Message):
    __slots__ = ("task_id", "answer", "completed_by")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_BY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    answer: _struct_pb2.Struct
    completed_by: str
    def __init__(self, task_id: _Optional[str] = ..., answer: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., completed_by: _Optional[str] = ...) -> None: ...

class CompleteTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class CancelTaskRequest(_message.Message):
    __slots__ = ("task_id", "reason", "cancelled_by")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_BY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    reason: str
    cancelled_by: str
    def __init__(self, task_id: _Optional[str] = ..., reason: _Optional[str] = ..., cancelled_by: _Optional[str] = ...) -> None: ...

class CancelTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class ClaimTaskRequest(_message.Message):
    __slots__ = ("task_id", "by")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    by: str
    def __init__(self, task_id: _Optional[str] = ..., by: _Optional[str] = ...) -> None: ...

class ClaimTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class UnclaimTaskRequest(_message.Message):
    __slots__ = ("task_id", "by")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    by: str
    def __init__(self, task_id: _Optional[str] = ..., by: _Optional[str] = ...) -> None: ...

class UnclaimTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class ReassignTaskRequest(_message.Message):
    __slots__ = ("task_id", "assignee", "by")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    assignee: str
    by: str
    def __init__(self, task_id: _Optional[str] = ..., assignee: _Optional[str] = ..., by: _Optional[str] = ...) -> None: ...

class ReassignTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class CommentTaskRequest(_message.Message):
    __slots__ = ("task_id", "text", "by", "comment_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    COMMENT_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    text: str
    by: str
    comment_id: str
    def __init__(self, task_id: _Optional[str] = ..., text: _Optional[str] = ..., by: _Optional[str] = ..., comment_id: _Optional[str] = ...) -> None: ...

class CommentTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _handler_pb2.Task
    def __init__(self, task: _Optional[_Union[_handler_pb2.Task, _Mapping]] = ...) -> None: ...

class PublishEventRequest(_message.Message):
    __slots__ = ("key", "data", "handler_id", "event_id")
    KEY_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    key: str
    data: _struct_pb2.Struct
    handler_id: str
    event_id: str
    def __init__(self, key: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., handler_id: _Optional[str] = ..., event_id: _Optional[str] = ...) -> None: ...

class PublishEventResponse(_message.Message):
    __slots__ = ("event_id", "seq", "woken")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    WOKEN_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    seq: int
    woken: int
    def __init__(self, event_id: _Optional[str] = ..., seq: _Optional[int] = ..., woken: _Optional[int] = ...) -> None: ...

class WaitHandlerRequest(_message.Message):
    __slots__ = ("handler_id", "timeout", "until_idle", "after_seq")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    UNTIL_IDLE_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    timeout: _duration_pb2.Duration
    until_idle: bool
    after_seq: int
    def __init__(self, handler_id: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., until_idle: _Optional[bool] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WaitHandlerResponse(_message.Message):
    __slots__ = ("handler",)
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    handler: _handler_pb2.Handler
    def __init__(self, handler: _Optional[_Union[_handler_pb2.Handler, _Mapping]] = ...) -> None: ...

class DeleteHandlerRequest(_message.Message):
    __slots__ = ("handler_id",)
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    def __init__(self, handler_id: _Optional[str] = ...) -> None: ...

class DeleteHandlerResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPublishedEventsRequest(_message.Message):
    __slots__ = ("key", "since", "handler_id", "page_size", "page_token")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    key: str
    since: _timestamp_pb2.Timestamp
    handler_id: str
    page_size: int
    page_token: str
    def __init__(self, key: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., handler_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListPublishedEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[PublishedEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[PublishedEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PublishedEvent(_message.Message):
    __slots__ = ("event_id", "seq", "key", "data", "handler_id", "published_at", "published_by")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_BY_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    seq: int
    key: str
    data: _struct_pb2.Struct
    handler_id: str
    published_at: _timestamp_pb2.Timestamp
    published_by: str
    def __init__(self, event_id: _Optional[str] = ..., seq: _Optional[int] = ..., key: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., handler_id: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., published_by: _Optional[str] = ...) -> None: ...

class GetIdentityRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetIdentityResponse(_message.Message):
    __slots__ = ("authentication", "subject", "roles", "namespace")
    AUTHENTICATION_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    authentication: bool
    subject: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    namespace: str
    def __init__(self, authentication: _Optional[bool] = ..., subject: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ..., namespace: _Optional[str] = ...) -> None: ...

class ListNamespacesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListNamespacesResponse(_message.Message):
    __slots__ = ("namespaces",)
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[Namespace]
    def __init__(self, namespaces: _Optional[_Iterable[_Union[Namespace, _Mapping]]] = ...) -> None: ...

class Namespace(_message.Message):
    __slots__ = ("name", "retention", "roles")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    name: str
    retention: _duration_pb2.Duration
    roles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., retention: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., roles: _Optional[_Iterable[str]] = ...) -> None: ...

class ListReplicasRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListReplicasResponse(_message.Message):
    __slots__ = ("replicas",)
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    replicas: _containers.RepeatedCompositeFieldContainer[Replica]
    def __init__(self, replicas: _Optional[_Iterable[_Union[Replica, _Mapping]]] = ...) -> None: ...

class Replica(_message.Message):
    __slots__ = ("id", "address", "started_at", "expires_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    address: str
    started_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., address: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UpgradeHandlersRequest(_message.Message):
    __slots__ = ("workflow", "from_version", "to_version", "handler_ids", "dry_run", "page_size", "page_token")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    HANDLER_IDS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    from_version: str
    to_version: str
    handler_ids: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    page_size: int
    page_token: str
    def __init__(self, workflow: _Optional[str] = ..., from_version: _Optional[str] = ..., to_version: _Optional[str] = ..., handler_ids: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class UpgradeHandlersResponse(_message.Message):
    __slots__ = ("handlers", "to_version", "next_page_token")
    HANDLERS_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    handlers: _containers.RepeatedCompositeFieldContainer[HandlerUpgrade]
    to_version: str
    next_page_token: str
    def __init__(self, handlers: _Optional[_Iterable[_Union[HandlerUpgrade, _Mapping]]] = ..., to_version: _Optional[str] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class HandlerUpgrade(_message.Message):
    __slots__ = ("handler_id", "outcome", "reason")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    outcome: UpgradeOutcome
    reason: str
    def __init__(self, handler_id: _Optional[str] = ..., outcome: _Optional[_Union[UpgradeOutcome, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class SetCurrentVersionRequest(_message.Message):
    __slots__ = ("workflow", "version")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    version: str
    def __init__(self, workflow: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class SetCurrentVersionResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class DeleteWorkflowVersionRequest(_message.Message):
    __slots__ = ("workflow", "version")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    version: str
    def __init__(self, workflow: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class DeleteWorkflowVersionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
