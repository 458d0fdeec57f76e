import { useCallback, useEffect, useState } from "react";

import { TaskStatus } from "@wfd/client/web";

import { errorText } from "../api";
import { ErrorNote, Badge, useLoad } from "../components/common";
import { DataView } from "../components/DataView";
import { SchemaForm } from "../components/LazySchemaForm";
import { TaskWork } from "./TaskWork";
import { Timeline, useRecords, waiterText } from "../components/Timeline";
import { jsonText, residencyName, statusName, structJson, taskStatusName, when } from "../format";
import { Link } from "../router";
import { useSession } from "../session";

/** The handler's live timeline; onRecords follows its length (to refresh the summary). */
function HandlerLive({ id, onRecords }: { id: string; onRecords(n: number): void }) {
  const { client } = useSession();
  const { rows, done, error } = useRecords(client, id);
  useEffect(() => {
    onRecords(rows.length);
  }, [rows.length, onRecords]);
  const last = rows.findLast((r) => r.kind === "finished");
  return (
    <div>
      <p role="status" data-testid="handler-progress">
        {done && last ? `The handler finished: ${last.text}` : "The handler is moving on…"}
      </p>
      <ErrorNote error={error} />
      <Timeline rows={rows} label={`Timeline of handler ${id}`} />
    </div>
  );
}

export function TaskPage({ id }: { id: string }) {
  const { client, identity } = useSession();
  const task = useLoad((signal) => client.task(id, { signal }), [client, id]);
  const t = task.data;
  const handler = useLoad(async (signal) => (t ? client.get(t.handlerId, { signal }) : undefined), [client, t?.handlerId]);
  // Who answers, without authentication: the assignee unless changed.
  const [answeredByInput, setAnsweredBy] = useState<string | undefined>(undefined);
  // A group is nobody's name: then the field starts empty.
  const answeredBy = answeredByInput ?? (t?.assignee.startsWith("group:") ? "" : (t?.assignee ?? ""));
  const [completed, setCompleted] = useState(false);
  const h = handler.data;
  const { reload: reloadHandler } = handler;
  const onRecords = useCallback(
    (n: number) => {
      if (n > 0) {
        reloadHandler();
      }
    },
    [reloadHandler],
  );
  // Without authentication the server records whatever name is given.
  const anonymous = !(identity.known && identity.authentication);
  return (
    <section aria-labelledby="task-h">
      <p>
        <Link to="/inbox">← Inbox</Link>
      </p>
      <h1 id="task-h">{t ? t.title || "Task" : "Task"}</h1>
      <ErrorNote error={task.error} />
      {t && (
        <div className="two-col">
          <div>
            {t.description && <p className="description">{t.description}</p>}
            {t.input && (
              <section aria-labelledby="task-input-h" data-testid="task-input">
                <h2 id="task-input-h">Input</h2>
                <DataView value={structJson(t.input)} schema={structJson(t.inputSchema)} />
              </section>
            )}
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <Badge value={taskStatusName(t.status)} />
              </dd>
              <dt>Assignee</dt>
              <dd>{t.assignee || "anyone"}</dd>
              <dt>Workflow, step</dt>
              <dd>
                {t.workflow}, {t.step}
              </dd>
              <dt>Created</dt>
              <dd>{when(t.createdAt)}</dd>
              {t.deadline && (
                <>
                  <dt>Deadline</dt>
                  <dd>{when(t.deadline)}</dd>
                </>
              )}
              {t.due && (
                <>
                  <dt>Due</dt>
                  <dd data-testid="task-due">
                    {when(t.due)}
                    {t.escalated && " (overdue: escalated)"}
                  </dd>
                </>
              )}
              {t.completedAt && t.cancelReason && (
                <>
                  <dt>Cancelled</dt>
                  <dd>
                    {when(t.completedAt)}
                    {t.completedBy && ` by ${t.completedBy}`}
                  </dd>
                  <dt>Reason</dt>
                  <dd data-testid="cancel-reason">{t.cancelReason}</dd>
                </>
              )}
              {t.completedAt && !t.cancelReason && (
                <>
                  <dt>Completed</dt>
                  <dd>
                    {when(t.completedAt)} by {t.completedBy}
                  </dd>
                  <dt>Answer</dt>
                  <dd>
                    <pre>{jsonText(structJson(t.answer))}</pre>
                  </dd>
                </>
              )}
            </dl>
            <TaskWork t={t} who={anonymous ? answeredBy : ""} anonymous={anonymous} onChanged={task.reload} />
            {t.status === TaskStatus.PENDING && !completed && (
              <>
                <h2>Answer</h2>
                {anonymous && (
                  <label className="field">
                    Answered by
                    <input value={answeredBy} onChange={(e) => setAnsweredBy(e.target.value)} />
                  </label>
                )}
                <SchemaForm
                  id="answer"
                  schema={structJson(t.answerSchema)}
                  submitLabel="Submit answer"
                  onSubmit={async (answer) => {
                    await client.completeTask(t.taskId, answer, { completedBy: anonymous && answeredBy ? answeredBy : undefined });
                    setCompleted(true);
                    task.reload();
                  }}
                />
                <CancelTask
                  onCancel={async (reason) => {
                    await client.cancelTask(t.taskId, reason, { cancelledBy: anonymous && answeredBy ? answeredBy : undefined });
                    setCompleted(true);
                    task.reload();
                  }}
                />
              </>
            )}
          </div>
          <div>
            <h2>The handler</h2>
            <ErrorNote error={handler.error} />
            {h && (
              <dl className="facts" data-testid="task-handler">
                <dt>Handler</dt>
                <dd>
                  <Link to={`/handlers/${encodeURIComponent(h.handlerId)}`}>{h.handlerId}</Link>
                </dd>
                <dt>Status</dt>
                <dd>
                  <Badge value={statusName(h.status)} /> {residencyName(h.residency) && <Badge value={residencyName(h.residency)} />}
                </dd>
                <dt>Started</dt>
                <dd>{when(h.createdAt)}</dd>
                {h.idle && (
                  <>
                    <dt>Waiting for</dt>
                    <dd>{h.idle.waiters.map(waiterText).join("; ") || "events"}</dd>
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
              </dl>
            )}
            {t && (completed || t.status !== TaskStatus.PENDING) && <HandlerLive id={t.handlerId} onRecords={onRecords} />}
          </div>
        </div>
      )}
    </section>
  );
}

/**
 * Cancelling the task instead of answering it: a reason, required, and
 * the step that waits gets the cancellation as its answer.
 */
function CancelTask({ onCancel }: { onCancel: (reason: string) => Promise<void> }) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <details className="cancel-task">
      <summary>Cancel the task instead</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError("");
          onCancel(reason.trim())
            .catch((err: unknown) => setError(errorText(err)))
            .finally(() => setBusy(false));
        }}
      >
        <label className="field">
          Reason for cancelling
          <textarea value={reason} required maxLength={4096} onChange={(e) => setReason(e.target.value)} />
        </label>
        <p className="hint">Nobody answers it then: the step that asked gets the cancellation, with this reason, as its answer.</p>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || reason.trim() === ""}>
          Cancel task
        </button>
      </form>
    </details>
  );
}
