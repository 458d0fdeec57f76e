"""Workflows defined by Python workers (wfd_client.worker) against a real
`wfd serve`: sync and asyncio steps through start, stream, wait, answer and
completion; deadlines; children; tasks; the other context operations;
validation; retries; parks user code cannot swallow; worker limits across
two workers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from conftest import WAIT, WorkerThread, aconnect, connect, unique, wait_for, wait_for_async

import wfd_client as w
from wfd_client import FailedPrecondition, HandlerStatus, InvalidArgument, is_terminal, struct_to_dict
from wfd_client.worker import (
    AsyncStepContext,
    AsyncWorker,
    Event,
    EventType,
    Retry,
    StepContext,
    UndeclaredEvent,
    Waiting,
    WaitTimeout,
    Workflow,
)

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
FAILED = HandlerStatus.Value("HANDLER_STATUS_FAILED")
CANCELLED = HandlerStatus.Value("HANDLER_STATUS_CANCELLED")

APPROVAL_SCHEMA = {
    "type": "object",
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}},
}


def approval_workflow(name: str, *, use_async: bool) -> Workflow:
    """approval.go's decide, as a sync or an asyncio step."""
    wf = Workflow(name, input_schema={"type": "object"}, events=[EventType("approval", schema=APPROVAL_SCHEMA)])

    def stop_data(ev: Event, answer: Event) -> dict[str, Any]:
        return {"approved": answer.data["approved"], "comment": answer.data.get("comment", ""), "request": ev.data}

    if use_async:

        @wf.step(accepts=["start"], emits=["stop"])
        async def decide(ctx: AsyncStepContext, ev: Event) -> None:
            ctx.write("progress", {"attempt": ctx.attempt})
            try:
                answer = await ctx.wait_for("approval", timeout=3600)
            except Waiting:
                ctx.write("question", {"request": ev.data})
                raise
            ctx.send("stop", stop_data(ev, answer))

    else:

        @wf.step(accepts=["start"], emits=["stop"])
        def decide(ctx: StepContext, ev: Event) -> None:  # noqa: F811
            ctx.write("progress", {"attempt": ctx.attempt})
            try:
                answer = ctx.wait_for("approval", timeout=3600)
            except Waiting:
                ctx.write("question", {"request": ev.data})
                raise
            ctx.send("stop", stop_data(ev, answer))

    return wf


def kinds(recs: list[w.Record]) -> list[str]:
    return [r.WhichOneof("kind") for r in recs]


def written(recs: list[w.Record]) -> list[tuple[str, dict[str, Any]]]:
    return [(r.event_written.type, struct_to_dict(r.event_written.data)) for r in recs
            if r.WhichOneof("kind") == "event_written"]


def wait_done(c: w.Client, id: str) -> w.Handler:
    def finished() -> w.Handler | None:
        h = c.get(id)
        return h if w.is_finished(h) else None

    return wait_for(f"handler {id} finished", finished)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "asyncio"])
def test_worker_workflow_start_stream_wait_answer_complete(server: str, use_async: bool) -> None:
    name = unique("approval-py")
    with WorkerThread(server, [approval_workflow(name, use_async=use_async)], name="t-approval"), connect(server) as c:
        listed = wait_for(f"{name} listed", lambda: [x for x in c.workflows() if x.name == name])
        assert [e.type for e in listed[0].event_types] == ["approval"]
        h = c.run(name, {"amount": 42})
        stream = c.stream(h.handler_id, include_internal=True)
        recs: list[w.Record] = []
        for rec in stream:
            recs.append(rec)
            if rec.WhichOneof("kind") == "idle_changed" and rec.idle_changed.idle:
                break
        assert c.get(h.handler_id).HasField("idle")
        with pytest.raises(InvalidArgument, match="approved"):
            c.send(h.handler_id, "approval", {"approved": "yes"})  # the declared schema
        c.send(h.handler_id, "approval", {"approved": True, "comment": "fine"})
        recs += list(stream)
        assert is_terminal(recs[-1])
        got = c.get(h.handler_id)
        assert got.status == COMPLETED
        assert struct_to_dict(got.result) == {"approved": True, "comment": "fine", "request": {"amount": 42}}
        # One question per park, a progress record per run (parked, re-run).
        assert written(recs) == [
            ("progress", {"attempt": 1}), ("question", {"request": {"amount": 42}}), ("progress", {"attempt": 1}),
        ]


