// The tests' fixtures: one wfd per test file (worker), and a page that
// fails its test on any console error or uncaught exception.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

import { expect, test as base, type Page } from "@playwright/test";

import { startWfd, type Wfd } from "./wfd";

export const screensDir = join(import.meta.dirname, "..", "test-results", "screens");

export const test = base.extend<{ consoleErrors: string[] }, { wfd: Wfd }>({
  wfd: [
    async ({}, use) => {
      const wfd = await startWfd();
      await use(wfd);
      await wfd.stop();
    },
    { scope: "worker", timeout: 90_000 },
  ],
  consoleErrors: async ({ page }, use) => {
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") {
        errors.push(`${m.type()}: ${m.text()}`);
      }
    });
    page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
    await use(errors);
    expect(errors, "the browser's console").toEqual([]);
  },
});

export { expect };

/** Saves a screenshot of the page as an artifact (test-results/screens). */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(screensDir, { recursive: true });
  await page.screenshot({ path: join(screensDir, `${name}.png`), fullPage: true });
}

/** A handler id unique to this run. */
export function uid(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Waits until handler handlerId has a task and returns its id. */
export async function taskOf(wfd: Wfd, handlerId: string): Promise<string> {
  let taskId = "";
  await expect(async () => {
    const list = await wfd.call<{ tasks?: { taskId: string }[] }>("ListTasks", { handlerId });
    taskId = list.tasks?.[0]?.taskId ?? "";
    expect(taskId).not.toBe("");
  }).toPass({ timeout: 30_000 });
  return taskId;
}
