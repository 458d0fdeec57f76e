// A worker process for the tests: node worker-proc.js ADDR MARKER_DIR NAME
// serves kill-t in "block" mode until it is killed.
import { Worker } from "@wfd/client/worker";

import { killWorkflow } from "./kill-workflow.js";

const [addr, markerDir, name] = process.argv.slice(2);
const w = new Worker({ addr: addr!, name: name!, maxRuns: 4, workflows: [killWorkflow("block", markerDir!, name!)] });
const ac = new AbortController();
process.on("SIGTERM", () => ac.abort());
w.run(ac.signal).then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(String(e));
    process.exit(1);
  },
);
