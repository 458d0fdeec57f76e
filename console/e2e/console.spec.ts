// The console end to end: a real wfd, a real Chromium, the scenarios of
// issue 15. Every wait is for a condition (Playwright's auto-waiting).
import { expect, shot, taskOf, test, uid } from "./fixtures";

test("start an expense from its form, answer its task badly then well, and watch the handler finish", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("alice");
  await page.goto(`${wfd.origin}/`);
  await expect(page).toHaveURL(/\/ui\/$/);
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  await expect(page.getByTestId("stat-Handlers active")).toHaveText(/\d+/);
  // A single process has no replicas: nothing of them shows, and no error.
  await expect(page.locator("[aria-busy=true]")).toHaveCount(0);
  await expect(page.getByRole("heading", { name: "Replicas" })).toHaveCount(0);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await shot(page, "overview");

  await page.getByRole("link", { name: "Workflows" }).click();
  await page.getByRole("link", { name: "expense" }).click();
  await expect(page.getByRole("heading", { name: "Workflow expense" })).toBeVisible();
  await shot(page, "workflow-expense");
  await page.getByLabel("approver").fill(approver);
  await page.getByRole("button", { name: "Start expense" }).click();

  // The handler's page: its timeline shows it waiting for the task.
  await expect(page).toHaveURL(/\/ui\/handlers\//);
  const handlerId = decodeURIComponent(page.url().split("/handlers/")[1]);
  await expect(page.getByTestId("timeline").locator('[data-kind="idle"]')).toContainText('task "Approve expense"');

  // The inbox, filtered by assignee.
  await page.getByRole("link", { name: "Inbox" }).click();
  await page.getByLabel("Assignee").fill(approver);
  await page.getByLabel("Assignee").press("Enter");
  const row = page.getByTestId("tasks").getByRole("row").filter({ hasText: handlerId });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(approver);
  await shot(page, "inbox");
  await row.getByRole("link", { name: "Approve expense" }).click();

  // The task: its description, the handler, a form from the answer schema.
  await expect(page.getByRole("heading", { name: "Approve expense" })).toBeVisible();
  await expect(page.getByText("Approve or reject this expense report")).toBeVisible();
  await expect(page.getByTestId("task-handler")).toContainText(handlerId);
  const taskId = decodeURIComponent(page.url().split("/tasks/")[1]);

  // A bad answer: rejected without a reason. The error shows at the field,
  // and nothing changes.
  await page.getByRole("radio", { name: "No" }).check();
  await page.getByRole("button", { name: "Submit answer" }).click();
  await expect(page.locator("#answer_reason__error")).toHaveText("is required");
  await shot(page, "task-bad-answer");
  const after = await wfd.call<{ task: { status: string } }>("GetTask", { taskId });
  expect(after.task.status).toBe("TASK_STATUS_PENDING");
  const h = await wfd.call<{ handler: { status: string } }>("GetHandler", { handlerId });
  expect(h.handler.status).toBe("HANDLER_STATUS_RUNNING");

  // A good answer: the handler moves on and completes, live.
  await page.getByRole("radio", { name: "Yes" }).check();
  await page.getByRole("button", { name: "Submit answer" }).click();
  await expect(page.getByTestId("handler-progress")).toContainText("The handler finished: completed");
  await expect(page.getByTestId("timeline").locator('[data-kind="finished"]')).toContainText('"approved": true');
  await shot(page, "task-completed");

  // Its page shows the result.
  await page.getByTestId("task-handler").getByRole("link", { name: handlerId }).click();
  await expect(page.getByTestId("handler-facts")).toContainText("completed");
  await expect(page.getByTestId("handler-result")).toContainText('"approved": true');
  await expect(page.getByTestId("timeline").locator('[data-kind="finished"]')).toHaveCount(1);
  // A record in full, chosen with the keyboard.
  await page.getByTestId("timeline").locator('[data-kind="finished"] button').focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("record-detail")).toContainText('"handlerFinished"');
  await shot(page, "handler-completed");
  expect(consoleErrors).toEqual([]);
});

test("a refusal by the server is shown on the form: the task was answered elsewhere first", async ({ page, wfd }) => {
  const approver = uid("bob");
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver } });
  const handlerId = run.handler.handlerId;
  const taskId = await taskOf(wfd, handlerId);
  await page.goto(`${wfd.origin}/ui/tasks/${encodeURIComponent(taskId)}`);
  await expect(page.getByRole("heading", { name: "Approve expense" })).toBeVisible();
  // Someone else answers first.
  await wfd.call("CompleteTask", { taskId, answer: { approved: true }, completedBy: "someone-else" });
  await page.getByRole("radio", { name: "Yes" }).check();
  await page.getByRole("button", { name: "Submit answer" }).click();
  await expect(page.getByTestId("answer-error")).toContainText("FailedPrecondition");
});

