/**
 * @wfd/client/web — {@link WfdClient} over connect-web's fetch transports,
 * for browsers (and any runtime with fetch), plus everything
 * `@wfd/client` exports.
 *
 * @packageDocumentation
 */
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";

import { assertTokenTransport, bearerTokenInterceptor, namespaceInterceptor } from "./auth.js";
import { WfdClient, type WfdClientOptions } from "./client.js";

export * from "./index.js";

/** The protocols a browser can speak to wfd (gRPC itself needs HTTP/2 trailers, which fetch lacks). */
export type WebProtocol = "connect" | "grpcweb";

/** Options of {@link wfdClientForWeb}. */
export interface WebClientOptions extends Omit<WfdClientOptions, "onClose"> {
  /** Default "connect". */
  protocol?: WebProtocol;
  /** Connect protocol only: binary protobuf or JSON (default, easy to read in devtools). */
  useBinaryFormat?: boolean;
  /** Interceptors of the transport (they run once per attempt). */
  interceptors?: Interceptor[];
  /** A fetch of your own, for instance one that sets `credentials: "include"`. */
  fetch?: typeof globalThis.fetch;
  /**
   * A bearer token sent with every call (`authorization: Bearer ...`);
   * only to an `https://` URL, or a loopback address in plaintext. (TLS
   * itself is the browser's: use an `https://` base URL.)
   */
  token?: string;
  /** The namespace every call is in (default "default"). */
  namespace?: string;
}

/** A fetch-based transport for wfd at `baseUrl` (for instance `"http://127.0.0.1:7233"`). */
export function webTransport(baseUrl: string, opts: Omit<WebClientOptions, "timeoutMs" | "retry"> = {}): Transport {
  const interceptors = [...(opts.interceptors ?? [])];
  if (opts.token !== undefined) {
    assertTokenTransport(baseUrl);
    interceptors.unshift(bearerTokenInterceptor(opts.token));
  }
  if (opts.namespace !== undefined) {
    interceptors.unshift(namespaceInterceptor(opts.namespace));
  }
  switch (opts.protocol ?? "connect") {
    case "connect":
      return createConnectTransport({ baseUrl, interceptors, fetch: opts.fetch, useBinaryFormat: opts.useBinaryFormat ?? false });
    case "grpcweb":
      return createGrpcWebTransport({ baseUrl, interceptors, fetch: opts.fetch });
    default:
      throw new Error(`wfd client: unknown protocol ${JSON.stringify(opts.protocol)} (want connect or grpcweb)`);
  }
}

/** A {@link WfdClient} of the server at `baseUrl`, over the Connect protocol by default. */
export function wfdClientForWeb(baseUrl: string, opts: WebClientOptions = {}): WfdClient {
  return new WfdClient(webTransport(baseUrl, opts), { timeoutMs: opts.timeoutMs, retry: opts.retry });
}
