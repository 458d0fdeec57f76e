// Concurrency keys in the console (issue 27): a deploy to an environment
// that already has one running is queued; its page says so and where it
// stands, the handler list filters by the queued status, and once the
// running one is done the queued one is admitted, which its timeline
// records. The workflow's page shows its limit.
import { expect, shot, test, uid } from "./fixtures";

test("a queued handler, its place in line and its admission", async ({ page, wfd, consoleErrors }) => {
  const env = uid("env");
  const [first, second] = [uid("dep"), uid("dep")];
  for (const [id, version] of [
    [first, "1"],
    [second, "2"],
  ]) {
    await wfd.call("RunWorkflow", { workflow: "deploy", handlerId: id, input: { environment: env, version } });
  }

  await page.goto(`${wfd.origin}/ui/handlers/${second}`);
  const slot = page.getByTestId("handler-slot");
  await expect(slot).toContainText(env);
  await expect(slot).toContainText("queued, 1st in line");
  await expect(page.getByText("a slot of its concurrency key (queued)").first()).toBeVisible();
  await shot(page, "handler-queued");

  await page.goto(`${wfd.origin}/ui/handlers?workflow=deploy&status=queued`);
  const table = page.getByTestId("handlers");
  await expect(table.getByRole("link", { name: second })).toBeVisible();
  await expect(table.getByRole("link", { name: first })).toHaveCount(0);

  // The first is done: the second is admitted and runs.
  await wfd.call("SendEvent", { handlerId: first, event: { type: "done", data: { ok: true } } });
  await page.goto(`${wfd.origin}/ui/handlers/${second}`);
  await expect(page.getByTestId("handler-slot")).toContainText("holds a slot");
  await expect(page.getByText("admitted: got a slot of its concurrency key")).toBeVisible();

  await page.goto(`${wfd.origin}/ui/workflows/deploy`);
  await expect(page.getByTestId("workflow-concurrency")).toContainText("at most 1 running per input environment");
  expect(consoleErrors).toEqual([]);
});
