"""The synchronous Client against a real `wfd serve`."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import grpc
import pytest
from conftest import FAST_RETRY, WAIT, Server, connect, wait_for
from proxy import Proxy

import wfd_client as w
from wfd_client import Client, HandlerStatus, Residency, is_terminal, struct_to_dict

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
CANCELLED = HandlerStatus.Value("HANDLER_STATUS_CANCELLED")
RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")
RELEASED = Residency.Value("RESIDENCY_RELEASED")


def kind(rec: w.Record) -> str:
    return rec.WhichOneof("kind") or ""


def is_idle(rec: w.Record) -> bool:
    return kind(rec) == "idle_changed" and rec.idle_changed.idle


def wait_idle(c: Client, id: str, after: int = 0) -> int:
    """Follows the stream (after seq `after`) until the handler is idle;
    returns that record's seq."""
    with c.stream(id, after, include_internal=True) as s:
        for rec in s:
            if is_idle(rec):
                return rec.seq
    raise AssertionError("handler finished without going idle")


def finish(c: Client, id: str) -> list[w.Record]:
    """All the handler's records up to the terminal one."""
    recs = list(c.stream(id, include_internal=True))
    assert recs and is_terminal(recs[-1])
    return recs


def check_sequence(recs: list[w.Record], first: int = 1) -> None:
    assert [r.seq for r in recs] == list(range(first, first + len(recs)))


def test_workflows(client: Client) -> None:
    wfs = {wf.name: wf for wf in client.workflows()}
    assert {"approval", "echo", "fanin"} <= set(wfs)
    assert list(wfs["approval"].steps) == ["decide"]
    assert wfs["echo"].description


def test_schemas(client: Client) -> None:
    wfs = {wf.name: wf for wf in client.workflows()}
    # approval waits for "approval"; notebook takes "note" at any time.
    [answer] = wfs["approval"].event_types
    assert isinstance(answer, w.EventType)
    assert answer.type == "approval" and not answer.external and answer.description
    schema = struct_to_dict(answer.schema)
    assert schema["required"] == ["approved"] and schema["properties"]["approved"] == {
        "type": "boolean",
        "description": "true approves the request, false rejects it",
    }
    assert struct_to_dict(wfs["approval"].input_schema)["type"] == "object"
    [note] = wfs["notebook"].event_types
    assert note.type == "note" and note.external and struct_to_dict(note.schema)["required"] == ["text"]
    assert not wfs["echo"].event_types

    # Run and send refuse what the schemas refuse, naming the fields.
    with pytest.raises(w.InvalidArgument, match="at '': missing property 'order_id'"):
        client.run("order")
    h = client.run("approval")
    idle = wait_idle(client, h.handler_id)
    with pytest.raises(w.InvalidArgument, match="at '/approved': got string, want boolean"):
        client.send(h.handler_id, "approval", {"approved": "yes"})
    assert client.get(h.handler_id).last_seq == idle  # nothing changed
    client.send(h.handler_id, "approval", {"approved": True})
    assert finish(client, h.handler_id)[-1].handler_finished.status == COMPLETED


def test_run_echo_get_and_result(client: Client) -> None:
    data = {"x": 1, "nested": {"list": [1, "b", None, True, 2.5]}}
    h = client.run("echo", data)
    assert uuid.UUID(h.handler_id).version == 7  # made up by the client
    assert h.workflow == "echo"
    recs = finish(client, h.handler_id)
    check_sequence(recs)
    fin = recs[-1].handler_finished
    assert fin.status == COMPLETED
    assert struct_to_dict(fin.result) == data
    got = client.get(h.handler_id)
    assert got.status == COMPLETED and got.HasField("completed_at")
    assert struct_to_dict(got.result) == data
    assert got.last_seq == recs[-1].seq
    assert w.message_to_dict(got)["handler_id"] == h.handler_id


def test_run_is_idempotent_per_handler_id(client: Client) -> None:
    hid = f"py-sync-{w.uuid7()}"
    first = client.run("approval", {"n": 1}, handler_id=hid)
    again = client.run("approval", {"n": 1}, handler_id=hid)
    assert again.handler_id == hid and again.created_at == first.created_at
    with pytest.raises(w.AlreadyExists) as ei:
        client.run("echo", handler_id=hid)
    assert ei.value.code == grpc.StatusCode.ALREADY_EXISTS
    assert '"approval"' in ei.value.message
    client.cancel(hid)


