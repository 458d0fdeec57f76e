"""expense-py: the built-in `expense` workflow (workflows/expense.go) as a
Python worker, with asyncio.

The step asks a person to review an expense report: a human task with an
answer schema ({"approved": bool, "reason": string}, reason required when
rejecting) assigned to the input's "approver" (default "finance"), with an
optional deadline in seconds ("deadline_s"). It completes with the
decision, or {"expired": true} when the deadline passes first.

    python expense_worker.py --addr 127.0.0.1:7233

then: `wfd run expense-py '{"approver": "ada", "amount": 120}'`,
`wfd tasks --assignee ada`, `wfd task complete <task id> '{"approved": true}' --by ada`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
from typing import Any

from wfd_client.worker import AsyncStepContext, AsyncWorker, Event, WaitTimeout, Workflow

MAX_NAME_BYTES = 200
MAX_SECONDS = 365 * 24 * 60 * 60

# The JSON Schema of an expense review's answer.
EXPENSE_SCHEMA = {
    "type": "object",
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "if": {"properties": {"approved": {"const": False}}},
    "then": {"required": ["reason"]},
    "additionalProperties": False,
}

expense = Workflow(
    "expense-py",
    description='Asks the input\'s "approver" to approve an expense (a human task with an answer schema).',
    input_schema={
        "type": "object",
        "properties": {
            "approver": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_BYTES,
                         "description": 'who is asked (default "finance")'},
            "deadline_s": {"type": "number", "minimum": 0, "maximum": MAX_SECONDS,
                           "description": "how long the task stays open, in seconds (default: no deadline)"},
        },
    },
)


def parse(data: dict[str, Any]) -> tuple[str, float]:
    """The approver (default "finance") and the deadline (0: none); the
    input schema has checked their types already."""
    approver = data.get("approver", "finance")
    if not isinstance(approver, str) or not approver or len(approver.encode()) > MAX_NAME_BYTES:
        raise ValueError(f'"approver" must be a non-empty string of at most {MAX_NAME_BYTES} bytes, got {approver!r}')
    deadline = data.get("deadline_s", 0)
    if not isinstance(deadline, (int, float)) or not 0 <= deadline <= MAX_SECONDS:
        raise ValueError(f'"deadline_s" must be a number of seconds from 0 to {MAX_SECONDS}, got {deadline!r}')
    return approver, float(deadline)


@expense.step(accepts=["start"], emits=["stop"])
async def review(ctx: AsyncStepContext, ev: Event) -> None:
    approver, deadline = parse(ev.data)
    try:
        ans = await ctx.ask_human(
            "Approve expense",
            description="Approve or reject this expense report: " + json.dumps(ev.data, separators=(",", ":")),
            schema=EXPENSE_SCHEMA,
            assignee=approver,
            deadline=deadline or None,
        )
    except WaitTimeout:
        ctx.send("stop", {"expired": True})
        return
    ctx.send("stop", {"decision": ans.data, "reviewed_by": ans.completed_by, "expense": ev.data})


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--addr", default="127.0.0.1:7233", help="the wfd server (default 127.0.0.1:7233)")
    p.add_argument("--name", default="expense-py-worker", help="the worker's name, for `wfd workers`")
    p.add_argument("--max-runs", type=int, default=8, help="step runs at once (default 8)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    w = AsyncWorker(args.addr, workflows=[expense], name=args.name, max_runs=args.max_runs)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, w.stop)
    await w.run()  # until SIGTERM or Ctrl-C; reconnects on its own


if __name__ == "__main__":
    asyncio.run(main())
