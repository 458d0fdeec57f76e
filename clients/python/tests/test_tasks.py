"""Human tasks, published events and child handlers against a real
`wfd serve`, through Client and AsyncClient: the `expense`, `order` and
`batch` example workflows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from conftest import Server, aconnect, connect, wait_for, wait_for_async

import wfd_client as w
from wfd_client import AsyncClient, Client, HandlerStatus, Residency, TaskStatus, is_terminal, struct_to_dict

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
FAILED = HandlerStatus.Value("HANDLER_STATUS_FAILED")
RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")
RELEASED = Residency.Value("RESIDENCY_RELEASED")
PENDING = TaskStatus.Value("TASK_STATUS_PENDING")
TASK_COMPLETED = TaskStatus.Value("TASK_STATUS_COMPLETED")
TASK_CANCELLED = TaskStatus.Value("TASK_STATUS_CANCELLED")

SCHEMA_PROPERTIES = {"approved": {"type": "boolean"}, "reason": {"type": "string"}}
# Answers the expense schema refuses, and the field each error names.
BAD_ANSWERS: list[tuple[dict[str, Any], str]] = [
    ({"approved": "yes"}, "approved"),
    ({"approved": False}, "reason"),
    ({"approved": True, "extra": 1}, "extra"),
]


def is_idle(rec: w.Record) -> bool:
    return rec.WhichOneof("kind") == "idle_changed" and rec.idle_changed.idle


def wait_idle(c: Client, id: str) -> None:
    for rec in c.stream(id, include_internal=True):
        if is_idle(rec):
            return
    raise AssertionError("handler finished without going idle")


def finish(c: Client, id: str) -> list[w.Record]:
    recs = list(c.stream(id, include_internal=True))
    assert recs and is_terminal(recs[-1])
    return recs


def wait_task(c: Client, handler_id: str) -> w.Task:
    """The handler's first task, once the inbox shows it."""
    tasks: list[w.Task] = wait_for(f"a task for {handler_id}", lambda: c.tasks(handler_id=handler_id)[0])
    return tasks[0]


def unique(prefix: str) -> str:
    return f"{prefix}-{w.uuid7()}"


# --- sync ----------------------------------------------------------------------


def test_expense_flow(client: Client) -> None:
    h = client.run("expense", {"amount": 120, "approver": "ada"})
    task = wait_task(client, h.handler_id)
    assert (task.title, task.workflow, task.step, task.assignee) == ("Approve expense", "expense", "review", "ada")
    assert task.status == PENDING and task.HasField("created_at") and not task.HasField("answer")
    d = w.task_to_dict(task)
    assert d["status"] == "TASK_STATUS_PENDING" and d["task_id"] == task.task_id and d["answer"] == {}
    assert d["answer_schema"]["properties"] == SCHEMA_PROPERTIES
    assert d["answer_schema"]["required"] == ["approved"]

    # ada's pending inbox holds it, finance's does not.
    inbox = [t.task_id for t in client.list_all_tasks(assignee="ada", statuses=["pending"])]
    assert task.task_id in inbox
    assert task.task_id not in [t.task_id for t in client.list_all_tasks(assignee="finance", statuses=PENDING)]

    # The idle handler shows the task it waits for.
    wait_idle(client, h.handler_id)
    waiters = client.get(h.handler_id).idle.waiters
    assert [(x.task.task_id, x.task.assignee) for x in waiters] == [(task.task_id, "ada")]

    # Answers that fail the schema change nothing.
    for answer, field in BAD_ANSWERS:
        with pytest.raises(w.InvalidArgument) as ei:
            client.complete_task(task.task_id, answer, completed_by="ada")
        assert ei.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "schema" in ei.value.message and field in ei.value.message
    still = client.task(task.task_id)
    assert still.status == PENDING and not still.HasField("answer")

    # The answer completes the task and the handler.
    done = client.complete_task(task.task_id, {"approved": True}, completed_by="ada")
    assert done.task_id == task.task_id and done.status == TASK_COMPLETED
    assert done.completed_by == "ada" and done.HasField("completed_at")
    assert struct_to_dict(done.answer) == {"approved": True}
    assert w.task_to_dict(done)["answer"] == {"approved": True}
    recs = finish(client, h.handler_id)
    assert recs[-1].handler_finished.status == COMPLETED
    result = struct_to_dict(client.get(h.handler_id).result)
    assert result == {"decision": {"approved": True}, "reviewed_by": "ada", "expense": {"amount": 120, "approver": "ada"}}

    # Answered once: a second answer, even the same one, is refused.
    for answer in ({"approved": True}, {"approved": False, "reason": "late"}):
        with pytest.raises(w.FailedPrecondition) as fp:
            client.complete_task(task.task_id, answer, completed_by="ada")
        assert "completed" in fp.value.message
    assert task.task_id not in [t.task_id for t in client.list_all_tasks(assignee="ada", statuses=["pending"])]
    completed = client.list_all_tasks(assignee="ada", statuses=["TASK_STATUS_COMPLETED"], workflow="expense")
    assert task.task_id in [t.task_id for t in completed]


