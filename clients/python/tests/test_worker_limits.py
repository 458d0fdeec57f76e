"""What a Python worker's step may produce, end to end against a real `wfd
serve`: a run that writes 15 MB (inside the server's budget of 16 ×
--max-payload-bytes per run) completes, and one over the limits fails as a
step error (retried by its policy), whether the engine refuses it or the
server's message limit does (RESOURCE_EXHAUSTED for the FinishRun or a
StepCall): the handler never stays running, waiting for the worker."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from conftest import Server, WorkerThread, connect, unique, wait_for

import wfd_client as w
from wfd_client import HandlerStatus, struct_to_dict
from wfd_client.worker import AsyncStepContext, Event, OperationError, Retry, StepContext, Workflow

COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")
FAILED = HandlerStatus.Value("HANDLER_STATUS_FAILED")


def writer(
    name: str, size: int, records: Callable[[int], int], set_size: Callable[[int], int] | None = None, *, use_async: bool = False,
) -> Workflow:
    """A workflow of one step, tried twice: attempt a stores a value of
    set_size(a) characters (if given; it goes on whatever set raises: a
    refused operation fails the run anyway), writes records(a) records of
    size characters, and completes with its attempt's number."""
    wf = Workflow(name)
    retry = Retry(max_attempts=2, initial_backoff=0.001)
    if use_async:

        @wf.step(accepts=["start"], emits=["stop"], retry=retry)
        async def write(ctx: AsyncStepContext, ev: Event) -> None:
            if set_size is not None:
                try:
                    await ctx.set("blob", "y" * set_size(ctx.attempt))
                except OperationError:
                    pass
            blob = "x" * size
            for _ in range(records(ctx.attempt)):
                ctx.write("chunk", {"blob": blob})
            ctx.send("stop", {"attempt": ctx.attempt})

    else:

        @wf.step(accepts=["start"], emits=["stop"], retry=retry)
        def write(ctx: StepContext, ev: Event) -> None:  # noqa: F811
            if set_size is not None:
                try:
                    ctx.set("blob", "y" * set_size(ctx.attempt))
                except OperationError:
                    pass
            blob = "x" * size
            for _ in range(records(ctx.attempt)):
                ctx.write("chunk", {"blob": blob})
            ctx.send("stop", {"attempt": ctx.attempt})

    return wf


def run_to_end(addr: str, wf: Workflow) -> tuple[w.Handler, list[str], int]:
    """Runs wf's handler on a worker to its end: the handler, its step
    errors, and how many chunks its stream holds."""
    with WorkerThread(addr, [wf]), connect(addr) as c:
        h = c.run(wf.name)

        def finished() -> w.Handler | None:
            g = c.get(h.handler_id)
            return g if w.is_finished(g) else None

        got = wait_for(f"handler {h.handler_id} finished", finished)
        recs = list(c.stream(h.handler_id, include_internal=True))
        errors = [r.step_state_changed.error for r in recs
                  if r.WhichOneof("kind") == "step_state_changed" and r.step_state_changed.error]
        chunks = sum(1 for r in recs if r.WhichOneof("kind") == "event_written" and r.event_written.type == "chunk")
        return got, errors, chunks


def test_worker_run_writes_15mb(server: str) -> None:
    got, errors, chunks = run_to_end(server, writer(unique("big-output-py"), 1_000_000, lambda a: 15))
    assert got.status == COMPLETED, got.error
    assert struct_to_dict(got.result) == {"attempt": 1}
    assert errors == []
    assert chunks == 15


@pytest.fixture(scope="module")
def small_server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose runs may send and write 16 × 64 KiB (1 MiB); it reads
    a StepCall or FinishRun of 4 MiB (its message limit, above what a run
    may produce with these limits)."""
    srv = Server(wfd_bin, tmp_path_factory.mktemp("wfd-small") / "data",
                 extra_args=["--max-payload-bytes", "65536", "--max-record-bytes", "65536", "--max-queued-events", "100"])
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "asyncio"])
@pytest.mark.parametrize(("records", "set_size", "want"), [
    (18, None, "over the limit"),  # over the run's budget: the engine refuses it
    (80, None, "larger than"),  # over the message limit: the server refuses the FinishRun
    (1, 5_000_000, "larger than"),  # a StepCall over the message limit
], ids=["over-budget", "finish-over-message-limit", "step-call-over-message-limit"])
def test_worker_run_over_the_limits_fails(small_server: str, records: int, set_size: int | None, want: str, use_async: bool) -> None:
    wf = writer(unique("over-py"), 60_000, lambda a: records, None if set_size is None else (lambda a: set_size), use_async=use_async)
    got, errors, _ = run_to_end(small_server, wf)
    assert got.status == FAILED, (got.status, got.error)
    assert want in got.error
    assert len(errors) == 2, errors  # both attempts failed: a step error, retried


def test_worker_run_refused_then_fits(small_server: str) -> None:
    wf = writer(unique("over-then-fits-py"), 60_000, lambda a: 80 if a == 1 else 1, lambda a: 5_000_000 if a == 1 else 10)
    got, errors, _ = run_to_end(small_server, wf)
    assert got.status == COMPLETED, got.error
    assert struct_to_dict(got.result) == {"attempt": 2}
    assert len(errors) == 1
    assert re.search(r"setting \(\d+ bytes encoded\) was refused: .*larger than", errors[0]), errors[0]
