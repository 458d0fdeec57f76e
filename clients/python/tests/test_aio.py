"""The asyncio AsyncClient against a real `wfd serve` (mirrors test_sync.py)."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
import pytest
from conftest import FAST_RETRY, WAIT, aconnect, wait_for_async
from proxy import Proxy

import wfd_client as w
from wfd_client import AsyncClient, HandlerStatus, Residency, is_terminal, struct_to_dict

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
CANCELLED = HandlerStatus.Value("HANDLER_STATUS_CANCELLED")
RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")
RELEASED = Residency.Value("RESIDENCY_RELEASED")


def kind(rec: w.Record) -> str:
    return rec.WhichOneof("kind") or ""


def is_idle(rec: w.Record) -> bool:
    return kind(rec) == "idle_changed" and rec.idle_changed.idle


async def wait_idle(c: AsyncClient, id: str, after: int = 0) -> int:
    """Follows the stream (after seq `after`) until the handler is idle;
    returns that record's seq."""
    async with c.stream(id, after, include_internal=True) as s:
        async for rec in s:
            if is_idle(rec):
                return rec.seq
    raise AssertionError("handler finished without going idle")


async def finish(c: AsyncClient, id: str) -> list[w.Record]:
    recs = [rec async for rec in c.stream(id, include_internal=True)]
    assert recs and is_terminal(recs[-1])
    return recs


def check_sequence(recs: list[w.Record], first: int = 1) -> None:
    assert [r.seq for r in recs] == list(range(first, first + len(recs)))


async def test_workflows(aclient: AsyncClient) -> None:
    wfs = {wf.name: wf for wf in await aclient.workflows()}
    assert {"approval", "echo", "fanin"} <= set(wfs)
    assert list(wfs["approval"].steps) == ["decide"]
    [answer] = wfs["approval"].event_types
    assert answer.type == "approval" and not answer.external
    assert struct_to_dict(answer.schema)["required"] == ["approved"]
    [note] = wfs["notebook"].event_types
    assert note.external


async def test_schemas_refuse(aclient: AsyncClient) -> None:
    with pytest.raises(w.InvalidArgument, match="at '/n': got string, want integer"):
        await aclient.run("batch", {"n": "five"})
    h = await aclient.run("approval")
    idle = await wait_idle(aclient, h.handler_id)
    with pytest.raises(w.InvalidArgument, match="at '': missing property 'approved'"):
        await aclient.send(h.handler_id, "approval", {"comment": "no decision"})
    assert (await aclient.get(h.handler_id)).last_seq == idle
    await aclient.send(h.handler_id, "approval", {"approved": False})
    await finish(aclient, h.handler_id)


async def test_run_echo_get_and_result(aclient: AsyncClient) -> None:
    data = {"x": 1, "nested": {"list": [1, "b", None, True, 2.5]}}
    h = await aclient.run("echo", data)
    assert uuid.UUID(h.handler_id).version == 7
    recs = await finish(aclient, h.handler_id)
    check_sequence(recs)
    assert recs[-1].handler_finished.status == COMPLETED
    assert struct_to_dict(recs[-1].handler_finished.result) == data
    got = await aclient.get(h.handler_id)
    assert got.status == COMPLETED and struct_to_dict(got.result) == data


async def test_run_is_idempotent_per_handler_id(aclient: AsyncClient) -> None:
    hid = f"py-aio-{w.uuid7()}"
    first = await aclient.run("approval", {"n": 1}, handler_id=hid)
    again = await aclient.run("approval", {"n": 1}, handler_id=hid)
    assert again.handler_id == hid and again.created_at == first.created_at
    with pytest.raises(w.AlreadyExists) as ei:
        await aclient.run("echo", handler_id=hid)
    assert ei.value.code == grpc.StatusCode.ALREADY_EXISTS and '"approval"' in ei.value.message
    await aclient.cancel(hid)


async def test_approval_flow(aclient: AsyncClient) -> None:
    h = await aclient.run("approval", {"amount": 42})
    recs: list[w.Record] = []
    sent = False
    async for rec in aclient.stream(h.handler_id, include_internal=True):
        recs.append(rec)
        if is_idle(rec):
            assert not sent
            await aclient.send(h.handler_id, "approval", {"approved": True, "comment": "ok"})
            sent = True
    check_sequence(recs)
    written = [r.event_written for r in recs if kind(r) == "event_written"]
    assert written[0].type == "question"
    assert struct_to_dict(written[0].data)["question"] == "approve this request?"
    assert any(is_idle(r) for r in recs)
    fin = recs[-1].handler_finished
    assert fin.status == COMPLETED
    assert struct_to_dict(fin.result) == {"approved": True, "comment": "ok", "request": {"amount": 42}}