def test_rejection_and_cancelled_task(client: Client) -> None:
    h = client.run("expense", {"amount": 5})
    task = wait_task(client, h.handler_id)
    assert task.assignee == "finance"
    client.complete_task(task.task_id, {"approved": False, "reason": "no receipt"})
    finish(client, h.handler_id)
    result = struct_to_dict(client.get(h.handler_id).result)
    assert result["decision"] == {"approved": False, "reason": "no receipt"} and result["reviewed_by"] == ""

    h2 = client.run("expense")
    t2 = wait_task(client, h2.handler_id)
    client.cancel(h2.handler_id)
    assert client.task(t2.task_id).status == TASK_CANCELLED
    with pytest.raises(w.FailedPrecondition, match="cancelled"):
        client.complete_task(t2.task_id, {"approved": True})
    got = [t.task_id for t in client.list_all_tasks(handler_id=h2.handler_id, statuses=["cancelled", "expired"])]
    assert got == [t2.task_id]


def test_tasks_pages(client: Client) -> None:
    approver = unique("pager")
    hs = [client.run("expense", {"approver": approver, "i": i}) for i in range(5)]
    for h in hs:
        wait_task(client, h.handler_id)
    page, token = client.tasks(assignee=approver, page_size=2)
    assert len(page) == 2 and token
    every = list(client.list_all_tasks(assignee=approver, page_size=2))
    ids = [t.task_id for t in every]
    assert len(ids) == len(set(ids)) == 5
    assert ids[:2] == [t.task_id for t in page]
    assert [t.task_id for t in client.list_all_tasks(assignee=approver, page_size=2, page_token=token)] == ids[2:]
    created = [t.created_at.ToNanoseconds() for t in every]
    assert created == sorted(created, reverse=True)  # newest first
    assert {t.handler_id for t in every} == {h.handler_id for h in hs}
    for h in hs:
        client.cancel(h.handler_id)
    assert client.tasks(assignee=approver, statuses="pending") == ([], "")


def test_publish_wakes_a_released_order(client: Client) -> None:
    order_id = unique("o")
    h = client.run("order", {"order_id": order_id})
    wait_idle(client, h.handler_id)
    assert [x.key for x in client.get(h.handler_id).idle.waiters] == [f"payment:{order_id}"]
    assert client.release(h.handler_id).residency == RELEASED

    res = client.publish(f"payment:{order_id}", {"amount": 9.5})
    assert uuid.UUID(res.event_id).version == 7 and res.seq > 0
    assert res.woken == 1
    recs = finish(client, h.handler_id)
    assert "handler_restored" in [r.WhichOneof("kind") for r in recs]
    done = client.get(h.handler_id)
    assert done.status == COMPLETED
    result = struct_to_dict(done.result)
    assert result["order_id"] == order_id and result["payment"] == {"amount": 9.5}

    # Nobody waits any more; the same event id is logged once.
    again = client.publish(f"payment:{order_id}")
    assert again.woken == 0 and again.seq > res.seq
    a = client.publish("py-test", event_id=f"ev-{order_id}")
    b = client.publish("py-test", {"ignored": True}, event_id=f"ev-{order_id}")
    assert a.event_id == b.event_id == f"ev-{order_id}" and a.seq == b.seq


def test_publish_to_one_handler(client: Client) -> None:
    order_id = unique("shared")
    x = client.run("order", {"order_id": order_id})
    y = client.run("order", {"order_id": order_id})
    wait_idle(client, x.handler_id)
    wait_idle(client, y.handler_id)
    assert client.publish(f"payment:{order_id}", {"to": "y"}, handler_id=y.handler_id).woken == 1
    finish(client, y.handler_id)
    assert struct_to_dict(client.get(y.handler_id).result)["payment"] == {"to": "y"}
    assert client.get(x.handler_id).status == RUNNING
    assert client.publish(f"payment:{order_id}", {"to": "all"}).woken == 1
    finish(client, x.handler_id)
    assert struct_to_dict(client.get(x.handler_id).result)["payment"] == {"to": "all"}


