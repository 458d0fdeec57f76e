"""The worker's engine, on asyncio: the Connect session and its reconnects,
dispatched runs, StepCall retries and the runs' ends (FinishRun, or
FinishRuns for those that end together: _worker_finish.py). Worker and
AsyncWorker (worker.py) are thin fronts over it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio

from wfd.v1 import worker_pb2, worker_pb2_grpc

from . import _common as c
from ._worker_context import AsyncStepContext, CallTooLarge, Run, RunCancelled, StepContext, Waiting, event_of, refusal
from ._worker_defs import Step, Workflow
from ._worker_finish import Finisher
from .errors import from_rpc_error

log = logging.getLogger("wfd_client.worker")

# A refused registration: reconnecting will not change the answer.
_PERMANENT = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,  # a version the server has, with another definition
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
})

_OK = worker_pb2.OUTCOME_OK
_WAITING = worker_pb2.OUTCOME_WAITING
_ERROR = worker_pb2.OUTCOME_ERROR

MAX_BACKOFF = 5.0


class Served:
    """The code of one registered version: its steps and what each emits."""

    def __init__(self, wf: Workflow) -> None:
        self.steps: dict[str, Step] = dict(wf.steps)
        self.emits: dict[str, frozenset[str]] = {s.name: frozenset(s.emits) for s in wf.steps.values()}


class Core:
    """Serves workflows to one server until stopped."""

    def __init__(
        self,
        target: str,
        workflows: Sequence[Workflow],
        *,
        name: str,
        max_runs: int,
        retry: c.RetryPolicy | None,
        call_timeout: float | None,
        credentials: grpc.ChannelCredentials | None,
        metadata: Sequence[tuple[str, str]] | None,
        options: Sequence[tuple[str, Any]],
        backoff: float,
    ) -> None:
        if max_runs < 1:
            max_runs = 1
        self.target, self.max_runs, self.backoff = target, max_runs, backoff
        self.retry = retry or c.RetryPolicy()
        self.call_timeout = call_timeout
        self.credentials, self.metadata = credentials, tuple(metadata or ())
        self.options = c.channel_options(self.retry, options)
        # code is each registered version's code, in the order of
        # req.workflows; versions finds it by (workflow, version) as the
        # server named the versions when it connected (Connected.versions).
        self.code: list[Served] = []
        self.versions: dict[tuple[str, str], int] = {}
        self.req = worker_pb2.ConnectRequest(name=name, max_runs=max_runs, dispatch_batches=True)
        seen: set[tuple[str, str]] = set()
        given: set[int] = set()
        for wf in workflows:
            if id(wf) in given:
                raise ValueError(f"worker: workflow {wf!r} is given twice")
            given.add(id(wf))
            if wf.version:
                if (wf.name, wf.version) in seen:
                    raise ValueError(f"worker: version {wf.version!r} of workflow {wf.name!r} is given twice")
                seen.add((wf.name, wf.version))
            if not wf.steps:
                raise ValueError(f"worker: workflow {wf.name!r} has no steps")
            self.req.workflows.append(wf.definition())
            self.code.append(Served(wf))
        self.worker_id = ""
        self.stop_requested = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.stub: worker_pb2_grpc.WorkerServiceStub | None = None
        self.runs: dict[str, asyncio.Task[None]] = {}
        self.slots: asyncio.Semaphore | None = None
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.finisher = Finisher(
            lambda fin: self.unary(self.stub.FinishRun, fin),  # type: ignore[union-attr]
            lambda req: self.unary(self.stub.FinishRuns, req),  # type: ignore[union-attr]
        )

    # --- lifecycle ---------------------------------------------------------------

    def stop(self) -> None:
        """Ends run(): callable from any thread or a signal handler."""
        self.stop_requested = True
        loop, ev = self.loop, self.stopping
        if loop is None or ev is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(ev.set)
        except RuntimeError:
            pass  # the loop closed meanwhile

    async def run(self) -> None:
        """Connects and serves dispatched runs until stop(), reconnecting
        after a lost connection (100 ms doubling to 5 s while the server
        stays away). A refused registration raises the server's error
        (InvalidArgument, FailedPrecondition, AlreadyExists, ...)."""
        self.stopping = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        if self.stop_requested:  # stop() came before the loop did
            self.stopping.set()
        self.slots = asyncio.Semaphore(self.max_runs)
        # A cancelled sync run keeps its thread until its next operation:
        # room for as many again so new runs do not queue behind them.
        self.executor = concurrent.futures.ThreadPoolExecutor(2 * self.max_runs, thread_name_prefix=f"wfd-step-{self.req.name}")
        if self.credentials is None:
            channel = grpc.aio.insecure_channel(self.target, options=self.options)
        else:
            channel = grpc.aio.secure_channel(self.target, self.credentials, options=self.options)
        self.stub = worker_pb2_grpc.WorkerServiceStub(channel)  # type: ignore[no-untyped-call]
        stop = asyncio.ensure_future(self.stopping.wait())
        pause = self.backoff
        try:
            while True:
                session = asyncio.ensure_future(self.session())
                await asyncio.wait({session, stop}, return_when=asyncio.FIRST_COMPLETED)
                if stop.done():
                    session.cancel()
                    await asyncio.gather(session, return_exceptions=True)
                    return
                connected, err = session.result()
                if isinstance(err, grpc.aio.AioRpcError) and err.code() in _PERMANENT:
                    raise from_rpc_error(err) from None
                if connected:
                    pause = self.backoff
                log.info("worker: connection lost; reconnecting in %.1fs: %s", pause, _describe(err))
                try:
                    await asyncio.wait_for(asyncio.shield(stop), pause)
                    return
                except TimeoutError:
                    pass
                pause = min(2 * pause, MAX_BACKOFF)
        finally:
            stop.cancel()
            await self.cancel_runs()
            await self.finisher.close()
            await channel.close()
            self.executor.shutdown(wait=False, cancel_futures=True)

    async def cancel_runs(self) -> None:
        runs = list(self.runs.values())
        for t in runs:
            t.cancel()
        if runs:
            await asyncio.gather(*runs, return_exceptions=True)

    async def session(self) -> tuple[bool, BaseException | None]:
        """One Connect stream: serves dispatches until it ends; says whether
        it got as far as connected, and how it ended. Its runs end with it."""
        assert self.stub is not None
        connected = False
        call = self.stub.Connect(self.req, metadata=self.metadata)
        try:
            async for m in call:
                kind = m.WhichOneof("kind")
                if kind == "dispatch":
                    self.start(m.dispatch)
                elif kind == "dispatches":
                    # Runs dispatched together: each starts as if dispatched alone, in order.
                    for d in m.dispatches.dispatches:
                        self.start(d)
                elif kind == "cancel_run_id":
                    t = self.runs.get(m.cancel_run_id)
                    if t is not None:
                        t.cancel()
                elif kind == "connected":
                    connected = True
                    self.connected(m.connected.versions)
                    self.worker_id = m.connected.worker_id
                    log.info("worker: connected as %s (versions %s)", self.worker_id, list(m.connected.versions))
            return connected, None
        except grpc.aio.AioRpcError as e:
            return connected, e
        finally:
            call.cancel()
            # A lost session loses its runs: the server dispatches them again.
            await self.cancel_runs()
            await self.finisher.close()

    def connected(self, versions: Sequence[str]) -> None:
        """Notes the versions the server named, in the order registered."""
        self.versions = {
            (d.name, v): i for i, (d, v) in enumerate(zip(self.req.workflows, versions, strict=False))
        }

    def code_for(self, d: worker_pb2.Dispatch) -> Served | None:
        """The code of the version a dispatch is for (None if this worker
        does not serve it). A server that names no version dispatches the
        workflow's only definition here."""
        i = self.versions.get((d.workflow, d.workflow_version))
        if i is None and not d.workflow_version:
            matches = [j for j, w in enumerate(self.req.workflows) if w.name == d.workflow]
            if len(matches) == 1:
                i = matches[0]
        return None if i is None else self.code[i]

    # --- runs ------------------------------------------------------------------------

    def start(self, d: worker_pb2.Dispatch) -> None:
        t = asyncio.ensure_future(self.execute(d, self.worker_id))
        self.runs[d.run_id] = t
        if d.HasField("deadline"):
            assert self.loop is not None
            delay = d.deadline.ToNanoseconds() / 1e9 - time.time()
            self.loop.call_later(max(delay, 0), t.cancel)
        run_id = d.run_id

        def forget(_: asyncio.Future[None]) -> None:
            self.runs.pop(run_id, None)

        t.add_done_callback(forget)

    async def execute(self, d: worker_pb2.Dispatch, worker_id: str) -> None:
        """Runs the step for d and reports its end with FinishRun, unless
        the run was lost or cancelled meanwhile."""
        assert self.slots is not None and self.loop is not None
        code = self.code_for(d)
        step = None if code is None else code.steps.get(d.step)
        emits: frozenset[str] = frozenset() if code is None else code.emits.get(d.step, frozenset())
        run = Run(d, worker_id, emits, self.step_call, self.loop)
        fin = worker_pb2.FinishRunRequest(run_id=d.run_id, worker_id=worker_id)
        async with self.slots:
            try:
                if step is None:
                    at = f"@{d.workflow_version}" if d.workflow_version else ""
                    raise LookupError(f"worker serves no step {d.step!r} of workflow {d.workflow}{at}")
                ev = event_of(d.input)
                if step.is_async:
                    await step.fn(AsyncStepContext(run), ev)
                else:
                    await self.loop.run_in_executor(self.executor, _call, step.fn, StepContext(run), ev)
                raised: BaseException | None = None
            except (asyncio.CancelledError, RunCancelled) as e:
                run.lost = run.lost or RunCancelled(str(e) or "cancelled")
                log.info("worker: run %s abandoned: %s", d.run_id, run.lost)
                return
            except BaseException as e:  # noqa: BLE001 - the step's error is the run's outcome
                raised = e
        if run.lost is not None:
            log.info("worker: run %s abandoned: %s", d.run_id, run.lost)
            return
        if run.refused is not None:
            # The server took no later call: the run fails with the refusal,
            # whatever the step made of it, without the waits it answered
            # itself since (their positions no longer match the server's).
            fin.outcome, fin.error_message = _ERROR, str(run.refused)
            await self.finish(fin)
            return
        fin.local_waits.extend(run.pending)
        if run.parked or isinstance(raised, Waiting):
            fin.outcome = _WAITING
            sent, written = run.sent, run.written
            if not isinstance(raised, Waiting):
                # The step swallowed the park: what it did after it is not
                # what the run did; it runs again when the wait resolves.
                sent, written = sent[: run.marks[0]], written[: run.marks[1]]
            fin.sent.extend(sent)
            fin.written.extend(written)
        elif run.fault is not None:
            fin.outcome, fin.error_message = _ERROR, str(run.fault)
        elif raised is not None:
            fin.outcome, fin.error_message = _ERROR, str(raised) or type(raised).__name__
            log.info("worker: step %s/%s failed (attempt %d)", d.workflow, d.step, d.attempt, exc_info=raised)
        else:
            fin.outcome = _OK
            fin.sent.extend(run.sent)
            fin.written.extend(run.written)
        await self.finish(fin)

    async def step_call(self, req: worker_pb2.StepCallRequest) -> worker_pb2.StepCallResponse:
        """One StepCall, retried with the same seq while UNAVAILABLE (the
        server answers a repeated seq without executing it again). A call
        too large for the server (RESOURCE_EXHAUSTED) fails the run; any
        other failure loses the run."""
        try:
            resp: worker_pb2.StepCallResponse = await self.unary(self.stub.StepCall, req)  # type: ignore[union-attr]
            return resp
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise CallTooLarge(e.details() or "") from None
            raise RunCancelled(f"step call: {e.code().name}: {e.details()}") from None

    async def finish(self, fin: worker_pb2.FinishRunRequest) -> None:
        """Reports a run's end, alone or with the ends of other runs
        (Finisher). A refusal means the run is no longer this worker's
        (dispatched again, or ended). A FinishRun too large for the server
        (RESOURCE_EXHAUSTED: what the run sent and wrote is over the
        server's limits) is reported again without them, as the run's error:
        the run fails as a step (retried by its policy) instead of staying
        this worker's, unfinished, for ever."""
        try:
            try:
                await self.finisher.send(fin)
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                log.warning("worker: the server refused the end of run %s as too large; failing the run: %s", fin.run_id, e.details())
                small = worker_pb2.FinishRunRequest(
                    run_id=fin.run_id, worker_id=fin.worker_id, outcome=_ERROR,
                    error_message=refusal("the run's end", fin.ByteSize(), e.details() or ""),
                )
                await self.unary(self.stub.FinishRun, small)  # type: ignore[union-attr]
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.FAILED_PRECONDITION:
                log.info("worker: run %s no longer ours: %s", fin.run_id, e.details())
            else:
                log.warning("worker: finishing run %s: %s: %s", fin.run_id, e.code().name, e.details())

    async def unary(self, method: Any, req: Any) -> Any:
        attempt = 1
        while True:
            try:
                return await method(req, timeout=self.call_timeout, metadata=self.metadata)
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or attempt >= self.retry.max_attempts:
                    raise
                await asyncio.sleep(self.retry.backoff(attempt))
                attempt += 1


def _call(fn: Any, ctx: StepContext, ev: Any) -> None:
    fn(ctx, ev)


def _describe(err: BaseException | None) -> str:
    if isinstance(err, grpc.aio.AioRpcError):
        return f"{err.code().name}: {err.details()}"
    return "the server ended the stream" if err is None else repr(err)

