// A workflow's versions (ListWorkflows with its name): which is current,
// who registered and serves each, its handlers, and the operator's
// actions: move handlers to another version (UpgradeHandlers, checked
// first with a dry run), make a version current, delete an unused one.
import { useState } from "react";

import { UpgradeOutcome, type HandlerUpgrade, type WorkflowVersion } from "@wfd/client/web";

import { errorText, isUnimplemented } from "../api";
import { Badge, ErrorNote, useLoad } from "../components/common";
import { when } from "../format";
import { Link } from "../router";
import { useSession } from "../session";

const callTimeoutMs = 30_000;
// The server's largest page (UpgradeHandlersRequest.page_size).
const pageSize = 1000;

export function outcomeName(o: UpgradeOutcome): string {
  switch (o) {
    case UpgradeOutcome.CAN_MOVE:
      return "can move";
    case UpgradeOutcome.MOVED:
      return "moved";
    case UpgradeOutcome.REFUSED:
      return "refused";
    case UpgradeOutcome.BUSY:
      return "busy";
    default:
      return "unknown";
  }
}

function tally(hs: HandlerUpgrade[]): Map<UpgradeOutcome, number> {
  const m = new Map<UpgradeOutcome, number>();
  for (const h of hs) {
    m.set(h.outcome, (m.get(h.outcome) ?? 0) + 1);
  }
  return m;
}

function plural(n: number, one: string, many = one + "s"): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Hidden text that completes a button's name for screen readers (e.g. which version). */
function Hidden({ children }: { children: string }) {
  return <span className="visually-hidden">{children}</span>;
}

