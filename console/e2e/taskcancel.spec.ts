// Cancelling a task with a reason (issue 28): from the task's page, the
// task ends cancelled with its reason, and the step that waited gets the
// cancellation as its answer (expense completes with it).
import { expect, shot, taskOf, test, uid } from "./fixtures";

test("cancel a task with a reason", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("ada");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { amount: 3, approver } });
  const id = run.handler.handlerId;
  const taskId = await taskOf(wfd, id);

  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  await page.getByText("Cancel the task instead").click();
  const button = page.getByRole("button", { name: "Cancel task" });
  await expect(button).toBeDisabled(); // a reason is required
  await page.getByLabel("Reason for cancelling").fill("the trip was called off");
  await button.click();
  await expect(page.getByTestId("cancel-reason")).toHaveText("the trip was called off");
  await expect(page.getByText("cancelled").first()).toBeVisible();
  // The handler's timeline records the task's changes.
  const tasks = page.getByTestId("timeline").locator('[data-kind="task"]');
  await expect(tasks).toHaveCount(2);
  await expect(tasks.nth(0)).toContainText('task "Approve expense"');
  await expect(tasks.nth(0)).toContainText("asked");
  await expect(tasks.nth(1)).toContainText("cancelled by");
  await expect(tasks.nth(1)).toContainText(": the trip was called off");
  await shot(page, "task-cancelled");

  await page.goto(`${wfd.origin}/ui/handlers/${id}`);
  await expect(page.getByTestId("handler-result")).toContainText('"reason": "the trip was called off"');
  expect(consoleErrors).toEqual([]);
});
