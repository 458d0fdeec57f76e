"""What the sync and the asyncio client share: options, requests, conversions."""

from __future__ import annotations

import dataclasses
import datetime
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import grpc
from google.protobuf import duration_pb2, json_format, struct_pb2

from wfd.v1 import handler_pb2, service_pb2

from ._uuid import uuid7
from .errors import Internal, InvalidArgument

# Messages the client returns, under short names.
Handler: TypeAlias = handler_pb2.Handler
Record: TypeAlias = handler_pb2.Record
Workflow: TypeAlias = service_pb2.Workflow
EventType: TypeAlias = service_pb2.EventType
Stats: TypeAlias = service_pb2.GetStatsResponse
Event: TypeAlias = handler_pb2.Event
HandlerStatus = handler_pb2.HandlerStatus
Residency = handler_pb2.Residency
Task: TypeAlias = handler_pb2.Task
TaskStatus = handler_pb2.TaskStatus
PublishResult: TypeAlias = service_pb2.PublishEventResponse
Identity: TypeAlias = service_pb2.GetIdentityResponse
Replica: TypeAlias = service_pb2.Replica
Namespace: TypeAlias = service_pb2.Namespace
PublishedEvent: TypeAlias = service_pb2.PublishedEvent
WorkflowVersion: TypeAlias = service_pb2.WorkflowVersion
HandlerUpgrade: TypeAlias = service_pb2.HandlerUpgrade
UpgradeResult: TypeAlias = service_pb2.UpgradeHandlersResponse
UpgradeOutcome = service_pb2.UpgradeOutcome

#: Struct data as the client accepts it: a JSON-like mapping, a Struct, or None (empty).
StructLike: TypeAlias = Mapping[str, Any] | struct_pb2.Struct | None
#: A status by enum value (HandlerStatus.Value("HANDLER_STATUS_RUNNING")) or
#: by name ("running", "HANDLER_STATUS_RUNNING").
StatusLike: TypeAlias = int | str
ResidencyLike: TypeAlias = int | str
#: A task status by enum value (TaskStatus.Value("TASK_STATUS_PENDING")) or
#: by name ("pending", "TASK_STATUS_PENDING").
TaskStatusLike: TypeAlias = int | str
#: A duration in seconds, or a timedelta.
DurationLike: TypeAlias = float | int | datetime.timedelta
#: Search attributes by name: str (string), a list of str (keyword_list),
#: int (int, within ±(2**53-1)), float (double), bool (bool), an aware
#: datetime or an RFC 3339 str (time); None deletes one in a step's update
#: and is ignored at start. A Struct is taken as it is.
AttributesLike: TypeAlias = Mapping[str, Any] | struct_pb2.Struct

DEFAULT_TARGET = "127.0.0.1:7233"
DEFAULT_TIMEOUT = 10.0
#: How long WaitHandler waits when the request sets no timeout (seconds).
DEFAULT_WAIT = 60.0
MAX_RECEIVE_BYTES = 64 << 20  # the largest response the server sends
# What the client sends: no limit of its own (grpc's is none, said here so
# that it stays so). The server takes a worker's StepCall and FinishRun as
# large as a run's output may be (16 × --max-payload-bytes and framing) and
# refuses a larger one itself, with RESOURCE_EXHAUSTED.
MAX_SEND_BYTES = -1
KEEPALIVE_TIME_MS = 30_000
KEEPALIVE_TIMEOUT_MS = 10_000
BACKOFF_JITTER = 0.2


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How often and after what pauses a unary call that failed with
    UNAVAILABLE is tried again, and how many stream reconnects in a row
    without progress a stream makes before it gives up.

    The pause doubles from ``initial_backoff`` up to ``max_backoff``
    (seconds), with 20% jitter either way. The defaults ride out about seven
    seconds without a server. ``max_attempts`` counts the first attempt: 1
    disables retries. A server's RetryInfo hint (wfd sends one second with
    UNAVAILABLE from its store) lengthens a unary call's pause up to
    ``max_backoff``.
    """

    max_attempts: int = 8
    initial_backoff: float = 0.1
    max_backoff: float = 2.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.initial_backoff <= 0 or self.max_backoff <= 0:
            raise ValueError("RetryPolicy backoffs must be positive")

    def backoff(self, retry: int) -> float:
        """The pause in seconds before retry number ``retry`` (1 for the first)."""
        base = min(self.initial_backoff * 2.0 ** min(retry - 1, 32), max(self.max_backoff, self.initial_backoff))
        return base * (1 + BACKOFF_JITTER * (2 * random.random() - 1))

    def pause(self, retry: int, hint: float | None) -> float:
        """The pause before retry number ``retry`` of a unary call: the
        backoff, or the server's hint if longer, capped at max_backoff."""
        b = self.backoff(retry)
        if hint is None or hint <= b:
            return b
        return min(hint, max(self.max_backoff, b))