def test_approval_flow(client: Client) -> None:
    h = client.run("approval", {"amount": 42, "requested_by": "ada"})
    recs: list[w.Record] = []
    sent = False
    for rec in client.stream(h.handler_id, include_internal=True):
        recs.append(rec)
        if is_idle(rec):
            assert [wt.event_type for wt in rec.idle_changed.info.waiters] == ["approval"]
            assert not sent
            client.send(h.handler_id, "approval", {"approved": True, "comment": "ok"})
            sent = True
    check_sequence(recs)
    questions = [r.event_written for r in recs if kind(r) == "event_written"]
    assert questions[0].type == "question"
    assert struct_to_dict(questions[0].data)["request"] == {"amount": 42, "requested_by": "ada"}
    idle_at = next(i for i, r in enumerate(recs) if is_idle(r))
    assert idle_at > next(i for i, r in enumerate(recs) if kind(r) == "event_written")
    assert sent and is_terminal(recs[-1])
    fin = recs[-1].handler_finished
    assert fin.status == COMPLETED
    assert struct_to_dict(fin.result) == {
        "approved": True, "comment": "ok", "request": {"amount": 42, "requested_by": "ada"},
    }


def test_release_then_event_wakes_it(client: Client) -> None:
    h = client.run("approval", {"amount": 7})
    wait_idle(client, h.handler_id)
    before = client.stats()
    released = client.release(h.handler_id)
    assert released.residency == RELEASED and released.status == RUNNING
    assert released.HasField("idle")
    assert client.get(h.handler_id).residency == RELEASED
    ids = [x.handler_id for x in client.list_all(workflow="approval", residency="released")]
    assert h.handler_id in ids
    stats = client.stats()
    assert stats.handlers_released >= 1
    assert stats.releases_total == before.releases_total + 1

    client.send(h.handler_id, "approval", {"approved": False})
    recs = finish(client, h.handler_id)
    check_sequence(recs)
    kinds = [kind(r) for r in recs]
    assert kinds.index("handler_released") < kinds.index("handler_restored")
    assert recs[-1].handler_finished.status == COMPLETED
    assert struct_to_dict(recs[-1].handler_finished.result)["approved"] is False
    got = client.get(h.handler_id)
    assert got.status == COMPLETED and got.residency != RELEASED
    assert client.stats().rehydrations_total >= before.rehydrations_total + 1


def test_list_and_list_all(client: Client) -> None:
    ids = []
    for i in range(3):
        h = client.run("echo", {"i": i})
        finish(client, h.handler_id)
        ids.append(h.handler_id)
    page, token = client.list(workflow="echo", statuses=["completed"], page_size=2)
    assert len(page) == 2 and token
    assert [x.handler_id for x in page] == sorted((x.handler_id for x in page), reverse=True)  # newest first
    assert all(x.workflow == "echo" and x.status == COMPLETED for x in page)
    page2, _ = client.list(workflow="echo", statuses=["completed"], page_size=2, page_token=token)
    assert page2 and page2[0].handler_id < page[-1].handler_id
    every = [x.handler_id for x in client.list_all(workflow="echo", statuses=[COMPLETED], page_size=2)]
    assert len(every) == len(set(every)) and set(ids) <= set(every)
    assert every.index(ids[2]) < every.index(ids[1]) < every.index(ids[0])  # newest first
    running, _ = client.list(workflow="echo", statuses=["HANDLER_STATUS_RUNNING"])
    assert not set(ids) & {x.handler_id for x in running}

    a = client.run("approval")
    wait_idle(client, a.handler_id)
    idle = [x.handler_id for x in client.list_all(idle_only=True, workflow="approval")]
    assert a.handler_id in idle
    long_idle = [x.handler_id for x in client.list_all(idle_for=3600)]
    assert a.handler_id not in long_idle
    active = [x.handler_id for x in client.list_all(residency="active", statuses=["running"])]
    assert a.handler_id in active
    client.cancel(a.handler_id)


def test_cancel(client: Client) -> None:
    h = client.run("approval")
    got = client.cancel(h.handler_id)
    assert got.status == CANCELLED
    recs = finish(client, h.handler_id)
    assert recs[-1].handler_finished.status == CANCELLED
    with pytest.raises(w.FailedPrecondition):
        client.cancel(h.handler_id)


def test_stream_after(client: Client) -> None:
    h = client.run("fanin")
    full = finish(client, h.handler_id)
    assert len(full) > 4
    rest = list(client.stream(h.handler_id, after=3, include_internal=True))
    assert [r.seq for r in rest] == [r.seq for r in full[3:]]
    assert rest == full[3:]
    # After the terminal record: nothing, and no reconnects (with one
    # attempt allowed, a reconnect would be Unavailable).
    with connect(client.target, retry=w.RetryPolicy(max_attempts=1)) as once:
        assert list(once.stream(h.handler_id, after=full[-1].seq, include_internal=True)) == []
    with pytest.raises(w.InvalidArgument):
        list(client.stream(h.handler_id, after=full[-1].seq + 5, include_internal=True))


