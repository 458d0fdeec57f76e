import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HandlerStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HANDLER_STATUS_UNSPECIFIED: _ClassVar[HandlerStatus]
    HANDLER_STATUS_RUNNING: _ClassVar[HandlerStatus]
    HANDLER_STATUS_COMPLETED: _ClassVar[HandlerStatus]
    HANDLER_STATUS_FAILED: _ClassVar[HandlerStatus]
    HANDLER_STATUS_CANCELLED: _ClassVar[HandlerStatus]
    HANDLER_STATUS_QUEUED: _ClassVar[HandlerStatus]

class Residency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESIDENCY_UNSPECIFIED: _ClassVar[Residency]
    RESIDENCY_ACTIVE: _ClassVar[Residency]
    RESIDENCY_RELEASED: _ClassVar[Residency]

class TaskChange(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_CHANGE_UNSPECIFIED: _ClassVar[TaskChange]
    TASK_CHANGE_ASKED: _ClassVar[TaskChange]
    TASK_CHANGE_ANSWERED: _ClassVar[TaskChange]
    TASK_CHANGE_CANCELLED: _ClassVar[TaskChange]
    TASK_CHANGE_EXPIRED: _ClassVar[TaskChange]
    TASK_CHANGE_CLAIMED: _ClassVar[TaskChange]
    TASK_CHANGE_UNCLAIMED: _ClassVar[TaskChange]
    TASK_CHANGE_REASSIGNED: _ClassVar[TaskChange]
    TASK_CHANGE_COMMENTED: _ClassVar[TaskChange]
    TASK_CHANGE_ESCALATED: _ClassVar[TaskChange]

class TaskStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATUS_UNSPECIFIED: _ClassVar[TaskStatus]
    TASK_STATUS_PENDING: _ClassVar[TaskStatus]
    TASK_STATUS_COMPLETED: _ClassVar[TaskStatus]
    TASK_STATUS_EXPIRED: _ClassVar[TaskStatus]
    TASK_STATUS_CANCELLED: _ClassVar[TaskStatus]
HANDLER_STATUS_UNSPECIFIED: HandlerStatus
HANDLER_STATUS_RUNNING: HandlerStatus
HANDLER_STATUS_COMPLETED: HandlerStatus
HANDLER_STATUS_FAILED: HandlerStatus
HANDLER_STATUS_CANCELLED: HandlerStatus
HANDLER_STATUS_QUEUED: HandlerStatus
RESIDENCY_UNSPECIFIED: Residency
RESIDENCY_ACTIVE: Residency
RESIDENCY_RELEASED: Residency
TASK_CHANGE_UNSPECIFIED: TaskChange
TASK_CHANGE_ASKED: TaskChange
TASK_CHANGE_ANSWERED: TaskChange
TASK_CHANGE_CANCELLED: TaskChange
TASK_CHANGE_EXPIRED: TaskChange
TASK_CHANGE_CLAIMED: TaskChange
TASK_CHANGE_UNCLAIMED: TaskChange
TASK_CHANGE_REASSIGNED: TaskChange
TASK_CHANGE_COMMENTED: TaskChange
TASK_CHANGE_ESCALATED: TaskChange
TASK_STATUS_UNSPECIFIED: TaskStatus
TASK_STATUS_PENDING: TaskStatus
TASK_STATUS_COMPLETED: TaskStatus
TASK_STATUS_EXPIRED: TaskStatus
TASK_STATUS_CANCELLED: TaskStatus

class Event(_message.Message):
    __slots__ = ("id", "type", "data")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    data: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Handler(_message.Message):
    __slots__ = ("handler_id", "workflow", "status", "residency", "created_at", "updated_at", "completed_at", "idle", "result", "error", "last_seq", "parent_id", "children", "waiting_for_worker", "owner", "workflow_version", "schedule_id", "schedule_tick", "attributes", "slot")
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESIDENCY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    WAITING_FOR_WORKER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_TICK_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    handler_id: str
    workflow: str
    status: HandlerStatus
    residency: Residency
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    idle: IdleInfo
    result: _struct_pb2.Struct
    error: str
    last_seq: int
    parent_id: str
    children: _containers.RepeatedScalarFieldContainer[str]
    waiting_for_worker: _containers.RepeatedCompositeFieldContainer[RunWaitingForWorker]
    owner: str
    workflow_version: str
    schedule_id: str
    schedule_tick: _timestamp_pb2.Timestamp
    attributes: _struct_pb2.Struct
    slot: HandlerSlot
    def __init__(self, handler_id: _Optional[str] = ..., workflow: _Optional[str] = ..., status: _Optional[_Union[HandlerStatus, str]] = ..., residency: _Optional[_Union[Residency, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., idle: _Optional[_Union[IdleInfo, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ..., last_seq: _Optional[int] = ..., parent_id: _Optional[str] = ..., children: _Optional[_Iterable[str]] = ..., waiting_for_worker: _Optional[_Iterable[_Union[RunWaitingForWorker, _Mapping]]] = ..., owner: _Optional[str] = ..., workflow_version: _Optional[str] = ..., schedule_id: _Optional[str] = ..., schedule_tick: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., slot: _Optional[_Union[HandlerSlot, _Mapping]] = ...) -> None: ...

class HandlerSlot(_message.Message):
    __slots__ = ("key", "queued", "position")
    KEY_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    key: str
    queued: bool
    position: int
    def __init__(self, key: _Optional[str] = ..., queued: _Optional[bool] = ..., position: _Optional[int] = ...) -> None: ...

class IdleInfo(_message.Message):
    __slots__ = ("since", "waiters", "external_event_types", "queued")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    WAITERS_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    waiters: _containers.RepeatedCompositeFieldContainer[WaiterInfo]
    external_event_types: _containers.RepeatedScalarFieldContainer[str]
    queued: bool
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., waiters: _Optional[_Iterable[_Union[WaiterInfo, _Mapping]]] = ..., external_event_types: _Optional[_Iterable[str]] = ..., queued: _Optional[bool] = ...) -> None: ...

class WaiterInfo(_message.Message):
    __slots__ = ("waiter_id", "step", "event_type", "match", "deadline", "task", "key", "children")
    WAITER_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    waiter_id: str
    step: str
    event_type: str
    match: _struct_pb2.Struct
    deadline: _timestamp_pb2.Timestamp
    task: HumanTask
    key: str
    children: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, waiter_id: _Optional[str] = ..., step: _Optional[str] = ..., event_type: _Optional[str] = ..., match: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., task: _Optional[_Union[HumanTask, _Mapping]] = ..., key: _Optional[str] = ..., children: _Optional[_Iterable[str]] = ...) -> None: ...

class HumanTask(_message.Message):
    __slots__ = ("task_id", "title", "description", "answer_schema", "assignee", "input", "input_schema")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    description: str
    answer_schema: _struct_pb2.Struct
    assignee: str
    input: _struct_pb2.Struct
    input_schema: _struct_pb2.Struct
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., answer_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., assignee: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Record(_message.Message):
    __slots__ = ("seq", "time", "step_state_changed", "event_written", "idle_changed", "handler_finished", "handler_released", "handler_restored", "run_waiting_for_worker", "handler_upgraded", "handler_admitted", "task_changed", "memo_set")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    STEP_STATE_CHANGED_FIELD_NUMBER: _ClassVar[int]
    EVENT_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    IDLE_CHANGED_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FINISHED_FIELD_NUMBER: _ClassVar[int]
    HANDLER_RELEASED_FIELD_NUMBER: _ClassVar[int]
    HANDLER_RESTORED_FIELD_NUMBER: _ClassVar[int]
    RUN_WAITING_FOR_WORKER_FIELD_NUMBER: _ClassVar[int]
    HANDLER_UPGRADED_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ADMITTED_FIELD_NUMBER: _ClassVar[int]
    TASK_CHANGED_FIELD_NUMBER: _ClassVar[int]
    MEMO_SET_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: _timestamp_pb2.Timestamp
    step_state_changed: StepStateChanged
    event_written: Event
    idle_changed: IdleChanged
    handler_finished: HandlerFinished
    handler_released: HandlerReleased
    handler_restored: HandlerRestored
    run_waiting_for_worker: RunWaitingForWorker
    handler_upgraded: HandlerUpgraded
    handler_admitted: HandlerAdmitted
    task_changed: TaskChanged
    memo_set: MemoSet
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., step_state_changed: _Optional[_Union[StepStateChanged, _Mapping]] = ..., event_written: _Optional[_Union[Event, _Mapping]] = ..., idle_changed: _Optional[_Union[IdleChanged, _Mapping]] = ..., handler_finished: _Optional[_Union[HandlerFinished, _Mapping]] = ..., handler_released: _Optional[_Union[HandlerReleased, _Mapping]] = ..., handler_restored: _Optional[_Union[HandlerRestored, _Mapping]] = ..., run_waiting_for_worker: _Optional[_Union[RunWaitingForWorker, _Mapping]] = ..., handler_upgraded: _Optional[_Union[HandlerUpgraded, _Mapping]] = ..., handler_admitted: _Optional[_Union[HandlerAdmitted, _Mapping]] = ..., task_changed: _Optional[_Union[TaskChanged, _Mapping]] = ..., memo_set: _Optional[_Union[MemoSet, _Mapping]] = ...) -> None: ...

class MemoSet(_message.Message):
    __slots__ = ("step", "key", "value")
    STEP_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    step: str
    key: str
    value: _struct_pb2.Value
    def __init__(self, step: _Optional[str] = ..., key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class TaskChanged(_message.Message):
    __slots__ = ("task_id", "title", "assignee", "change", "by", "reason", "to", "text")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    assignee: str
    change: TaskChange
    by: str
    reason: str
    to: str
    text: str
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., assignee: _Optional[str] = ..., change: _Optional[_Union[TaskChange, str]] = ..., by: _Optional[str] = ..., reason: _Optional[str] = ..., to: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class HandlerAdmitted(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HandlerUpgraded(_message.Message):
    __slots__ = ("from_version", "to_version")
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    from_version: str
    to_version: str
    def __init__(self, from_version: _Optional[str] = ..., to_version: _Optional[str] = ...) -> None: ...

class StepStateChanged(_message.Message):
    __slots__ = ("step", "worker", "running", "input_event_type", "emitted_event_types", "attempt", "waiting", "error")
    STEP_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    INPUT_EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    EMITTED_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    step: str
    worker: int
    running: bool
    input_event_type: str
    emitted_event_types: _containers.RepeatedScalarFieldContainer[str]
    attempt: int
    waiting: bool
    error: str
    def __init__(self, step: _Optional[str] = ..., worker: _Optional[int] = ..., running: _Optional[bool] = ..., input_event_type: _Optional[str] = ..., emitted_event_types: _Optional[_Iterable[str]] = ..., attempt: _Optional[int] = ..., waiting: _Optional[bool] = ..., error: _Optional[str] = ...) -> None: ...

class IdleChanged(_message.Message):
    __slots__ = ("idle", "info")
    IDLE_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    idle: bool
    info: IdleInfo
    def __init__(self, idle: _Optional[bool] = ..., info: _Optional[_Union[IdleInfo, _Mapping]] = ...) -> None: ...

class HandlerFinished(_message.Message):
    __slots__ = ("status", "result", "error")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    status: HandlerStatus
    result: _struct_pb2.Struct
    error: str
    def __init__(self, status: _Optional[_Union[HandlerStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class HandlerReleased(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HandlerRestored(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunWaitingForWorker(_message.Message):
    __slots__ = ("step", "attempt", "waiting", "since", "workflow_version", "none_connected", "lost_worker")
    STEP_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    NONE_CONNECTED_FIELD_NUMBER: _ClassVar[int]
    LOST_WORKER_FIELD_NUMBER: _ClassVar[int]
    step: str
    attempt: int
    waiting: bool
    since: _timestamp_pb2.Timestamp
    workflow_version: str
    none_connected: bool
    lost_worker: str
    def __init__(self, step: _Optional[str] = ..., attempt: _Optional[int] = ..., waiting: _Optional[bool] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., workflow_version: _Optional[str] = ..., none_connected: _Optional[bool] = ..., lost_worker: _Optional[str] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("task_id", "handler_id", "workflow", "step", "title", "description", "answer_schema", "assignee", "status", "created_at", "deadline", "completed_at", "completed_by", "answer", "input", "input_schema", "cancel_reason", "claimed_by", "claimed_at", "comments", "due", "escalated")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_BY_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REASON_FIELD_NUMBER: _ClassVar[int]
    CLAIMED_BY_FIELD_NUMBER: _ClassVar[int]
    CLAIMED_AT_FIELD_NUMBER: _ClassVar[int]
    COMMENTS_FIELD_NUMBER: _ClassVar[int]
    DUE_FIELD_NUMBER: _ClassVar[int]
    ESCALATED_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    handler_id: str
    workflow: str
    step: str
    title: str
    description: str
    answer_schema: _struct_pb2.Struct
    assignee: str
    status: TaskStatus
    created_at: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    completed_by: str
    answer: _struct_pb2.Struct
    input: _struct_pb2.Struct
    input_schema: _struct_pb2.Struct
    cancel_reason: str
    claimed_by: str
    claimed_at: _timestamp_pb2.Timestamp
    comments: _containers.RepeatedCompositeFieldContainer[TaskComment]
    due: _timestamp_pb2.Timestamp
    escalated: bool
    def __init__(self, task_id: _Optional[str] = ..., handler_id: _Optional[str] = ..., workflow: _Optional[str] = ..., step: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., answer_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., assignee: _Optional[str] = ..., status: _Optional[_Union[TaskStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_by: _Optional[str] = ..., answer: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cancel_reason: _Optional[str] = ..., claimed_by: _Optional[str] = ..., claimed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., comments: _Optional[_Iterable[_Union[TaskComment, _Mapping]]] = ..., due: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., escalated: _Optional[bool] = ...) -> None: ...

class TaskComment(_message.Message):
    __slots__ = ("by", "at", "text", "comment_id")
    BY_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    COMMENT_ID_FIELD_NUMBER: _ClassVar[int]
    by: str
    at: _timestamp_pb2.Timestamp
    text: str
    comment_id: str
    def __init__(self, by: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., text: _Optional[str] = ..., comment_id: _Optional[str] = ...) -> None: ...

class HandlerAt(_message.Message):
    __slots__ = ("seq", "time", "status", "result", "error", "idle", "steps", "written", "written_total", "workflow_version", "released", "memos", "tasks")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_TOTAL_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    MEMOS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: _timestamp_pb2.Timestamp
    status: HandlerStatus
    result: _struct_pb2.Struct
    error: str
    idle: IdleInfo
    steps: _containers.RepeatedCompositeFieldContainer[StepAt]
    written: _containers.RepeatedCompositeFieldContainer[Event]
    written_total: int
    workflow_version: str
    released: bool
    memos: _containers.RepeatedCompositeFieldContainer[MemoSet]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskAt]
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[HandlerStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ..., idle: _Optional[_Union[IdleInfo, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[StepAt, _Mapping]]] = ..., written: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., written_total: _Optional[int] = ..., workflow_version: _Optional[str] = ..., released: _Optional[bool] = ..., memos: _Optional[_Iterable[_Union[MemoSet, _Mapping]]] = ..., tasks: _Optional[_Iterable[_Union[TaskAt, _Mapping]]] = ...) -> None: ...

class TaskAt(_message.Message):
    __slots__ = ("task_id", "title", "assignee", "change", "by", "claimed_by", "comments", "answer")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    CLAIMED_BY_FIELD_NUMBER: _ClassVar[int]
    COMMENTS_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    assignee: str
    change: TaskChange
    by: str
    claimed_by: str
    comments: int
    answer: _struct_pb2.Struct
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., assignee: _Optional[str] = ..., change: _Optional[_Union[TaskChange, str]] = ..., by: _Optional[str] = ..., claimed_by: _Optional[str] = ..., comments: _Optional[int] = ..., answer: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class StepAt(_message.Message):
    __slots__ = ("step", "running", "attempt", "input_event_type", "ended", "emitted_event_types", "error", "waiting")
    STEP_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    INPUT_EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    EMITTED_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    step: str
    running: int
    attempt: int
    input_event_type: str
    ended: int
    emitted_event_types: _containers.RepeatedScalarFieldContainer[str]
    error: str
    waiting: bool
    def __init__(self, step: _Optional[str] = ..., running: _Optional[int] = ..., attempt: _Optional[int] = ..., input_event_type: _Optional[str] = ..., ended: _Optional[int] = ..., emitted_event_types: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ..., waiting: _Optional[bool] = ...) -> None: ...