export function Versions({ name }: { name: string }) {
  const { client } = useSession();
  const listing = useLoad(
    async (signal) => (await client.service.listWorkflows({ name }, { signal, timeoutMs: callTimeoutMs })).workflows[0],
    [client, name],
  );
  const [upgrading, setUpgrading] = useState("");
  const [action, setAction] = useState("");
  const [actionError, setActionError] = useState("");
  const [done, setDone] = useState("");
  const w = listing.data;
  const versions = w?.versions ?? [];
  const current = versions.find((v) => v.current)?.version ?? w?.version ?? "";

  const act = async (label: string, fn: () => Promise<unknown>, ok: string) => {
    setAction(label);
    setActionError("");
    setDone("");
    try {
      await fn();
      setDone(ok);
      listing.reload();
    } catch (err) {
      setActionError(isUnimplemented(err) ? `${label}: this server cannot do that yet (Unimplemented)` : errorText(err));
    } finally {
      setAction("");
    }
  };

  return (
    <section aria-labelledby="versions-h" data-testid="versions">
      <h2 id="versions-h">Versions</h2>
      <ErrorNote error={listing.error} />
      {w && versions.length > 0 && (
        <div className="scroll-x">
          <table className="grid" aria-labelledby="versions-h" data-testid="versions-table">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Source</th>
                <th scope="col">Workers</th>
                <th scope="col">Running</th>
                <th scope="col">Released</th>
                <th scope="col">Finished</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <VersionRow
                  key={v.version}
                  v={v}
                  busy={!!action}
                  upgrading={upgrading === v.version}
                  onUpgrade={() => {
                    setDone("");
                    setActionError("");
                    setUpgrading(upgrading === v.version ? "" : v.version);
                  }}
                  onMakeCurrent={() =>
                    act("Make current", () => client.service.setCurrentVersion({ workflow: name, version: v.version }, { timeoutMs: callTimeoutMs }), `${v.version} is current now.`)
                  }
                  onDelete={() =>
                    window.confirm(`Delete version ${v.version} of ${name}?`) &&
                    act(
                      "Delete version",
                      async () => {
                        await client.service.deleteWorkflowVersion({ workflow: name, version: v.version }, { timeoutMs: callTimeoutMs });
                        if (upgrading === v.version) setUpgrading("");
                      },
                      `Version ${v.version} deleted.`,
                    )
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={actionError} />
      {done && (
        <p role="status" className="ok" data-testid="versions-done">
          {done}
        </p>
      )}
      {w && upgrading && versions.some((v) => v.version === upgrading) && (
        <UpgradePanel
          key={upgrading}
          workflow={name}
          from={upgrading}
          targets={versions.filter((v) => v.version !== upgrading).map((v) => v.version)}
          current={current}
          onMoved={listing.reload}
          onClose={() => setUpgrading("")}
        />
      )}
    </section>
  );
}

function VersionRow({
  v,
  busy,
  upgrading,
  onUpgrade,
  onMakeCurrent,
  onDelete,
}: {
  v: WorkflowVersion;
  busy: boolean;
  upgrading: boolean;
  onUpgrade(): void;
  onMakeCurrent(): void;
  onDelete(): void;
}) {
  const unfinished = v.running + v.released;
  // A version workers registered (built_in is false while one serves it;
  // a stored version names its source either way).
  const workerDefined = !v.builtIn || !!v.source;
  return (
    <tr data-testid={`version-${v.version}`}>
      <th scope="row">
        <code>{v.version}</code> {v.current && <Badge value="current" />}
      </th>
      <td>
        {workerDefined ? v.source || "workers" : "built in"}
        {v.createdAt && <div className="sub">{when(v.createdAt)}</div>}
      </td>
      <td data-testid="version-workers">{!workerDefined ? "–" : v.workers.length > 0 ? `${v.workers.join(", ")} (${v.workersConnected})` : "none connected"}</td>
      <td data-testid="version-running">{v.running.toString()}</td>
      <td data-testid="version-released">{v.released.toString()}</td>
      <td data-testid="version-finished">{v.finished.toString()}</td>
      <td>
        <div className="actions">
          {!v.current && unfinished > 0n && (
            <button type="button" aria-expanded={upgrading} disabled={busy} onClick={onUpgrade}>
              Upgrade handlers<Hidden>{` of ${v.version}`}</Hidden>
            </button>
          )}
          {!v.current && workerDefined && (
            <button type="button" disabled={busy} onClick={onMakeCurrent}>
              Make current<Hidden>{` ${v.version}`}</Hidden>
            </button>
          )}
          {!v.current && workerDefined && (
            <button type="button" className="danger" disabled={busy} onClick={onDelete}>
              Delete version<Hidden>{` ${v.version}`}</Hidden>
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}

/** Moves the running handlers of one version to another: a dry run first, then the move of those that can. */
function UpgradePanel({
  workflow,
  from,
  targets,
  current,
  onMoved,
  onClose,
}: {
  workflow: string;
  from: string;
  targets: string[];
  current: string;
  onMoved(): void;
  onClose(): void;
}) {
  const { client } = useSession();
  const [to, setTo] = useState(targets.includes(current) ? current : (targets[0] ?? ""));
  const [working, setWorking] = useState("");
  const [error, setError] = useState("");
  const [checked, setChecked] = useState<{ to: string; handlers: HandlerUpgrade[] } | undefined>(undefined);
  const [result, setResult] = useState<{ to: string; handlers: HandlerUpgrade[] } | undefined>(undefined);

  const check = async () => {
    setWorking("Checking");
    setError("");
    setChecked(undefined);
    setResult(undefined);
    try {
      const handlers: HandlerUpgrade[] = [];
      let token = "";
      let target = to;
      do {
        const res = await client.service.upgradeHandlers(
          { workflow, fromVersion: from, toVersion: to, dryRun: true, pageSize, pageToken: token },
          { timeoutMs: callTimeoutMs },
        );
        handlers.push(...res.handlers);
        target = res.toVersion || to;
        token = res.nextPageToken;
      } while (token);
      setChecked({ to: target, handlers });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setWorking("");
    }
  };

  const apply = async (ids: string[], target: string) => {
    setWorking("Upgrading");
    setError("");
    try {
      const handlers: HandlerUpgrade[] = [];
      for (let i = 0; i < ids.length; i += pageSize) {
        const res = await client.service.upgradeHandlers(
          { workflow, fromVersion: from, toVersion: target, handlerIds: ids.slice(i, i + pageSize) },
          { timeoutMs: callTimeoutMs },
        );
        handlers.push(...res.handlers);
      }
      setResult({ to: target, handlers });
      setChecked(undefined);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setWorking("");
      onMoved();
    }
  };

  const shown = result ?? checked;
  const counts = shown ? tally(shown.handlers) : undefined;
  const canMove = checked?.handlers.filter((h) => h.outcome === UpgradeOutcome.CAN_MOVE).map((h) => h.handlerId) ?? [];
  return (
    <section className="result" aria-labelledby="upgrade-h" data-testid="upgrade">
      <h3 id="upgrade-h">
        Upgrade handlers of <code>{from}</code>
      </h3>
      <p className="hint">
        A handler moves only where the target version can carry it on; the check (a dry run) says which can, and why the others cannot.
      </p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void check();
        }}
      >
        <label className="field">
          Target version
          <select
            value={to}
            onChange={(e) => {
              setTo(e.target.value);
              setChecked(undefined);
              setResult(undefined);
            }}
          >
            {targets.map((t) => (
              <option key={t} value={t}>
                {t}
                {t === current ? " (current)" : ""}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={!!working || !to}>
          Check
        </button>
        {checked && canMove.length > 0 && (
          <button type="button" disabled={!!working} onClick={() => void apply(canMove, checked.to)}>
            Upgrade {plural(canMove.length, "handler")}
          </button>
        )}
        <button type="button" disabled={!!working} onClick={onClose}>
          Close
        </button>
      </form>
      <ErrorNote error={error} />
      <p role="status" data-testid="upgrade-summary" aria-busy={!!working}>
        {working
          ? `${working}…`
          : shown && counts
            ? result
              ? `Moved ${plural(counts.get(UpgradeOutcome.MOVED) ?? 0, "handler")} from ${from} to ${shown.to}` +
                `${counts.get(UpgradeOutcome.REFUSED) ? `; ${counts.get(UpgradeOutcome.REFUSED)} refused` : ""}` +
                `${counts.get(UpgradeOutcome.BUSY) ? `; ${counts.get(UpgradeOutcome.BUSY)} busy (retry once idle)` : ""}.`
              : shown.handlers.length === 0
                ? `No running handlers of ${from}.`
                : `To ${shown.to}: ${counts.get(UpgradeOutcome.CAN_MOVE) ?? 0} can move, ${counts.get(UpgradeOutcome.REFUSED) ?? 0} refused, ${counts.get(UpgradeOutcome.BUSY) ?? 0} busy.`
            : ""}
      </p>
      {shown && shown.handlers.length > 0 && (
        <div className="scroll-x">
          <table className="grid" data-testid="upgrade-outcomes">
            <caption className="visually-hidden">{result ? `Upgrade of ${from} to ${shown.to}` : `Check of ${from} to ${shown.to}`}</caption>
            <thead>
              <tr>
                <th scope="col">Handler</th>
                <th scope="col">Outcome</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {shown.handlers.map((h) => (
                <tr key={h.handlerId}>
                  <td>
                    <Link to={`/handlers/${encodeURIComponent(h.handlerId)}`}>{h.handlerId}</Link>
                  </td>
                  <td>
                    <span className={`badge b-${outcomeName(h.outcome).replace(" ", "-")}`}>{outcomeName(h.outcome)}</span>
                  </td>
                  <td>{h.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
