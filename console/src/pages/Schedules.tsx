import { useState } from "react";

import type { Duration } from "@bufbuild/protobuf/wkt";
import { OverlapPolicy, ScheduleOutcomeKind, type Schedule } from "@wfd/client/web";

import { errorText } from "../api";
import { Badge, ErrorNote, Notice, useLoad } from "../components/common";
import { ago, jsonText, structJson, when } from "../format";
import { Link } from "../router";
import { useSession } from "../session";

/** The schedules: what each starts and when, its next ticks and recent runs, and pause, resume and trigger now. */
export function Schedules() {
  const { client } = useSession();
  const list = useLoad((signal) => client.listSchedules({ pageSize: 200 }, { signal }), [client]);
  const ops = useScheduleActions(list.reload);
  const schedules = list.data?.schedules ?? [];
  return (
    <section aria-labelledby="schedules-h">
      <h1 id="schedules-h">Schedules</h1>
      <p className="hint">
        Each schedule starts a handler of its workflow at every tick of its cron expression or interval. Create them with the API, the clients or{" "}
        <code>wfd schedules create</code>.
      </p>
      <ErrorNote error={list.error} />
      <Said said={ops.said} />
      {list.data && schedules.length === 0 && <Notice>No schedules.</Notice>}
      {schedules.length > 0 && (
        <div className="scroll-x">
          <table className="grid" data-testid="schedules">
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">Workflow</th>
                <th scope="col">When</th>
                <th scope="col">State</th>
                <th scope="col">Next ticks</th>
                <th scope="col">Recent runs</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => (
                <tr key={s.scheduleId} data-schedule={s.scheduleId}>
                  <th scope="row">
                    <Link to={`/schedules/${encodeURIComponent(s.scheduleId)}`}>{s.scheduleId}</Link>
                  </th>
                  <td>
                    {s.action?.workflow}
                    {s.action?.version && <span className="sub">@{s.action.version}</span>}
                  </td>
                  <td>{specText(s)}</td>
                  <td>
                    <Badge value={s.paused ? "paused" : "active"} />
                    {s.note && <span className="sub"> {s.note}</span>}
                  </td>
                  <td>
                    <ul className="plain">
                      {(s.info?.nextTicks ?? []).slice(0, 3).map((t, i) => (
                        <li key={i}>{when(t)}</li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <ul className="plain" aria-label={`Recent runs of ${s.scheduleId}`}>
                      {(s.info?.recent ?? []).slice(0, 5).map((o, i) => (
                        <li key={i}>
                          {outcomeName(o.kind)} {when(o.tick)}
                          {o.handlerId && (
                            <>
                              {" "}
                              <Link to={`/handlers/${encodeURIComponent(o.handlerId)}`}>{o.handlerId}</Link>
                            </>
                          )}
                          {o.reason && <span className="sub words"> {o.reason}</span>}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <ScheduleButtons s={s} ops={ops} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

type Said = { text: string; handler?: string; error?: boolean };
type ScheduleOps = { busy: string; said: Said; act(id: string, what: string, fn: () => Promise<string | undefined>): Promise<void> };

/** Trigger now, pause and resume (operator actions), then reload. */
function useScheduleActions(reload: () => void): ScheduleOps {
  const [busy, setBusy] = useState("");
  const [said, setSaid] = useState<Said>({ text: "" });
  const act = async (id: string, what: string, fn: () => Promise<string | undefined>) => {
    setBusy(id);
    try {
      const handler = await fn();
      setSaid({ text: `${what} ${id}`, handler });
    } catch (err) {
      setSaid({ text: `${what} ${id}: ${errorText(err)}`, error: true });
    } finally {
      setBusy("");
      reload();
    }
  };
  return { busy, said, act };
}

/** What the last action did (a live region), with the handler a trigger started. */
function Said({ said }: { said: Said }) {
  return (
    <div aria-live="polite">
      {said.text &&
        (said.error ? (
          <p className="error" role="alert">
            {said.text}
          </p>
        ) : (
          <Notice>
            {said.text}
            {said.handler && (
              <>
                {": started "}
                <Link to={`/handlers/${encodeURIComponent(said.handler)}`}>{said.handler}</Link>
              </>
            )}
          </Notice>
        ))}
    </div>
  );
}

function ScheduleButtons({ s, ops }: { s: Schedule; ops: ScheduleOps }) {
  const { client } = useSession();
  const id = s.scheduleId;
  const busy = ops.busy === id;
  return (
    <div className="actions">
      <button
        type="button"
        disabled={busy}
        aria-label={`Trigger now ${id}`}
        onClick={() => ops.act(id, "Triggered", async () => (await client.triggerSchedule(id)).started[0])}
      >
        Trigger now
      </button>
      {s.paused ? (
        <button type="button" disabled={busy} aria-label={`Resume ${id}`} onClick={() => ops.act(id, "Resumed", async () => void (await client.resumeSchedule(id)))}>
          Resume
        </button>
      ) : (
        <button type="button" disabled={busy} aria-label={`Pause ${id}`} onClick={() => ops.act(id, "Paused", async () => void (await client.pauseSchedule(id)))}>
          Pause
        </button>
      )}
    </div>
  );
}

/** One schedule: its spec and policy, action, counts, next ticks, running handlers and every recent outcome. */
export function SchedulePage({ id }: { id: string }) {
  const { client } = useSession();
  const got = useLoad((signal) => client.getSchedule(id, { signal }), [client, id]);
  const ops = useScheduleActions(got.reload);
  const s = got.data;
  const spec = s?.spec;
  const info = s?.info;
  return (
    <section aria-labelledby="schedule-h">
      <p>
        <Link to="/schedules">← Schedules</Link>
      </p>
      <h1 id="schedule-h">
        Schedule <code>{id}</code>
      </h1>
      <ErrorNote error={got.error} />
      <Said said={ops.said} />
      {s && (
        <>
          <ScheduleButtons s={s} ops={ops} />
          <div className="two-col">
            <div>
              <dl className="facts" data-testid="schedule-facts">
                <dt>Workflow</dt>
                <dd>
                  <Link to={`/workflows/${encodeURIComponent(s.action?.workflow ?? "")}`}>{s.action?.workflow}</Link>
                  {s.action?.version ? (
                    <>
                      {" "}
                      version <code>{s.action.version}</code>
                    </>
                  ) : (
                    " (its current version at each tick)"
                  )}
                </dd>
                <dt>When</dt>
                <dd>{specText(s)}</dd>
                {spec?.startAt && (
                  <>
                    <dt>Not before</dt>
                    <dd>{when(spec.startAt)}</dd>
                  </>
                )}
                {spec?.endAt && (
                  <>
                    <dt>Not after</dt>
                    <dd>{when(spec.endAt)}</dd>
                  </>
                )}
                <dt>State</dt>
                <dd>
                  <Badge value={s.paused ? "paused" : "active"} />
                </dd>
                {s.note && (
                  <>
                    <dt>Note</dt>
                    <dd>{s.note}</dd>
                  </>
                )}
                <dt>Overlap</dt>
                <dd>{overlapName(s.policy?.overlap ?? OverlapPolicy.UNSPECIFIED)}</dd>
                <dt>Catch-up window</dt>
                <dd>{s.policy?.catchupWindow ? durationText(s.policy.catchupWindow) : "1m (default)"}</dd>
                <dt>Ticks</dt>
                <dd data-testid="schedule-counts">
                  {`${info?.started ?? 0} started, ${info?.skipped ?? 0} skipped, ${info?.missed ?? 0} missed, ${info?.failed ?? 0} failed`}
                </dd>
                <dt>Created</dt>
                <dd>{when(s.createdAt)}</dd>
                <dt>Updated</dt>
                <dd>
                  {when(s.updatedAt)} (revision {s.revision.toString()})
                </dd>
              </dl>
              <h2>Next ticks</h2>
              {(info?.nextTicks ?? []).length === 0 ? (
                <p className="hint">None{s.paused ? " while paused" : ""}.</p>
              ) : (
                <ol className="plain" data-testid="schedule-next">
                  {(info?.nextTicks ?? []).map((t, i) => (
                    <li key={i}>{when(t)}</li>
                  ))}
                </ol>
              )}
              {(info?.running ?? []).length > 0 && (
                <>
                  <h2>Still running</h2>
                  <ul className="plain">
                    {info?.running.map((h) => (
                      <li key={h}>
                        <Link to={`/handlers/${encodeURIComponent(h)}`}>{h}</Link>
                      </li>
                    ))}
                  </ul>
                </>
              )}
              <h2>Input</h2>
              <pre>{jsonText(structJson(s.action?.input) ?? {})}</pre>
            </div>
            <div>
              <h2 id="schedule-recent-h">Recent runs</h2>
              {(info?.recent ?? []).length === 0 ? (
                <p className="hint">None yet.</p>
              ) : (
                <div className="scroll-x">
                  <table className="grid" aria-labelledby="schedule-recent-h" data-testid="schedule-recent">
                    <thead>
                      <tr>
                        <th scope="col">Tick</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Handler</th>
                      </tr>
                    </thead>
                    <tbody>
                      {info?.recent.map((o, i) => (
                        <tr key={i}>
                          <td title={o.at ? `recorded ${when(o.at)}` : undefined}>
                            {when(o.tick)}
                            {o.tick && <span className="sub"> ({ago(o.tick)} ago)</span>}
                          </td>
                          <td>
                            {outcomeName(o.kind)}
                            {o.reason && <span className="sub words"> {o.reason}</span>}
                          </td>
                          <td>{o.handlerId && <Link to={`/handlers/${encodeURIComponent(o.handlerId)}`}>{o.handlerId}</Link>}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </div>
          </div>
        </>
      )}
    </section>
  );
}

/** "cron 0 9 * * MON-FRI (Europe/Paris)" or "every 1h30m". */
function specText(s: Schedule): string {
  const spec = s.spec;
  if (!spec) return "";
  if (spec.cron) return `cron ${spec.cron}${spec.timeZone ? ` (${spec.timeZone})` : " (UTC)"}`;
  if (!spec.interval) return "";
  const phase = spec.phase && (Number(spec.phase.seconds) > 0 || spec.phase.nanos > 0) ? ` (phase ${durationText(spec.phase)})` : "";
  return `every ${durationText(spec.interval)}${phase}`;
}

function durationText(d: Duration): string {
  let s = Number(d.seconds);
  const parts: string[] = [];
  for (const [unit, n] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (s >= n) {
      parts.push(`${Math.floor(s / n)}${unit}`);
      s %= n;
    }
  }
  if (s > 0 || parts.length === 0) parts.push(`${s}s`);
  return parts.join("");
}

function outcomeName(k: ScheduleOutcomeKind): string {
  return (ScheduleOutcomeKind[k] ?? "unknown").toLowerCase().replaceAll("_", " ");
}

function overlapName(p: OverlapPolicy): string {
  return p === OverlapPolicy.UNSPECIFIED ? "skip (default)" : (OverlapPolicy[p] ?? "unknown").toLowerCase().replaceAll("_", " ");
}
