"""Worker edge cases against a scripted in-process WorkerService (grpcio's
own server), where the real server cannot be made to fail on cue: a
StepCall that fails with UNAVAILABLE is retried with the same seq, and the
next call takes the next one."""

from __future__ import annotations

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
from wfd_client.worker import AsyncStepContext, Event, Workflow


class ScriptedWorkers(worker_pb2_grpc.WorkerServiceServicer):
    """Dispatches one run; fails the first attempt of every numbered call
    with UNAVAILABLE; records the calls and the FinishRun."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[int, str]] = []  # (seq, operation) of every StepCall attempt
        self.answered: set[int] = set()
        self.finished: list[worker_pb2.FinishRunRequest] = []
        self.done = threading.Event()

    def Connect(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        yield worker_pb2.ConnectResponse(connected=worker_pb2.Connected(worker_id="w1"))
        yield worker_pb2.ConnectResponse(dispatch=worker_pb2.Dispatch(
            run_id="r1", handler_id="h1", workflow=request.workflows[0].name, step="st", attempt=1,
            input=handler_pb2.Event(id="1", type="start", data=struct_pb2.Struct())))
        while context.is_active() and not self.done.wait(0.05):
            pass

    def StepCall(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.calls.append((request.seq, request.WhichOneof("operation")))
            first = request.seq not in self.answered
            self.answered.add(request.seq)
        if first:
            context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        resp = worker_pb2.StepCallResponse()
        if request.WhichOneof("operation") == "get":
            resp.found = True
            resp.value.number_value = 41
        return resp

    def FinishRun(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.finished.append(request)
        self.done.set()
        return worker_pb2.FinishRunResponse()


@pytest.fixture
def scripted() -> Iterator[tuple[ScriptedWorkers, str]]:
    svc = ScriptedWorkers()
    srv = grpc.server(futures.ThreadPoolExecutor(8))
    worker_pb2_grpc.add_WorkerServiceServicer_to_server(svc, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    yield svc, f"127.0.0.1:{port}"
    svc.done.set()
    srv.stop(None)


def test_worker_retries_a_step_call_with_the_same_seq(scripted: tuple[ScriptedWorkers, str]) -> None:
    svc, addr = scripted
    wf = Workflow("scripted-py")

    @wf.step(name="st", accepts=["start"], emits=["stop"])
    async def st(ctx: AsyncStepContext, ev: Event) -> None:
        n = await ctx.get("n")
        await ctx.set("n", n + 1)
        ctx.send("stop", {"n": n + 1})

    quick = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)
    with WorkerThread(addr, [wf], retry=quick):
        wait_for("the run finished", lambda: svc.finished)
    assert svc.calls == [(1, "get"), (1, "get"), (2, "set"), (2, "set")]
    fin = svc.finished[0]
    assert (fin.run_id, fin.worker_id, fin.outcome) == ("r1", "w1", worker_pb2.OUTCOME_OK)
    assert [(e.type, w.struct_to_dict(e.data)) for e in fin.sent] == [("stop", {"n": 42})]


