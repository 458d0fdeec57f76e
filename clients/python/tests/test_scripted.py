"""Stream and retry edge cases against a scripted in-process gRPC server
(grpcio's own), where the real server cannot be made to misbehave on cue:
heartbeats, a clean end before the terminal record, duplicates after a
resume, the no-progress count, RetryInfo details, the timeout over retries."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from conftest import aconnect, connect
from google.protobuf import any_pb2

import wfd_client as w
from wfd.v1 import handler_pb2, service_pb2, service_pb2_grpc
from wfd_client import errors as wfd_errors

RUNNING = handler_pb2.HandlerStatus.Value("HANDLER_STATUS_RUNNING")
COMPLETED = handler_pb2.HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
TASK_PENDING = handler_pb2.TaskStatus.Value("TASK_STATUS_PENDING")
TASK_COMPLETED = handler_pb2.TaskStatus.Value("TASK_STATUS_COMPLETED")
QUICK = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)

Step = Callable[[service_pb2.StreamEventsRequest, grpc.ServicerContext], Iterator[service_pb2.StreamEventsResponse]]


def rec(seq: int, terminal: bool = False) -> service_pb2.StreamEventsResponse:
    r = handler_pb2.Record(seq=seq)
    if terminal:
        r.handler_finished.status = COMPLETED
    else:
        r.step_state_changed.step = f"s{seq}"
    return service_pb2.StreamEventsResponse(record=r)


def beat(seq: int) -> service_pb2.StreamEventsResponse:
    return service_pb2.StreamEventsResponse(heartbeat=service_pb2.Heartbeat(last_seq=seq))


def unavailable_details(delay: float) -> bytes:
    info = wfd_errors._RetryInfo()
    info.retry_delay.FromNanoseconds(int(delay * 1e9))
    st = wfd_errors._Status(code=grpc.StatusCode.UNAVAILABLE.value[0], message="store unavailable")
    st.details.add(type_url="type.googleapis.com/google.rpc.RetryInfo", value=info.SerializeToString())
    return bytes(st.SerializeToString())


class Scripted(service_pb2_grpc.WorkflowServiceServicer):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.streams: list[Step] = []  # one per StreamEvents call, in order
        self.after: list[int] = []  # after_seq of each StreamEvents call
        self.handler = handler_pb2.Handler(handler_id="h", status=RUNNING)
        self.stats_failures = 0  # GetStats calls still to fail with UNAVAILABLE
        self.stats_calls = 0
        self.get_calls = 0
        # CompleteTask: the first call takes the answer (or `stored`, an
        # answer someone else gave) and its reply is lost (UNAVAILABLE);
        # later calls find the task completed.
        self.stored: handler_pb2.Task | None = None
        self.completed: handler_pb2.Task | None = None
        self.complete_calls = 0
        self.complete_first = grpc.StatusCode.UNAVAILABLE
        self.get_task_calls = 0
        self.published: list[str] = []  # event ids, one per PublishEvent call

    def StreamEvents(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        with self.lock:
            self.after.append(request.after_seq)
            step = self.streams.pop(0) if self.streams else fail(grpc.StatusCode.UNAVAILABLE)
        yield from step(request, context)

    def GetHandler(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.get_calls += 1
        if request.handler_id != "h":
            context.abort(grpc.StatusCode.NOT_FOUND, "no such handler")
        return service_pb2.GetHandlerResponse(handler=self.handler)

    def CompleteTask(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.complete_calls += 1
            if self.completed is not None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, 'task "t" is completed')
            self.completed = self.stored or handler_pb2.Task(
                task_id="t", status=TASK_COMPLETED, answer=request.answer, completed_by=request.completed_by,
            )
        context.abort(self.complete_first, "scripted lost reply")

    def GetTask(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.get_task_calls += 1
            t = self.completed or handler_pb2.Task(task_id="t", status=TASK_PENDING)
        return service_pb2.GetTaskResponse(task=t)

    def PublishEvent(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.published.append(request.event_id)
            first = len(self.published) == 1
        if first:
            context.abort(grpc.StatusCode.UNAVAILABLE, "scripted lost reply")
        return service_pb2.PublishEventResponse(event_id=request.event_id, seq=7, woken=2)

    def GetStats(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.stats_calls += 1
            failing = self.stats_failures != 0
            if self.stats_failures > 0:
                self.stats_failures -= 1
        if failing:
            context.set_trailing_metadata((("grpc-status-details-bin", unavailable_details(1.5)),))
            context.abort(grpc.StatusCode.UNAVAILABLE, "store unavailable")
        return service_pb2.GetStatsResponse(streams=7)


def send(*msgs: service_pb2.StreamEventsResponse, then: grpc.StatusCode | None = None) -> Step:
    def step(_req: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        yield from msgs
        if then is not None:
            context.abort(then, f"scripted {then.name}")

    return step


def fail(code: grpc.StatusCode) -> Step:
    return send(then=code)


@pytest.fixture
def scripted() -> Iterator[tuple[Scripted, str]]:
    svc = Scripted()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    service_pb2_grpc.add_WorkflowServiceServicer_to_server(svc, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield svc, f"127.0.0.1:{port}"
    server.stop(grace=None)


MODES = ["sync", "aio"]


def stream(mode: str, addr: str, retry: w.RetryPolicy = QUICK, after: int = 0) -> list[int]:
    """Sequence numbers the client yields, through Client or AsyncClient."""
    if mode == "sync":
        with connect(addr, retry=retry) as c:
            return [r.seq for r in c.stream("h", after)]

    async def run() -> list[int]:
        async with aconnect(addr, retry=retry) as c:
            return [r.seq async for r in c.stream("h", after)]

    return asyncio.run(run())


def stats(mode: str, addr: str, **kw: Any) -> service_pb2.GetStatsResponse:
    if mode == "sync":
        with connect(addr, **kw) as c:
            return c.stats()

    async def run() -> service_pb2.GetStatsResponse:
        async with aconnect(addr, **kw) as c:
            return await c.stats()

    return asyncio.run(run())


@pytest.mark.parametrize("mode", MODES)
def test_heartbeats_skipped_clean_end_resumed_duplicates_dropped(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.streams = [
        send(beat(0), rec(1), beat(1), rec(2)),  # ends cleanly before the terminal record
        send(rec(2), rec(3), beat(3), rec(4, terminal=True), rec(5)),  # a repeat, then the end
    ]
    assert stream(mode, addr) == [1, 2, 3, 4]
    assert svc.after == [0, 2]


@pytest.mark.parametrize("mode", MODES)
def test_progress_resets_the_attempt_count(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    cut = grpc.StatusCode.UNAVAILABLE
    svc.streams = [send(rec(1), then=cut), send(rec(2), then=cut), send(beat(2), beat(2), then=cut),
                   send(rec(3), then=grpc.StatusCode.CANCELLED), send(rec(4, terminal=True))]
    retry = w.RetryPolicy(max_attempts=2, initial_backoff=0.01, max_backoff=0.02)
    assert stream(mode, addr, retry) == [1, 2, 3, 4]
    assert svc.after == [0, 1, 2, 2, 3]


@pytest.mark.parametrize("mode", MODES)
def test_gives_up_after_attempts_without_progress(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.streams = [send(rec(1), then=grpc.StatusCode.UNAVAILABLE)]  # then UNAVAILABLE forever
    with pytest.raises(w.Unavailable, match="scripted UNAVAILABLE"):
        stream(mode, addr)
    assert svc.after == [0, 1, 1, 1]  # one with progress, then max_attempts (3) without


@pytest.mark.parametrize("mode", MODES)
def test_a_first_heartbeat_alone_is_no_progress(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.streams = [send(beat(0), then=grpc.StatusCode.UNAVAILABLE) for _ in range(5)]
    with pytest.raises(w.Unavailable):
        stream(mode, addr)
    assert len(svc.after) == 3  # max_attempts


@pytest.mark.parametrize("mode", MODES)
def test_clean_ends_without_progress_give_up_too(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.streams = [send(), send(), send()]
    with pytest.raises(w.Unavailable, match="ended before the handler finished"):
        stream(mode, addr)
    assert len(svc.after) == 3


@pytest.mark.parametrize("mode", MODES)
def test_stream_after_the_end_is_empty(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.handler = handler_pb2.Handler(handler_id="h", status=COMPLETED, last_seq=4)
    svc.streams = [send()]
    assert stream(mode, addr, after=4) == []
    assert svc.after == [4]


@pytest.mark.parametrize("mode", MODES)
def test_other_errors_end_the_stream(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.streams = [send(rec(1), then=grpc.StatusCode.PERMISSION_DENIED)]
    with pytest.raises(w.PermissionDenied) as ei:
        stream(mode, addr)
    assert ei.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert ei.value.message == "scripted PERMISSION_DENIED"
    assert svc.after == [0]


@pytest.mark.parametrize("mode", MODES)
def test_unary_retry_and_retry_info(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.stats_failures = 2
    # Attempts to spare: under heavy load this once gave up after three
    # attempts (not understood; the server counts its own calls below).
    assert stats(mode, addr, retry=w.RetryPolicy(max_attempts=10, initial_backoff=0.01, max_backoff=0.02)).streams == 7
    assert svc.stats_calls == 3

    svc.stats_failures, svc.stats_calls = 1, 0
    with pytest.raises(w.Unavailable) as ei:
        stats(mode, addr, retry=w.RetryPolicy(max_attempts=1))
    assert svc.stats_calls == 1
    assert ei.value.message == "store unavailable"
    assert ei.value.retry_delay == pytest.approx(1.5)
    assert [d.type_url for d in ei.value.details] == ["type.googleapis.com/google.rpc.RetryInfo"]


@pytest.mark.parametrize("mode", MODES)
def test_timeout_covers_retries(mode: str, scripted: tuple[Scripted, str]) -> None:
    # It retries until the deadline is near, and the timeout, not the
    # attempts, ends it: the pauses (80 ms and more once they reach
    # max_backoff) leave room for about 25 calls in 2 s; 1000 would take
    # over a minute. Counted in calls, which a slow machine only makes
    # fewer; a bound on the time taken would depend on the machine.
    svc, addr = scripted
    svc.stats_failures = -1  # always
    start = time.monotonic()
    with pytest.raises((w.Unavailable, w.DeadlineExceeded)):
        stats(mode, addr, timeout=2.0, retry=w.RetryPolicy(max_attempts=1000, initial_backoff=0.02, max_backoff=0.1))
    assert time.monotonic() - start >= 1.5
    assert 2 <= svc.stats_calls < 100


@pytest.mark.parametrize("mode", MODES)
def test_only_unavailable_is_retried(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted

    def get() -> None:
        if mode == "sync":
            with connect(addr, retry=QUICK) as c:
                c.get("other")
            return

        async def run() -> None:
            async with aconnect(addr, retry=QUICK) as c:
                await c.get("other")

        asyncio.run(run())

    with pytest.raises(w.NotFound, match="no such handler"):
        get()
    assert svc.get_calls == 1


def call(mode: str, addr: str, method: str, *args: Any, **kw: Any) -> Any:
    """Calls one client method through Client or AsyncClient."""
    if mode == "sync":
        with connect(addr, retry=QUICK) as c:
            return getattr(c, method)(*args, **kw)

    async def run() -> Any:
        async with aconnect(addr, retry=QUICK) as c:
            return await getattr(c, method)(*args, **kw)

    return asyncio.run(run())


@pytest.mark.parametrize("mode", MODES)
def test_complete_task_retry_finds_its_own_answer(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    t = call(mode, addr, "complete_task", "t", {"approved": False, "reason": "x", "n": 2}, completed_by="ada")
    assert t.status == TASK_COMPLETED and w.struct_to_dict(t.answer) == {"approved": False, "reason": "x", "n": 2}
    assert (svc.complete_calls, svc.get_task_calls) == (2, 1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer, by", [({"approved": True}, "ada"), ({"approved": False, "reason": "x"}, "bob")])
def test_complete_task_retry_finds_another_answer(
    mode: str, answer: dict[str, Any], by: str, scripted: tuple[Scripted, str]
) -> None:
    svc, addr = scripted
    svc.stored = handler_pb2.Task(task_id="t", status=TASK_COMPLETED, answer=w.to_struct(answer), completed_by=by)
    with pytest.raises(w.FailedPrecondition, match="is completed"):
        call(mode, addr, "complete_task", "t", {"approved": False, "reason": "x"}, completed_by="ada")
    assert (svc.complete_calls, svc.get_task_calls) == (2, 1)


@pytest.mark.parametrize("mode", MODES)
def test_complete_task_first_failed_precondition_is_final(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    svc.complete_first = grpc.StatusCode.FAILED_PRECONDITION  # not retried, not looked into
    with pytest.raises(w.FailedPrecondition, match="scripted lost reply"):
        call(mode, addr, "complete_task", "t", {"approved": True})
    assert (svc.complete_calls, svc.get_task_calls) == (1, 0)


@pytest.mark.parametrize("mode", MODES)
def test_publish_retry_carries_the_same_event_id(mode: str, scripted: tuple[Scripted, str]) -> None:
    svc, addr = scripted
    res = call(mode, addr, "publish", "k", {"a": 1})
    assert (res.seq, res.woken) == (7, 2)
    assert len(svc.published) == 2 and svc.published[0] == svc.published[1] == res.event_id
    assert uuid.UUID(res.event_id).version == 7
    svc.published.clear()
    assert call(mode, addr, "publish", "k", event_id="mine").event_id == "mine"
    assert svc.published == ["mine", "mine"]


def test_error_classes() -> None:
    for code in grpc.StatusCode:
        if code == grpc.StatusCode.OK:
            continue
        err = wfd_errors.error_for(code, "m")
        assert type(err) is not w.WfdError and err.code == code and err.CODE == code
        assert str(err) == f"{code.name}: m"
    assert isinstance(wfd_errors.error_for(grpc.StatusCode.NOT_FOUND, "x"), w.NotFound)
    detail = any_pb2.Any(type_url="type.googleapis.com/other", value=b"\x01")
    assert w.WfdError(grpc.StatusCode.UNKNOWN, "x", details=(detail,)).retry_delay is None
