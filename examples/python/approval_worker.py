"""approval-py: the built-in `approval` workflow (workflows/approval.go) as a
Python worker.

The step waits for an "approval" event and completes with the decision
{"approved", "comment", "request"}. It writes a "question" record to the
stream each time it parks; an answer whose "approved" is not a bool gets an
"invalid_answer" record and the step waits again (the declared schema makes
SendEvent refuse such an answer first; the step checks anyway, as the Go
one does).

    python approval_worker.py --addr 127.0.0.1:7233

then, from another terminal: `wfd run approval-py '{"amount": 42}'`, and
`wfd send <handler id> approval '{"approved": true, "comment": "fine"}'`.
"""

from __future__ import annotations

import argparse
import logging
import signal

from wfd_client.worker import Event, EventType, StepContext, Waiting, Worker, Workflow

APPROVAL_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true approves the request, false rejects it"},
        "comment": {"type": "string"},
    },
    "required": ["approved"],
}

approval = Workflow(
    "approval-py",
    description='Waits for an "approval" event whose data holds "approved" (bool) and completes with the decision.',
    input_schema={"type": "object", "description": "the request to approve"},
    events=[
        EventType(
            "approval",
            description='The decision: {"approved": true|false, "comment": "..."}; the step waits for it.',
            schema=APPROVAL_EVENT_SCHEMA,
        )
    ],
)


@approval.step(accepts=["start"], emits=["stop"])
def decide(ctx: StepContext, ev: Event) -> None:
    # Whatever is written happens when the run parks, so that each park
    # writes once: a re-run passes the earlier waits again without writing.
    notice = ("question", {
        "question": "approve this request?",
        "request": ev.data,
        "answer": 'send an "approval" event with {"approved": true|false, "comment": "..."}',
    })
    while True:
        try:
            answer = ctx.wait_for("approval")
        except Waiting:
            ctx.write(*notice)
            raise
        approved = answer.data.get("approved")
        if not isinstance(approved, bool):
            notice = ("invalid_answer", {"reason": '"approved" must be a bool'})
            continue
        comment = answer.data.get("comment")
        ctx.send("stop", {
            "approved": approved,
            "comment": comment if isinstance(comment, str) else "",
            "request": ev.data,
        })
        return


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--addr", default="127.0.0.1:7233", help="the wfd server (default 127.0.0.1:7233)")
    p.add_argument("--name", default="approval-py-worker", help="the worker's name, for `wfd workers`")
    p.add_argument("--max-runs", type=int, default=8, help="step runs at once (default 8)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    w = Worker(args.addr, workflows=[approval], name=args.name, max_runs=args.max_runs)
    signal.signal(signal.SIGTERM, lambda *_: w.stop())
    w.run()  # until SIGTERM or Ctrl-C; reconnects on its own


if __name__ == "__main__":
    main()
