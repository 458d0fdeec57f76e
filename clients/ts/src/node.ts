/**
 * @wfd/client/node — {@link WfdClient} over connect-node's HTTP/2
 * transports, plus everything `@wfd/client` exports.
 *
 * @packageDocumentation
 */
import type * as http2 from "node:http2";

import type { Interceptor, Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";

import { WfdClient, type WfdClientOptions } from "./client.js";

export * from "./index.js";

/** The wire protocols wfd serves on one port. */
export type Protocol = "grpc" | "connect" | "grpcweb";

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
}

/**
 * The base URL for an address: `host:port` becomes `http://host:port`;
 * a URL with a scheme is left alone.
 */
export function baseUrlOf(addr: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(addr) ? addr : `http://${addr}`;
}

/**
 * A transport for wfd in Node, and the function that closes its
 * connection.
 */
export function nodeTransport(
  addr: string,
  opts: Omit<NodeClientOptions, "timeoutMs" | "retry"> = {},
): { transport: Transport; close: () => void } {
  const baseUrl = baseUrlOf(addr);
  const protocol = opts.protocol ?? "grpc";
  const httpVersion = opts.httpVersion ?? "2";
  const interceptors = opts.interceptors ?? [];
  if (httpVersion === "1.1") {
    switch (protocol) {
      case "grpc":
        throw new Error('wfd client: gRPC needs httpVersion "2"');
      case "connect":
        return {
          transport: createConnectTransport({ baseUrl, httpVersion, interceptors, useBinaryFormat: opts.useBinaryFormat ?? true }),
          close: () => {},
        };
      case "grpcweb":
        return { transport: createGrpcWebTransport({ baseUrl, httpVersion, interceptors }), close: () => {} };
    }
  }
  const sessionManager = new Http2SessionManager(
    baseUrl,
    { pingIntervalMs: opts.pingIntervalMs ?? 30_000, pingTimeoutMs: opts.pingTimeoutMs ?? 10_000 },
    opts.nodeOptions,
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

/**
 * A {@link WfdClient} of the server at `addr` (`"127.0.0.1:7233"` or a
 * base URL such as `"http://127.0.0.1:7233"`), over gRPC by default. It
 * connects on the first call; `client.close()` closes the connection.
 */
export function wfdClientForNode(addr: string, opts: NodeClientOptions = {}): WfdClient {
  const { transport, close } = nodeTransport(addr, opts);
  return new WfdClient(transport, { timeoutMs: opts.timeoutMs, retry: opts.retry, onClose: close });
}
