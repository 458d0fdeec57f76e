// The console's connection to wfd: the same API every client uses, over
// Connect from this page's own origin (wfd serves the console and the API
// on the console port), through @wfd/client's web transport.
import { Code, ConnectError, wfdClientForWeb, type WfdClient } from "@wfd/client/web";

const tokenKey = "wfd.console.token";

/** The bearer token of this tab (sessionStorage: gone when the tab closes). */
export function storedToken(): string {
  try {
    return sessionStorage.getItem(tokenKey) ?? "";
  } catch {
    return "";
  }
}

export function storeToken(token: string): void {
  if (token) {
    sessionStorage.setItem(tokenKey, token);
  } else {
    sessionStorage.removeItem(tokenKey);
  }
}

/** A client of the wfd that served this page, with the token if any. */
export function newClient(token: string): WfdClient {
  const base = window.location.origin;
  return wfdClientForWeb(base, token ? { token, timeoutMs: 30_000 } : { timeoutMs: 30_000 });
}

/** Whether err says the server does not have this method yet. */
export function isUnimplemented(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.Unimplemented;
}

export function codeOf(err: unknown): Code | undefined {
  return err instanceof ConnectError ? err.code : undefined;
}

/** A one-line description of an error for the page. */
export function errorText(err: unknown): string {
  if (err instanceof ConnectError) {
    return `${Code[err.code] ?? err.code}: ${err.rawMessage}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * The failing fields of a schema error. wfd names each failing value as
 * "at '<JSON pointer>': what" (internal/schema); a missing required
 * property is reported at its parent, so it is moved onto the property.
 * The result maps a pointer ("/reason") to its messages; "" is the whole.
 */
export function fieldErrors(message: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /at '([^']*)': (.*?)(?=; at '|; and \d+ more$|$)/g;
  for (const m of message.matchAll(re)) {
    let path = m[1];
    let what = m[2].trim();
    const missing = /^missing propert(?:y|ies) (.+)$/.exec(what);
    if (missing) {
      for (const name of missing[1].split(",").map((s) => s.trim().replace(/^'|'$/g, ""))) {
        push(out, `${path}/${name}`, "is required");
      }
      continue;
    }
    if (path === "" && what.startsWith("additionalProperties")) {
      what = what.replace(/^additionalProperties /, "not allowed: ");
    }
    push(out, path, what);
  }
  return out;
}

function push(m: Map<string, string[]>, k: string, v: string): void {
  const list = m.get(k);
  if (list) {
    list.push(v);
  } else {
    m.set(k, [v]);
  }
}
