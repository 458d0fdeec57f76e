// Namespaces in the console (issue 27): a server serving acme besides
// default shows a switcher; the same handler id in each namespace is a
// different handler, and switching (with the keyboard) shows the other
// namespace's lists; a link with ?ns= opens in that namespace; the header
// passes axe.
import AxeBuilder from "@axe-core/playwright";
import { expect, test as base } from "@playwright/test";

import { shot, uid } from "./fixtures";
import { startWfd, type Wfd } from "./wfd";

const test = base.extend<{}, { spaced: Wfd }>({
  spaced: [
    async ({}, use) => {
      const wfd = await startWfd(["--namespace", "acme"]);
      await use(wfd);
      await wfd.stop();
    },
    { scope: "worker", timeout: 90_000 },
  ],
});

test("switch namespaces: one id, two handlers", async ({ page, spaced }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => (m.type() === "error" || m.type() === "warning") && errors.push(m.text()));
  const id = uid("ns");
  await spaced.call("RunWorkflow", { workflow: "approval", handlerId: id, attributes: { requester: "in-default" } });
  await spaced.call("RunWorkflow", { workflow: "approval", handlerId: id, attributes: { requester: "in-acme" } }, undefined, "acme");
  const only = uid("acme-only");
  await spaced.call("RunWorkflow", { workflow: "approval", handlerId: only }, undefined, "acme");

  await page.goto(`${spaced.origin}/ui/handlers`);
  const table = page.getByTestId("handlers");
  await expect(table.getByRole("link", { name: id })).toBeVisible();
  await expect(table.getByRole("link", { name: only })).toHaveCount(0);
  const select = page.getByLabel("Namespace");
  await expect(select).toHaveValue("default");

  // With the keyboard alone: focus the switcher, pick acme.
  await select.focus();
  await select.selectOption("acme");
  await expect(page).toHaveURL(/\/ui\/handlers$/);
  await expect(table.getByRole("link", { name: only })).toBeVisible();
  await table.getByRole("link", { name: id }).click();
  await expect(page.getByText("in-acme").first()).toBeVisible();
  await expect(page.getByText("in-default")).toHaveCount(0);
  await shot(page, "namespace-acme");

  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);

  // A shared link names its namespace.
  const fresh = await page.context().newPage();
  await fresh.goto(`${spaced.origin}/ui/handlers/${id}?ns=default`);
  await expect(fresh.getByText("in-default").first()).toBeVisible();
  await expect(fresh.getByLabel("Namespace")).toHaveValue("default");
  expect(errors).toEqual([]);
});
