"""A real-time ``simserver run`` Session on its own thread of this process, on a real NT
endpoint, so a test or a benchmark can look at every tick: the motors the world applied in it
and what simserver had logged before it, exactly (no sampling over NT)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simserver.config.loader import default_config_text, loads
from simserver.io.nt import Endpoint
from simserver.runs.session import RunOptions, Session


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (never 5810, which robot programs use)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 5810:
            return port


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` every 5 ms until truthy; AssertionError naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@dataclass
class Tick:
    """One tick as the test saw it: wall time (``time.monotonic()``) after the step, the
    world's motor duties, and how many log lines had been written by then."""

    wall: float
    motors: dict[str, float]
    lines: int


@dataclass
class LiveSession:
    """``Session`` running in real time on ``mode`` ("server": it serves NT on ``port``;
    "client": it connects to ``port``) with the bundled kitbot config, ``sim`` TOML lines
    added to its ``[sim]`` table."""

    mode: str
    port: int = field(default_factory=free_port)
    sim: str = ""
    ticks: list[Tick] = field(default_factory=list)
    lines: list[tuple[float, str]] = field(default_factory=list)
    on_tick: Callable[[Tick], None] | None = None

    def __post_init__(self) -> None:
        # The bridge's step port is searched in client mode: a free one, so that a robot
        # program another test runs is never found.
        text = default_config_text().replace("[sim]\n", f"[sim]\n{self.sim}\n", 1)
        text += f"\n[bridge]\nport = {free_port()}\n"
        self.cfg = loads(text, source="<test>")
        self.session = Session(self.cfg, RunOptions(
            endpoint=Endpoint(self.mode, "127.0.0.1", self.port), record=False))
        self._lock = threading.Lock()
        self._handler = _Collect(self)
        logging.getLogger("simserver").addHandler(self._handler)
        logging.getLogger("simserver").setLevel(logging.INFO)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        wait_for(lambda: self.error is not None or len(self.ticks) > 2, 20,
                 "the session to tick")
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        try:
            self.session.run(self._progress)
        except BaseException as exc:  # reported by close()
            self.error = exc

    def _progress(self, _: float) -> None:
        with self._lock:
            tick = Tick(time.monotonic(), dict(self.session.world.motors), len(self.lines))
            self.ticks.append(tick)
        if self.on_tick is not None:
            self.on_tick(tick)

    def count(self, text: str) -> int:
        """Log lines so far that contain ``text``."""
        with self._lock:
            return sum(text in line for _, line in self.lines)

    def wait_count(self, text: str, count: int, timeout: float = 10.0) -> float:
        """Until ``count`` log lines contain ``text``; the wall time of the ``count``-th."""
        def found() -> float | None:
            with self._lock:
                stamps = [t for t, line in self.lines if text in line]
            return stamps[count - 1] if len(stamps) >= count else None
        return float(wait_for(found, timeout, f"{count}× {text!r} in simserver's log"))

    def text(self) -> str:
        with self._lock:
            return "\n".join(line for _, line in self.lines)

    def close(self) -> None:
        self.session.request_stop()
        self._thread.join(10)
        logging.getLogger("simserver").removeHandler(self._handler)
        assert not self._thread.is_alive(), "the session did not stop"
        if self.error is not None:
            raise self.error


class _Collect(logging.Handler):
    def __init__(self, live: LiveSession):
        super().__init__(logging.INFO)
        self.live = live

    def emit(self, record: logging.LogRecord) -> None:
        with self.live._lock:
            self.live.lines.append((time.monotonic(), record.getMessage()))
