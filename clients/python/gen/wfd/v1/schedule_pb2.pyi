import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OverlapPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OVERLAP_POLICY_UNSPECIFIED: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_SKIP: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_BUFFER_ONE: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_ALLOW: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_CANCEL_PREVIOUS: _ClassVar[OverlapPolicy]

class ScheduleOutcomeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_OUTCOME_KIND_UNSPECIFIED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_STARTED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_SKIPPED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_MISSED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_FAILED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_BUFFERED: _ClassVar[ScheduleOutcomeKind]
    SCHEDULE_OUTCOME_KIND_CANCELLED_PREVIOUS: _ClassVar[ScheduleOutcomeKind]
OVERLAP_POLICY_UNSPECIFIED: OverlapPolicy
OVERLAP_POLICY_SKIP: OverlapPolicy
OVERLAP_POLICY_BUFFER_ONE: OverlapPolicy
OVERLAP_POLICY_ALLOW: OverlapPolicy
OVERLAP_POLICY_CANCEL_PREVIOUS: OverlapPolicy
SCHEDULE_OUTCOME_KIND_UNSPECIFIED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_STARTED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_SKIPPED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_MISSED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_FAILED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_BUFFERED: ScheduleOutcomeKind
SCHEDULE_OUTCOME_KIND_CANCELLED_PREVIOUS: ScheduleOutcomeKind

class Schedule(_message.Message):
    __slots__ = ("schedule_id", "spec", "action", "policy", "paused", "note", "created_at", "updated_at", "revision", "info")
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    spec: ScheduleSpec
    action: ScheduleAction
    policy: SchedulePolicy
    paused: bool
    note: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    revision: int
    info: ScheduleInfo
    def __init__(self, schedule_id: _Optional[str] = ..., spec: _Optional[_Union[ScheduleSpec, _Mapping]] = ..., action: _Optional[_Union[ScheduleAction, _Mapping]] = ..., policy: _Optional[_Union[SchedulePolicy, _Mapping]] = ..., paused: _Optional[bool] = ..., note: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revision: _Optional[int] = ..., info: _Optional[_Union[ScheduleInfo, _Mapping]] = ...) -> None: ...

class ScheduleSpec(_message.Message):
    __slots__ = ("cron", "time_zone", "interval", "phase", "start_at", "end_at")
    CRON_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    START_AT_FIELD_NUMBER: _ClassVar[int]
    END_AT_FIELD_NUMBER: _ClassVar[int]
    cron: str
    time_zone: str
    interval: _duration_pb2.Duration
    phase: _duration_pb2.Duration
    start_at: _timestamp_pb2.Timestamp
    end_at: _timestamp_pb2.Timestamp
    def __init__(self, cron: _Optional[str] = ..., time_zone: _Optional[str] = ..., interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., phase: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., start_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ScheduleAction(_message.Message):
    __slots__ = ("workflow", "version", "input")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    version: str
    input: _struct_pb2.Struct
    def __init__(self, workflow: _Optional[str] = ..., version: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class SchedulePolicy(_message.Message):
    __slots__ = ("overlap", "catchup_window")
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    CATCHUP_WINDOW_FIELD_NUMBER: _ClassVar[int]
    overlap: OverlapPolicy
    catchup_window: _duration_pb2.Duration
    def __init__(self, overlap: _Optional[_Union[OverlapPolicy, str]] = ..., catchup_window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ScheduleInfo(_message.Message):
    __slots__ = ("next_ticks", "recent", "running", "started", "skipped", "missed", "failed")
    NEXT_TICKS_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    next_ticks: _containers.RepeatedCompositeFieldContainer[_timestamp_pb2.Timestamp]
    recent: _containers.RepeatedCompositeFieldContainer[ScheduleOutcome]
    running: _containers.RepeatedScalarFieldContainer[str]
    started: int
    skipped: int
    missed: int
    failed: int
    def __init__(self, next_ticks: _Optional[_Iterable[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]] = ..., recent: _Optional[_Iterable[_Union[ScheduleOutcome, _Mapping]]] = ..., running: _Optional[_Iterable[str]] = ..., started: _Optional[int] = ..., skipped: _Optional[int] = ..., missed: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class ScheduleOutcome(_message.Message):
    __slots__ = ("tick", "handler_id", "kind", "reason", "at")
    TICK_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    tick: _timestamp_pb2.Timestamp
    handler_id: str
    kind: ScheduleOutcomeKind
    reason: str
    at: _timestamp_pb2.Timestamp
    def __init__(self, tick: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., handler_id: _Optional[str] = ..., kind: _Optional[_Union[ScheduleOutcomeKind, str]] = ..., reason: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateScheduleRequest(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class CreateScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class GetScheduleRequest(_message.Message):
    __slots__ = ("schedule_id",)
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class GetScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ListSchedulesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSchedulesResponse(_message.Message):
    __slots__ = ("schedules", "next_page_token")
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    next_page_token: str
    def __init__(self, schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateScheduleRequest(_message.Message):
    __slots__ = ("schedule", "expect_revision")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    EXPECT_REVISION_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    expect_revision: int
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ..., expect_revision: _Optional[int] = ...) -> None: ...

class UpdateScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class DeleteScheduleRequest(_message.Message):
    __slots__ = ("schedule_id",)
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class DeleteScheduleResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TriggerScheduleRequest(_message.Message):
    __slots__ = ("schedule_id", "at", "backfill_from", "backfill_to")
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    BACKFILL_FROM_FIELD_NUMBER: _ClassVar[int]
    BACKFILL_TO_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    at: _timestamp_pb2.Timestamp
    backfill_from: _timestamp_pb2.Timestamp
    backfill_to: _timestamp_pb2.Timestamp
    def __init__(self, schedule_id: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., backfill_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., backfill_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TriggerScheduleResponse(_message.Message):
    __slots__ = ("schedule", "started")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    started: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ..., started: _Optional[_Iterable[str]] = ...) -> None: ...
