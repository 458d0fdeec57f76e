import { useEffect } from "react";

import { durationMs } from "@bufbuild/protobuf/wkt";

import { useSession } from "../session";
import { ErrorNote, useLoad } from "../components/common";

function ms(d: Parameters<typeof durationMs>[0] | undefined): string {
  return d ? `${durationMs(d).toFixed(1)} ms` : "–";
}

export function Overview() {
  const { client } = useSession();
  const stats = useLoad((signal) => client.stats({ signal }), [client]);
  const { reload: reloadStats } = stats;
  // An overview is a glance: refresh it while it is shown.
  useEffect(() => {
    const t = setInterval(reloadStats, 5000);
    return () => clearInterval(t);
  }, [reloadStats]);
  const s = stats.data;
  const cards: [string, string][] = s
    ? [
        ["Handlers active", String(s.handlersActive)],
        ["Idle in memory", String(s.handlersIdleInMemory)],
        ["Released", String(s.handlersReleased)],
        ["Tasks pending", String(s.tasksPending)],
        ["Rehydrations", String(s.rehydrationsTotal)],
        ["Rehydration p50 / p99", `${ms(s.rehydrateLatencyP50)} / ${ms(s.rehydrateLatencyP99)}`],
        ["Open streams", String(s.streams)],
        ["Workers connected", String(s.workersConnected)],
      ]
    : [];
  return (
    <section aria-labelledby="overview-h">
      <h1 id="overview-h">Overview</h1>
      <ErrorNote error={stats.error} />
      <dl className="cards">
        {cards.map(([k, v]) => (
          <div className="card" key={k}>
            <dt>{k}</dt>
            <dd data-testid={`stat-${k}`}>{v}</dd>
          </div>
        ))}
      </dl>
      {s && (
        <>
          <h2>Handlers by status</h2>
          <table className="grid narrow">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Handlers</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(s.handlersByStatus)
                .sort()
                .map(([k, v]) => (
                  <tr key={k}>
                    <td>{k}</td>
                    <td>{String(v)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </>
      )}
      <p>
        <button type="button" onClick={reloadStats}>
          Refresh
        </button>
      </p>
    </section>
  );
}
