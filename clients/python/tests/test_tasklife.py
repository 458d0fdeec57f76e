"""A task's life besides its answer against a real `wfd serve`: claim,
comment, unclaim, reassign, and the answer refused to someone who does
not hold it (Client and AsyncClient)."""

from __future__ import annotations

import pytest
from conftest import unique, wait_for, wait_for_async

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
