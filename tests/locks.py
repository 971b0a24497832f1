"""An exclusive lock on a file, between processes on one machine: ``fcntl.flock`` on Linux
and macOS, ``msvcrt.locking`` on Windows. Tests that start robot programs on port 5810 take
tests/e2e/robots.ROBOT_LOCK with it, so separate test runs and benchmarks wait their turn.

    with FileLock(ROBOT_LOCK):
        ...
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:  # Linux, macOS
    msvcrt = None  # type: ignore[assignment]

#: The folder shared locks live in: /tmp on Linux and macOS (whatever TMPDIR says, so every
#: process of the machine finds the same file), the user's temporary folder on Windows.
LOCK_DIR = Path("/tmp") if os.name == "posix" else Path(tempfile.gettempdir())


#: Locks this process holds: path -> (the locked file, how many FileLocks hold it).
_HELD: dict[Path, tuple[IO[bytes], int]] = {}


class FileLock:
    """Exclusive lock on ``path`` (created if missing) between processes; ``acquire`` blocks
    until it has it. Within one process it is re-entrant: a test that failed before releasing
    its lock makes the next test that takes it fail on what the lock guards (port 5810 still
    busy), instead of waiting forever for itself and hanging the whole run."""

    def __init__(self, path: Path):
        self.path = path
        self._held = False

    def acquire(self) -> None:
        key = self.path.resolve()
        if key in _HELD:
            fh, count = _HELD[key]
            _HELD[key] = (fh, count + 1)
            self._held = True
            return
        fh = self.path.open("a+b")
        try:
            if fcntl is not None:
                fcntl.flock(fh, fcntl.LOCK_EX)
            elif msvcrt is None:
                raise OSError("neither fcntl nor msvcrt: no file locking on this system")
            else:
                fh.seek(0)
                while True:
                    try:  # LK_LOCK retries for 10 s, then raises
                        msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)
                        break
                    except OSError:
                        continue
        except BaseException:
            fh.close()
            raise
        _HELD[key] = (fh, 1)
        self._held = True

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        key = self.path.resolve()
        fh, count = _HELD[key]
        if count > 1:
            _HELD[key] = (fh, count - 1)
            return
        del _HELD[key]
        if fcntl is not None:
            fcntl.flock(fh, fcntl.LOCK_UN)
        elif msvcrt is not None:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        fh.close()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
