"""A TCP proxy between a client and the server that a test can cut, to play
a flaky network. Threads, so it serves sync and asyncio tests alike."""

from __future__ import annotations

import socket
import threading


class Proxy:
    """Forwards every connection on ``addr`` to ``target`` ("host:port").

    ``sever()`` cuts every connection in flight; ``refuse_next(n)`` closes
    the next n connections at once; ``cut_after(n)`` makes every new
    connection end once it has forwarded n bytes to the client (in the
    middle of a message or not).
    """

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.addr = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._closed = False
        self._refuse = 0
        self._budget = 0
        self.accepted = 0  # connections forwarded
        self.refused = 0  # connections refused
        self._threads: list[threading.Thread] = []
        self._spawn(self._serve)

    def _spawn(self, fn, *args) -> None:  # type: ignore[no-untyped-def]
        t = threading.Thread(target=fn, args=args, daemon=True)
        t.start()
        self._threads.append(t)

    def refuse_next(self, n: int) -> None:
        with self._lock:
            self._refuse = n

    def cut_after(self, n: int) -> None:
        with self._lock:
            self._budget = n

    def sever(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, set()
        for s in conns:
            _kill(s)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        _kill(self._listener)
        self.sever()
        for t in self._threads:
            t.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                down, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    _kill(down)
                    return
                refuse = self._refuse > 0
                if refuse:
                    self._refuse -= 1
                    self.refused += 1
                budget = self._budget
            if refuse:
                _kill(down)
                continue
            try:
                up = socket.create_connection(self._target)
            except OSError:
                _kill(down)
                continue
            for s in (down, up):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.accepted += 1
                self._conns.update((down, up))
            self._spawn(self._pump, down, up, 0)
            self._spawn(self._pump, up, down, budget)

    def _pump(self, src: socket.socket, dst: socket.socket, budget: int) -> None:
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if budget and sent + len(data) >= budget:
                    dst.sendall(data[: budget - sent])
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._conns.discard(src)
                self._conns.discard(dst)
            _kill(src)
            _kill(dst)


def _kill(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
