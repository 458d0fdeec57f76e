"""UUIDv7 (RFC 9562) for handler ids and idempotency keys.

Python 3.11's uuid module has no uuid7 (it arrives in 3.14), and a
dependency for twenty lines is not worth its pin, so this is written here.
The layout is the one Go's github.com/google/uuid NewV7 (the Go client and
the server) produces: 48 bits of Unix milliseconds, the version, 12 bits of
sub-millisecond time (RFC 9562 method 3, so ids made in one process sort in
the order they were made), the variant, and 62 random bits.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

__all__ = ["uuid7"]

_lock = threading.Lock()
_last = 0  # last 60-bit timestamp handed out: milliseconds << 12 | fraction


def uuid7() -> uuid.UUID:
    """Returns a new UUIDv7; later calls in this process return larger ids."""
    global _last
    ns = time.time_ns()
    ts = (ns // 1_000_000) << 12 | (ns % 1_000_000) * 4096 // 1_000_000
    with _lock:
        if ts <= _last:  # same tick, or the clock stepped back
            ts = _last + 1
        _last = ts
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ts >> 12) << 80 | 0x7 << 76 | (ts & 0xFFF) << 64 | 0b10 << 62 | rand
    return uuid.UUID(int=value)
