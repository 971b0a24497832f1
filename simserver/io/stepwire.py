"""The lock-step wire: one JSON object per line over a local TCP socket.

NetworkTables cannot carry a per-period handshake faster than about 4x real time (ntcore sends
at most once per 5 ms), so lock-step exchanges go over their own socket. The conversation:

    simserver -> bridge   {"hello": "simserver", "version": 1}
    bridge -> simserver   {"hello": "bridge", "version": 1, "period": 0.02}
    then per robot period:
    bridge -> simserver   {"time": <robot time, s>, "values": {<input topic>: value, ...}}
    simserver -> bridge   {"values": {<sensor or Driver Station topic>: value, ...}}
    and at the end of the run:
    simserver -> bridge   {"bye": "<why>"}

Topic names are those of ``simserver.io.topics``. Floats travel as JSON numbers in their
shortest round-trip form, so both sides see bit-identical values.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

VERSION = 1
MAX_LINE = 1 << 20


class LinkError(Exception):
    """The other side went away, timed out or sent something that is not a message."""


class Link:
    """One end of a lock-step connection."""

    def __init__(self, sock: socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self._buf = b""

    def send(self, message: dict[str, Any]) -> None:
        """Send one message."""
        try:
            self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        except OSError as exc:
            raise LinkError(f"connection lost ({exc})") from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next message; LinkError if none arrives within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError(f"no message for {timeout:g} s")
            try:
                self.sock.settimeout(left)
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError as exc:
                raise LinkError(f"connection lost ({exc})") from None
            if not chunk:
                raise LinkError("connection closed")
            self._buf += chunk
            if len(self._buf) > MAX_LINE:
                raise LinkError("message too long")
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            raise LinkError("malformed message") from None
        if not isinstance(message, dict):
            raise LinkError("malformed message")
        return message

    def close(self) -> None:
        """Close the socket."""
        with contextlib.suppress(OSError):
            self.sock.close()
