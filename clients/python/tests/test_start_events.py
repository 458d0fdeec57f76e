"""Starting with events, atomically: run's events and send_or_start
(signal-with-start), sync and async, against a real `wfd serve`."""

from __future__ import annotations

import pytest

import wfd_client as w
from wfd_client import AsyncClient, Client, HandlerStatus

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")


def test_run_with_events(client: Client) -> None:
    events = [("note", {"text": "a"}), ("note", {"text": "b", "last": True})]
    h = client.run("notebook", handler_id="nb-run", events=events, wait=60)
    assert h.status == COMPLETED and w.struct_to_dict(h.result) == {"notes": 2}
    again = client.run("notebook", handler_id="nb-run", events=events, wait=60)
    assert w.struct_to_dict(again.result) == {"notes": 2}, "a repeat delivers its events no second time"
    with pytest.raises(w.InvalidArgument):
        client.run("notebook", handler_id="nb-bad", events=[("answer", None)])
    with pytest.raises(w.NotFound):
        client.get("nb-bad")


def test_send_or_start(client: Client) -> None:
    first = client.send_or_start("nb-sos", "notebook", "note", {"text": "a"}, idempotency_key="k1")
    assert first.started and first.handler.workflow == "notebook"
    retry = client.send_or_start("nb-sos", "notebook", "note", {"text": "a"}, idempotency_key="k1")
    assert not retry.started
    last = client.send_or_start("nb-sos", "notebook", "note", {"text": "b", "last": True}, wait=60)
    assert not last.started and last.handler.status == COMPLETED
    assert w.struct_to_dict(last.handler.result) == {"notes": 2}, "the retry delivered nothing"
    with pytest.raises(w.AlreadyExists):
        client.send_or_start("nb-sos", "approval", "note", {"text": "c"})


async def test_send_or_start_async(aclient: AsyncClient) -> None:
    first = await aclient.send_or_start("nb-aio", "notebook", "note", {"text": "a"}, input={})
    assert first.started
    h = await aclient.run("notebook", handler_id="nb-aio2", events=[("note", {"text": "x", "last": True})], wait=60)
    assert w.struct_to_dict(h.result) == {"notes": 1}
