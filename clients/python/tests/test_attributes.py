"""Search attributes against a real `wfd serve`: a workflow a Python worker
declares them for (sync and asyncio steps), handlers given them at run and
send_or_start, steps that update them (set_attributes), list(where=) and
list_all(where=), sync and async; the refusals."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from conftest import WorkerThread, aconnect, connect, unique, wait_for, wait_for_async

import wfd_client as w
from wfd_client import AsyncClient, Client, HandlerStatus, InvalidArgument, NotFound, attributes_of
from wfd_client.worker import AsyncStepContext, Event, OperationError, Retry, StepContext, Workflow

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
FAILED = HandlerStatus.Value("HANDLER_STATUS_FAILED")

DECLARED = {"customer": "string", "amount": "int", "tags": "keyword_list", "stage": "string", "due": "time"}
DUE = datetime.datetime(2026, 7, 1, 9, 30, 0, 250000, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
DUE_UTC = "2026-07-01T07:30:00.25Z"


def orders_workflow(use_async: bool) -> Workflow:
    """Declares DECLARED. Its start step sets stage "open" (and amount if the
    input has one); each "update" event's ``set`` updates the attributes
    (``bad`` sets an undeclared one instead: OperationError, which the step
    swallows, and the run fails all the same), ``close`` ends the handler."""
    wf = Workflow(unique("orders-async" if use_async else "orders"), external=["update"], search_attributes=DECLARED)

    def opening(ev: Event) -> dict[str, Any]:
        a = {"stage": "open"}
        if "amount" in ev.data:
            a["amount"] = ev.data["amount"]
        return a

    if use_async:

        @wf.step(accepts=["start"])
        async def open(ctx: AsyncStepContext, ev: Event) -> None:
            await ctx.set_attributes(opening(ev))

        @wf.step(accepts=["update"], emits=["stop"], retry=Retry(max_attempts=1))
        async def update(ctx: AsyncStepContext, ev: Event) -> None:
            if ev.data.get("bad"):
                try:
                    await ctx.set_attributes({"undeclared_one": 1})
                except OperationError:
                    return  # the run fails with it all the same
                ctx.send("stop", {"unexpected": "set_attributes did not raise OperationError"})
            await ctx.set_attributes(ev.data.get("set", {}))
            if ev.data.get("close"):
                ctx.send("stop", {})

    else:

        @wf.step(accepts=["start"])
        def open(ctx: StepContext, ev: Event) -> None:  # noqa: F811
            ctx.set_attributes(opening(ev))

        @wf.step(accepts=["update"], emits=["stop"], retry=Retry(max_attempts=1))
        def update(ctx: StepContext, ev: Event) -> None:  # noqa: F811
            if ev.data.get("bad"):
                try:
                    ctx.set_attributes({"undeclared_one": 1})
                except OperationError:
                    return  # the run fails with it all the same
                ctx.send("stop", {"unexpected": "set_attributes did not raise OperationError"})
            ctx.set_attributes(ev.data.get("set", {}))
            if ev.data.get("close"):
                ctx.send("stop", {})

    return wf


def test_definition_carries_the_declarations() -> None:
    wf = orders_workflow(False)
    assert dict(wf.definition().search_attributes) == DECLARED
    with pytest.raises(ValueError, match="'amount' has type 'integer'"):
        Workflow("x", search_attributes={"amount": "integer"})


def test_to_attributes() -> None:
    from wfd_client._common import to_attributes

    got = to_attributes({"due": DUE, "tags": ("a", "b"), "n": 3, "gone": None})
    assert got is not None and w.struct_to_dict(got) == {
        "due": "2026-07-01T07:30:00.250000Z", "tags": ["a", "b"], "n": 3, "gone": None,
    }
    assert to_attributes(None) is None
    with pytest.raises(InvalidArgument, match="aware datetime"):
        to_attributes({"due": datetime.datetime(2026, 7, 1)})
    with pytest.raises(InvalidArgument, match="mapping"):
        to_attributes(["x"])  # type: ignore[arg-type]


def ids(hs: list[w.Handler]) -> list[str]:
    return [h.handler_id for h in hs]


def test_attributes_sync(server: str) -> None:
    wf = orders_workflow(False)
    with WorkerThread(server, [wf]), connect(server) as c:
        assert dict(c.workflow(wf.name).search_attributes) == DECLARED

        def select(where: str) -> list[w.Handler]:
            return list(c.list_all(workflow=wf.name, where=where, page_size=2))

        def selects(where: str, want: list[str]) -> list[w.Handler]:
            last: list[w.Handler] = []

            def cond() -> list[w.Handler] | None:
                nonlocal last
                last = select(where)
                return last if ids(last) == want else None

            return wait_for(lambda: f"{where} selects {want}; last {[(h.handler_id, attributes_of(h)) for h in last]}", cond)

        def has(id: str, want: dict[str, Any]) -> w.Handler:
            last: list[w.Handler] = []

            def cond() -> w.Handler | None:
                last[:] = [c.get(id)]
                return last[0] if attributes_of(last[0]) == want else None

            return wait_for(lambda: f"{id}'s attributes are {want}; last {last and attributes_of(last[0])}", cond)

        big = c.run(wf.name, {"amount": 500}, handler_id=f"{wf.name}-big", attributes={"customer": "acme", "amount": 50})
        assert attributes_of(big)["customer"] == "acme", "the run's answer has the attributes given"
        c.run(wf.name, handler_id=f"{wf.name}-mid",
              attributes={"customer": "acme", "amount": 150, "tags": ["eu", "vip"], "due": DUE, "stage": None})
        c.run(wf.name, handler_id=f"{wf.name}-small", attributes={"customer": "acme", "amount": 20})
        c.run(wf.name, handler_id=f"{wf.name}-other", attributes={"customer": "globex", "amount": 300})

        # big's start step raised its amount from 50 to 500.
        where = 'customer = "acme" and amount > 100'
        b, m = selects(where + " order by amount desc", [f"{wf.name}-big", f"{wf.name}-mid"])
        assert attributes_of(b) == {"customer": "acme", "amount": 500, "stage": "open"}
        has(f"{wf.name}-mid", {"customer": "acme", "amount": 150, "tags": ["eu", "vip"], "due": DUE_UTC, "stage": "open"})
        page, token = c.list(workflow=wf.name, where=where + " order by amount", page_size=1)
        assert ids(page) == [f"{wf.name}-mid"] and token
        page, token = c.list(workflow=wf.name, where=where + " order by amount", page_size=1, page_token=token)
        assert ids(page) == [f"{wf.name}-big"]
        selects('tags contains "vip"', [f"{wf.name}-mid"])
        selects('customer = "acme" and due < "2026-07-02T00:00:00Z"', [f"{wf.name}-mid"])

        # A step's update: None deletes amount, a value replaces stage.
        c.send(f"{wf.name}-mid", "update", {"set": {"amount": None, "stage": "review"}})
        selects(where, [f"{wf.name}-big"])
        has(f"{wf.name}-mid", {"customer": "acme", "tags": ["eu", "vip"], "due": DUE_UTC, "stage": "review"})

        # The last update ends the handler; its attributes stay.
        has(f"{wf.name}-small", {"customer": "acme", "amount": 20, "stage": "open"})
        done = c.send(f"{wf.name}-small", "update", {"set": {"amount": 120}, "close": True}, wait=60)
        assert done.status == COMPLETED
        (s,) = selects(where + " and status = completed", [f"{wf.name}-small"])
        assert attributes_of(s) == {"customer": "acme", "amount": 120, "stage": "open"}

        # send_or_start's attributes start the handler with them; a handler
        # that exists keeps its own.
        sos = f"{wf.name}-sos"
        first = c.send_or_start(sos, wf.name, "update", {"set": {"tags": ["new"]}},
                                attributes={"customer": "initech", "amount": 1000})
        assert first.started
        (h,) = selects('customer = "initech" and amount >= 1000 and tags contains "new"', [sos])
        assert attributes_of(h)["amount"] == 1000
        again = c.send_or_start(sos, wf.name, "update", {"set": {}}, attributes={"customer": "nobody"})
        assert not again.started and attributes_of(c.get(sos))["customer"] == "initech"

        # Refusals.
        with pytest.raises(InvalidArgument, match="position"):
            c.list(workflow=wf.name, where="amount >")
        with pytest.raises(InvalidArgument, match="nosuch"):
            c.list(workflow=wf.name, where="nosuch = 1")
        with pytest.raises(InvalidArgument):
            list(c.list_all(workflow=wf.name, where='customer != "x"'))
        with pytest.raises(InvalidArgument, match="region"):
            c.run(wf.name, handler_id=f"{wf.name}-undeclared", attributes={"customer": "acme", "region": "eu"})
        with pytest.raises(InvalidArgument, match="amount"):
            c.run(wf.name, handler_id=f"{wf.name}-undeclared", attributes={"amount": 1.5})
        with pytest.raises(InvalidArgument, match="nope"):
            c.send_or_start(f"{wf.name}-undeclared", wf.name, "update", {}, attributes={"nope": 1})
        with pytest.raises(NotFound):
            c.get(f"{wf.name}-undeclared")

        # A step's update naming an undeclared attribute fails its run.
        bad = f"{wf.name}-bad-step"
        c.run(wf.name, handler_id=bad, attributes={"customer": "acme"})
        c.send(bad, "update", {"bad": True})
        h = wait_for(f"{bad} ends", lambda: (g := c.get(bad)).status != HandlerStatus.Value("HANDLER_STATUS_RUNNING") and g)
        assert h.status == FAILED and "undeclared_one" in h.error, h.error


async def test_attributes_async(server: str) -> None:
    wf = orders_workflow(True)
    with WorkerThread(server, [wf]):
        async with aconnect(server) as c:
            await run_async(c, wf)


async def run_async(c: AsyncClient, wf: Workflow) -> None:
    assert dict((await c.workflow(wf.name)).search_attributes) == DECLARED

    async def selects(where: str, want: list[str]) -> list[w.Handler]:
        last: list[w.Handler] = []

        async def cond() -> list[w.Handler] | None:
            last[:] = [h async for h in c.list_all(workflow=wf.name, where=where, page_size=2)]
            return list(last) if ids(last) == want else None

        return await wait_for_async(lambda: f"{where} selects {want}; last {[attributes_of(h) for h in last]}", cond)

    await c.run(wf.name, {"amount": 500}, handler_id=f"{wf.name}-big", attributes={"customer": "acme", "amount": 50})
    await c.run(wf.name, handler_id=f"{wf.name}-mid", attributes={"customer": "acme", "amount": 150, "due": DUE})
    await c.run(wf.name, handler_id=f"{wf.name}-small", attributes={"customer": "acme", "amount": 20})
    b, m = await selects('customer = "acme" and amount > 100 order by amount desc', [f"{wf.name}-big", f"{wf.name}-mid"])
    assert attributes_of(b) == {"customer": "acme", "amount": 500, "stage": "open"}
    page, _ = await c.list(workflow=wf.name, where='customer = "acme" and due >= "2026-07-01T07:30:00.25Z"')
    assert ids(page) == [f"{wf.name}-mid"] and attributes_of(page[0])["due"] == DUE_UTC

    await c.send(f"{wf.name}-mid", "update", {"set": {"amount": None}})
    await selects('customer = "acme" and amount > 100', [f"{wf.name}-big"])

    sos = f"{wf.name}-sos"
    res = await c.send_or_start(sos, wf.name, "update", {"set": {"stage": "x"}}, attributes={"customer": "initech", "amount": 7})
    assert res.started
    await selects('customer = "initech" and amount = 7', [sos])

    with pytest.raises(InvalidArgument, match="position"):
        await c.list(workflow=wf.name, where="amount >")
    with pytest.raises(InvalidArgument, match="region"):
        await c.run(wf.name, handler_id=f"{wf.name}-undeclared", attributes={"region": "eu"})
    with pytest.raises(NotFound):
        await c.get(f"{wf.name}-undeclared")

    bad = f"{wf.name}-bad-step"
    await c.run(wf.name, handler_id=bad)
    await c.send(bad, "update", {"bad": True})
    h = await c.wait(bad, 60)
    assert h.status == FAILED and "undeclared_one" in h.error, h.error