def test_errors(client: Client) -> None:
    missing = f"missing-{w.uuid7()}"
    for call in (
        lambda: client.get(missing),
        lambda: client.send(missing, "approval", {"approved": True}),
        lambda: client.cancel(missing),
        lambda: client.release(missing),
        lambda: list(client.stream(missing, include_internal=True)),
    ):
        with pytest.raises(w.NotFound) as ei:
            call()
        assert ei.value.code == grpc.StatusCode.NOT_FOUND
        assert "not found" in ei.value.message
        assert isinstance(ei.value, w.WfdError)
    with pytest.raises(w.NotFound, match="unknown workflow"):
        client.run("no-such-workflow")

    h = client.run("approval")
    wait_idle(client, h.handler_id)
    with pytest.raises(w.InvalidArgument) as bad:
        client.send(h.handler_id, "bogus", {})
    assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert 'does not accept "bogus"' in bad.value.message
    assert str(bad.value).startswith("INVALID_ARGUMENT: ")
    with pytest.raises(w.InvalidArgument, match="handler_id"):
        client.get("not a valid id!")

    client.send(h.handler_id, "approval", {"approved": True})
    finish(client, h.handler_id)
    with pytest.raises(w.FailedPrecondition) as done:
        client.send(h.handler_id, "approval", {"approved": True})
    assert done.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "completed" in done.value.message
    with pytest.raises(w.FailedPrecondition):
        client.release(h.handler_id)

    # Refused by the client before any call.
    with pytest.raises(w.InvalidArgument, match="client: input"):
        client.run("echo", {"x": object()})
    with pytest.raises(w.InvalidArgument, match="page size"):
        client.list(page_size=-1)
    with pytest.raises(w.InvalidArgument, match="unknown status"):
        client.list(statuses=["sleepy"])


def test_idempotent_send(client: Client) -> None:
    h = client.run("notebook")
    idle = wait_idle(client, h.handler_id)
    # A note runs the step and the handler waits again, so each delivery
    # shows on the stream.
    key = f"k-{w.uuid7()}"
    first = client.send(h.handler_id, "note", {"text": "once"}, idempotency_key=key)
    seq = wait_idle(client, h.handler_id, after=idle)  # the run is over
    again = client.send(h.handler_id, "note", {"text": "once"}, idempotency_key=key)
    assert again.handler_id == first.handler_id
    assert client.get(h.handler_id).last_seq == seq
    # Events are delivered in order: had the repeat been delivered, the step
    # would run for it before it runs for this note.
    client.send(h.handler_id, "note", {"text": "done", "last": True})
    recs = finish(client, h.handler_id)
    runs = [r for r in recs if kind(r) == "step_state_changed" and r.step_state_changed.running]
    assert len(runs) == 3  # the start, the keyed note once, the last note
    assert struct_to_dict(recs[-1].handler_finished.result) == {"notes": 2}


def test_stream_resumes_after_connection_is_cut(client: Client, proxy: Proxy) -> None:
    h = client.run("approval", {"amount": 1})
    with connect(proxy.addr, retry=FAST_RETRY) as flaky:
        recs: list[w.Record] = []
        for rec in flaky.stream(h.handler_id, include_internal=True):
            recs.append(rec)
            if is_idle(rec):
                proxy.sever()  # the stream is cut while the handler waits
                client.send(h.handler_id, "approval", {"approved": True})
    assert proxy.accepted >= 2
    check_sequence(recs)
    assert is_terminal(recs[-1]) and recs[-1].handler_finished.status == COMPLETED
    assert recs == finish(client, h.handler_id)


