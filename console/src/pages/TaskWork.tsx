// Working on a task with others: who holds it (claim, let go), handing it
// to another person or group, and the comments on it.
import { useState, type FormEvent } from "react";

import { TaskStatus, type Task } from "@wfd/client/web";

import { errorText } from "../api";
import { ErrorNote } from "../components/common";
import { when } from "../format";
import { useSession } from "../session";

/**
 * The task's claim, reassignment and comments. who is the name the
 * console acts as without authentication (anonymous; with it the server
 * records the caller); onChanged reloads the task.
 */
export function TaskWork({ t, who, anonymous, onChanged }: { t: Task; who: string; anonymous: boolean; onChanged: () => void }) {
  const { client } = useSession();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [assignee, setAssignee] = useState("");
  const [comment, setComment] = useState("");
  const pending = t.status === TaskStatus.PENDING;
  const opts = who ? { by: who } : {};
  const act = (f: () => Promise<unknown>, after?: () => void) => {
    setBusy(true);
    setError("");
    f()
      .then(() => {
        after?.();
        onChanged();
      })
      .catch((err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  const submit = (f: () => Promise<unknown>, after: () => void) => (e: FormEvent) => {
    e.preventDefault();
    act(f, after);
  };
  return (
    <section aria-labelledby="task-work-h" data-testid="task-work">
      <h2 id="task-work-h">Who works on it</h2>
      {anonymous && pending && (
        <p className="hint">{who ? `You act as ${who} (the Answered by field below).` : "Give your name in the Answered by field below to act on it."}</p>
      )}
      <p data-testid="task-claim">
        {t.claimedBy ? (
          <>
            Claimed by <strong>{t.claimedBy}</strong> since {when(t.claimedAt)}.
          </>
        ) : pending ? (
          "Nobody has claimed it."
        ) : (
          "Nobody held it at the end."
        )}{" "}
        {pending && !t.claimedBy && (
          <button type="button" disabled={busy} onClick={() => act(() => client.claimTask(t.taskId, opts))}>
            Claim
          </button>
        )}
        {pending && t.claimedBy && (
          <button type="button" disabled={busy} onClick={() => act(() => client.unclaimTask(t.taskId, opts))}>
            Let go
          </button>
        )}
      </p>
      {pending && (
        <form className="inline-form" onSubmit={submit(() => client.reassignTask(t.taskId, assignee.trim(), opts), () => setAssignee(""))}>
          <label className="field">
            Reassign to (a person, or group:ROLE)
            <input value={assignee} maxLength={256} onChange={(e) => setAssignee(e.target.value)} />
          </label>
          <button type="submit" disabled={busy || assignee.trim() === ""}>
            Reassign
          </button>
        </form>
      )}
      <h3>Comments</h3>
      {t.comments.length === 0 ? (
        <p className="hint">No comments.</p>
      ) : (
        <ol className="comments" data-testid="task-comments">
          {t.comments.map((c, i) => (
            <li key={i}>
              <span className="comment-by">
                {c.by}, {when(c.at)}
              </span>
              <p>{c.text}</p>
            </li>
          ))}
        </ol>
      )}
      {pending && (
        <form onSubmit={submit(() => client.commentTask(t.taskId, comment.trim(), opts), () => setComment(""))}>
          <label className="field">
            Comment
            <textarea value={comment} maxLength={4096} onChange={(e) => setComment(e.target.value)} />
          </label>
          <button type="submit" disabled={busy || comment.trim() === ""}>
            Add comment
          </button>
        </form>
      )}
      <ErrorNote error={error} />
    </section>
  );
}
