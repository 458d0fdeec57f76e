"""Waiting for handlers (wait, run and send with wait), the stream's choices
(from_head, include_internal) and identity, against a real `wfd serve`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAST_RETRY, Server, aconnect, connect, wait_for, wait_for_async
from proxy import Proxy

import wfd_client as w
from wfd_client import AsyncClient, Client, HandlerStatus, Record

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")


def is_internal(r: Record) -> bool:
    return r.WhichOneof("kind") not in ("event_written", "handler_finished")


def idle_approval(c: Client) -> str:
    h = c.run("approval", {"amount": 3})
    wait_for(f"approval {h.handler_id} idle", lambda: c.get(h.handler_id).HasField("idle"))
    return h.handler_id


def test_run_send_and_wait(client: Client) -> None:
    echo = client.run("echo", {"x": 1}, wait=30)
    assert echo.status == COMPLETED
    id = idle_approval(client)
    # The call's timeout (0.1 s) grows by the wait: 0.3 s end running.
    running = client.wait(id, 0.3, timeout=0.1)
    assert running.status == RUNNING and running.HasField("idle")
    done = client.send(id, "approval", {"approved": True}, wait=30)
    assert done.status == COMPLETED
    assert client.wait(id).status == COMPLETED
    with pytest.raises(w.NotFound):
        client.wait("nope", 1)
    with pytest.raises(w.InvalidArgument):
        client.wait(id, 7200)
    with pytest.raises(w.InvalidArgument):
        client.run("echo", wait=-1)


def test_wait_idle(client: Client) -> None:
    """wait_idle returns once the handler is idle at or after the record
    named, or finished instead."""
    h = client.run("approval", {"amount": 4})
    idle = client.wait_idle(h.handler_id, h.last_seq, 30)
    assert idle.status == RUNNING and idle.idle.waiters[0].event_type == "approval"
    back = client.get_at(h.handler_id, idle.last_seq)
    assert back.seq == idle.last_seq and back.idle.waiters[0].event_type == "approval"
    with pytest.raises(w.OutOfRange):
        client.get_at(h.handler_id, idle.last_seq + 1000)
    sent = client.send(h.handler_id, "approval", {"approved": True})
    assert client.wait_idle(h.handler_id, sent.last_seq, 30).status == COMPLETED


async def test_wait_idle_async(aclient: AsyncClient) -> None:
    h = await aclient.run("approval", {"amount": 5})
    idle = await aclient.wait_idle(h.handler_id, h.last_seq, 30)
    assert idle.status == RUNNING and idle.HasField("idle")
    sent = await aclient.send(h.handler_id, "approval", {"approved": True})
    assert (await aclient.wait_idle(h.handler_id, sent.last_seq, 30)).status == COMPLETED


def test_wait_released_until_woken(client: Client) -> None:
    """A wait does not load a released handler; an event sent later does."""
    id = idle_approval(client)
    client.release(id)
    got: list[w.Handler] = []
    t = threading.Thread(target=lambda: got.append(client.wait(id, 60)))
    before = client.stats().streams
    t.start()
    wait_for("the wait follows the handler", lambda: client.stats().streams == before + 1)
    assert client.get(id).residency == w.Residency.Value("RESIDENCY_RELEASED")
    client.send(id, "approval", {"approved": False})
    t.join(60)
    assert got and got[0].status == COMPLETED


def test_default_stream_leaves_out_internal(client: Client) -> None:
    id = idle_approval(client)
    client.release(id)
    client.send(id, "approval", {"approved": True}, wait=30)
    every = list(client.stream(id, include_internal=True))
    want = [r.seq for r in every if not is_internal(r)]
    assert len(want) < len(every)
    assert [r.seq for r in client.stream(id)] == want
    with pytest.raises(w.InvalidArgument):
        client.stream(id, 1, from_head=True)


def test_from_head_resumes_with_its_choices(server: str, client: Client) -> None:
    """A from-head stream cut while it follows resumes after its head, with
    include_internal still on, and yields what happened while it was away."""
    p = Proxy(server)
    patient = w.RetryPolicy(max_attempts=100_000, initial_backoff=0.01, max_backoff=0.05)
    try:
        with connect(p.addr, retry=patient) as c:
            id = idle_approval(client)
            head = client.get(id).last_seq
            got: list[Record] = []
            before = client.stats().streams
            t = threading.Thread(target=lambda: got.extend(c.stream(id, from_head=True, include_internal=True)))
            t.start()
            wait_for("the stream is subscribed", lambda: client.stats().streams == before + 1)
            p.refuse_next(1 << 30)
            p.sever()
            client.send(id, "approval", {"approved": True}, wait=30)
            p.refuse_next(0)
            t.join(120)
            every = list(client.stream(id, include_internal=True))
            assert [r.seq for r in got] == [r.seq for r in every if r.seq > head]
            assert any(is_internal(r) for r in got)
            assert p.accepted >= 2
    finally:
        p.close()


def test_identity_without_authentication(client: Client) -> None:
    id = client.identity()
    assert not id.authentication and id.subject == ""


def test_replicas_of_a_single_process_server(client: Client) -> None:
    assert client.replicas() == []


@pytest.fixture(scope="module")
def auth_server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    d: Path = tmp_path_factory.mktemp("wfd-identity")
    tokens = d / "tokens.yaml"
    tokens.write_text("tokens:\n  - token: ada-token\n    subject: ada\n    roles: [reader, tasks]\n")
    srv = Server(wfd_bin, d / "data", extra_args=["--auth-tokens", str(tokens)], token="ada-token")
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


def test_identity_with_a_token(auth_server: str) -> None:
    with connect(auth_server, token="ada-token") as c:
        id = c.identity()
        assert id.authentication and id.subject == "ada" and list(id.roles) == ["reader", "tasks"]
    with connect(auth_server, token="wrong", retry=FAST_RETRY) as c, pytest.raises(w.Unauthenticated):
        c.identity()


# --- asyncio -------------------------------------------------------------------


async def test_async_wait_stream_identity(server: str) -> None:
    async with aconnect(server) as c:
        assert (await c.run("echo", {"x": 2}, wait=30)).status == COMPLETED
        h = await c.run("approval")
        await wait_for_async("idle", lambda: _idle(c, h.handler_id))
        assert (await c.wait(h.handler_id, 0.2)).status == RUNNING
        assert (await c.send(h.handler_id, "approval", {"approved": True}, wait=30)).status == COMPLETED
        every = [r async for r in c.stream(h.handler_id, include_internal=True)]
        assert [r.seq async for r in c.stream(h.handler_id)] == [r.seq for r in every if not is_internal(r)]
        assert [r async for r in c.stream(h.handler_id, from_head=True)] == []
        assert not (await c.identity()).authentication


async def _idle(c: AsyncClient, id: str) -> bool:
    return (await c.get(id)).HasField("idle")
