// Search attributes and schedules in the console (issue 27): the handler
// list filters by a where query and shows each handler's attributes, a
// malformed query is refused next to its field, and the schedules page
// shows a schedule's next ticks and recent runs, triggers it, and pauses
// and resumes it.
import AxeBuilder from "@axe-core/playwright";

import { expect, shot, test, uid } from "./fixtures";

test("filter handlers by their search attributes", async ({ page, wfd, consoleErrors }) => {
  const ada = uid("ada");
  const ids = [uid("ap"), uid("ap"), uid("ap")];
  const who = [ada, ada, uid("bob")];
  for (let i = 0; i < ids.length; i++) {
    await wfd.call("RunWorkflow", { workflow: "approval", handlerId: ids[i], input: { n: i }, attributes: { requester: who[i], priority: i + 1 } });
  }

  await page.goto(`${wfd.origin}/ui/handlers?workflow=approval`);
  const table = page.getByTestId("handlers");
  await expect(table.getByRole("link", { name: ids[2] })).toBeVisible();
  const where = page.getByLabel("Where");
  await where.fill(`requester = "${ada}" order by priority desc`);
  await where.press("Enter");
  await expect(page).toHaveURL(/where=/);
  await expect(table.getByRole("link", { name: ids[2] })).toHaveCount(0);
  const rows = table.locator("tbody tr");
  await expect(rows).toHaveCount(2);
  // Highest priority first, with the attributes shown.
  await expect(rows.nth(0)).toContainText(ids[1]);
  await expect(rows.nth(0)).toContainText(`priority=2 requester="${ada}"`);
  await expect(rows.nth(1)).toContainText(ids[0]);
  await shot(page, "handlers-where");

  // A malformed query: the server's refusal, with its position, next to the field.
  await where.fill("requester =");
  await where.press("Enter");
  const error = page.locator("#where-error");
  await expect(error).toBeVisible();
  await expect(error).toContainText("position 12");
  await expect(where).toHaveAttribute("aria-invalid", "true");
  // One no index answers is refused too, saying why.
  await where.fill(`requester != "${ada}"`);
  await where.press("Enter");
  await expect(error).toContainText("index");

  // The handler's page lists its attributes; the workflow's its declarations.
  await page.goto(`${wfd.origin}/ui/handlers/${ids[0]}`);
  await expect(page.getByTestId("handler-attributes")).toContainText(`requester="${ada}"`);
  await page.goto(`${wfd.origin}/ui/workflows/approval`);
  await expect(page.getByTestId("workflow-attributes")).toContainText("priority int");
  expect(consoleErrors).toEqual([]);
});

test("a schedule's next ticks and runs, trigger now, pause and resume", async ({ page, wfd, consoleErrors }) => {
  const id = uid("nightly");
  await wfd.call("CreateSchedule", {
    schedule: { scheduleId: id, spec: { interval: "3600s" }, action: { workflow: "echo", input: { from: "schedule" } } },
  });

  await page.goto(`${wfd.origin}/ui/schedules`);
  const row = page.locator(`tr[data-schedule="${id}"]`);
  await expect(row).toContainText("every 1h");
  await expect(row).toContainText("echo");
  await expect(row.getByText("active", { exact: true })).toBeVisible();
  // Its next ticks are listed.
  await expect(row.locator("td:nth-child(5) li")).toHaveCount(3);

  await row.getByRole("button", { name: `Trigger now ${id}` }).click();
  const started = page.getByRole("status").getByRole("link", { name: new RegExp(`^sched:${id}:trigger:`) });
  await expect(started).toBeVisible();
  // The run is among its recent runs, linked to its handler.
  await expect(page.getByRole("list", { name: `Recent runs of ${id}` }).getByRole("link")).toHaveCount(1);

  await row.getByRole("button", { name: `Pause ${id}` }).click();
  await expect(row.getByText("paused", { exact: true })).toBeVisible();
  await row.getByRole("button", { name: `Resume ${id}` }).click();
  await expect(row.getByText("active", { exact: true })).toBeVisible();
  await shot(page, "schedules");

  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  // The run's link leads to its handler.
  await page.getByRole("list", { name: `Recent runs of ${id}` }).getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(`sched:${id}:trigger:`);
  expect(consoleErrors).toEqual([]);
});
