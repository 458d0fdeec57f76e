"""Workflow versions served by Python workers, against a real `wfd serve`:
one worker serving two versions of a workflow side by side, each handler
finishing on its own version's code; a dry-run and a real upgrade from v1
to v2 (UpgradeHandlers through the clients); current version and deletion
refusals; a changed definition under a version name the server has,
refused with AlreadyExists, which ends the worker. And, without a server,
what the SDK checks and how a worker routes a dispatch to a version's code.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import pytest
from conftest import WAIT, WorkerThread, aconnect, connect, unique, wait_for, wait_for_async

import wfd_client as w
from wfd_client import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound, struct_to_dict
from wfd_client._worker_core import Core
from wfd.v1 import worker_pb2
from wfd_client.worker import AsyncWorker, Event, EventType, StepContext, Worker, Workflow

COMPLETED = w.HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
CAN_MOVE = w.UpgradeOutcome.Value("UPGRADE_OUTCOME_CAN_MOVE")
MOVED = w.UpgradeOutcome.Value("UPGRADE_OUTCOME_MOVED")
REFUSED = w.UpgradeOutcome.Value("UPGRADE_OUTCOME_REFUSED")

V1_INPUT = {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}
V2_INPUT = {
    "type": "object",
    "properties": {"amount": {"type": "number"}, "note": {"type": "string"}},
    "required": ["amount"],
}


class Ran:
    """How many runs of "review" each version's code made (steps run in
    the worker's threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._n: Counter[str] = Counter()

    def add(self, version: str) -> None:
        with self._lock:
            self._n[version] += 1

    def __getitem__(self, version: str) -> int:
        with self._lock:
            return self._n[version]


def expense(name: str, version: str, ran: Ran, *, like: str | None = None, make_current: bool = True) -> Workflow:
    """server/worker_versions_test.go's expenseVersion: "review" waits for
    "approve" and finishes with the version whose code ran it. v2 adds a
    step ("audit", on an "audit" event from outside) and an optional input
    field ("note", a string). ``like`` defines it as that version does
    (v2's definition under the name v1, say)."""
    shape = like or version
    wf = Workflow(
        name, version=version, make_current=make_current, events=[EventType("approve")],
        input_schema=V2_INPUT if shape == "v2" else V1_INPUT, external=["audit"] if shape == "v2" else [],
    )

    @wf.step(accepts=["start"], emits=["stop"])
    def review(ctx: StepContext, ev: Event) -> None:
        ran.add(version)
        ctx.wait_for("approve")
        ctx.send("stop", {"version": version})

    if shape == "v2":

        @wf.step(accepts=["audit"])
        def audit(ctx: StepContext, ev: Event) -> None:
            ctx.write("audited", {"by": version})

    return wf


def idle(c: w.Client, id: str) -> w.Handler:
    return wait_for(f"{id} idle", lambda: (h := c.get(id)).HasField("idle") and h)


def approve(c: w.Client, id: str) -> str:
    """Answers an idle expense handler and returns the version that finished it."""
    h = c.send(id, "approve", wait=WAIT)
    assert h.status == COMPLETED, (h.status, h.error)
    return str(struct_to_dict(h.result)["version"])


def outcomes(got: list[w.HandlerUpgrade]) -> dict[str, int]:
    return {w.UpgradeOutcome.Name(o): n for o, n in Counter(u.outcome for u in got).items()}


