"""Workflow definitions of a Python worker: what it registers with the server.

A :class:`Workflow` maps 1:1 onto the server's ``WorkflowDefinition`` (and so
onto the engine's ``Workflow``): steps with what they accept and emit, their
worker limit, retry policy and timeout; external event types; declared
event types with their JSON Schemas; the input schema; a whole-run timeout.
The server validates it exactly as ``engine.Register`` validates a Go
workflow, so a bad definition is refused with the engine's own message.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

from google.protobuf import duration_pb2

from wfd.v1 import service_pb2, worker_pb2

from ._common import to_struct

__all__ = ["Workflow", "EventType", "Retry", "StepFn", "Step", "check_version", "ATTRIBUTE_TYPES"]

#: The types a search attribute may be declared with.
ATTRIBUTE_TYPES = frozenset({"string", "keyword_list", "int", "double", "bool", "time"})

#: A version's name: 1 to 64 letters, digits, '.', '_' and '-' (the
#: server's flow.CheckVersion; no '@', which joins workflow@version).
_VERSION = re.compile(r"[A-Za-z0-9._-]{1,64}")


def check_version(version: str) -> None:
    """Raises ValueError unless version is a valid version name."""
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ValueError(f"version {version!r} must have 1 to 64 characters: letters, digits, '.', '_' and '-'")

#: A duration in seconds, or a timedelta.
Seconds: TypeAlias = float | int | datetime.timedelta

#: A step's code: ``fn(ctx, ev)``, a plain function (run in a thread) or a
#: coroutine function (run on the worker's event loop).
StepFn: TypeAlias = Callable[..., Any]
F = TypeVar("F", bound=StepFn)


def duration(v: Seconds | None) -> duration_pb2.Duration | None:
    """v as a Duration; None (or zero) for none."""
    if v is None:
        return None
    d = duration_pb2.Duration()
    if isinstance(v, datetime.timedelta):
        if v <= datetime.timedelta(0):
            return None
        d.FromTimedelta(v)
        return d
    if v < 0:
        raise ValueError(f"a duration cannot be negative: {v}")
    if v == 0:
        return None
    d.FromNanoseconds(int(v * 1e9))
    return d


@dataclasses.dataclass(frozen=True)
class EventType:
    """An event type the workflow takes from outside (SendEvent), with what
    it means and the JSON Schema of its data (SendEvent refuses data the
    schema refuses, with INVALID_ARGUMENT naming the failing fields)."""

    type: str
    schema: Mapping[str, Any] | None = None
    description: str = ""


@dataclasses.dataclass(frozen=True)
class Retry:
    """A step's retry policy: exponential backoff with a cap. Zero fields
    take the engine's defaults; ``max_attempts`` counts the first attempt
    (0 and 1 both mean no retry)."""

    max_attempts: int = 0
    initial_backoff: Seconds = 0
    max_backoff: Seconds = 0
    multiplier: float = 0.0


@dataclasses.dataclass(frozen=True)
class Concurrency:
    """A workflow's concurrency limit, per key of its input: at most
    ``max`` handlers run at once and ``rate`` start within any ``per``
    (seconds) per key (0: no limit of that kind). ``key`` is the input
    field (a dotted path into objects) whose value names the key; ``""``
    puts every handler in one key. A start over the limit is queued
    (status QUEUED) and runs, in order, when a slot frees, or with
    ``refuse`` is refused with RESOURCE_EXHAUSTED. Not part of the
    version: a changed limit applies to every key."""

    key: str = ""
    max: int = 0
    rate: int = 0
    per: Seconds = 0
    refuse: bool = False


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of a Workflow and its code."""

    name: str
    fn: StepFn
    accepts: tuple[str, ...]
    emits: tuple[str, ...]
    workers: int
    retry: Retry | None
    timeout: Seconds | None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)


