"""``simserver run --robot PROJECT``: the run starts the project's robot program itself, on
free ports, and ends with it.

    robot = RobotRun(project, config_path, lockstep=True, wait=60.0, log=None)
    cfg = robot.configure(cfg)                   # the run's config, on the program's ports
    with robot:                                  # started; stopped however the run ends
        summary = robot.simulate(session, session.run)
        failure = robot.failure(session)         # why the run failed (before it is stopped)

The program runs ``python -m robotpy --main PROJECT/robot.py sim --nogui --simserver`` with
this interpreter (:mod:`simserver.runs.robotprogram`), on an NT port and a step port nothing
else uses, so runs and CI jobs on one machine need no port-5810 lock. A program that exits
before the run has reached its end stops the run at once; the end of its output is shown.
"""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import tomli_w

from simserver.config.loader import read_toml
from simserver.config.model import Config
from simserver.runs import stopsignals
from simserver.runs.robotprogram import (
    RobotProgram,
    RunFiles,
    program_table,
    uses_wall_clock_sims,
)
from simserver.util.ports import free_port

if TYPE_CHECKING:
    from simserver.runs.session import Session

#: Lines of the robot program's output shown when it ended the run.
TAIL_LINES = 25
#: Bytes of the end of its output read for them.
TAIL_BYTES = 64 * 1024
#: Characters kept of each such line.
LINE_CHARS = 300
#: Wall time (s) a lock-step program has to leave by itself at the end (it does at once when
#: simserver says goodbye), and a stopped one before it is killed.
LEAVE = 2.0
GRACE = 5.0
#: Longest ``connect_timeout`` a bridge takes (config/model.py), s.
MAX_CONNECT_TIMEOUT = 3600.0
#: What Python prints when robot code imports a package that is not installed.
MISSING_MODULE = "ModuleNotFoundError"

T = TypeVar("T")


class RobotStartError(Exception):
    """The robot program could not be started (its output file cannot be written)."""


