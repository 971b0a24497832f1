"""A ``simserver run`` subprocess whose stderr lines are stamped with ``time.monotonic()`` as
they arrive, so a test can tell when simserver logged something (reconnect, reset)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.ntutil import INTERRUPT, INTERRUPTIBLE, REPO, wait_for


class StampedSimserver:
    """``python -m simserver run ARGS``; every stderr line kept with its arrival time (s,
    ``time.monotonic()``) and copied to ``log_dir/<name>.stderr``."""

    def __init__(self, *args: str, log_dir: Path, name: str = "simserver"):
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self.log_path = log_dir / f"{name}.stderr"
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "simserver", "run", *args], cwd=REPO,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"), **INTERRUPTIBLE)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        with self.log_path.open("w") as log:
            for line in self.proc.stderr:
                stamp = time.monotonic()
                with self._lock:
                    self.lines.append((stamp, line.rstrip("\n")))
                log.write(line)
                log.flush()

    def stamped(self, text: str) -> list[float]:
        """Arrival times of the stderr lines containing ``text``."""
        with self._lock:
            return [t for t, line in self.lines if text in line]

    def wait_line(self, text: str, count: int = 1, timeout: float = 30.0) -> float:
        """Until ``count`` lines contain ``text``; the arrival time of the ``count``-th."""
        return wait_for(lambda: (s := self.stamped(text)) and len(s) >= count and s[count - 1],
                        timeout, f"simserver to log {text!r} ({count}×)")

    def stderr(self) -> str:
        with self._lock:
            return "\n".join(line for _, line in self.lines)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL (TerminateProcess on Windows): no clean-up at all, as a crash."""
        if self.alive():
            self.proc.kill()
        self.proc.wait(10)

    def interrupt(self, timeout: float = 10.0) -> int:
        """Ctrl-C; the exit code."""
        if self.alive():
            self.proc.send_signal(INTERRUPT)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)
