// The workflow of the SIGKILL test, shared by the worker process it kills
// (worker-proc.ts) and the test's own worker: one definition, two codes.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { step, workflow, type WorkflowSpec } from "@wfd/client/worker";

/**
 * "block": the step marks that it runs (a file named after the input's n
 * in markerDir) and never ends; "finish": it completes with who ran it.
 */
export function killWorkflow(mode: "block" | "finish", markerDir: string, who: string): WorkflowSpec {
  return workflow({
    name: "kill-t",
    steps: {
      work: step({ accepts: ["start"], emits: ["stop"] }, async (ctx, ev) => {
        ctx.write("progress", { by: who });
        if (mode === "block") {
          const marker = join(markerDir, `running-${String(ev.data["n"])}`);
          if (!existsSync(marker)) writeFileSync(marker, String(process.pid));
          await new Promise(() => {}); // until the process is killed
        }
        ctx.send("stop", { by: who, attempt: ctx.attempt });
      }),
    },
  });
}