async def test_async_worker_runs_in_the_callers_loop(server: str) -> None:
    name = unique("approval-aio")
    worker = AsyncWorker(server, workflows=[approval_workflow(name, use_async=True)], name="t-aio", max_runs=4)
    task = asyncio.ensure_future(worker.run())
    try:
        await wait_for_async("the worker connected", lambda: worker.worker_id)
        async with aconnect(server) as c:
            hs = [await c.run(name, {"n": i}) for i in range(3)]
            for h in hs:
                await wait_for_async(f"{h.handler_id} idle", lambda h=h: _idle(c, h.handler_id))
                await c.send(h.handler_id, "approval", {"approved": False})
            for i, h in enumerate(hs):
                got = await wait_for_async(f"{h.handler_id} done", lambda h=h: _finished(c, h.handler_id))
                assert struct_to_dict(got.result) == {"approved": False, "comment": "", "request": {"n": i}}
    finally:
        worker.stop()
        await asyncio.wait_for(task, WAIT)


async def _idle(c: w.AsyncClient, id: str) -> bool:
    return (await c.get(id)).HasField("idle")


async def _finished(c: w.AsyncClient, id: str) -> w.Handler | None:
    h = await c.get(id)
    return h if w.is_finished(h) else None


def test_worker_wait_deadline(server: str) -> None:
    name = unique("deadline-py")
    wf = Workflow(name)

    @wf.step(accepts=["start"], emits=["stop"])
    def decide(ctx: StepContext, ev: Event) -> None:
        try:
            ctx.wait_for("approval", timeout=0.2)
        except WaitTimeout as e:
            ctx.send("stop", {"expired": True, "why": str(e)})

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        got = wait_done(c, h.handler_id)
        assert got.status == COMPLETED
        res = struct_to_dict(got.result)
        assert res["expired"] is True and "approval" in res["why"], res


def test_worker_children(server: str) -> None:
    child, parent = unique("child-py"), unique("parent-py")
    cw, pw = Workflow(child), Workflow(parent)

    @cw.step(accepts=["start"], emits=["stop"])
    async def double(ctx: AsyncStepContext, ev: Event) -> None:
        ctx.send("stop", {"n": ev.data["n"] * 2})

    @pw.step(accepts=["start"], emits=["stop"])
    async def fan_out(ctx: AsyncStepContext, ev: Event) -> None:
        ids = [await ctx.start_child(child, {"n": n}) for n in ev.data["ns"]]
        state = await ctx.wait_for_children(ids)
        ctx.send("stop", {
            "sum": sum(state.results[i].result["n"] for i in ids),
            "statuses": sorted({state.results[i].status for i in ids}),
            "children": len(set(ids)),
        })

    with WorkerThread(server, [cw, pw], max_runs=4), connect(server) as c:
        h = c.run(parent, {"ns": [1, 2, 3]})
        got = wait_done(c, h.handler_id)
        assert struct_to_dict(got.result) == {"sum": 12, "statuses": ["completed"], "children": 3}


def test_worker_task(server: str) -> None:
    name = unique("expense-task-py")
    wf = Workflow(name)
    schema = {"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"}}}

    @wf.step(accepts=["start"], emits=["stop"])
    def review(ctx: StepContext, ev: Event) -> None:
        ans = ctx.ask_human("Approve expense", description="please", schema=schema, assignee=ev.data["approver"],
                            input={"lines": [{"item": "taxi", "amount": 42}]},
                            input_schema={"type": "object", "properties": {"lines": {"type": "array"}}})
        ctx.send("stop", {"decision": ans.data, "by": ans.completed_by, "at": ans.completed_at is not None})

    approver = unique("ada")
    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name, {"approver": approver})
        task = wait_for("the task", lambda: c.tasks(handler_id=h.handler_id)[0])[0]
        assert task.assignee == approver and task.title == "Approve expense"
        assert struct_to_dict(task.input) == {"lines": [{"item": "taxi", "amount": 42}]}
        with pytest.raises(InvalidArgument):
            c.complete_task(task.task_id, {"approved": "yes"}, completed_by=approver)
        c.complete_task(task.task_id, {"approved": True}, completed_by=approver)
        got = wait_done(c, h.handler_id)
        assert struct_to_dict(got.result) == {"decision": {"approved": True}, "by": approver, "at": True}