test("filter handlers by workflow, status and residency", async ({ page, wfd, consoleErrors }) => {
  const orders = [uid("order-a"), uid("order-b")];
  for (const id of orders) {
    await wfd.call("RunWorkflow", { workflow: "order", handlerId: id, input: { order_id: id } });
  }
  const echo = uid("echo");
  await wfd.call("RunWorkflow", { workflow: "echo", handlerId: echo, input: { hello: "console" } });
  await wfd.call("ReleaseHandler", { handlerId: orders[1] }).catch(() => undefined);

  await page.goto(`${wfd.origin}/ui/handlers`);
  const table = page.getByTestId("handlers");
  await expect(table.getByRole("link", { name: echo })).toBeVisible();
  // No owners in a single process: no Owner column.
  await expect(table.getByRole("columnheader", { name: "Owner" })).toHaveCount(0);
  await page.getByLabel("Workflow").selectOption("order");
  await expect(table.getByRole("link", { name: echo })).toHaveCount(0);
  for (const id of orders) {
    await expect(table.getByRole("link", { name: id })).toBeVisible();
  }
  // Every row shown is an order.
  // (The column shows the workflow@version each runs.)
  const workflows = await table.locator("tbody tr td:nth-child(2)").allTextContents();
  expect(new Set(workflows.map((w) => w.split("@")[0]))).toEqual(new Set(["order"]));
  await page.getByLabel("Status").selectOption("running");
  await expect(table.getByRole("link", { name: orders[0] })).toBeVisible();
  await page.getByLabel("Residency").selectOption("released");
  await expect(table.getByRole("link", { name: orders[1] })).toBeVisible();
  await expect(table.getByRole("link", { name: orders[0] })).toHaveCount(0);
  await expect(page).toHaveURL(/workflow=order/);
  await shot(page, "handlers-filtered");

  await page.getByLabel("Workflow").selectOption("echo");
  await page.getByLabel("Status").selectOption("completed");
  await page.getByLabel("Residency").selectOption("");
  await expect(table.getByRole("link", { name: echo })).toBeVisible();
  await shot(page, "handlers");
  expect(consoleErrors).toEqual([]);
});

test("release a handler from its page and wake it with an event form", async ({ page, wfd, consoleErrors }) => {
  const id = uid("approval");
  await wfd.call("RunWorkflow", { workflow: "approval", handlerId: id, input: { what: "a new laptop" } });
  await page.goto(`${wfd.origin}/ui/handlers/${id}`);
  const timeline = page.getByTestId("timeline");
  await expect(timeline.locator('[data-kind="idle"]')).toBeVisible();
  await expect(page.getByTestId("handler-facts")).toContainText("active");
  await expect(page.getByTestId("handler-owner")).toHaveCount(0);

  await page.getByRole("button", { name: "Release" }).click();
  await expect(page.getByTestId("handler-facts")).toContainText("released");
  await expect(timeline.locator('[data-kind="released"]')).toBeVisible();
  await shot(page, "handler-released");

  // The form of the "approval" event, generated from its schema.
  await page.getByRole("radio", { name: "Yes" }).check();
  const comment = page.getByLabel("comment");
  if (await comment.count()) {
    await comment.fill("go ahead");
  }
  await page.getByRole("button", { name: "Send approval" }).click();
  await expect(timeline.locator('[data-kind="restored"]')).toBeVisible();
  await expect(timeline.locator('[data-kind="finished"]')).toContainText("completed");
  await expect(page.getByTestId("handler-facts")).toContainText("completed");
  await shot(page, "handler-woken");
  expect(consoleErrors).toEqual([]);
});

test("publish a key that wakes an order", async ({ page, wfd, consoleErrors }) => {
  const orderId = uid("A");
  await page.goto(`${wfd.origin}/ui/workflows/order`);
  await page.getByLabel("order_id").fill(orderId);
  await page.getByRole("button", { name: "Start order" }).click();
  await expect(page).toHaveURL(/\/ui\/handlers\//);
  const handlerUrl = page.url();
  await expect(page.getByTestId("timeline").locator('[data-kind="idle"]')).toContainText(`key payment:${orderId}`);

  await page.getByRole("link", { name: "Events" }).click();
  await page.getByRole("textbox", { name: "Key" }).last().fill(`payment:${orderId}`);
  await page.getByLabel("Data (a JSON object)").fill('{"amount": 42}');
  await page.getByRole("button", { name: "Publish" }).click();
  await expect(page.getByTestId("published")).toContainText("woke 1 handler");
  // The log, latest first, shows it.
  await expect(page.getByTestId("published-events").getByRole("row").nth(1)).toContainText(`payment:${orderId}`);

  // The log of the key alone.
  await page.getByRole("searchbox", { name: "Key" }).fill(`payment:${orderId}`);
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/key=payment/);
  const rows = page.getByTestId("published-events").locator("tbody tr");
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText('{"amount":42}');
  await shot(page, "events");

  await page.goto(handlerUrl);
  await expect(page.getByTestId("timeline").locator('[data-kind="finished"]')).toContainText("completed");
  await expect(page.getByTestId("handler-facts")).toContainText("completed");
  expect(consoleErrors).toEqual([]);
});

