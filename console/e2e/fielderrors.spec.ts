// The server's schema errors, as a live wfd words them, land on the
// fields they name (the path the task form uses for the server's field
// errors: extraErrors of the generated form).
import { expect, taskOf, test } from "./fixtures";

import { errorSchema, fieldErrors } from "../src/fielderrors";

test("CompleteTask's schema errors map to the failing fields", async ({ wfd }) => {
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver: "carol" } });
  const taskId = await taskOf(wfd, run.handler.handlerId);

  const cases: [object, object][] = [
    [{ approved: false }, { reason: { __errors: ["is required"] } }],
    [{ approved: "yes" }, { approved: { __errors: [expect.stringContaining("want boolean")] } }],
    // Without "approved" the schema's "if" holds too, so "reason" is asked for as well.
    [{}, { approved: { __errors: ["is required"] }, reason: { __errors: ["is required"] } }],
  ];
  for (const [answer, want] of cases) {
    const res = await fetch(`${wfd.origin}/wfd.v1.WorkflowService/CompleteTask`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ taskId, answer }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(errorSchema(fieldErrors(body.message)), body.message).toEqual(want);
  }
});
