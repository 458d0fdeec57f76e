"""Runs wfd's approval workflow end to end with the Python client: starts a
handler, prints its stream as it happens, answers the question when the
handler goes idle, and prints the result.

    python approval.py --addr 127.0.0.1:7233 [--reject]
"""

from __future__ import annotations

import argparse
import json
import sys

from google.protobuf import json_format

import wfd_client
from wfd_client import Client, HandlerStatus, Record, struct_to_dict


def show(rec: Record) -> str:
    kind = rec.WhichOneof("kind")
    if kind == "step_state_changed":
        s = rec.step_state_changed
        return (
            f"step {s.step} running={s.running} waiting={s.waiting} "
            f"emitted={list(s.emitted_event_types)}" + (f" error={s.error}" if s.error else "")
        )
    if kind == "event_written":
        ev = rec.event_written
        return f"{ev.type}: {json.dumps(struct_to_dict(ev.data), sort_keys=True)}"
    if kind == "idle_changed":
        if not rec.idle_changed.idle:
            return "busy"
        waits = [w.event_type for w in rec.idle_changed.info.waiters]
        return f"idle, waiting for {waits}"
    if kind == "handler_finished":
        fin = rec.handler_finished
        status = HandlerStatus.Name(fin.status).removeprefix("HANDLER_STATUS_").lower()
        out = f"{status} result={json.dumps(struct_to_dict(fin.result), sort_keys=True)}"
        return out + (f" error={fin.error}" if fin.error else "")
    return f"{kind} {json_format.MessageToJson(rec, indent=None)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addr", default=wfd_client.DEFAULT_TARGET, help="wfd server host:port")
    parser.add_argument("--reject", action="store_true", help="answer approved=false")
    args = parser.parse_args()
    approve = not args.reject

    try:
        with Client(args.addr) as client:
            h = client.run("approval", {"amount": 42, "requested_by": "ada"})
            print("started", h.handler_id, flush=True)
            answered = False
            for rec in client.stream(h.handler_id, include_internal=True):
                print(f"#{rec.seq} {show(rec)}", flush=True)
                if rec.WhichOneof("kind") == "idle_changed" and rec.idle_changed.idle and not answered:
                    print(f"   answering approved={approve}", flush=True)
                    client.send(h.handler_id, "approval", {"approved": approve, "comment": "looks fine"})
                    answered = True
            done = client.get(h.handler_id)
            print("result:", json.dumps(struct_to_dict(done.result), sort_keys=True))
            return 0 if done.status == HandlerStatus.Value("HANDLER_STATUS_COMPLETED") else 1
    except wfd_client.WfdError as e:
        print(f"approval: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
