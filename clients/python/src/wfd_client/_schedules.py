"""Workflow schedules: what the sync and the asyncio client share (the
requests their schedule methods send, and what those return)."""

from __future__ import annotations

import dataclasses
import datetime
import math
from typing import Any, TypeAlias

import grpc
from google.protobuf import duration_pb2, timestamp_pb2

from wfd.v1 import schedule_pb2

from ._common import DurationLike, StructLike, struct_to_dict, to_struct
from .errors import InvalidArgument

# Messages the client returns, under short names.
Schedule: TypeAlias = schedule_pb2.Schedule
ScheduleInfo: TypeAlias = schedule_pb2.ScheduleInfo
ScheduleOutcome: TypeAlias = schedule_pb2.ScheduleOutcome
OverlapPolicy = schedule_pb2.OverlapPolicy
ScheduleOutcomeKind = schedule_pb2.ScheduleOutcomeKind

#: An overlap policy by enum value (OverlapPolicy.Value("OVERLAP_POLICY_ALLOW"))
#: or by name ("skip", "buffer_one", "allow", "cancel_previous", or the
#: enum's own name).
OverlapLike: TypeAlias = int | str

#: How often pause_schedule and resume_schedule read a schedule again that
#: changed under them (its ticks change it too).
MAX_PAUSE_LAPS = 5


@dataclasses.dataclass(frozen=True)
class TriggerResult:
    """What :meth:`Client.trigger_schedule` and :meth:`Client.backfill_schedule`
    did: the schedule as recorded after the call, and the handlers the call
    started (or found started by an earlier attempt of it)."""

    schedule: Schedule
    started: tuple[str, ...]


def _invalid(msg: str) -> InvalidArgument:
    return InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, f"client: {msg}")


def _duration(v: DurationLike | None, what: str) -> duration_pb2.Duration | None:
    """A non-negative duration (seconds or a timedelta) as a Duration; None stays None."""
    if v is None:
        return None
    if isinstance(v, datetime.timedelta):
        nanos = (v.days * 86_400 + v.seconds) * 10**9 + v.microseconds * 1000
    elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        nanos = round(v * 10**9)
    else:
        raise _invalid(f"{what}: want seconds or a timedelta, got {v!r}")
    if nanos < 0:
        raise _invalid(f"{what} {v} is negative")
    d = duration_pb2.Duration()
    d.FromNanoseconds(nanos)
    return d


def timestamp(v: datetime.datetime | None, what: str) -> timestamp_pb2.Timestamp | None:
    """An aware datetime as a Timestamp; None stays None. A naive datetime
    is refused: the client cannot know which instant it means."""
    if v is None:
        return None
    if not isinstance(v, datetime.datetime):
        raise _invalid(f"{what}: want a datetime, got {type(v).__name__}")
    if v.tzinfo is None or v.utcoffset() is None:
        raise _invalid(f"{what} must be an aware datetime (with a tzinfo)")
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(v)
    return ts


_OVERLAP_PREFIX = "OVERLAP_POLICY_"


def to_overlap(v: OverlapLike | None) -> int:
    """An overlap policy by name or value (None: the server's default, skip)."""
    if v is None:
        return int(OverlapPolicy.Value("OVERLAP_POLICY_UNSPECIFIED"))
    if isinstance(v, str):
        name = v.upper()
        if not name.startswith(_OVERLAP_PREFIX):
            name = _OVERLAP_PREFIX + name
        try:
            return int(OverlapPolicy.Value(name))
        except ValueError:
            raise _invalid(
                f"unknown overlap policy {v!r} (want skip, buffer_one, allow or cancel_previous)"
            ) from None
    return int(v)


def schedule_message(
    schedule_id: str,
    *,
    workflow: str,
    cron: str | None = None,
    time_zone: str | None = None,
    interval: DurationLike | None = None,
    phase: DurationLike | None = None,
    start_at: datetime.datetime | None = None,
    end_at: datetime.datetime | None = None,
    version: str | None = None,
    input: StructLike = None,
    overlap: OverlapLike | None = None,
    catchup_window: DurationLike | None = None,
    paused: bool = False,
    note: str | None = None,
) -> Schedule:
    """The API's Schedule message of the client's schedule arguments.

    Only what the client must is checked here (durations non-negative,
    datetimes aware, the overlap policy known, the input JSON-like); the
    server checks the rest (one of cron and interval, whole seconds, the
    cron fields, the time zone) and names the field it refuses.
    """
    s = Schedule(
        schedule_id=schedule_id,
        spec=schedule_pb2.ScheduleSpec(cron=cron or "", time_zone=time_zone or ""),
        action=schedule_pb2.ScheduleAction(workflow=workflow, version=version or "", input=to_struct(input, "input")),
        policy=schedule_pb2.SchedulePolicy(overlap=to_overlap(overlap)),  # type: ignore[arg-type]
        paused=paused,
        note=note or "",
    )
    for field, value in (
        (s.spec.interval, _duration(interval, "interval")),
        (s.spec.phase, _duration(phase, "phase")),
        (s.spec.start_at, timestamp(start_at, "start_at")),
        (s.spec.end_at, timestamp(end_at, "end_at")),
        (s.policy.catchup_window, _duration(catchup_window, "catchup_window")),
    ):
        if value is not None:
            field.CopyFrom(value)  # type: ignore[attr-defined]
    return s


