"""Concurrency keys against a real `wfd serve`: a workflow a Python worker
declares with at most one running handler per customer (sync and async
clients): the second of a customer is queued (status QUEUED, its slot's key
and place), holds the event sent to it, and runs once the first ends;
list(statuses=["queued"]) finds it; a refusing workflow answers
RESOURCE_EXHAUSTED and stores nothing."""

from __future__ import annotations

import pytest
from conftest import WorkerThread, aconnect, connect, unique, wait_for, wait_for_async

from wfd_client import HandlerStatus, NotFound, ResourceExhausted
from wfd_client.worker import Concurrency, Event, StepContext, Workflow

QUEUED = HandlerStatus.Value("HANDLER_STATUS_QUEUED")
RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")
COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")


def per_customer(name: str, refuse: bool = False) -> Workflow:
    wf = Workflow(unique(name), external=["go"], concurrency=Concurrency(key="customer", max=1, refuse=refuse))

    @wf.step(accepts=["start"])
    def begin(ctx: StepContext, ev: Event) -> None:
        pass

    @wf.step(accepts=["go"], emits=["stop"])
    def finish(ctx: StepContext, ev: Event) -> None:
        ctx.send("stop", ev.data)

    return wf


def test_definition_carries_the_limit() -> None:
    d = per_customer("serial").definition()
    assert (d.concurrency.key, d.concurrency.max, d.concurrency.refuse) == ("customer", 1, False)
    assert not Workflow("plain").definition().HasField("concurrency")


def test_queued_sync(server: str) -> None:
    wf, refusing = per_customer("serial"), per_customer("refusing", refuse=True)
    with WorkerThread(server, [wf, refusing]), connect(server) as c:
        assert c.workflow(wf.name).concurrency.max == 1
        first = c.run(wf.name, {"customer": "acme"})
        second = c.run(wf.name, {"customer": "acme"})
        assert (first.status, second.status) == (RUNNING, QUEUED)
        got = c.get(second.handler_id)
        assert (got.slot.key, got.slot.queued, got.slot.position) == ("acme", True, 1)
        c.send(second.handler_id, "go", {"n": 2})  # held until it is admitted
        assert c.get(second.handler_id).status == QUEUED
        assert [h.handler_id for h in c.list(workflow=wf.name, statuses=["queued"])[0]] == [second.handler_id]
        c.send(first.handler_id, "go", {"n": 1})
        done = wait_for("the second to run its held event",
                        lambda: (h := c.get(second.handler_id)).status == COMPLETED and h)
        assert done.result["n"] == 2

        c.run(refusing.name, {"customer": "busy"})
        with pytest.raises(ResourceExhausted, match="busy"):
            c.run(refusing.name, {"customer": "busy"}, handler_id=f"{refusing.name}-refused")
        with pytest.raises(NotFound):
            c.get(f"{refusing.name}-refused")


async def test_queued_async(server: str) -> None:
    wf = per_customer("serial-async")
    with WorkerThread(server, [wf]):
        async with aconnect(server) as c:
            first = await c.run(wf.name, {"customer": "acme"})
            second = await c.run(wf.name, {"customer": "acme"})
            assert second.status == QUEUED
            assert (await c.get(second.handler_id)).slot.position == 1
            await c.send(first.handler_id, "go", {"n": 1})

            async def admitted() -> bool:
                return (await c.get(second.handler_id)).status == RUNNING

            await wait_for_async("the second admitted", admitted)