def channel_options(retry: RetryPolicy, extra: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """grpc channel arguments: reconnect at the pace of the retries (grpc's
    own default starts at one second and lets retries fail fast meanwhile),
    keepalive pings that notice a dead peer under a quiet stream, and the
    server's largest message."""
    initial_ms = max(1, int(retry.initial_backoff * 1000))
    return [
        ("grpc.initial_reconnect_backoff_ms", initial_ms),
        ("grpc.min_reconnect_backoff_ms", initial_ms),
        ("grpc.max_reconnect_backoff_ms", max(initial_ms, int(retry.max_backoff * 1000))),
        ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
        ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
        # Retries are the client's own (see RetryPolicy), not grpc's.
        ("grpc.enable_retries", 0),
        *extra,
    ]


# --- conversions -------------------------------------------------------------


def to_struct(data: StructLike, what: str = "data") -> struct_pb2.Struct:
    """Converts a JSON-like mapping to a protobuf Struct (None: empty).

    Numbers become doubles, as in JSON. A value that JSON cannot hold is
    InvalidArgument, raised before any call.
    """
    if data is None:
        return struct_pb2.Struct()
    if isinstance(data, struct_pb2.Struct):
        return data
    if not isinstance(data, Mapping):
        raise InvalidArgument(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"client: {what}: want a mapping or a Struct, got {type(data).__name__}",
        )
    s = struct_pb2.Struct()
    try:
        s.update(data)
    except (ValueError, TypeError, AttributeError) as e:
        raise InvalidArgument(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"client: {what} is not JSON-like (string keys; str, number, bool, None, list, dict values): {e}",
        ) from e
    return s


def rfc3339(t: datetime.datetime, what: str = "time") -> str:
    """An aware datetime as an RFC 3339 string in UTC (``...Z``, with
    microseconds when it has them); a naive one is InvalidArgument."""
    if t.tzinfo is None or t.utcoffset() is None:
        raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: {what} must be an aware datetime (with a tzinfo)")
    return t.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def to_attributes(attrs: AttributesLike | None, what: str = "attributes") -> struct_pb2.Struct | None:
    """Search attributes as the Struct the API takes (None: none given):
    datetimes become RFC 3339 strings (:func:`rfc3339`), tuples lists;
    the rest is checked as :func:`to_struct` checks it. The server checks
    the names and types against the workflow's declarations."""
    if attrs is None:
        return None
    if isinstance(attrs, struct_pb2.Struct):
        return attrs
    if not isinstance(attrs, Mapping):
        raise InvalidArgument(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"client: {what}: want a mapping of attributes by name, got {type(attrs).__name__}",
        )
    out: dict[str, Any] = {}
    for k, v in attrs.items():
        if isinstance(v, datetime.datetime):
            v = rfc3339(v, f"{what}[{k!r}]")
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return to_struct(out, what)


def attributes_of(h: Handler) -> dict[str, Any]:
    """A handler's search attributes as a dict (``{}`` for none): times as
    RFC 3339 strings, keyword lists as lists, whole numbers as int (as
    :func:`struct_to_dict` makes them)."""
    return struct_to_dict(h.attributes if h.HasField("attributes") else None)


def struct_to_dict(s: struct_pb2.Struct | None) -> dict[str, Any]:
    """Converts a Struct (a handler's result, an event's data) to a dict.

    Numbers come back as they went in where JSON allows: whole numbers as
    int, others as float. None or an unset Struct is {}.
    """
    if s is None:
        return {}
    return {k: _value(v) for k, v in s.fields.items()}


def _value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "number_value":
        n = v.number_value
        return int(n) if n.is_integer() and abs(n) <= 2**53 else n
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "struct_value":
        return struct_to_dict(v.struct_value)
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    return None


def message_to_dict(m: Any) -> dict[str, Any]:
    """Converts any message the client returns (a Handler, a Record, Stats)
    to a JSON-like dict with the proto field names."""
    out: dict[str, Any] = json_format.MessageToDict(m, preserving_proto_field_name=True)
    return out


def task_to_dict(t: Task) -> dict[str, Any]:
    """Converts a Task to a JSON-like dict with the proto field names (enum
    names such as "TASK_STATUS_PENDING", RFC 3339 times), with ``answer``
    and ``answer_schema`` as the plain dicts :func:`struct_to_dict` makes
    (whole numbers as int). Both are present, ``{}`` when unset."""
    out = message_to_dict(t)
    out["answer_schema"] = struct_to_dict(t.answer_schema if t.HasField("answer_schema") else None)
    out["answer"] = struct_to_dict(t.answer if t.HasField("answer") else None)
    return out


def _status(v: StatusLike) -> int:
    if isinstance(v, str):
        name = v.upper()
        if not name.startswith("HANDLER_STATUS_"):
            name = "HANDLER_STATUS_" + name
        try:
            return int(handler_pb2.HandlerStatus.Value(name))
        except ValueError:
            raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: unknown status {v!r}") from None
    return int(v)


def _task_status(v: TaskStatusLike) -> int:
    if isinstance(v, str):
        name = v.upper()
        if not name.startswith("TASK_STATUS_"):
            name = "TASK_STATUS_" + name
        try:
            return int(handler_pb2.TaskStatus.Value(name))
        except ValueError:
            raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: unknown task status {v!r}") from None
    return int(v)


def _residency(v: ResidencyLike) -> int:
    if isinstance(v, str):
        name = v.upper()
        if not name.startswith("RESIDENCY_"):
            name = "RESIDENCY_" + name
        try:
            return int(handler_pb2.Residency.Value(name))
        except ValueError:
            raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: unknown residency {v!r}") from None
    return int(v)


def _duration(v: DurationLike, what: str = "idle_for") -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    if isinstance(v, datetime.timedelta):
        d.FromTimedelta(v)
    else:
        if v < 0:
            raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: {what} {v} is negative")
        d.FromNanoseconds(int(v * 1e9))
    return d


def seconds(v: DurationLike | None) -> float:
    """A duration in seconds (0 for None)."""
    if v is None:
        return 0.0
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    return float(v)


def wait_timeout(timeout: float | None, wait: DurationLike | None) -> float | None:
    """The timeout of a call that waits up to ``wait`` on the server: the
    call's own timeout would otherwise end it first."""
    if timeout is None or wait is None:
        return timeout
    return timeout + seconds(wait)


def wait_request(handler_id: str, wait: DurationLike | None) -> service_pb2.WaitHandlerRequest:
    req = service_pb2.WaitHandlerRequest(handler_id=handler_id)
    if wait is not None:
        req.timeout.CopyFrom(_duration(wait, "wait"))
    return req


def stream_request(
    handler_id: str, after: int, from_head: bool, include_internal: bool
) -> service_pb2.StreamEventsRequest:
    return service_pb2.StreamEventsRequest(
        handler_id=handler_id, after_seq=after, from_head=from_head, include_internal=include_internal
    )


def check_stream_options(after: int, from_head: bool) -> None:
    if from_head and after != 0:
        raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, "client: from_head and after exclude each other")


