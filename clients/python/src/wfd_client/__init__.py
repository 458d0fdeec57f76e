"""The Python client of wfd's WorkflowService: start handlers, follow their
streams, send them events, list, cancel and release them; list and answer
human tasks; publish events under a key.

Synchronous::

    from wfd_client import Client, is_terminal, struct_to_dict

    with Client("127.0.0.1:7233") as c:
        h = c.run("approval", {"amount": 42})
        for rec in c.stream(h.handler_id):
            print(rec.seq, rec.WhichOneof("kind"))
            if rec.WhichOneof("kind") == "idle_changed" and rec.idle_changed.idle:
                c.send(h.handler_id, "approval", {"approved": True})
        print(struct_to_dict(c.get(h.handler_id).result))

asyncio: :class:`AsyncClient` has the same methods as coroutines, and
``stream``/``list_all`` return async iterators::

    async with AsyncClient("127.0.0.1:7233") as c:
        h = await c.run("echo", {"x": 1})
        async for rec in c.stream(h.handler_id):
            ...

Schedules (a cron expression or an interval; each tick starts a handler
``sched:<id>:<tick>``)::

    with Client("127.0.0.1:7233") as c:
        c.create_schedule("nightly", workflow="report", cron="0 2 * * *", time_zone="Europe/Paris")
        c.pause_schedule("nightly", note="maintenance")
        res = c.trigger_schedule("nightly")                 # res.started: the handler ids

Human tasks and published events::

    with Client("127.0.0.1:7233") as c:
        for task in c.list_all_tasks(assignee="ada", statuses=["pending"]):
            c.complete_task(task.task_id, {"approved": True}, completed_by="ada")
        res = c.publish("payment:A1", {"amount": 9.5})   # res.event_id, res.seq, res.woken

The messages returned are the generated ones (``wfd.v1.handler_pb2.Handler``,
``Record``, ...); :func:`struct_to_dict` and :func:`message_to_dict` turn
them into plain dicts, and every Struct argument accepts a plain dict.

Why grpcio
----------
The server speaks Connect, gRPC and gRPC-Web on one port, so a Python client
could use grpcio or the Connect Python runtime (``connectrpc``). This package
uses grpcio: it is the reference gRPC implementation, it has both a
synchronous API and ``grpc.aio`` for asyncio on one channel implementation,
it manages connections the way a long-lived client needs (reconnect with
backoff, keepalive pings that notice a dead peer under a quiet stream), and
the server speaks gRPC natively, so nothing is lost. The Connect runtime
would need a second code generator (``protoc-gen-connectrpc``) beside the
grpcio-tools stubs the repository already generates
(``wfd.v1.service_pb2_grpc``), and what it adds, the Connect protocol's
HTTP/1.1 and JSON, a Python program talking to wfd does not need (browsers
and curl still have them).

Timeouts and retries
--------------------
Unary calls get a default timeout (10 s, ``timeout=``) that covers their
retries. A call that fails with UNAVAILABLE (no connection, a dropped
connection, a server shutting down, an unavailable store) is tried again
with exponential backoff and jitter (:class:`RetryPolicy`; a server's
RetryInfo hint lengthens the pause up to its ``max_backoff``); no other code
is retried. The retry loop is the client's own rather than grpc's service-config
``retryPolicy``: grpc core caps that at 5 attempts and retries only before
any response, while this loop shares one policy with the stream reconnects
and keeps the timeout over all attempts.

Retrying is safe for every call: :meth:`Client.run` sends a handler id (a new
UUIDv7 unless ``handler_id=`` gives one) so a repeated RunWorkflow returns the
handler the first one started; :meth:`Client.send` gives every event an
idempotency key (a UUIDv7 unless ``idempotency_key=`` gives one) so a retry
is acknowledged without delivering the event twice (except a retry of the
event that finished the handler: the server answers FailedPrecondition, as
it checks the handler's status before the key); :meth:`Client.publish`
gives every publication an event id (a UUIDv7 unless ``event_id=`` gives
one) so a retry is logged once; :meth:`Client.complete_task` returns the
task when a retry finds it completed with the same answer and
``completed_by`` (the reply to the attempt that did it was lost);
:meth:`Client.trigger_schedule` sends its instant, which names the run, and
a backfill's runs are named by their ticks, so retries start no second run;
reads are reads; a
repeated cancel or release leaves the handler as the first left it (the
repeat may raise FailedPrecondition). UUIDv7s come from a small built-in
generator (:func:`uuid7`, the layout of Go's ``uuid.NewV7``): Python 3.11's
uuid module has none.

:meth:`Client.stream` is not retried as a call: it resumes itself after the
last sequence number it yielded, so each record arrives exactly once.

Workers
-------
:mod:`wfd_client.worker` defines workflows in Python and serves their
steps to the server (decorated plain or ``async`` functions)::

    from wfd_client.worker import Worker, Workflow

    wf = Workflow("greet-py")

    @wf.step(accepts=["start"], emits=["stop"])
    def greet(ctx, ev):
        ctx.send("stop", {"greeting": "hello " + ev.data.get("name", "you")})

    Worker("127.0.0.1:7233", workflows=[wf]).run()

Its :class:`Worker`, :class:`AsyncWorker`, :class:`StepContext`,
:class:`AsyncStepContext`, :class:`Waiting` and :class:`WaitTimeout` are
also here (its ``Workflow`` and ``Event`` are not: those names here are the
API's messages).

Errors
------
Every failed call raises a :class:`WfdError` subclass named after its gRPC
code (:class:`NotFound` for an unknown handler or workflow,
:class:`InvalidArgument` for a bad request, an event type the handler does
not accept or a task answer that fails the task's schema,
:class:`FailedPrecondition` for an event to a finished handler, a release of
a busy one, an answer to a task that is no longer pending or a schedule update
at a stale ``expect_revision``, :class:`AlreadyExists` for a handler id used by
another workflow, a schedule id in use or a workflow version registered with another definition, :class:`Unavailable` once retries are spent), with
``err.code`` (a ``grpc.StatusCode``), ``err.message`` (the server's) and
``err.retry_delay`` (the server's RetryInfo hint, if any). Input the client
refuses before calling (data that is not JSON-like) is InvalidArgument too.
"""

