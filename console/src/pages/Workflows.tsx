import { useState } from "react";

import { HandlerStatus, type Handler } from "@wfd/client/web";

import { Badge, ErrorNote, useLoad } from "../components/common";
import { SchemaForm } from "../components/LazySchemaForm";
import { concurrencyText, jsonText, statusName, structJson } from "../format";
import { Link, navigate } from "../router";
import { useSession } from "../session";
import { Versions } from "./Versions";

export function Workflows() {
  const { client } = useSession();
  const workflows = useLoad((signal) => client.workflows({ signal }), [client]);
  return (
    <section aria-labelledby="workflows-h">
      <h1 id="workflows-h">Workflows</h1>
      <ErrorNote error={workflows.error} />
      <ul className="cards-list">
        {workflows.data?.map((w) => (
          <li key={w.name} className="card">
            <h2>
              <Link to={`/workflows/${encodeURIComponent(w.name)}`}>{w.name}</Link>
            </h2>
            <p>{w.description}</p>
            {w.version && (
              <p className="sub" data-testid={`current-version-${w.name}`}>
                Current version: <code>{w.version}</code>
              </p>
            )}
            <p className="sub">
              Steps: {w.steps.join(", ") || "–"}
              {w.servedByWorkers && ` · served by workers (${w.workersConnected} connected)`}
            </p>
            {w.eventTypes.filter((e) => e.external).length > 0 && (
              <p className="sub">Accepts: {w.eventTypes.filter((e) => e.external).map((e) => e.type).join(", ")}</p>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function WorkflowPage({ name }: { name: string }) {
  const { client } = useSession();
  const workflows = useLoad((signal) => client.workflows({ signal }), [client]);
  const w = workflows.data?.find((x) => x.name === name);
  const [handlerId, setHandlerId] = useState("");
  const [wait, setWait] = useState(false);
  const [finished, setFinished] = useState<Handler | undefined>(undefined);
  return (
    <section aria-labelledby="workflow-h">
      <p>
        <Link to="/workflows">← Workflows</Link>
      </p>
      <h1 id="workflow-h">Workflow {name}</h1>
      <ErrorNote error={workflows.error || (workflows.data && !w ? `No workflow ${name} is served.` : "")} />
      {w && (
        <div className="two-col">
          <div>
            <p>{w.description}</p>
            {w.version && (
              <p className="sub">
                Current version: <code>{w.version}</code> (new handlers start on it)
              </p>
            )}
            <h2>Start a handler</h2>
            <label className="field">
              Handler id (optional)
              <input value={handlerId} onChange={(e) => setHandlerId(e.target.value)} placeholder="a new UUIDv7" />
            </label>
            <label className="check">
              <input type="checkbox" checked={wait} onChange={(e) => setWait(e.target.checked)} /> Wait here up to 30 s for the result
            </label>
            <SchemaForm
              id="input"
              schema={structJson(w.inputSchema)}
              submitLabel={`Start ${w.name}`}
              onSubmit={async (input) => {
                setFinished(undefined);
                // With wait, RunWorkflow answers once the handler finished
                // (or as it is when the wait ends).
                const h = await client.run(w.name, input, { ...(handlerId ? { handlerId } : {}), ...(wait ? { waitMs: 30_000 } : {}) });
                if (wait) {
                  setFinished(h);
                } else {
                  navigate(`/handlers/${encodeURIComponent(h.handlerId)}`);
                }
              }}
            />
            {finished && (
              <div role="status" data-testid="run-result" className="result">
                <p>
                  <Link to={`/handlers/${encodeURIComponent(finished.handlerId)}`}>{finished.handlerId}</Link> is{" "}
                  <Badge value={statusName(finished.status)} />
                  {finished.status === HandlerStatus.RUNNING && " (still: the wait ended first)"}
                </p>
                {finished.result && <pre>{jsonText(structJson(finished.result))}</pre>}
                {finished.error && <p className="error">{finished.error}</p>}
              </div>
            )}
          </div>
          <div>
            <h2>Schemas</h2>
            {Object.keys(w.searchAttributes).length > 0 && (
              <details open>
                <summary>Search attributes</summary>
                <ul className="plain" data-testid="workflow-attributes">
                  {Object.keys(w.searchAttributes)
                    .sort()
                    .map((k) => (
                      <li key={k}>
                        <code>{k}</code> {w.searchAttributes[k]}
                      </li>
                    ))}
                </ul>
                <p className="hint">
                  Filter its handlers by them: <Link to={`/handlers?workflow=${encodeURIComponent(name)}`}>Handlers</Link>, Where.
                </p>
              </details>
            )}
            {w.concurrency && (
              <details open>
                <summary>Concurrency</summary>
                <p data-testid="workflow-concurrency">{concurrencyText(w.concurrency)}</p>
                <p className="hint">
                  Waiting ones: <Link to={`/handlers?workflow=${encodeURIComponent(name)}&status=queued`}>queued handlers</Link>.
                </p>
              </details>
            )}
            <details open>
              <summary>Input</summary>
              <pre>{jsonText(structJson(w.inputSchema) ?? "any object")}</pre>
            </details>
            {w.eventTypes.map((e) => (
              <details key={e.type}>
                <summary>
                  Event {e.type}
                  {e.external ? " (from outside)" : ""}
                </summary>
                {e.description && <p className="hint">{e.description}</p>}
                <pre>{jsonText(structJson(e.schema) ?? "any object")}</pre>
              </details>
            ))}
          </div>
        </div>
      )}
      {w && <Versions name={name} />}
    </section>
  );
}
