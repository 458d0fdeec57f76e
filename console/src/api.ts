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

const namespaceKey = "wfd.console.namespace";

/**
 * The namespace the console shows: the page's ?ns= when it has one (a
 * link someone shared), else this tab's choice, else "default".
 */
export function storedNamespace(): string {
  const fromUrl = new URLSearchParams(window.location.search).get("ns");
  if (fromUrl) {
    storeNamespace(fromUrl);
    return fromUrl;
  }
  try {
    return sessionStorage.getItem(namespaceKey) ?? "default";
  } catch {
    return "default";
  }
}

export function storeNamespace(ns: string): void {
  try {
    sessionStorage.setItem(namespaceKey, ns);
  } catch {
    // Storage off: the choice lasts as long as the page.
  }
}

/**
 * A client of the wfd that served this page, in namespace ns, with the
 * token if any. It
 * speaks gRPC-Web (binary protobuf over fetch, served by the same Connect
 * handlers as the Connect protocol): the API's refusals (Unauthenticated
 * before signing in, a field error, Unimplemented) come as a status in an
 * HTTP 200 answer, where the Connect protocol's HTTP 4xx/5xx would each
 * log a failed resource in the browser's console; and 10,000 tasks decode
 * faster from binary than from JSON.
 */
export function newClient(token: string, ns: string): WfdClient {
  const base = window.location.origin;
  const opts = { protocol: "grpcweb" as const, timeoutMs: 30_000, namespace: ns };
  return wfdClientForWeb(base, token ? { ...opts, token } : opts);
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

export { fieldErrors } from "./fielderrors";
