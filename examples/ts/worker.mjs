// @ts-check
// A TypeScript worker serving approval-ts and expense-ts to a stock
// `wfd serve`:
//
//   node worker.mjs --addr 127.0.0.1:7233 [--name NAME] [--max-runs N]
//
// It runs until SIGINT or SIGTERM, reconnecting on its own when the server
// goes away. Drive its workflows with the CLI (see README.md).
import { parseArgs } from "node:util";

import { Worker } from "@wfd/client/worker";

import { approval, expense } from "./workflows.mjs";

const { values } = parseArgs({
  options: {
    addr: { type: "string", default: "127.0.0.1:7233" },
    name: { type: "string", default: "examples-ts" },
    "max-runs": { type: "string", default: "8" },
  },
});

const worker = new Worker({
  addr: values.addr ?? "127.0.0.1:7233",
  name: values.name,
  maxRuns: Number(values["max-runs"]),
  workflows: [approval, expense],
  logger: {
    info: (msg, fields) => console.error(`worker: ${msg}`, fields ? JSON.stringify(fields) : ""),
    warn: (msg, fields) => console.error(`worker: warning: ${msg}`, fields ? JSON.stringify(fields) : ""),
  },
});
const stop = new AbortController();
process.once("SIGINT", () => stop.abort());
process.once("SIGTERM", () => stop.abort());
console.error(`worker: serving approval-ts and expense-ts to ${values.addr}`);
try {
  await worker.run(stop.signal);
} catch (e) {
  console.error(`worker: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
