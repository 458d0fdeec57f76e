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
HANDLER_STATUS_UNSPECIFIED: HandlerStatus
HANDLER_STATUS_RUNNING: HandlerStatus
HANDLER_STATUS_COMPLETED: HandlerStatus
HANDLER_STATUS_FAILED: HandlerStatus
HANDLER_STATUS_CANCELLED: HandlerStatus

class Event(_message.Message):
    __slots__ = ("id", "type", "data")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    data: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HandlerState(_message.Message):
    __slots__ = ("version", "handler_id", "workflow", "status", "start", "steps", "store", "seq", "next_id", "created_at", "deadline", "idle_since", "result", "error", "completed_at", "event_keys", "parent", "children", "child_results")
    class StoreEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _struct_pb2.Value
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...
    class ChildResultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ChildResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ChildResult, _Mapping]] = ...) -> None: ...
    VERSION_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    STORE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    NEXT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    IDLE_SINCE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    EVENT_KEYS_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    CHILD_RESULTS_FIELD_NUMBER: _ClassVar[int]
    version: int
    handler_id: str
    workflow: str
    status: HandlerStatus
    start: Event
    steps: _containers.RepeatedCompositeFieldContainer[StepState]
    store: _containers.MessageMap[str, _struct_pb2.Value]
    seq: int
    next_id: int
    created_at: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    idle_since: _timestamp_pb2.Timestamp
    result: _struct_pb2.Struct
    error: str
    completed_at: _timestamp_pb2.Timestamp
    event_keys: _containers.RepeatedScalarFieldContainer[str]
    parent: str
    children: _containers.RepeatedScalarFieldContainer[str]
    child_results: _containers.MessageMap[str, ChildResult]
    def __init__(self, version: _Optional[int] = ..., handler_id: _Optional[str] = ..., workflow: _Optional[str] = ..., status: _Optional[_Union[HandlerStatus, str]] = ..., start: _Optional[_Union[Event, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[StepState, _Mapping]]] = ..., store: _Optional[_Mapping[str, _struct_pb2.Value]] = ..., seq: _Optional[int] = ..., next_id: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., idle_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., event_keys: _Optional[_Iterable[str]] = ..., parent: _Optional[str] = ..., children: _Optional[_Iterable[str]] = ..., child_results: _Optional[_Mapping[str, ChildResult]] = ...) -> None: ...

class ChildResult(_message.Message):
    __slots__ = ("status", "result", "error")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    status: HandlerStatus
    result: _struct_pb2.Struct
    error: str
    def __init__(self, status: _Optional[_Union[HandlerStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class HumanTask(_message.Message):
    __slots__ = ("task_id", "title", "description", "answer_schema", "assignee")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    description: str
    answer_schema: _struct_pb2.Struct
    assignee: str
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., answer_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., assignee: _Optional[str] = ...) -> None: ...

class StepState(_message.Message):
    __slots__ = ("name", "queue", "in_progress", "collected", "waiters")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    IN_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    COLLECTED_FIELD_NUMBER: _ClassVar[int]
    WAITERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    queue: _containers.RepeatedCompositeFieldContainer[WorkItem]
    in_progress: _containers.RepeatedCompositeFieldContainer[Execution]
    collected: _containers.RepeatedCompositeFieldContainer[Event]
    waiters: _containers.RepeatedCompositeFieldContainer[Waiter]
    def __init__(self, name: _Optional[str] = ..., queue: _Optional[_Iterable[_Union[WorkItem, _Mapping]]] = ..., in_progress: _Optional[_Iterable[_Union[Execution, _Mapping]]] = ..., collected: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., waiters: _Optional[_Iterable[_Union[Waiter, _Mapping]]] = ...) -> None: ...

class WorkItem(_message.Message):
    __slots__ = ("event", "attempt", "not_before", "resolved")
    class ResolvedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: WaitResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[WaitResult, _Mapping]] = ...) -> None: ...
    EVENT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    event: Event
    attempt: int
    not_before: _timestamp_pb2.Timestamp
    resolved: _containers.MessageMap[str, WaitResult]
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ..., attempt: _Optional[int] = ..., not_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved: _Optional[_Mapping[str, WaitResult]] = ...) -> None: ...

class Execution(_message.Message):
    __slots__ = ("id", "worker", "item", "started_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    id: int
    worker: int
    item: WorkItem
    started_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[int] = ..., worker: _Optional[int] = ..., item: _Optional[_Union[WorkItem, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Waiter(_message.Message):
    __slots__ = ("id", "event_type", "match", "deadline", "resume", "task", "key", "since", "children", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    event_type: str
    match: _struct_pb2.Struct
    deadline: _timestamp_pb2.Timestamp
    resume: WorkItem
    task: HumanTask
    key: str
    since: _timestamp_pb2.Timestamp
    children: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., event_type: _Optional[str] = ..., match: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resume: _Optional[_Union[WorkItem, _Mapping]] = ..., task: _Optional[_Union[HumanTask, _Mapping]] = ..., key: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., children: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WaitResult(_message.Message):
    __slots__ = ("event", "timed_out")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    timed_out: bool
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ..., timed_out: _Optional[bool] = ...) -> None: ...
