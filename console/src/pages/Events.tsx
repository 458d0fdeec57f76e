import { useState } from "react";

import { errorText } from "../api";
import { ErrorNote, Notice, Pager, useLoad } from "../components/common";
import { structJson, when } from "../format";
import { Link, navigate, queryString, useLocation } from "../router";
import { useSession } from "../session";

export function Events() {
  const { client } = useSession();
  const { query } = useLocation();
  const key = query.get("key") ?? "";
  const forHandler = query.get("handler") ?? "";
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1] ?? "";
  // Latest first; every key unless one is asked for.
  const events = useLoad(
    (signal) => client.publishedEvents({ key, handlerId: forHandler, pageSize: 50, pageToken: token }, { signal }),
    [client, key, forHandler, token],
  );
  const [pubKey, setPubKey] = useState(key);
  const [pubHandler, setPubHandler] = useState("");
  const [pubData, setPubData] = useState("{}");
  const [published, setPublished] = useState("");
  const [pubError, setPubError] = useState("");
  const [busy, setBusy] = useState(false);

  const publish = async (e: React.FormEvent) => {
    e.preventDefault();
    setPubError("");
    setPublished("");
    let data: unknown;
    try {
      data = JSON.parse(pubData || "{}");
    } catch (err) {
      setPubError("Data is not JSON: " + (err as Error).message);
      return;
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      setPubError("Data must be a JSON object, like {}");
      return;
    }
    setBusy(true);
    try {
      const res = await client.publish(pubKey.trim(), data as { [k: string]: unknown }, pubHandler ? { handlerId: pubHandler.trim() } : {});
      setPublished(`Published ${res.eventId} at #${res.seq}: woke ${res.woken} handler${res.woken === 1 ? "" : "s"}.`);
      events.reload();
    } catch (err) {
      setPubError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="events-h">
      <h1 id="events-h">Published events</h1>
      <div className="two-col wide-left">
        <div>
          <form
            className="filters"
            aria-label="Event log"
            onSubmit={(e) => {
              e.preventDefault();
              const form = new FormData(e.currentTarget);
              const value = (name: string) => String(form.get(name) ?? "").trim();
              setTokens([]);
              navigate("/events" + queryString({ key: value("key"), handler: value("handler") }));
            }}
          >
            <label>
              Key
              <input name="key" type="search" defaultValue={key} key={key} placeholder="every key" />
            </label>
            <label>
              For handler
              <input name="handler" type="search" defaultValue={forHandler} key={forHandler} placeholder="any" />
            </label>
            <button type="submit">Show</button>
          </form>
          {events.error &&
            (events.error.startsWith("Unimplemented") ? (
              <Notice>This server cannot list published events yet (ListPublishedEvents is not implemented).</Notice>
            ) : (
              <ErrorNote error={events.error} />
            ))}
          {events.data && events.data.events.length === 0 && <Notice>No events{key ? ` under ${key}` : ""}.</Notice>}
          {events.data && events.data.events.length > 0 && (
            <>
              <div className="scroll-x">
              <table className="grid" data-testid="published-events">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Key</th>
                    <th scope="col">Published</th>
                    <th scope="col">Data</th>
                    <th scope="col">For</th>
                  </tr>
                </thead>
                <tbody>
                  {events.data.events.map((ev) => (
                    <tr key={ev.eventId}>
                      <td>{ev.seq.toString()}</td>
                      <td>
                        <Link to={`/events${queryString({ key: ev.key })}`}>{ev.key}</Link>
                      </td>
                      <td>
                        {when(ev.publishedAt)}
                        {ev.publishedBy && <div className="sub">by {ev.publishedBy}</div>}
                      </td>
                      <td>
                        <code className="json">{JSON.stringify(structJson(ev.data) ?? {})}</code>
                      </td>
                      <td>{ev.handlerId ? <Link to={`/handlers/${encodeURIComponent(ev.handlerId)}`}>{ev.handlerId}</Link> : "every handler"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              </div>
              <Pager tokens={tokens} next={events.data.nextPageToken} onPage={setTokens} />
            </>
          )}
        </div>
        <div>
          <h2>Publish an event</h2>
          <form onSubmit={publish} className="stack" aria-busy={busy}>
            <label className="field">
              Key
              <input value={pubKey} onChange={(e) => setPubKey(e.target.value)} required placeholder="payment:A-1" />
            </label>
            <label className="field">
              Only for handler (optional)
              <input value={pubHandler} onChange={(e) => setPubHandler(e.target.value)} />
            </label>
            <label className="field">
              Data (a JSON object)
              <textarea rows={4} value={pubData} onChange={(e) => setPubData(e.target.value)} spellCheck={false} />
            </label>
            <ErrorNote error={pubError} />
            {published && (
              <p role="status" className="ok" data-testid="published">
                {published}
              </p>
            )}
            <button type="submit" disabled={busy}>
              Publish
            </button>
          </form>
        </div>
      </div>
    </section>
  );
}