def schedule_fields(s: Schedule) -> dict[str, Any]:
    """The settable fields of a schedule read from the server, as the
    keyword arguments of :meth:`Client.update_schedule` (and
    ``create_schedule``): durations as timedeltas, times as aware
    datetimes, the input as a dict; fields that are not set are left out.
    Change some and pass them back to change only those::

        s = client.get_schedule("nightly")
        client.update_schedule(**{**schedule_fields(s), "note": "moved"}, expect_revision=s.revision)
    """
    spec, action, policy = s.spec, s.action, s.policy
    out: dict[str, Any] = {"schedule_id": s.schedule_id, "workflow": action.workflow}
    if spec.cron:
        out["cron"] = spec.cron
    if spec.time_zone:
        out["time_zone"] = spec.time_zone
    for name, msg, field in (
        ("interval", spec, "interval"),
        ("phase", spec, "phase"),
        ("catchup_window", policy, "catchup_window"),
    ):
        if msg.HasField(field):  # type: ignore[arg-type]
            out[name] = getattr(msg, field).ToTimedelta()
    for name in ("start_at", "end_at"):
        if spec.HasField(name):  # type: ignore[arg-type]
            out[name] = getattr(spec, name).ToDatetime(tzinfo=datetime.timezone.utc)
    if action.version:
        out["version"] = action.version
    if action.HasField("input"):
        out["input"] = struct_to_dict(action.input)
    out["overlap"] = int(policy.overlap)
    out["paused"] = s.paused
    if s.note:
        out["note"] = s.note
    return out


def create_request(schedule: Schedule) -> schedule_pb2.CreateScheduleRequest:
    return schedule_pb2.CreateScheduleRequest(schedule=schedule)


def update_request(schedule: Schedule, expect_revision: int | None) -> schedule_pb2.UpdateScheduleRequest:
    if expect_revision is not None and not 0 <= expect_revision < 2**64:
        raise _invalid(f"expect_revision {expect_revision} is not a revision")
    return schedule_pb2.UpdateScheduleRequest(schedule=schedule, expect_revision=expect_revision or 0)


def paused_request(current: Schedule, paused: bool, note: str | None) -> schedule_pb2.UpdateScheduleRequest:
    """The update that writes ``current`` (a schedule just read) back paused
    or not, with ``note`` if given, at the revision it was read at."""
    s = Schedule()
    s.CopyFrom(current)
    s.paused = paused
    if note is not None:
        s.note = note
    return schedule_pb2.UpdateScheduleRequest(schedule=s, expect_revision=current.revision)


def list_request(page_size: int | None, page_token: str | None) -> schedule_pb2.ListSchedulesRequest:
    if page_size is not None and not 0 <= page_size <= 2**31 - 1:
        raise _invalid(f"page size {page_size} out of range")
    return schedule_pb2.ListSchedulesRequest(page_size=page_size or 0, page_token=page_token or "")


def trigger_request(schedule_id: str, at: datetime.datetime | None) -> schedule_pb2.TriggerScheduleRequest:
    """A trigger at ``at``, by default the client's now: the instant names
    the run, so the client's retries of the request start one run."""
    if at is None:
        at = datetime.datetime.now(datetime.timezone.utc)
    return schedule_pb2.TriggerScheduleRequest(schedule_id=schedule_id, at=timestamp(at, "at"))


def backfill_request(
    schedule_id: str, start: datetime.datetime, end: datetime.datetime
) -> schedule_pb2.TriggerScheduleRequest:
    if start is None or end is None:
        raise _invalid("a backfill needs start and end")
    return schedule_pb2.TriggerScheduleRequest(
        schedule_id=schedule_id, backfill_from=timestamp(start, "start"), backfill_to=timestamp(end, "end")
    )


def trigger_result(res: schedule_pb2.TriggerScheduleResponse) -> TriggerResult:
    return TriggerResult(schedule=res.schedule, started=tuple(res.started))
