// A handler's live timeline: every record of StreamEvents (internal ones
// included: step runs, idle periods, releases and restores), virtualized
// so that tens of thousands of records scroll smoothly.
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";

import { recordToJson, TaskChange, type Record, type RunWaitingForWorker, type WaiterInfo, type WfdClient } from "@wfd/client/web";

import { errorText } from "../api";
import { jsonText, statusName, structJson, when } from "../format";

export interface Row {
  seq: bigint;
  time: string;
  kind: string;
  text: string;
  /** The record itself, shown in full when its row is chosen. */
  record: Record;
}

/** What a waiter waits for, in words. */
export function waiterText(w: WaiterInfo): string {
  const parts: string[] = [];
  if (w.task) {
    parts.push(`task "${w.task.title}" for ${w.task.assignee || "anyone"}`);
  } else if (w.key) {
    parts.push(`key ${w.key}`);
  } else if (w.children.length > 0) {
    parts.push(`children ${w.children.join(", ")}`);
  } else if (w.eventType) {
    parts.push(`event ${w.eventType}`);
  } else if (w.deadline) {
    // A durable sleep: a timer and nothing else.
    parts.push(`sleeps until ${when(w.deadline)}`);
    if (w.step) {
      parts.push(`(step ${w.step})`);
    }
    return parts.join(" ");
  }
  if (w.step) {
    parts.push(`(step ${w.step})`);
  }
  if (w.deadline) {
    parts.push(`until ${when(w.deadline)}`);
  }
  return parts.join(" ");
}

/**
 * A run waiting for a worker (or one that got it), naming the version a
 * worker must serve: workflow@version when the workflow is known.
 */
export function workerText(v: RunWaitingForWorker, workflow = ""): string {
  const version = v.workflowVersion ? (workflow ? `${workflow}@${v.workflowVersion}` : `version ${v.workflowVersion}`) : workflow;
  if (v.lostWorker) {
    return `step ${v.step}: worker ${v.lostWorker} was lost mid-run; the run is dispatched again`;
  }
  const text = `step ${v.step} ${v.waiting ? "waiting for a worker" : "got a worker"}`;
  if (v.waiting && v.noneConnected) {
    return `${text}: none serving ${version || "the workflow"} is connected`;
  }
  if (!version) {
    return text;
  }
  return v.waiting ? `${text} serving ${version}` : `${text} (${version})`;
}

/**
 * The text of a row, naming workflow@version where a run waits for a
 * worker: the record's version, else version (the one the handler ran
 * then).
 */
export function rowText(r: Row, workflow = "", version = ""): string {
  const k = r.record.kind;
  if (k.case !== "runWaitingForWorker") {
    return r.text;
  }
  return workerText(k.value.workflowVersion || !version ? k.value : { ...k.value, workflowVersion: version }, workflow);
}

/**
 * The version the handler ran at each row, from the one it runs now
 * (current): only an upgrade changes it, and each names the version it
 * left.
 */
export function versionsAt(rows: Row[], current: string): string[] {
  const out = new Array<string>(rows.length);
  let v = current;
  for (let i = rows.length - 1; i >= 0; i--) {
    const k = rows[i].record.kind;
    if (k.case === "handlerUpgraded") {
      v = k.value.fromVersion;
    }
    out[i] = v;
  }
  return out;
}

function compact(v: unknown): string {
  const s = jsonText(v).replace(/\s*\n\s*/g, " ");
  return s.length > 300 ? s.slice(0, 300) + "…" : s;
}

export function recordRow(r: Record): Row {
  const base = { seq: r.seq, time: when(r.time), record: r };
  const k = r.kind;
  switch (k.case) {
    case "stepStateChanged": {
      const v = k.value;
      const state = v.running ? "started" : v.waiting ? "waiting" : v.error ? "failed" : "done";
      let text = `step ${v.step} ${state}`;
      if (v.attempt > 1) {
        text += ` (attempt ${v.attempt})`;
      }
      if (v.inputEventType) {
        text += ` (input ${v.inputEventType})`;
      }
      if (v.emittedEventTypes.length > 0) {
        text += ` → ${v.emittedEventTypes.join(", ")}`;
      }
      if (v.error) {
        text += `: ${v.error}`;
      }
      return { ...base, kind: "step", text };
    }
    case "eventWritten":
      return { ...base, kind: "event", text: `${k.value.type} ${compact(structJson(k.value.data) ?? {})}` };
    case "idleChanged": {
      const v = k.value;
      if (!v.idle) {
        return { ...base, kind: "active", text: "busy again" };
      }
      const waits = v.info?.waiters.map(waiterText) ?? [];
      const ext = v.info?.externalEventTypes ?? [];
      const what = [
        ...(v.info?.queued ? ["a slot of its concurrency key (queued)"] : []),
        ...waits,
        ...(ext.length ? [`events ${ext.join(", ")}`] : []),
      ];
      return { ...base, kind: "idle", text: `idle, waiting for ${what.join("; ") || "nothing"}` };
    }
    case "handlerFinished": {
      const v = k.value;
      const detail = v.error ? v.error : compact(structJson(v.result) ?? {});
      return { ...base, kind: "finished", text: `${statusName(v.status)}: ${detail}` };
    }
    case "taskChanged": {
      const v = k.value;
      const change = (TaskChange[v.change] ?? "changed").toLowerCase();
      let text = `task "${v.title}"${v.assignee ? ` (${v.assignee})` : ""} ${change}`;
      if (v.by) text += ` by ${v.by}`;
      if (v.to) text += ` to ${v.to}`;
      if (v.reason) text += `: ${v.reason}`;
      if (v.text) text += `: "${v.text}"`;
      return { ...base, kind: "task", text };
    }
    case "memoSet": {
      const v = k.value;
      return { ...base, kind: "memo", text: `memo of step ${v.step}: ${v.key} = ${v.value ? JSON.stringify(toJson(ValueSchema, v.value)) : "null"}` };
    }
    case "handlerAdmitted":
      return { ...base, kind: "admitted", text: "admitted: got a slot of its concurrency key, and runs the events it held" };
    case "handlerReleased":
      return { ...base, kind: "released", text: "released from memory to the store" };
    case "handlerRestored":
      return { ...base, kind: "restored", text: "restored into memory" };
    case "runWaitingForWorker":
      return { ...base, kind: "worker", text: workerText(k.value) };
    case "handlerUpgraded": {
      const v = k.value;
      return { ...base, kind: "upgraded", text: `upgraded from ${v.fromVersion || "the first version"} to ${v.toVersion}` };
    }
    default:
      return { ...base, kind: "record", text: "" };
  }
}

