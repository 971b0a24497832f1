"""The step wire: one JSON object per line over a local TCP socket.

NetworkTables cannot carry a per-period handshake in time (ntcore sends at most once per 5 ms
and drops a sooner flush), so the bridge and simserver exchange each robot period over their
own socket, in both timing modes. The conversation:

    simserver -> bridge   {"hello": "simserver", "version": 2, "mode": "lockstep" | "realtime"}
    bridge -> simserver   {"hello": "bridge", "version": 2, "period": 0.02, "mode": <same>}
                          or {"hello": "bridge", "version": 2, "refused": "<why>"}
    then per robot period:
    bridge -> simserver   {"time": <robot time, s>, "values": {<input topic>: value, ...},
                           "late": <periods answered late so far (real time)>}
    simserver -> bridge   {"values": {<sensor or Driver Station topic>: value, ...}}
    and at the end of the run:
    simserver -> bridge   {"bye": "<why>"}

In ``lockstep`` mode the robot program's clock waits for each answer. In ``realtime`` mode it
keeps running: the bridge waits a bounded time for the answer inside the robot loop and goes
on with the last sensors when it is late (see ``simserver.bridge.sync``).

Topic names are those of ``simserver.io.topics``. Floats travel as JSON numbers in their
shortest round-trip form, so both sides see bit-identical values.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from typing import Any

VERSION = 2
MODES = ("lockstep", "realtime")
MAX_LINE = 1 << 20
SEND_TIMEOUT = 5.0  # s; a message is a few kB, far below the socket buffers


class LinkError(Exception):
    """The other side went away, timed out or sent something that is not a message."""


class LinkTimeout(LinkError):
    """No whole message arrived in time; the connection is still usable."""


class Link:
    """One end of a lock-step connection."""

    def __init__(self, sock: socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self._buf = b""

    def send(self, message: dict[str, Any]) -> None:
        """Send one message."""
        try:
            self.sock.settimeout(SEND_TIMEOUT)
            self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        except OSError as exc:
            raise LinkError(f"connection lost ({exc})") from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next message; LinkTimeout if none arrives within ``timeout`` s (0: only what
        has already arrived), LinkError if the connection is lost or garbled."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            try:
                self.sock.settimeout(max(0.0, left))
                chunk = self.sock.recv(65536)
            except (TimeoutError, BlockingIOError):
                if time.monotonic() >= deadline:
                    raise LinkTimeout(f"no message for {timeout:g} s") from None
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


class Refused(LinkError):
    """The bridge answered but will not exchange periods with us (its reason)."""


def attach(host: str, port: int, mode: str, timeout: float) -> tuple[Link, float]:
    """Connect to a bridge's step port and greet in ``mode`` ("lockstep" or "realtime");
    returns the link and the robot loop period (s). OSError when nothing listens there,
    Refused with the bridge's reason, LinkError when whatever listens does not greet back
    within ``timeout`` s."""
    sock = socket.create_connection((host, port), timeout=1.0)
    link = Link(sock)
    try:
        link.send({"hello": "simserver", "version": VERSION, "mode": mode})
        hello = link.receive(timeout)
    except LinkError:
        link.close()
        raise
    refused = hello.get("refused")
    period = hello.get("period")
    if isinstance(refused, str):
        link.close()
        raise Refused(refused)
    if hello.get("hello") != "bridge" or hello.get("mode") != mode or not isinstance(
            period, float) or not 0.0 < period <= 1.0:
        link.close()
        raise LinkError(f"unexpected greeting from {host}:{port}: {hello!r:.120}")
    return link, period


class Attacher(threading.Thread):
    """Tries to attach to a bridge every ``interval`` s in the background, so a real-time
    loop never waits on a connect: :meth:`take` returns the link once there is one."""

    def __init__(self, host: str, port: int, mode: str, timeout: float,
                 interval: float = 0.5):
        super().__init__(name="simserver-attach", daemon=True)
        self.address = (host, port)
        self.mode, self.timeout, self.interval = mode, timeout, interval
        self.refused: str | None = None  # the bridge's reason, when it refused (then stops)
        self._found: tuple[Link, float] | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                found = attach(*self.address, self.mode, self.timeout)
            except Refused as exc:
                self.refused = str(exc)
                return
            except (OSError, LinkError):
                self._stop.wait(self.interval)
                continue
            with self._lock:
                if self._stop.is_set():
                    found[0].close()
                else:
                    self._found = found
                    self._ready.set()
            return

    def wait(self, timeout: float) -> None:
        """Sleep up to ``timeout`` s, waking as soon as a bridge is attached (its first robot
        loop is waiting for an answer)."""
        self._ready.wait(timeout)

    def take(self) -> tuple[Link, float] | None:
        """The attached link and period, once (None until then)."""
        with self._lock:
            found, self._found = self._found, None
        return found

    def stop(self) -> None:
        """Stop trying; a link found but not taken is closed."""
        self._stop.set()
        found = self.take()
        if found is not None:
            found[0].close()
