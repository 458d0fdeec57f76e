"""What a worker's step uses to talk to its handler: StepContext (plain
functions, in a thread) and AsyncStepContext (coroutines, on the loop).

Every operation but send and write is a StepCall the server executes on the
run's real engine context, so waits, memos, children and limits are the
engine's own. Sends and writes are kept and travel with FinishRun. When the
dispatch allows it (Dispatch.local_waits), wait_for and sleep are answered
here instead, from the dispatch's resolved waits or by parking, and reported
with the next StepCall or FinishRun (LocalWait), which the server checks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import datetime
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from google.protobuf import json_format, struct_pb2, timestamp_pb2

from wfd.v1 import handler_pb2, worker_pb2

from ._common import AttributesLike, StructLike, _value, struct_to_dict, to_attributes, to_struct
from ._worker_defs import Seconds, duration

__all__ = [
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
    "StepContext",
    "AsyncStepContext",
]


# --- what operations return ----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Event:
    """An event as a step sees it: its type, its data as a dict, its id."""

    type: str
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    id: str = ""


@dataclasses.dataclass(frozen=True)
class TaskAnswer:
    """A person's answer to a task (ask_human), or its cancellation
    (``cancelled``, with ``reason``; ``data`` is empty then).
    ``completed_by`` and ``completed_at`` say who answered or cancelled,
    and when."""

    data: dict[str, Any]
    completed_by: str
    completed_at: datetime.datetime | None
    cancelled: bool = False
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Published:
    """An event published under a key (wait_for_key)."""

    id: str
    key: str
    data: dict[str, Any]
    at: datetime.datetime | None
    handler_id: str


@dataclasses.dataclass(frozen=True)
class ChildResult:
    """How a child ended: its status name ("completed", "failed",
    "cancelled"), its result, its error."""

    status: str
    result: dict[str, Any]
    error: str


@dataclasses.dataclass(frozen=True)
class Children:
    """Where a set of children stands (wait_for_children)."""

    completed: list[str]
    failed: list[str]
    pending: list[str]
    results: dict[str, ChildResult]


# --- how operations end otherwise ------------------------------------------------


class Waiting(BaseException):
    """The run parks: what it waits for has not happened yet. The step must
    let it through; when the event arrives, the step runs again from the
    top and this wait answers at once.

    It derives from BaseException (as asyncio.CancelledError does) so that
    ``except Exception:`` does not swallow it by accident. A step that
    swallows it anyway still parks: once the server answered "waiting" the
    run ends waiting whatever the step does next, and later operations
    raise Waiting again.
    """


class WaitTimeout(TimeoutError):
    """A wait's timeout passed (wait_for, wait_for_key, ask_human's
    deadline, wait_for_children: ``children`` holds where they stand)."""

    children: Children | None = None


class RunCancelled(BaseException):
    """The run is no longer this worker's: the server cancelled it (step
    timeout, handler cancelled), the connection was lost or the worker
    stops. Nothing the run does any more reaches the server."""


class UndeclaredEvent(ValueError):
    """send() of an event type the step does not declare in ``emits``."""


class OperationError(Exception):
    """The server refused an operation (a bad payload, a limit): the run
    fails with it, whatever the step does next, as in process. So does a
    call too large for the server to take (RESOURCE_EXHAUSTED), after which
    the run makes no more calls."""


class CallTooLarge(Exception):
    """A StepCall the server refused as too large (RESOURCE_EXHAUSTED):
    what the worker's caller raises for Run.call, which fails the run."""

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self.details = details


def refusal(what: str, size: int, details: str) -> str:
    """The run's error for a call the server refused as too large."""
    return f"{what} ({size} bytes encoded) was refused: {details}"


# --- the run ------------------------------------------------------------------------


def to_value(v: Any) -> struct_pb2.Value:
    """A JSON-like Python value as a protobuf Value."""
    if isinstance(v, struct_pb2.Value):
        return v
    out = struct_pb2.Value()
    json_format.ParseDict(v, out)
    return out


def event_of(e: handler_pb2.Event) -> Event:
    return Event(type=e.type, data=struct_to_dict(e.data), id=e.id)