def test_worker_task_cancelled(server: str) -> None:
    """A task cancelled with a reason: ask_human returns the cancellation."""
    name = unique("cancel-task-py")
    wf = Workflow(name)

    @wf.step(accepts=["start"], emits=["stop"])
    def review(ctx: StepContext, ev: Event) -> None:
        ans = ctx.ask_human("Approve expense", assignee="ada")
        ctx.send("stop", {"cancelled": ans.cancelled, "reason": ans.reason, "by": ans.completed_by})

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        task = wait_for("the task", lambda: c.tasks(handler_id=h.handler_id)[0])[0]
        t = c.cancel_task(task.task_id, "withdrawn", cancelled_by="bob")
        assert (t.cancel_reason, t.completed_by) == ("withdrawn", "bob")
        # A retry of a cancellation that got through returns the task.
        assert c.cancel_task(task.task_id, "withdrawn", cancelled_by="bob").cancel_reason == "withdrawn"
        got = wait_done(c, h.handler_id)
        assert struct_to_dict(got.result) == {"cancelled": True, "reason": "withdrawn", "by": "bob"}


def test_worker_context_operations(server: str) -> None:
    """get/set, once (computed once across re-runs), sleep, wait_for_key,
    collect, and send's local emits check."""
    name = unique("ops-py")
    wf = Workflow(name)
    calls: list[int] = []
    key = unique("key")

    @wf.step(accepts=["start"], emits=["stop"])
    def ops(ctx: StepContext, ev: Event) -> None:
        with pytest.raises(UndeclaredEvent):
            ctx.send("other", {})
        ctx.set("count", (ctx.get("count", 0)) + 1)
        token = ctx.once("token", lambda: calls.append(1) or "t-1")
        ctx.sleep(0.05)
        pub = ctx.wait_for_key(key)
        got = ctx.collect(ev, "start")
        ctx.set("gone", "x")
        ctx.set("gone", None)
        ctx.send("stop", {
            "count": ctx.get("count"), "token": token, "published": pub.data, "key": pub.key,
            "collected": [e.type for e in got or []], "gone": ctx.get("gone", "deleted"),
            "ids": [ctx.handler_id, ctx.workflow, ctx.step],
        })

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        c.publish(key, {"v": 7})  # seen by a wait since the handler started
        got = wait_done(c, h.handler_id)
        res = struct_to_dict(got.result)
        assert res["token"] == "t-1" and len(calls) == 1, (res, calls)
        assert res["published"] == {"v": 7} and res["key"] == key
        assert res["collected"] == ["start"] and res["gone"] == "deleted"
        assert res["ids"] == [h.handler_id, name, "ops"]
        assert res["count"] >= 1


def test_worker_refused_definition(server: str) -> None:
    """A definition that fails validation ends run() with InvalidArgument
    and the engine's message; a built-in workflow's name with
    FailedPrecondition."""
    invalid = Workflow(unique("never-stops"))

    @invalid.step(accepts=["start"], emits=[])
    def nothing(ctx: StepContext, ev: Event) -> None:
        pass

    builtin = Workflow("approval")

    @builtin.step(accepts=["start"], emits=["stop"])
    def decide(ctx: StepContext, ev: Event) -> None:
        pass

    for wf, cls, text in [
        (invalid, InvalidArgument, 'no step emits the "stop" event, so it can never complete'),
        (builtin, FailedPrecondition, "approval"),
    ]:
        t = WorkerThread(server, [wf])
        t.thread.join(WAIT)
        assert not t.thread.is_alive()
        assert isinstance(t.error, cls), t.error
        assert text in t.error.message


