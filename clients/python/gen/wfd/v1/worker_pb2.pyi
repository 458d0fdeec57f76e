import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from wfd.v1 import handler_pb2 as _handler_pb2
from wfd.v1 import service_pb2 as _service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_OK: _ClassVar[Outcome]
    OUTCOME_WAITING: _ClassVar[Outcome]
    OUTCOME_ERROR: _ClassVar[Outcome]
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_OK: Outcome
OUTCOME_WAITING: Outcome
OUTCOME_ERROR: Outcome

class WorkflowDefinition(_message.Message):
    __slots__ = ("name", "description", "steps", "external_event_types", "event_types", "input_schema", "timeout", "version", "make_current", "search_attributes", "concurrency")
    class SearchAttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MAKE_CURRENT_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    steps: _containers.RepeatedCompositeFieldContainer[StepDefinition]
    external_event_types: _containers.RepeatedScalarFieldContainer[str]
    event_types: _containers.RepeatedCompositeFieldContainer[_service_pb2.EventType]
    input_schema: _struct_pb2.Struct
    timeout: _duration_pb2.Duration
    version: str
    make_current: bool
    search_attributes: _containers.ScalarMap[str, str]
    concurrency: _service_pb2.Concurrency
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[StepDefinition, _Mapping]]] = ..., external_event_types: _Optional[_Iterable[str]] = ..., event_types: _Optional[_Iterable[_Union[_service_pb2.EventType, _Mapping]]] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., version: _Optional[str] = ..., make_current: _Optional[bool] = ..., search_attributes: _Optional[_Mapping[str, str]] = ..., concurrency: _Optional[_Union[_service_pb2.Concurrency, _Mapping]] = ...) -> None: ...

