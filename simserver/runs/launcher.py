"""Starting robot programs: a sweep's forked from a fork server on Linux
(:mod:`simserver.runs.forkserver`; about 0.5 s faster per program); as plain subprocesses
(:func:`start_plain`) elsewhere (Windows, macOS), when the fork server cannot fork safely,
with ``SIMSERVER_SWEEP_FORK=0``, and for ``simserver run --robot``. A forked program behaves
as a fresh one; the sweep's tests compare the two run for run.

    launcher = Launcher(project)
    program = launcher.start(["-m", "robotpy", "sim", "--nogui"], project, env, log)
    status = program.wait(30.0)        # None if it is still running
    program.stop(grace=5.0)
    launcher.close()
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

try:
    from simserver.runs.forkserver import ForkServer
except ImportError:  # no fork() on this system (Windows)
    ForkServer = None  # type: ignore[assignment,misc]

#: Forking is safe only from a process known to run one thread: Linux shows a process's native
#: threads (/proc), macOS does not, and its system libraries are not fork-safe (CPython's
#: multiprocessing stopped forking there for that reason).
FORKS = ForkServer is not None and sys.platform.startswith("linux")
#: Whether a program can get a process group of its own that can be signalled as one
#: (POSIX). Elsewhere a program is stopped on its own (``Popen.terminate``).
PROCESS_GROUPS = hasattr(os, "killpg") and hasattr(os, "setsid")


class Launcher:
    """Starts robot programs of one project: forked from a fork server started on first
    use, or as plain subprocesses where it cannot fork (``problem`` says why)."""

    def __init__(self, project: Path):
        self.project = project
        self._server = ForkServer(project) if FORKS else None
        self.problem: str | None = None if self._server is not None else "no fork() here"

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Program:
        """Start the robot program ``argv`` (``python -m robotpy ...``'s arguments after the
        interpreter) in ``cwd`` with ``env``, its output to ``log``."""
        if self.problem is None and self._server is not None:
            pid = self._server.fork(["robotpy", *argv[2:]], cwd, env, log)
            if pid is not None:
                return Program(pid, self._server)
            self.problem = self._server.problem
        return start_plain(argv, cwd, env, log)

    def close(self) -> None:
        """Stop the fork server (and with it any child still running)."""
        if self._server is not None:
            self._server.close()


class Program:
    """A started robot program: forked by a fork server (``server``), or a plain subprocess
    (``child``)."""

    def __init__(self, pid: int, server: ForkServer | None,
                 child: subprocess.Popen[bytes] | None = None):
        self.pid = pid
        self._server = server
        self._child = child

    def wait(self, timeout: float) -> int | None:
        """Its exit status within ``timeout`` s, else None."""
        if self._child is not None:
            try:
                return self._child.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
        assert self._server is not None
        return self._server.wait(self.pid, timeout)

    def alive(self) -> bool:
        """Whether it still runs (a forked one: until its fork server has reaped it)."""
        if self._child is not None:
            return self._child.poll() is None
        assert self._server is not None
        return self._server.alive(self.pid)

    def terminate(self, kill: bool = False) -> None:
        """Ask it to end (SIGTERM to its process group; TerminateProcess on Windows), or
        with ``kill`` make it (SIGKILL); returns at once."""
        if self._child is None:
            assert self._server is not None
            self._server.terminate(self.pid, kill)
        elif PROCESS_GROUPS:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL if kill else signal.SIGTERM)
        elif kill:
            self._child.kill()
        else:
            self._child.terminate()

    def stop(self, grace: float) -> None:
        """Terminate it, then kill it if it has not ended after ``grace`` s."""
        for kill in (False, True):
            self.terminate(kill)
            if self.wait(grace) is not None:
                return


def start_plain(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Program:
    """Start ``python argv`` (this interpreter) in ``cwd`` with ``env`` as a plain subprocess
    in a process group of its own (a Ctrl-C in the terminal does not reach it: its starter
    stops it), its output to ``log``."""
    with log.open("w", encoding="utf-8") as out:
        child = subprocess.Popen([sys.executable, *argv], cwd=cwd, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 **own_group())
    return Program(child.pid, None, child)


def own_group() -> dict[str, Any]:
    """Popen arguments that put a child in a process group of its own, so stopping it stops
    whatever it started (a new console process group on Windows)."""
    if PROCESS_GROUPS:
        return {"start_new_session": True}
    return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
