"""Fixtures: a real `wfd serve` for the session, clients, and a cuttable proxy.

The server binary is $WFD_BIN; without it the fixture builds one with
`go build -o <tmp>/wfd ./cmd/wfd` from the repository root.
"""

from __future__ import annotations

import os

# grpc core logs (a GOAWAY from a test server stopping, say) are noise here.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import wfd_client  # noqa: E402
from proxy import Proxy  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[3]

# Retries for clients that go through a proxy the tests cut: short pauses so
# a reconnect costs tens of milliseconds.
FAST_RETRY = wfd_client.RetryPolicy(max_attempts=8, initial_backoff=0.02, max_backoff=0.2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wfd_bin(tmp: Path) -> str:
    """$WFD_BIN, or a binary built from the repository root into tmp."""
    env_bin = os.environ.get("WFD_BIN")
    if env_bin:
        return env_bin
    out = tmp / "wfd"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/wfd"], cwd=REPO_ROOT, check=True)
    return str(out)


@pytest.fixture(scope="session")
def wfd_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _wfd_bin(tmp_path_factory.mktemp("bin"))


class Server:
    """One `wfd serve` process on addr with its store in data."""

    def __init__(self, binary: str, data: Path, addr: str | None = None) -> None:
        self.binary, self.data = binary, data
        self.addr = addr or f"127.0.0.1:{_free_port()}"
        self.log_path = data.parent / (data.name + ".log")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--addr", self.addr, "--data", str(self.data), "--log-level", "warn"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        probe = wfd_client.Client(self.addr, timeout=1.0, retry=wfd_client.RetryPolicy(max_attempts=1))
        try:
            deadline = time.monotonic() + 30
            while True:
                if self.proc.poll() is not None:
                    log_text = self.log_path.read_text(errors="replace")
                    pytest.fail(f"wfd serve exited with {self.proc.returncode}:\n{log_text}")
                try:
                    probe.workflows()
                    return
                except wfd_client.WfdError:
                    if time.monotonic() > deadline:
                        pytest.fail("wfd serve did not answer within 30 s")
                    time.sleep(0.05)
        finally:
            probe.close()

    def stop(self) -> None:
        """SIGTERM, as an operator would; SIGKILL if it hangs."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


@pytest.fixture(scope="session")
def server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Starts `wfd serve` on a free port for the session and yields its address."""
    srv = Server(wfd_bin, tmp_path_factory.mktemp("wfd") / "data")
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


@pytest.fixture
def client(server: str) -> Iterator[wfd_client.Client]:
    with wfd_client.Client(server) as c:
        yield c


@pytest.fixture
async def aclient(server: str) -> AsyncIterator[wfd_client.AsyncClient]:
    async with wfd_client.AsyncClient(server) as c:
        yield c


@pytest.fixture
def proxy(server: str) -> Iterator[Proxy]:
    p = Proxy(server)
    yield p
    p.close()
