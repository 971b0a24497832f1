"""Starting a sweep's robot programs quickly, where the system can fork: a fork server
process imports RobotPy, the robot project's libraries and simserver's bridge once, then forks
one robot program per run. Importing this module where there is no fork (Windows) raises
ImportError; :class:`simserver.runs.launcher.Launcher` starts each program as a plain
subprocess there, and on macOS (see ``launcher.FORKS``).

A robot program started with ``python -m robotpy sim`` spends about 0.5 s of its 0.75 s
start-up importing; a fork of a process that has imported everything starts in about 0.25 s
(measured on the kitbot). The child runs exactly what ``robotpy sim`` runs (robotpy's own
``main``, with the run's arguments, folder, environment and output), so a forked program
behaves as a fresh one; the sweep's tests compare the two run for run.

Forking is safe only from a process with one thread: the server checks after its imports
and refuses to fork otherwise. Protocol, one JSON object per line: the client writes
``{"argv": [...], "cwd": ..., "env": {...}, "log": ...}``; the server answers ``{"pid": N}``
(or ``{"error": ...}``) and later ``{"exit": N, "status": S}`` when that child ends. The
server stops its children and exits when its stdin closes (its client is gone).

    python -m simserver.runs.forkserver PROJECT_DIR
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.metadata
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

if not hasattr(os, "fork"):
    raise ImportError("simserver.runs.forkserver needs os.fork (Linux, macOS)")

#: Entry-point groups of RobotPy's command line and its simulation extensions.
ROBOTPY_GROUPS = ("robotpy_cli.2026", "robotpy_sim.2026")
#: Modules every robot program's start imports.
CORE_MODULES = ("robotpy.main", "wpilib", "wpilib.simulation", "hal", "ntcore", "wpimath",
                "simserver.bridge.core", "simserver.bridge.stepport", "simserver.bridge.sync",
                "simserver.bridge.realtime", "simserver.bridge.direction",
                "simserver.bridge.vendorsims", "simserver.config.loader")
#: Environment for the server: numerical libraries without thread pools, so it can fork.
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: Seconds between looks for ended children while no request comes.
REAP_EVERY = 0.05
#: prctl option: the signal a process gets when its parent ends (linux/prctl.h).
PR_SET_PDEATHSIG = 1


# --- the server process ------------------------------------------------------------------------


def project_imports(project: Path) -> list[str]:
    """The modules robot.py imports at its top level that are not files of the project
    itself (those run per program), in file order."""
    try:
        tree = ast.parse((project / "robot.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    local = {p.stem for p in project.glob("*.py")} | {p.name for p in project.iterdir()
                                                      if (p / "__init__.py").is_file()}
    return [n for n in dict.fromkeys(names) if n.split(".")[0] not in local]


def preload(project: Path) -> str | None:
    """Import what a robot program of ``project`` starts with; why forking is unsafe after
    that (a thread was started), else None."""
    for group in ROBOTPY_GROUPS:
        for entry in importlib.metadata.entry_points(group=group):
            with contextlib.suppress(Exception):  # a broken plugin fails in the program
                entry.load()
    for name in (*CORE_MODULES, *project_imports(project)):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    threads = threading.active_count()
    native = _native_threads()
    if threads > 1 or native > 1:
        return f"the imports started threads ({max(threads, native)})"
    return None


def _native_threads() -> int:
    """Threads of this process, native ones included (1 where that cannot be known)."""
    if not sys.platform.startswith("linux"):
        return 1
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` (the server) ends, however it ends
    (Linux; elsewhere the server's own clean-up is all there is)."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it ended before the request took effect
            os._exit(1)


def _child(request: dict[str, Any], parent: int) -> None:
    """In the forked child: become the robot program the request describes; never returns."""
    code = 1
    try:
        _die_with_parent(parent)
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", closefd=False)
        import robotpy.main

        robotpy.main.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def serve(project: Path) -> None:
    """The server's loop (``python -m simserver.runs.forkserver PROJECT``)."""
    out = sys.stdout
    problem = preload(project)
    _send(out, {"ready": problem is None, "problem": problem})
    children: set[int] = set()
    stdin = sys.stdin.fileno()
    buffer = b""
    try:
        while True:
            readable, _, _ = select.select([stdin], [], [], REAP_EVERY)
            if readable:
                chunk = os.read(stdin, 65536)
                if not chunk:
                    return  # the client is gone
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    request = json.loads(line)
                    if problem is not None:
                        _send(out, {"error": problem})
                        continue
                    server = os.getpid()
                    pid = os.fork()
                    if pid == 0:
                        _child(request, server)
                    children.add(pid)
                    _send(out, {"pid": pid})
            for pid, status in _reaped(children):
                _send(out, {"exit": pid, "status": status})
    finally:
        for pid in children:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)


