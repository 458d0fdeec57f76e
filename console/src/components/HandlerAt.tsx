// The look back: a handler as its stream shows it at one record (GetHandler
// with at_seq), folded by the server from the records, not re-executed.
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { TaskChange } from "@wfd/client/web";

import { jsonText, statusName, structJson, when } from "../format";
import { useSession } from "../session";
import { ErrorNote, useLoad } from "./common";
import { waiterText } from "./Timeline";

export function HandlerAt({ id, seq }: { id: string; seq: bigint }) {
  const { client } = useSession();
  const at = useLoad((signal) => client.getAt(id, seq, { signal }), [client, id, seq]);
  const a = at.data;
  return (
    <section aria-label={`Handler at record ${seq.toString()}`} data-testid="handler-at" className="handler-at">
      <h3>The handler at #{seq.toString()}</h3>
      <ErrorNote error={at.error} />
      {a && (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            {statusName(a.status)}
            {a.released ? ", released" : ""}
          </dd>
          <dt>When</dt>
          <dd>{when(a.time)}</dd>
          <dt>Waiting for</dt>
          <dd>{a.idle ? a.idle.waiters.map(waiterText).join("; ") || "events from outside" : "nothing: busy or finished"}</dd>
          <dt>Steps</dt>
          <dd>
            <ul className="plain">
              {a.steps.map((s) => (
                <li key={s.step}>
                  {s.step}: {s.ended} ended
                  {s.running > 0 && `, ${s.running} running (attempt ${s.attempt}, for ${s.inputEventType})`}
                  {s.error && `, last failed: ${s.error}`}
                </li>
              ))}
            </ul>
          </dd>
          <dt>Written</dt>
          <dd>
            {a.writtenTotal} event{a.writtenTotal === 1 ? "" : "s"}
            {a.written.length > 0 && `, latest: ${a.written[a.written.length - 1].type}`}
          </dd>
          {a.memos.length > 0 && (
            <>
              <dt>Memos</dt>
              <dd>
                <ul className="plain" data-testid="handler-at-memos">
                  {a.memos.map((m) => (
                    <li key={`${m.step}/${m.key}`}>
                      {m.step}: {m.key} = {compactValue(m.value)}
                    </li>
                  ))}
                </ul>
              </dd>
            </>
          )}
          {a.tasks.length > 0 && (
            <>
              <dt>Tasks</dt>
              <dd>
                <ul className="plain" data-testid="handler-at-tasks">
                  {a.tasks.map((t) => (
                    <li key={t.taskId}>{taskAtText(t)}</li>
                  ))}
                </ul>
              </dd>
            </>
          )}
          {a.result && (
            <>
              <dt>Result</dt>
              <dd>
                <pre>{jsonText(structJson(a.result))}</pre>
              </dd>
            </>
          )}
          {a.error && (
            <>
              <dt>Error</dt>
              <dd className="error">{a.error}</dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}

type TaskAt = At["tasks"][number];

/** A task as it stood: "Approve expense (ada): claimed by ada, 1 comment". */
function taskAtText(t: TaskAt): string {
  let s = `"${t.title}" (${t.assignee || "anyone"}): ${(TaskChange[t.change] ?? "changed").toLowerCase()}`;
  if (t.by) s += ` by ${t.by}`;
  if (t.claimedBy && t.change !== TaskChange.CLAIMED) s += `, held by ${t.claimedBy}`;
  if (t.comments > 0) s += `, ${t.comments} comment${t.comments === 1 ? "" : "s"}`;
  if (t.answer) s += `, answer ${jsonText(structJson(t.answer)).replace(/\s*\n\s*/g, " ")}`;
  return s;
}

function compactValue(v: At["memos"][number]["value"]): string {
  return v ? JSON.stringify(toJson(ValueSchema, v)) : "null";
}

type At = NonNullable<Awaited<ReturnType<ReturnType<typeof useSession>["client"]["getAt"]>>>;

/**
 * What changed between two look backs, in words: status, residency,
 * what it waited for, each step's runs, the events written, the outcome.
 * Both are folds of one stream, so the later one only adds to the earlier.
 */
export function diffAt(a: At, b: At): string[] {
  const out: string[] = [];
  if (a.status !== b.status) out.push(`status: ${statusName(a.status)} → ${statusName(b.status)}`);
  if (a.released !== b.released) out.push(b.released ? "released from memory" : "restored into memory");
  if (a.workflowVersion !== b.workflowVersion) out.push(`version: ${a.workflowVersion || "the first"} → ${b.workflowVersion}`);
  const waits = (x: At) => (x.idle ? x.idle.waiters.map(waiterText).join("; ") || "events from outside" : "nothing");
  if (waits(a) !== waits(b)) out.push(`waiting for: ${waits(a)} → ${waits(b)}`);
  const before = new Map(a.steps.map((s) => [s.step, s]));
  for (const s of b.steps) {
    const p = before.get(s.step);
    const ended = s.ended - (p?.ended ?? 0);
    const parts: string[] = [];
    if (ended > 0) parts.push(`${ended} run${ended === 1 ? "" : "s"} ended`);
    if (s.running !== (p?.running ?? 0)) parts.push(`running ${p?.running ?? 0} → ${s.running}`);
    if (s.error && s.error !== p?.error) parts.push(`failed: ${s.error}`);
    if (parts.length > 0) out.push(`step ${s.step}: ${parts.join(", ")}`);
  }
  const written = b.writtenTotal - a.writtenTotal;
  if (written > 0) {
    const types = b.written.slice(-Math.min(written, b.written.length)).map((e) => e.type);
    out.push(`${written} event${written === 1 ? "" : "s"} written: ${types.join(", ")}`);
  }
  const taskWas = new Map(a.tasks.map((t) => [t.taskId, taskAtText(t)]));
  for (const t of b.tasks) {
    const now = taskAtText(t);
    if (taskWas.get(t.taskId) !== now) out.push(`task ${now}`);
  }
  if (b.result && !a.result) out.push(`result: ${jsonText(structJson(b.result)).replace(/\s*\n\s*/g, " ")}`);
  if (b.error && b.error !== a.error) out.push(`error: ${b.error}`);
  return out;
}

/** The changes between the handler at record from and at record to. */
export function HandlerDiff({ id, from, to }: { id: string; from: bigint; to: bigint }) {
  const { client } = useSession();
  const [lo, hi] = from < to ? [from, to] : [to, from];
  const a = useLoad((signal) => client.getAt(id, lo, { signal }), [client, id, lo]);
  const b = useLoad((signal) => client.getAt(id, hi, { signal }), [client, id, hi]);
  const changes = a.data && b.data ? diffAt(a.data, b.data) : undefined;
  return (
    <section aria-label={`Changes from record ${lo.toString()} to ${hi.toString()}`} data-testid="handler-diff" className="handler-at">
      <h3>
        From #{lo.toString()} to #{hi.toString()}
      </h3>
      <ErrorNote error={a.error ?? b.error} />
      {changes && (changes.length === 0 ? <p>Nothing changed.</p> : (
        <ul>
          {changes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      ))}
    </section>
  );
}
