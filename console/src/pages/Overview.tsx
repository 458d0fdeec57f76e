import { useEffect } from "react";

import { durationMs } from "@bufbuild/protobuf/wkt";

import { isUnimplemented } from "../api";
import { useSession } from "../session";
import { ErrorNote, useLoad } from "../components/common";
import { ago, when } from "../format";

function ms(d: Parameters<typeof durationMs>[0] | undefined): string {
  return d ? `${durationMs(d).toFixed(1)} ms` : "–";
}

export function Overview() {
  const { client } = useSession();
  const stats = useLoad((signal) => client.stats({ signal }), [client]);
  // Replica mode: the live replicas sharing the database. A single process
  // has none (and a server older than ListReplicas cannot say): then the
  // page shows nothing of them.
  const replicas = useLoad(
    (signal) =>
      client.replicas({ signal }).catch((err: unknown) => {
        if (isUnimplemented(err)) return [];
        throw err;
      }),
    [client],
  );
  const { reload: reloadStats } = stats;
  const { reload: reloadReplicas } = replicas;
  // An overview is a glance: refresh it while it is shown.
  useEffect(() => {
    const t = setInterval(() => {
      reloadStats();
      reloadReplicas();
    }, 5000);
    return () => clearInterval(t);
  }, [reloadStats, reloadReplicas]);
  const refresh = () => {
    reloadStats();
    reloadReplicas();
  };
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
  const rs = replicas.data ?? [];
  // Busy until both have answered once (not while refreshed).
  const first = (!stats.data && !stats.error) || (!replicas.data && !replicas.error);
  return (
    <section aria-labelledby="overview-h" aria-busy={first}>
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
      {/* Signed out, both calls fail alike: say it once. */}
      <ErrorNote error={replicas.error === stats.error ? "" : replicas.error} />
      {rs.length > 0 && (
        <>
          <h2 id="replicas-h">Replicas</h2>
          <div className="scroll-x">
            <table className="grid narrow" data-testid="replicas" aria-labelledby="replicas-h">
              <thead>
                <tr>
                  <th scope="col">Replica</th>
                  <th scope="col">Address</th>
                  <th scope="col">Started</th>
                  <th scope="col">Lease expires</th>
                </tr>
              </thead>
              <tbody>
                {rs.map((r) => (
                  <tr key={r.id}>
                    <td>{r.id}</td>
                    <td>{r.address}</td>
                    <td title={when(r.startedAt)}>{ago(r.startedAt)} ago</td>
                    <td>{when(r.expiresAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <p>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </p>
    </section>
  );
}
