// Bearer tokens for any transport (node or web).
import type { Interceptor } from "@connectrpc/connect";

/**
 * An interceptor that sends `authorization: Bearer <token>` with every
 * call, streams included. {@link wfdClientForNode} and `wfdClientForWeb`
 * add it for their `token` option; add it yourself to a transport of
 * your own (then check {@link assertTokenTransport} too).
 */
export function bearerTokenInterceptor(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => async (req) => {
    req.header.set("authorization", value);
    return next(req);
  };
}

/**
 * Whether a base URL names this machine: localhost or a loopback IP
 * address (127.0.0.0/8, ::1).
 */
export function isLoopbackUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Throws unless a token may go to `baseUrl`: over TLS (`https://`), or in
 * plaintext to a loopback address (a local server, or a mesh sidecar
 * that adds TLS). A token must not cross a network in plaintext.
 */
export function assertTokenTransport(baseUrl: string): void {
  if (new URL(baseUrl).protocol === "https:" || isLoopbackUrl(baseUrl)) {
    return;
  }
  throw new Error(`wfd client: a bearer token is sent only over TLS (https://) or in plaintext to a loopback address, not to ${baseUrl}`);
}

/** The header a call names its namespace in; without it, "default". */
export const namespaceHeader = "wfd-namespace";

/**
 * An interceptor that puts every call, streams included, in namespace
 * `ns`: the handlers, workflows, tasks, published events and schedules it
 * sees are that namespace's, and a worker serves its workflows there.
 * {@link wfdClientForNode}, `wfdClientForWeb` and `Worker` add it for
 * their `namespace` option.
 */
export function namespaceInterceptor(ns: string): Interceptor {
  assertNamespace(ns);
  return (next) => async (req) => {
    req.header.set(namespaceHeader, ns);
    return next(req);
  };
}

/**
 * Throws unless `ns` can name a namespace: 1 to 48 lower-case letters,
 * digits and hyphens, starting with a letter, not ending with a hyphen.
 */
export function assertNamespace(ns: string): void {
  if (!/^[a-z]([a-z0-9-]{0,46}[a-z0-9])?$/.test(ns)) {
    throw new Error(`wfd client: ${JSON.stringify(ns)} is not a namespace (1 to 48 of a-z 0-9 -, starting with a letter, not ending with -)`);
  }
}
