// Workflow versions in the console: a Go step worker (e2e/worker) serves
// expense-report v1 and v2 (v2 current, with one more step and an
// optional input field); handlers parked on v1 are checked (a dry run),
// moved to v2 from the workflow's page, and their pages say so. Every
// wait is for a condition.
import AxeBuilder from "@axe-core/playwright";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, shot, test, uid } from "./fixtures";

const workflow = "expense-report";

interface Version {
  version: string;
  current?: boolean;
  workersConnected?: number;
  running?: string;
  released?: string;
}

let worker: ChildProcess | undefined;
let buildDir = "";
const workerLogs: string[] = [];

/** The worker binary: $WFD_E2E_WORKER_BIN (test.sh builds it), else built here. */
function workerBin(): string {
  if (process.env.WFD_E2E_WORKER_BIN) {
    return process.env.WFD_E2E_WORKER_BIN;
  }
  buildDir = mkdtempSync(join(tmpdir(), "wfd-e2e-worker-"));
  const bin = join(buildDir, "worker");
  execFileSync("go", ["build", "-o", bin, "./console/e2e/worker"], { cwd: join(import.meta.dirname, "..", ".."), stdio: "inherit" });
  return bin;
}

test.beforeAll(async ({ wfd }) => {
  test.setTimeout(180_000);
  const bin = workerBin();
  worker = spawn(bin, ["--addr", new URL(wfd.api).host], { stdio: ["ignore", "pipe", "pipe"] });
  worker.stdout!.on("data", (d: Buffer) => workerLogs.push(d.toString()));
  worker.stderr!.on("data", (d: Buffer) => workerLogs.push(d.toString()));
  // Both versions registered and served, v2 current.
  await expect(async () => {
    expect(worker!.exitCode, workerLogs.join("")).toBeNull();
    const res = await wfd.call<{ workflows: { version: string; versions?: Version[] }[] }>("ListWorkflows", { name: workflow });
    const w = res.workflows[0];
    expect(w.version).toBe("v2");
    expect(w.versions?.map((v) => [v.version, v.workersConnected ?? 0])).toEqual([
      ["v1", 1],
      ["v2", 1],
    ]);
  }).toPass({ timeout: 120_000 });
});

test.afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once("exit", r));
    worker.kill("SIGTERM");
    await exited;
  }
  if (buildDir) {
    rmSync(buildDir, { recursive: true, force: true });
  }
});