@pytest.mark.parametrize("how", ["step-timeout", "handler-cancelled"])
def test_worker_run_taken_back(server: str, how: str) -> None:
    """A run the server takes back: past its step's timeout (the dispatch's
    deadline, and cancel_run_id), or its handler cancelled (cancel_run_id
    alone): the coroutine is cancelled."""
    name = unique("taken-back-py")
    wf = Workflow(name)
    started, cancelled = threading.Event(), threading.Event()

    @wf.step(accepts=["start"], emits=["stop"], timeout=0.3 if how == "step-timeout" else None)
    async def stuck(ctx: AsyncStepContext, ev: Event) -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # never set
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        if how == "handler-cancelled":
            wait_for("the step started", started.is_set)
            c.cancel(h.handler_id)
        got = wait_done(c, h.handler_id)
        assert got.status == (FAILED if how == "step-timeout" else CANCELLED), got
        # (On a crowded machine the timeout may pass before the step starts.)
        if started.is_set():
            wait_for("the step was cancelled", cancelled.is_set)


def test_worker_step_fails_and_retries(server: str) -> None:
    name = unique("retry-py")
    wf = Workflow(name)

    @wf.step(accepts=["start"], emits=["stop"], retry=Retry(max_attempts=3, initial_backoff=0.01))
    def flaky(ctx: StepContext, ev: Event) -> None:
        if ctx.attempt < 2:
            raise ValueError(f"boom on attempt {ctx.attempt}")
        ctx.send("stop", {"attempt": ctx.attempt})

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        recs = list(c.stream(h.handler_id, include_internal=True))
        assert struct_to_dict(c.get(h.handler_id).result) == {"attempt": 2}
        errors = [r.step_state_changed.error for r in recs
                  if r.WhichOneof("kind") == "step_state_changed" and r.step_state_changed.error]
        assert errors == ["boom on attempt 1"]


def test_worker_step_fails_for_good(server: str) -> None:
    name = unique("fails-py")
    wf = Workflow(name)

    @wf.step(accepts=["start"], emits=["stop"])
    async def broken(ctx: AsyncStepContext, ev: Event) -> None:
        raise RuntimeError("no luck")

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        got = wait_done(c, h.handler_id)
        assert got.status == FAILED and "no luck" in got.error, got.error


def test_worker_local_waits_agree_with_the_engine(server: str) -> None:
    """Waits the worker answers itself (wait_for, sleep) take the same
    positions as the engine's, StepCall waits included: the step runs once
    per park and once to the end, never again from the top because the
    server found a local answer wrong."""
    name, key = unique("local-py"), unique("key")
    wf = Workflow(name)
    runs: list[int] = []

    @wf.step(accepts=["start"], emits=["stop"])
    def waits(ctx: StepContext, ev: Event) -> None:
        runs.append(1)
        pub = ctx.wait_for_key(key)  # a StepCall: position 0
        go = ctx.wait_for("go")  # answered here from now on: 1, 2, 3
        try:
            ctx.wait_for("late", timeout=0.05)
        except WaitTimeout:
            ctx.sleep(0.05)
            ctx.send("stop", {"published": pub.data, "go": go.data})

    with WorkerThread(server, [wf]), connect(server) as c:
        h = c.run(name)
        parks = 0
        for rec in c.stream(h.handler_id, include_internal=True):
            if rec.WhichOneof("kind") == "idle_changed" and rec.idle_changed.idle:
                parks += 1
                if parks == 1:  # on the key
                    c.publish(key, {"v": 1})
                elif parks == 2:  # on go
                    c.send(h.handler_id, "go", {"n": 2})
        got = wait_done(c, h.handler_id)
        assert struct_to_dict(got.result) == {"published": {"v": 1}, "go": {"n": 2}}
        # Parked on the key, on go, on late, on the sleep; then to the end.
        assert len(runs) == 5, runs


