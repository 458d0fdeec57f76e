import { useEffect, useState } from "react";

import { HandlerStatus, Residency, type EventType } from "@wfd/client/web";

import { errorText, isUnimplemented } from "../api";
import { Badge, ErrorNote, Notice, useLoad } from "../components/common";
import { HandlerAt, HandlerDiff } from "../components/HandlerAt";
import { SchemaForm } from "../components/LazySchemaForm";
import { Timeline, useRecords, waiterText } from "../components/Timeline";
import { attributesText, jsonText, ordinal, residencyName, statusName, structJson, when } from "../format";
import { Link, navigate } from "../router";
import { useSession } from "../session";

export function HandlerPage({ id }: { id: string }) {
  const { client } = useSession();
  const { rows, error: streamError } = useRecords(client, id);
  const handler = useLoad((signal) => client.get(id, { signal }), [client, id]);
  const workflows = useLoad((signal) => client.workflows({ signal }), [client]);
  const [action, setAction] = useState("");
  const [actionError, setActionError] = useState("");
  const { reload } = handler;
  // The handler's summary follows its timeline.
  const latest = rows.length;
  useEffect(() => {
    if (latest > 0) {
      reload();
    }
  }, [latest, reload]);

  const h = handler.data;
  const wf = workflows.data?.find((w) => w.name === h?.workflow);
  // A queued handler is running too: it takes events (held until it is
  // admitted) and can be cancelled.
  const running = h?.status === HandlerStatus.RUNNING || h?.status === HandlerStatus.QUEUED;

  // The events it accepts: the workflow's external ones and those its
  // waiters wait for, with their schemas when the workflow declares them.
  const types = new Map<string, EventType | undefined>();
  for (const t of wf?.eventTypes ?? []) {
    if (t.external) types.set(t.type, t);
  }
  for (const t of wf?.externalEventTypes ?? []) {
    if (!types.has(t)) types.set(t, wf?.eventTypes.find((e) => e.type === t));
  }
  for (const w of h?.idle?.waiters ?? []) {
    if (w.eventType && !w.task && !w.key && w.children.length === 0 && !types.has(w.eventType)) {
      types.set(w.eventType, wf?.eventTypes.find((e) => e.type === w.eventType));
    }
  }

  const act = async (name: string, fn: () => Promise<unknown>) => {
    setAction(name);
    setActionError("");
    try {
      await fn();
      reload();
    } catch (err) {
      setActionError(isUnimplemented(err) ? `${name}: this server cannot do that yet (Unimplemented)` : errorText(err));
    } finally {
      setAction("");
    }
  };

  return (
    <section aria-labelledby="handler-h">
      <p>
        <Link to="/handlers">← Handlers</Link>
      </p>
      <h1 id="handler-h">
        Handler <code>{id}</code>
      </h1>
      <ErrorNote error={handler.error} />
      {h && (
        <div className="two-col">
          <div>
            <dl className="facts" data-testid="handler-facts">
              <dt>Workflow</dt>
              <dd>{h.workflow}</dd>
              {h.workflowVersion && (
                <>
                  <dt>Version</dt>
                  <dd data-testid="handler-version">
                    <code>{h.workflowVersion}</code>
                    {wf && wf.version && wf.version !== h.workflowVersion && (
                      <>
                        {" "}
                        (current: <Link to={`/workflows/${encodeURIComponent(h.workflow)}`}>{wf.version}</Link>)
                      </>
                    )}
                  </dd>
                </>
              )}
              <dt>Status</dt>
              <dd>
                <Badge value={statusName(h.status)} />
              </dd>
              {residencyName(h.residency) && (
                <>
                  <dt>Residency</dt>
                  <dd>
                    <Badge value={residencyName(h.residency)} />
                  </dd>
                </>
              )}
              {h.owner && (
                <>
                  <dt>Owner</dt>
                  <dd data-testid="handler-owner">{h.owner}</dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{when(h.createdAt)}</dd>
              <dt>Updated</dt>
              <dd>{when(h.updatedAt)}</dd>
              {h.completedAt && (
                <>
                  <dt>Finished</dt>
                  <dd>{when(h.completedAt)}</dd>
                </>
              )}
              {h.idle && (
                <>
                  <dt>Idle since</dt>
                  <dd>{when(h.idle.since)}</dd>
                  <dt>Waiting for</dt>
                  <dd>
                    <ul className="plain">
                      {h.idle.queued && <li>a slot of its concurrency key (queued)</li>}
                      {h.idle.waiters.map((w) => (
                        <li key={w.waiterId}>
                          {w.task ? <Link to={`/tasks/${encodeURIComponent(w.task.taskId)}`}>{waiterText(w)}</Link> : waiterText(w)}
                        </li>
                      ))}
                    </ul>
                  </dd>
                </>
              )}
              {h.waitingForWorker.length > 0 && (
                <>
                  <dt>Waiting for a worker</dt>
                  <dd data-testid="handler-waiting-for-worker">
                    <ul className="plain">
                      {h.waitingForWorker.map((r) => (
                        <li key={`${r.step}-${r.attempt}`}>
                          step {r.step} needs a worker serving{" "}
                          <code>
                            {h.workflow}@{r.workflowVersion || h.workflowVersion}
                          </code>{" "}
                          (since {when(r.since)}){r.noneConnected ? ": none is connected" : ": every one connected is busy"}
                        </li>
                      ))}
                    </ul>
                  </dd>
                </>
              )}
              {h.scheduleId && (
                <>
                  <dt>Schedule</dt>
                  <dd data-testid="handler-schedule">
                    <Link to={`/schedules/${encodeURIComponent(h.scheduleId)}`}>{h.scheduleId}</Link>
                    {h.scheduleTick && ` (tick ${when(h.scheduleTick)})`}
                  </dd>
                </>
              )}
              {h.parentId && (
                <>
                  <dt>Parent</dt>
                  <dd>
                    <Link to={`/handlers/${encodeURIComponent(h.parentId)}`}>{h.parentId}</Link>
                  </dd>
                </>
              )}
              {h.children.length > 0 && (
                <>
                  <dt>Children</dt>
                  <dd>
                    <ul className="plain">
                      {h.children.map((c) => (
                        <li key={c}>
                          <Link to={`/handlers/${encodeURIComponent(c)}`}>{c}</Link>
                        </li>
                      ))}
                    </ul>
                  </dd>
                </>
              )}
              {h.slot && (
                <>
                  <dt>Concurrency key</dt>
                  <dd data-testid="handler-slot">
                    <code>{h.slot.key || "(one for every handler)"}</code>
                    {h.slot.queued
                      ? `: queued${h.slot.position ? `, ${ordinal(h.slot.position)} in line` : ""}; it starts when a slot frees`
                      : ": holds a slot"}
                  </dd>
                </>
              )}
              {h.attributes && Object.keys(h.attributes).length > 0 && (
                <>
                  <dt>Attributes</dt>
                  <dd>
                    <ul className="plain" data-testid="handler-attributes">
                      {Object.keys(h.attributes)
                        .sort()
                        .map((k) => (
                          <li key={k}>
                            <code>{attributesText({ [k]: h.attributes?.[k] })}</code>
                          </li>
                        ))}
                    </ul>
                  </dd>
                </>
              )}
              {h.result && (
                <>
                  <dt>Result</dt>
                  <dd>
                    <pre data-testid="handler-result">{jsonText(structJson(h.result))}</pre>
                  </dd>
                </>
              )}
              {h.error && (
                <>
                  <dt>Error</dt>
                  <dd className="error">{h.error}</dd>
                </>
              )}
            </dl>
            <div className="actions">
              {running && (
                <button
                  type="button"
                  disabled={!!action}
                  onClick={() => window.confirm(`Cancel handler ${id}? It ends as cancelled, with its children.`) && act("Cancel", () => client.cancel(id))}
                >
                  Cancel
                </button>
              )}
              {running && h.residency === Residency.ACTIVE && (
                <button type="button" disabled={!!action} onClick={() => act("Release", () => client.release(id))}>
                  Release
                </button>
              )}
              {!running && (
                <button
                  type="button"
                  className="danger"
                  disabled={!!action}
                  onClick={() =>
                    window.confirm(`Delete handler ${id}, its records and tasks?`) &&
                    act("Delete", async () => {
                      await client.delete(id);
                      navigate("/handlers");
                    })
                  }
                >
                  Delete
                </button>
              )}
            </div>
            <ErrorNote error={actionError} />
            {running && types.size > 0 && (
              <>
                <h2>Send an event</h2>
                {[...types].map(([type, et]) => (
                  <details key={type} className="send" open={types.size === 1}>
                    <summary>{type}</summary>
                    {et?.description && <p className="hint">{et.description}</p>}
                    <SchemaForm
                      id={`send-${type}`}
                      schema={structJson(et?.schema)}
                      submitLabel={`Send ${type}`}
                      onSubmit={async (data) => {
                        await client.send(id, type, data);
                        reload();
                      }}
                    />
                  </details>
                ))}
              </>
            )}
            {running && types.size === 0 && wf && <Notice>This workflow accepts no events from outside.</Notice>}
          </div>
          <div>
            <h2>Timeline</h2>
            <ErrorNote error={streamError} />
            <Timeline
              rows={rows}
              label={`Timeline of handler ${id}`}
              workflow={h.workflow}
              version={h.workflowVersion}
              lookBack={(seq) => <HandlerAt key={seq.toString()} id={id} seq={seq} />}
              diff={(from, to) => <HandlerDiff key={`${from.toString()}-${to.toString()}`} id={id} from={from} to={to} />}
            />
          </div>
        </div>
      )}
    </section>
  );
}
