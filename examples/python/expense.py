"""Runs wfd's expense workflow with the Python client: starts a handler whose
step asks a person (a human task), finds the task in the approver's inbox,
answers it (first with an answer the task's schema refuses, to show the
error), and prints the result.

    python expense.py --addr 127.0.0.1:7233 [--approver ada] [--reject]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import wfd_client
from wfd_client import Client, HandlerStatus, struct_to_dict, task_to_dict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addr", default=wfd_client.DEFAULT_TARGET, help="wfd server host:port")
    parser.add_argument("--approver", default="ada", help="whose inbox the task goes to")
    parser.add_argument("--reject", action="store_true", help="answer approved=false (with a reason)")
    args = parser.parse_args()

    try:
        with Client(args.addr) as client:
            h = client.run("expense", {"amount": 120, "approver": args.approver})
            print("started", h.handler_id, flush=True)

            # The task is in the inbox once the step has asked.
            task = None
            for _ in range(500):
                inbox = client.list_all_tasks(assignee=args.approver, statuses=["pending"])
                task = next((t for t in inbox if t.handler_id == h.handler_id), None)
                if task is not None:
                    break
                time.sleep(0.02)
            if task is None:
                print("expense: the task never reached the inbox", file=sys.stderr)
                return 1
            t = task_to_dict(task)
            print(f"task {t['task_id']} for {t['assignee']}: {t['title']}")
            print("  answer schema:", json.dumps(t["answer_schema"], sort_keys=True))

            # An answer the schema refuses changes nothing.
            try:
                client.complete_task(task.task_id, {"approved": "maybe"}, completed_by=args.approver)
            except wfd_client.InvalidArgument as e:
                # "... does not match the task's schema: ...", then a line per failing field.
                print("  refused:", "; ".join(e.message.splitlines()[1:]) or e.message)

            answer = {"approved": False, "reason": "no receipt"} if args.reject else {"approved": True}
            done = client.complete_task(task.task_id, answer, completed_by=args.approver)
            print(f"  answered {json.dumps(struct_to_dict(done.answer))} by {done.completed_by}")

            for _ in client.stream(h.handler_id):  # to the end of the handler
                pass
            result = client.get(h.handler_id)
            print("result:", json.dumps(struct_to_dict(result.result), sort_keys=True))
            return 0 if result.status == HandlerStatus.Value("HANDLER_STATUS_COMPLETED") else 1
    except wfd_client.WfdError as e:
        print(f"expense: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
