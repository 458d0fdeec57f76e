#!/usr/bin/env node
// @ts-check
// Runs the `expense` workflow on a wfd server: its step asks a person (a
// human task). Finds the task in the approver's inbox, answers it (first
// with an answer the task's schema refuses, to show the error) and prints
// the result.
//
//   npm install && node expense.mjs --addr 127.0.0.1:7233 [--approver ada] [--reject]
import { parseArgs } from "node:util";

import { Code, ConnectError, HandlerStatus, taskToJson, wfdClientForNode } from "@wfd/client/node";

const { values: args } = parseArgs({
  options: {
    addr: { type: "string", default: "127.0.0.1:7233" },
    approver: { type: "string", default: "ada" },
    reject: { type: "boolean", default: false },
  },
});

const client = wfdClientForNode(args.addr);
try {
  const h = await client.run("expense", { amount: 120, approver: args.approver });
  console.log(`started expense handler ${h.handlerId}`);

  // The task is in the inbox once the step has asked.
  /** @type {import("@wfd/client").Task | undefined} */
  let task;
  for (let i = 0; i < 500 && task === undefined; i++) {
    for await (const t of client.listAllTasks({ assignee: args.approver, statuses: ["pending"] })) {
      if (t.handlerId === h.handlerId) task = t;
    }
    if (task === undefined) await new Promise((r) => setTimeout(r, 20));
  }
  if (task === undefined) throw new Error("the task never reached the inbox");
  const t = taskToJson(task);
  console.log(`task ${t.taskId} for ${t.assignee}: ${t.title}`);
  console.log(`  answer schema: ${JSON.stringify(task.answerSchema)}`);

  // An answer the schema refuses changes nothing.
  try {
    await client.completeTask(task.taskId, { approved: "maybe" }, { completedBy: args.approver });
  } catch (e) {
    if (!(e instanceof ConnectError) || e.code !== Code.InvalidArgument) throw e;
    // "... does not match the task's schema: ...", then a line per failing field.
    console.log(`  refused: ${e.rawMessage.split("\n").slice(1).join("; ") || e.rawMessage}`);
  }

  const answer = args.reject ? { approved: false, reason: "no receipt" } : { approved: true };
  const done = await client.completeTask(task.taskId, answer, { completedBy: args.approver });
  console.log(`  answered ${JSON.stringify(done.answer)} by ${done.completedBy}`);

  for await (const _ of client.stream(h.handlerId)); // to the end of the handler
  const result = await client.get(h.handlerId);
  console.log(`result: ${JSON.stringify(result.result)}`);
  if (result.status !== HandlerStatus.COMPLETED) process.exitCode = 1;
} catch (e) {
  if (!(e instanceof ConnectError)) throw e;
  console.error(`wfd: ${Code[e.code]}: ${e.rawMessage}`);
  process.exitCode = 1;
} finally {
  client.close();
}
