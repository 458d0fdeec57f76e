// A task's life in the console (issue 28): claim it, comment on it, let it
// go, hand it to a group; the inbox says who holds it, the timeline
// records each change, and the page passes axe.
import AxeBuilder from "@axe-core/playwright";

import { expect, shot, taskOf, test, uid } from "./fixtures";

test("claim, comment, let go and reassign a task", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("ada");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { amount: 9, approver } });
  const taskId = await taskOf(wfd, run.handler.handlerId);

  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  const work = page.getByTestId("task-work");
  await expect(work.getByTestId("task-claim")).toContainText("Nobody has claimed it.");
  await work.getByRole("button", { name: "Claim" }).click();
  await expect(work.getByTestId("task-claim")).toContainText(`Claimed by ${approver}`);

  // With the keyboard: type a comment and submit it.
  await work.getByLabel("Comment").fill("the receipt is attached");
  await work.getByRole("button", { name: "Add comment" }).press("Enter");
  await expect(work.getByTestId("task-comments")).toContainText("the receipt is attached");
  await expect(work.getByTestId("task-comments")).toContainText(approver);

  await page.goto(`${wfd.origin}/ui/inbox?mine=0&assignee=${approver}`);
  await expect(page.getByText(`(claimed by ${approver})`)).toBeVisible();

  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  await work.getByRole("button", { name: "Let go" }).click();
  await expect(work.getByTestId("task-claim")).toContainText("Nobody has claimed it.");
  await work.getByLabel("Reassign to").fill("group:finance");
  await work.getByRole("button", { name: "Reassign" }).click();
  await expect(page.getByText("group:finance").first()).toBeVisible();
  await shot(page, "task-work");
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);

  await page.goto(`${wfd.origin}/ui/handlers/${run.handler.handlerId}`);
  for (const text of [`claimed by ${approver}`, `commented by ${approver}: "the receipt is attached"`, `unclaimed by ${approver}`, "reassigned by"]) {
    await expect(page.getByText(text).first()).toBeVisible();
  }
  // Looking back at the comment: the task as it stood then.
  const timeline = page.getByTestId("timeline");
  await timeline.locator('[data-kind="task"]').filter({ hasText: "commented" }).locator("button").click();
  const tasksThen = page.getByTestId("handler-at-tasks");
  await expect(tasksThen).toContainText(`commented by ${approver}`);
  await expect(tasksThen).toContainText(`held by ${approver}`);
  await expect(tasksThen).toContainText("1 comment");
  expect(consoleErrors).toEqual([]);
});

test("an escalated task: overdue in the inbox, its new assignee, its due time", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("eve");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", {
    workflow: "expense",
    input: { amount: 4, approver, escalate_s: 0.3, escalate_to: "group:managers" },
  });
  const taskId = await taskOf(wfd, run.handler.handlerId);
  await expect(async () => {
    const t = await wfd.call<{ task: { escalated?: boolean } }>("GetTask", { taskId });
    expect(t.task.escalated).toBe(true);
  }).toPass({ timeout: 30_000 });

  await page.goto(`${wfd.origin}/ui/inbox?mine=0`);
  await page.getByLabel("Only overdue").check();
  const table = page.getByTestId("tasks");
  const row = table.getByRole("row").filter({ has: page.getByRole("link", { name: "Approve expense" }) }).filter({ hasText: "managers" });
  await expect(row.first()).toContainText("overdue");
  await page.getByLabel("Group").fill("managers");
  await page.getByLabel("Group").press("Enter");
  await expect(page).toHaveURL(/assignee=group%3Amanagers/);
  await page.getByLabel("Claimed").selectOption("claimed");
  await expect(page.getByText("No tasks.")).toBeVisible();
  await page.getByLabel("Claimed").selectOption("unclaimed");
  await expect(table).toBeVisible();

  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  await expect(page.getByTestId("task-due")).toContainText("escalated");
  await page.goto(`${wfd.origin}/ui/handlers/${run.handler.handlerId}`);
  await expect(page.getByText("escalated to group:managers").first()).toBeVisible();
  expect(consoleErrors).toEqual([]);
});

test("look back: the memos a step run held then", async ({ page, wfd, consoleErrors }) => {
  const order = uid("o");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "order", input: { order_id: order } });
  const id = run.handler.handlerId;
  await expect(async () => {
    const h = await wfd.call<{ handler: { idle?: object } }>("GetHandler", { handlerId: id });
    expect(h.handler.idle).toBeDefined();
  }).toPass({ timeout: 30_000 });
  await page.goto(`${wfd.origin}/ui/handlers/${id}`);
  const timeline = page.getByTestId("timeline");
  await expect(timeline.getByText("memo of step await_payment: reference")).toBeVisible();
  await timeline.locator('[data-kind="idle"] button').first().click();
  await expect(page.getByTestId("handler-at-memos")).toContainText('await_payment: reference = "ord-');
  expect(consoleErrors).toEqual([]);
});
