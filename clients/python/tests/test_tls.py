"""TLS, mutual TLS and bearer tokens: a real `wfd serve --tls-cert --tls-key
--tls-client-ca` with certificates made by openssl for the test, and a tiny
grpc server that records the metadata it receives."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from conftest import Server, aconnect, connect

import wfd_client
from wfd_client import tls_credentials

ONCE = wfd_client.RetryPolicy(max_attempts=1)  # a refusal is the same on every attempt


def _openssl(cwd: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A CA, a server certificate for 127.0.0.1 and localhost, a client
    certificate, and a client certificate from another CA."""
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("ca", "other-ca"):
        _openssl(d, "req", "-x509", "-new", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.crt", "-subj", f"/CN={ca}",
                 "-days", "1")
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for name, cn, ca, ext in (("server", "localhost", "ca", "server.ext"), ("client", "alice", "ca", "client.ext"),
                              ("stranger", "mallory", "other-ca", "client.ext")):
        _openssl(d, "req", "-new", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        _openssl(d, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "1", "-extfile", ext)
    return {f"{n}_{k}": str(d / f"{n}.{k}") for n in ("server", "client", "stranger") for k in ("crt", "key")} | {
        "ca": str(d / "ca.crt")}


@pytest.fixture(scope="module")
def tls_server(wfd_bin: str, pki: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    srv = Server(
        wfd_bin, tmp_path_factory.mktemp("wfd-tls") / "data",
        extra_args=["--tls-cert", pki["server_crt"], "--tls-key", pki["server_key"], "--tls-client-ca", pki["ca"]],
        credentials=tls_credentials(pki["ca"], pki["client_crt"], pki["client_key"]),
    )
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


def test_sync_client_over_mutual_tls_with_a_token(tls_server: str, pki: dict[str, str]) -> None:
    creds = tls_credentials(pki["ca"], pki["client_crt"], pki["client_key"])
    with connect(tls_server, credentials=creds, token="s3cret") as c:
        assert "echo" in [w.name for w in c.workflows()]
        h = c.run("echo", {"text": "hi"})
        recs = list(c.stream(h.handler_id, include_internal=True))
        assert recs[-1].WhichOneof("kind") == "handler_finished"


async def test_async_client_over_mutual_tls_with_a_token(tls_server: str, pki: dict[str, str]) -> None:
    creds = tls_credentials(pki["ca"], pki["client_crt"], pki["client_key"])
    async with aconnect(tls_server, credentials=creds, token="s3cret") as c:
        assert "echo" in [w.name for w in await c.workflows()]
        h = await c.run("echo", {"text": "hi"})
        recs = [r async for r in c.stream(h.handler_id, include_internal=True)]
        assert recs[-1].WhichOneof("kind") == "handler_finished"


@pytest.mark.parametrize("case", ["no client certificate", "client certificate from another CA", "plaintext"])
def test_refused(tls_server: str, pki: dict[str, str], case: str) -> None:
    creds = {
        "no client certificate": tls_credentials(pki["ca"]),
        "client certificate from another CA": tls_credentials(pki["ca"], pki["stranger_crt"], pki["stranger_key"]),
        "plaintext": None,
    }[case]
    with connect(tls_server, credentials=creds, retry=ONCE) as c:
        with pytest.raises(wfd_client.Unavailable):
            c.workflows()


class _Recorder(grpc.GenericRpcHandler):
    """Records each call's metadata and answers UNIMPLEMENTED."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> None:
        self.seen.append(dict(handler_call_details.invocation_metadata))  # type: ignore[attr-defined]
        return None


@pytest.fixture
def recorder() -> Iterator[tuple[str, _Recorder]]:
    rec = _Recorder()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[rec])
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield f"127.0.0.1:{port}", rec
    finally:
        srv.stop(grace=None)


async def test_token_reaches_the_server_from_sync_and_async_clients(recorder: tuple[str, _Recorder]) -> None:
    addr, rec = recorder
    with connect(addr, token="s3cret", retry=ONCE) as c:
        with pytest.raises(wfd_client.Unimplemented):
            c.workflows()
    async with aconnect(addr, token="s3cret", retry=ONCE) as ac:
        with pytest.raises(wfd_client.Unimplemented):
            await ac.workflows()
    assert [m.get("authorization") for m in rec.seen] == ["Bearer s3cret", "Bearer s3cret"]


@pytest.mark.parametrize("target", ["10.1.2.3:7233", "wfd.example:7233", "dns:///wfd.example:7233"])
def test_token_in_plaintext_only_to_loopback(target: str) -> None:
    with pytest.raises(ValueError, match="only over TLS"):
        wfd_client.Client(target, token="s3cret")
    with pytest.raises(ValueError, match="only over TLS"):
        wfd_client.Worker(target, workflows=[], token="s3cret")
    wfd_client.Client(target, token="s3cret", credentials=grpc.ssl_channel_credentials()).close()


@pytest.mark.parametrize(
    ("target", "loopback"),
    [("127.0.0.1:7233", True), ("localhost:7233", True), ("[::1]:7233", True), ("dns:///localhost:7233", True),
     ("unix:///run/wfd.sock", True), ("10.1.2.3:7233", False), ("wfd.example:7233", False),
     ("dns:///wfd.example:7233", False)],
)
def test_is_loopback_target(target: str, loopback: bool) -> None:
    assert wfd_client.is_loopback_target(target) is loopback


def test_tls_credentials_needs_cert_and_key_together(pki: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="together"):
        tls_credentials(pki["ca"], cert_file=pki["client_crt"])

