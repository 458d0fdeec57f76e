"""A task's life besides its answer against a real `wfd serve`: claim,
comment, unclaim, reassign, and the answer refused to someone who does
not hold it (Client and AsyncClient)."""

from __future__ import annotations

import pytest
from conftest import unique, wait_for, wait_for_async

import wfd_client as w
from wfd_client import AsyncClient, Client, FailedPrecondition, TaskStatus

COMPLETED = TaskStatus.Value("TASK_STATUS_COMPLETED")


def test_task_life(client: Client) -> None:
    h = client.run("expense", {"amount": 7, "approver": "ada"}, handler_id=unique("life"))
    task = wait_for("a task", lambda: next(iter(client.tasks(handler_id=h.handler_id)[0]), None))
    assert client.claim_task(task.task_id, by="ada").claimed_by == "ada"
    with pytest.raises(FailedPrecondition, match="claimed by ada"):
        client.claim_task(task.task_id, by="bob")
    with pytest.raises(FailedPrecondition, match="claimed by ada"):
        client.complete_task(task.task_id, {"approved": True}, completed_by="bob")
    t = client.comment_task(task.task_id, "receipt attached", by="ada")
    assert [(x.by, x.text) for x in t.comments] == [("ada", "receipt attached")]
    assert client.unclaim_task(task.task_id, by="ada").claimed_by == ""
    assert client.reassign_task(task.task_id, "group:finance", by="ada").assignee == "group:finance"
    done = client.complete_task(task.task_id, {"approved": True}, completed_by="bob")
    assert done.status == COMPLETED and len(done.comments) == 1


async def test_async_task_life(aclient: AsyncClient) -> None:
    h = await aclient.run("expense", {"amount": 8, "approver": "ada"})
    async def first_task() -> object:
        return next(iter((await aclient.tasks(handler_id=h.handler_id))[0]), None)

    task = await wait_for_async("a task", first_task)
    t = await aclient.claim_task(task.task_id, by="ada")
    assert t.claimed_by == "ada" and t.HasField("claimed_at")
    t = await aclient.comment_task(t.task_id, "looks fine", by="ada")
    t = await aclient.reassign_task(t.task_id, "bob", by="ada")
    assert t.assignee == "bob" and t.claimed_by == "" and len(t.comments) == 1
    assert (await aclient.unclaim_task(t.task_id, by="bob")).claimed_by == ""


def test_worker_task_escalates(server: str, client: Client) -> None:
    from conftest import WorkerThread

    from wfd_client.worker import Escalation, Event, StepContext, Workflow

    wf = Workflow(unique("escalate-py"))

    @wf.step(accepts=["start"], emits=["stop"])
    def ask(ctx: StepContext, ev: Event) -> None:
        a = ctx.ask_human("Look", assignee="ada", escalation=Escalation(after=0.2, reassign="group:leads", notify="py-escalations"))
        ctx.send("stop", {"by": a.completed_by})

    with WorkerThread(server, [wf]):
        h = client.run(wf.name, {})
        task = wait_for("a task", lambda: next(iter(client.tasks(handler_id=h.handler_id)[0]), None))
        assert task.HasField("due")
        assert client.tasks(handler_id=h.handler_id, claim="claimed")[0] == []
        done = wait_for("the escalation", lambda: (t := client.task(task.task_id)).escalated and t)
        assert done.assignee == "group:leads"
        assert len(client.tasks(handler_id=h.handler_id, overdue=True)[0]) == 1
        pub, _ = client.published_events(key="py-escalations")
        assert pub and w.struct_to_dict(pub[0].data)["task_id"] == task.task_id
    with pytest.raises(ValueError, match="claim must be"):
        client.tasks(claim="maybe")