async def test_release_then_event_wakes_it(aclient: AsyncClient) -> None:
    h = await aclient.run("approval", {"amount": 7})
    await wait_idle(aclient, h.handler_id)
    before = await aclient.stats()
    released = await aclient.release(h.handler_id)
    assert released.residency == RELEASED and released.status == RUNNING
    assert (await aclient.get(h.handler_id)).residency == RELEASED
    ids = [x.handler_id async for x in aclient.list_all(workflow="approval", residency=RELEASED)]
    assert h.handler_id in ids
    assert (await aclient.stats()).releases_total == before.releases_total + 1

    await aclient.send(h.handler_id, "approval", {"approved": True})
    recs = await finish(aclient, h.handler_id)
    check_sequence(recs)
    kinds = [kind(r) for r in recs]
    assert kinds.index("handler_released") < kinds.index("handler_restored")
    assert recs[-1].handler_finished.status == COMPLETED
    assert (await aclient.get(h.handler_id)).status == COMPLETED


async def test_list_and_list_all(aclient: AsyncClient) -> None:
    ids = []
    for i in range(3):
        h = await aclient.run("echo", {"i": i})
        await finish(aclient, h.handler_id)
        ids.append(h.handler_id)
    page, token = await aclient.list(workflow="echo", statuses=["completed"], page_size=2)
    assert len(page) == 2 and token
    page2, _ = await aclient.list(workflow="echo", statuses=["completed"], page_size=2, page_token=token)
    assert page2 and page2[0].handler_id < page[-1].handler_id
    every = [x.handler_id async for x in aclient.list_all(workflow="echo", page_size=2)]
    assert len(every) == len(set(every)) and set(ids) <= set(every)
    assert every.index(ids[2]) < every.index(ids[1]) < every.index(ids[0])

    a = await aclient.run("approval")
    await wait_idle(aclient, a.handler_id)
    assert a.handler_id in [x.handler_id async for x in aclient.list_all(idle_only=True)]
    from datetime import timedelta

    assert a.handler_id not in [x.handler_id async for x in aclient.list_all(idle_for=timedelta(hours=1))]
    await aclient.cancel(a.handler_id)


async def test_cancel(aclient: AsyncClient) -> None:
    h = await aclient.run("approval")
    assert (await aclient.cancel(h.handler_id)).status == CANCELLED
    recs = await finish(aclient, h.handler_id)
    assert recs[-1].handler_finished.status == CANCELLED
    with pytest.raises(w.FailedPrecondition):
        await aclient.cancel(h.handler_id)


async def test_stream_after(aclient: AsyncClient) -> None:
    h = await aclient.run("fanin")
    full = await finish(aclient, h.handler_id)
    rest = [r async for r in aclient.stream(h.handler_id, after=3, include_internal=True)]
    assert rest == full[3:]
    assert [r async for r in aclient.stream(h.handler_id, after=full[-1].seq, include_internal=True)] == []


async def test_errors(aclient: AsyncClient) -> None:
    missing = f"missing-{w.uuid7()}"

    async def drain() -> None:
        async for _ in aclient.stream(missing, include_internal=True):
            pass

    for call in (
        lambda: aclient.get(missing),
        lambda: aclient.send(missing, "approval", {"approved": True}),
        lambda: aclient.cancel(missing),
        lambda: aclient.release(missing),
        drain,
    ):
        with pytest.raises(w.NotFound) as ei:
            await call()
        assert ei.value.code == grpc.StatusCode.NOT_FOUND and "not found" in ei.value.message
    with pytest.raises(w.NotFound, match="unknown workflow"):
        await aclient.run("no-such-workflow")

    h = await aclient.run("approval")
    await wait_idle(aclient, h.handler_id)
    with pytest.raises(w.InvalidArgument, match='does not accept "bogus"') as bad:
        await aclient.send(h.handler_id, "bogus")
    assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
    await aclient.send(h.handler_id, "approval", {"approved": True})
    await finish(aclient, h.handler_id)
    with pytest.raises(w.FailedPrecondition, match="completed") as done:
        await aclient.send(h.handler_id, "approval", {"approved": True})
    assert done.value.code == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(w.FailedPrecondition):
        await aclient.release(h.handler_id)
    with pytest.raises(w.InvalidArgument, match="client: data"):
        await aclient.send(h.handler_id, "approval", {"when": time})  # a module is not JSON


async def test_idempotent_send(aclient: AsyncClient) -> None:
    h = await aclient.run("notebook")
    idle = await wait_idle(aclient, h.handler_id)
    key = f"k-{w.uuid7()}"
    await aclient.send(h.handler_id, "note", {"text": "once"}, idempotency_key=key)
    seq = await wait_idle(aclient, h.handler_id, after=idle)  # the run is over
    await aclient.send(h.handler_id, "note", {"text": "once"}, idempotency_key=key)
    assert (await aclient.get(h.handler_id)).last_seq == seq
    # Events are delivered in order: had the repeat been delivered, the step
    # would run for it before it runs for this note.
    await aclient.send(h.handler_id, "note", {"text": "done", "last": True})
    recs = await finish(aclient, h.handler_id)
    runs = [r for r in recs if kind(r) == "step_state_changed" and r.step_state_changed.running]
    assert len(runs) == 3


