// @ts-check
// approval-ts and expense-ts: wfd's built-in approval and expense
// workflows (workflows/approval.go, workflows/expense.go) written as
// TypeScript-worker steps, with the same schemas and the same behaviour.
import { isWaiting, step, WaitTimeout, workflow } from "@wfd/client/worker";

/** The JSON Schema of an "approval" event's data. */
export const approvalEventSchema = {
  type: "object",
  properties: {
    approved: { type: "boolean", description: "true approves the request, false rejects it" },
    comment: { type: "string" },
  },
  required: ["approved"],
};

/**
 * approval-ts waits for an "approval" event and completes with the
 * decision: {approved, comment, request}. It writes a "question" record
 * each time it parks (in the catch of Waiting, which it rethrows).
 */
export const approval = workflow({
  name: "approval-ts",
  description: `Waits for an "approval" event whose data holds "approved" (bool) and completes with the decision.`,
  inputSchema: { type: "object", description: "the request to approve" },
  events: [
    {
      type: "approval",
      description: `The decision: {"approved": true|false, "comment": "..."}; the step waits for it.`,
      schema: approvalEventSchema,
    },
  ],
  steps: {
    decide: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, input) => {
      // Written when the run parks, so that each park writes once: a
      // re-run passes the earlier waits again without writing.
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
          throw e; // Waiting must propagate: the run parks.
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

const maxNameBytes = 200;
const maxSeconds = 365 * 24 * 60 * 60;

/** The JSON Schema of an expense review's answer. */
export const expenseAnswerSchema = {
  type: "object",
  required: ["approved"],
  properties: { approved: { type: "boolean" }, reason: { type: "string" } },
  if: { properties: { approved: { const: false } } },
  then: { required: ["reason"] },
  additionalProperties: false,
};

/**
 * expense-ts asks the input's "approver" (default "finance") to approve an
 * expense (a human task with an answer schema), with an optional deadline
 * in seconds ("deadline_s"); it completes with the decision, or
 * {expired: true} when the deadline passes first.
 */
export const expense = workflow({
  name: "expense-ts",
  description: `Asks the input's "approver" to approve an expense (a human task with an answer schema).`,
  inputSchema: {
    type: "object",
    properties: {
      approver: { type: "string", minLength: 1, maxLength: maxNameBytes, description: `who is asked (default "finance")` },
      deadline_s: {
        type: "number",
        minimum: 0,
        maximum: maxSeconds,
        description: "how long the task stays open, in seconds (default: no deadline)",
      },
    },
  },
  steps: {
    review: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, input) => {
      const approver = input.data["approver"] ?? "finance";
      if (typeof approver !== "string" || approver === "" || Buffer.byteLength(approver) > maxNameBytes) {
        throw new Error(`"approver" must be a non-empty string of at most ${maxNameBytes} bytes`);
      }
      const deadline = Number(input.data["deadline_s"] ?? 0);
      let ans;
      try {
        ans = await ctx.askHuman({
          title: "Approve expense",
          description: "Approve or reject this expense report: " + JSON.stringify(input.data),
          schema: expenseAnswerSchema,
          assignee: approver,
          deadlineMs: deadline * 1000,
        });
      } catch (e) {
        if (e instanceof WaitTimeout) {
          ctx.send("stop", { expired: true });
          return;
        }
        throw e;
      }
      ctx.send("stop", { decision: ans.data, reviewed_by: ans.completedBy, expense: input.data });
    }),
  },
});