# --- requests ----------------------------------------------------------------


#: An event a start delivers with the creation: ``(type, data)``.
StartEvent: TypeAlias = tuple[str, StructLike]


@dataclasses.dataclass(frozen=True)
class SendOrStartResult:
    """What :meth:`Client.send_or_start` did: the handler once the event is
    durable, and whether this call created it."""

    handler: Handler
    started: bool


def run_request(
    workflow: str, input: StructLike, handler_id: str | None, wait: DurationLike | None = None,
    version: str | None = None, events: Iterable[StartEvent] | None = None,
    attributes: AttributesLike | None = None,
) -> service_pb2.RunWorkflowRequest:
    req = service_pb2.RunWorkflowRequest(
        workflow=workflow,
        input=to_struct(input, "input"),
        handler_id=handler_id or str(uuid7()),
        version=version or "",
    )
    for i, (type, data) in enumerate(events or ()):
        req.events.append(handler_pb2.Event(type=type, data=to_struct(data, f"events[{i}].data")))
    if (a := to_attributes(attributes)) is not None:
        req.attributes.CopyFrom(a)
    if wait is not None:
        req.wait.CopyFrom(_duration(wait, "wait"))
    return req


def send_or_start_request(
    handler_id: str, workflow: str, input: StructLike, version: str | None,
    type: str, data: StructLike, idempotency_key: str | None, wait: DurationLike | None = None,
    attributes: AttributesLike | None = None,
) -> service_pb2.SendEventRequest:
    req = send_request(handler_id, type, data, idempotency_key, wait)
    req.start.CopyFrom(service_pb2.StartIfMissing(workflow=workflow, input=to_struct(input, "input"), version=version or ""))
    if (a := to_attributes(attributes)) is not None:
        req.start.attributes.CopyFrom(a)
    return req


