"""Workflow schedules through the client (create, get, list, update, pause
and resume, trigger, backfill, delete, and the refusals' codes), sync and
async, against a real `wfd serve`.

The schedules tick hourly or yearly, are paused, or are deleted before the
test ends: nothing here waits for a tick, and no tick starts handlers under
the session's other tests.
"""

from __future__ import annotations

import datetime
from datetime import timedelta, timezone

import pytest
from conftest import unique

import wfd_client as w
from wfd_client import AsyncClient, Client, OverlapPolicy

ALLOW = OverlapPolicy.Value("OVERLAP_POLICY_ALLOW")
HOUR = timedelta(hours=1)
#: Once a year (1 January, 00:00 UTC): never during a test.
YEARLY = "0 0 1 1 *"


def now() -> datetime.datetime:
    return datetime.datetime.now(timezone.utc)


def tick_id(schedule_id: str, tick: datetime.datetime) -> str:
    """The handler id of a schedule's tick: sched:<id>:<YYYYMMDDThhmmssZ>."""
    return f"sched:{schedule_id}:{tick.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}"


def past_hours(n: int) -> list[datetime.datetime]:
    """The last n whole hours before the current one, oldest first."""
    hour = now().replace(minute=0, second=0, microsecond=0)
    return [hour - k * HOUR for k in range(n, 0, -1)]


def test_create_get_update_pause_resume_delete(client: Client) -> None:
    sid = unique("hourly")
    created = client.create_schedule(sid, workflow="echo", interval=3600, input={"x": 1}, overlap="allow", note="first")
    assert created.schedule_id == sid and created.spec.interval.seconds == 3600
    assert created.policy.overlap == ALLOW and not created.paused and created.note == "first"
    assert w.struct_to_dict(created.action.input) == {"x": 1}
    ticks = [t.ToDatetime(tzinfo=timezone.utc) for t in created.info.next_ticks]
    assert len(ticks) == 5 and ticks[0] > now() - HOUR and ticks[0].minute == ticks[0].second == 0
    assert all(b - a == HOUR for a, b in zip(ticks, ticks[1:]))

    got = client.get_schedule(sid)
    assert got.revision == created.revision and list(got.info.next_ticks) == list(created.info.next_ticks)
    fields = w.schedule_fields(got)
    assert fields == {"schedule_id": sid, "workflow": "echo", "interval": HOUR, "input": {"x": 1},
                      "overlap": ALLOW, "paused": False, "note": "first"}

    updated = client.update_schedule(**{**fields, "input": {"x": 2}, "note": "second"}, expect_revision=got.revision)
    assert updated.note == "second" and updated.revision > got.revision
    assert w.struct_to_dict(updated.action.input) == {"x": 2} and updated.policy.overlap == ALLOW
    with pytest.raises(w.FailedPrecondition, match="revision"):
        client.update_schedule(sid, workflow="echo", interval=HOUR, note="stale", expect_revision=got.revision)

    paused = client.pause_schedule(sid, note="maintenance")
    assert paused.paused and paused.note == "maintenance" and not paused.info.next_ticks
    assert client.get_schedule(sid).paused
    resumed = client.resume_schedule(sid)
    assert not resumed.paused and resumed.note == "maintenance", "resume keeps the note"
    assert len(resumed.info.next_ticks) == 5 and resumed.spec.interval.seconds == 3600, "and the spec"
    assert w.struct_to_dict(resumed.action.input) == {"x": 2}, "and the action"

    client.delete_schedule(sid)
    with pytest.raises(w.NotFound, match=sid):
        client.get_schedule(sid)
    with pytest.raises(w.NotFound):
        client.delete_schedule(sid)
    with pytest.raises(w.NotFound):
        client.pause_schedule(sid)


def test_trigger(client: Client) -> None:
    sid = unique("trig")
    client.create_schedule(sid, workflow="echo", cron=YEARLY, time_zone="Europe/Paris", overlap="allow")
    res = client.trigger_schedule(sid)
    assert isinstance(res, w.TriggerResult) and res.schedule.schedule_id == sid
    assert len(res.started) == 1 and res.started[0].startswith(f"sched:{sid}:trigger:")
    h = client.get(res.started[0])
    assert h.workflow == "echo" and h.schedule_id == sid

    at = now() - timedelta(seconds=5)
    first = client.trigger_schedule(sid, at)
    again = client.trigger_schedule(sid, at)
    assert again.started == first.started, "a trigger repeated with its instant starts no other run"
    assert first.started[0] != res.started[0]
    client.delete_schedule(sid)


