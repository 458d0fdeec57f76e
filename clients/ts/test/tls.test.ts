// TLS, mutual TLS and bearer tokens against a real `wfd serve --tls-cert
// --tls-key --tls-client-ca`, with certificates made by openssl for the test.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { HandlerStatus, type WfdClient } from "@wfd/client";
import { tlsFromFiles, type NodeClientOptions } from "@wfd/client/node";

import { drain, nodeClient, startServer, webClient, type TestServer } from "./helpers.js";

interface Pki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  strangerCert: string;
  strangerKey: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A CA, a server certificate for 127.0.0.1 and localhost, a client certificate, and one from another CA. */
function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "wfd-ts-pki-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  for (const ca of ["ca", "other-ca"]) {
    openssl(dir, "req", "-x509", "-new", ...ec, "-keyout", `${ca}.key`, "-out", `${ca}.crt`, "-subj", `/CN=${ca}`, "-days", "1");
  }
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  const issue = (name: string, cn: string, ca: string, ext: string) => {
    openssl(dir, "req", "-new", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`);
    openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-out", `${name}.crt`, "-days", "1", "-extfile", ext);
  };
  issue("server", "localhost", "ca", "server.ext");
  issue("client", "alice", "ca", "client.ext");
  issue("stranger", "mallory", "other-ca", "client.ext");
  const p = (f: string) => join(dir, f);
  return {
    dir,
    ca: p("ca.crt"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    clientCert: p("client.crt"),
    clientKey: p("client.key"),
    strangerCert: p("stranger.crt"),
    strangerKey: p("stranger.key"),
  };
}

let pki: Pki;
let server: TestServer;
before(async () => {
  pki = makePki();
  server = await startServer(undefined, ["--tls-cert", pki.serverCert, "--tls-key", pki.serverKey, "--tls-client-ca", pki.ca], {
    tls: tlsFromFiles({ ca: pki.ca, cert: pki.clientCert, key: pki.clientKey }),
  });
});
after(async () => {
  await server?.stop();
});

describe("over TLS with a client certificate and a token", () => {
  const variants: [string, NodeClientOptions][] = [
    ["grpc", { protocol: "grpc" }],
    ["connect", { protocol: "connect" }],
    ["grpcweb", { protocol: "grpcweb" }],
    ["connect over http/1.1", { protocol: "connect", httpVersion: "1.1" }],
    ["grpcweb over http/1.1", { protocol: "grpcweb", httpVersion: "1.1" }],
  ];
  for (const [name, opts] of variants) {
    test(name, async () => {
      const c = nodeClient(server.addr, { ...opts, tls: tlsFromFiles({ ca: pki.ca, cert: pki.clientCert, key: pki.clientKey }), token: "s3cret" });
      try {
        const wfs = await c.workflows();
        assert.ok(wfs.some((w) => w.name === "echo"));
        const h = await c.run("echo", { text: "hi" });
        const recs = await drain(c, h.handlerId);
        const last = recs.at(-1)!;
        assert.equal(last.kind.case, "handlerFinished");
        assert.equal(last.kind.value.status, HandlerStatus.COMPLETED);
      } finally {
        c.close();
      }
    });
  }
});

describe("refused", () => {
  // The refusal is the same on every attempt: one is enough.
  const once: NodeClientOptions = { retry: { maxAttempts: 1 } };
  const cases: [string, () => WfdClient, RegExp][] = [
    ["without a client certificate", () => nodeClient(server.addr, { ...once, tls: tlsFromFiles({ ca: pki.ca }) }), /certificate required/],
    [
      "with a certificate from another CA",
      () => nodeClient(server.addr, { ...once, tls: tlsFromFiles({ ca: pki.ca, cert: pki.strangerCert, key: pki.strangerKey }) }),
      /unknown ca/,
    ],
    [
      "a server not verified (Node's roots)",
      () => nodeClient(server.addr, { ...once, tls: tlsFromFiles({ cert: pki.clientCert, key: pki.clientKey }) }),
      /unable to verify/,
    ],
    ["plaintext", () => nodeClient(server.addr, once), /./],
  ];
  for (const [name, make, want] of cases) {
    test(name, async () => {
      const c = make();
      try {
        await assert.rejects(c.workflows(), want);
      } finally {
        c.close();
      }
    });
  }
});

describe("bearer token", () => {
  /** A plain HTTP/1.1 server on loopback recording each request's authorization header. */
  let recorder: http.Server;
  let seen: (string | undefined)[] = [];
  let base = "";
  before(async () => {
    recorder = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(404).end();
    });
    await new Promise<void>((res) => recorder.listen(0, "127.0.0.1", res));
    base = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((res) => recorder.close(() => res())));

  test("reaches the server from the node and web clients (plaintext on loopback)", async () => {
    seen = [];
    const clients = [nodeClient(base, { protocol: "connect", httpVersion: "1.1", token: "s3cret" }), webClient(base, { token: "s3cret" })];
    for (const c of clients) {
      await assert.rejects(c.workflows());
      c.close();
    }
    assert.ok(seen.length >= 2, `requests seen: ${seen.length}`);
    assert.deepEqual(new Set(seen), new Set(["Bearer s3cret"]));
  });

  test("is refused in plaintext to an address that is not loopback", () => {
    assert.throws(() => nodeClient("192.0.2.1:7233", { token: "s3cret" }), /only over TLS/);
    assert.throws(() => webClient("http://wfd.example:7233", { token: "s3cret" }), /only over TLS/);
    nodeClient("192.0.2.1:7233", { token: "s3cret", tls: true }).close();
    webClient("https://wfd.example:7233", { token: "s3cret" }).close();
  });
});