test("handlers parked on v1 are checked, upgraded to v2 from the workflow's page, and say so on their pages", async ({ page, wfd, consoleErrors }) => {
  // Two handlers parked on v1 (waiting for "approve"), one on v2.
  const ids = [uid("v1-a"), uid("v1-b")];
  for (const id of ids) {
    const run = await wfd.call<{ handler: { workflowVersion: string } }>("RunWorkflow", { workflow, version: "v1", handlerId: id, input: { amount: 12 } });
    expect(run.handler.workflowVersion).toBe("v1");
  }
  const fresh = await wfd.call<{ handler: { handlerId: string; workflowVersion: string } }>("RunWorkflow", { workflow, input: { amount: 3, note: "new" } });
  expect(fresh.handler.workflowVersion).toBe("v2");
  for (const id of [...ids, fresh.handler.handlerId]) {
    await expect(async () => {
      const h = await wfd.call<{ handler: { idle?: object } }>("GetHandler", { handlerId: id });
      expect(h.handler.idle).toBeTruthy();
    }).toPass();
  }

  // The list names each workflow's current version.
  await page.goto(`${wfd.origin}/ui/workflows`);
  await expect(page.getByTestId(`current-version-${workflow}`)).toHaveText("Current version: v2");
  await page.getByRole("link", { name: workflow }).click();
  await expect(page.getByRole("heading", { name: `Workflow ${workflow}`, level: 1 })).toBeVisible();

  // The versions: v2 current, both served by the worker, handlers counted.
  const table = page.getByRole("table", { name: "Versions" });
  const v1 = table.getByTestId("version-v1");
  const v2 = table.getByTestId("version-v2");
  await expect(v2.getByRole("rowheader")).toContainText("current");
  await expect(v1.getByRole("rowheader")).not.toContainText("current");
  await expect(v1.getByTestId("version-workers")).toHaveText("console-e2e (1)");
  await expect(v2.getByTestId("version-workers")).toHaveText("console-e2e (1)");
  await expect(v1).toContainText("console-e2e");
  const unfinished = async (row: typeof v1) =>
    Number(await row.getByTestId("version-running").innerText()) + Number(await row.getByTestId("version-released").innerText());
  expect(await unfinished(v1)).toBe(2);
  expect(await unfinished(v2)).toBe(1);
  await expect(v1.getByTestId("version-finished")).toHaveText("0");
  // The current version has no upgrade, no promotion and no deletion.
  await expect(v2.getByRole("button")).toHaveCount(0);
  await shot(page, "versions");

  // v1 cannot go while handlers run it: the server's refusal shows.
  page.once("dialog", (d) => void d.accept());
  await v1.getByRole("button", { name: "Delete version v1" }).click();
  await expect(page.getByRole("alert")).toContainText("FailedPrecondition: 2 unfinished handlers run expense-report@v1");

  // The check: a dry run, with the keyboard; the target defaults to the current version.
  await v1.getByRole("button", { name: "Upgrade handlers of v1" }).click();
  const panel = page.getByTestId("upgrade");
  await expect(panel.getByRole("heading", { name: "Upgrade handlers of v1" })).toBeVisible();
  await expect(panel.getByLabel("Target version")).toHaveValue("v2");
  await panel.getByRole("button", { name: "Check" }).focus();
  await page.keyboard.press("Enter");
  await expect(panel.getByTestId("upgrade-summary")).toHaveText("To v2: 2 can move, 0 refused, 0 busy.");
  const outcomes = panel.getByTestId("upgrade-outcomes");
  for (const id of ids) {
    await expect(outcomes.getByRole("row").filter({ hasText: id })).toContainText("can move");
  }
  // Nothing moved yet.
  const before = await wfd.call<{ handler: { workflowVersion: string } }>("GetHandler", { handlerId: ids[0] });
  expect(before.handler.workflowVersion).toBe("v1");
  // The page with the check's outcomes passes axe.
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
  await shot(page, "versions-check");

  // The upgrade itself.
  await panel.getByRole("button", { name: "Upgrade 2 handlers" }).click();
  await expect(panel.getByTestId("upgrade-summary")).toHaveText("Moved 2 handlers from v1 to v2.");
  for (const id of ids) {
    await expect(outcomes.getByRole("row").filter({ hasText: id })).toContainText("moved");
  }
  // The counts follow: v1 has none left (nothing to upgrade), v2 has three.
  await expect(v1.getByRole("button", { name: "Upgrade handlers of v1" })).toHaveCount(0);
  await expect.poll(() => unfinished(v1)).toBe(0);
  await expect.poll(() => unfinished(v2)).toBe(3);
  await shot(page, "versions-upgraded");

  // The handler's page: its version, and the upgrade in its timeline.
  await outcomes.getByRole("link", { name: ids[0] }).click();
  await expect(page.getByRole("heading", { name: `Handler ${ids[0]}`, level: 1 })).toBeVisible();
  await expect(page.getByTestId("handler-version")).toHaveText("v2");
  await expect(page.getByTestId("timeline").locator('[data-kind="upgraded"]')).toContainText("upgraded from v1 to v2");
  // It takes what only v2 takes, and finishes on v2's code.
  await wfd.call("SendEvent", { handlerId: ids[0], event: { type: "audit", data: {} } });
  await wfd.call("SendEvent", { handlerId: ids[0], event: { type: "approve", data: {} } });
  await expect(page.getByTestId("handler-result")).toContainText('"version": "v2"');
  await shot(page, "handler-upgraded");

  // Back on the workflow: make v1 current, then v2 again; v1 (no handler runs it) cannot go while its worker serves it.
  await page.goto(`${wfd.origin}/ui/workflows/${workflow}`);
  await v1.getByRole("button", { name: "Make current v1" }).click();
  await expect(page.getByTestId("versions-done")).toHaveText("v1 is current now.");
  await expect(v1.getByRole("rowheader")).toContainText("current");
  await v2.getByRole("button", { name: "Make current v2" }).click();
  await expect(page.getByTestId("versions-done")).toHaveText("v2 is current now.");
  await expect(v2.getByRole("rowheader")).toContainText("current");
  // A worker that still serves v1 would register it again: not yet.
  page.once("dialog", (d) => void d.accept());
  await v1.getByRole("button", { name: "Delete version v1" }).click();
  await expect(page.getByRole("alert")).toContainText("connected workers still serve expense-report@v1");

  // Without a worker, v1 can go, and a run waits for one serving its workflow@version.
  const exited = new Promise((r) => worker!.once("exit", r));
  worker!.kill("SIGTERM");
  await exited;
  await expect(async () => {
    const res = await wfd.call<{ workflows: { workersConnected?: number }[] }>("ListWorkflows", { name: workflow });
    expect(res.workflows[0].workersConnected ?? 0).toBe(0);
  }).toPass();
  await page.reload();
  page.once("dialog", (d) => void d.accept());
  await v1.getByRole("button", { name: "Delete version v1" }).click();
  await expect(page.getByTestId("versions-done")).toHaveText("Version v1 deleted.");
  await expect(v1).toHaveCount(0);
  const waiting = await wfd.call<{ handler: { handlerId: string } }>("RunWorkflow", { workflow, input: { amount: 1 } });
  await page.goto(`${wfd.origin}/ui/handlers/${encodeURIComponent(waiting.handler.handlerId)}`);
  // No worker is connected at all: the timeline says so (not that the
  // workers are busy).
  await expect(page.getByTestId("timeline").locator('[data-kind="worker"]').first()).toContainText(
    "step review waiting for a worker: none serving expense-report@v2 is connected",
  );
  await expect(page.getByTestId("handler-waiting-for-worker")).toContainText("step review needs a worker serving expense-report@v2");
  await expect(page.getByTestId("handler-waiting-for-worker")).toContainText("none is connected");
  await shot(page, "handler-waiting-for-worker");
  await expect(page.getByRole("alert")).toHaveCount(0);
  expect(consoleErrors).toEqual([]);
});