test("keyboard and phone: the pages work with the keyboard and fit a phone", async ({ page, wfd, consoleErrors }) => {
  // Something in the inbox and the handler list.
  const run = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver: uid("phone") } });
  await page.goto(`${wfd.origin}/ui/`);
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  // Tab from the top: the skip link, then the page links.
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Overview" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Inbox" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Inbox" })).toBeVisible();
  // The new page's content has the focus; Tab goes on into it.
  await expect(page.locator("main")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Assignee")).toBeFocused();

  await page.setViewportSize({ width: 390, height: 844 });
  for (const [path, heading, name] of [
    ["/ui/", "Overview", "overview"],
    ["/ui/inbox", "Inbox", "inbox"],
    ["/ui/handlers", "Handlers", "handlers"],
    [`/ui/handlers/${run.handler.handlerId}`, `Handler ${run.handler.handlerId}`, "handler"],
    ["/ui/workflows/expense", "Workflow expense", "workflow"],
    ["/ui/events", "Published events", "events"],
    ["/ui/signin", "Sign in", "signin"],
  ]) {
    await page.goto(wfd.origin + path);
    await expect(page.getByRole("heading", { name: heading })).toBeVisible();
    // Nothing wider than the phone.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
    await shot(page, `phone-${name}`);
  }
  expect(consoleErrors).toEqual([]);
});

test("delete a finished handler from its page", async ({ page, wfd, consoleErrors }) => {
  const id = uid("echo");
  await wfd.call("RunWorkflow", { workflow: "echo", handlerId: id, input: { bye: true } });
  await page.goto(`${wfd.origin}/ui/handlers/${id}`);
  await expect(page.getByTestId("handler-facts")).toContainText("completed");
  page.once("dialog", (d) => void d.accept());
  await page.getByRole("button", { name: "Delete" }).click();
  await expect(page).toHaveURL(/\/ui\/handlers$/);
  await expect(wfd.call("GetHandler", { handlerId: id })).rejects.toThrow(/HTTP 404/);
  expect(consoleErrors).toEqual([]);
});

test("start a workflow and wait for its result on the form", async ({ page, wfd, consoleErrors }) => {
  await page.goto(`${wfd.origin}/ui/workflows/echo`);
  await page.getByLabel("Data (a JSON object)").fill('{"greeting": "hello from the console"}');
  await page.getByLabel(/Wait here/).check();
  await page.getByRole("button", { name: "Start echo" }).click();
  const result = page.getByTestId("run-result");
  await expect(result).toContainText("completed");
  await expect(result).toContainText('"greeting": "hello from the console"');
  await shot(page, "workflow-run-wait");
  expect(consoleErrors).toEqual([]);
});

test("the inbox pages: 100 tasks a page, next and previous", async ({ page, wfd, consoleErrors }) => {
  const approver = uid("pager");
  const ids = Array.from({ length: 105 }, (_, i) => `${approver}-${i}`);
  // Eight at a time: the server, not the test, is what is measured elsewhere.
  for (let i = 0; i < ids.length; i += 8) {
    await Promise.all(ids.slice(i, i + 8).map((id) => wfd.call("RunWorkflow", { workflow: "expense", handlerId: id, input: { approver } })));
  }
  await expect(async () => {
    const page1 = await wfd.call<{ tasks?: unknown[]; nextPageToken?: string }>("ListTasks", { assignee: approver, pageSize: 1000 });
    expect(page1.tasks?.length).toBe(105);
  }).toPass({ timeout: 60_000 });

  await page.goto(`${wfd.origin}/ui/inbox?assignee=${approver}`);
  const rows = page.getByTestId("tasks").locator("tbody tr");
  await expect(rows).toHaveCount(100);
  await expect(page.getByRole("button", { name: "← Previous page" })).toBeDisabled();
  await page.getByRole("button", { name: "Next page →" }).click();
  await expect(rows).toHaveCount(5);
  await expect(page.getByText("Page 2")).toBeVisible();
  await expect(page.getByRole("button", { name: "Next page →" })).toBeDisabled();
  await page.getByRole("button", { name: "← Previous page" }).click();
  await expect(rows).toHaveCount(100);
  expect(consoleErrors).toEqual([]);
});