/**
 * The records of a handler, live: the stream with internal records
 * (StreamEvents include_internal), resumed after the last sequence number
 * when the connection drops.
 */
export function useRecords(client: WfdClient, handlerId: string): { rows: Row[]; done: boolean; error: string } {
  const [rows, setRows] = useState<Row[]>([]);
  const [done, setDone] = useState(false);
  const [error, setError] = useState("");
  useEffect(() => {
    const ac = new AbortController();
    let pending: Row[] = [];
    let frame = 0;
    setRows([]);
    setDone(false);
    setError("");
    // Records arrive in bursts: render them once per frame.
    const flush = () => {
      frame = 0;
      const batch = pending;
      pending = [];
      setRows((old) => old.concat(batch));
    };
    // The client's stream resumes after the last record it yielded when
    // the connection drops, and ends after the terminal record.
    const run = async () => {
      try {
        for await (const rec of client.stream(handlerId, { includeInternal: true, signal: ac.signal })) {
          pending.push(recordRow(rec));
          if (!frame) {
            frame = requestAnimationFrame(flush);
          }
          if (rec.kind.case === "handlerFinished") {
            setDone(true);
          }
        }
      } catch (err) {
        if (!ac.signal.aborted) {
          setError(errorText(err));
        }
      }
    };
    void run();
    return () => {
      ac.abort();
      if (frame) {
        cancelAnimationFrame(frame);
      }
    };
  }, [client, handlerId]);
  return { rows, done, error };
}

const rowHeight = 28;

/** The rows, virtualized; it follows new records while scrolled to the end. */
export function Timeline({
  rows,
  label,
  workflow = "",
  version = "",
  lookBack,
  diff,
}: {
  rows: Row[];
  label: string;
  workflow?: string;
  version?: string;
  /** Renders the handler as it stood at a chosen record (the look back). */
  lookBack?: (seq: bigint) => ReactNode;
  /** Renders what changed between two records (the look back's diff). */
  diff?: (from: bigint, to: bigint) => ReactNode;
}) {
  const parent = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const [chosen, setChosen] = useState<Row | undefined>(undefined);
  // The record a comparison starts from (the diff), while one is made.
  const [base, setBase] = useState<Row | undefined>(undefined);
  const versions = useMemo(() => (version ? versionsAt(rows, version) : []), [rows, version]);
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => parent.current, estimateSize: () => rowHeight, overscan: 12 });
  useEffect(() => {
    if (follow && rows.length > 0) {
      v.scrollToIndex(rows.length - 1, { align: "end" });
    }
  }, [rows.length, follow, v]);
  return (
    <div className="timeline-wrap">
      <div className="timeline-bar">
        <span>
          {rows.length} record{rows.length === 1 ? "" : "s"}
        </span>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> follow new records
        </label>
      </div>
      <div ref={parent} className="timeline" tabIndex={0} role="region" aria-label={label} data-testid="timeline">
        <ol style={{ height: v.getTotalSize() }} className="timeline-list">
          {v.getVirtualItems().map((item) => {
            const r = rows[item.index];
            const text = rowText(r, workflow, versions[item.index]);
            return (
              <li
                key={item.key}
                className={`trow k-${r.kind}`}
                style={{ transform: `translateY(${item.start}px)`, height: rowHeight }}
                data-kind={r.kind}
              >
                <button type="button" className="trow-button" title={text} aria-pressed={chosen?.seq === r.seq} onClick={() => setChosen(r)}>
                  <span className="seq">{r.seq.toString()}</span>
                  <span className="time">{r.time}</span>
                  <span className="kind">{r.kind}</span>
                  <span className="text">{text}</span>
                </button>
              </li>
            );
          })}
        </ol>
      </div>
      {chosen && (
        <div className="record-detail">
          <div className="timeline-bar">
            <span>Record #{chosen.seq.toString()}</span>
            {diff &&
              (base ? (
                <button type="button" onClick={() => setBase(undefined)}>
                  Stop comparing with #{base.seq.toString()}
                </button>
              ) : (
                <button type="button" onClick={() => setBase(chosen)}>
                  Compare from here
                </button>
              ))}
            <button type="button" onClick={() => setChosen(undefined)}>
              Close
            </button>
          </div>
          {base && base.seq !== chosen.seq && diff?.(base.seq, chosen.seq)}
          {base && base.seq === chosen.seq && <p className="hint">Now choose another record to see what changed since this one.</p>}
          <pre data-testid="record-detail">{jsonText(recordToJson(chosen.record))}</pre>
          {lookBack?.(chosen.seq)}
        </div>
      )}
    </div>
  );
}