def test_one_worker_serves_two_versions_and_upgrades(server: str) -> None:
    name = unique("expense-py")
    ran = Ran()
    # Both versions are new to the server: the first is current anyway,
    # and v2, registered after it, becomes current.
    v1, v2 = expense(name, "v1", ran, make_current=False), expense(name, "v2", ran)
    with WorkerThread(server, [v1, v2], name="t-versions", max_runs=4), connect(server) as c:
        wf = c.workflow(name)
        assert wf.version == "v2"
        assert [(v.version, v.current, v.workers_connected) for v in wf.versions] == [("v1", False, 1), ("v2", True, 1)]
        assert list(wf.versions[1].definition.steps) == ["review", "audit"]
        listed = [x for x in c.workflows(versions=True) if x.name == name]
        assert [v.version for v in listed[0].versions] == ["v1", "v2"]

        # Handlers on v1 (by name), one with a note v2's schema refuses, and on v2 (current).
        olds = [c.run(name, {"amount": i}, version="v1") for i in range(3)]
        odd = c.run(name, {"amount": 7, "note": 7}, version="v1")
        new = c.run(name, {"amount": 1, "note": "new"})
        assert [h.workflow_version for h in [*olds, odd]] == ["v1"] * 4
        assert new.workflow_version == "v2"
        for h in [*olds, odd, new]:
            idle(c, h.handler_id)
        assert (ran["v1"], ran["v2"]) == (4, 1)
        # What only v2 takes: its external "audit" (run by v2's own "audit" step).
        c.send(new.handler_id, "audit")
        with pytest.raises(InvalidArgument):
            c.send(olds[0].handler_id, "audit")
        assert sorted(h.handler_id for h in c.list_all(workflow=name, workflow_version="v1")) == sorted(
            h.handler_id for h in [*olds, odd]
        )

        # Each finishes on its own version's code.
        idle(c, new.handler_id)
        assert approve(c, new.handler_id) == "v2"
        assert approve(c, olds[0].handler_id) == "v1"
        left = [h.handler_id for h in olds[1:]]

        # The dry run (a page per handler) says who can move and why the odd one cannot; nothing moves.
        dry = c.upgrade_all_handlers(name, "v1", dry_run=True, page_size=1)
        assert outcomes(dry) == {"UPGRADE_OUTCOME_CAN_MOVE": 2, "UPGRADE_OUTCOME_REFUSED": 1}
        assert sorted(u.handler_id for u in dry if u.outcome == CAN_MOVE) == sorted(left)
        (refused,) = [u for u in dry if u.outcome == REFUSED]
        assert refused.handler_id == odd.handler_id
        assert "its input does not match the input schema of v2" in refused.reason
        assert all(c.get(id).workflow_version == "v1" for id in left)
        page = c.upgrade_handlers(name, "v1", handler_ids=left[:1], dry_run=True)
        assert page.to_version == "v2" and not page.next_page_token
        assert [(u.handler_id, u.outcome) for u in page.handlers] == [(left[0], CAN_MOVE)]

        # The upgrade moves them (to the current version), page after page.
        moved = c.upgrade_all_handlers(name, "v1", page_size=1)
        assert outcomes(moved) == {"UPGRADE_OUTCOME_MOVED": 2, "UPGRADE_OUTCOME_REFUSED": 1}
        assert sorted(u.handler_id for u in moved if u.outcome == MOVED) == sorted(left)
        assert all(c.get(id).workflow_version == "v2" for id in left)

        # Moved handlers take what only v2 takes and finish on v2's code;
        # v1's code runs none of their runs. The odd one finishes on v1.
        before = ran["v1"]
        for id in left:
            c.send(id, "audit")
            idle(c, id)
            assert approve(c, id) == "v2"
        assert ran["v1"] == before
        assert approve(c, odd.handler_id) == "v1"

        # The listing counts each version's handlers.
        def counts() -> dict[str, tuple[int, int]]:
            return {v.version: (v.running + v.released, v.finished) for v in c.workflow(name).versions}

        wait_for(lambda: f"counts {counts()}", lambda: counts() == {"v1": (0, 2), "v2": (0, 3)})

        # The current version cannot be deleted; another can be made current.
        with pytest.raises(FailedPrecondition, match="current version"):
            c.delete_workflow_version(name, "v2")
        with pytest.raises(NotFound):
            c.upgrade_handlers(name, "v9", dry_run=True)
        assert c.set_current_version(name, "v1").version == "v1"
        back = c.run(name, {"amount": 2})
        assert back.workflow_version == "v1"
        idle(c, back.handler_id)
        assert approve(c, back.handler_id) == "v1"