class Workflow:
    """A workflow served by a worker: its definition and its steps' code.

    Steps are added with the :meth:`step` decorator::

        approval = Workflow("approval-py", input_schema={"type": "object"},
                            events=[EventType("approval", schema={...})])

        @approval.step(accepts=["start"], emits=["stop"])
        def decide(ctx: StepContext, ev: Event) -> None: ...

    ``external`` lists event types clients may send at any time (for steps
    that accept them); ``events`` declares outside event types with their
    schemas; ``timeout`` (seconds) bounds the whole run.

    ``search_attributes`` declares the workflow's search attributes, name →
    type (``"string"``, ``"keyword_list"``, ``"int"``, ``"double"``,
    ``"bool"`` or ``"time"``; names ``[a-z][a-z0-9_]*``, at most 32):
    ``Client.run(..., attributes=)`` gives a handler values, its steps
    update them (``ctx.set_attributes``), and ``Client.list(where=)``
    filters and sorts by them. A changed declaration makes a new version.

    ``concurrency`` (a :class:`Concurrency`) limits how many of its handlers
    run at once, and start per interval, per key of their input.

    Versions: a definition is one immutable version of the workflow.
    ``version`` names it (1 to 64 letters, digits, '.', '_' and '-');
    without one the server names it by the definition's hash. A worker may
    serve several versions of one workflow (several Workflow objects with
    the same name and different versions), each with its own steps'
    code: a handler runs the version it started on (or was upgraded to).
    A version the server does not have yet becomes the current one (the
    one ``Client.run`` starts) when it is registered, unless
    ``make_current=False`` (a standby version, promoted later with
    ``Client.set_current_version``; the versions that create a workflow are
    current anyway, the last registered winning); a version the server has
    keeps its standing either way. Registering a version the server has with
    another definition is refused with AlreadyExists.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str | None = None,
        make_current: bool = True,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        events: Sequence[EventType] = (),
        external: Sequence[str] = (),
        timeout: Seconds | None = None,
        search_attributes: Mapping[str, str] | None = None,
        concurrency: Concurrency | None = None,
    ) -> None:
        if version:
            check_version(version)
        for n, t in (search_attributes or {}).items():
            if t not in ATTRIBUTE_TYPES:
                raise ValueError(
                    f"workflow {name!r}: search attribute {n!r} has type {t!r}: want one of {', '.join(sorted(ATTRIBUTE_TYPES))}"
                )
        self.name = name
        self.version = version or ""
        self.make_current = make_current
        self.description = description
        self.input_schema = input_schema
        self.events = tuple(events)
        self.external = tuple(external)
        self.timeout = timeout
        self.search_attributes: dict[str, str] = dict(search_attributes or {})
        self.concurrency = concurrency
        self.steps: dict[str, Step] = {}

    def __repr__(self) -> str:
        v = f", version={self.version!r}" if self.version else ""
        return f"Workflow({self.name!r}{v}, steps={list(self.steps)})"

    def step(
        self,
        name: str | None = None,
        *,
        accepts: Sequence[str],
        emits: Sequence[str] = (),
        workers: int = 1,
        retry: Retry | None = None,
        timeout: Seconds | None = None,
    ) -> Callable[[F], F]:
        """Declares the decorated function as a step (named after the
        function unless ``name`` says otherwise). ``workers`` is how many
        runs of the step execute at once across all workers; ``timeout``
        (seconds) bounds one run. A plain function runs in the worker's
        thread pool with a :class:`StepContext`; a coroutine function runs
        on its event loop with an :class:`AsyncStepContext`."""

        def register(fn: F) -> F:
            n = name or fn.__name__
            if n in self.steps:
                raise ValueError(f"workflow {self.name!r}: step {n!r} is declared twice")
            if isinstance(accepts, str) or isinstance(emits, str):
                raise TypeError("accepts and emits are lists of event types, not a string")
            self.steps[n] = Step(n, fn, tuple(accepts), tuple(emits), workers, retry, timeout)
            return fn

        return register

    def definition(self) -> worker_pb2.WorkflowDefinition:
        """The wire form the worker registers."""
        d = worker_pb2.WorkflowDefinition(
            name=self.name, version=self.version, make_current=self.make_current,
            description=self.description, external_event_types=list(self.external),
            search_attributes=self.search_attributes,
        )
        if self.input_schema is not None:
            d.input_schema.CopyFrom(to_struct(self.input_schema, f"workflow {self.name!r}: input schema"))
        if (t := duration(self.timeout)) is not None:
            d.timeout.CopyFrom(t)
        if (c := self.concurrency) is not None:
            d.concurrency.CopyFrom(service_pb2.Concurrency(key=c.key, max=c.max, rate=c.rate, refuse=c.refuse))
            if (p := duration(c.per)) is not None:
                d.concurrency.per.CopyFrom(p)
        for et in self.events:
            e = service_pb2.EventType(type=et.type, description=et.description)
            if et.schema is not None:
                e.schema.CopyFrom(to_struct(et.schema, f"workflow {self.name!r}: schema of {et.type!r}"))
            d.event_types.append(e)
        for s in self.steps.values():
            sd = worker_pb2.StepDefinition(name=s.name, accepts=list(s.accepts), emits=list(s.emits), workers=s.workers)
            if s.retry is not None:
                sd.retry.max_attempts = s.retry.max_attempts
                sd.retry.multiplier = s.retry.multiplier
                if (b := duration(s.retry.initial_backoff)) is not None:
                    sd.retry.initial_backoff.CopyFrom(b)
                if (b := duration(s.retry.max_backoff)) is not None:
                    sd.retry.max_backoff.CopyFrom(b)
            if (t := duration(s.timeout)) is not None:
                sd.timeout.CopyFrom(t)
            d.steps.append(sd)
        return d