def test_backfill(client: Client) -> None:
    sid = unique("backfill")
    client.create_schedule(sid, workflow="echo", interval=HOUR, overlap="allow", paused=True)
    ticks = past_hours(3)
    res = client.backfill_schedule(sid, ticks[0], ticks[-1])
    assert res.started == tuple(tick_id(sid, t) for t in ticks), "a paused schedule is backfilled too"
    assert res.schedule.paused
    for hid, tick in zip(res.started, ticks):
        h = client.get(hid)
        assert h.schedule_id == sid and h.schedule_tick.ToDatetime(tzinfo=timezone.utc) == tick
    with pytest.raises(w.InvalidArgument, match="future"):
        client.backfill_schedule(sid, ticks[0], now() + HOUR)


def test_list_pages_by_id(client: Client) -> None:
    prefix = unique("list") + "-"
    ids = [prefix + s for s in "abc"]
    for sid in reversed(ids):
        client.create_schedule(sid, workflow="echo", cron=YEARLY)
    seen: list[str] = []
    pages, token = 0, None
    while token != "":
        page, token = client.list_schedules(page_size=2, page_token=token)
        assert len(page) <= 2
        seen.extend(s.schedule_id for s in page)
        pages += 1
    assert pages >= 2 and seen == sorted(seen), "pages of 2, by id"
    assert [s for s in seen if s.startswith(prefix)] == ids
    assert [s.schedule_id for s in client.list_all_schedules(page_size=2)] == seen


def test_refusals(client: Client) -> None:
    sid = unique("refused")
    with pytest.raises(w.InvalidArgument, match=r"cron field 2 \(hour\)"):
        client.create_schedule(sid, workflow="echo", cron="0 25 * * *")
    with pytest.raises(w.NotFound, match="nope"):
        client.create_schedule(sid, workflow="nope", cron=YEARLY)
    client.create_schedule(sid, workflow="echo", cron=YEARLY)
    with pytest.raises(w.AlreadyExists, match=sid):
        client.create_schedule(sid, workflow="echo", cron=YEARLY)
    with pytest.raises(w.NotFound):
        client.trigger_schedule("no-such-schedule")
    # Refused before any call.
    with pytest.raises(w.InvalidArgument, match="interval"):
        client.create_schedule(sid, workflow="echo", interval=-1)
    with pytest.raises(w.InvalidArgument, match="overlap"):
        client.create_schedule(sid, workflow="echo", cron=YEARLY, overlap="sometimes")
    with pytest.raises(w.InvalidArgument, match="aware"):
        client.create_schedule(sid, workflow="echo", cron=YEARLY, start_at=datetime.datetime(2030, 1, 1))
    with pytest.raises(w.InvalidArgument, match="aware"):
        client.trigger_schedule(sid, datetime.datetime(2030, 1, 1))
    with pytest.raises(w.InvalidArgument, match="page size"):
        client.list_schedules(page_size=-1)


async def test_schedules_async(aclient: AsyncClient) -> None:
    sid = unique("aio")
    created = await aclient.create_schedule(sid, workflow="echo", interval=timedelta(hours=1), overlap="allow")
    assert len(created.info.next_ticks) == 5
    assert (await aclient.get_schedule(sid)).revision == created.revision
    paused = await aclient.pause_schedule(sid, "maintenance")
    assert paused.paused and paused.note == "maintenance" and not paused.info.next_ticks
    assert not (await aclient.resume_schedule(sid)).paused
    await aclient.pause_schedule(sid)  # for the backfill: no tick of its own meanwhile

    tr = await aclient.trigger_schedule(sid)
    assert len(tr.started) == 1 and tr.started[0].startswith(f"sched:{sid}:trigger:")
    assert (await aclient.get(tr.started[0])).schedule_id == sid
    ticks = past_hours(3)
    bf = await aclient.backfill_schedule(sid, ticks[0], ticks[-1])
    assert bf.started == tuple(tick_id(sid, t) for t in ticks)

    page, _ = await aclient.list_schedules(page_size=1000)
    assert sid in [s.schedule_id for s in page]
    assert sid in [s.schedule_id async for s in aclient.list_all_schedules(page_size=1)]
    with pytest.raises(w.FailedPrecondition):
        await aclient.update_schedule(sid, workflow="echo", interval=HOUR, expect_revision=created.revision)
    with pytest.raises(w.AlreadyExists):
        await aclient.create_schedule(sid, workflow="echo", cron=YEARLY)
    await aclient.delete_schedule(sid)
    with pytest.raises(w.NotFound):
        await aclient.get_schedule(sid)