async def test_changed_definition_under_a_version_name_is_already_exists(server: str) -> None:
    """A version is immutable: a worker registering v2's definition under
    the name v1 (the server has v1) ends with AlreadyExists; the worker
    serving the real v1 (and v2) goes on, and the asyncio client's version
    calls work on it."""
    name = unique("expense-changed-py")
    ran = Ran()
    first = AsyncWorker(server, workflows=[expense(name, "v1", ran), expense(name, "v2", ran)], name="t-v1", call_timeout=WAIT)
    task = asyncio.ensure_future(first.run())
    try:
        await wait_for_async("the v1 worker connected", lambda: first.worker_id or task.done())
        assert not task.done(), task
        changed = AsyncWorker(server, workflows=[expense(name, "v1", ran, like="v2")], name="t-changed")
        with pytest.raises(AlreadyExists, match="another definition"):
            await asyncio.wait_for(changed.run(), WAIT)
        # The sync Worker's run() ends with it too.
        t = WorkerThread(server, [expense(name, "v1", ran, like="v2")], name="t-changed-sync")
        t.thread.join(WAIT)
        assert not t.thread.is_alive() and isinstance(t.error, AlreadyExists), t.error

        async with aconnect(server) as c:
            wf = await c.workflow(name)
            assert wf.version == "v2" and [v.version for v in wf.versions] == ["v1", "v2"]
            h = await c.run(name, {"amount": 3}, version="v1")
            assert h.workflow_version == "v1"
            await wait_for_async(f"{h.handler_id} idle", lambda: _idle(c, h.handler_id))
            page = await c.upgrade_handlers(name, "v1", dry_run=True)
            assert page.to_version == "v2" and not page.next_page_token
            assert [(u.handler_id, u.outcome) for u in page.handlers] == [(h.handler_id, CAN_MOVE)]
            assert await c.upgrade_all_handlers(name, "v1", to_version="v2", dry_run=True, page_size=1) == list(page.handlers)
            with pytest.raises(InvalidArgument):
                await c.upgrade_handlers(name, "v1", to_version="v1", dry_run=True)
            with pytest.raises(FailedPrecondition, match="current version"):
                await c.delete_workflow_version(name, "v2")
            assert (await c.set_current_version(name, "v1")).version == "v1"
            with pytest.raises(FailedPrecondition):
                await c.delete_workflow_version(name, "v1")
            done = await c.send(h.handler_id, "approve", wait=WAIT)
            assert struct_to_dict(done.result) == {"version": "v1"}
            assert [x.handler_id async for x in c.list_all(workflow=name, workflow_version="v1")] == [h.handler_id]
    finally:
        first.stop()
        await asyncio.wait_for(task, WAIT)


async def _idle(c: w.AsyncClient, id: str) -> bool:
    return (await c.get(id)).HasField("idle")


# --- without a server --------------------------------------------------------


def test_version_names_are_checked() -> None:
    for good in ["v1", "2026.11.28", "a_b-C.9", "x" * 64]:
        assert Workflow("w", version=good).version == good
    assert Workflow("w").version == "" and Workflow("w", version=None).version == ""
    for bad in ["x" * 65, "v 1", "v@1", "é", "v1\n", "a/b"]:
        with pytest.raises(ValueError, match="version"):
            Workflow("w", version=bad)
    d = Workflow("w", version="v3", make_current=False).definition()
    assert (d.version, d.make_current) == ("v3", False)
    d = Workflow("w").definition()
    assert (d.version, d.make_current) == ("", True)


def _wf(name: str, version: str | None, tag: str) -> Workflow:
    wf = Workflow(name, version=version)

    @wf.step(accepts=["start"], emits=["stop"])
    def review(ctx: StepContext, ev: Event) -> None:
        ctx.send("stop", {"tag": tag})

    return wf


def test_a_version_is_given_once() -> None:
    with pytest.raises(ValueError, match="version 'v1' of workflow 'w' is given twice"):
        Worker(workflows=[_wf("w", "v1", "a"), _wf("w", "v1", "b")])
    one = _wf("w", None, "a")
    with pytest.raises(ValueError, match="given twice"):
        Worker(workflows=[one, one])
    Worker(workflows=[_wf("w", "v1", "a"), _wf("w", "v2", "b"), _wf("other", "v1", "c")])


def _core(workflows: list[Workflow]) -> Core:
    return Core(
        "127.0.0.1:1", workflows, name="t", max_runs=1, retry=None, call_timeout=None, credentials=None,
        metadata=None, options=(), backoff=0.1,
    )


def _tag(core: Core, workflow: str, version: str) -> str | None:
    code = core.code_for(worker_pb2.Dispatch(workflow=workflow, workflow_version=version, step="review"))
    if code is None:
        return None
    step = code.steps["review"]
    captured: list[str] = []

    class Ctx:
        def send(self, type: str, data: dict[str, str]) -> None:
            captured.append(data["tag"])

    step.fn(Ctx(), None)
    return captured[0]


def test_dispatches_go_to_their_versions_code() -> None:
    core = _core([_wf("w", "v1", "a"), _wf("w", None, "b"), _wf("solo", None, "s")])
    # Before Connected (or from a server that names no version): the only
    # definition of a name, none where there are several.
    assert _tag(core, "solo", "") == "s"
    assert _tag(core, "w", "") is None
    core.connected(["v1", "0123456789abcdef", "fedcba9876543210"])
    assert _tag(core, "w", "v1") == "a"
    assert _tag(core, "w", "0123456789abcdef") == "b"
    assert _tag(core, "solo", "fedcba9876543210") == "s"
    assert _tag(core, "solo", "") == "s"
    assert _tag(core, "w", "v9") is None
    assert _tag(core, "other", "v1") is None
