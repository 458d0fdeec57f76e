// Small shared pieces of the pages.
import { useCallback, useEffect, useState, type ReactNode } from "react";

import { errorText } from "../api";

/** Loads data with fn, again when deps change or reload is called. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]): { data?: T; error: string; loading: boolean; reload(): void } {
  const [state, setState] = useState<{ data?: T; error: string; loading: boolean }>({ error: "", loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    fn(ac.signal).then(
      (data) => !ac.signal.aborted && setState({ data, error: "", loading: false }),
      (err: unknown) => !ac.signal.aborted && setState({ error: errorText(err), loading: false }),
    );
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function ErrorNote({ error }: { error: string }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge b-${value}`}>{value}</span>;
}

/** Previous and next buttons over page tokens. */
export function Pager({ tokens, next, onPage }: { tokens: string[]; next: string; onPage(tokens: string[]): void }) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={tokens.length === 0} onClick={() => onPage(tokens.slice(0, -1))}>
        ← Previous page
      </button>
      <span>Page {tokens.length + 1}</span>
      <button type="button" disabled={!next} onClick={() => onPage([...tokens, next])}>
        Next page →
      </button>
    </nav>
  );
}
