"""Runs' ends sent together, against a real `wfd serve`: while a FinishRun
or FinishRuns is in flight, the ends that gather wait for it and go in one
FinishRuns (_worker_finish.py), and the worker takes runs dispatched
together (Dispatches). A spy on the worker's own stub sees every FinishRun
and FinishRuns, and may hold one, so that a batch forms whatever the
machine's pace, or answer for the server."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from conftest import WorkerThread, aconnect, connect, unique, wait_for, wait_for_async

import wfd_client as w
from wfd.v1 import worker_pb2
from wfd_client import HandlerStatus, struct_to_dict
from wfd_client.worker import AsyncStepContext, Event, EventType, StepContext, Worker, Workflow

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
FAILED = HandlerStatus.Value("HANDLER_STATUS_FAILED")


class FinishSpy:
    """Wraps the FinishRun and FinishRuns of a connected worker's stub (the
    worker reads them at each call): records each call attempt, "one" or
    "many:<runs>", and how many were in flight at once."""

    def __init__(self, worker: Worker) -> None:
        stub = worker._core.stub
        assert stub is not None, "the worker is connected"
        self.calls: list[str] = []
        self.in_flight = self.max_in_flight = 0
        # The next call waits until it is set (once).
        self.hold: threading.Event | None = None
        # The next FinishRuns calls fail with it, without reaching the server.
        self.fail_many: grpc.StatusCode | None = None
        # The next FinishRuns answers its first run RESOURCE_EXHAUSTED for
        # the server, which gets the others.
        self.refuse_first = False
        stub.FinishRun = self._wrap(stub.FinishRun, many=False)
        stub.FinishRuns = self._wrap(stub.FinishRuns, many=True)

    def _wrap(self, method: Any, *, many: bool) -> Callable[..., Any]:
        async def call(req: Any, **kw: Any) -> Any:
            self.calls.append(f"many:{len(req.runs)}" if many else "one")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                hold, self.hold = self.hold, None
                while hold is not None and not hold.is_set():
                    await asyncio.sleep(0.005)
                if many and self.fail_many is not None:
                    raise grpc.aio.AioRpcError(self.fail_many, grpc.aio.Metadata(), grpc.aio.Metadata(), details="refused (test)")
                if many and self.refuse_first:
                    self.refuse_first = False
                    resp = await method(worker_pb2.FinishRunsRequest(runs=req.runs[1:]), **kw)
                    too_large = worker_pb2.FinishRunResult(code=grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], message="too large (test)")
                    return worker_pb2.FinishRunsResponse(results=[too_large, *resp.results])
                return await method(req, **kw)
            finally:
                self.in_flight -= 1

        return call


async def test_worker_batch_100_handlers_park_and_complete(server: str) -> None:
    """Their ends go one call at a time, batched while one is in flight.
    Whether batches formed depends on the pace; that the ends queue behind
    the call in flight does not."""
    n = 100
    name = unique("batch-park-py")
    wf = Workflow(name, events=[EventType("wake", schema={"type": "object"})])

    @wf.step(accepts=["start"], emits=["stop"])
    def wait(ctx: StepContext, ev: Event) -> None:
        wake = ctx.wait_for("wake")
        ctx.send("stop", {"n": ev.data["n"], "woken": wake.data["n"]})

    with WorkerThread(server, [wf], name="t-batch", max_runs=16) as wt:
        spy = FinishSpy(wt.worker)
        async with aconnect(server) as c:
            hs = await asyncio.gather(*(c.run(name, {"n": i}) for i in range(n)))
            ids = [h.handler_id for h in hs]

            async def idle(id: str) -> None:
                await wait_for_async(f"{id} idle", lambda: _idle(c, id))

            async def done(id: str) -> w.Handler:
                return await wait_for_async(f"{id} finished", lambda: _finished(c, id))

            await asyncio.gather(*(idle(id) for id in ids))
            await asyncio.gather(*(c.send(id, "wake", {"n": i}) for i, id in enumerate(ids)))
            got = await asyncio.gather(*(done(id) for id in ids))
        for i, h in enumerate(got):
            assert h.status == COMPLETED, h.error
            assert struct_to_dict(h.result) == {"n": i, "woken": i}
    assert spy.max_in_flight == 1, spy.calls
    ends = 0
    for call in spy.calls:
        k = 1 if call == "one" else int(call.removeprefix("many:"))
        assert call == "one" or 2 <= k <= 256, call
        ends += k
    assert ends >= 2 * n, f"{ends} ends sent for {2 * n} runs"


async def _idle(c: w.AsyncClient, id: str) -> bool:
    h = await c.get(id)
    assert not w.is_finished(h), f"{id} ended: {h.status} {h.error}"
    return h.HasField("idle")


async def _finished(c: w.AsyncClient, id: str) -> w.Handler | None:
    h = await c.get(id)
    return h if w.is_finished(h) else None


class Quick:
    """A workflow whose asyncio step completes at once, and a count of the
    steps that returned: a returned step's end is queued in the same step
    of the worker's loop, before the spy can see its hold let go."""

    def __init__(self, prefix: str) -> None:
        self.name = unique(prefix)
        self.wf = Workflow(self.name)
        self.ended = 0

        @self.wf.step(accepts=["start"], emits=["stop"])
        async def done(ctx: AsyncStepContext, ev: Event) -> None:
            ctx.send("stop", {"n": ev.data["n"]})
            self.ended += 1

    def held_round(self, c: w.Client, spy: FinishSpy, rnd: int) -> list[w.Handler]:
        """Starts 16 handlers (the worker's max_runs) with the first end held
        by the spy until every step has returned, so the 15 other ends are
        queued behind it; then lets it go and returns the handlers once
        they all finished."""
        spy.calls = []
        hold = spy.hold = threading.Event()
        ids = [c.run(self.name, {"n": i}).handler_id for i in range(16)]
        wait_for(lambda: f"16 more steps returned ({self.ended} of {16 * rnd})", lambda: self.ended >= 16 * rnd)
        hold.set()

        def finished(id: str) -> w.Handler | None:
            h = c.get(id)
            return h if w.is_finished(h) else None

        return [wait_for(f"{id} finished", lambda id=id: finished(id)) for id in ids]


