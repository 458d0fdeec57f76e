"""Worker edge cases against a scripted in-process WorkerService (grpcio's
own server), where the real server cannot be made to fail on cue or show
what a worker sent: a StepCall that fails with UNAVAILABLE is retried with
the same seq, and the next call takes the next one; a dispatch with local
waits has wait_for and sleep answered by the worker, with no StepCall."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from conftest import WorkerThread, wait_for
from google.protobuf import struct_pb2

import wfd_client as w
from wfd.v1 import handler_pb2, worker_pb2, worker_pb2_grpc
from wfd_client.worker import AsyncStepContext, Event, StepContext, Waiting, WaitTimeout, Workflow


def dispatch(run_id: str, **kw: Any) -> worker_pb2.Dispatch:
    return worker_pb2.Dispatch(
        run_id=run_id, handler_id="h1", step="st", attempt=1,
        input=handler_pb2.Event(id="1", type="start", data=struct_pb2.Struct()), **kw)


class ScriptedWorkers(worker_pb2_grpc.WorkerServiceServicer):
    """Dispatches its runs one after the other, each once the one before
    finished; fails the first attempt of every numbered call with
    UNAVAILABLE; records the calls and the FinishRuns. A get finds 41; a
    wait_for parks; a wait_for_key gets an event published under "k"."""

    def __init__(self, runs: list[worker_pb2.Dispatch]) -> None:
        self.runs = runs
        self.lock = threading.Lock()
        self.calls: list[tuple[int, str]] = []  # (seq, operation) of every StepCall attempt
        self.requests: list[worker_pb2.StepCallRequest] = []  # every StepCall attempt
        self.answered: set[tuple[str, int]] = set()
        self.finished: list[worker_pb2.FinishRunRequest] = []
        self.done = threading.Event()

    def Connect(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        yield worker_pb2.ConnectResponse(connected=worker_pb2.Connected(worker_id="w1"))
        for i, d in enumerate(self.runs):
            d.workflow = request.workflows[0].name
            yield worker_pb2.ConnectResponse(dispatch=d)
            while context.is_active() and len(self.finished) <= i:
                self.done.wait(0.05)
        while context.is_active() and not self.done.wait(0.05):
            pass

    def StepCall(self, request: Any, context: grpc.ServicerContext) -> Any:
        op = request.WhichOneof("operation")
        with self.lock:
            self.calls.append((request.seq, op))
            self.requests.append(request)
            first = (request.run_id, request.seq) not in self.answered
            self.answered.add((request.run_id, request.seq))
        if first:
            context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        resp = worker_pb2.StepCallResponse()
        if op == "get":
            resp.found = True
            resp.value.number_value = 41
        elif op == "wait_for":
            resp.waiting = True
        elif op == "wait_for_key":
            resp.event.type = "published"
            resp.event.data.update({"key": "k", "event_id": "p1", "data": {"x": 1}})
        return resp

    def FinishRun(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.finished.append(request)
            if len(self.finished) == len(self.runs):
                self.done.set()
        return worker_pb2.FinishRunResponse()


@contextlib.contextmanager
def serving(svc: ScriptedWorkers) -> Iterator[str]:
    """svc served on a free port: its address."""
    srv = grpc.server(futures.ThreadPoolExecutor(8))
    worker_pb2_grpc.add_WorkerServiceServicer_to_server(svc, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        svc.done.set()
        srv.stop(None)


@pytest.fixture
def scripted() -> Iterator[tuple[ScriptedWorkers, str]]:
    svc = ScriptedWorkers([dispatch("r1")])
    with serving(svc) as addr:
        yield svc, addr


QUICK = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)


def test_worker_retries_a_step_call_with_the_same_seq(scripted: tuple[ScriptedWorkers, str]) -> None:
    svc, addr = scripted
    wf = Workflow("scripted-py")

    @wf.step(name="st", accepts=["start"], emits=["stop"])
    async def st(ctx: AsyncStepContext, ev: Event) -> None:
        n = await ctx.get("n")
        await ctx.set("n", n + 1)
        ctx.send("stop", {"n": n + 1})

    with WorkerThread(addr, [wf], retry=QUICK):
        wait_for("the run finished", lambda: svc.finished)
    assert svc.calls == [(1, "get"), (1, "get"), (2, "set"), (2, "set")]
    fin = svc.finished[0]
    assert (fin.run_id, fin.worker_id, fin.outcome) == ("r1", "w1", worker_pb2.OUTCOME_OK)
    assert [(e.type, w.struct_to_dict(e.data)) for e in fin.sent] == [("stop", {"n": 42})]




def local_wait(position: int, resolved: bool, *, wait_for: str = "", timeout: float = 0, sleep: float = 0) -> worker_pb2.LocalWait:
    lw = worker_pb2.LocalWait(position=position, resolved=resolved)
    if wait_for:
        lw.wait_for.type = wait_for
        if timeout:
            lw.wait_for.timeout.FromSeconds(int(timeout))
    else:
        lw.sleep.FromSeconds(int(sleep))
    return lw


def approved() -> handler_pb2.Event:
    e = handler_pb2.Event(id="e1", type="approval")
    e.data.update({"ok": True})
    return e


# The same handler run four times: parked on wait 0 (wait_for), then on
# wait 1 (sleep), then to the end (a StepCall wait at position 2, a
# timed-out wait_for at 3), then once more after the server turned local
# waits off.
LOCAL_RUNS = [
    dispatch("r1", local_waits=True),
    dispatch("r2", local_waits=True, resolved=[worker_pb2.ResolvedWait(position=0, event=approved())]),
    dispatch("r3", local_waits=True, resolved=[
        worker_pb2.ResolvedWait(position=0, event=approved()),
        worker_pb2.ResolvedWait(position=1, timed_out=True),
        worker_pb2.ResolvedWait(position=3, timed_out=True),
    ]),
    dispatch("r4", resolved=[worker_pb2.ResolvedWait(position=0, event=approved())]),
]


def sync_step(ctx: StepContext, ev: Event) -> None:
    try:
        a = ctx.wait_for("approval")
        ctx.sleep(60)
    except Waiting:
        ctx.write("parked", {})
        raise
    n = ctx.get("n")
    k = ctx.wait_for_key("k")
    try:
        ctx.wait_for("late", timeout=30)
    except WaitTimeout as e:
        ctx.send("stop", {"ok": a.data["ok"], "n": n, "k": k.data, "why": str(e)})


async def async_step(ctx: AsyncStepContext, ev: Event) -> None:
    try:
        a = await ctx.wait_for("approval")
        await ctx.sleep(60)
    except Waiting:
        ctx.write("parked", {})
        raise
    n = await ctx.get("n")
    k = await ctx.wait_for_key("k")
    try:
        await ctx.wait_for("late", timeout=30)
    except WaitTimeout as e:
        ctx.send("stop", {"ok": a.data["ok"], "n": n, "k": k.data, "why": str(e)})


@pytest.mark.parametrize("fn", [sync_step, async_step], ids=["sync", "async"])
def test_worker_answers_waits_locally(fn: Any) -> None:
    svc = ScriptedWorkers(LOCAL_RUNS)
    wf = Workflow("local-py")
    wf.step(name="st", accepts=["start"], emits=["stop"])(fn)
    with serving(svc) as addr, WorkerThread(addr, [wf], retry=QUICK):
        wait_for("the four runs finished", lambda: len(svc.finished) == 4)
    r1, r2, r3, r4 = svc.finished
    parked: list[tuple[str, dict[str, Any]]] = [("parked", {})]

    # r1, r2: parked on a wait answered here, with no StepCall; the
    # FinishRun reports it, with what the run wrote.
    assert (r1.outcome, list(r1.local_waits)) == (worker_pb2.OUTCOME_WAITING, [local_wait(0, False, wait_for="approval")])
    assert [(e.type, w.struct_to_dict(e.data)) for e in r1.written] == parked
    assert (r2.outcome, list(r2.local_waits)) == (
        worker_pb2.OUTCOME_WAITING, [local_wait(0, True, wait_for="approval"), local_wait(1, False, sleep=60)])
    assert [(e.type, w.struct_to_dict(e.data)) for e in r2.written] == parked

    # r3: the resolved waits travel with the next StepCall (and its retry);
    # the wait_for_key StepCall takes position 2; the timed-out wait at 3
    # raises the engine's WaitTimeout and travels with the FinishRun.
    calls = [(r.run_id, r.seq, r.WhichOneof("operation"), list(r.local_waits)) for r in svc.requests]
    resolved = [local_wait(0, True, wait_for="approval"), local_wait(1, True, sleep=60)]
    assert calls[:4] == [
        ("r3", 1, "get", resolved), ("r3", 1, "get", resolved),
        ("r3", 2, "wait_for_key", []), ("r3", 2, "wait_for_key", []),
    ]
    assert (r3.outcome, list(r3.local_waits)) == (worker_pb2.OUTCOME_OK, [local_wait(3, True, wait_for="late", timeout=30)])
    assert [(e.type, w.struct_to_dict(e.data)) for e in r3.sent] == [
        ("stop", {"ok": True, "n": 41, "k": {"x": 1}, "why": 'waiting for "late": wait timed out'})]

    # r4: local waits off: the wait is a StepCall again, parked by the server.
    assert calls[4:] == [("r4", 1, "wait_for", []), ("r4", 1, "wait_for", [])]
    assert (r4.outcome, list(r4.local_waits)) == (worker_pb2.OUTCOME_WAITING, [])