from __future__ import annotations

from ._aio import AsyncClient, AsyncRecordStream
from ._common import (
    DEFAULT_TARGET,
    DEFAULT_TIMEOUT,
    Event,
    EventType,
    Handler,
    HandlerStatus,
    Identity,
    Namespace,
    Record,
    Residency,
    RetryPolicy,
    AttributesLike,
    PublishResult,
    PublishedEvent,
    Replica,
    SendOrStartResult,
    StartEvent,
    Stats,
    Task,
    TaskStatus,
    Workflow,
    WorkflowVersion,
    HandlerUpgrade,
    UpgradeOutcome,
    UpgradeResult,
    attributes_of,
    is_finished,
    is_terminal,
    message_to_dict,
    struct_to_dict,
    task_to_dict,
    to_struct,
)
from ._schedules import (
    OverlapLike,
    OverlapPolicy,
    Schedule,
    ScheduleInfo,
    ScheduleOutcome,
    ScheduleOutcomeKind,
    TriggerResult,
    schedule_fields,
)
from ._sync import Client, RecordStream
from ._tls import is_loopback_target, tls_credentials
from ._uuid import uuid7
from .worker import AsyncStepContext, AsyncWorker, StepContext, Waiting, WaitTimeout, Worker
from .errors import (
    Aborted,
    AlreadyExists,
    Cancelled,
    DataLoss,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
    WfdError,
)

__version__ = "0.1.0"

__all__ = [
    "Client",
    "tls_credentials",
    "is_loopback_target",
    "AsyncClient",
    "RecordStream",
    "AsyncRecordStream",
    "RetryPolicy",
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "Handler",
    "Record",
    "Workflow",
    "WorkflowVersion",
    "HandlerUpgrade",
    "UpgradeOutcome",
    "UpgradeResult",
    "EventType",
    "Stats",
    "Event",
    "HandlerStatus",
    "Residency",
    "Task",
    "TaskStatus",
    "PublishResult",
    "SendOrStartResult",
    "StartEvent",
    "AttributesLike",
    "Identity",
    "Namespace",
    "PublishedEvent",
    "Replica",
    "Schedule",
    "ScheduleInfo",
    "ScheduleOutcome",
    "ScheduleOutcomeKind",
    "OverlapPolicy",
    "OverlapLike",
    "TriggerResult",
    "schedule_fields",
    "is_terminal",
    "is_finished",
    "struct_to_dict",
    "attributes_of",
    "message_to_dict",
    "task_to_dict",
    "to_struct",
    "uuid7",
    "WfdError",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    "Worker",
    "AsyncWorker",
    "StepContext",
    "AsyncStepContext",
    "Waiting",
    "WaitTimeout",
]
