// Formatting of API values for the pages.
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

import { HandlerStatus, Residency, TaskStatus } from "@wfd/client/web";

export function when(t: Timestamp | undefined): string {
  if (!t) {
    return "";
  }
  return timestampDate(t).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}

export function ago(t: Timestamp | undefined, now = Date.now()): string {
  if (!t) {
    return "";
  }
  const s = Math.max(0, Math.round((now - timestampDate(t).getTime()) / 1000));
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m ${s % 60}s`;
  }
  if (s < 86400) {
    return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  }
  return `${Math.floor(s / 86400)}d`;
}

export function statusName(s: HandlerStatus): string {
  return (HandlerStatus[s] ?? "unknown").toLowerCase().replace("unspecified", "unknown");
}

/** "active", "released", or "" (a finished handler has none). */
export function residencyName(r: Residency): string {
  return r === Residency.UNSPECIFIED ? "" : (Residency[r] ?? "").toLowerCase();
}

export function taskStatusName(s: TaskStatus): string {
  return (TaskStatus[s] ?? "unknown").toLowerCase().replace("unspecified", "unknown");
}

/** A google.protobuf.Struct field (generated as plain JSON) as an object for forms. */
export function structJson(s: JsonObject | undefined): { [k: string]: unknown } | undefined {
  return s;
}

export function jsonText(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x), 2);
}

/** A handler's search attributes on one line: name=value, by name. */
export function attributesText(a: { [k: string]: unknown } | undefined): string {
  if (!a) return "";
  return Object.keys(a)
    .sort()
    .map((k) => `${k}=${attributeValue(a[k])}`)
    .join(" ");
}

function attributeValue(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map((x) => String(x)).join(", ") + "]";
  if (typeof v === "string") return JSON.stringify(v);
  return String(v);
}

/** 1st, 2nd, 3rd, 4th, ... */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${suffix}`;
}

/** What a workflow's concurrency limit allows, per key (as wfd workflows says it). */
export function concurrencyText(c: { key: string; max: number; rate: number; per?: { seconds: bigint; nanos: number }; refuse: boolean }): string {
  const parts: string[] = [];
  if (c.max > 0) parts.push(`at most ${c.max} running`);
  if (c.rate > 0) {
    const secs = Number(c.per?.seconds ?? 0n) + (c.per?.nanos ?? 0) / 1e9;
    parts.push(`${c.rate} starts per ${secs}s`);
  }
  const key = c.key ? `input ${c.key}` : "all handlers";
  return `${parts.join(", ")} per ${key}; ${c.refuse ? "refuses" : "queues"} the rest`;
}
