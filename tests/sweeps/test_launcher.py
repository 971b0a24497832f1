"""The launcher that forks a sweep's robot programs, and how a run watches its program. (Its
fallback where nothing forks, Windows: tests/portability/test_commands_without_posix.py.)"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from simserver.runs.launcher import FORKS, Launcher
from simserver.runs.robotprogram import RobotProgram, RunFiles

forks = pytest.mark.skipif(not FORKS, reason="the fork server runs on Linux only")


def project(tmp_path: Path, robot: str, extra: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "robot.py").write_text(robot)
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    return folder


@forks
def test_project_imports_leave_out_the_projects_own_modules(tmp_path):
    from simserver.runs.forkserver import project_imports

    folder = project(tmp_path, "import os\nimport wpilib\nfrom wpimath.geometry import Pose2d\n"
                     "import constants\nfrom . import sibling\nfrom subsystems import drive\n"
                     "def f():\n    import numpy\n",
                     {"constants.py": ""})
    (folder / "subsystems").mkdir()
    (folder / "subsystems" / "__init__.py").write_text("")
    assert project_imports(folder) == ["os", "wpilib", "wpimath.geometry"]


@forks
def test_a_library_that_starts_a_thread_on_import_turns_forking_off(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "threaded.py").write_text("import threading, time\n"
                                     "threading.Thread(target=time.sleep, args=(60,),"
                                     " daemon=True).start()\n")
    monkeypatch.setenv("PYTHONPATH", f"{lib}{os.pathsep}{Path(__file__).resolve().parents[2]}")
    folder = project(tmp_path, "import threaded\n")
    launcher = Launcher(folder)
    try:
        log = tmp_path / "out.log"
        program = launcher.start(["-c", "print('ran')"], folder, {"PATH": "/usr/bin"}, log)
        assert program.wait(30) == 0
        assert launcher.problem is not None and "threads" in launcher.problem
        assert log.read_text().strip() == "ran"  # started as a plain process instead
    finally:
        launcher.close()


class _Session:
    """What RobotProgram.watch reads of a run's session: whether it reached its end."""

    def __init__(self, at_end: bool):
        self.at_end = at_end
        self.stopped = False

    def reached_end(self) -> bool:
        return self.at_end

    def request_stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize("at_end", [False, True])
def test_a_program_that_leaves_counts_as_early_only_before_the_run_ended(tmp_path, at_end,
                                                                         monkeypatch):
    """The robot program leaves (here: at once). Before the run's end that stops the run and
    fails it; after it, the program left because it was told to (a sweep under load saw this
    race: 1 run in 64 failed wrongly before the check)."""
    folder = project(tmp_path, "raise SystemExit(0)\n")
    monkeypatch.setenv("SIMSERVER_SWEEP_FORK", "0")
    files = RunFiles(tmp_path)
    files.config.write_text("")
    robot = RobotProgram(folder, files)
    session = _Session(at_end)
    ended = threading.Event()
    watcher = threading.Thread(target=robot.watch, args=(session, ended))
    watcher.start()
    watcher.join(30)
    assert not watcher.is_alive()
    assert robot.left_early is (not at_end)
    assert session.stopped is (not at_end)
    robot.finish()