def test_stream_resumes_when_cut_mid_message(client: Client, proxy: Proxy) -> None:
    # Records arrive in bursts (one per note) while the stream follows,
    # and each connection dies in the middle of a frame after 4000 bytes.
    # (A replay goes out in as few frames as the server can: a budget
    # smaller than a replay burst could never let a record through.)
    # Each note waits until the follower has the idle record the last
    # one ended with, so each burst is one note's records.
    h = client.run("notebook")
    wait_idle(client, h.handler_id)
    proxy.cut_after(4000)
    got: list[w.Record] = []
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            for rec in flaky.stream(h.handler_id, include_internal=True):
                got.append(rec)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)

    def idles() -> int:
        if errors:
            raise errors[0]
        return sum(1 for r in list(got) if is_idle(r))

    with connect(proxy.addr, retry=FAST_RETRY) as flaky:
        t = threading.Thread(target=follow)
        t.start()
        for i in range(60):
            wait_for(lambda: f"the follower has {i + 1} idle records (it has {idles()})", lambda: idles() > i)
            client.send(h.handler_id, "note", {"text": f"note {i}"})
        client.send(h.handler_id, "note", {"text": "done", "last": True})
        t.join(WAIT)
        assert not t.is_alive(), "the follower did not finish"
    assert not errors
    assert got == finish(client, h.handler_id)
    check_sequence(got)
    assert proxy.accepted >= 3


def test_stream_gives_up_without_progress(proxy: Proxy) -> None:
    # That it gives up after max_attempts is counted in test_scripted: a
    # dead server's refused connections are not one per attempt (grpc's
    # channel fails attempts fast while it waits to reconnect).
    proxy.refuse_next(1000)
    retry = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.05)
    with connect(proxy.addr, retry=retry) as dead:
        with pytest.raises(w.Unavailable):
            list(dead.stream("whatever", include_internal=True))


def test_unary_retries_unavailable(client: Client, proxy: Proxy) -> None:
    proxy.refuse_next(2)
    with connect(proxy.addr, retry=FAST_RETRY) as flaky:
        assert {wf.name for wf in flaky.workflows()} >= {"echo"}
    assert proxy.refused == 2
    proxy.refuse_next(1000)
    retry = w.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.05)
    with connect(proxy.addr, retry=retry) as dead:
        with pytest.raises(w.Unavailable) as ei:
            dead.get("x")
        assert ei.value.code == grpc.StatusCode.UNAVAILABLE


def test_breaking_out_ends_the_stream(client: Client) -> None:
    h = client.run("approval")
    # The server closes a stream some time after its client went: wait
    # until those of earlier tests are gone.
    wait_for("the streams of earlier tests are closed", lambda: client.stats().streams == 0)
    with client.stream(h.handler_id, include_internal=True) as s:
        first = next(s)
        assert first.seq == 1
        assert client.stats().streams == 1  # subscribed before the first message
    assert s.last_seq == 1
    wait_for("the server closes the stream", lambda: client.stats().streams == 0)
    client.cancel(h.handler_id)


def test_closed_client(server: str) -> None:
    c = connect(server)
    c.workflows()
    c.close()
    with pytest.raises(w.Cancelled):
        c.workflows()


def test_stream_ends_when_client_closes(server: str) -> None:
    c = connect(server)
    h = c.run("approval")
    got: list[w.Record] = []
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            for rec in c.stream(h.handler_id, include_internal=True):
                got.append(rec)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)

    t = threading.Thread(target=follow)
    t.start()
    wait_for("the follower has the idle record", lambda: not t.is_alive() or any(is_idle(r) for r in list(got)))
    assert t.is_alive(), errors
    c.close()
    t.join(WAIT)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], w.Cancelled)
    with connect(server) as c2:
        c2.cancel(h.handler_id)


def test_stream_survives_a_server_restart(wfd_bin: str, tmp_path: Path) -> None:
    srv = Server(wfd_bin, tmp_path / "data")
    srv.start()
    try:
        with connect(srv.addr) as c:
            h = c.run("approval", {"amount": 3})
            recs: list[w.Record] = []
            for rec in c.stream(h.handler_id, include_internal=True):
                recs.append(rec)
                if is_idle(rec) and len(recs) < 5:
                    srv.stop()  # SIGTERM: the server checkpoints and ends the stream
                    srv.start()  # same address, same store
                    c.send(h.handler_id, "approval", {"approved": True})
            check_sequence(recs)
            assert "handler_restored" in [kind(r) for r in recs]
            assert recs[-1].handler_finished.status == COMPLETED
    finally:
        srv.stop()


def test_close_stream_from_another_thread(client: Client) -> None:
    h = client.run("approval")
    s = client.stream(h.handler_id, include_internal=True)
    got: list[w.Record] = []
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            got.extend(s)  # blocks once the handler is idle
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=follow)
    t.start()
    wait_for("the follower has the idle record", lambda: not t.is_alive() or any(is_idle(r) for r in list(got)))
    assert t.is_alive(), errors
    s.close()
    t.join(WAIT)
    assert not t.is_alive() and not errors  # the iteration just ended
    assert s.last_seq == got[-1].seq
    assert list(s) == []
    client.cancel(h.handler_id)
