"""The signals that stop a run as Ctrl-C does, and installing handlers for them.

A closed terminal (SIGHUP) ends a run as Ctrl-C does. Windows has no SIGHUP: Ctrl-Break, a
closed console window and CTRL_BREAK_EVENT (how one program stops another there) arrive as
SIGBREAK. Signals this system lacks are left out.

    previous = install(session.request_stop)   # or install(interrupt): KeyboardInterrupt
    try:
        ...
    finally:
        restore(previous)
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from types import FrameType

Handler = Callable[[int, FrameType | None], object] | int | None

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
                     if hasattr(signal, name))


def install(stop: Callable[..., object]) -> dict[int, Handler]:
    """Have every stop signal call ``stop(signum, frame)``; the handlers they had (none
    where this is not the main thread, which cannot set handlers)."""
    previous: dict[int, Handler] = {}
    for sig in STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread: no handlers
            previous[sig] = signal.signal(sig, stop)
    return previous


def restore(previous: dict[int, Handler]) -> None:
    """Put back the handlers :func:`install` replaced."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def interrupt(signum: int, frame: FrameType | None) -> None:
    """A handler that stops as Ctrl-C does: raises KeyboardInterrupt."""
    raise KeyboardInterrupt
