"""Rate limiting for log lines a peer can trigger over and over (a client toggling the robot
mode, a wrong-typed publisher reconnecting, a program freezing and thawing).

Each cause (a key) may write ``burst`` lines per ``window`` seconds of wall time; further lines
of that cause are counted, and the next line it may write says how many were left out::

    >>> import logging
    >>> limiter = LogLimiter(logging.getLogger("demo"), burst=2, window=10.0)
    >>> [limiter.log("mode", logging.INFO, "robot program is %s", m) for m in "abcd"]
    [True, True, False, False]
    >>> limiter.suppressed("mode")
    2
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

BURST = 5  # lines per cause per window
WINDOW = 10.0  # s of wall time


@dataclass
class _Cause:
    start: float  # wall time (s) the current window began
    written: int = 0  # lines written in it
    suppressed: int = 0  # lines left out since the last one written


class LogLimiter:
    """Writes at most ``burst`` lines per cause per ``window`` s to ``logger``."""

    def __init__(self, logger: logging.Logger, burst: int = BURST, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic):
        self.logger = logger
        self.burst = burst
        self.window = window
        self.clock = clock
        self._causes: dict[str, _Cause] = {}

    def log(self, key: str, level: int, message: str, *args: object) -> bool:
        """Log ``message % args`` at ``level`` unless cause ``key`` used up its lines in this
        window; True when written."""
        now = self.clock()
        cause = self._causes.get(key)
        if cause is None or now - cause.start >= self.window:
            suppressed = cause.suppressed if cause is not None else 0
            cause = self._causes[key] = _Cause(now, suppressed=suppressed)
        if cause.written >= self.burst:
            cause.suppressed += 1
            return False
        cause.written += 1
        if cause.suppressed:
            message += f" ({cause.suppressed} similar line(s) left out before this one)"
            cause.suppressed = 0
        self.logger.log(level, message, *args)
        return True

    def suppressed(self, key: str) -> int:
        """Lines of cause ``key`` left out and not yet reported."""
        cause = self._causes.get(key)
        return 0 if cause is None else cause.suppressed

    def flush(self) -> None:
        """Say how many lines of each cause were left out since its last line (end of run)."""
        for key, cause in self._causes.items():
            if cause.suppressed:
                self.logger.info("%d more line(s) about %s were left out (at most %d per "
                                 "%g s)", cause.suppressed, key, self.burst, self.window)
                cause.suppressed = 0
