import { useState } from "react";

import { ErrorNote, useLoad } from "../components/common";
import { SchemaForm } from "../components/SchemaForm";
import { jsonText, structJson } from "../format";
import { Link, navigate } from "../router";
import { useSession } from "../session";

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
            <h2>Start a handler</h2>
            <label className="field">
              Handler id (optional)
              <input value={handlerId} onChange={(e) => setHandlerId(e.target.value)} placeholder="a new UUIDv7" />
            </label>
            <SchemaForm
              id="input"
              schema={structJson(w.inputSchema)}
              submitLabel={`Start ${w.name}`}
              onSubmit={async (input) => {
                const h = await client.run(w.name, input, handlerId ? { handlerId } : {});
                navigate(`/handlers/${encodeURIComponent(h.handlerId)}`);
              }}
            />
          </div>
          <div>
            <h2>Schemas</h2>
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
    </section>
  );
}
