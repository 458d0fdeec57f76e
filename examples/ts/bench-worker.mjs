// @ts-check
// The TypeScript worker of `wfd bench --worker ts`:
//
//   node examples/ts/bench-worker.mjs --addr HOST:PORT --max-runs N
//
// serves bench-echo (one step "echo": completes with its input) and
// bench-approval (one step "decide", as workflows/approval.go's: writes a
// "question" record when it parks, waits for "approval", completes with
// {approved, comment, request}) until SIGTERM or SIGINT, then exits 0.
// The hot path logs nothing, and every call shares one HTTP/2 connection.
import { parseArgs } from "node:util";

// @wfd/client when installed (examples/ts: npm install); otherwise the
// repository's build of it (clients/ts/dist: npm run build there).
/** @type {typeof import("@wfd/client/worker")} */
const wfd = await import("@wfd/client/worker").catch(() => import(new URL("../../clients/ts/dist/worker/index.js", import.meta.url).href));
const { Worker, workflow, step, isWaiting } = wfd;

const { values } = parseArgs({
  options: {
    addr: { type: "string", default: "127.0.0.1:7233" },
    "max-runs": { type: "string", default: "64" },
    name: { type: "string", default: "bench-ts" },
  },
});

const echo = workflow({
  name: "bench-echo",
  description: "Completes with its input (served by the TypeScript bench worker).",
  steps: {
    echo: step({ accepts: ["start"], emits: ["stop"] }, (ctx, ev) => {
      ctx.send("stop", ev.data);
    }),
  },
});

const approval = workflow({
  name: "bench-approval",
  description: `Waits for an "approval" event whose data holds "approved" (bool) and completes with the decision (served by the TypeScript bench worker).`,
  inputSchema: { type: "object", description: "the request to approve" },
  events: [
    {
      type: "approval",
      description: `The decision: {"approved": true|false, "comment": "..."}; the step waits for it.`,
      schema: {
        type: "object",
        properties: {
          approved: { type: "boolean", description: "true approves the request, false rejects it" },
          comment: { type: "string" },
        },
        required: ["approved"],
      },
    },
  ],
  steps: {
    decide: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, input) => {
      /** @type {{ type: string, data: import("@wfd/client").JsonObject }} */
      let notice = {
        type: "question",
        data: {
          question: "approve this request?",
          request: input.data,
          answer: `send an "approval" event with {"approved": true|false, "comment": "..."}`,
        },
      };
      for (;;) {
        let ev;
        try {
          ev = await ctx.waitFor("approval");
        } catch (e) {
          if (isWaiting(e)) ctx.write(notice.type, notice.data);
          throw e;
        }
        const approved = ev.data["approved"];
        if (typeof approved !== "boolean") {
          notice = { type: "invalid_answer", data: { reason: `"approved" must be a bool` } };
          continue;
        }
        ctx.send("stop", { approved, comment: String(ev.data["comment"] ?? ""), request: input.data });
        return;
      }
    }),
  },
});

const worker = new Worker({
  addr: values.addr ?? "127.0.0.1:7233",
  name: values.name,
  maxRuns: Number(values["max-runs"]),
  workflows: [echo, approval],
});
const stop = new AbortController();
process.once("SIGINT", () => stop.abort());
process.once("SIGTERM", () => stop.abort());
try {
  await worker.run(stop.signal);
  process.exit(0);
} catch (e) {
  console.error(`bench-worker: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
