// The look back: a handler as its stream shows it at one record (GetHandler
// with at_seq), folded by the server from the records, not re-executed.
import { jsonText, statusName, structJson, when } from "../format";
import { useSession } from "../session";
import { ErrorNote, useLoad } from "./common";
import { waiterText } from "./Timeline";

export function HandlerAt({ id, seq }: { id: string; seq: bigint }) {
  const { client } = useSession();
  const at = useLoad((signal) => client.getAt(id, seq, { signal }), [client, id, seq]);
  const a = at.data;
  return (
    <section aria-label={`Handler at record ${seq.toString()}`} data-testid="handler-at" className="handler-at">
      <h3>The handler at #{seq.toString()}</h3>
      <ErrorNote error={at.error} />
      {a && (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            {statusName(a.status)}
            {a.released ? ", released" : ""}
          </dd>
          <dt>When</dt>
          <dd>{when(a.time)}</dd>
          <dt>Waiting for</dt>
          <dd>{a.idle ? a.idle.waiters.map(waiterText).join("; ") || "events from outside" : "nothing: busy or finished"}</dd>
          <dt>Steps</dt>
          <dd>
            <ul className="plain">
              {a.steps.map((s) => (
                <li key={s.step}>
                  {s.step}: {s.ended} ended
                  {s.running > 0 && `, ${s.running} running (attempt ${s.attempt}, for ${s.inputEventType})`}
                  {s.error && `, last failed: ${s.error}`}
                </li>
              ))}
            </ul>
          </dd>
          <dt>Written</dt>
          <dd>
            {a.writtenTotal} event{a.writtenTotal === 1 ? "" : "s"}
            {a.written.length > 0 && `, latest: ${a.written[a.written.length - 1].type}`}
          </dd>
          {a.result && (
            <>
              <dt>Result</dt>
              <dd>
                <pre>{jsonText(structJson(a.result))}</pre>
              </dd>
            </>
          )}
          {a.error && (
            <>
              <dt>Error</dt>
              <dd className="error">{a.error}</dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}
