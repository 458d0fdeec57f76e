import { useState } from "react";

import type { Duration } from "@bufbuild/protobuf/wkt";
import { ScheduleOutcomeKind, type Schedule } from "@wfd/client/web";

import { errorText } from "../api";
import { Badge, ErrorNote, Notice, useLoad } from "../components/common";
import { when } from "../format";
import { Link } from "../router";
import { useSession } from "../session";

/** The schedules: what each starts and when, its next ticks and recent runs, and pause, resume and trigger now. */
export function Schedules() {
  const { client } = useSession();
  const list = useLoad((signal) => client.listSchedules({ pageSize: 200 }, { signal }), [client]);
  const [busy, setBusy] = useState("");
  const [said, setSaid] = useState<{ text: string; handler?: string; error?: boolean }>({ text: "" });
  const act = async (id: string, what: string, fn: () => Promise<string | undefined>) => {
    setBusy(id);
    try {
      const handler = await fn();
      setSaid({ text: `${what} ${id}`, handler });
    } catch (err) {
      setSaid({ text: `${what} ${id}: ${errorText(err)}`, error: true });
    } finally {
      setBusy("");
      list.reload();
    }
  };
  const schedules = list.data?.schedules ?? [];
  return (
    <section aria-labelledby="schedules-h">
      <h1 id="schedules-h">Schedules</h1>
      <p className="hint">
        Each schedule starts a handler of its workflow at every tick of its cron expression or interval. Create them with the API, the clients or{" "}
        <code>wfd schedules create</code>.
      </p>
      <ErrorNote error={list.error} />
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
                  <th scope="row">{s.scheduleId}</th>
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
                      {(s.info?.recent ?? [])
                        .slice(-5)
                        .reverse()
                        .map((o, i) => (
                          <li key={i}>
                            {outcomeName(o.kind)} {when(o.tick)}
                            {o.handlerId && (
                              <>
                                {" "}
                                <Link to={`/handlers/${encodeURIComponent(o.handlerId)}`}>{o.handlerId}</Link>
                              </>
                            )}
                            {o.reason && <span className="sub"> {o.reason}</span>}
                          </li>
                        ))}
                    </ul>
                  </td>
                  <td>
                    <div className="actions">
                      <button
                        type="button"
                        disabled={busy === s.scheduleId}
                        aria-label={`Trigger now ${s.scheduleId}`}
                        onClick={() => act(s.scheduleId, "Triggered", async () => (await client.triggerSchedule(s.scheduleId)).started[0])}
                      >
                        Trigger now
                      </button>
                      {s.paused ? (
                        <button
                          type="button"
                          disabled={busy === s.scheduleId}
                          aria-label={`Resume ${s.scheduleId}`}
                          onClick={() => act(s.scheduleId, "Resumed", async () => void (await client.resumeSchedule(s.scheduleId)))}
                        >
                          Resume
                        </button>
                      ) : (
                        <button
                          type="button"
                          disabled={busy === s.scheduleId}
                          aria-label={`Pause ${s.scheduleId}`}
                          onClick={() => act(s.scheduleId, "Paused", async () => void (await client.pauseSchedule(s.scheduleId)))}
                        >
                          Pause
                        </button>
                      )}
                    </div>
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

/** "cron 0 9 * * MON-FRI (Europe/Paris)" or "every 1h30m". */
function specText(s: Schedule): string {
  const spec = s.spec;
  if (!spec) return "";
  if (spec.cron) return `cron ${spec.cron}${spec.timeZone ? ` (${spec.timeZone})` : " (UTC)"}`;
  return spec.interval ? `every ${durationText(spec.interval)}` : "";
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
  return (ScheduleOutcomeKind[k] ?? "unknown").toLowerCase().replace("_", " ");
}
