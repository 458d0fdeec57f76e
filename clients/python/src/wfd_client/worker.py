"""Step workers: define workflows in Python and serve their steps to wfd.

A worker connects to a wfd server (WorkerService, on the same port as the
client API), registers its workflows' definitions and takes the step runs
the server dispatches to it. The server keeps all handler state; a step's
context operations are calls to the server, which executes them on the
run's real engine context, so a step behaves exactly as a Go step in
process (waits, memos, children, limits, re-runs)::

    from wfd_client.worker import Event, EventType, StepContext, Waiting, Worker, Workflow

    approval = Workflow("approval-py", input_schema={"type": "object"},
                        events=[EventType("approval", schema={"type": "object", "required": ["approved"],
                                "properties": {"approved": {"type": "boolean"}}})])

    @approval.step(accepts=["start"], emits=["stop"])
    def decide(ctx: StepContext, ev: Event) -> None:
        try:
            answer = ctx.wait_for("approval", timeout=3600)
        except Waiting:
            ctx.write("question", {"request": ev.data})   # once per park
            raise
        ctx.send("stop", {"approved": answer.data["approved"], "request": ev.data})

    Worker("127.0.0.1:7233", workflows=[approval], name="billing", max_runs=8).run()

A plain function runs in a thread pool with a :class:`StepContext`; a
coroutine function (``async def``) runs on the worker's event loop with an
:class:`AsyncStepContext`; one worker serves both. :class:`AsyncWorker` is
the same worker for a program that already runs an event loop
(``await AsyncWorker(...).run()``).

Re-runs: a wait whose event has not come raises :class:`Waiting`; the run
parks (the handler is idle and may be released) and, when the event comes,
the step runs again from the top with the same input, its earlier waits now
answering at once. Let Waiting through (it is a BaseException, so ``except
Exception`` does not catch it); what the step sent and wrote up to then is
kept (write in ``except Waiting: ... raise`` to note each park once). A step
that swallows it still parks, without what it did after the park.

Failures: an exception fails the attempt with its message (the step's retry
policy decides what follows); a wait's timeout raises :class:`WaitTimeout`
(a TimeoutError). Runs are at least once: a worker lost mid-run has its runs
dispatched again, from the top, to another worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import grpc

from . import _common as c
from ._tls import with_namespace, with_token
from ._worker_context import (
    AsyncStepContext,
    Children,
    ChildResult,
    Escalation,
    Event,
    OperationError,
    Published,
    RunCancelled,
    StepContext,
    TaskAnswer,
    UndeclaredEvent,
    Waiting,
    WaitTimeout,
)
from ._worker_core import Core
from ._worker_defs import Concurrency, EventType, Retry, Workflow

__all__ = [
    "Workflow",
    "Concurrency",
    "Escalation",
    "EventType",
    "Retry",
    "Worker",
    "AsyncWorker",
    "StepContext",
    "AsyncStepContext",
    "Event",
    "TaskAnswer",
    "Published",
    "Children",
    "ChildResult",
    "Waiting",
    "WaitTimeout",
    "RunCancelled",
    "UndeclaredEvent",
    "OperationError",
    "START",
    "STOP",
]

#: The event a handler starts with (its data is the handler's input).
START = "start"
#: The event that ends a handler (its data is the result).
STOP = "stop"


class AsyncWorker:
    """A worker for asyncio programs: ``await worker.run()`` serves until
    :meth:`stop` (or the task is cancelled).

    ``target`` is the server's address (``"127.0.0.1:7233"``); ``workflows``
    the workflows it serves; ``name`` identifies it to operators (``wfd
    workers``); ``max_runs`` is how many step runs it executes at once.
    StepCall, FinishRun and FinishRuns that fail with UNAVAILABLE are
    retried per ``retry`` (the client's :class:`wfd_client.RetryPolicy`)
    and time out after ``call_timeout`` seconds; a lost connection is made
    again after ``backoff`` seconds, doubling to 5 s. ``credentials``,
    ``metadata``, ``options`` and ``token`` are those of
    :class:`wfd_client.Client`; ``namespace`` is the namespace it serves its
    workflows in (None: "default").

    A registration the server refuses (a definition that fails validation:
    InvalidArgument; the name of a built-in workflow: FailedPrecondition; a
    version the server has with another definition: AlreadyExists) ends
    run() with that error.

    One worker may serve several versions of a workflow (Workflow objects
    with one name and different ``version=``): each dispatched run goes to
    the code of the version its handler runs.
    """

    def __init__(
        self,
        target: str = c.DEFAULT_TARGET,
        *,
        workflows: Sequence[Workflow],
        name: str = "python",
        max_runs: int = 1,
        retry: c.RetryPolicy | None = None,
        call_timeout: float | None = 30.0,
        backoff: float = 0.1,
        credentials: grpc.ChannelCredentials | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
        options: Sequence[tuple[str, Any]] = (),
        token: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self._core = Core(
            target, workflows, name=name, max_runs=max_runs, retry=retry, call_timeout=call_timeout,
            credentials=credentials,
            metadata=with_namespace(with_token(target, token, credentials is not None, metadata), namespace),
            options=options, backoff=backoff,
        )

    @property
    def worker_id(self) -> str:
        """The server's id of the current (or last) connection; "" before the first."""
        return self._core.worker_id

    async def run(self) -> None:
        """Connects and serves until stop(); reconnects on its own. Runs in
        progress are abandoned when it returns (the server dispatches them
        again to another worker)."""
        await self._core.run()

    def stop(self) -> None:
        """Makes run() return; safe from any thread and from a signal handler."""
        self._core.stop()


class Worker(AsyncWorker):
    """A worker for synchronous programs: :meth:`run` blocks, running the
    worker's own event loop, until :meth:`stop` (from another thread or a
    signal handler) or Ctrl-C. The arguments are those of
    :class:`AsyncWorker`."""

    def run(self) -> None:  # type: ignore[override]
        try:
            asyncio.run(self._core.run())
        except KeyboardInterrupt:
            pass