class RobotRun:
    """The robot program of one ``run --robot`` (``project``: the folder with robot.py;
    ``config``: the config file both sides read; ``wait``: how long, s, it waits for
    simserver in lock-step; ``log``: where its output goes, default ``robot.log`` in a new
    temporary folder that is kept)."""

    def __init__(self, project: Path, config: Path, lockstep: bool, wait: float,
                 log: Path | None):
        self.project = project
        self.config = config
        self.lockstep = lockstep
        self.output = log
        self.files: RunFiles | None = None  # made when it starts
        self.port, self.nt_port = free_port(), free_port()
        self.bridge = {"port": self.port, "nt_port": self.nt_port, "lockstep": lockstep,
                       "connect_timeout": f"{min(max(wait, 0.1), MAX_CONNECT_TIMEOUT)!r} s"}
        self.program: RobotProgram | None = None
        self._signals: dict[int, stopsignals.Handler] = {}

    @property
    def log(self) -> Path | None:
        """The file the program's output goes to (None before it starts)."""
        return None if self.files is None else self.files.log

    @property
    def pid(self) -> int | None:
        """The program's process id (None before it starts)."""
        return None if self.program is None else self.program.program.pid

    @property
    def left_early(self) -> bool:
        """Whether the program exited before the run reached its end (and stopped it)."""
        return self.program is not None and self.program.left_early

    def wall_clock_sims(self) -> bool:
        """Whether the project imports a vendor library that simulates on wall time."""
        return uses_wall_clock_sims(self.project)

    def configure(self, cfg: Config) -> Config:
        """``cfg`` (the run's config, loaded from ``config``) on the program's ports."""
        bridge = replace(cfg.bridge, port=self.port, nt_port=self.nt_port,
                         lockstep=self.lockstep)
        return replace(cfg, bridge=bridge)

    def __enter__(self) -> RobotRun:
        """Write the program's config and start it. Until ``__exit__``, every stop signal
        (:mod:`simserver.runs.stopsignals`) ends simserver as Ctrl-C does, through
        ``__exit__``, which stops the program; a run's session handles them itself while it
        runs."""
        table = program_table(read_toml(self.config), self.config.parent, self.bridge)
        files = self.files = RunFiles(Path(tempfile.mkdtemp(prefix="simserver-robot-")),
                                      self.output)
        try:
            files.config.write_text(tomli_w.dumps(table), encoding="utf-8")
            try:
                files.log.parent.mkdir(parents=True, exist_ok=True)
                files.log.open("w", encoding="utf-8").close()
            except OSError as exc:
                raise RobotStartError(f"--robot-log {files.log}: cannot write: "
                                      f"{exc.strerror or exc}") from None
            self._signals = stopsignals.install(stopsignals.interrupt)
            self.program = RobotProgram(self.project, files, fork=False)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Stop the program (if it has not left), keep or remove the temporary folder."""
        try:
            if self.program is not None:
                try:
                    self.program.finish(LEAVE if self.lockstep and kind is None else 0.0,
                                        GRACE)
                except KeyboardInterrupt:  # Ctrl-C while it leaves: no waiting then
                    self.program.program.terminate(kill=True)
                    raise
        finally:
            stopsignals.restore(self._signals)
            self._signals = {}
            if self.files is not None and self.output is not None:
                shutil.rmtree(self.files.folder, ignore_errors=True)

    def simulate(self, session: Session, run: Callable[[], T]) -> T:
        """``run()`` (the session's run) while a thread watches the program: if it leaves
        before the run has reached its end, the session stops at once."""
        assert self.program is not None
        ended = threading.Event()
        watcher = threading.Thread(target=self.program.watch, args=(session, ended),
                                   daemon=True)
        watcher.start()
        try:
            return run()
        finally:
            ended.set()
            watcher.join()

    def exited(self, within: float) -> int | None:
        """The program's exit status if it has ended by itself within ``within`` s, else None."""
        assert self.program is not None
        return self.program.program.wait(within)

    def failure(self, session: Session) -> str | None:
        """Why the run failed, told from the program's side: it exited before the run's end
        (replacing what the session saw then: no bridge answering, a lost link). The
        session's own failure otherwise (None if the run did not fail). Shows the end of the
        program's output on stderr when it exited before the run's end."""
        assert self.program is not None
        early = self.program.left_early
        status = self.exited(0.5 if early or session.failure is not None else 0.0)
        if status is None or session.reached_end() or (not early and status == 0):
            return session.failure
        self._show_tail(status)
        said = f"the robot program exited with {exit_text(status)} before the run ended"
        if early or session.failure is None:
            return said
        return f"{session.failure}; {said}"

    def _show_tail(self, status: int) -> None:
        """The end of the program's output, and a hint for a module that is not installed."""
        out = sys.stderr
        lines = self.program.output(TAIL_BYTES).splitlines() if self.program else []
        print(f"simserver: the robot program exited ({exit_text(status)}); the end of its "
              f"output ({self.log}):", file=out)
        for line in lines[-TAIL_LINES:]:
            print(f"  | {line[:LINE_CHARS]}", file=out)
        if not lines:
            print("  | (nothing)", file=out)
        if any(MISSING_MODULE in line for line in lines):
            print("simserver: the robot program imports a package that is not installed here: "
                  f"install the project's requirements (`simserver robot-requirements "
                  f"{self.project} > requirements-sim.txt`, then `pip install -r "
                  "requirements-sim.txt`)", file=out)


def exit_text(status: int) -> str:
    """A process's exit status as a message says it: ``status 1``, ``signal 6 (SIGABRT)``
    for one a signal ended (a negative status, as subprocess gives it)."""
    if status >= 0:
        return f"status {status}"
    try:
        name = f" ({signal.Signals(-status).name})"
    except ValueError:
        name = ""
    return f"signal {-status}{name}"
