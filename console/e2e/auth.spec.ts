// The console with authentication: signing in with a bearer token, who am
// I, the inbox of "my" tasks; and the Origin check of the console's port.
import { expect, test as base } from "@playwright/test";

import { shot, uid } from "./fixtures";
import { startWfd, type Wfd } from "./wfd";

const tokens = `tokens:
  - token: "ada-token"
    subject: ada
    roles: [reader, starter, tasks]
  - token: "admin-token"
    subject: root
    roles: [admin]
`;

const test = base.extend<{}, { authed: Wfd }>({
  authed: [
    async ({}, use) => {
      const wfd = await startWfd(["--auth-tokens", "$DIR/tokens.yaml"], { "tokens.yaml": tokens });
      await use(wfd);
      await wfd.stop();
    },
    { scope: "worker", timeout: 90_000 },
  ],
});

test("sign in with a token: who I am, and my tasks", async ({ page, authed }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // Calls refused before signing in (Unauthenticated) log nothing either.
  page.on("console", (m) => (m.type() === "error" || m.type() === "warning") && errors.push(m.text()));
  const mine = await authed.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver: "ada" } }, "admin-token");
  const other = await authed.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow: "expense", input: { approver: uid("zed") } }, "admin-token");

  await page.goto(`${authed.origin}/ui/signin`);
  await expect(page.getByTestId("identity")).toContainText("Not signed in");
  await page.getByLabel("Token").fill("ada-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("identity")).toContainText("You are ada");
  await expect(page.getByTestId("who")).toHaveText("ada");
  await shot(page, "signin");

  await page.getByRole("link", { name: "Inbox" }).click();
  await expect(page.getByLabel(/Only my tasks/)).toBeChecked();
  const table = page.getByTestId("tasks");
  await expect(table.getByRole("row").filter({ hasText: mine.handler.handlerId })).toHaveCount(1);
  await expect(table.getByRole("row").filter({ hasText: other.handler.handlerId })).toHaveCount(0);

  // The token stays in this tab only.
  const stored = await page.evaluate(() => [sessionStorage.length, localStorage.length]);
  expect(stored).toEqual([1, 0]);
  expect(errors).toEqual([]);
});

test("the console's port accepts its own origin and refuses others", async ({ authed }) => {
  const call = (origin: string) =>
    fetch(`${authed.origin}/wfd.v1.WorkflowService/GetStats`, {
      method: "POST",
      headers: { "content-type": "application/json", origin, authorization: "Bearer admin-token" },
      body: "{}",
    });
  expect((await call(authed.origin)).status).toBe(200);
  expect((await call("http://evil.example")).status).toBe(403);
});
