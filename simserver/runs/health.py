"""Liveness of a run, for container health checks: a heartbeat file.

A Session refreshes the file named by the environment variable ``SIMSERVER_HEARTBEAT`` (the
server image sets it) at most once per ``PERIOD`` of wall time, from its tick loop and from
the loops where it waits for a robot program; the run removes it when it ends. ``simserver
health`` (:func:`check`) is healthy while the file is younger than ``MAX_AGE``: a run that is
frozen (SIGSTOP), hung or dead stops refreshing it. Without the variable nothing is written.

Per call :meth:`Heartbeat.beat` costs one ``time.monotonic()`` and a compare; the file is
written about once a second::

    beat = Heartbeat(Path("/tmp/hb"), lambda: "tick 12")
    beat.beat()            # writes "pid 4242: tick 12"
    check(Path("/tmp/hb"))  # -> (True, "alive: ... 0.0 s ago ...")
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("simserver.health")

ENV = "SIMSERVER_HEARTBEAT"
PERIOD = 1.0  # s of wall time between two writes of the file, at most one per period
MAX_AGE = 5.0  # s: an older heartbeat is stale (5 missed periods); `simserver health --max-age`
STATUS_CHARS = 200  # of the file's text shown by `simserver health`


class Heartbeat:
    """Refreshes ``path`` with ``status()`` (a short line: tick, simulated time) every
    ``period`` s of wall time at most; ``path`` None: never."""

    def __init__(self, path: Path | None, status: Callable[[], str], period: float = PERIOD):
        self.path = path
        self.status = status
        self.period = period
        self._due = 0.0 if path is not None else math.inf  # time.monotonic() of the next write
        self.failed: OSError | None = None  # the first write that failed (then no more)

    @classmethod
    def from_env(cls, status: Callable[[], str]) -> Heartbeat:
        """The heartbeat at ``$SIMSERVER_HEARTBEAT``, or one that never writes."""
        path = os.environ.get(ENV)
        return cls(Path(path) if path else None, status)

    def beat(self) -> None:
        """Refresh the file if a period has passed since the last write."""
        now = time.monotonic()
        if now < self._due:
            return
        self._due = now + self.period
        assert self.path is not None
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:  # replaced whole: a health check never reads half a line
            tmp.write_text(f"pid {os.getpid()}: {self.status()}\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot write the heartbeat %s (%s): a health check will report this "
                        "run as not alive", self.path, exc.strerror or exc)
            self.failed = exc
            self._due = math.inf

    def stop(self) -> None:
        """The run is over: remove the file (a check then says so) and write no more."""
        self._due = math.inf
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()


def check(path: Path, max_age: float = MAX_AGE, now: float | None = None) -> tuple[bool, str]:
    """Whether the run that refreshes ``path`` is alive (refreshed within ``max_age`` s of
    wall time, by ``time.time()`` or ``now``), and a line that says why."""
    try:
        age = (time.time() if now is None else now) - path.stat().st_mtime
        text = path.read_text(errors="replace").strip()[:STATUS_CHARS]
    except FileNotFoundError:
        return False, f"no heartbeat at {path}: no simulation is running (or it has not started)"
    except OSError as exc:
        return False, f"cannot read the heartbeat {path}: {exc.strerror or exc}"
    if age > max_age:
        return False, (f"stale: the heartbeat {path} is {age:.1f} s old (more than "
                       f"{max_age:g} s): the run is frozen, hung or killed ({text})")
    return True, f"alive: heartbeat {max(age, 0.0):.1f} s ago ({text})"