def send_request(
    handler_id: str, type: str, data: StructLike, idempotency_key: str | None, wait: DurationLike | None = None
) -> service_pb2.SendEventRequest:
    req = service_pb2.SendEventRequest(
        handler_id=handler_id,
        event=handler_pb2.Event(type=type, data=to_struct(data, "data")),
        idempotency_key=idempotency_key or str(uuid7()),
    )
    if wait is not None:
        req.wait.CopyFrom(_duration(wait, "wait"))
    return req


def list_tasks_request(
    *,
    statuses: Iterable[TaskStatusLike] | None,
    assignee: str | None,
    workflow: str | None,
    handler_id: str | None,
    page_size: int | None,
    page_token: str | None,
    mine: bool = False,
    claim: str | None = None,
    overdue: bool = False,
) -> service_pb2.ListTasksRequest:
    _check_page_size(page_size)
    if isinstance(statuses, (str, int)):
        statuses = [statuses]
    return service_pb2.ListTasksRequest(
        statuses=[_task_status(s) for s in statuses or ()],  # type: ignore[misc]
        assignee=assignee or "",
        mine=bool(mine),
        workflow=workflow or "",
        handler_id=handler_id or "",
        claim=_task_claim(claim),
        overdue=bool(overdue),
        page_size=page_size or 0,
        page_token=page_token or "",
    )


def _task_claim(claim: str | None) -> service_pb2.TaskClaim.ValueType:
    """"claimed", "unclaimed" or None (either) as a TaskClaim."""
    if claim is None:
        return service_pb2.TASK_CLAIM_UNSPECIFIED
    if claim == "claimed":
        return service_pb2.TASK_CLAIM_CLAIMED
    if claim == "unclaimed":
        return service_pb2.TASK_CLAIM_UNCLAIMED
    raise ValueError(f'claim must be "claimed", "unclaimed" or None, not {claim!r}')


def complete_task_request(
    task_id: str, answer: StructLike, completed_by: str | None
) -> service_pb2.CompleteTaskRequest:
    return service_pb2.CompleteTaskRequest(
        task_id=task_id, answer=to_struct(answer, "answer"), completed_by=completed_by or ""
    )


def publish_request(
    key: str, data: StructLike, handler_id: str | None, event_id: str | None
) -> service_pb2.PublishEventRequest:
    return service_pb2.PublishEventRequest(
        key=key,
        data=to_struct(data, "data"),
        handler_id=handler_id or "",
        event_id=event_id or str(uuid7()),
    )


