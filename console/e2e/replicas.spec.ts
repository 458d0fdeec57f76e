// Replica mode in the console: two `wfd serve` replicas on one real
// PostgreSQL database (a throwaway cluster, postgres.ts); a handler parked
// on replica a, seen through replica b's console: its owner on its page
// and in the list, and both replicas on the overview.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

import { expect, shot, test, uid } from "./fixtures";
import { NoPostgres, startPostgres, type Postgres } from "./postgres";
import { startWfd, type Wfd } from "./wfd";

async function axe(page: Page, path: string): Promise<void> {
  await expect(page.locator("[aria-busy=true]")).toHaveCount(0);
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const found = results.violations.map((v) => `${path}: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(found, `axe on ${path}`).toEqual([]);
}

async function fitsPhone(page: Page, path: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
}

test("replica b's console shows the handler replica a owns, its owner in the list, and both replicas", async ({ page, consoleErrors }) => {
  // A cluster of its own to create, two servers to start.
  test.setTimeout(360_000);
  let pg: Postgres | undefined;
  const started: Wfd[] = [];
  try {
    try {
      pg = await startPostgres();
    } catch (err) {
      if (err instanceof NoPostgres) {
        // The list reporter prints this; the skip's reason is in the report.
        console.log(err.message);
        test.skip(true, err.message);
      }
      throw err;
    }
    // One after the other: the first creates the schema.
    for (const id of ["a", "b"]) {
      started.push(await startWfd(["--store", pg.url, "--replica-id", id]));
    }
    const [a, b] = started;

    // A handler parked on a, and one finished (no replica holds it).
    const parked = uid("approval");
    await a.call("RunWorkflow", { workflow: "approval", handlerId: parked, input: { what: "a second replica" } });
    await expect(async () => {
      const h = await b.call<{ handler: { idle?: object; owner?: string } }>("GetHandler", { handlerId: parked });
      expect(h.handler.idle, "parked").toBeTruthy();
      expect(h.handler.owner).toBe("a");
    }).toPass({ timeout: 30_000 });
    const finished = uid("echo");
    await b.call("RunWorkflow", { workflow: "echo", handlerId: finished, input: { replica: "b" } });

    // The handler's page on b: owned by a, its timeline followed from b.
    const handlerPath = `/ui/handlers/${parked}`;
    await page.goto(b.origin + handlerPath);
    await expect(page.getByTestId("handler-facts")).toContainText("Owner");
    await expect(page.getByTestId("handler-owner")).toHaveText("a");
    await expect(page.getByTestId("timeline").locator('[data-kind="idle"]')).toBeVisible();
    await shot(page, "replica-handler");
    await axe(page, handlerPath);

    // The list on b: an Owner column, a in the parked handler's row.
    await page.goto(`${b.origin}/ui/handlers`);
    const table = page.getByTestId("handlers");
    const row = table.getByRole("row").filter({ has: page.getByRole("link", { name: parked }) });
    await expect(row).toHaveCount(1);
    await expect(table.getByRole("columnheader", { name: "Owner" })).toBeVisible();
    const headers = await table.getByRole("columnheader").allTextContents();
    await expect(row.getByRole("cell").nth(headers.indexOf("Owner"))).toHaveText("a");
    await shot(page, "replica-handlers");
    await axe(page, "/ui/handlers");
    // Only finished handlers on the page: no replica holds any, no column.
    await page.getByLabel("Status").selectOption("completed");
    await expect(table.getByRole("link", { name: finished })).toBeVisible();
    await expect(table.getByRole("link", { name: parked })).toHaveCount(0);
    await expect(table.getByRole("columnheader", { name: "Owner" })).toHaveCount(0);

    // The overview on b: both live replicas, at the addresses they listen on.
    await page.goto(`${b.origin}/ui/`);
    await expect(page.getByRole("heading", { name: "Replicas" })).toBeVisible();
    const replicas = page.getByTestId("replicas").locator("tbody tr");
    await expect(replicas).toHaveCount(2);
    for (const [id, w] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const r = replicas.filter({ has: page.getByRole("cell", { name: id, exact: true }) });
      await expect(r.getByRole("cell").nth(1)).toHaveText(new URL(w.api).host);
    }
    await shot(page, "replica-overview");
    await axe(page, "/ui/");

    // And on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsPhone(page, "/ui/");
    await page.goto(b.origin + handlerPath);
    await expect(page.getByTestId("handler-owner")).toHaveText("a");
    await fitsPhone(page, handlerPath);
    await page.goto(`${b.origin}/ui/handlers`);
    await expect(table.getByRole("columnheader", { name: "Owner" })).toBeVisible();
    await fitsPhone(page, "/ui/handlers");
    expect(consoleErrors).toEqual([]);
  } finally {
    for (const w of started.reverse()) {
      await w.stop();
    }
    await pg?.stop();
  }
});
