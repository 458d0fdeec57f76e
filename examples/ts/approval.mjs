#!/usr/bin/env node
// @ts-check
// Runs the `approval` workflow on a wfd server, prints the handler's stream
// as it happens, answers the question when the handler goes idle waiting
// for it, and prints the result.
//
//   npm install && npm start -- --addr 127.0.0.1:7233 [--protocol grpc|connect|grpcweb] [--reject] [--amount 42]
import { parseArgs } from "node:util";

import { Code, ConnectError, HandlerStatus, wfdClientForNode } from "@wfd/client/node";

const { values: args } = parseArgs({
  options: {
    addr: { type: "string", default: "127.0.0.1:7233" },
    protocol: { type: "string", default: "grpc" },
    amount: { type: "string", default: "42" },
    reject: { type: "boolean", default: false },
  },
});
const protocol = /** @type {"grpc" | "connect" | "grpcweb"} */ (args.protocol);
if (!["grpc", "connect", "grpcweb"].includes(protocol)) {
  console.error(`--protocol must be grpc, connect or grpcweb, not ${protocol}`);
  process.exit(2);
}

const client = wfdClientForNode(args.addr, { protocol });
try {
  const h = await client.run("approval", { amount: Number(args.amount), requester: "examples/ts" });
  console.log(`started approval handler ${h.handlerId} on ${args.addr} over ${protocol}`);

  let answered = false;
  // stream() yields every record once (includeInternal: the idle records
  // too), in order, reconnecting after a dropped connection, and ends
  // after the terminal record.
  for await (const rec of client.stream(h.handlerId, { includeInternal: true })) {
    console.log(`#${rec.seq} ${describe(rec)}`);
    const k = rec.kind;
    if (k.case === "idleChanged" && k.value.idle && !answered) {
      // The handler is idle, waiting for an "approval" event: answer it.
      const waits = (k.value.info?.waiters ?? []).map((w) => w.eventType);
      if (waits.includes("approval")) {
        const answer = { approved: !args.reject, comment: args.reject ? "rejected by the example" : "approved by the example" };
        console.log(`   -> sending approval ${JSON.stringify(answer)}`);
        await client.send(h.handlerId, "approval", answer);
        answered = true;
      }
    }
  }

  const done = await client.get(h.handlerId);
  console.log(`handler ${done.handlerId}: ${statusName(done.status)}`);
  console.log(`result: ${JSON.stringify(done.result)}`);
  if (done.status !== HandlerStatus.COMPLETED) {
    process.exitCode = 1;
  }
} catch (e) {
  if (!(e instanceof ConnectError)) throw e;
  // The server's code and message, e.g. "unavailable: connection lost: ..."
  // when no server listens at --addr.
  console.error(`wfd: ${Code[e.code]}: ${e.rawMessage}`);
  process.exitCode = 1;
} finally {
  client.close();
}

/** @param {import("@wfd/client").Record} rec */
function describe(rec) {
  const k = rec.kind;
  switch (k.case) {
    case "stepStateChanged": {
      const s = k.value;
      if (s.running) return `step ${s.step} started (input ${s.inputEventType})`;
      if (s.error) return `step ${s.step} failed: ${s.error}`;
      if (s.waiting) return `step ${s.step} ended (waiting)`;
      return `step ${s.step} ended${s.emittedEventTypes.length ? ` (emitted ${s.emittedEventTypes.join(", ")})` : ""}`;
    }
    case "eventWritten":
      return `event ${k.value.type} ${JSON.stringify(k.value.data)}`;
    case "idleChanged":
      if (!k.value.idle) return "busy";
      return `idle: waits for ${(k.value.info?.waiters ?? []).map((w) => `${w.eventType || "a timer"} (step ${w.step})`).join(", ")}`;
    case "handlerReleased":
      return "released from memory";
    case "handlerRestored":
      return "restored into memory";
    case "handlerFinished":
      return `${statusName(k.value.status)} ${k.value.error || JSON.stringify(k.value.result)}`;
    default:
      return "unknown record";
  }
}

/** @param {HandlerStatus} s */
function statusName(s) {
  return (HandlerStatus[s] ?? String(s)).toLowerCase();
}
