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
                          (lock-step with cameras also "await": {<heartbeat topic>: n, ...},
                          the camera frames published over NT for this period)
    and at the end of the run:
    simserver -> bridge   {"bye": "<why>"}

In ``lockstep`` mode the robot program's clock waits for each answer. In ``realtime`` mode it
keeps running: the bridge waits a bounded time for the answer inside the robot loop and goes
on with the last sensors when it is late (see ``simserver.bridge.sync``).

Topic names are those of ``simserver.contract.topics``. Floats travel as JSON numbers in their
shortest round-trip form, so both sides see bit-identical values.

Whatever the peer sends, a receiver gets a message (a JSON object) or a :class:`LinkError`,
a :class:`ProtocolError` when the peer broke the protocol: a line over ``MAX_LINE`` bytes or
nested deeper than ``MAX_DEPTH`` (refused before it is parsed), a line that is not a JSON
object, a greeting or period message whose period or robot time is not a finite number in
range. Texts a peer sent (a refusal's reason) are clipped before anyone shows them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from simserver.util.untrusted import clip

VERSION = 2
MODES = ("lockstep", "realtime")
MAX_LINE = 1 << 20  # bytes of one message; a period's is a few kB
MAX_DEPTH = 16  # levels of nested arrays and objects in a message; a period's has 3
MAX_PERIOD = 1.0  # s, the longest robot period a bridge may announce
MAX_TIME = 1e9  # s, the latest robot time a bridge may report (31 years)
SEND_TIMEOUT = 5.0  # s; a message is a few kB, far below the socket buffers
REASON = 300  # characters of a peer's text (a refusal's reason) that are shown
SPIN = 0.002  # s a lock-step link polls for the next message before it sleeps (Link.spin)


class LinkError(Exception):
    """The other side went away, timed out or sent something that is not a message."""


class LinkTimeout(LinkError):
    """No whole message arrived in time; the connection is still usable."""


class ProtocolError(LinkError):
    """The peer sent something that breaks the protocol: a line that is not a message (not a
    JSON object, too long, nested too deeply), a bad greeting, a period message without values
    or with a robot time that is not a finite number in range. It is not a working peer."""


class Link:
    """One end of a lock-step connection.

    ``spin`` (s of wall time, 0 by default) is how long :meth:`receive` polls the socket
    without sleeping before it blocks: lock-step sets it to ``SPIN`` on both ends. Each side of
    a lock-step link waits for the other once per period, and waking a process that sleeps in
    the kernel costs tens of µs per message on loopback (measured here: a round trip of a
    period's message took 55-60 µs blocking, 9-12 µs polling), as much as the whole
    period's work of a small robot program. The polling yields the CPU between looks
    (``sched_yield``), so another runnable process on that core goes first."""

    def __init__(self, sock: socket.socket, spin: float = 0.0):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.spin = spin
        self._buf = b""

    def send(self, message: dict[str, Any]) -> None:
        """Send one message."""
        data = _encode(message).encode() + b"\n"
        try:
            self.sock.settimeout(0.0)  # a message fits the socket's buffer: no wait, no poll
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                self.sock.settimeout(SEND_TIMEOUT)
                self.sock.sendall(data[sent:])
        except OSError as exc:
            raise LinkError(f"connection lost ({exc})") from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next message; LinkTimeout if none arrives within ``timeout`` s (0: only what
        has already arrived), ProtocolError if what arrived is not a message (the bad line is
        consumed), LinkError if the connection is lost."""
        deadline = time.monotonic() + timeout
        if self.spin and b"\n" not in self._buf:
            self._poll(min(self.spin, timeout))
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
                raise ProtocolError("message too long")
        line, _, self._buf = self._buf.partition(b"\n")
        if len(line) > MAX_LINE:
            raise ProtocolError("message too long")
        problem = nesting_problem(line, MAX_DEPTH)
        if problem is not None:
            raise ProtocolError(problem)
        try:
            message = json.loads(line)
        except ValueError:
            raise ProtocolError("malformed message") from None
        if not isinstance(message, dict):
            raise ProtocolError("malformed message")
        return message

    def _poll(self, spin: float) -> None:
        """Read what arrives within ``spin`` s into the buffer, polling without sleeping,
        until a whole message is there (errors are left to the blocking read that follows)."""
        end = time.perf_counter() + spin
        try:
            self.sock.settimeout(0.0)
            while True:
                try:
                    chunk = self.sock.recv(65536)
                except BlockingIOError:
                    if time.perf_counter() >= end:
                        return
                    _yield()
                    continue
                if not chunk:  # closed: the blocking read says so
                    return
                self._buf += chunk
                if len(self._buf) > MAX_LINE:
                    raise ProtocolError("message too long")
                if b"\n" in chunk:
                    return
        except OSError:
            return

    def close(self) -> None:
        """Close the socket."""
        with contextlib.suppress(OSError):
            self.sock.close()


_encode = json.JSONEncoder(separators=(",", ":")).encode  # compact, as json.dumps would


def _yield() -> None:
    """Let another runnable thread or process have this CPU (a no-op when none waits)."""
    if hasattr(os, "sched_yield"):
        os.sched_yield()
    else:  # Windows
        time.sleep(0)


def nesting_problem(line: bytes, depth: int) -> str | None:
    """Why the JSON text ``line`` must not reach the parser: arrays and objects nested more
    than ``depth`` levels, or brackets that do not pair (then it is not JSON); None when
    neither. Python's parser recurses once per level and raises RecursionError, not
    ValueError, on a line of a million "[" characters; this takes at most ``depth`` passes
    over the brackets at C speed, and none for a line with fewer brackets than that."""
    if line.count(b"[") + line.count(b"{") <= depth:
        return None
    brackets = _STRINGS.sub(b"", line).translate(None, _NOT_BRACKETS)
    for _ in range(depth):
        inner = _pairs_removed(brackets)
        if inner == brackets:
            break
        brackets = inner
    if not brackets:
        return None
    if _pairs_removed(brackets) == brackets:
        return "malformed message"
    return f"message nested deeper than {depth} levels"


def _pairs_removed(brackets: bytes) -> bytes:
    return brackets.replace(b"[]", b"").replace(b"{}", b"")


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def period_message(message: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """The robot time (s) and values of a bridge's period message; ProtocolError when its
    time is not a finite number in 0..MAX_TIME or its values not an object."""
    robot_time, values = message.get("time"), message.get("values")
    if not isinstance(values, dict):
        raise ProtocolError("message without values")
    if isinstance(robot_time, bool) or not isinstance(robot_time, (int, float)) or not (
            0.0 <= robot_time <= MAX_TIME):  # NaN fails too
        raise ProtocolError(f"robot time {clip(repr(robot_time), 40)} is not seconds in "
                            f"0..{MAX_TIME:g}")
    return float(robot_time), values


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
        raise Refused(clip(refused, REASON))
    if hello.get("hello") != "bridge" or hello.get("mode") != mode or not isinstance(
            period, float) or not 0.0 < period <= MAX_PERIOD:  # NaN fails too
        link.close()
        raise ProtocolError(f"unexpected greeting (expected a period in 0..{MAX_PERIOD:g} s "
                            f"and mode {mode!r}): {clip(repr(hello), 120)}")
    return link, period


class Attacher(threading.Thread):
    """Tries to attach to a bridge every ``interval`` s in the background, so a real-time
    loop never waits on a connect: :meth:`take` returns the link once there is one. The first
    greeting that breaks the protocol is told to ``warn``, once; the peer is tried again (a
    robot program restarted with a working bridge attaches)."""

    def __init__(self, host: str, port: int, mode: str, timeout: float,
                 interval: float = 0.5, warn: Callable[[str], None] | None = None):
        super().__init__(name="simserver-attach", daemon=True)
        self.address = (host, port)
        self.mode, self.timeout, self.interval = mode, timeout, interval
        self.warn = warn
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
            except ProtocolError as exc:
                if self.warn is not None:
                    host, port = self.address
                    self.warn(f"{host}:{port} answered, but not as a robot program's bridge: "
                              f"{exc}; trying again every {self.interval:g} s, quietly")
                    self.warn = None
                self._stop.wait(self.interval)
                continue
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
