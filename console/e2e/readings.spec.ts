// What the console says of a task's answer form and the workflow cards
// (issue 28's defects).
import { expect, shot, taskOf, test, uid } from "./fixtures";

test("a required boolean starts unanswered, and the answer is by the assignee", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("dana");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver, amount: 42 } });
  const taskId = await taskOf(wfd, run.handler.handlerId);
  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  const yes = page.getByRole("radio", { name: "Yes" });
  const no = page.getByRole("radio", { name: "No" });
  await expect(yes).toBeVisible();
  // Neither is chosen: one careless Submit must not reject the request.
  await expect(yes).not.toBeChecked();
  await expect(no).not.toBeChecked();
  await expect(page.getByLabel("Answered by")).toHaveValue(approver);
  // The report is shown as its fields, not only as text (issue 28).
  const input = page.getByTestId("task-input");
  await expect(input.getByRole("rowheader", { name: "approver" })).toBeVisible();
  await expect(input.getByRole("row", { name: /amount/ })).toContainText("42");
  await yes.check();
  await page.getByRole("button", { name: "Submit answer" }).click();
  await expect(async () => {
    const t = await wfd.call<{ task: { completedBy?: string } }>("GetTask", { taskId });
    expect(t.task.completedBy).toBe(approver);
  }).toPass({ timeout: 30_000 });
  expect(consoleErrors).toEqual([]);
});

test("workflow cards break no word in the middle", async ({ page, wfd, consoleErrors }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${wfd.origin}/ui/workflows`);
  const sub = page.locator(".card .sub").first();
  await expect(sub).toBeVisible();
  expect(await sub.evaluate((el) => getComputedStyle(el).wordBreak)).toBe("normal");
  expect(consoleErrors).toEqual([]);
});

test("look back: a handler as it stood at a record of its timeline", async ({ page, wfd, consoleErrors }) => {
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "approval", input: { n: 1 } });
  const id = run.handler.handlerId;
  await expect(async () => {
    const h = await wfd.call<{ handler: { idle?: object } }>("GetHandler", { handlerId: id });
    expect(h.handler.idle).toBeDefined();
  }).toPass({ timeout: 30_000 });
  await wfd.call("SendEvent", { handlerId: id, event: { type: "approval", data: { approved: true } } });
  await page.goto(`${wfd.origin}/ui/handlers/${id}`);
  const timeline = page.getByTestId("timeline");
  await expect(timeline.locator('[data-kind="finished"]')).toHaveCount(1);
  // The idle record, before the answer: the handler waited for it then.
  await timeline.locator('[data-kind="idle"] button').first().click();
  const at = page.getByTestId("handler-at");
  await expect(at).toContainText("running");
  await expect(at).toContainText("event approval");
  // The last record: completed, with its result.
  await timeline.locator('[data-kind="finished"] button').click();
  await expect(at).toContainText("completed");
  await expect(at).toContainText('"approved": true');

  // What changed between two points: from the idle record to the end.
  await timeline.locator('[data-kind="idle"] button').first().click();
  await page.getByRole("button", { name: "Compare from here" }).click();
  await expect(page.getByText("Now choose another record")).toBeVisible();
  await timeline.locator('[data-kind="finished"] button').click();
  const diff = page.getByTestId("handler-diff");
  await expect(diff).toContainText("status: running → completed");
  await expect(diff).toContainText("waiting for: event approval");
  await expect(diff).toContainText("step decide:");
  await expect(diff).toContainText('"approved": true');
  await shot(page, "handler-diff");
  await page.getByRole("button", { name: /Stop comparing/ }).click();
  await expect(diff).toHaveCount(0);
  expect(consoleErrors).toEqual([]);
});
