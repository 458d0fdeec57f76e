"""The asyncio client (grpc.aio)."""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc
import grpc.aio

from wfd.v1 import handler_pb2, schedule_pb2, service_pb2, service_pb2_grpc

from . import _common as c
from . import _schedules as sch
from ._tls import with_namespace, with_token
from ._uuid import uuid7
from .errors import Cancelled, FailedPrecondition, Unavailable, WfdError, from_rpc_error

__all__ = ["AsyncClient", "AsyncRecordStream"]

_Res = TypeVar("_Res")
_DEFAULT: Any = object()

# See _sync._RESUMABLE.
_RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})


class AsyncClient:
    """An asyncio client of one wfd server, with the methods of
    :class:`wfd_client.Client` as coroutines (``stream`` and ``list_all``
    return async iterators). Make it inside the event loop that uses it;
    ``async with AsyncClient(...) as c`` closes it.

    The arguments are those of :class:`wfd_client.Client`.
    """

    def __init__(
        self,
        target: str = c.DEFAULT_TARGET,
        *,
        timeout: float | None = c.DEFAULT_TIMEOUT,
        retry: c.RetryPolicy | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
        options: Sequence[tuple[str, Any]] = (),
        token: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.target = target
        self.namespace = namespace or "default"
        self.timeout = timeout
        self.retry = retry or c.RetryPolicy()
        self._metadata = with_namespace(with_token(target, token, credentials is not None, metadata), namespace)
        opts = c.channel_options(self.retry, options)
        if credentials is None:
            self._channel = grpc.aio.insecure_channel(target, options=opts)
        else:
            self._channel = grpc.aio.secure_channel(target, credentials, options=opts)
        self._stub = service_pb2_grpc.WorkflowServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._closed = asyncio.Event()

    # --- lifecycle -----------------------------------------------------------

    async def close(self) -> None:
        """Closes the channel; calls and streams in progress fail with Cancelled."""
        self._closed.set()
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncClient({self.target!r})"

    @property
    def stub(self) -> service_pb2_grpc.WorkflowServiceStub:
        """The generated stub on the client's channel (without the client's
        timeout and retries)."""
        return self._stub

    @property
    def channel(self) -> grpc.aio.Channel:
        return self._channel

    # --- calls ---------------------------------------------------------------

    async def workflows(self, *, versions: bool = False, timeout: float | None = _DEFAULT) -> list[c.Workflow]:
        """Returns the workflows the server runs; see :meth:`wfd_client.Client.workflows`."""
        req = service_pb2.ListWorkflowsRequest(versions=versions)
        res = await self._unary(self._stub.ListWorkflows, req, timeout)
        return list(res.workflows)

    async def workflow(self, name: str, *, timeout: float | None = _DEFAULT) -> c.Workflow:
        """One workflow with its versions and their handler counts; see :meth:`wfd_client.Client.workflow`."""
        res = await self._unary(self._stub.ListWorkflows, service_pb2.ListWorkflowsRequest(name=name), timeout)
        return c.only_workflow(res, name)

    async def upgrade_handlers(
        self,
        workflow: str,
        from_version: str,
        *,
        to_version: str | None = None,
        handler_ids: Iterable[str] | None = None,
        dry_run: bool = False,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.UpgradeResult:
        """One page of an upgrade; see :meth:`wfd_client.Client.upgrade_handlers`."""
        req = c.upgrade_request(
            workflow, from_version, to_version=to_version, handler_ids=handler_ids, dry_run=dry_run,
            page_size=page_size, page_token=page_token,
        )
        res: service_pb2.UpgradeHandlersResponse = await self._unary(self._stub.UpgradeHandlers, req, timeout)
        return res

    async def upgrade_all_handlers(
        self,
        workflow: str,
        from_version: str,
        *,
        to_version: str | None = None,
        handler_ids: Iterable[str] | None = None,
        dry_run: bool = False,
        page_size: int | None = None,
        timeout: float | None = _DEFAULT,
    ) -> list[c.HandlerUpgrade]:
        """A whole upgrade, page after page; see :meth:`wfd_client.Client.upgrade_all_handlers`."""
        req = c.upgrade_request(
            workflow, from_version, to_version=to_version, handler_ids=handler_ids, dry_run=dry_run,
            page_size=page_size, page_token=None,
        )
        out: list[c.HandlerUpgrade] = []
        while True:
            res: service_pb2.UpgradeHandlersResponse = await self._unary(self._stub.UpgradeHandlers, req, timeout)
            out.extend(res.handlers)
            if not res.next_page_token:
                return out
            req.page_token = res.next_page_token

    async def set_current_version(self, workflow: str, version: str, *, timeout: float | None = _DEFAULT) -> c.Workflow:
        """Makes version the one run starts; see :meth:`wfd_client.Client.set_current_version`."""
        req = service_pb2.SetCurrentVersionRequest(workflow=workflow, version=version)
        res: service_pb2.SetCurrentVersionResponse = await self._unary(self._stub.SetCurrentVersion, req, timeout)
        return res.workflow

    async def delete_workflow_version(self, workflow: str, version: str, *, timeout: float | None = _DEFAULT) -> None:
        """Deletes an unused version; see :meth:`wfd_client.Client.delete_workflow_version`."""
        req = service_pb2.DeleteWorkflowVersionRequest(workflow=workflow, version=version)
        await self._unary(self._stub.DeleteWorkflowVersion, req, timeout)

    async def run(
        self,
        workflow: str,
        input: c.StructLike = None,
        *,
        handler_id: str | None = None,
        wait: c.DurationLike | None = None,
        version: str | None = None,
        events: Iterable[c.StartEvent] | None = None,
        attributes: c.AttributesLike | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Handler:
        """Starts a handler; see :meth:`wfd_client.Client.run`."""
        req = c.run_request(workflow, input, handler_id, wait, version, events, attributes)
        res: service_pb2.RunWorkflowResponse = await self._unary(self._stub.RunWorkflow, req, self._waiting(timeout, wait))
        return res.handler

    async def get(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Returns the handler with that id (NotFound if there is none)."""
        req = service_pb2.GetHandlerRequest(handler_id=id)
        res: service_pb2.GetHandlerResponse = await self._unary(self._stub.GetHandler, req, timeout)
        return res.handler

    async def get_at(self, id: str, seq: int, *, timeout: float | None = _DEFAULT) -> handler_pb2.HandlerAt:
        """The handler at record ``seq``; see :meth:`wfd_client.Client.get_at`."""
        req = service_pb2.GetHandlerRequest(handler_id=id, at_seq=seq)
        res: service_pb2.GetHandlerResponse = await self._unary(self._stub.GetHandler, req, timeout)
        return res.at

    async def list(
        self,
        *,
        workflow: str | None = None,
        workflow_version: str | None = None,
        statuses: Iterable[c.StatusLike] | None = None,
        idle_only: bool = False,
        idle_for: c.DurationLike | None = None,
        residency: c.ResidencyLike | None = None,
        where: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> tuple[list[c.Handler], str]:
        """One page of handlers and the next page's token; see :meth:`wfd_client.Client.list`."""
        req = c.list_request(
            workflow=workflow, statuses=statuses, idle_only=idle_only, idle_for=idle_for,
            residency=residency, page_size=page_size, page_token=page_token, workflow_version=workflow_version,
            where=where,
        )
        res = await self._unary(self._stub.ListHandlers, req, timeout)
        return list(res.handlers), res.next_page_token

    def list_all(
        self,
        *,
        workflow: str | None = None,
        workflow_version: str | None = None,
        statuses: Iterable[c.StatusLike] | None = None,
        idle_only: bool = False,
        idle_for: c.DurationLike | None = None,
        residency: c.ResidencyLike | None = None,
        where: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> AsyncIterator[c.Handler]:
        """Yields every handler the filters select, page after page
        (``async for h in client.list_all(...)``)."""
        req = c.list_request(
            workflow=workflow, statuses=statuses, idle_only=idle_only, idle_for=idle_for,
            residency=residency, page_size=page_size, page_token=page_token, workflow_version=workflow_version,
            where=where,
        )
        return self._list_all(req, timeout)

    async def _list_all(
        self, req: service_pb2.ListHandlersRequest, timeout: float | None
    ) -> AsyncIterator[c.Handler]:
        while True:
            res = await self._unary(self._stub.ListHandlers, req, timeout)
            for h in res.handlers:
                yield h
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    async def send(
        self,
        id: str,
        type: str,
        data: c.StructLike = None,
        *,
        idempotency_key: str | None = None,
        wait: c.DurationLike | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Handler:
        """Delivers an event once it is durable; see :meth:`wfd_client.Client.send`."""
        req = c.send_request(id, type, data, idempotency_key, wait)
        res: service_pb2.SendEventResponse = await self._unary(self._stub.SendEvent, req, self._waiting(timeout, wait))
        return res.handler

    async def send_or_start(
        self,
        id: str,
        workflow: str,
        type: str,
        data: c.StructLike = None,
        *,
        input: c.StructLike = None,
        version: str | None = None,
        attributes: c.AttributesLike | None = None,
        idempotency_key: str | None = None,
        wait: c.DurationLike | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.SendOrStartResult:
        """Delivers an event, starting the handler with it if it does not
        exist; see :meth:`wfd_client.Client.send_or_start`."""
        req = c.send_or_start_request(id, workflow, input, version, type, data, idempotency_key, wait, attributes)
        res: service_pb2.SendEventResponse = await self._unary(self._stub.SendEvent, req, self._waiting(timeout, wait))
        return c.SendOrStartResult(handler=res.handler, started=res.started)

    async def cancel(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Ends a running handler as cancelled and returns it."""
        req = service_pb2.CancelHandlerRequest(handler_id=id)
        res: service_pb2.CancelHandlerResponse = await self._unary(self._stub.CancelHandler, req, timeout)
        return res.handler

    async def release(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Drops an idle handler from the server's memory; see :meth:`wfd_client.Client.release`."""
        req = service_pb2.ReleaseHandlerRequest(handler_id=id)
        res: service_pb2.ReleaseHandlerResponse = await self._unary(self._stub.ReleaseHandler, req, timeout)
        return res.handler

    async def delete(self, id: str, *, timeout: float | None = _DEFAULT) -> None:
        """Removes a finished handler with its stream, checkpoint and tasks;
        see :meth:`wfd_client.Client.delete`."""
        req = service_pb2.DeleteHandlerRequest(handler_id=id)
        await self._unary(self._stub.DeleteHandler, req, timeout)

    async def tasks(
        self,
        *,
        statuses: Iterable[c.TaskStatusLike] | None = None,
        assignee: str | None = None,
        mine: bool = False,
        workflow: str | None = None,
        handler_id: str | None = None,
        claim: str | None = None,
        overdue: bool = False,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> tuple[list[c.Task], str]:
        """One page of human tasks and the next page's token; see :meth:`wfd_client.Client.tasks`."""
        req = c.list_tasks_request(
            statuses=statuses, assignee=assignee, mine=mine, workflow=workflow, handler_id=handler_id, claim=claim, overdue=overdue,
            page_size=page_size, page_token=page_token,
        )
        res = await self._unary(self._stub.ListTasks, req, timeout)
        return list(res.tasks), res.next_page_token

    def list_all_tasks(
        self,
        *,
        statuses: Iterable[c.TaskStatusLike] | None = None,
        assignee: str | None = None,
        mine: bool = False,
        workflow: str | None = None,
        handler_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> AsyncIterator[c.Task]:
        """Yields every task the filters select, page after page
        (``async for t in client.list_all_tasks(...)``)."""
        req = c.list_tasks_request(
            statuses=statuses, assignee=assignee, mine=mine, workflow=workflow, handler_id=handler_id,
            page_size=page_size, page_token=page_token,
        )
        return self._list_all_tasks(req, timeout)

    async def _list_all_tasks(
        self, req: service_pb2.ListTasksRequest, timeout: float | None
    ) -> AsyncIterator[c.Task]:
        while True:
            res = await self._unary(self._stub.ListTasks, req, timeout)
            for t in res.tasks:
                yield t
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    async def task(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Task:
        """Returns the human task with that id (NotFound if there is none)."""
        req = service_pb2.GetTaskRequest(task_id=id)
        res: service_pb2.GetTaskResponse = await self._unary(self._stub.GetTask, req, timeout)
        return res.task

    async def claim_task(self, id: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Client.claim_task's asyncio twin."""
        req = service_pb2.ClaimTaskRequest(task_id=id, by=by or "")
        res: service_pb2.ClaimTaskResponse = await self._unary(self._stub.ClaimTask, req, timeout)
        return res.task

    async def unclaim_task(self, id: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Client.unclaim_task's asyncio twin."""
        req = service_pb2.UnclaimTaskRequest(task_id=id, by=by or "")
        res: service_pb2.UnclaimTaskResponse = await self._unary(self._stub.UnclaimTask, req, timeout)
        return res.task

    async def reassign_task(
        self, id: str, assignee: str, *, by: str | None = None, timeout: float | None = _DEFAULT
    ) -> c.Task:
        """Client.reassign_task's asyncio twin."""
        req = service_pb2.ReassignTaskRequest(task_id=id, assignee=assignee, by=by or "")
        res: service_pb2.ReassignTaskResponse = await self._unary(self._stub.ReassignTask, req, timeout)
        return res.task

    async def comment_task(self, id: str, text: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Client.comment_task's asyncio twin."""
        req = service_pb2.CommentTaskRequest(task_id=id, text=text, by=by or "", comment_id=str(uuid7()))
        res: service_pb2.CommentTaskResponse = await self._unary(self._stub.CommentTask, req, timeout)
        return res.task

    async def cancel_task(
        self,
        id: str,
        reason: str,
        *,
        cancelled_by: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Task:
        """Client.cancel_task's asyncio twin."""
        req = service_pb2.CancelTaskRequest(task_id=id, reason=reason, cancelled_by=cancelled_by or "")
        try:
            res: service_pb2.CancelTaskResponse = await self._unary(self._stub.CancelTask, req, timeout)
        except FailedPrecondition:
            try:
                t = await self.task(id, timeout=timeout)
            except WfdError:
                t = None
            if t is not None and c.cancelled_as_asked(t, req):
                return t
            raise
        return res.task

    async def complete_task(
        self,
        id: str,
        answer: c.StructLike,
        *,
        completed_by: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Task:
        """Answers a pending task; see :meth:`wfd_client.Client.complete_task`."""
        req = c.complete_task_request(id, answer, completed_by)
        attempts = 0

        def attempt(r: Any, **kw: Any) -> Any:
            nonlocal attempts
            attempts += 1
            return self._stub.CompleteTask(r, **kw)

        try:
            res: service_pb2.CompleteTaskResponse = await self._unary(attempt, req, timeout)
        except FailedPrecondition:
            if attempts < 2:
                raise
            # Did an earlier attempt, whose reply was lost, complete it?
            try:
                t = await self.task(id, timeout=timeout)
            except WfdError:
                t = None
            if t is not None and c.completed_as_asked(t, req):
                return t
            raise
        return res.task

    async def publish(
        self,
        key: str,
        data: c.StructLike = None,
        *,
        handler_id: str | None = None,
        event_id: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.PublishResult:
        """Appends an event under ``key`` and wakes the handlers waiting for
        it; see :meth:`wfd_client.Client.publish`."""
        req = c.publish_request(key, data, handler_id, event_id)
        res: service_pb2.PublishEventResponse = await self._unary(self._stub.PublishEvent, req, timeout)
        return res

    async def published_events(
        self,
        *,
        key: str | None = None,
        since: datetime.datetime | None = None,
        handler_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> tuple[list[c.PublishedEvent], str]:
        """Returns one page of the published-event log, latest first; see
        :meth:`wfd_client.Client.published_events`."""
        req = c.published_list_request(
            key=key, since=since, handler_id=handler_id, page_size=page_size, page_token=page_token,
        )
        res = await self._unary(self._stub.ListPublishedEvents, req, timeout)
        return list(res.events), res.next_page_token

    def list_all_published_events(
        self,
        *,
        key: str | None = None,
        since: datetime.datetime | None = None,
        handler_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> AsyncIterator[c.PublishedEvent]:
        """Yields every event the filters select, latest first, page after
        page (``async for e in client.list_all_published_events(...)``)."""
        req = c.published_list_request(
            key=key, since=since, handler_id=handler_id, page_size=page_size, page_token=page_token,
        )
        return self._list_all_published(req, timeout)

    async def _list_all_published(
        self, req: service_pb2.ListPublishedEventsRequest, timeout: float | None
    ) -> AsyncIterator[c.PublishedEvent]:
        while True:
            res = await self._unary(self._stub.ListPublishedEvents, req, timeout)
            for e in res.events:
                yield e
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    # --- schedules -----------------------------------------------------------

    async def create_schedule(
        self,
        schedule_id: str,
        *,
        workflow: str,
        cron: str | None = None,
        time_zone: str | None = None,
        interval: c.DurationLike | None = None,
        phase: c.DurationLike | None = None,
        start_at: datetime.datetime | None = None,
        end_at: datetime.datetime | None = None,
        version: str | None = None,
        input: c.StructLike = None,
        overlap: sch.OverlapLike | None = None,
        catchup_window: c.DurationLike | None = None,
        paused: bool = False,
        note: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> sch.Schedule:
        """Stores a schedule and returns it with its next ticks; see :meth:`wfd_client.Client.create_schedule`."""
        schedule = sch.schedule_message(
            schedule_id, workflow=workflow, cron=cron, time_zone=time_zone, interval=interval, phase=phase,
            start_at=start_at, end_at=end_at, version=version, input=input, overlap=overlap,
            catchup_window=catchup_window, paused=paused, note=note,
        )
        req = sch.create_request(schedule)
        res: schedule_pb2.CreateScheduleResponse = await self._unary(self._stub.CreateSchedule, req, timeout)
        return res.schedule

    async def get_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> sch.Schedule:
        """Returns the schedule with its info; see :meth:`wfd_client.Client.get_schedule`."""
        req = schedule_pb2.GetScheduleRequest(schedule_id=schedule_id)
        res: schedule_pb2.GetScheduleResponse = await self._unary(self._stub.GetSchedule, req, timeout)
        return res.schedule

    async def list_schedules(
        self, page_size: int | None = None, page_token: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> tuple[list[sch.Schedule], str]:
        """One page of schedules, by id, and the next page's token; see :meth:`wfd_client.Client.list_schedules`."""
        req = sch.list_request(page_size, page_token)
        res: schedule_pb2.ListSchedulesResponse = await self._unary(self._stub.ListSchedules, req, timeout)
        return list(res.schedules), res.next_page_token

    def list_all_schedules(
        self, page_size: int | None = None, *, timeout: float | None = _DEFAULT
    ) -> AsyncIterator[sch.Schedule]:
        """Yields every schedule, by id, page after page
        (``async for s in client.list_all_schedules()``)."""
        return self._list_all_schedules(sch.list_request(page_size, None), timeout)

    async def _list_all_schedules(
        self, req: schedule_pb2.ListSchedulesRequest, timeout: float | None
    ) -> AsyncIterator[sch.Schedule]:
        while True:
            res: schedule_pb2.ListSchedulesResponse = await self._unary(self._stub.ListSchedules, req, timeout)
            for s in res.schedules:
                yield s
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    async def update_schedule(
        self,
        schedule_id: str,
        *,
        workflow: str,
        cron: str | None = None,
        time_zone: str | None = None,
        interval: c.DurationLike | None = None,
        phase: c.DurationLike | None = None,
        start_at: datetime.datetime | None = None,
        end_at: datetime.datetime | None = None,
        version: str | None = None,
        input: c.StructLike = None,
        overlap: sch.OverlapLike | None = None,
        catchup_window: c.DurationLike | None = None,
        paused: bool = False,
        note: str | None = None,
        expect_revision: int | None = None,
        timeout: float | None = _DEFAULT,
    ) -> sch.Schedule:
        """Replaces a schedule's settable fields; see :meth:`wfd_client.Client.update_schedule`."""
        schedule = sch.schedule_message(
            schedule_id, workflow=workflow, cron=cron, time_zone=time_zone, interval=interval, phase=phase,
            start_at=start_at, end_at=end_at, version=version, input=input, overlap=overlap,
            catchup_window=catchup_window, paused=paused, note=note,
        )
        req = sch.update_request(schedule, expect_revision)
        res: schedule_pb2.UpdateScheduleResponse = await self._unary(self._stub.UpdateSchedule, req, timeout)
        return res.schedule

    async def pause_schedule(
        self, schedule_id: str, note: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> sch.Schedule:
        """Pauses a schedule; see :meth:`wfd_client.Client.pause_schedule`."""
        return await self._set_paused(schedule_id, True, note, timeout)

    async def resume_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> sch.Schedule:
        """Resumes a paused schedule; see :meth:`wfd_client.Client.resume_schedule`."""
        return await self._set_paused(schedule_id, False, None, timeout)

    async def _set_paused(
        self, schedule_id: str, paused: bool, note: str | None, timeout: float | None
    ) -> sch.Schedule:
        lap = 1
        while True:
            req = sch.paused_request(await self.get_schedule(schedule_id, timeout=timeout), paused, note)
            try:
                res: schedule_pb2.UpdateScheduleResponse = await self._unary(self._stub.UpdateSchedule, req, timeout)
                return res.schedule
            except FailedPrecondition:
                if lap >= sch.MAX_PAUSE_LAPS:
                    raise
                lap += 1

    async def delete_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> None:
        """Deletes a schedule; see :meth:`wfd_client.Client.delete_schedule`."""
        req = schedule_pb2.DeleteScheduleRequest(schedule_id=schedule_id)
        await self._unary(self._stub.DeleteSchedule, req, timeout)

    async def trigger_schedule(
        self, schedule_id: str, at: datetime.datetime | None = None, *, timeout: float | None = _DEFAULT
    ) -> sch.TriggerResult:
        """Starts a run now (or at ``at``); see :meth:`wfd_client.Client.trigger_schedule`."""
        req = sch.trigger_request(schedule_id, at)
        res: schedule_pb2.TriggerScheduleResponse = await self._unary(self._stub.TriggerSchedule, req, timeout)
        return sch.trigger_result(res)

    async def backfill_schedule(
        self, schedule_id: str, start: datetime.datetime, end: datetime.datetime, *, timeout: float | None = _DEFAULT
    ) -> sch.TriggerResult:
        """Starts the ticks of a past range; see :meth:`wfd_client.Client.backfill_schedule`."""
        req = sch.backfill_request(schedule_id, start, end)
        res: schedule_pb2.TriggerScheduleResponse = await self._unary(self._stub.TriggerSchedule, req, timeout)
        return sch.trigger_result(res)

    async def stats(self, *, timeout: float | None = _DEFAULT) -> c.Stats:
        """Returns the server's counters."""
        req = service_pb2.GetStatsRequest()
        res: service_pb2.GetStatsResponse = await self._unary(self._stub.GetStats, req, timeout)
        return res

    async def wait(self, id: str, wait: c.DurationLike | None = None, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Waits until the handler finishes or ``wait`` passes; see
        :meth:`wfd_client.Client.wait`."""
        req = c.wait_request(id, wait)
        res: service_pb2.WaitHandlerResponse = await self._unary(
            self._stub.WaitHandler, req, self._waiting(timeout, c.DEFAULT_WAIT if wait is None else wait)
        )
        return res.handler

    async def wait_idle(
        self, id: str, after_seq: int = 0, wait: c.DurationLike | None = None, *, timeout: float | None = _DEFAULT
    ) -> c.Handler:
        """Waits until the handler is idle at or after ``after_seq``, or
        finishes; see :meth:`wfd_client.Client.wait_idle`."""
        req = c.wait_request(id, wait)
        req.until_idle = True
        req.after_seq = after_seq
        res: service_pb2.WaitHandlerResponse = await self._unary(
            self._stub.WaitHandler, req, self._waiting(timeout, c.DEFAULT_WAIT if wait is None else wait)
        )
        return res.handler

    async def namespaces(self, *, timeout: float | None = _DEFAULT) -> list[c.Namespace]:
        """The namespaces the caller may use; see :meth:`wfd_client.Client.namespaces`."""
        res: service_pb2.ListNamespacesResponse = await self._unary(
            self._stub.ListNamespaces, service_pb2.ListNamespacesRequest(), timeout
        )
        return list(res.namespaces)

    async def identity(self, *, timeout: float | None = _DEFAULT) -> c.Identity:
        """Who the caller is to the server; see :meth:`wfd_client.Client.identity`."""
        res: service_pb2.GetIdentityResponse = await self._unary(
            self._stub.GetIdentity, service_pb2.GetIdentityRequest(), timeout
        )
        return res

    async def replicas(self, *, timeout: float | None = _DEFAULT) -> list[c.Replica]:
        """The live replicas sharing the server's database; see :meth:`wfd_client.Client.replicas`."""
        res: service_pb2.ListReplicasResponse = await self._unary(
            self._stub.ListReplicas, service_pb2.ListReplicasRequest(), timeout
        )
        return list(res.replicas)

    def stream(
        self, id: str, after: int = 0, *, from_head: bool = False, include_internal: bool = False
    ) -> AsyncRecordStream:
        """An async iterator of the handler's records after ``after``, resumed
        across dropped connections; see :meth:`wfd_client.Client.stream`.
        ``async with client.stream(id) as s: async for rec in s: ...`` ends
        the call as soon as the block is left; ``await s.aclose()`` from
        another task ends the iteration there as if the stream were over.
        ``from_head`` and ``include_internal`` as in the sync client."""
        c.check_stream_options(after, from_head)
        return AsyncRecordStream(self, id, after, from_head=from_head, include_internal=include_internal)

    # --- plumbing ------------------------------------------------------------

    def _closed_under(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether a CancelledError came from closing the client rather than
        from cancelling the task that awaited the call."""
        return self._closed.is_set() and not (task is not None and task.cancelling())

    async def _sleep_or_closed(self, pause: float) -> bool:
        """Sleeps for pause seconds; returns True early if the client closes."""
        try:
            await asyncio.wait_for(self._closed.wait(), pause)
        except TimeoutError:
            return False
        return True

    def _waiting(self, timeout: float | None, wait: c.DurationLike | None) -> float | None:
        """The timeout of a call that waits up to ``wait`` on the server."""
        return c.wait_timeout(self.timeout if timeout is _DEFAULT else timeout, wait)

    async def _unary(self, method: Callable[..., Awaitable[_Res]], request: Any, timeout: float | None) -> _Res:
        if timeout is _DEFAULT:
            timeout = self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            attempt += 1
            if self._closed.is_set():
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed")
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await method(request, timeout=remaining, metadata=self._metadata)
            except grpc.RpcError as e:
                err = from_rpc_error(e)
                cause: BaseException = e
            except asyncio.CancelledError as e:
                if not self._closed_under(asyncio.current_task()):
                    raise
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from e
            if self._closed.is_set():
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from cause
            if not isinstance(err, Unavailable) or attempt >= self.retry.max_attempts:
                raise err from cause
            pause = self.retry.pause(attempt, err.retry_delay)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise err from cause
            if await self._sleep_or_closed(pause):
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from cause


class AsyncRecordStream(AsyncIterator[c.Record]):
    """The records of one handler; see :meth:`AsyncClient.stream`.

    ``last_seq`` is the sequence number of the last record yielded.
    """

    def __init__(
        self,
        client: AsyncClient,
        handler_id: str,
        after: int,
        *,
        from_head: bool = False,
        include_internal: bool = False,
    ) -> None:
        self._client = client
        self.handler_id = handler_id
        self.last_seq = after
        # As in RecordStream: from the head once, then after what it saw.
        self._from_head = from_head
        self._include_internal = include_internal
        self._stopped = False
        self._call: Any = None
        self._gen = self._run()

    def __aiter__(self) -> AsyncRecordStream:
        return self

    async def __anext__(self) -> c.Record:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        """Ends the stream and its call, also from another task."""
        self._stopped = True
        call = self._call
        if call is not None:
            call.cancel()
        try:
            await self._gen.aclose()
        except RuntimeError:
            pass  # running in another task: the cancelled call ends it there

    async def __aenter__(self) -> AsyncRecordStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _finished_earlier(self) -> bool:
        """Whether the handler finished with a record at or before last_seq:
        a stream asked for the records after the terminal one ends cleanly
        with nothing, and is over rather than cut."""
        try:
            h = await self._client.get(self.handler_id)
        except WfdError:
            return False
        return c.is_finished(h) and h.last_seq <= self.last_seq

    async def _run(self) -> AsyncGenerator[c.Record, None]:
        client = self._client
        failures = 0
        if self._from_head:
            # The head is asked for once, before the stream opens: a stream
            # cut before its first heartbeat (which says where the head was)
            # would otherwise ask for the head again when it reconnects, and
            # skip what was recorded meanwhile.
            self.last_seq, self._from_head = (await client.get(self.handler_id)).last_seq, False
        while True:
            if client._closed.is_set():
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed")
            progressed = False
            ended = False  # the server ended the call cleanly
            err: WfdError
            req = c.stream_request(
                self.handler_id, 0 if self._from_head else self.last_seq, self._from_head, self._include_internal
            )
            call = self._call = client._stub.StreamEvents(req, metadata=client._metadata)
            try:
                if self._stopped:
                    return
                first = True
                async for msg in call:
                    if msg.WhichOneof("kind") != "record":
                        # A heartbeat. The server may send one as soon as the
                        # stream is subscribed; only a later one shows the
                        # connection carries the stream.
                        progressed = progressed or not first
                        first = False
                        continue
                    first = False
                    progressed = True
                    rec = msg.record
                    if rec.seq <= self.last_seq:
                        continue  # already yielded
                    self.last_seq = rec.seq
                    yield rec
                    if c.is_terminal(rec):
                        return
                err = Unavailable(grpc.StatusCode.UNAVAILABLE, c.END_OF_STREAM)
                ended = True
            except grpc.RpcError as e:
                if self._stopped:
                    return
                err = from_rpc_error(e)
            except asyncio.CancelledError:
                # grpc.aio ends locally cancelled calls this way (aclose from
                # another task, a closed channel); a cancellation of the task
                # itself goes on up.
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                if self._stopped:
                    return
                if not client._closed.is_set():
                    raise
                err = Cancelled(grpc.StatusCode.CANCELLED, "client: closed")
            finally:
                call.cancel()
                self._call = None
            if ended and await self._finished_earlier():
                return
            # Count the attempts in a row without progress; one that
            # made progress before it broke starts a new count.
            failures = 0 if progressed else failures + 1
            if client._closed.is_set():
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from err
            if err.code not in _RESUMABLE or failures >= client.retry.max_attempts:
                raise err
            if await client._sleep_or_closed(client.retry.backoff(max(1, failures))):
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from err
