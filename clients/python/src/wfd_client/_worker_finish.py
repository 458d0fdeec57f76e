"""The worker's run ends, sent together when they gather: a run's end is
sent at once if no FinishRun or FinishRuns is in flight; otherwise it waits
for it, and the ends that gathered meanwhile go in one FinishRuns. Under
load, runs that end together cost the server one call instead of one each;
alone, a run waits for nothing. (The Go worker's finisher, on asyncio.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio

from wfd.v1 import worker_pb2

# Bounds of a FinishRuns batch: a run's end larger than BATCH_ITEM_BYTES
# goes alone (FinishRun), and a batch stops at BATCH_BYTES or BATCH_RUNS,
# far below the server's read limit for the runs' effects (about 26 MiB
# with its defaults).
BATCH_ITEM_BYTES = 64 << 10
BATCH_BYTES = 1 << 20
BATCH_RUNS = 256

_CODES = {s.value[0]: s for s in grpc.StatusCode}


def rpc_error(code: grpc.StatusCode, message: str) -> grpc.aio.AioRpcError:
    """An error as FinishRun raises it, so that a run's answer in a batch
    is handled as its own call's would be."""
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=message)


class _Ending:
    """One run's end waiting for its call; fut gets FinishRun's answer for
    it. The run's task awaits fut: cancelling the run cancels fut, and an
    end whose run was cancelled before its batch left is not sent, as its
    FinishRun would not have been."""

    __slots__ = ("fin", "size", "fut")

    def __init__(self, fin: worker_pb2.FinishRunRequest, size: int, fut: asyncio.Future[None]) -> None:
        self.fin, self.size, self.fut = fin, size, fut


class Finisher:
    """Sends the ends of a worker's runs. finish_run and finish_runs are the
    worker's calls (with its retries and timeout)."""

    def __init__(
        self,
        finish_run: Callable[[worker_pb2.FinishRunRequest], Awaitable[Any]],
        finish_runs: Callable[[worker_pb2.FinishRunsRequest], Awaitable[worker_pb2.FinishRunsResponse]],
    ) -> None:
        self._one, self._many = finish_run, finish_runs
        self._queue: list[_Ending] = []
        # The batch the sender holds, and the sender itself while a call
        # is in flight: it sends the queue until it is empty.
        self._batch: list[_Ending] = []
        self._sender: asyncio.Task[None] | None = None
        # Set once the server answered FinishRuns UNIMPLEMENTED (a server
        # older than it): every end goes by FinishRun from then on.
        self.single = False

    async def send(self, fin: worker_pb2.FinishRunRequest) -> None:
        """Delivers fin by FinishRun, or in a FinishRuns with the ends that
        queue up while another call is in flight. Raises as FinishRun would
        for this run (grpc.aio.AioRpcError)."""
        size = fin.ByteSize()
        if self.single or size > BATCH_ITEM_BYTES:
            await self._one(fin)
            return
        e = _Ending(fin, size, asyncio.get_running_loop().create_future())
        if self._sender is None:
            # No call in flight: this end goes at once, alone. The sender is
            # a task of its own: a batch serves several runs, and outlives
            # the cancellation of the one that started it.
            self._sender = asyncio.ensure_future(self._send([e]))
        else:
            self._queue.append(e)
        await e.fut

    async def close(self) -> None:
        """Ends the sender (its session ended): the ends it holds go with
        their runs, which the session's end cancelled."""
        t = self._sender
        if t is not None:
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)

    async def _send(self, batch: list[_Ending]) -> None:
        try:
            while batch:
                self._batch = batch
                await self._deliver(batch)
                batch = self._take()
        finally:
            for e in (*self._batch, *self._queue):
                e.fut.cancel()  # done ones are left as they are
            self._batch, self._queue = [], []
            # At once, in the step that found the queue empty: an end
            # queued after it would wait for ever.
            self._sender = None

    def _take(self) -> list[_Ending]:
        """Removes the next batch from the queue."""
        n = size = 0
        q = self._queue
        while n < len(q) and n < BATCH_RUNS and (n == 0 or size + q[n].size <= BATCH_BYTES):
            size += q[n].size
            n += 1
        batch, self._queue = q[:n], q[n:]
        return batch

    async def _deliver(self, batch: list[_Ending]) -> None:
        """Sends a batch and hands each end its answer. One end goes by
        FinishRun, cancelled with its run; several by FinishRuns, cancelled
        with the session."""
        batch = [e for e in batch if not e.fut.done()]
        if not batch:
            return
        if len(batch) == 1:
            await self._alone(batch[0])
            return
        try:
            resp = await self._many(worker_pb2.FinishRunsRequest(runs=[e.fin for e in batch]))
            if len(resp.results) != len(batch):
                raise rpc_error(grpc.StatusCode.INTERNAL, f"FinishRuns answered {len(resp.results)} runs of {len(batch)}")
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.RESOURCE_EXHAUSTED):
                # A server without FinishRuns, or a batch over its read
                # limit: each end alone, as before batches.
                if code == grpc.StatusCode.UNIMPLEMENTED:
                    self.single = True
                for e in batch:
                    await self._alone(e)
                return
            for e in batch:
                _settle(e.fut, rpc_error(code, err.details() or ""))
            return
        for e, r in zip(batch, resp.results, strict=True):
            _settle(e.fut, None if r.code == 0 else rpc_error(_CODES.get(r.code, grpc.StatusCode.UNKNOWN), r.message))

    async def _alone(self, e: _Ending) -> None:
        """e by FinishRun, cancelled if its run is, as the run's own call
        would be."""
        if e.fut.done():
            return
        call = asyncio.ensure_future(self._one(e.fin))
        call.add_done_callback(_retrieve)
        e.fut.add_done_callback(lambda _: call.cancel())
        try:
            await asyncio.wait({call})
        finally:
            call.cancel()  # the sender cancelled: its call too
        if call.cancelled():
            e.fut.cancel()
        else:
            _settle(e.fut, call.exception())


def _settle(fut: asyncio.Future[None], err: BaseException | None) -> None:
    """Hands an end its answer, unless its run was cancelled meanwhile."""
    if fut.done():
        return
    if err is None:
        fut.set_result(None)
    else:
        fut.set_exception(err)


def _retrieve(t: asyncio.Future[Any]) -> None:
    # A call whose run was cancelled meanwhile: its error is no one's.
    if not t.cancelled():
        t.exception()
