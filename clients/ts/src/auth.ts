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
