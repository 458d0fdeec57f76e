"""Python workers as processes and at scale, against real `wfd serve`
processes: a worker SIGKILLed in the middle of a step (the run finishes on
a second worker process); wfd restarted with workers connected (they
reconnect on their own and handlers continue); 1,000 parked handlers of a
worker-defined workflow released and woken by their events."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any
from pathlib import Path

import pytest
from conftest import WAIT, Server, WorkerThread, aconnect, connect, unique, wait_for, wait_for_async, worker_ids
from test_worker import approval_workflow, wait_done

import wfd_client as w
from wfd_client import HandlerStatus, struct_to_dict
from wfd_client.worker import AsyncStepContext, Event, Waiting, Workflow

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")

# A worker process: its step notes that it started (a file named after its
# pid) and blocks until the file "go" exists, then completes with its pid.
WORKER_SCRIPT = '''
import os, pathlib, signal, sys, time
from wfd_client.worker import Worker, Workflow

addr, workflow, name, marks = sys.argv[1:5]
marks = pathlib.Path(marks)
wf = Workflow(workflow)

@wf.step(accepts=["start"], emits=["stop"])
def work(ctx, ev):
    (marks / f"started-{os.getpid()}").touch()
    while not (marks / "go").exists():
        time.sleep(0.005)
    ctx.send("stop", {"pid": os.getpid(), "attempt": ctx.attempt})

w = Worker(addr, workflows=[wf], name=name)
signal.signal(signal.SIGTERM, lambda *_: w.stop())
w.run()
'''


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[object]:
    """Starts worker processes running WORKER_SCRIPT; kills what is left."""
    script = tmp_path / "worker_proc.py"
    script.write_text(WORKER_SCRIPT)
    procs: list[subprocess.Popen[bytes]] = []

    def start(addr: str, workflow: str, name: str, marks: Path) -> subprocess.Popen[bytes]:
        log = open(tmp_path / f"{name}.log", "wb")
        p = subprocess.Popen([sys.executable, str(script), addr, workflow, name, str(marks)], stdout=log, stderr=log)
        log.close()
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _worker_names(addr: str) -> list[str]:
    from wfd.v1 import worker_pb2, worker_pb2_grpc

    with connect(addr) as c:
        stub = worker_pb2_grpc.WorkerServiceStub(c.channel)  # type: ignore[no-untyped-call]
        return [x.name for x in stub.ListWorkers(worker_pb2.ListWorkersRequest(), timeout=WAIT).workers]


def test_worker_process_killed_mid_step(server: str, spawn: object, tmp_path: Path) -> None:
    name = unique("killed-py")
    marks = tmp_path / "marks"
    marks.mkdir()
    first, second = unique("first"), unique("second")
    with connect(server) as c:
        before = c.stats().redispatches_total
        a = spawn(server, name, first, marks)  # type: ignore[operator]
        wait_for(f"{first} connected", lambda: first in _worker_names(server))
        h = c.run(name, {"n": 1})
        wait_for("the step started on the first worker", lambda: (marks / f"started-{a.pid}").exists())
        a.kill()  # SIGKILL, in the middle of the step
        a.wait()
        assert a.returncode == -9
        (marks / "go").touch()
        b = spawn(server, name, second, marks)  # type: ignore[operator]
        got = wait_done(c, h.handler_id)
        assert got.status == COMPLETED
        # Not an attempt: the step did not fail, its worker was lost.
        assert struct_to_dict(got.result) == {"pid": b.pid, "attempt": 1}
        assert (marks / f"started-{b.pid}").exists()
        recs = list(c.stream(h.handler_id, include_internal=True))
        assert not [r for r in recs if r.WhichOneof("kind") == "step_state_changed" and r.step_state_changed.error]
        assert c.stats().redispatches_total >= before + 1


def test_worker_reconnects_after_wfd_restart(wfd_bin: str, tmp_path: Path) -> None:
    srv = Server(wfd_bin, tmp_path / "data")
    srv.start()
    sync_wf, async_wf = approval_workflow("restart-sync-py", use_async=False), approval_workflow("restart-aio-py", use_async=True)
    try:
        with WorkerThread(srv.addr, [sync_wf], name="sync", backoff=0.05) as ws, \
                WorkerThread(srv.addr, [async_wf], name="aio", backoff=0.05) as wa, connect(srv.addr) as c:
            hs = [c.run(sync_wf.name, {"n": 1}), c.run(async_wf.name, {"n": 2})]
            for h in hs:
                wait_for(f"{h.handler_id} parked", lambda h=h: c.get(h.handler_id).HasField("idle"))
            old = {ws.worker.worker_id, wa.worker.worker_id}
            srv.stop()  # SIGTERM, as an operator would
            srv.start()  # the same port and data
            wait_for("both workers reconnected on their own",
                     lambda: len(ids := set(worker_ids(srv.addr))) == 2 and not ids & old)
            assert {ws.worker.worker_id, wa.worker.worker_id} == set(worker_ids(srv.addr))
            hs.append(c.run(sync_wf.name, {"n": 3}))
            wait_for("the new handler parked", lambda: c.get(hs[-1].handler_id).HasField("idle"))
            for h in hs:
                c.send(h.handler_id, "approval", {"approved": True})
            for i, h in enumerate(hs):
                got = wait_done(c, h.handler_id)
                assert struct_to_dict(got.result) == {"approved": True, "comment": "", "request": {"n": i + 1}}
    finally:
        srv.stop()


PARKED = 1000


async def test_worker_thousand_parked_handlers_released_and_woken(server: str) -> None:
    name = unique("parked-py")
    wf = Workflow(name)

    @wf.step(accepts=["start"], emits=["stop"])
    async def wait_go(ctx: AsyncStepContext, ev: Event) -> None:
        try:
            go = await ctx.wait_for("go")
        except Waiting:
            ctx.write("parked", {})
            raise
        ctx.send("stop", {"i": ev.data["i"], "go": go.data["i"]})

    worker = WorkerThread(server, [wf], name="parked", max_runs=32)
    sem = asyncio.Semaphore(32)
    try:
        worker.__enter__()
        async with aconnect(server) as c:

            async def each(f: Callable[[Any], Awaitable[Any]], items: Iterable[Any]) -> list[Any]:
                """f on every item, 32 at a time."""

                async def one(x: Any) -> Any:
                    async with sem:
                        return await f(x)

                return list(await asyncio.gather(*(one(x) for x in items)))

            async def count(**kw: object) -> int:
                return len([h async for h in c.list_all(workflow=name, **kw)])  # type: ignore[arg-type]

            hs: list[w.Handler] = await each(lambda i: c.run(name, {"i": i}), range(PARKED))
            await wait_for_async(lambda: f"{PARKED} handlers parked", lambda: _eq(count(idle_only=True), PARKED))
            await each(lambda h: c.release(h.handler_id), hs)
            assert await count(residency="released") == PARKED
            await each(lambda i: c.send(hs[i].handler_id, "go", {"i": i}), range(PARKED))
            await wait_for_async(lambda: f"{PARKED} handlers completed", lambda: _eq(count(statuses=["completed"]), PARKED))
            for i in (0, PARKED // 2, PARKED - 1):
                got = await c.get(hs[i].handler_id)
                assert struct_to_dict(got.result) == {"i": i, "go": i}
    finally:
        worker.stop()


async def _eq(n: object, want: int) -> bool:
    return await n == want  # type: ignore[misc]