def test_worker_park_is_not_swallowed(server: str) -> None:
    """`except Exception` does not catch Waiting; a step that swallows it
    anyway (`except BaseException`) still parks, its later operations raise
    Waiting again and its later sends are dropped."""
    caught, swallowed = unique("caught-py"), unique("swallowed-py")
    cw, sw = Workflow(caught), Workflow(swallowed)
    seen: list[str] = []

    @cw.step(accepts=["start"], emits=["stop"])
    def careless(ctx: StepContext, ev: Event) -> None:
        try:
            got = ctx.wait_for("go")
        except Exception:  # noqa: BLE001 - what the test is about
            ctx.send("stop", {"swallowed": True})
            return
        ctx.send("stop", {"got": got.data})

    @sw.step(accepts=["start"], emits=["stop"])
    async def reckless(ctx: AsyncStepContext, ev: Event) -> None:
        try:
            got = await ctx.wait_for("go")
        except BaseException:  # noqa: BLE001
            try:
                await ctx.get("anything")
            except Waiting:
                seen.append("waiting again")
            ctx.send("stop", {"swallowed": True})
            return
        ctx.send("stop", {"got": got.data})

    with WorkerThread(server, [cw, sw], max_runs=2), connect(server) as c:
        for name in (caught, swallowed):
            h = c.run(name)
            wait_for(f"{name} parked", lambda h=h: c.get(h.handler_id).HasField("idle"))
            c.send(h.handler_id, "go", {"n": 1})
            got = wait_done(c, h.handler_id)
            assert struct_to_dict(got.result) == {"got": {"n": 1}}, name
        assert seen == ["waiting again"]


@pytest.mark.parametrize("limit", [1, 2])
def test_worker_limit_holds_across_workers(server: str, limit: int) -> None:
    """A step with a worker limit served by two workers of max_runs=4: never
    more runs of it at once across both than the limit (limit 2 shows that
    the test would see more), and both workers take runs."""
    name = unique(f"limit{limit}-py")
    n = 6
    wf = Workflow(name)
    lock = threading.Lock()
    active: list[int] = []
    most = [0]
    gates: dict[int, threading.Event] = {}
    # Which workers ran steps of the workflow: their threads carry their names.
    ran_on: set[str] = set()

    def note() -> None:
        with lock:
            ran_on.add(threading.current_thread().name.split("_")[0].removeprefix("wfd-step-"))

    @wf.step(accepts=["start"], emits=["item"])
    def split(ctx: StepContext, ev: Event) -> None:
        note()
        for i in range(n):
            ctx.send("item", {"i": i})

    @wf.step(accepts=["item"], emits=["done"], workers=limit)
    def work(ctx: StepContext, ev: Event) -> None:
        note()
        i = ev.data["i"]
        gate = threading.Event()
        with lock:
            active.append(i)
            gates[i] = gate
            most[0] = max(most[0], len(active))
        gate.wait(WAIT)
        with lock:
            active.remove(i)
        ctx.send("done", {"i": i})

    @wf.step(accepts=["done"], emits=["stop"])
    def gather(ctx: StepContext, ev: Event) -> None:
        note()
        got = ctx.collect(ev, *["done"] * n)
        if got:
            ctx.send("stop", {"items": sorted(e.data["i"] for e in got)})

    with WorkerThread(server, [wf], name="a", max_runs=4), WorkerThread(server, [wf], name="b", max_runs=4), \
            connect(server) as c:
        h = c.run(name)
        released: set[int] = set()
        while len(released) < n:
            want = min(limit, n - len(released))

            def held() -> list[int] | None:
                with lock:
                    fresh = [i for i in active if i not in released]
                return fresh if len(fresh) >= want else None

            runs = wait_for(f"{want} new runs of work in progress", held)
            with lock:
                assert len(active) <= limit, active
            assert len([s for s in _running_steps(server) if s[1] == "work"]) <= limit
            with lock:
                for i in runs:
                    released.add(i)
                    gates[i].set()
        got = wait_done(c, h.handler_id)
        assert struct_to_dict(got.result) == {"items": list(range(n))}
        assert most[0] == limit
        assert ran_on == {"a", "b"}


def _running_steps(addr: str) -> list[tuple[str, str]]:
    """(worker id, step) of every run in progress on a worker."""
    from wfd.v1 import worker_pb2, worker_pb2_grpc

    with connect(addr) as c:
        stub = worker_pb2_grpc.WorkerServiceStub(c.channel)  # type: ignore[no-untyped-call]
        res = stub.ListWorkers(worker_pb2.ListWorkersRequest(), timeout=WAIT)
        return [(x.worker_id, r.step) for x in res.workers for r in x.runs]