class StepDefinition(_message.Message):
    __slots__ = ("name", "accepts", "emits", "workers", "retry", "timeout")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ACCEPTS_FIELD_NUMBER: _ClassVar[int]
    EMITS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    name: str
    accepts: _containers.RepeatedScalarFieldContainer[str]
    emits: _containers.RepeatedScalarFieldContainer[str]
    workers: int
    retry: RetryPolicy
    timeout: _duration_pb2.Duration
    def __init__(self, name: _Optional[str] = ..., accepts: _Optional[_Iterable[str]] = ..., emits: _Optional[_Iterable[str]] = ..., workers: _Optional[int] = ..., retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RetryPolicy(_message.Message):
    __slots__ = ("max_attempts", "initial_backoff", "max_backoff", "multiplier")
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    INITIAL_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    MAX_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    max_attempts: int
    initial_backoff: _duration_pb2.Duration
    max_backoff: _duration_pb2.Duration
    multiplier: float
    def __init__(self, max_attempts: _Optional[int] = ..., initial_backoff: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_backoff: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., multiplier: _Optional[float] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ("name", "max_runs", "workflows", "dispatch_batches")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_RUNS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_BATCHES_FIELD_NUMBER: _ClassVar[int]
    name: str
    max_runs: int
    workflows: _containers.RepeatedCompositeFieldContainer[WorkflowDefinition]
    dispatch_batches: bool
    def __init__(self, name: _Optional[str] = ..., max_runs: _Optional[int] = ..., workflows: _Optional[_Iterable[_Union[WorkflowDefinition, _Mapping]]] = ..., dispatch_batches: _Optional[bool] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("connected", "dispatch", "cancel_run_id", "heartbeat", "dispatches")
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_FIELD_NUMBER: _ClassVar[int]
    CANCEL_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    DISPATCHES_FIELD_NUMBER: _ClassVar[int]
    connected: Connected
    dispatch: Dispatch
    cancel_run_id: str
    heartbeat: _service_pb2.Heartbeat
    dispatches: Dispatches
    def __init__(self, connected: _Optional[_Union[Connected, _Mapping]] = ..., dispatch: _Optional[_Union[Dispatch, _Mapping]] = ..., cancel_run_id: _Optional[str] = ..., heartbeat: _Optional[_Union[_service_pb2.Heartbeat, _Mapping]] = ..., dispatches: _Optional[_Union[Dispatches, _Mapping]] = ...) -> None: ...

class Dispatches(_message.Message):
    __slots__ = ("dispatches",)
    DISPATCHES_FIELD_NUMBER: _ClassVar[int]
    dispatches: _containers.RepeatedCompositeFieldContainer[Dispatch]
    def __init__(self, dispatches: _Optional[_Iterable[_Union[Dispatch, _Mapping]]] = ...) -> None: ...

class Connected(_message.Message):
    __slots__ = ("worker_id", "versions")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    versions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, worker_id: _Optional[str] = ..., versions: _Optional[_Iterable[str]] = ...) -> None: ...

class Dispatch(_message.Message):
    __slots__ = ("run_id", "handler_id", "workflow", "step", "input", "attempt", "deadline", "resolved", "local_waits", "workflow_version")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    LOCAL_WAITS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    handler_id: str
    workflow: str
    step: str
    input: _handler_pb2.Event
    attempt: int
    deadline: _timestamp_pb2.Timestamp
    resolved: _containers.RepeatedCompositeFieldContainer[ResolvedWait]
    local_waits: bool
    workflow_version: str
    def __init__(self, run_id: _Optional[str] = ..., handler_id: _Optional[str] = ..., workflow: _Optional[str] = ..., step: _Optional[str] = ..., input: _Optional[_Union[_handler_pb2.Event, _Mapping]] = ..., attempt: _Optional[int] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved: _Optional[_Iterable[_Union[ResolvedWait, _Mapping]]] = ..., local_waits: _Optional[bool] = ..., workflow_version: _Optional[str] = ...) -> None: ...

class ResolvedWait(_message.Message):
    __slots__ = ("position", "event", "timed_out")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    position: int
    event: _handler_pb2.Event
    timed_out: bool
    def __init__(self, position: _Optional[int] = ..., event: _Optional[_Union[_handler_pb2.Event, _Mapping]] = ..., timed_out: _Optional[bool] = ...) -> None: ...

class LocalWait(_message.Message):
    __slots__ = ("position", "wait_for", "sleep", "resolved")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_FIELD_NUMBER: _ClassVar[int]
    SLEEP_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    position: int
    wait_for: WaitFor
    sleep: _duration_pb2.Duration
    resolved: bool
    def __init__(self, position: _Optional[int] = ..., wait_for: _Optional[_Union[WaitFor, _Mapping]] = ..., sleep: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., resolved: _Optional[bool] = ...) -> None: ...

class StepCallRequest(_message.Message):
    __slots__ = ("run_id", "worker_id", "seq", "local_waits", "wait_for", "sleep", "get", "set", "collect", "once_get", "once_put", "ask_human", "wait_for_key", "start_child", "wait_for_children", "set_attributes")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    LOCAL_WAITS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_FIELD_NUMBER: _ClassVar[int]
    SLEEP_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    COLLECT_FIELD_NUMBER: _ClassVar[int]
    ONCE_GET_FIELD_NUMBER: _ClassVar[int]
    ONCE_PUT_FIELD_NUMBER: _ClassVar[int]
    ASK_HUMAN_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_KEY_FIELD_NUMBER: _ClassVar[int]
    START_CHILD_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    SET_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    worker_id: str
    seq: int
    local_waits: _containers.RepeatedCompositeFieldContainer[LocalWait]
    wait_for: WaitFor
    sleep: _duration_pb2.Duration
    get: str
    set: SetValue
    collect: Collect
    once_get: str
    once_put: SetValue
    ask_human: AskHuman
    wait_for_key: WaitForKey
    start_child: StartChild
    wait_for_children: WaitForChildren
    set_attributes: _struct_pb2.Struct
    def __init__(self, run_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., seq: _Optional[int] = ..., local_waits: _Optional[_Iterable[_Union[LocalWait, _Mapping]]] = ..., wait_for: _Optional[_Union[WaitFor, _Mapping]] = ..., sleep: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., get: _Optional[str] = ..., set: _Optional[_Union[SetValue, _Mapping]] = ..., collect: _Optional[_Union[Collect, _Mapping]] = ..., once_get: _Optional[str] = ..., once_put: _Optional[_Union[SetValue, _Mapping]] = ..., ask_human: _Optional[_Union[AskHuman, _Mapping]] = ..., wait_for_key: _Optional[_Union[WaitForKey, _Mapping]] = ..., start_child: _Optional[_Union[StartChild, _Mapping]] = ..., wait_for_children: _Optional[_Union[WaitForChildren, _Mapping]] = ..., set_attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class WaitFor(_message.Message):
    __slots__ = ("type", "match", "timeout")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    type: str
    match: _struct_pb2.Struct
    timeout: _duration_pb2.Duration
    def __init__(self, type: _Optional[str] = ..., match: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class SetValue(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: _struct_pb2.Value
    def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class Collect(_message.Message):
    __slots__ = ("event", "types")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    event: _handler_pb2.Event
    types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, event: _Optional[_Union[_handler_pb2.Event, _Mapping]] = ..., types: _Optional[_Iterable[str]] = ...) -> None: ...

class AskHuman(_message.Message):
    __slots__ = ("title", "description", "answer_schema", "assignee", "deadline", "input", "input_schema", "escalation")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ESCALATION_FIELD_NUMBER: _ClassVar[int]
    title: str
    description: str
    answer_schema: _struct_pb2.Struct
    assignee: str
    deadline: _duration_pb2.Duration
    input: _struct_pb2.Struct
    input_schema: _struct_pb2.Struct
    escalation: TaskEscalation
    def __init__(self, title: _Optional[str] = ..., description: _Optional[str] = ..., answer_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., assignee: _Optional[str] = ..., deadline: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., escalation: _Optional[_Union[TaskEscalation, _Mapping]] = ...) -> None: ...

class TaskEscalation(_message.Message):
    __slots__ = ("after", "reassign", "notify")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    REASSIGN_FIELD_NUMBER: _ClassVar[int]
    NOTIFY_FIELD_NUMBER: _ClassVar[int]
    after: _duration_pb2.Duration
    reassign: str
    notify: str
    def __init__(self, after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., reassign: _Optional[str] = ..., notify: _Optional[str] = ...) -> None: ...

class WaitForKey(_message.Message):
    __slots__ = ("key", "since", "timeout")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    key: str
    since: _timestamp_pb2.Timestamp
    timeout: _duration_pb2.Duration
    def __init__(self, key: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class StartChild(_message.Message):
    __slots__ = ("workflow", "input")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    input: _struct_pb2.Struct
    def __init__(self, workflow: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class WaitForChildren(_message.Message):
    __slots__ = ("handler_ids", "timeout")
    HANDLER_IDS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    handler_ids: _containers.RepeatedScalarFieldContainer[str]
    timeout: _duration_pb2.Duration
    def __init__(self, handler_ids: _Optional[_Iterable[str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class StepCallResponse(_message.Message):
    __slots__ = ("waiting", "timed_out", "event", "value", "found", "events", "child_id", "children", "error")
    WAITING_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CHILD_ID_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    waiting: bool
    timed_out: bool
    event: _handler_pb2.Event
    value: _struct_pb2.Value
    found: bool
    events: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Event]
    child_id: str
    children: ChildrenState
    error: str
    def __init__(self, waiting: _Optional[bool] = ..., timed_out: _Optional[bool] = ..., event: _Optional[_Union[_handler_pb2.Event, _Mapping]] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., found: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[_handler_pb2.Event, _Mapping]]] = ..., child_id: _Optional[str] = ..., children: _Optional[_Union[ChildrenState, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class ChildrenState(_message.Message):
    __slots__ = ("completed", "failed", "pending", "results")
    class ResultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ChildResult
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ChildResult, _Mapping]] = ...) -> None: ...
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    completed: _containers.RepeatedScalarFieldContainer[str]
    failed: _containers.RepeatedScalarFieldContainer[str]
    pending: _containers.RepeatedScalarFieldContainer[str]
    results: _containers.MessageMap[str, ChildResult]
    def __init__(self, completed: _Optional[_Iterable[str]] = ..., failed: _Optional[_Iterable[str]] = ..., pending: _Optional[_Iterable[str]] = ..., results: _Optional[_Mapping[str, ChildResult]] = ...) -> None: ...

class ChildResult(_message.Message):
    __slots__ = ("status", "result", "error")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    status: _handler_pb2.HandlerStatus
    result: _struct_pb2.Struct
    error: str
    def __init__(self, status: _Optional[_Union[_handler_pb2.HandlerStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class FinishRunRequest(_message.Message):
    __slots__ = ("run_id", "worker_id", "sent", "written", "outcome", "error_message", "local_waits")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    SENT_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LOCAL_WAITS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    worker_id: str
    sent: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Event]
    written: _containers.RepeatedCompositeFieldContainer[_handler_pb2.Event]
    outcome: Outcome
    error_message: str
    local_waits: _containers.RepeatedCompositeFieldContainer[LocalWait]
    def __init__(self, run_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., sent: _Optional[_Iterable[_Union[_handler_pb2.Event, _Mapping]]] = ..., written: _Optional[_Iterable[_Union[_handler_pb2.Event, _Mapping]]] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., error_message: _Optional[str] = ..., local_waits: _Optional[_Iterable[_Union[LocalWait, _Mapping]]] = ...) -> None: ...

class FinishRunResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FinishRunsRequest(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[FinishRunRequest]
    def __init__(self, runs: _Optional[_Iterable[_Union[FinishRunRequest, _Mapping]]] = ...) -> None: ...

class FinishRunsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[FinishRunResult]
    def __init__(self, results: _Optional[_Iterable[_Union[FinishRunResult, _Mapping]]] = ...) -> None: ...

class FinishRunResult(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class ListWorkersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListWorkersResponse(_message.Message):
    __slots__ = ("workers",)
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    def __init__(self, workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ...) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("worker_id", "name", "workflows", "max_runs", "runs", "connected_at", "versions")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    MAX_RUNS_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    name: str
    workflows: _containers.RepeatedScalarFieldContainer[str]
    max_runs: int
    runs: _containers.RepeatedCompositeFieldContainer[RunInfo]
    connected_at: _timestamp_pb2.Timestamp
    versions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, worker_id: _Optional[str] = ..., name: _Optional[str] = ..., workflows: _Optional[_Iterable[str]] = ..., max_runs: _Optional[int] = ..., runs: _Optional[_Iterable[_Union[RunInfo, _Mapping]]] = ..., connected_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., versions: _Optional[_Iterable[str]] = ...) -> None: ...

class RunInfo(_message.Message):
    __slots__ = ("run_id", "handler_id", "step", "since")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    handler_id: str
    step: str
    since: _timestamp_pb2.Timestamp
    def __init__(self, run_id: _Optional[str] = ..., handler_id: _Optional[str] = ..., step: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
