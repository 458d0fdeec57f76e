import { useLayoutEffect, useRef, useState } from "react";

import { timestampDate } from "@bufbuild/protobuf/wkt";
import { TaskStatus, type TaskListOptions, type TaskStatusName } from "@wfd/client/web";

import { ErrorNote, Notice, Pager, Badge, useLoad } from "../components/common";
import { ago, taskStatusName, when } from "../format";
import { Link, navigate, queryString, useLocation } from "../router";
import { useSession } from "../session";

const pageSize = 100;

/** performance marks the benchmark reads: response → first page painted. */
function markPainted() {
  requestAnimationFrame(() => {
    // The frame after the one that painted the rows.
    setTimeout(() => {
      performance.mark("wfd:inbox-painted");
      try {
        performance.measure("wfd:inbox-render", "wfd:inbox-response", "wfd:inbox-painted");
      } catch {
        // no response mark (an error page)
      }
    }, 0);
  });
}

export function Inbox() {
  const { client, identity } = useSession();
  const { query } = useLocation();
  const canMine = identity.known && identity.authentication;
  const mine = canMine && query.get("mine") !== "0" && !query.get("assignee");
  const assignee = query.get("assignee") ?? "";
  const status = query.get("status") ?? "pending";
  const workflow = query.get("workflow") ?? "";
  const claim = query.get("claim") ?? "";
  const overdue = query.get("overdue") === "1";
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1] ?? "";
  const workflows = useLoad((signal) => client.workflows({ signal }), [client]);
  const page = useLoad(
    async (signal) => {
      const o: TaskListOptions = { pageSize, pageToken: token };
      if (mine) {
        o.mine = true;
      } else if (assignee) {
        o.assignee = assignee;
      }
      if (status !== "any") {
        o.statuses = [status as TaskStatusName];
      }
      if (workflow) {
        o.workflow = workflow;
      }
      if (claim === "claimed" || claim === "unclaimed") {
        o.claim = claim;
      }
      if (overdue) {
        o.overdue = true;
      }
      performance.clearMarks();
      performance.clearMeasures();
      const res = await client.tasks(o, { signal });
      performance.mark("wfd:inbox-response");
      return res;
    },
    [client, mine, assignee, status, workflow, claim, overdue, token],
  );
  const rendered = useRef<unknown>(null);
  useLayoutEffect(() => {
    if (page.data && rendered.current !== page.data) {
      rendered.current = page.data;
      markPainted();
    }
  }, [page.data]);

  const setFilter = (k: string, v: string) => {
    const q: { [k: string]: string } = { mine: query.get("mine") ?? "", assignee, status, workflow, claim, overdue: overdue ? "1" : "" };
    q[k] = v;
    if (q.status === "pending") {
      q.status = "";
    }
    setTokens([]);
    navigate("/inbox" + queryString(q), true);
  };

  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Inbox</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Task filters">
        {canMine && (
          <label>
            <input type="checkbox" checked={mine} onChange={(e) => setFilter("mine", e.target.checked ? "" : "0")} /> Only my tasks (
            {identity.subject})
          </label>
        )}
        <label>
          Assignee
          <input
            key={assignee}
            title="a person, or a group as group:ROLE"
            type="search"
            defaultValue={assignee}
            placeholder="anyone"
            onKeyDown={(e) => e.key === "Enter" && setFilter("assignee", e.currentTarget.value.trim())}
            onBlur={(e) => e.currentTarget.value.trim() !== assignee && setFilter("assignee", e.currentTarget.value.trim())}
          />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setFilter("status", e.target.value)}>
            {["pending", "completed", "expired", "cancelled", "any"].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Group
          <input
            key={"g" + assignee}
            type="search"
            defaultValue={assignee.startsWith("group:") ? assignee.slice("group:".length) : ""}
            placeholder="any"
            onKeyDown={(e) => e.key === "Enter" && setFilter("assignee", e.currentTarget.value.trim() && "group:" + e.currentTarget.value.trim())}
          />
        </label>
        <label>
          Claimed
          <select value={claim} onChange={(e) => setFilter("claim", e.target.value)}>
            <option value="">either</option>
            <option value="claimed">claimed</option>
            <option value="unclaimed">unclaimed</option>
          </select>
        </label>
        <label>
          <input type="checkbox" checked={overdue} onChange={(e) => setFilter("overdue", e.target.checked ? "1" : "")} /> Only overdue
        </label>
        <label>
          Workflow
          <select value={workflow} onChange={(e) => setFilter("workflow", e.target.value)}>
            <option value="">any</option>
            {workflows.data?.map((w) => (
              <option key={w.name}>{w.name}</option>
            ))}
          </select>
        </label>
      </form>
      {!canMine && identity.known && <Notice>Authentication is off on this server: the inbox shows everyone's tasks.</Notice>}
      <ErrorNote error={page.error} />
      {page.data && page.data.tasks.length === 0 && <Notice>No tasks.</Notice>}
      {page.data && page.data.tasks.length > 0 && (
        <div className="scroll-x">
        <table className="grid" data-testid="tasks">
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Assignee</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Deadline</th>
            </tr>
          </thead>
          <tbody>
            {page.data.tasks.map((t) => (
              <tr key={t.taskId}>
                <td>
                  <Link to={`/tasks/${encodeURIComponent(t.taskId)}`}>{t.title || t.taskId}</Link>
                  <div className="sub">{t.handlerId}</div>
                </td>
                <td>
                  {t.assignee || "anyone"}
                  {t.claimedBy && <span className="hint"> (claimed by {t.claimedBy})</span>}
                </td>
                <td>{t.workflow}</td>
                <td>
                  <Badge value={taskStatusName(t.status)} />
                </td>
                <td title={when(t.createdAt)}>{ago(t.createdAt)} ago</td>
                <td>
                  {when(t.deadline)}
                  {t.due && t.status === TaskStatus.PENDING && timestampDate(t.due) < new Date() && (
                    <>
                      {" "}
                      <Badge value="overdue" />
                    </>
                  )}
                </td>
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
