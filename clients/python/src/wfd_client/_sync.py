"""The synchronous client."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc

from wfd.v1 import handler_pb2, schedule_pb2, service_pb2, service_pb2_grpc

from . import _common as c
from . import _schedules as sch
from ._tls import with_namespace, with_token
from ._uuid import uuid7
from .errors import Cancelled, FailedPrecondition, Unavailable, WfdError, from_rpc_error

__all__ = ["Client", "RecordStream"]

_Res = TypeVar("_Res")
_DEFAULT: Any = object()


class Client:
    """A synchronous client of one wfd server. Thread-safe: make one and share it.

    ``target`` is a gRPC target such as ``"127.0.0.1:7233"`` or
    ``"dns:///wfd.internal:7233"``. Making the client does not connect: the
    first call does, and a lost connection is made again on the next call.

    Unary calls time out after ``timeout`` seconds (None: never) unless a
    call passes its own ``timeout=``; the timeout covers the retries. A call
    that fails with UNAVAILABLE is tried again according to ``retry``; no
    other code is retried. ``credentials`` (e.g. ``grpc.ssl_channel_credentials()``,
    or :func:`wfd_client.tls_credentials` from PEM files) make the channel
    secure; the default is plaintext, which wfd serves by default.
    ``token`` is sent as ``authorization: Bearer <token>`` with every call;
    without ``credentials`` only to a loopback target (ValueError
    otherwise). ``namespace`` puts every call in that namespace (None: the
    server's "default"): the handlers, workflows, tasks, published events
    and schedules the client sees are its own. ``metadata`` is sent with
    every call; ``options`` are extra grpc channel arguments, applied after
    the client's own.
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
            self._channel = grpc.insecure_channel(target, options=opts)
        else:
            self._channel = grpc.secure_channel(target, credentials, options=opts)
        self._stub = service_pb2_grpc.WorkflowServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._closed = threading.Event()

    # --- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """Closes the channel; calls and streams in progress fail with Cancelled."""
        self._closed.set()
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.target!r})"

    @property
    def stub(self) -> service_pb2_grpc.WorkflowServiceStub:
        """The generated stub on the client's channel, for calls this class
        does not wrap (without the client's timeout and retries)."""
        return self._stub

    @property
    def channel(self) -> grpc.Channel:
        return self._channel

    # --- calls ---------------------------------------------------------------

    def workflows(self, *, versions: bool = False, timeout: float | None = _DEFAULT) -> list[c.Workflow]:
        """Returns the workflows the server runs; with ``versions``, each with
        every version the server has (``Workflow.versions``, without handler
        counts: :meth:`workflow` has those)."""
        req = service_pb2.ListWorkflowsRequest(versions=versions)
        res = self._unary(self._stub.ListWorkflows, req, timeout)
        return list(res.workflows)

    def workflow(self, name: str, *, timeout: float | None = _DEFAULT) -> c.Workflow:
        """Returns one workflow with every version the server has
        (``.versions``, oldest first; ``.version`` is the current one): for
        each, whether it is current, the workers serving it, how many of its
        handlers are running, released and finished, and its definition.
        NotFound if the server has no workflow of that name."""
        res = self._unary(self._stub.ListWorkflows, service_pb2.ListWorkflowsRequest(name=name), timeout)
        return c.only_workflow(res, name)

    def upgrade_handlers(
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
        """Moves running handlers of ``workflow`` from version ``from_version``
        to ``to_version`` (None: the current version), one page of them
        (``page_size``, default the server's 100), and returns the
        UpgradeHandlersResponse: ``handlers`` (a HandlerUpgrade each:
        ``handler_id``, ``outcome``, ``reason``), ``to_version`` and
        ``next_page_token`` ("" after the last page).

        Each handler moves only if the server can show from its state that
        the target version carries it on (UPGRADE_OUTCOME_MOVED); otherwise
        it stays as it is, UPGRADE_OUTCOME_REFUSED with the reason, or
        UPGRADE_OUTCOME_BUSY while a step of it runs (retry once idle).
        ``dry_run`` reports the same (UPGRADE_OUTCOME_CAN_MOVE for those that
        would move) and moves none. ``handler_ids`` limits it to those
        handlers. NotFound for an unknown workflow or version.
        """
        req = c.upgrade_request(
            workflow, from_version, to_version=to_version, handler_ids=handler_ids, dry_run=dry_run,
            page_size=page_size, page_token=page_token,
        )
        res: service_pb2.UpgradeHandlersResponse = self._unary(self._stub.UpgradeHandlers, req, timeout)
        return res

    def upgrade_all_handlers(
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
        """:meth:`upgrade_handlers` page after page until the last, and what
        happened (or, with ``dry_run``, would happen) to every handler. Each
        page is one call (with its own timeout); a failed call raises, the
        pages before it having moved their handlers."""
        req = c.upgrade_request(
            workflow, from_version, to_version=to_version, handler_ids=handler_ids, dry_run=dry_run,
            page_size=page_size, page_token=None,
        )
        out: list[c.HandlerUpgrade] = []
        while True:
            res: service_pb2.UpgradeHandlersResponse = self._unary(self._stub.UpgradeHandlers, req, timeout)
            out.extend(res.handlers)
            # A page goes on after the last handler of the one before, by
            # creation time, so handlers leaving the version skip none.
            if not res.next_page_token:
                return out
            req.page_token = res.next_page_token

    def set_current_version(self, workflow: str, version: str, *, timeout: float | None = _DEFAULT) -> c.Workflow:
        """Makes ``version`` the one :meth:`run` starts for ``workflow`` (a
        promotion, or a rollback) and returns the workflow as it is then."""
        req = service_pb2.SetCurrentVersionRequest(workflow=workflow, version=version)
        res: service_pb2.SetCurrentVersionResponse = self._unary(self._stub.SetCurrentVersion, req, timeout)
        return res.workflow

    def delete_workflow_version(self, workflow: str, version: str, *, timeout: float | None = _DEFAULT) -> None:
        """Deletes a version of a worker-defined workflow that is not current
        and that no unfinished handler runs (FailedPrecondition, with their
        count, otherwise)."""
        req = service_pb2.DeleteWorkflowVersionRequest(workflow=workflow, version=version)
        self._unary(self._stub.DeleteWorkflowVersion, req, timeout)

    def run(
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
        """Starts a handler of ``workflow`` with ``input`` as its start event's
        data and returns it as the server first recorded it; with ``wait``
        (seconds or a timedelta, at most an hour), as it is once it finished
        or the wait ended (the call's timeout grows by as much).

        Without ``handler_id`` the client makes up a UUIDv7 id, so that a
        retry after a lost answer returns the handler rather than starting
        another. Running again with the same id and workflow returns the
        existing handler; with another workflow it raises AlreadyExists.

        ``version`` starts that version of the workflow (one of
        :meth:`workflow`'s ``versions``) rather than the current one.
        ``events``, ``(type, data)`` pairs, are delivered to the new handler
        after its start event, in order, in the commit that creates it:
        nobody ever sees the handler without them (at most 64). Each must be
        of a type the workflow accepts from outside and match its schema
        (InvalidArgument naming it otherwise, and nothing is created); a
        repeated run with the same id delivers them no second time.

        ``attributes`` are the handler's search attributes (a dict by name,
        each one the workflow declares, of its type: datetimes are sent as
        RFC 3339 strings, None values are ignored); an undeclared name or a
        value of the wrong type is InvalidArgument naming it, and nothing is
        created. :func:`attributes_of` reads them back from a handler.
        """
        req = c.run_request(workflow, input, handler_id, wait, version, events, attributes)
        res: service_pb2.RunWorkflowResponse = self._unary(self._stub.RunWorkflow, req, self._waiting(timeout, wait))
        return res.handler

    def get(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Returns the handler with that id (NotFound if there is none)."""
        req = service_pb2.GetHandlerRequest(handler_id=id)
        res: service_pb2.GetHandlerResponse = self._unary(self._stub.GetHandler, req, timeout)
        return res.handler

    def get_at(self, id: str, seq: int, *, timeout: float | None = _DEFAULT) -> handler_pb2.HandlerAt:
        """The handler as its stream shows it at record ``seq`` (folded from
        its records, not re-executed): status, what it waited for then, its
        steps' runs, the events written so far. OutOfRange past the
        stream's end."""
        req = service_pb2.GetHandlerRequest(handler_id=id, at_seq=seq)
        res: service_pb2.GetHandlerResponse = self._unary(self._stub.GetHandler, req, timeout)
        return res.at

    def list(
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
        """Returns one page of handlers, newest first, and the token of the
        next page ("" after the last).

        Filters: ``workflow``; ``workflow_version`` (with ``workflow``: only
        handlers of that version); ``statuses`` (names such as "running" or
        HandlerStatus values); ``idle_only``; ``idle_for`` (seconds or a
        timedelta; implies idle_only); ``residency`` ("active", "released",
        or a Residency value). ``page_size`` defaults to the server's (100).

        ``where`` is a query on search attributes and the built-in fields
        (``workflow``, ``status``, ``created_at``, ``updated_at``), with an
        optional order: ``'customer = "acme" and amount > 100 order by
        amount desc'``. Conditions on attributes need ``workflow``. A
        malformed query, or one no index answers (only ``!=``, ``not``,
        ``exists`` or a top-level ``or``), is InvalidArgument.
        """
        req = c.list_request(
            workflow=workflow, statuses=statuses, idle_only=idle_only, idle_for=idle_for,
            residency=residency, page_size=page_size, page_token=page_token, workflow_version=workflow_version,
            where=where,
        )
        res = self._unary(self._stub.ListHandlers, req, timeout)
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
    ) -> Iterator[c.Handler]:
        """Yields every handler the filters select, page after page, from
        ``page_token`` on. Each page is one call (with its own timeout)."""
        req = c.list_request(
            workflow=workflow, statuses=statuses, idle_only=idle_only, idle_for=idle_for,
            residency=residency, page_size=page_size, page_token=page_token, workflow_version=workflow_version,
            where=where,
        )
        return self._list_all(req, timeout)

    def _list_all(self, req: service_pb2.ListHandlersRequest, timeout: float | None) -> Iterator[c.Handler]:
        while True:
            res = self._unary(self._stub.ListHandlers, req, timeout)
            yield from res.handlers
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    def send(
        self,
        id: str,
        type: str,
        data: c.StructLike = None,
        *,
        idempotency_key: str | None = None,
        wait: c.DurationLike | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Handler:
        """Delivers an event of ``type`` with ``data`` to the handler and
        returns the handler once the event is durable.

        The type must be one the workflow accepts from outside or one a
        waiter of the handler waits for (InvalidArgument otherwise); a
        finished handler is FailedPrecondition. A released handler is loaded
        again. Every call carries an idempotency key (a UUIDv7 unless
        ``idempotency_key`` is given), so retries deliver the event once.
        With ``wait`` it returns the handler once it finished, or as it is
        when the wait ended, as :meth:`wait` does.
        """
        req = c.send_request(id, type, data, idempotency_key, wait)
        res: service_pb2.SendEventResponse = self._unary(self._stub.SendEvent, req, self._waiting(timeout, wait))
        return res.handler

    def send_or_start(
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
        """Delivers an event as :meth:`send` does to handler ``id``, and if
        there is no handler with that id yet, starts one of ``workflow``
        (``version``, default the current one) with ``input`` and the event
        in the commit that creates it (Temporal's signal-with-start): there
        is no moment at which the handler exists without its event.

        The result's ``started`` says whether this call created it. A handler
        that exists but runs another workflow is AlreadyExists; one that has
        finished refuses the event (FailedPrecondition). Calls racing for one
        id create one handler and each delivers its event once; the
        idempotency key every call carries makes a retry deliver nothing
        again, whether or not its first attempt started the handler.
        ``attributes`` are the search attributes of the handler it starts,
        as :meth:`run`'s.
        """
        req = c.send_or_start_request(id, workflow, input, version, type, data, idempotency_key, wait, attributes)
        res: service_pb2.SendEventResponse = self._unary(self._stub.SendEvent, req, self._waiting(timeout, wait))
        return c.SendOrStartResult(handler=res.handler, started=res.started)

    def cancel(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Ends a running handler as cancelled and returns it."""
        req = service_pb2.CancelHandlerRequest(handler_id=id)
        res: service_pb2.CancelHandlerResponse = self._unary(self._stub.CancelHandler, req, timeout)
        return res.handler

    def release(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Writes an idle handler to the server's store and drops it from
        memory; the next event wakes it. A busy or finished handler is
        FailedPrecondition."""
        req = service_pb2.ReleaseHandlerRequest(handler_id=id)
        res: service_pb2.ReleaseHandlerResponse = self._unary(self._stub.ReleaseHandler, req, timeout)
        return res.handler

    def delete(self, id: str, *, timeout: float | None = _DEFAULT) -> None:
        """Removes a finished handler (completed, failed or cancelled) with
        its stream, checkpoint and tasks; events published for it stay in
        the log. A running handler is FailedPrecondition (cancel it first),
        as is a finished child whose parent still runs; an unknown one
        NotFound, which a retried call also gets once the first attempt
        deleted it. The id may be used again afterwards."""
        req = service_pb2.DeleteHandlerRequest(handler_id=id)
        self._unary(self._stub.DeleteHandler, req, timeout)

    def tasks(
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
        """Returns one page of human tasks, newest first, and the token of
        the next page ("" after the last): the inbox, across handlers in
        memory and released.

        Filters: ``statuses`` (names such as "pending", "completed",
        "expired", "cancelled", or TaskStatus values); ``assignee`` (a
        person's inbox); ``mine`` (the caller's own tasks: those assigned
        to its authenticated subject or to "group:<role>" for one of its
        roles; FailedPrecondition without authentication, InvalidArgument
        together with ``assignee``); ``workflow``; ``handler_id``; ``claim``
        ("claimed": someone holds it, "unclaimed": nobody does); ``overdue``
        (pending past their due time; such pages may hold fewer tasks).
        ``page_size`` defaults to the server's (100).
        """
        req = c.list_tasks_request(
            statuses=statuses, assignee=assignee, mine=mine, workflow=workflow, handler_id=handler_id, claim=claim, overdue=overdue,
            page_size=page_size, page_token=page_token,
        )
        res = self._unary(self._stub.ListTasks, req, timeout)
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
    ) -> Iterator[c.Task]:
        """Yields every task the filters select, page after page, from
        ``page_token`` on. Each page is one call (with its own timeout)."""
        req = c.list_tasks_request(
            statuses=statuses, assignee=assignee, mine=mine, workflow=workflow, handler_id=handler_id,
            page_size=page_size, page_token=page_token,
        )
        return self._list_all_tasks(req, timeout)

    def _list_all_tasks(self, req: service_pb2.ListTasksRequest, timeout: float | None) -> Iterator[c.Task]:
        while True:
            res = self._unary(self._stub.ListTasks, req, timeout)
            yield from res.tasks
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    def task(self, id: str, *, timeout: float | None = _DEFAULT) -> c.Task:
        """Returns the human task with that id (NotFound if there is none)."""
        req = service_pb2.GetTaskRequest(task_id=id)
        res: service_pb2.GetTaskResponse = self._unary(self._stub.GetTask, req, timeout)
        return res.task

    def claim_task(self, id: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Takes a pending task to work on it: only its holder may answer it
        (or someone who may answer others' tasks). Claiming a task one holds
        changes nothing; one someone else holds is FailedPrecondition, naming
        them. ``by`` (who acts) is required when the server does not
        authenticate; with authentication the server records the caller.
        The same goes for unclaim_task, reassign_task and comment_task."""
        req = service_pb2.ClaimTaskRequest(task_id=id, by=by or "")
        res: service_pb2.ClaimTaskResponse = self._unary(self._stub.ClaimTask, req, timeout)
        return res.task

    def unclaim_task(self, id: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Lets go of a claimed task; an unclaimed one changes nothing."""
        req = service_pb2.UnclaimTaskRequest(task_id=id, by=by or "")
        res: service_pb2.UnclaimTaskResponse = self._unary(self._stub.UnclaimTask, req, timeout)
        return res.task

    def reassign_task(self, id: str, assignee: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Gives a pending task to ``assignee`` (a person, or ``group:<role>``)
        and ends its claim."""
        req = service_pb2.ReassignTaskRequest(task_id=id, assignee=assignee, by=by or "")
        res: service_pb2.ReassignTaskResponse = self._unary(self._stub.ReassignTask, req, timeout)
        return res.task

    def comment_task(self, id: str, text: str, *, by: str | None = None, timeout: float | None = _DEFAULT) -> c.Task:
        """Adds a comment (1 to 4096 bytes; at most 100 per task) to a pending task."""
        req = service_pb2.CommentTaskRequest(task_id=id, text=text, by=by or "", comment_id=str(uuid7()))
        res: service_pb2.CommentTaskResponse = self._unary(self._stub.CommentTask, req, timeout)
        return res.task

    def cancel_task(
        self,
        id: str,
        reason: str,
        *,
        cancelled_by: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Task:
        """Cancels a pending task for ``reason`` and returns the cancelled
        task: the step that waited for it gets its answer with
        ``cancelled`` and ``reason`` set. A task that is no longer pending is
        FailedPrecondition; a retry of a cancellation that got through (same
        reason, same ``cancelled_by``) returns the task instead."""
        req = service_pb2.CancelTaskRequest(task_id=id, reason=reason, cancelled_by=cancelled_by or "")
        try:
            res: service_pb2.CancelTaskResponse = self._unary(self._stub.CancelTask, req, timeout)
        except FailedPrecondition:
            try:
                t = self.task(id, timeout=timeout)
            except WfdError:
                t = None
            if t is not None and c.cancelled_as_asked(t, req):
                return t
            raise
        return res.task

    def complete_task(
        self,
        id: str,
        answer: c.StructLike,
        *,
        completed_by: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.Task:
        """Answers a pending task and returns the completed task; the answer
        wakes the task's handler, released or not.

        ``answer`` (a dict or a Struct) must satisfy the task's
        ``answer_schema``: one that does not is InvalidArgument naming the
        failing fields, and changes nothing. A task that is no longer
        pending (completed, expired, cancelled) is FailedPrecondition.
        When a call retried after a lost connection finds the task
        completed with this very answer and ``completed_by`` (the first
        attempt got through), it returns the task instead.
        """
        req = c.complete_task_request(id, answer, completed_by)
        attempts = 0

        def attempt(r: Any, **kw: Any) -> Any:
            nonlocal attempts
            attempts += 1
            return self._stub.CompleteTask(r, **kw)

        try:
            res: service_pb2.CompleteTaskResponse = self._unary(attempt, req, timeout)
        except FailedPrecondition:
            if attempts < 2:
                raise
            # Did an earlier attempt, whose reply was lost, complete it?
            try:
                t = self.task(id, timeout=timeout)
            except WfdError:
                t = None
            if t is not None and c.completed_as_asked(t, req):
                return t
            raise
        return res.task

    def publish(
        self,
        key: str,
        data: c.StructLike = None,
        *,
        handler_id: str | None = None,
        event_id: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> c.PublishResult:
        """Appends an event with ``data`` under ``key`` to the server's
        immutable event log, for every handler (or only ``handler_id``), and
        wakes the handlers waiting for that key, in memory or released.

        Returns the PublishEventResponse: ``event_id``, ``seq`` (the event's
        position in the log) and ``woken`` (how many waiting handlers it
        woke). Every call carries an event id (a UUIDv7 unless ``event_id``
        is given), so a retried publication is logged once.
        """
        req = c.publish_request(key, data, handler_id, event_id)
        res: service_pb2.PublishEventResponse = self._unary(self._stub.PublishEvent, req, timeout)
        return res

    def published_events(
        self,
        *,
        key: str | None = None,
        since: datetime.datetime | None = None,
        handler_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> tuple[list[c.PublishedEvent], str]:
        """Returns one page of the published-event log, latest first, and
        the token of the next page ("" after the last).

        Filters: ``key`` (None: every key); ``since`` (an aware datetime:
        events published at or after it); ``handler_id`` (the events
        published for that handler alone). ``page_size`` defaults to the
        server's (100). ``published_by`` of an event is its publisher's
        subject when the server authenticates callers.
        """
        req = c.published_list_request(
            key=key, since=since, handler_id=handler_id, page_size=page_size, page_token=page_token,
        )
        res = self._unary(self._stub.ListPublishedEvents, req, timeout)
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
    ) -> Iterator[c.PublishedEvent]:
        """Yields every event the filters select, latest first, page after
        page, from ``page_token`` on. Each page is one call (with its own
        timeout)."""
        req = c.published_list_request(
            key=key, since=since, handler_id=handler_id, page_size=page_size, page_token=page_token,
        )
        return self._list_all_published(req, timeout)

    def _list_all_published(
        self, req: service_pb2.ListPublishedEventsRequest, timeout: float | None
    ) -> Iterator[c.PublishedEvent]:
        while True:
            res = self._unary(self._stub.ListPublishedEvents, req, timeout)
            yield from res.events
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    # --- schedules -----------------------------------------------------------

    def create_schedule(
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
        """Stores a schedule that starts ``workflow`` (``version``, default
        the current one when the tick fires) with ``input`` on a ``cron``
        expression (read in ``time_zone``, default UTC) or every
        ``interval`` (seconds or a timedelta, whole seconds, shifted by
        ``phase``), between ``start_at`` and ``end_at`` (aware datetimes),
        and returns it with its next ticks (``info.next_ticks``). Each tick
        starts one handler, ``sched:<id>:<tick, UTC, YYYYMMDDThhmmssZ>``.

        ``overlap`` is what a tick does while earlier runs still run:
        "skip" (default), "buffer_one", "allow" or "cancel_previous". After
        downtime, ticks older than ``catchup_window`` (default 1 minute)
        are recorded as missed. A ``paused`` schedule starts nothing;
        ``note`` is free text for people.

        A malformed spec is InvalidArgument naming the field ("cron field 2
        (hour)"); an unknown workflow NotFound; an id in use AlreadyExists
        (which a retry after a lost answer also gets: the first attempt
        created it).
        """
        schedule = sch.schedule_message(
            schedule_id, workflow=workflow, cron=cron, time_zone=time_zone, interval=interval, phase=phase,
            start_at=start_at, end_at=end_at, version=version, input=input, overlap=overlap,
            catchup_window=catchup_window, paused=paused, note=note,
        )
        req = sch.create_request(schedule)
        res: schedule_pb2.CreateScheduleResponse = self._unary(self._stub.CreateSchedule, req, timeout)
        return res.schedule

    def get_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> sch.Schedule:
        """Returns the schedule (NotFound if there is none) with what it did
        and will do (``info``: next ticks, recent outcomes, counts, the
        handlers it started that may still run)."""
        req = schedule_pb2.GetScheduleRequest(schedule_id=schedule_id)
        res: schedule_pb2.GetScheduleResponse = self._unary(self._stub.GetSchedule, req, timeout)
        return res.schedule

    def list_schedules(
        self, page_size: int | None = None, page_token: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> tuple[list[sch.Schedule], str]:
        """Returns one page of schedules, by id, and the token of the next
        page ("" after the last). ``page_size`` defaults to the server's
        (100, at most 1000)."""
        req = sch.list_request(page_size, page_token)
        res: schedule_pb2.ListSchedulesResponse = self._unary(self._stub.ListSchedules, req, timeout)
        return list(res.schedules), res.next_page_token

    def list_all_schedules(
        self, page_size: int | None = None, *, timeout: float | None = _DEFAULT
    ) -> Iterator[sch.Schedule]:
        """Yields every schedule, by id, page after page. Each page is one
        call (with its own timeout)."""
        return self._list_all_schedules(sch.list_request(page_size, None), timeout)

    def _list_all_schedules(
        self, req: schedule_pb2.ListSchedulesRequest, timeout: float | None
    ) -> Iterator[sch.Schedule]:
        while True:
            res = self._unary(self._stub.ListSchedules, req, timeout)
            yield from res.schedules
            if not res.next_page_token:
                return
            req.page_token = res.next_page_token

    def update_schedule(
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
        """Replaces the schedule's spec, action, policy, paused flag and note
        with these (the arguments of :meth:`create_schedule`; a changed spec
        counts its ticks from now on) and returns it. To change a few
        fields, start from :func:`wfd_client.schedule_fields` of the
        schedule read earlier. With ``expect_revision`` (that schedule's
        ``revision``; its ticks move it too), a schedule changed meanwhile
        is refused with FailedPrecondition."""
        schedule = sch.schedule_message(
            schedule_id, workflow=workflow, cron=cron, time_zone=time_zone, interval=interval, phase=phase,
            start_at=start_at, end_at=end_at, version=version, input=input, overlap=overlap,
            catchup_window=catchup_window, paused=paused, note=note,
        )
        req = sch.update_request(schedule, expect_revision)
        res: schedule_pb2.UpdateScheduleResponse = self._unary(self._stub.UpdateSchedule, req, timeout)
        return res.schedule

    def pause_schedule(
        self, schedule_id: str, note: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> sch.Schedule:
        """Pauses the schedule (with ``note``, if given, as its note) and
        returns it: it starts nothing until resumed. It reads the schedule
        and writes it back at the revision read, and reads it again if a
        tick changed it meanwhile."""
        return self._set_paused(schedule_id, True, note, timeout)

    def resume_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> sch.Schedule:
        """Resumes a paused schedule, as :meth:`pause_schedule` pauses it;
        the ticks of the pause are not caught up."""
        return self._set_paused(schedule_id, False, None, timeout)

    def _set_paused(self, schedule_id: str, paused: bool, note: str | None, timeout: float | None) -> sch.Schedule:
        lap = 1
        while True:
            req = sch.paused_request(self.get_schedule(schedule_id, timeout=timeout), paused, note)
            try:
                res: schedule_pb2.UpdateScheduleResponse = self._unary(self._stub.UpdateSchedule, req, timeout)
                return res.schedule
            except FailedPrecondition:
                if lap >= sch.MAX_PAUSE_LAPS:
                    raise
                lap += 1

    def delete_schedule(self, schedule_id: str, *, timeout: float | None = _DEFAULT) -> None:
        """Deletes the schedule; the handlers it started go on. NotFound for
        an unknown one, which a retry also gets once the first attempt
        deleted it."""
        self._unary(self._stub.DeleteSchedule, schedule_pb2.DeleteScheduleRequest(schedule_id=schedule_id), timeout)

    def trigger_schedule(
        self, schedule_id: str, at: datetime.datetime | None = None, *, timeout: float | None = _DEFAULT
    ) -> sch.TriggerResult:
        """Starts a run of the schedule now (or at ``at``, an aware
        datetime) under its overlap policy, paused or not. The result's
        ``started`` holds the run's handler,
        ``sched:<id>:trigger:<Unix nanoseconds>`` (none if the policy
        skipped it). The instant is sent with the call, so a retry, or a
        trigger repeated with the same ``at``, starts one run."""
        req = sch.trigger_request(schedule_id, at)
        res: schedule_pb2.TriggerScheduleResponse = self._unary(self._stub.TriggerSchedule, req, timeout)
        return sch.trigger_result(res)

    def backfill_schedule(
        self, schedule_id: str, start: datetime.datetime, end: datetime.datetime, *, timeout: float | None = _DEFAULT
    ) -> sch.TriggerResult:
        """Starts the schedule's ticks from ``start`` to ``end`` (aware
        datetimes, both included; at most 1,000 ticks, ``end`` not in the
        future) under its overlap policy, each with the handler id of its
        tick: a tick that ran already is not run again."""
        req = sch.backfill_request(schedule_id, start, end)
        res: schedule_pb2.TriggerScheduleResponse = self._unary(self._stub.TriggerSchedule, req, timeout)
        return sch.trigger_result(res)

    def stats(self, *, timeout: float | None = _DEFAULT) -> c.Stats:
        """Returns the server's counters (handlers in memory, idle, released...)."""
        res: service_pb2.GetStatsResponse = self._unary(self._stub.GetStats, service_pb2.GetStatsRequest(), timeout)
        return res

    def wait(self, id: str, wait: c.DurationLike | None = None, *, timeout: float | None = _DEFAULT) -> c.Handler:
        """Waits until the handler finishes, or until ``wait`` (seconds or a
        timedelta; default 60 s, at most an hour) has passed, and returns it
        then: its status says which (still running when the time ran out or
        the server began to shut down). Waiting does not load a released
        handler: it answers when whatever wakes the handler brings it to its
        end. NotFound for an unknown handler. The call's ``timeout`` grows
        by the wait."""
        req = c.wait_request(id, wait)
        res: service_pb2.WaitHandlerResponse = self._unary(
            self._stub.WaitHandler, req, self._waiting(timeout, c.DEFAULT_WAIT if wait is None else wait)
        )
        return res.handler

    def wait_idle(
        self, id: str, after_seq: int = 0, wait: c.DurationLike | None = None, *, timeout: float | None = _DEFAULT
    ) -> c.Handler:
        """Waits as :meth:`wait` does, and also returns once the handler is
        idle (waiting only for outside input: an event, a person's answer, a
        timer) at or after the record ``after_seq``: ask a question, then
        wait for the next one. Pass the ``last_seq`` of the handler a send or
        run returned, so an idleness from before that event does not count;
        0 returns at once if the handler is idle now. Its ``idle`` says what
        it waits for; its status whether it finished instead."""
        req = c.wait_request(id, wait)
        req.until_idle = True
        req.after_seq = after_seq
        res: service_pb2.WaitHandlerResponse = self._unary(
            self._stub.WaitHandler, req, self._waiting(timeout, c.DEFAULT_WAIT if wait is None else wait)
        )
        return res.handler

    def identity(self, *, timeout: float | None = _DEFAULT) -> c.Identity:
        """Who the caller is to the server: with authentication on
        (``authentication``), its ``subject`` and ``roles``; without it every
        caller may do everything. Refused credentials raise Unauthenticated."""
        res: service_pb2.GetIdentityResponse = self._unary(
            self._stub.GetIdentity, service_pb2.GetIdentityRequest(), timeout
        )
        return res

    def namespaces(self, *, timeout: float | None = _DEFAULT) -> list[c.Namespace]:
        """The namespaces the server serves where the caller holds a role (all
        of them without authentication), with their ``retention`` and the
        caller's ``roles`` there."""
        res: service_pb2.ListNamespacesResponse = self._unary(
            self._stub.ListNamespaces, service_pb2.ListNamespacesRequest(), timeout
        )
        return list(res.namespaces)

    def replicas(self, *, timeout: float | None = _DEFAULT) -> list[c.Replica]:
        """The live replicas sharing the server's database (``wfd serve
        --replica-id``), by id; none for a single-process server. A call for a
        handler another replica owns raises Unavailable naming that replica
        and its address (calls are not forwarded yet)."""
        res: service_pb2.ListReplicasResponse = self._unary(
            self._stub.ListReplicas, service_pb2.ListReplicasRequest(), timeout
        )
        return list(res.replicas)

    def stream(
        self, id: str, after: int = 0, *, from_head: bool = False, include_internal: bool = False
    ) -> RecordStream:
        """Returns an iterator of the handler's records with a sequence number
        greater than ``after``: first those already recorded, then new ones
        as they happen. It ends after the terminal record
        (``is_terminal(rec)``). Heartbeats are not yielded.

        A dropped connection (UNAVAILABLE, or the server or a proxy ending
        the stream before the terminal record) does not end it: the stream
        reconnects with the client's backoff and asks for the records after
        the last one it yielded, so each record arrives once, in order. It
        gives up, raising the last error, after ``retry.max_attempts``
        attempts in a row that made no progress (no new record, and no
        heartbeat but the one a server may send first). Any other error (NotFound
        for an unknown handler, InvalidArgument for an ``after`` past the
        handler's last record) is raised at once. A stream of a finished
        handler from its terminal record on (``after=h.last_seq``) is empty. Close it (or leave a
        ``with`` block, or drop it) to end the call early.

        By default it yields the events steps write and the terminal record;
        ``include_internal`` adds the internal records (step state, idle
        changes, releases and restores, runs waiting for a worker).
        ``from_head`` yields only records made after the stream subscribed
        (not with ``after``). Both hold across reconnects: a from-head
        stream resumes after the head it started at.
        """
        c.check_stream_options(after, from_head)
        return RecordStream(self, id, after, from_head=from_head, include_internal=include_internal)

    # --- plumbing ------------------------------------------------------------

    def _waiting(self, timeout: float | None, wait: c.DurationLike | None) -> float | None:
        """The timeout of a call that waits up to ``wait`` on the server."""
        return c.wait_timeout(self.timeout if timeout is _DEFAULT else timeout, wait)

    def _unary(self, method: Callable[..., _Res], request: Any, timeout: float | None) -> _Res:
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
                return method(request, timeout=remaining, metadata=self._metadata)
            except grpc.RpcError as e:
                err = from_rpc_error(e)
                cause: BaseException = e
            except ValueError as e:  # grpcio: "Cannot invoke RPC on closed channel!"
                if not self._closed.is_set():
                    raise
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from e
            if not isinstance(err, Unavailable) or attempt >= self.retry.max_attempts:
                raise err from cause
            pause = self.retry.pause(attempt, err.retry_delay)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise err from cause
            if self._closed.wait(pause):
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from cause


class RecordStream(Iterator[c.Record]):
    """The records of one handler; see :meth:`Client.stream`.

    ``last_seq`` is the sequence number of the last record yielded (the
    ``after`` to resume from in a later stream).
    """

    def __init__(
        self, client: Client, handler_id: str, after: int, *, from_head: bool = False, include_internal: bool = False
    ) -> None:
        self._client = client
        self.handler_id = handler_id
        self.last_seq = after
        # A from-head stream starts at the head once; a reconnect continues
        # after what it saw (its first heartbeat says where the head was).
        self._from_head = from_head
        self._include_internal = include_internal
        self._stopped = False
        self._call: Any = None
        self._gen = self._run()

    def __iter__(self) -> RecordStream:
        return self

    def __next__(self) -> c.Record:
        return next(self._gen)

    def close(self) -> None:
        """Ends the stream and its call. Safe to call from another thread."""
        self._stopped = True
        call = self._call
        if call is not None:
            call.cancel()
        try:
            self._gen.close()
        except ValueError:
            pass  # running in another thread: the cancelled call ends it there

    def __enter__(self) -> RecordStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _finished_earlier(self) -> bool:
        """Whether the handler finished with a record at or before last_seq:
        a stream asked for the records after the terminal one ends cleanly
        with nothing, and is over rather than cut."""
        try:
            h = self._client.get(self.handler_id)
        except WfdError:
            return False
        return c.is_finished(h) and h.last_seq <= self.last_seq

    def _run(self) -> Generator[c.Record, None, None]:
        client = self._client
        failures = 0
        if self._from_head:
            # The head is asked for once, before the stream opens: a stream
            # cut before its first heartbeat (which says where the head was)
            # would otherwise ask for the head again when it reconnects, and
            # skip what was recorded meanwhile.
            self.last_seq, self._from_head = (client.get(self.handler_id)).last_seq, False
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
                for msg in call:
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
            finally:
                call.cancel()
                self._call = None
            if ended and self._finished_earlier():
                return
            # Count the attempts in a row without progress; one that
            # made progress before it broke starts a new count.
            failures = 0 if progressed else failures + 1
            if client._closed.is_set():
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from err
            if err.code not in _RESUMABLE or failures >= client.retry.max_attempts:
                raise err
            if client._closed.wait(client.retry.backoff(max(1, failures))):
                raise Cancelled(grpc.StatusCode.CANCELLED, "client: closed") from err


# A stream the peer (or a proxy) ended is resumed; our own cancellation is
# told apart by the client's closed flag (a closed RecordStream never gets here).
_RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})
