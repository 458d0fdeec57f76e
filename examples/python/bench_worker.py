"""The worker `wfd bench --worker python` starts:

    <python> examples/python/bench_worker.py --addr HOST:PORT --max-runs N

It serves `bench-echo` (one step "echo": sends stop with its input) and
`bench-approval` (one step "decide", as workflows/approval.go's: writes the
"question" record when it parks, waits for "approval", stops with
{approved, comment, request}), until SIGTERM or SIGINT, and exits 0.
The steps are coroutines: they run on the worker's event loop, with no
thread hop per run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from wfd_client.worker import AsyncStepContext, AsyncWorker, Event, EventType, Waiting, Workflow

echo = Workflow("bench-echo", description="Completes with its input.",
                input_schema={"type": "object", "description": "anything: the result"})


@echo.step(name="echo", accepts=["start"], emits=["stop"])
async def echo_step(ctx: AsyncStepContext, ev: Event) -> None:
    ctx.send("stop", ev.data)


APPROVAL_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true approves the request, false rejects it"},
        "comment": {"type": "string"},
    },
    "required": ["approved"],
}

approval = Workflow(
    "bench-approval",
    description='Waits for an "approval" event whose data holds "approved" (bool) and completes with the decision.',
    input_schema={"type": "object", "description": "the request to approve"},
    events=[EventType("approval", schema=APPROVAL_EVENT_SCHEMA,
                      description='The decision: {"approved": true|false, "comment": "..."}; the step waits for it.')],
)

ANSWER = 'send an "approval" event with {"approved": true|false, "comment": "..."}'


@approval.step(accepts=["start"], emits=["stop"])
async def decide(ctx: AsyncStepContext, ev: Event) -> None:
    notice: tuple[str, dict[str, object]] = (
        "question", {"question": "approve this request?", "request": ev.data, "answer": ANSWER})
    while True:
        try:
            answer = await ctx.wait_for("approval")
        except Waiting:
            ctx.write(*notice)
            raise
        approved = answer.data.get("approved")
        if not isinstance(approved, bool):
            notice = ("invalid_answer", {"reason": '"approved" must be a bool'})
            continue
        comment = answer.data.get("comment")
        ctx.send("stop", {"approved": approved, "comment": comment if isinstance(comment, str) else "",
                          "request": ev.data})
        return


async def main() -> int:
    p = argparse.ArgumentParser(description="wfd bench's Python worker")
    p.add_argument("--addr", required=True, help="the wfd server, HOST:PORT")
    p.add_argument("--max-runs", type=int, default=64, help="step runs at once (default 64)")
    p.add_argument("--name", default="bench-python")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    w = AsyncWorker(args.addr, workflows=[echo, approval], name=args.name, max_runs=args.max_runs)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, w.stop)
    await w.run()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