def _reaped(children: set[int]) -> Iterator[tuple[int, int]]:
    """(pid, exit status) of each child that ended since the last look; removed from
    ``children``. A status below 0 is the signal that ended it."""
    for pid in list(children):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            children.discard(pid)
            yield pid, os.waitstatus_to_exitcode(status)


# --- the client --------------------------------------------------------------------------------


class ForkServer:
    """A fork server process for one robot project, started on first use; ``problem`` says
    why it cannot fork (then the caller starts programs another way)."""

    def __init__(self, project: Path):
        self.project = project
        self._proc: subprocess.Popen[str] | None = None
        self.problem: str | None = None
        self._exits: dict[int, int] = {}

    def _server(self) -> subprocess.Popen[str] | None:
        if self.problem is not None:
            return None
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "simserver.runs.forkserver", str(self.project)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                bufsize=1, cwd=self.project, env=dict(os.environ, **SINGLE_THREADED))
            hello = self._read()
            if hello is None or not hello.get("ready"):
                self.problem = (hello or {}).get("problem") or "the fork server did not start"
                self.close()
                return None
        return self._proc

    def _read(self) -> dict[str, Any] | None:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        return message

    def fork(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> int | None:
        """The pid of the robot program ``argv`` (``robotpy``'s command line) forked in
        ``cwd`` with ``env``, its output to ``log``; None if the server cannot fork
        (``problem`` says why)."""
        proc = self._server()
        if proc is None or proc.stdin is None:
            return None
        _send(proc.stdin, {"argv": argv, "cwd": str(cwd), "env": env, "log": str(log)})
        while (reply := self._read()) is not None:
            if "exit" in reply:
                self._exits[reply["exit"]] = reply["status"]
                continue
            if "pid" in reply:
                return int(reply["pid"])
            self.problem = reply.get("error", "the fork server refused")
            return None
        self.problem = "the fork server ended"
        return None

    def wait(self, pid: int, timeout: float) -> int | None:
        """The exit status of forked child ``pid`` within ``timeout`` s, else None."""
        proc = self._proc
        if pid in self._exits:
            return self._exits.pop(pid)
        if proc is None or proc.stdout is None:
            return None
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([proc.stdout], [], [], left)
            if not readable:
                break
            reply = self._read()
            if reply is None:
                return None
            if "exit" in reply:
                if reply["exit"] == pid:
                    return int(reply["status"])
                self._exits[reply["exit"]] = reply["status"]
        return None

    @staticmethod
    def alive(pid: int) -> bool:
        """Whether forked child ``pid`` still runs (until the server has reaped it)."""
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @staticmethod
    def terminate(pid: int, kill: bool) -> None:
        """Send forked child ``pid``'s process group SIGTERM (SIGKILL with ``kill``)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL if kill else signal.SIGTERM)

    def close(self) -> None:
        """Stop the server (and with it any child still running)."""
        if self._proc is not None:
            with contextlib.suppress(OSError):
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc = None


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
