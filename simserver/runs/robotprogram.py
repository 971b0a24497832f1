"""A robot program that simserver starts itself: ``python -m robotpy --main PROJECT/robot.py sim
--nogui --simserver`` with this interpreter, on ports of its own, for a sweep's run or for
``simserver run --robot PROJECT``.

    files = RunFiles(folder)                      # its config and output live there
    files.config.write_text(config_text(program_table(table, base, ports)))
    robot = RobotProgram(project, files)          # started
    ... session.run() while robot.watch(session, ended) runs in a thread ...
    robot.finish()                                # it left, or it was stopped

The program's config is the run's config with the run's ``[bridge]`` ports written in (the
bridge reads it from ``$SIMSERVER_CONFIG``), its output goes to a file. It runs in a process
group of its own: a Ctrl-C in the terminal reaches simserver only, which then stops it.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from simserver.runs.launcher import Launcher, Program, start_plain
from simserver.util.console import CHILD_ENCODING

#: The file a RobotPy project's program starts from.
ROBOT_MAIN = "robot.py"
#: How long a robot program may take to leave after simserver ended its run, s.
EXIT_GRACE = 10.0
#: Exit status of a robot program whose bridge could not bind a port it was given.
PORT_TAKEN = 2
#: Seconds between looks at whether a run's robot program is still there.
WATCH_EVERY = 0.05
#: Config keys of ``[robots.<name>]`` naming files relative to the config's folder: made
#: absolute in a robot program's config, which is written elsewhere.
FILE_KEYS = ("config", "inputs")
#: Vendor libraries that simulate their devices on a wall-clock thread (docs/bridge.md): their
#: robot programs need lock-step paced to real time.
WALL_CLOCK_LIBRARIES = ("phoenix6",)
#: Set to 0 to start every robot program of a sweep as a plain subprocess instead of forking
#: it from a launcher (the two give the same runs; the launcher starts them faster).
FORK_ENV = "SIMSERVER_SWEEP_FORK"


@dataclass
class RunFiles:
    """Where a run keeps its files: the robot program's config and its output (``log``,
    default ``robot.log`` in ``folder``)."""

    folder: Path
    output: Path | None = None

    @property
    def config(self) -> Path:
        return self.folder / "simserver.toml"

    @property
    def log(self) -> Path:
        return self.output if self.output is not None else self.folder / "robot.log"


def program_table(table: dict[str, Any], base: Path, bridge: dict[str, Any]
                  ) -> dict[str, Any]:
    """A copy of config ``table`` (read from a file in folder ``base``) for a robot program:
    the ``[robots]`` files made absolute, the ``bridge`` keys given written into
    ``[bridge]`` (its ports, lockstep, connect_timeout)."""
    out = copy.deepcopy(table)
    for entry in out.get("robots", {}).values():
        if isinstance(entry, dict):
            for name in FILE_KEYS:
                if isinstance(entry.get(name), str):
                    entry[name] = str(base / entry[name])
    if bridge:
        section = out.setdefault("bridge", {})
        section.update(bridge)
    return out


def robot_argv(project: Path) -> list[str]:
    """The arguments after the interpreter that run ``project``'s program with the bridge."""
    return ["-m", "robotpy", "--main", str(project / ROBOT_MAIN), "sim", "--nogui",
            "--simserver"]


def uses(project: Path, modules: tuple[str, ...]) -> bool:
    """Whether a Python file of ``project`` (its own files and packages, not a virtualenv in
    it) imports one of ``modules``."""
    pattern = re.compile(rf"^\s*(?:import|from)\s+({'|'.join(map(re.escape, modules))})\b",
                         re.M)
    for path in project.rglob("*.py"):
        if any(part.startswith(".") or part in ("venv", "site-packages", "__pycache__")
               for part in path.relative_to(project).parts[:-1]):
            continue
        try:
            if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
                return True
        except OSError:
            continue
    return False


def uses_wall_clock_sims(project: Path) -> bool:
    """Whether ``project`` imports a vendor library whose simulated devices run on a
    wall-clock thread (Phoenix 6): lock-step as fast as possible outruns them."""
    return uses(project, WALL_CLOCK_LIBRARIES)


class _Stoppable(Protocol):
    """What :meth:`RobotProgram.watch` needs of a run's session."""

    def reached_end(self) -> bool: ...

    def request_stop(self, *_: object) -> None: ...


class RobotProgram:
    """``project``'s robot program under ``robotpy sim --nogui --simserver`` with the config
    ``files.config``, its output in ``files.log``; forked from the project's launcher with
    ``fork`` (a sweep's many runs), else a plain subprocess."""

    def __init__(self, project: Path, files: RunFiles, fork: bool = True):
        self._log_path = files.log
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING=CHILD_ENCODING,
                   SIMSERVER_CONFIG=str(files.config))
        argv = robot_argv(project)
        self.program: Program = (
            _launcher(project).start(argv, project, env, files.log) if fork else
            start_plain(argv, project, env, files.log))
        self.left_early = False
        self.status: int | None = None  # its exit status once known (None: stopped by us)

    def watch(self, session: _Stoppable, ended: threading.Event) -> None:
        """Until ``ended``: if the program leaves before the run has reached its end (it
        crashed, or never started), stop ``session`` rather than let it wait for the program
        until its timeout. (After the end, leaving is what the program was told to do.)"""
        while not ended.wait(WATCH_EVERY):
            if not self.program.alive():
                if not ended.is_set() and not session.reached_end():
                    self.left_early = True
                    session.request_stop()
                return

    def output(self, last: int | None = None) -> str:
        """What the program has written so far: all of it, or its ``last`` bytes ("" if its
        log cannot be read)."""
        with contextlib.suppress(OSError), self._log_path.open("rb") as log:
            if last is not None:
                size = log.seek(0, os.SEEK_END)
                log.seek(max(0, size - last))
            return log.read().decode("utf-8", errors="replace")
        return ""

    def finish(self, leave: float = EXIT_GRACE, grace: float = EXIT_GRACE) -> int | None:
        """Give the program ``leave`` s to leave by itself (in lock-step it does when
        simserver ends its run), then terminate it, and kill it after ``grace`` s more; its
        exit status if it left by itself (None if it had to be stopped)."""
        status = self.program.wait(leave)
        if status is None:
            self.program.stop(grace)
        self.status = status
        return status


_launchers: dict[Path, Launcher] = {}


def _launcher(project: Path) -> Launcher:
    """This process's launcher for ``project`` (started once, stopped at exit)."""
    if project not in _launchers:
        launcher = Launcher(project)
        if os.environ.get(FORK_ENV, "1") == "0":
            launcher.problem = f"{FORK_ENV}=0"
        _launchers[project] = launcher
        if len(_launchers) == 1:
            atexit.register(_close_launchers)
    return _launchers[project]


def _close_launchers() -> None:
    for launcher in _launchers.values():
        launcher.close()
