"""Fixtures: a real `wfd serve` for the session, clients, and a cuttable proxy;
and waits for conditions (wait_for, wait_for_async) with one generous bound.

The server binary is $WFD_BIN; without it the fixture builds one with
`go build -o <tmp>/wfd ./cmd/wfd` from the repository root.
"""

from __future__ import annotations

import os

# grpc core logs (a GOAWAY from a test server stopping, say) are noise here.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import asyncio
import inspect
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import wfd_client  # noqa: E402
from proxy import Proxy  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[3]

# Bounds every wait of the tests. Far above what any condition takes on an
# idle machine (milliseconds): it only turns a condition that never holds
# into a failure instead of a hang, and a machine crowded by other work must
# never reach it. (Go's tests use the same bound: internal/testwait.) It is
# also the tests' unary call timeout: the client's default of 10 s is about
# production latencies, not a crowded test machine.
WAIT = 120.0

# Retries for clients that go through a proxy the tests cut: short pauses so
# a reconnect costs tens of milliseconds, and attempts for a few seconds of
# refused connections (grpc's own reconnect backoff races the retries).
FAST_RETRY = wfd_client.RetryPolicy(max_attempts=20, initial_backoff=0.02, max_backoff=0.2)

T = TypeVar("T")


def _describe(what: str | Callable[[], str]) -> str:
    return what if isinstance(what, str) else what()


def wait_for(what: str | Callable[[], str], cond: Callable[[], T]) -> T:
    """Polls cond until it returns something truthy, and returns that.

    Fails the test with what (a string, or a function that describes the
    state last seen) if WAIT passes first; an exception from cond ends the
    wait at once.
    """
    start = time.monotonic()
    pause = 0.001
    while True:
        got = cond()
        if got:
            return got
        waited = time.monotonic() - start
        if waited > WAIT:
            pytest.fail(f"waited {waited:.1f} s: not yet: {_describe(what)}")
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


async def wait_for_async(what: str | Callable[[], str], cond: Callable[[], T | Awaitable[T]]) -> T:
    """wait_for in asyncio: cond may be a plain or an async function."""
    start = time.monotonic()
    pause = 0.001
    while True:
        got = cond()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return got  # type: ignore[return-value]
        waited = time.monotonic() - start
        if waited > WAIT:
            pytest.fail(f"waited {waited:.1f} s: not yet: {_describe(what)}")
        await asyncio.sleep(pause)
        pause = min(2 * pause, 0.05)


def connect(addr: str, **kw: Any) -> wfd_client.Client:
    """A Client whose unary calls may take up to WAIT (unless kw says otherwise)."""
    return wfd_client.Client(addr, **{"timeout": WAIT, **kw})


def aconnect(addr: str, **kw: Any) -> wfd_client.AsyncClient:
    """connect's asyncio twin."""
    return wfd_client.AsyncClient(addr, **{"timeout": WAIT, **kw})


# A test that follows a stream waits for a record as long as it takes; one
# whose record never comes would hang the suite. This fails it instead,
# far above what a test takes even on a crowded machine (go test's default).
TEST_TIMEOUT = 600


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        pytest.fail(f"{item.nodeid} did not end within {TEST_TIMEOUT} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_TIMEOUT)
    try:
        return (yield)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


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
    """One `wfd serve` process on addr with its store in data.

    Handlers idle in memory are never released by time (`--idle-timeout
    0`): a test that checks a handler's residency or the release count would
    otherwise depend on how fast the machine gets there. Tests release by
    hand.
    """

    def __init__(
        self, binary: str, data: Path, addr: str | None = None, extra_args: Sequence[str] = (), **probe_kw: Any
    ) -> None:
        # extra_args go to `wfd serve`; probe_kw to the client that waits for it (credentials=, say).
        self.binary, self.data = binary, data
        self.extra_args, self.probe_kw = list(extra_args), probe_kw
        self._pick_port = addr is None  # until the first start succeeds
        self.addr = addr or f"127.0.0.1:{_free_port()}"
        self.log_path = data.parent / (data.name + ".log")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        for _ in range(4):
            if self._start():
                self._pick_port = False
                return
            # The port was taken between _free_port and serve: another one.
            self.addr = f"127.0.0.1:{_free_port()}"
        pytest.fail(f"wfd serve found no free port; see {self.log_path}")

    def _start(self) -> bool:
        """Starts the process and waits until it answers ListWorkflows;
        False if it could not bind a port of its own choosing."""
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--addr", self.addr, "--data", str(self.data), "--log-level", "warn",
             "--idle-timeout", "0", *self.extra_args],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        proc = self.proc
        # One attempt per probe: the wait is the retry. Refused connections
        # fail at once; the timeout only bounds a probe the server accepted.
        probe = wfd_client.Client(
            self.addr, timeout=10.0, retry=wfd_client.RetryPolicy(max_attempts=1), **self.probe_kw
        )
        last: list[BaseException] = []

        def answers() -> bool:
            if proc.poll() is not None:
                return True  # told apart below
            try:
                probe.workflows()
                return True
            except wfd_client.WfdError as e:
                last[:] = [e]
                return False

        try:
            wait_for(lambda: f"wfd serve answers ListWorkflows (last error: {last})", answers)
        finally:
            probe.close()
        if proc.poll() is None:
            return True
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            log_text = f.read().decode(errors="replace")
        self.proc = None
        if self._pick_port and "address already in use" in log_text:
            return False
        pytest.fail(f"wfd serve exited with {proc.returncode}:\n{log_text}")

    def stop(self) -> None:
        """SIGTERM, as an operator would; SIGKILL if it has not ended
        within WAIT."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=WAIT)
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
    with connect(server) as c:
        yield c


@pytest.fixture
async def aclient(server: str) -> AsyncIterator[wfd_client.AsyncClient]:
    async with aconnect(server) as c:
        yield c


@pytest.fixture
def proxy(server: str) -> Iterator[Proxy]:
    p = Proxy(server)
    yield p
    p.close()


# --- workers (test_worker*.py) ------------------------------------------------

import threading  # noqa: E402
import uuid  # noqa: E402

from wfd_client.worker import Worker  # noqa: E402


def unique(prefix: str) -> str:
    """A workflow name of its own: definitions are stored per name, and a
    name registered with one definition keeps it on the session's server."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class WorkerThread:
    """A Worker running in a thread of the test process until stop()."""

    def __init__(self, addr: str, workflows: list[Any], **kw: Any) -> None:
        self.worker = Worker(addr, workflows=workflows, **{"call_timeout": WAIT, **kw})
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as e:  # noqa: BLE001 - the test reads it
            self.error = e

    def stop(self) -> None:
        self.worker.stop()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the worker did not stop"

    def __enter__(self) -> WorkerThread:
        """Waits until the server has registered the worker's workflows."""
        wait_for(lambda: f"the worker connected (error: {self.error!r})", lambda: self.worker.worker_id or self.error)
        assert self.error is None, self.error
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def worker_ids(addr: str) -> list[str]:
    """The ids of the workers connected to the server at addr (ListWorkers)."""
    from wfd.v1 import worker_pb2, worker_pb2_grpc

    with connect(addr) as c:
        stub = worker_pb2_grpc.WorkerServiceStub(c.channel)  # type: ignore[no-untyped-call]
        res = stub.ListWorkers(worker_pb2.ListWorkersRequest(), timeout=WAIT)
        return [w.worker_id for w in res.workers]
