/**
 * @wfd/client/node — {@link WfdClient} over connect-node's HTTP/2
 * transports, plus everything `@wfd/client` exports.
 *
 * @packageDocumentation
 */
import { readFileSync } from "node:fs";
import type * as http2 from "node:http2";

import type { Interceptor, Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";

import { assertTokenTransport, bearerTokenInterceptor, namespaceInterceptor } from "./auth.js";
import { WfdClient, type WfdClientOptions } from "./client.js";

export * from "./index.js";

/** The wire protocols wfd serves on one port. */
export type Protocol = "grpc" | "connect" | "grpcweb";

/**
 * TLS settings of a node client: PEM contents (see {@link tlsFromFiles}
 * for files). Without `ca` the server is verified against Node's roots.
 */
export interface TlsOptions {
  /** CA certificates to verify the server against, instead of Node's roots. */
  ca?: string | Buffer | (string | Buffer)[];
  /** A client certificate (chain) and its key, for mutual TLS. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name to verify the server's certificate for, if not the URL's host. */
  servername?: string;
}

/** Reads the PEM files of {@link TlsOptions}: `tlsFromFiles({ ca: "ca.crt", cert: "client.crt", key: "client.key" })`. */
export function tlsFromFiles(files: { ca?: string; cert?: string; key?: string; servername?: string }): TlsOptions {
  const read = (f?: string) => (f === undefined ? undefined : readFileSync(f));
  return { ca: read(files.ca), cert: read(files.cert), key: read(files.key), servername: files.servername };
}

/** Options of {@link wfdClientForNode}. */
export interface NodeClientOptions extends Omit<WfdClientOptions, "onClose"> {
  /** Default "grpc". */
  protocol?: Protocol;
  /**
   * "2" (default) multiplexes every call on one HTTP/2 connection
   * (plaintext for `http://`); "1.1" works for "connect" and "grpcweb" only.
   */
  httpVersion?: "2" | "1.1";
  /** Connect protocol only: binary protobuf (default) or JSON. */
  useBinaryFormat?: boolean;
  /** Interceptors of the transport (they run once per attempt). */
  interceptors?: Interceptor[];
  /**
   * HTTP/2 keepalive: a connection with open streams that is quiet this
   * long is pinged, and dropped (so a stream reconnects) if the ping is not
   * answered within `pingTimeoutMs`. Defaults 30 s and 10 s.
   */
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** Options for node:http2's connect() (TLS settings for `https://`, say). */
  nodeOptions?: http2.ClientSessionOptions | http2.SecureClientSessionOptions;
  /**
   * Connect over TLS (`true`: verified against Node's roots). A bare
   * `host:port` then means `https://host:port`.
   */
  tls?: TlsOptions | boolean;
  /**
   * A bearer token sent with every call (`authorization: Bearer ...`);
   * only over TLS, or in plaintext to a loopback address.
   */
  token?: string;
  /** The namespace every call is in (default "default"). */
  namespace?: string;
}

/**
 * The base URL for an address: `host:port` becomes `http://host:port`;
 * a URL with a scheme is left alone.
 */
export function baseUrlOf(addr: string, tls = false): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(addr) ? addr : `${tls ? "https" : "http"}://${addr}`;
}

/**
 * A transport for wfd in Node, and the function that closes its
 * connection.
 */
export function nodeTransport(
  addr: string,
  opts: Omit<NodeClientOptions, "timeoutMs" | "retry"> = {},
): { transport: Transport; close: () => void } {
  const baseUrl = baseUrlOf(addr, opts.tls !== undefined && opts.tls !== false);
  if (opts.tls && new URL(baseUrl).protocol !== "https:") {
    throw new Error(`wfd client: tls options with a plaintext URL ${baseUrl}`);
  }
  const protocol = opts.protocol ?? "grpc";
  const httpVersion = opts.httpVersion ?? "2";
  const interceptors = [...(opts.interceptors ?? [])];
  if (opts.token !== undefined) {
    assertTokenTransport(baseUrl);
    interceptors.unshift(bearerTokenInterceptor(opts.token));
  }
  if (opts.namespace !== undefined) {
    interceptors.unshift(namespaceInterceptor(opts.namespace));
  }
  const tls = typeof opts.tls === "object" ? stripUndefined(opts.tls) : {};
  if (httpVersion === "1.1") {
    const nodeOptions = tls;
    switch (protocol) {
      case "grpc":
        throw new Error('wfd client: gRPC needs httpVersion "2"');
      case "connect":
        return {
          transport: createConnectTransport({ baseUrl, httpVersion, interceptors, nodeOptions, useBinaryFormat: opts.useBinaryFormat ?? true }),
          close: () => {},
        };
      case "grpcweb":
        return { transport: createGrpcWebTransport({ baseUrl, httpVersion, interceptors, nodeOptions }), close: () => {} };
    }
  }
  const sessionManager = new Http2SessionManager(
    baseUrl,
    { pingIntervalMs: opts.pingIntervalMs ?? 30_000, pingTimeoutMs: opts.pingTimeoutMs ?? 10_000 },
    { ...tls, ...opts.nodeOptions },
  );
  const common = { baseUrl, httpVersion: "2" as const, sessionManager, interceptors };
  let transport: Transport;
  switch (protocol) {
    case "grpc":
      transport = createGrpcTransport(common);
      break;
    case "connect":
      transport = createConnectTransport({ ...common, useBinaryFormat: opts.useBinaryFormat ?? true });
      break;
    case "grpcweb":
      transport = createGrpcWebTransport(common);
      break;
    default:
      throw new Error(`wfd client: unknown protocol ${JSON.stringify(protocol)} (want grpc, connect or grpcweb)`);
  }
  return { transport, close: () => sessionManager.abort() };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A {@link WfdClient} of the server at `addr` (`"127.0.0.1:7233"` or a
 * base URL such as `"http://127.0.0.1:7233"`), over gRPC by default. It
 * connects on the first call; `client.close()` closes the connection.
 */
export function wfdClientForNode(addr: string, opts: NodeClientOptions = {}): WfdClient {
  const { transport, close } = nodeTransport(addr, opts);
  return new WfdClient(transport, { timeoutMs: opts.timeoutMs, retry: opts.retry, onClose: close });
}