async def test_stream_resumes_after_connection_is_cut(aclient: AsyncClient, proxy: Proxy) -> None:
    h = await aclient.run("approval", {"amount": 1})
    async with aconnect(proxy.addr, retry=FAST_RETRY) as flaky:
        recs: list[w.Record] = []
        async for rec in flaky.stream(h.handler_id, include_internal=True):
            recs.append(rec)
            if is_idle(rec):
                proxy.sever()
                await aclient.send(h.handler_id, "approval", {"approved": True})
    assert proxy.accepted >= 2
    check_sequence(recs)
    assert recs[-1].handler_finished.status == COMPLETED
    assert recs == await finish(aclient, h.handler_id)


async def test_stream_resumes_when_cut_mid_message(aclient: AsyncClient, proxy: Proxy) -> None:
    # As in test_sync: bursts of records while following, cut mid-frame;
    # each note waits until the follower has the idle record the last one
    # ended with, so each burst is one note's records.
    h = await aclient.run("notebook")
    await wait_idle(aclient, h.handler_id)
    proxy.cut_after(4000)
    got: list[w.Record] = []
    async with aconnect(proxy.addr, retry=FAST_RETRY) as flaky:

        async def follow() -> None:
            async for r in flaky.stream(h.handler_id, include_internal=True):
                got.append(r)

        def idles() -> int:
            if task.done():
                task.result()  # raises what ended the follower
            return sum(1 for r in got if is_idle(r))

        task = asyncio.create_task(follow())
        for i in range(60):
            await wait_for_async(lambda: f"the follower has {i + 1} idle records (it has {idles()})", lambda: idles() > i)
            await aclient.send(h.handler_id, "note", {"text": f"note {i}"})
        await aclient.send(h.handler_id, "note", {"text": "done", "last": True})
        await asyncio.wait_for(task, WAIT)
    assert got == await finish(aclient, h.handler_id)
    check_sequence(got)
    assert proxy.accepted >= 3


async def test_gives_up_without_progress(proxy: Proxy) -> None:
    # How many attempts: see test_sync's test_stream_gives_up_without_progress.
    proxy.refuse_next(1000)
    retry = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.05)
    async with aconnect(proxy.addr, retry=retry) as dead:
        with pytest.raises(w.Unavailable):
            async for _ in dead.stream("whatever", include_internal=True):
                pass
        with pytest.raises(w.Unavailable):
            await dead.stats()


async def test_unary_retries_unavailable(proxy: Proxy) -> None:
    proxy.refuse_next(2)
    async with aconnect(proxy.addr, retry=FAST_RETRY) as flaky:
        assert (await flaky.stats()).changes_total >= 0
    assert proxy.refused == 2


async def test_breaking_out_ends_the_stream(aclient: AsyncClient) -> None:
    h = await aclient.run("approval")

    async def no_streams() -> bool:
        return (await aclient.stats()).streams == 0

    # The server closes a stream some time after its client went: wait
    # until those of earlier tests are gone.
    await wait_for_async("the streams of earlier tests are closed", no_streams)
    async with aclient.stream(h.handler_id, include_internal=True) as s:
        async for rec in s:
            assert rec.seq == 1
            assert (await aclient.stats()).streams == 1  # subscribed before the first message
            break
    assert s.last_seq == 1
    await wait_for_async("the server closes the stream", no_streams)
    await aclient.cancel(h.handler_id)


async def test_closed_client(server: str) -> None:
    c = aconnect(server)
    await c.workflows()
    await c.close()
    with pytest.raises(w.Cancelled):
        await c.workflows()


async def test_stream_ends_when_client_closes(server: str) -> None:
    c = aconnect(server)
    h = await c.run("approval")
    got: list[w.Record] = []

    async def follow() -> None:
        async for rec in c.stream(h.handler_id, include_internal=True):
            got.append(rec)

    task = asyncio.create_task(follow())
    await wait_for_async("the follower has the idle record", lambda: task.done() or any(is_idle(r) for r in got))
    assert not task.done()
    await c.close()
    with pytest.raises(w.Cancelled):
        await asyncio.wait_for(task, WAIT)
    async with aconnect(server) as c2:
        await c2.cancel(h.handler_id)


async def test_aclose_stream_from_another_task(aclient: AsyncClient) -> None:
    h = await aclient.run("approval")
    s = aclient.stream(h.handler_id, include_internal=True)
    got: list[w.Record] = []

    async def follow() -> None:
        async for rec in s:
            got.append(rec)

    task = asyncio.create_task(follow())
    await wait_for_async("the follower has the idle record", lambda: task.done() or any(is_idle(r) for r in got))
    assert not task.done()
    await s.aclose()
    await asyncio.wait_for(task, WAIT)  # ends without an error
    assert s.last_seq == got[-1].seq
    await aclient.cancel(h.handler_id)


async def test_cancelling_the_task_cancels(aclient: AsyncClient) -> None:
    h = await aclient.run("approval")
    got: list[w.Record] = []

    async def follow() -> None:
        async for rec in aclient.stream(h.handler_id, include_internal=True):
            got.append(rec)

    task = asyncio.create_task(follow())
    await wait_for_async("the follower has the idle record", lambda: task.done() or any(is_idle(r) for r in got))
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await aclient.cancel(h.handler_id)
