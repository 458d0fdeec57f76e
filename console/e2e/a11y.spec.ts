// Accessibility of every page (axe-core's WCAG 2 A and AA rules): labels,
// names, contrast, landmarks. A check of the markup, beside the keyboard
// test in console.spec.ts.
import AxeBuilder from "@axe-core/playwright";

import { expect, taskOf, test, uid } from "./fixtures";

test("every page passes axe's WCAG A and AA rules", async ({ page, wfd }) => {
  const approver = uid("axe");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver } });
  const id = run.handler.handlerId;
  const taskId = await taskOf(wfd, id);
  await wfd.call("PublishEvent", { key: `axe:${approver}`, data: { n: 1 } });
  // A deploy queued behind another of its environment.
  const env = uid("axe");
  await wfd.call("RunWorkflow", { workflow: "deploy", input: { environment: env } });
  const queued = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "deploy", input: { environment: env } });
  const schedule = uid("axe");
  await wfd.call("CreateSchedule", { schedule: { scheduleId: schedule, spec: { cron: "0 9 * * MON-FRI", timeZone: "Europe/Paris" }, action: { workflow: "echo" } } });

  const pages: [string, string][] = [
    ["/ui/", "Overview"],
    [`/ui/inbox?assignee=${approver}`, "Inbox"],
    [`/ui/tasks/${encodeURIComponent(taskId)}`, "Approve expense"],
    ["/ui/handlers", "Handlers"],
    [`/ui/handlers/${id}`, `Handler ${id}`],
    ["/ui/workflows", "Workflows"],
    ["/ui/workflows/expense", "Workflow expense"],
    [`/ui/handlers/${queued.handler.handlerId}`, `Handler ${queued.handler.handlerId}`],
    ["/ui/workflows/deploy", "Workflow deploy"],
    ["/ui/schedules", "Schedules"],
    [`/ui/schedules/${schedule}`, `Schedule ${schedule}`],
    ["/ui/events", "Published events"],
    ["/ui/signin", "Sign in"],
  ];
  for (const [path, heading] of pages) {
    await page.goto(wfd.origin + path);
    await expect(page.getByRole("heading", { name: heading, level: 1 })).toBeVisible();
    await expect(page.locator("[aria-busy=true]")).toHaveCount(0);
    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const found = results.violations.map((v) => `${path}: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    expect(found, `axe on ${path}`).toEqual([]);
  }
});
