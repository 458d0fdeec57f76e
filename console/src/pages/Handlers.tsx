import { useState } from "react";

import type { HandlerStatusName, ListOptions, ResidencyName } from "@wfd/client/web";

import { Badge, ErrorNote, Notice, Pager, useLoad } from "../components/common";
import { waiterText, workerText } from "../components/Timeline";
import { ago, attributesText, residencyName, statusName, when } from "../format";
import { Link, navigate, queryString, useLocation } from "../router";
import { useSession } from "../session";

const pageSize = 50;

export function Handlers() {
  const { client } = useSession();
  const { query } = useLocation();
  const f = {
    workflow: query.get("workflow") ?? "",
    status: query.get("status") ?? "",
    idle: query.get("idle") ?? "",
    idleFor: query.get("idle_for") ?? "",
    residency: query.get("residency") ?? "",
    where: query.get("where") ?? "",
  };
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1] ?? "";
  const workflows = useLoad((signal) => client.workflows({ signal }), [client]);
  const page = useLoad(
    (signal) => {
      const o: ListOptions = { pageSize, pageToken: token };
      if (f.workflow) o.workflow = f.workflow;
      if (f.status) o.statuses = [f.status as HandlerStatusName];
      if (f.idle) o.idleOnly = true;
      const s = Number(f.idleFor);
      if (f.idleFor && s > 0) o.idleFor = s * 1000;
      if (f.residency) o.residency = f.residency as ResidencyName;
      if (f.where) o.where = f.where;
      return client.list(o, { signal });
    },
    [client, f.workflow, f.status, f.idle, f.idleFor, f.residency, f.where, token],
  );
  // Search attributes: a column only when some handler on the page has any.
  const withAttrs = page.data?.handlers.some((h) => h.attributes && Object.keys(h.attributes).length > 0) ?? false;
  // A refused query (its position, or why no index answers it) is said
  // next to the query's field.
  const whereError = f.where && page.error.includes("where") ? page.error : "";
  // Replica mode: which replica holds each running handler, a column only
  // when some handler on the page has one (never for a single process).
  const owners = page.data?.handlers.some((h) => h.owner) ?? false;
  const set = (k: string, v: string) => {
    const q: { [k: string]: string } = { workflow: f.workflow, status: f.status, idle: f.idle, idle_for: f.idleFor, residency: f.residency, where: f.where };
    q[k] = v;
    setTokens([]);
    navigate("/handlers" + queryString(q), true);
  };
  return (
    <section aria-labelledby="handlers-h">
      <h1 id="handlers-h">Handlers</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Handler filters">
        <label>
          Workflow
          <select value={f.workflow} onChange={(e) => set("workflow", e.target.value)}>
            <option value="">any</option>
            {workflows.data?.map((w) => (
              <option key={w.name}>{w.name}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={f.status} onChange={(e) => set("status", e.target.value)}>
            <option value="">any</option>
            {["running", "queued", "completed", "failed", "cancelled"].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={!!f.idle} onChange={(e) => set("idle", e.target.checked ? "1" : "")} /> Idle only
        </label>
        <label>
          Idle for at least (s)
          <input
            type="number"
            min={0}
            defaultValue={f.idleFor}
            onKeyDown={(e) => e.key === "Enter" && set("idle_for", e.currentTarget.value)}
            onBlur={(e) => e.currentTarget.value !== f.idleFor && set("idle_for", e.currentTarget.value)}
          />
        </label>
        <label>
          Residency
          <select value={f.residency} onChange={(e) => set("residency", e.target.value)}>
            <option value="">any</option>
            <option>active</option>
            <option>released</option>
          </select>
        </label>
        <label className="wide">
          Where
          <input
            type="search"
            key={f.where}
            defaultValue={f.where}
            placeholder='customer = "acme" and amount > 100 order by amount desc'
            aria-describedby="where-help where-error"
            aria-invalid={whereError ? true : undefined}
            onKeyDown={(e) => e.key === "Enter" && set("where", e.currentTarget.value.trim())}
            onBlur={(e) => e.currentTarget.value.trim() !== f.where && set("where", e.currentTarget.value.trim())}
          />
        </label>
        <button type="button" onClick={page.reload}>
          Refresh
        </button>
        <p id="where-help" className="sub">
          A query on search attributes and status, workflow, created_at, updated_at (attributes need a workflow); Enter applies it.
        </p>
      </form>
      <p id="where-error" className="error" role="alert" hidden={!whereError}>
        {whereError}
      </p>
      <ErrorNote error={whereError ? "" : page.error} />
      {page.data && page.data.handlers.length === 0 && <Notice>No handlers match.</Notice>}
      {page.data && page.data.handlers.length > 0 && (
        <div className="scroll-x">
          <table className="grid" data-testid="handlers">
            <thead>
              <tr>
                <th scope="col">Handler</th>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Residency</th>
                {owners && <th scope="col">Owner</th>}
                {withAttrs && <th scope="col">Attributes</th>}
                <th scope="col">Waiting for</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {page.data.handlers.map((h) => (
                <tr key={h.handlerId}>
                  <td>
                    <Link to={`/handlers/${encodeURIComponent(h.handlerId)}`}>{h.handlerId}</Link>
                  </td>
                  <td>
                    {h.workflow}
                    {h.workflowVersion && <span className="sub">@{h.workflowVersion}</span>}
                  </td>
                  <td>
                    <Badge value={statusName(h.status)} />
                  </td>
                  <td>{residencyName(h.residency)}</td>
                  {owners && <td>{h.owner}</td>}
                  {withAttrs && <td className="attrs">{attributesText(h.attributes)}</td>}
                  <td>
                    {h.idle
                      ? `${h.idle.queued ? "a slot (queued)" : h.idle.waiters.map(waiterText).join("; ") || "events"} (idle ${ago(h.idle.since)})`
                      : h.waitingForWorker.map((w) => workerText(w, h.workflow)).join("; ")}
                  </td>
                  <td title={when(h.createdAt)}>{ago(h.createdAt)} ago</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager tokens={tokens} next={page.data?.nextPageToken ?? ""} onPage={setTokens} />
    </section>
  );
}