def cancelled_as_asked(t: Task, req: service_pb2.CancelTaskRequest) -> bool:
    """Whether t was cancelled as req asks (a retry of a call that got
    through)."""
    return (t.status == handler_pb2.TaskStatus.Value("TASK_STATUS_CANCELLED") and t.cancel_reason == req.reason
            and t.completed_by == req.cancelled_by)


def completed_as_asked(t: Task, req: service_pb2.CompleteTaskRequest) -> bool:
    """Whether t is completed with req's answer and completed_by: what a
    retried CompleteTask finds when an earlier attempt, whose reply was
    lost, got through."""
    return (
        t.status == handler_pb2.TaskStatus.Value("TASK_STATUS_COMPLETED")
        and t.completed_by == req.completed_by
        and struct_to_dict(t.answer) == struct_to_dict(req.answer)
    )


def _check_page_size(page_size: int | None) -> None:
    if page_size is not None and not 0 <= page_size <= 2**31 - 1:
        raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: page size {page_size} out of range")


def list_request(
    *,
    workflow: str | None,
    statuses: Iterable[StatusLike] | None,
    idle_only: bool,
    idle_for: DurationLike | None,
    residency: ResidencyLike | None,
    page_size: int | None,
    page_token: str | None,
    workflow_version: str | None = None,
    where: str | None = None,
) -> service_pb2.ListHandlersRequest:
    _check_page_size(page_size)
    if isinstance(statuses, (str, int)):
        statuses = [statuses]
    req = service_pb2.ListHandlersRequest(
        workflow=workflow or "",
        workflow_version=workflow_version or "",
        statuses=[_status(s) for s in statuses or ()],  # type: ignore[misc]
        idle_only=idle_only,
        residency=_residency(residency) if residency is not None else 0,  # type: ignore[arg-type]
        where=where or "",
        page_size=page_size or 0,
        page_token=page_token or "",
    )
    if idle_for is not None:
        req.idle_for.CopyFrom(_duration(idle_for))
    return req


def upgrade_request(
    workflow: str,
    from_version: str,
    *,
    to_version: str | None,
    handler_ids: Iterable[str] | None,
    dry_run: bool,
    page_size: int | None,
    page_token: str | None,
) -> service_pb2.UpgradeHandlersRequest:
    _check_page_size(page_size)
    if isinstance(handler_ids, str):
        handler_ids = [handler_ids]
    return service_pb2.UpgradeHandlersRequest(
        workflow=workflow, from_version=from_version, to_version=to_version or "",
        handler_ids=list(handler_ids or ()), dry_run=dry_run, page_size=page_size or 0, page_token=page_token or "",
    )


def only_workflow(res: service_pb2.ListWorkflowsResponse, name: str) -> Workflow:
    """The one workflow a ListWorkflows for name returned."""
    if len(res.workflows) != 1:
        raise Internal(grpc.StatusCode.INTERNAL, f"client: the server listed {len(res.workflows)} workflows named {name!r}")
    return res.workflows[0]


def published_list_request(
    *,
    key: str | None,
    since: datetime.datetime | None,
    handler_id: str | None,
    page_size: int | None,
    page_token: str | None,
) -> service_pb2.ListPublishedEventsRequest:
    _check_page_size(page_size)
    req = service_pb2.ListPublishedEventsRequest(
        key=key or "", handler_id=handler_id or "", page_size=page_size or 0, page_token=page_token or "",
    )
    if since is not None:
        if since.tzinfo is None:
            raise InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, "client: since must be an aware datetime (with a tzinfo)")
        req.since.FromDatetime(since)
    return req


def is_terminal(rec: Record) -> bool:
    """Whether rec is a handler's last record (handler_finished)."""
    return bool(rec.WhichOneof("kind") == "handler_finished")


_TERMINAL = frozenset(
    int(handler_pb2.HandlerStatus.Value(n))
    for n in ("HANDLER_STATUS_COMPLETED", "HANDLER_STATUS_FAILED", "HANDLER_STATUS_CANCELLED")
)


def is_finished(h: Handler) -> bool:
    """Whether the handler has reached a terminal status (completed, failed, cancelled)."""
    return h.status in _TERMINAL


END_OF_STREAM = "client: stream ended before the handler finished"