def test_worker_batch_ends_queued_behind_a_call_go_in_one_finish_runs(server: str) -> None:
    q = Quick("batch-held-py")
    with WorkerThread(server, [q.wf], name="t-batch", max_runs=16) as wt, connect(server) as c:
        spy = FinishSpy(wt.worker)
        hs = q.held_round(c, spy, 1)
        assert [h.status for h in hs] == [COMPLETED] * 16, [h.error for h in hs]
        assert [struct_to_dict(h.result) for h in hs] == [{"n": i} for i in range(16)]
        assert spy.calls == ["one", "many:15"]


@pytest.mark.parametrize("code", [grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.RESOURCE_EXHAUSTED], ids=lambda c: c.name)
def test_worker_batch_finish_runs_failing_sends_ends_one_by_one(server: str, code: grpc.StatusCode) -> None:
    """UNIMPLEMENTED (an older server): that batch's ends and every end
    after it go by FinishRun. RESOURCE_EXHAUSTED (a batch over the read
    limit): that batch's ends; the next batch is tried again."""
    q = Quick("batch-fail-py")
    with WorkerThread(server, [q.wf], name="t-batch", max_runs=16) as wt, connect(server) as c:
        spy = FinishSpy(wt.worker)
        spy.fail_many = code
        hs = q.held_round(c, spy, 1)
        assert [h.status for h in hs] == [COMPLETED] * 16, [h.error for h in hs]
        assert spy.calls == ["one", "many:15", *["one"] * 15]
        hs = q.held_round(c, spy, 2)
        assert [h.status for h in hs] == [COMPLETED] * 16, [h.error for h in hs]
        if code == grpc.StatusCode.UNIMPLEMENTED:
            assert spy.calls == ["one"] * 16
        else:
            assert spy.calls == ["one", "many:15", *["one"] * 15]


def test_worker_batch_each_end_gets_its_own_answer(server: str) -> None:
    """A run answered RESOURCE_EXHAUSTED in a FinishRuns is handled as its
    own FinishRun's refusal would be: its end is sent again as the run's
    error (the step has no retries: the handler fails); the others
    complete."""
    q = Quick("batch-answer-py")
    with WorkerThread(server, [q.wf], name="t-batch", max_runs=16) as wt, connect(server) as c:
        spy = FinishSpy(wt.worker)
        spy.refuse_first = True
        hs = q.held_round(c, spy, 1)
        assert spy.calls == ["one", "many:15", "one"]
        failed = [h for h in hs if h.status == FAILED]
        assert len(failed) == 1 and [h.status for h in hs].count(COMPLETED) == 15, [(h.status, h.error) for h in hs]
        assert re.search(r"the run's end \(\d+ bytes encoded\) was refused: too large \(test\)", failed[0].error), failed[0].error