def test_batch_children(client: Client) -> None:
    h = client.run("batch", {"n": 5, "fail": [1, 3]})
    recs = finish(client, h.handler_id)
    fin = recs[-1].handler_finished
    assert fin.status == COMPLETED
    result = struct_to_dict(fin.result)
    assert len(result["completed"]) == 3 and len(result["failed"]) == 2 and result["pending"] == []

    parent = client.get(h.handler_id)
    assert parent.parent_id == "" and len(parent.children) == 5
    assert set(parent.children) == set(result["completed"]) | set(result["failed"])
    assert w.message_to_dict(parent)["children"] == list(parent.children)
    for id in result["failed"]:
        child = client.get(id)
        assert child.parent_id == h.handler_id and child.workflow == "job"
        assert child.status == FAILED and "failed as asked" in child.error
    child = client.get(result["completed"][0])
    assert child.parent_id == h.handler_id and child.status == COMPLETED and list(child.children) == []
    # In order: job i got index i.
    kids = [client.get(id) for id in parent.children]
    assert [struct_to_dict(k.result).get("index", "failed") for k in kids] == [0, "failed", 2, "failed", 4]


def test_parent_waiter_lists_children(client: Client) -> None:
    h = client.run("batch", {"n": 2, "job_wait": "go"})
    wait_idle(client, h.handler_id)
    parent = client.get(h.handler_id)
    kids = list(parent.idle.waiters[0].children)
    assert len(kids) == 2 and kids == list(parent.children)
    for k in kids:
        wait_idle(client, k)
        client.send(k, "go")
    finish(client, h.handler_id)
    assert struct_to_dict(client.get(h.handler_id).result)["completed"] == kids


def test_task_errors(client: Client) -> None:
    with pytest.raises(w.NotFound, match="no-such-task"):
        client.task("no-such-task")
    with pytest.raises(w.NotFound, match="no-such-task"):
        client.complete_task("no-such-task", {"approved": True})
    with pytest.raises(w.InvalidArgument, match="key is required"):
        client.publish("")
    # Refused by the client before any call.
    with pytest.raises(w.InvalidArgument, match="unknown task status 'sleepy'"):
        client.tasks(statuses=["sleepy"])
    with pytest.raises(w.InvalidArgument, match="page size"):
        client.tasks(page_size=-1)
    with pytest.raises(w.InvalidArgument, match="client: answer"):
        client.complete_task("t", {"x": object()})
    with pytest.raises(w.InvalidArgument, match="client: answer"):
        client.complete_task("t", [True])  # type: ignore[arg-type]
    with pytest.raises(w.InvalidArgument, match="client: data"):
        client.publish("k", {"x": {1, 2}})


# --- mine: the caller's own tasks ---------------------------------------------

ADA_TOKEN = "ada-token"


def test_tasks_mine_without_authentication(client: Client) -> None:
    with pytest.raises(w.FailedPrecondition, match="authenticated"):
        client.tasks(mine=True)
    with pytest.raises(w.FailedPrecondition, match="authenticated"):
        list(client.list_all_tasks(mine=True))


@pytest.fixture(scope="module")
def auth_server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`wfd serve --auth-tokens` with one token, ada's."""
    d: Path = tmp_path_factory.mktemp("wfd-auth")
    tokens = d / "tokens.yaml"
    tokens.write_text(f"tokens:\n  - token: {ADA_TOKEN}\n    subject: ada\n    roles: [reader, tasks, starter]\n")
    srv = Server(wfd_bin, d / "data", extra_args=["--auth-tokens", str(tokens)], token=ADA_TOKEN)
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


def test_tasks_mine_with_a_token(auth_server: str) -> None:
    with connect(auth_server, token=ADA_TOKEN) as c:
        ada = c.run("expense", {"approver": "ada"})
        bob = c.run("expense", {"approver": "bob"})
        ada_task, bob_task = wait_task(c, ada.handler_id), wait_task(c, bob.handler_id)
        page, _ = c.tasks(mine=True)
        assert ada_task.task_id in [t.task_id for t in page]
        assert bob_task.task_id not in [t.task_id for t in page]
        assert {t.assignee for t in page} == {"ada"}
        every = [t.task_id for t in c.list_all_tasks(mine=True, statuses=["pending"], page_size=1)]
        assert ada_task.task_id in every and bob_task.task_id not in every
        with pytest.raises(w.InvalidArgument, match="assignee"):
            c.tasks(mine=True, assignee="bob")


# --- asyncio -------------------------------------------------------------------


async def await_idle(c: AsyncClient, id: str) -> None:
    async with c.stream(id, include_internal=True) as s:
        async for rec in s:
            if is_idle(rec):
                return
    raise AssertionError("handler finished without going idle")


async def await_finish(c: AsyncClient, id: str) -> list[w.Record]:
    recs = [rec async for rec in c.stream(id, include_internal=True)]
    assert recs and is_terminal(recs[-1])
    return recs


async def await_task(c: AsyncClient, handler_id: str) -> w.Task:
    async def tasks() -> list[w.Task]:
        return (await c.tasks(handler_id=handler_id))[0]

    found: list[w.Task] = await wait_for_async(f"a task for {handler_id}", tasks)
    return found[0]


