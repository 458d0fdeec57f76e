// Search attributes and schedules in the console (issue 27): the handler
// list filters by a where query and shows each handler's attributes, a
// malformed query is refused next to its field, and the schedules page
// shows a schedule's next ticks and recent runs (newest first), triggers
// it, and pauses and resumes it, there and on the schedule's own page.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

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
  // The refused query's field and its message pass axe too.
  await axeClean(page);

  // The handler's page lists its attributes; the workflow's its declarations.
  await page.goto(`${wfd.origin}/ui/handlers/${ids[0]}`);
  await expect(page.getByTestId("handler-attributes")).toContainText(`requester="${ada}"`);
  await page.goto(`${wfd.origin}/ui/workflows/approval`);
  await expect(page.getByTestId("workflow-attributes")).toContainText("priority int");
  expect(consoleErrors).toEqual([]);
});

test("a schedule's next ticks and runs, trigger now, pause and resume", async ({ page, wfd, consoleErrors }) => {
  const id = uid("nightly");
  // Overlap allow: each trigger starts a run, whether or not the last one finished.
  await wfd.call("CreateSchedule", {
    schedule: {
      scheduleId: id,
      spec: { interval: "3600s" },
      action: { workflow: "echo", input: { from: "schedule" } },
      policy: { overlap: "OVERLAP_POLICY_ALLOW" },
    },
  });

  await page.goto(`${wfd.origin}/ui/schedules`);
  const row = page.locator(`tr[data-schedule="${id}"]`);
  await expect(row).toContainText("every 1h");
  await expect(row).toContainText("echo");
  await expect(row.getByText("active", { exact: true })).toBeVisible();
  // Its next ticks are listed: the next full hour first.
  await expect(row.locator("td:nth-child(5) li")).toHaveCount(3);
  const nextHour = await page.evaluate(() =>
    new Date(Math.floor(Date.now() / 3_600_000 + 1) * 3_600_000).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" }),
  );
  await expect(row.locator("td:nth-child(5) li").first()).toHaveText(nextHour);

  const trigger = row.getByRole("button", { name: `Trigger now ${id}` });
  const started = page.getByRole("status").getByRole("link", { name: new RegExp(`^sched:${id}:trigger:`) });
  await trigger.click();
  await expect(started).toBeVisible();
  const first = await started.innerText();
  // The run is among its recent runs, linked to its handler.
  const recent = page.getByRole("list", { name: `Recent runs of ${id}` }).getByRole("link");
  await expect(recent).toHaveCount(1);
  // A second trigger: the newest run comes first.
  await trigger.click();
  await expect(started).not.toHaveText(first);
  const second = await started.innerText();
  await expect(recent).toHaveCount(2);
  await expect(recent.first()).toHaveText(second);
  await expect(recent.nth(1)).toHaveText(first);

  await row.getByRole("button", { name: `Pause ${id}` }).click();
  await expect(row.getByText("paused", { exact: true })).toBeVisible();
  await expect(row.locator("td:nth-child(5) li")).toHaveCount(0);
  await row.getByRole("button", { name: `Resume ${id}` }).click();
  await expect(row.getByText("active", { exact: true })).toBeVisible();
  await expect(row.locator("td:nth-child(5) li")).toHaveCount(3);
  await shot(page, "schedules");
  await axeClean(page);

  // Its own page: spec, policy, counts, every next tick and recent run.
  await row.getByRole("link", { name: id, exact: true }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Schedule ${id}`);
  const facts = page.getByTestId("schedule-facts");
  await expect(facts).toContainText("every 1h");
  await expect(facts).toContainText("allow");
  await expect(page.getByTestId("schedule-counts")).toContainText("2 started");
  await expect(page.getByTestId("schedule-next").locator("li")).toHaveCount(5);
  const runs = page.getByTestId("schedule-recent").locator("tbody tr");
  await expect(runs).toHaveCount(2);
  await expect(runs.first()).toContainText(second);
  await expect(runs.first()).toContainText("started");
  await page.getByRole("button", { name: `Pause ${id}` }).click();
  await expect(facts.getByText("paused", { exact: true })).toBeVisible();
  await expect(page.getByText("None while paused.")).toBeVisible();
  await page.getByRole("button", { name: `Resume ${id}` }).click();
  await expect(page.getByTestId("schedule-next").locator("li")).toHaveCount(5);
  await shot(page, "schedule");
  await axeClean(page);

  // A run's link leads to its handler, whose page links back to the schedule.
  await runs.first().getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(second);
  await page.getByTestId("handler-schedule").getByRole("link", { name: id }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Schedule ${id}`);
  expect(consoleErrors).toEqual([]);
});

async function axeClean(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
}
