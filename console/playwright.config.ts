import { defineConfig } from "@playwright/test";

// End-to-end tests of the console in Debian's Chromium (no browser
// download: CHROMIUM or /usr/bin/chromium) against live `wfd serve`
// processes started by the tests from $WFD_BIN (console/test.sh builds it).
export default defineConfig({
  testDir: "e2e",
  testMatch: /.*\.spec\.ts/,
  outputDir: "test-results/artifacts",
  // The machine is shared: one browser at a time, generous waits for
  // conditions (never fixed sleeps).
  workers: 1,
  fullyParallel: false,
  timeout: 180_000,
  expect: { timeout: 30_000 },
  retries: 0,
  reporter: [["list"]],
  use: {
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      // Root in a container has no user namespaces for the sandbox.
      args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
    },
    actionTimeout: 30_000,
    navigationTimeout: 30_000,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
  },
});