async def test_aio_expense_flow(aclient: AsyncClient) -> None:
    h = await aclient.run("expense", {"amount": 120, "approver": "ada"})
    task = await await_task(aclient, h.handler_id)
    assert task.assignee == "ada" and task.status == PENDING
    assert w.task_to_dict(task)["answer_schema"]["properties"] == SCHEMA_PROPERTIES
    inbox = [t.task_id async for t in aclient.list_all_tasks(assignee="ada", statuses=["pending"])]
    assert task.task_id in inbox

    for answer, field in BAD_ANSWERS:
        with pytest.raises(w.InvalidArgument) as ei:
            await aclient.complete_task(task.task_id, answer, completed_by="ada")
        assert "schema" in ei.value.message and field in ei.value.message
    assert (await aclient.task(task.task_id)).status == PENDING

    done = await aclient.complete_task(task.task_id, {"approved": True}, completed_by="ada")
    assert done.status == TASK_COMPLETED and done.completed_by == "ada"
    assert struct_to_dict(done.answer) == {"approved": True}
    recs = await await_finish(aclient, h.handler_id)
    assert recs[-1].handler_finished.status == COMPLETED
    result = struct_to_dict((await aclient.get(h.handler_id)).result)
    assert result["decision"] == {"approved": True} and result["reviewed_by"] == "ada"

    with pytest.raises(w.FailedPrecondition, match="completed"):
        await aclient.complete_task(task.task_id, {"approved": True}, completed_by="ada")
    inbox = [t.task_id async for t in aclient.list_all_tasks(assignee="ada", statuses=["pending"])]
    assert task.task_id not in inbox


async def test_aio_tasks_pages(aclient: AsyncClient) -> None:
    approver = unique("apager")
    hs = [await aclient.run("expense", {"approver": approver}) for _ in range(3)]
    for h in hs:
        await await_task(aclient, h.handler_id)
    page, token = await aclient.tasks(assignee=approver, page_size=2)
    assert len(page) == 2 and token
    ids = [t.task_id async for t in aclient.list_all_tasks(assignee=approver, page_size=2)]
    assert len(set(ids)) == 3 and ids[:2] == [t.task_id for t in page]
    for h in hs:
        await aclient.cancel(h.handler_id)


async def test_aio_publish_wakes_a_released_order(aclient: AsyncClient) -> None:
    order_id = unique("ao")
    h = await aclient.run("order", {"order_id": order_id})
    await await_idle(aclient, h.handler_id)
    assert (await aclient.release(h.handler_id)).residency == RELEASED
    res = await aclient.publish(f"payment:{order_id}", {"amount": 3})
    assert res.woken == 1 and res.seq > 0 and uuid.UUID(res.event_id).version == 7
    await await_finish(aclient, h.handler_id)
    done = await aclient.get(h.handler_id)
    assert done.status == COMPLETED and struct_to_dict(done.result)["payment"] == {"amount": 3}
    a = await aclient.publish("py-aio", event_id=f"ev-{order_id}")
    b = await aclient.publish("py-aio", event_id=f"ev-{order_id}")
    assert a.seq == b.seq


async def test_aio_batch_children(aclient: AsyncClient) -> None:
    h = await aclient.run("batch", {"n": 5, "fail": [0, 4]})
    recs = await await_finish(aclient, h.handler_id)
    result = struct_to_dict(recs[-1].handler_finished.result)
    assert len(result["completed"]) == 3 and len(result["failed"]) == 2
    parent = await aclient.get(h.handler_id)
    assert len(parent.children) == 5
    child = await aclient.get(result["failed"][0])
    assert child.parent_id == h.handler_id and child.status == FAILED


async def test_aio_task_errors(aclient: AsyncClient) -> None:
    with pytest.raises(w.NotFound):
        await aclient.task("no-such-task")
    with pytest.raises(w.NotFound):
        await aclient.complete_task("no-such-task", {"approved": True})
    with pytest.raises(w.InvalidArgument, match="key is required"):
        await aclient.publish("")
    with pytest.raises(w.InvalidArgument, match="unknown task status"):
        await aclient.tasks(statuses=["sleepy"])


async def test_aio_tasks_mine(aclient: AsyncClient, auth_server: str) -> None:
    with pytest.raises(w.FailedPrecondition, match="authenticated"):
        await aclient.tasks(mine=True)
    async with aconnect(auth_server, token=ADA_TOKEN) as c:
        h = await c.run("expense", {"approver": "ada"})
        task = await await_task(c, h.handler_id)
        page, _ = await c.tasks(mine=True)
        assert task.task_id in [t.task_id for t in page]
        assert task.task_id in [t.task_id async for t in c.list_all_tasks(mine=True, statuses=["pending"])]
        assert [t.task_id async for t in c.list_all_tasks(mine=True, assignee=None, handler_id=h.handler_id)] == [
            task.task_id
        ]
