"""Client-side pieces that need no server: ids, conversions, backoff."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from google.protobuf import struct_pb2

import wfd_client as w
from wfd_client import _common


def test_uuid7_layout_and_order() -> None:
    ids = [w.uuid7() for _ in range(2000)]
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in ids)
    assert ids == sorted(ids, key=lambda u: u.int) and len(set(ids)) == len(ids)
    assert [str(u) for u in ids] == sorted(str(u) for u in ids)  # the text sorts too
    ms = ids[-1].int >> 80
    assert abs(ms - time.time() * 1000) < 5000


def test_struct_round_trip() -> None:
    data = {"s": "x", "i": 3, "f": 2.5, "b": False, "n": None, "l": [1, {"k": []}], "d": {"e": {}}}
    assert w.struct_to_dict(w.to_struct(data)) == data
    s = struct_pb2.Struct()
    assert w.to_struct(s) is s
    assert w.to_struct(None) == struct_pb2.Struct()
    assert w.struct_to_dict(None) == {}
    with pytest.raises(w.InvalidArgument):
        w.to_struct(["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(w.InvalidArgument):
        w.to_struct({"when": datetime.datetime.now()})


def test_list_request_conversions() -> None:
    req = _common.list_request(
        workflow="echo", statuses=["running", "HANDLER_STATUS_FAILED", 2], idle_only=True,
        idle_for=datetime.timedelta(minutes=2), residency="released", page_size=10, page_token="t",
    )
    assert list(req.statuses) == [1, 3, 2]
    assert req.idle_for.seconds == 120 and req.residency == w.Residency.Value("RESIDENCY_RELEASED")
    assert _common.list_request(
        workflow=None, statuses="completed", idle_only=False, idle_for=1.5, residency=None,
        page_size=None, page_token=None,
    ).idle_for.nanos == 500_000_000
    with pytest.raises(w.InvalidArgument, match="residency"):
        _common.list_request(workflow=None, statuses=None, idle_only=False, idle_for=None,
                             residency="nowhere", page_size=None, page_token=None)


def test_requests_carry_ids() -> None:
    run = _common.run_request("echo", {"a": 1}, None)
    assert uuid.UUID(run.handler_id).version == 7
    assert _common.run_request("echo", None, "mine").handler_id == "mine"
    send = _common.send_request("h", "t", None, None)
    assert uuid.UUID(send.idempotency_key).version == 7
    assert _common.send_request("h", "t", None, "k").idempotency_key == "k"


def test_backoff() -> None:
    p = w.RetryPolicy(max_attempts=5, initial_backoff=0.1, max_backoff=1.0)
    for _ in range(100):
        assert 0.08 <= p.backoff(1) <= 0.12
        assert 0.16 <= p.backoff(2) <= 0.24
        assert 0.8 <= p.backoff(50) <= 1.2
    with pytest.raises(ValueError):
        w.RetryPolicy(max_attempts=0)


def test_pause_honours_the_server_hint_up_to_max_backoff() -> None:
    p = w.RetryPolicy(initial_backoff=0.1, max_backoff=2.0)
    assert 0.08 <= p.pause(1, None) <= 0.12
    assert p.pause(1, 1.0) == 1.0
    assert p.pause(1, 30.0) == 2.0
    assert 0.08 <= p.pause(1, 0.01) <= 0.12


def test_task_requests() -> None:
    req = _common.list_tasks_request(
        statuses=["pending", "TASK_STATUS_EXPIRED", w.TaskStatus.Value("TASK_STATUS_CANCELLED")],
        assignee="ada", workflow="expense", handler_id="h", page_size=10, page_token="t",
    )
    assert list(req.statuses) == [1, 3, 4]
    assert (req.assignee, req.workflow, req.handler_id, req.page_size, req.page_token) == ("ada", "expense", "h", 10, "t")
    one = _common.list_tasks_request(statuses="completed", assignee=None, workflow=None, handler_id=None,
                                     page_size=None, page_token=None)
    assert list(one.statuses) == [2] and one.assignee == "" and one.page_size == 0
    with pytest.raises(w.InvalidArgument, match="unknown task status"):
        _common.list_tasks_request(statuses=["running"], assignee=None, workflow=None, handler_id=None,
                                   page_size=None, page_token=None)

    done = _common.complete_task_request("t", {"approved": True}, None)
    assert done.completed_by == "" and w.struct_to_dict(done.answer) == {"approved": True}
    assert _common.complete_task_request("t", None, "ada").answer == struct_pb2.Struct()

    pub = _common.publish_request("k", None, None, None)
    assert uuid.UUID(pub.event_id).version == 7 and pub.handler_id == ""
    assert _common.publish_request("k", {"a": 1}, "h", "e").event_id == "e"


def test_task_to_dict() -> None:
    t = w.Task(task_id="h:1", status=w.TaskStatus.Value("TASK_STATUS_COMPLETED"), completed_by="ada",
               answer=w.to_struct({"approved": False, "reason": "x", "n": 3}),
               answer_schema=w.to_struct({"type": "object", "maxProperties": 2}))
    t.created_at.FromSeconds(1_700_000_000)
    d = w.task_to_dict(t)
    assert d["answer"] == {"approved": False, "reason": "x", "n": 3}
    assert isinstance(d["answer"]["n"], int)
    assert d["answer_schema"] == {"type": "object", "maxProperties": 2}
    assert d["status"] == "TASK_STATUS_COMPLETED" and d["created_at"] == "2023-11-14T22:13:20Z"
    assert w.task_to_dict(w.Task(task_id="x")) == {"task_id": "x", "answer": {}, "answer_schema": {}}


def test_completed_as_asked() -> None:
    req = _common.complete_task_request("t", {"approved": True, "n": 1}, "ada")
    done = w.TaskStatus.Value("TASK_STATUS_COMPLETED")
    t = w.Task(task_id="t", status=done, completed_by="ada", answer=w.to_struct({"n": 1.0, "approved": True}))
    assert _common.completed_as_asked(t, req)
    t.completed_by = "bob"
    assert not _common.completed_as_asked(t, req)
    t.completed_by, t.status = "ada", w.TaskStatus.Value("TASK_STATUS_EXPIRED")
    assert not _common.completed_as_asked(t, req)
