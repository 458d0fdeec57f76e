// A small router over the History API: the console's pages live under
// /ui/ (wfd answers every path there with index.html).
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from "react";

export const base = "/ui";

/** The page's path below /ui, with its query ("/handlers?status=running"). */
function current(): string {
  const p = window.location.pathname.startsWith(base) ? window.location.pathname.slice(base.length) : window.location.pathname;
  return (p || "/") + window.location.search;
}

export function navigate(to: string, replace = false): void {
  const url = base + to;
  if (replace) {
    window.history.replaceState(null, "", url);
  } else {
    window.history.pushState(null, "", url);
  }
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** The current location: path (without the query) and query parameters. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    window.addEventListener("popstate", on);
    return () => window.removeEventListener("popstate", on);
  }, []);
  const i = loc.indexOf("?");
  return i < 0 ? { path: loc, query: new URLSearchParams() } : { path: loc.slice(0, i), query: new URLSearchParams(loc.slice(i)) };
}

/** A real link (it opens in a new tab, is focusable) that navigates in place. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
      return;
    }
    e.preventDefault();
    navigate(to);
  };
  return <a {...rest} href={base + to} onClick={onClick} />;
}

/** Query string from filters, leaving out empty values. */
export function queryString(q: { [k: string]: string | undefined }): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v) {
      p.set(k, v);
    }
  }
  const s = p.toString();
  return s ? "?" + s : "";
}
