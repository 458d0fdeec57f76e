"""Deleting finished handlers, the retention sweep and the published-event
log against a real `wfd serve`, through Client and AsyncClient."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Server, connect, wait_for

import wfd_client as w
from wfd_client import AsyncClient, Client, HandlerStatus, struct_to_dict

RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")


def unique(prefix: str) -> str:
    return f"{prefix}-{w.uuid7()}"


def test_delete(client: Client) -> None:
    h = client.run("approval", {"amount": 1}, handler_id=unique("del"))
    with pytest.raises(w.FailedPrecondition, match="cancel it first"):
        client.delete(h.handler_id)
    client.cancel(h.handler_id)
    list(client.stream(h.handler_id))  # until its terminal record
    assert client.delete(h.handler_id) is None
    with pytest.raises(w.NotFound):
        client.get(h.handler_id)
    with pytest.raises(w.NotFound):
        client.delete(h.handler_id)
    again = client.run("approval", {"amount": 2}, handler_id=h.handler_id)
    assert again.status == RUNNING


def test_published_events(client: Client) -> None:
    key = unique("py-events")
    seqs = [client.publish(key, {"i": i}, handler_id="h-py" if i == 2 else None).seq for i in range(3)]
    page, token = client.published_events(key=key, page_size=2)
    assert [e.seq for e in page] == [seqs[2], seqs[1]] and token
    latest = page[0]
    assert latest.key == key and latest.handler_id == "h-py" and struct_to_dict(latest.data) == {"i": 2}
    assert latest.HasField("published_at") and latest.published_by == ""
    assert [e.seq for e in client.list_all_published_events(key=key, page_size=1)] == seqs[::-1]
    mine, _ = client.published_events(handler_id="h-py", key=key)
    assert [e.seq for e in mine] == [seqs[2]]
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    assert client.published_events(key=key, since=later) == ([], "")
    with pytest.raises(w.InvalidArgument):
        client.published_events(key=key, page_token="garbage")
    with pytest.raises(w.InvalidArgument, match="aware"):
        client.published_events(since=datetime.datetime(2026, 1, 1))


async def test_async_delete_and_events(aclient: AsyncClient) -> None:
    key = unique("py-aevents")
    first = await aclient.publish(key, {"n": 1})
    second = await aclient.publish(key, {"n": 2})
    page, _ = await aclient.published_events(key=key)
    assert [e.seq for e in page] == [second.seq, first.seq]
    assert [e.seq async for e in aclient.list_all_published_events(key=key, page_size=1)] == [second.seq, first.seq]

    h = await aclient.run("approval", {"amount": 1})
    with pytest.raises(w.FailedPrecondition):
        await aclient.delete(h.handler_id)
    await aclient.cancel(h.handler_id)
    async with aclient.stream(h.handler_id) as s:
        async for _ in s:
            pass
    await aclient.delete(h.handler_id)
    with pytest.raises(w.NotFound):
        await aclient.get(h.handler_id)


@pytest.fixture(scope="module")
def retention_server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`wfd serve --retention 1ms`: finished handlers go at the next sweep."""
    d: Path = tmp_path_factory.mktemp("wfd-retention")
    srv = Server(wfd_bin, d / "data", extra_args=["--retention", "1ms"])
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


def test_retention(retention_server: str) -> None:
    with connect(retention_server) as c:
        running = c.run("approval", {"amount": 1})
        done = c.run("echo", {"x": 1})

        def gone() -> bool:
            try:
                c.get(done.handler_id)
                return False
            except w.NotFound:
                return True

        wait_for(f"handler {done.handler_id} deleted", gone)
        assert c.get(running.handler_id).status == RUNNING