def _time(s: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None
    except ValueError:
        return None


_STATUS_NAMES = {v: k.removeprefix("HANDLER_STATUS_").lower() for k, v in handler_pb2.HandlerStatus.items()}


def children_of(p: worker_pb2.ChildrenState) -> Children:
    return Children(
        completed=list(p.completed),
        failed=list(p.failed),
        pending=list(p.pending),
        results={
            k: ChildResult(status=_STATUS_NAMES.get(r.status, str(r.status)), result=struct_to_dict(r.result), error=r.error)
            for k, r in p.results.items()
        },
    )


class Run:
    """One dispatched run: its numbered calls, what it sent and wrote, and
    whether it parked, was refused an operation, or was lost. Its calls run
    on the worker's event loop; a sync step's thread reaches them through
    ``call_sync``. ``local_wait`` runs where the step runs: it makes no call."""

    __slots__ = (
        "d", "worker_id", "emits", "seq", "sent", "written", "parked", "marks", "fault", "lost", "refused",
        "caller", "loop", "pos", "resolved", "pending",
    )

    def __init__(
        self,
        d: worker_pb2.Dispatch,
        worker_id: str,
        emits: frozenset[str],
        caller: Callable[[worker_pb2.StepCallRequest], Awaitable[worker_pb2.StepCallResponse]],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.d, self.worker_id, self.emits, self.caller, self.loop = d, worker_id, emits, caller, loop
        self.seq = 0
        self.sent: list[handler_pb2.Event] = []
        self.written: list[handler_pb2.Event] = []
        # parked: the server answered "waiting" to a call; marks: how many
        # sends and writes the run had made by then.
        self.parked = False
        self.marks = (0, 0)
        self.fault: OperationError | None = None
        self.lost: RunCancelled | None = None
        # refused: a call the server refused as too large; the run fails
        # with it whatever the step does next, and makes no more calls.
        self.refused: OperationError | None = None
        # Local waits (Dispatch.local_waits): pos is the position of the
        # run's next wait (of any kind), resolved the answers the dispatch
        # carried, pending the waits answered here since the last call,
        # sent with the next StepCall or FinishRun.
        self.pos = 0
        self.resolved: dict[int, worker_pb2.ResolvedWait] = {r.position: r for r in d.resolved}
        self.pending: list[worker_pb2.LocalWait] = []

    def send(self, type: str, data: StructLike) -> None:
        if type not in self.emits:
            raise UndeclaredEvent(f"step {self.d.step!r} sends {type!r}: the step does not declare it in emits")
        self.sent.append(handler_pb2.Event(type=type, data=to_struct(data, "data")))

    def write(self, type: str, data: StructLike) -> None:
        self.written.append(handler_pb2.Event(type=type, data=to_struct(data, "data")))

    async def call(self, req: worker_pb2.StepCallRequest, what: str) -> worker_pb2.StepCallResponse:
        """Makes one numbered StepCall and turns waiting, timed_out and a
        refusal into the exceptions a step sees."""
        if self.lost is not None:
            raise self.lost
        if self.refused is not None:
            raise self.refused
        if self.parked:
            raise Waiting(what)
        self.seq += 1
        req.run_id, req.worker_id, req.seq = self.d.run_id, self.worker_id, self.seq
        # A retry resends req as it is: the same seq with the same local waits.
        req.local_waits.extend(self.pending)
        self.pending = []
        if req.WhichOneof("operation") in _WAITS:
            self.pos += 1  # a wait: it takes the next position on the server too
        try:
            resp = await self.caller(req)
        except RunCancelled as e:
            self.lost = e
            raise
        except CallTooLarge as e:
            self.refused = OperationError(f"step {self.d.step!r}: {refusal(what, req.ByteSize(), e.details)}")
            raise self.refused from None
        if resp.waiting:
            self.parked = True
            self.marks = (len(self.sent), len(self.written))
            raise Waiting(what)
        if resp.timed_out:
            timeout = WaitTimeout(resp.error or f"{what}: timed out")
            if resp.HasField("children"):
                timeout.children = children_of(resp.children)
            raise timeout
        if resp.error:
            err = OperationError(resp.error)
            if self.fault is None:
                self.fault = err
            raise err
        return resp

    def local_wait(self, req: worker_pb2.StepCallRequest, what: str) -> worker_pb2.ResolvedWait | None:
        """Answers a wait_for or sleep request here when the dispatch allows
        it: the resolved wait at its position, or Waiting (the run parks).
        None: make it a StepCall."""
        if not self.d.local_waits:
            return None
        if self.lost is not None:
            raise self.lost
        if self.refused is not None:
            raise self.refused
        if self.parked:
            raise Waiting(what)
        lw = worker_pb2.LocalWait(position=self.pos)
        if req.HasField("wait_for"):
            lw.wait_for.CopyFrom(req.wait_for)
        else:
            lw.sleep.CopyFrom(req.sleep)
        self.pos += 1
        r = self.resolved.get(lw.position)
        lw.resolved = r is not None
        self.pending.append(lw)
        if r is None:
            self.parked = True
            self.marks = (len(self.sent), len(self.written))
            raise Waiting(what)
        return r

    def call_sync(self, req: worker_pb2.StepCallRequest, what: str) -> worker_pb2.StepCallResponse:
        if self.lost is not None:
            raise self.lost
        try:
            return asyncio.run_coroutine_threadsafe(self.call(req, what), self.loop).result()
        except (concurrent.futures.CancelledError, RuntimeError) as e:
            # The worker stopped under the call (its loop cancelled the call
            # or is closed): the run is no longer this worker's.
            if self.lost is None and isinstance(e, RuntimeError) and not self.loop.is_closed():
                raise
            raise self.lost or RunCancelled("the worker stopped") from None


# --- operations: requests and answers ------------------------------------------------

# The operations that are waits: each takes the run's next wait position.
_WAITS = frozenset({"wait_for", "sleep", "ask_human", "wait_for_key", "wait_for_children"})


def _req(**op: Any) -> worker_pb2.StepCallRequest:
    return worker_pb2.StepCallRequest(**op)


def _wait_for(type: str, match: StructLike, timeout: Seconds | None) -> worker_pb2.StepCallRequest:
    w = worker_pb2.WaitFor(type=type, timeout=duration(timeout))
    if match is not None:
        w.match.CopyFrom(to_struct(match, "match"))
    return _req(wait_for=w)


def _waited(r: worker_pb2.ResolvedWait, type: str) -> Event:
    """What a wait_for answered here from a resolved wait returns: its
    event, or the WaitTimeout a StepCall raises, worded as the engine does."""
    if r.timed_out:
        raise WaitTimeout(f"waiting for {json.dumps(type, ensure_ascii=False)}: wait timed out")
    return event_of(r.event)


def _sleep(seconds: Seconds) -> worker_pb2.StepCallRequest:
    return _req(sleep=duration(seconds) or duration(1e-9))


@dataclasses.dataclass(frozen=True)
class Escalation:
    """What happens to a task nobody answered ``after`` seconds: it goes to
    ``reassign`` (a person or "group:<role>"; its claim ends) and/or an
    event is published under the key ``notify``. The task stays pending."""

    after: float
    reassign: str = ""
    notify: str = ""


def _ask(
    title: str, description: str, schema: StructLike, assignee: str, deadline: Seconds | None,
    input: StructLike = None, input_schema: StructLike = None, escalation: Escalation | None = None,
) -> worker_pb2.StepCallRequest:
    a = worker_pb2.AskHuman(title=title, description=description, assignee=assignee, deadline=duration(deadline))
    if escalation is not None:
        a.escalation.CopyFrom(worker_pb2.TaskEscalation(
            after=duration(escalation.after), reassign=escalation.reassign, notify=escalation.notify))
    if schema is not None:
        a.answer_schema.CopyFrom(to_struct(schema, "answer schema"))
    if input is not None:
        a.input.CopyFrom(to_struct(input, "input"))
    if input_schema is not None:
        a.input_schema.CopyFrom(to_struct(input_schema, "input schema"))
    return _req(ask_human=a)


def _answer(resp: worker_pb2.StepCallResponse) -> TaskAnswer:
    f = struct_to_dict(resp.event.data)
    if f.get("cancelled") is True:
        return TaskAnswer(data={}, completed_by=f.get("completed_by", ""), completed_at=_time(f.get("completed_at", "")),
                          cancelled=True, reason=f.get("reason", ""))
    return TaskAnswer(data=f.get("answer") or {}, completed_by=f.get("completed_by", ""), completed_at=_time(f.get("completed_at", "")))


def _key(key: str, since: datetime.datetime | None, timeout: Seconds | None) -> worker_pb2.StepCallRequest:
    k = worker_pb2.WaitForKey(key=key, timeout=duration(timeout))
    if since is not None:
        ts = timestamp_pb2.Timestamp()
        ts.FromDatetime(since)
        k.since.CopyFrom(ts)
    return _req(wait_for_key=k)


def _published(resp: worker_pb2.StepCallResponse) -> Published:
    f = struct_to_dict(resp.event.data)
    return Published(
        id=f.get("event_id", ""), key=f.get("key", ""), data=f.get("data") or {}, at=_time(f.get("published_at", "")),
        handler_id=f.get("handler_id", ""),
    )


def _collect(ev: Event, types: Sequence[str]) -> worker_pb2.StepCallRequest:
    e = handler_pb2.Event(id=ev.id, type=ev.type, data=to_struct(ev.data, "event data"))
    return _req(collect=worker_pb2.Collect(event=e, types=list(types)))


def _children_req(ids: Sequence[str], timeout: Seconds | None) -> worker_pb2.StepCallRequest:
    return _req(wait_for_children=worker_pb2.WaitForChildren(handler_ids=list(ids), timeout=duration(timeout)))


def _set(key: str, value: Any) -> worker_pb2.StepCallRequest:
    s = worker_pb2.SetValue(key=key)
    if value is not None:
        s.value.CopyFrom(to_value(value))
    return _req(set=s)


def _set_attributes(attrs: AttributesLike) -> worker_pb2.StepCallRequest:
    return _req(set_attributes=to_attributes(attrs, "the search attributes") or struct_pb2.Struct())


def _found(resp: worker_pb2.StepCallResponse, default: Any) -> Any:
    return _value(resp.value) if resp.found else default


class _Base:
    """What both contexts share: the run's facts, send and write."""

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    @property
    def handler_id(self) -> str:
        return self._run.d.handler_id

    @property
    def run_id(self) -> str:
        return self._run.d.run_id

    @property
    def workflow(self) -> str:
        return self._run.d.workflow

    @property
    def step(self) -> str:
        return self._run.d.step

    @property
    def attempt(self) -> int:
        """1 for the first attempt."""
        return self._run.d.attempt

    def send(self, type: str, data: StructLike = None) -> None:
        """Sends an event (``"stop"`` ends the handler with data as its
        result) when the run ends; the step must declare its type in
        ``emits`` (UndeclaredEvent at once otherwise)."""
        self._run.send(type, data)

    def write(self, type: str, data: StructLike = None) -> None:
        """Writes a record to the handler's stream when the run ends (a
        parked run's writes too: write in ``except Waiting`` to note each
        park once)."""
        self._run.write(type, data)


class StepContext(_Base):
    """The context of a plain (synchronous) step, run in the worker's
    thread pool. The operations block; a wait that is not resolved yet
    raises :class:`Waiting` (let it through); a wait whose timeout passed
    raises :class:`WaitTimeout`."""

    __slots__ = ()

    def wait_for(self, type: str, *, match: StructLike = None, timeout: Seconds | None = None) -> Event:
        """The first event of ``type`` (whose data holds ``match``'s fields)
        after the run first reached this wait."""
        req, what = _wait_for(type, match, timeout), f"waiting for {type!r}"
        if (r := self._run.local_wait(req, what)) is not None:
            return _waited(r, type)
        return event_of(self._run.call_sync(req, what).event)

    def sleep(self, seconds: Seconds) -> None:
        """Parks the run on a durable timer; returns when it runs again after it."""
        req = _sleep(seconds)
        if self._run.local_wait(req, "sleeping") is None:
            self._run.call_sync(req, "sleeping")

    def collect(self, ev: Event, *types: str) -> list[Event] | None:
        """Fan-in: adds ev to the step's buffer; the set (one event per entry
        of types) once complete, else None (return, to wait for the rest)."""
        resp = self._run.call_sync(_collect(ev, types), "collecting")
        return [event_of(e) for e in resp.events] or None

    def get(self, key: str, default: Any = None) -> Any:
        """A value of the handler's key/value store (default if unset)."""
        return _found(self._run.call_sync(_req(get=key), "getting"), default)

    def set(self, key: str, value: Any) -> None:
        """Sets a key of the handler's store (JSON-like value; None deletes it)."""
        self._run.call_sync(_set(key, value), "setting")

    def set_attributes(self, attributes: AttributesLike) -> None:
        """Updates the handler's search attributes (ones its workflow
        declares): each given one is replaced, None deletes it, aware
        datetimes are sent as RFC 3339 strings. The update is stored with
        the run's change. An undeclared name or a value of the wrong type
        raises :class:`OperationError`, and the run fails with it."""
        self._run.call_sync(_set_attributes(attributes), "setting search attributes")

    def once(self, key: str, fn: Callable[[], Any]) -> Any:
        """fn()'s value, computed once per run of this step and event: a
        re-run gets the stored value without calling fn."""
        resp = self._run.call_sync(_req(once_get=key), "once")
        if resp.found:
            return _value(resp.value)
        v = fn()
        resp = self._run.call_sync(_req(once_put=worker_pb2.SetValue(key=key, value=to_value(v))), "once")
        return _value(resp.value)

    def ask_human(
        self, title: str, *, description: str = "", schema: StructLike = None, assignee: str = "",
        deadline: Seconds | None = None, input: StructLike = None, input_schema: StructLike = None,
        escalation: Escalation | None = None,
    ) -> TaskAnswer:
        """Opens a task for a person and returns the answer (WaitTimeout once
        ``deadline`` passes). ``input`` is what the person is to look at
        (shown as a table in the console), ``input_schema`` a JSON Schema it
        must match. ``escalation`` acts if nobody answered in time: the task
        is reassigned and/or an event published; it stays pending."""
        req = _ask(title, description, schema, assignee, deadline, input, input_schema, escalation)
        return _answer(self._run.call_sync(req, f"task {title!r}"))

    def wait_for_key(self, key: str, *, since: datetime.datetime | None = None, timeout: Seconds | None = None) -> Published:
        """The event published under key (PublishEvent) since ``since``."""
        return _published(self._run.call_sync(_key(key, since, timeout), f"waiting for key {key!r}"))

    def start_child(self, workflow: str, input: StructLike = None) -> str:
        """Starts a child handler (once: a re-run gets the same id)."""
        return self._run.call_sync(_req(start_child=worker_pb2.StartChild(workflow=workflow, input=to_struct(input, "input"))), "starting a child").child_id

    def wait_for_children(self, ids: Sequence[str], *, timeout: Seconds | None = None) -> Children:
        """Waits until every child in ids has ended; WaitTimeout (with
        ``.children``) once ``timeout`` passes first."""
        return children_of(self._run.call_sync(_children_req(ids, timeout), "waiting for children").children)


class AsyncStepContext(_Base):
    """The context of a coroutine step, run on the worker's event loop: the
    operations of :class:`StepContext` as coroutines (send and write stay
    plain)."""

    __slots__ = ()

    async def wait_for(self, type: str, *, match: StructLike = None, timeout: Seconds | None = None) -> Event:
        req, what = _wait_for(type, match, timeout), f"waiting for {type!r}"
        if (r := self._run.local_wait(req, what)) is not None:
            return _waited(r, type)
        return event_of((await self._run.call(req, what)).event)

    async def sleep(self, seconds: Seconds) -> None:
        req = _sleep(seconds)
        if self._run.local_wait(req, "sleeping") is None:
            await self._run.call(req, "sleeping")

    async def collect(self, ev: Event, *types: str) -> list[Event] | None:
        resp = await self._run.call(_collect(ev, types), "collecting")
        return [event_of(e) for e in resp.events] or None

    async def get(self, key: str, default: Any = None) -> Any:
        return _found(await self._run.call(_req(get=key), "getting"), default)

    async def set(self, key: str, value: Any) -> None:
        await self._run.call(_set(key, value), "setting")

    async def set_attributes(self, attributes: AttributesLike) -> None:
        """As :meth:`StepContext.set_attributes`."""
        await self._run.call(_set_attributes(attributes), "setting search attributes")

    async def once(self, key: str, fn: Callable[[], Any]) -> Any:
        """As StepContext.once; fn may be a plain or a coroutine function."""
        resp = await self._run.call(_req(once_get=key), "once")
        if resp.found:
            return _value(resp.value)
        v = fn()
        if inspect.isawaitable(v):
            v = await v
        resp = await self._run.call(_req(once_put=worker_pb2.SetValue(key=key, value=to_value(v))), "once")
        return _value(resp.value)

    async def ask_human(
        self, title: str, *, description: str = "", schema: StructLike = None, assignee: str = "",
        deadline: Seconds | None = None, input: StructLike = None, input_schema: StructLike = None,
        escalation: Escalation | None = None,
    ) -> TaskAnswer:
        req = _ask(title, description, schema, assignee, deadline, input, input_schema, escalation)
        return _answer(await self._run.call(req, f"task {title!r}"))

    async def wait_for_key(
        self, key: str, *, since: datetime.datetime | None = None, timeout: Seconds | None = None
    ) -> Published:
        return _published(await self._run.call(_key(key, since, timeout), f"waiting for key {key!r}"))

    async def start_child(self, workflow: str, input: StructLike = None) -> str:
        req = _req(start_child=worker_pb2.StartChild(workflow=workflow, input=to_struct(input, "input")))
        return (await self._run.call(req, "starting a child")).child_id

    async def wait_for_children(self, ids: Sequence[str], *, timeout: Seconds | None = None) -> Children:
        return children_of((await self._run.call(_children_req(ids, timeout), "waiting for children")).children)

