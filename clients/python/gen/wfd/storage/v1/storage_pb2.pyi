import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_UNSPECIFIED: _ClassVar[Status]
    STATUS_RUNNING: _ClassVar[Status]
    STATUS_COMPLETED: _ClassVar[Status]
    STATUS_FAILED: _ClassVar[Status]
    STATUS_CANCELLED: _ClassVar[Status]

class Residency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESIDENCY_UNSPECIFIED: _ClassVar[Residency]
    RESIDENCY_ACTIVE: _ClassVar[Residency]
    RESIDENCY_RELEASED: _ClassVar[Residency]

class TaskStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATUS_UNSPECIFIED: _ClassVar[TaskStatus]
    TASK_STATUS_PENDING: _ClassVar[TaskStatus]
    TASK_STATUS_COMPLETED: _ClassVar[TaskStatus]
    TASK_STATUS_EXPIRED: _ClassVar[TaskStatus]
    TASK_STATUS_CANCELLED: _ClassVar[TaskStatus]
STATUS_UNSPECIFIED: Status
STATUS_RUNNING: Status
STATUS_COMPLETED: Status
STATUS_FAILED: Status
STATUS_CANCELLED: Status
RESIDENCY_UNSPECIFIED: Residency
RESIDENCY_ACTIVE: Residency
RESIDENCY_RELEASED: Residency
TASK_STATUS_UNSPECIFIED: TaskStatus
TASK_STATUS_PENDING: TaskStatus
TASK_STATUS_COMPLETED: TaskStatus
TASK_STATUS_EXPIRED: TaskStatus
TASK_STATUS_CANCELLED: TaskStatus

class HandlerMeta(_message.Message):
    __slots__ = ("version", "id", "workflow", "status", "residency", "created_at", "updated_at", "completed_at", "idle_since", "waiters", "error", "result", "parent", "owner", "last_seq", "children")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESIDENCY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    IDLE_SINCE_FIELD_NUMBER: _ClassVar[int]
    WAITERS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    version: int
    id: str
    workflow: str
    status: Status
    residency: Residency
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    idle_since: _timestamp_pb2.Timestamp
    waiters: _containers.RepeatedCompositeFieldContainer[Waiter]
    error: str
    result: bytes
    parent: str
    owner: str
    last_seq: int
    children: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version: _Optional[int] = ..., id: _Optional[str] = ..., workflow: _Optional[str] = ..., status: _Optional[_Union[Status, str]] = ..., residency: _Optional[_Union[Residency, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., idle_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., waiters: _Optional[_Iterable[_Union[Waiter, _Mapping]]] = ..., error: _Optional[str] = ..., result: _Optional[bytes] = ..., parent: _Optional[str] = ..., owner: _Optional[str] = ..., last_seq: _Optional[int] = ..., children: _Optional[_Iterable[str]] = ...) -> None: ...

class Waiter(_message.Message):
    __slots__ = ("id", "step", "event_type", "match", "deadline", "key")
    ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    id: str
    step: str
    event_type: str
    match: bytes
    deadline: _timestamp_pb2.Timestamp
    key: str
    def __init__(self, id: _Optional[str] = ..., step: _Optional[str] = ..., event_type: _Optional[str] = ..., match: _Optional[bytes] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., key: _Optional[str] = ...) -> None: ...

class TaskMeta(_message.Message):
    __slots__ = ("version", "id", "handler_id", "workflow", "step", "title", "description", "schema", "assignee", "status", "created_at", "deadline", "completed_at", "completed_by", "answer")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_BY_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    version: int
    id: str
    handler_id: str
    workflow: str
    step: str
    title: str
    description: str
    schema: bytes
    assignee: str
    status: TaskStatus
    created_at: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    completed_by: str
    answer: bytes
    def __init__(self, version: _Optional[int] = ..., id: _Optional[str] = ..., handler_id: _Optional[str] = ..., workflow: _Optional[str] = ..., step: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., schema: _Optional[bytes] = ..., assignee: _Optional[str] = ..., status: _Optional[_Union[TaskStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_by: _Optional[str] = ..., answer: _Optional[bytes] = ...) -> None: ...

class PublishedEvent(_message.Message):
    __slots__ = ("version", "seq", "id", "key", "handler_id", "data", "at")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    version: int
    seq: int
    id: str
    key: str
    handler_id: str
    data: bytes
    at: _timestamp_pb2.Timestamp
    def __init__(self, version: _Optional[int] = ..., seq: _Optional[int] = ..., id: _Optional[str] = ..., key: _Optional[str] = ..., handler_id: _Optional[str] = ..., data: _Optional[bytes] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
