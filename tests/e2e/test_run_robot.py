"""``simserver run --robot PROJECT``: simserver starts the robot program itself on free ports
(no port-5810 lock needed), fails at once when it cannot start or crashes, and leaves no robot
process behind however the run ends."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ntutil import REPO
from tests.reliability.procs import StampedSimserver

KITBOT = REPO / "examples" / "kitbot"
CTRE_SWERVE = REPO / "examples" / "ctre_swerve"
#: The --wait of the runs below: far longer than any of them may take to fail.
LONG_WAIT = "120"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX here")


def simserver(*args: str | Path, timeout: float = 180.0, cwd: Path = REPO
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "simserver", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))


def robot_pid(stderr: str) -> int:
    """The robot program's pid from simserver's "started the robot program" line."""
    found = re.search(r"started the robot program in .* \(pid (\d+)\)", stderr)
    assert found, stderr
    return int(found.group(1))


def gone(pid: int) -> bool:
    """Whether no process of the robot program's process group (its pid) is left."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


def kitbot_copy(tmp_path: Path, prepend: str = "", append: str = "") -> Path:
    """A copy of the kitbot project with lines added to its robot.py."""
    project = tmp_path / "kitbot"
    shutil.copytree(KITBOT, project, ignore=shutil.ignore_patterns("__pycache__"))
    main = project / "robot.py"
    main.write_text(prepend + main.read_text() + append)
    return project


def test_run_robot_starts_the_kitbot_and_its_autonomous_passes(tmp_path):
    log = tmp_path / "out" / "robot.log"
    result = simserver("run", "--robot", KITBOT, "--lockstep", "--fast", "--check",
                       KITBOT / "auto-check.toml", "--robot-log", log, "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "overall: PASS" in result.stdout
    assert "simserver ended the run" in log.read_text()  # the program's output, in the file
    assert gone(robot_pid(result.stderr))


def test_a_robot_program_that_imports_a_missing_package_fails_the_run_at_once(tmp_path):
    """The issue: `No module named 'phoenix6'`, seen only after --wait (120 s) ran out."""
    project = kitbot_copy(tmp_path, prepend="import not_installed_vendor_lib\n")
    started = time.monotonic()
    result = simserver("run", "--robot", project, "--lockstep", "--fast", "--check",
                       project / "auto-check.toml", "--wait", LONG_WAIT, "--no-progress")
    took = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert "ModuleNotFoundError: No module named 'not_installed_vendor_lib'" in result.stderr
    assert "simserver robot-requirements" in result.stderr  # the hint
    assert "the robot program exited with status 1 before the run ended" in result.stderr
    assert took < float(LONG_WAIT) / 2, f"waited {took:.1f} s for a program that had died"
    # Without --robot-log its output is kept in a temporary folder the first line names.
    found = re.search(r"its output: (\S+robot\.log)", result.stderr)
    assert found, result.stderr
    log = Path(found.group(1))
    try:
        assert "ModuleNotFoundError" in log.read_text()
        assert (log.parent / "simserver.toml").is_file()  # the program's config, beside it
    finally:
        shutil.rmtree(log.parent)


@pytest.mark.parametrize("lockstep", ["--lockstep", "--no-lockstep"])
def test_a_robot_program_that_crashes_mid_run_ends_the_run_with_exit_1(tmp_path, lockstep):
    crash = ("\n\n_periodic = Robot.autonomousPeriodic\n\n\n"
             "def _crash_later(self):\n"
             "    self._calls = getattr(self, '_calls', 0) + 1\n"
             "    if self._calls > 50:\n"
             "        raise RuntimeError('boom: robot code crashed mid-run')\n"
             "    _periodic(self)\n\n\n"
             "Robot.autonomousPeriodic = _crash_later\n")
    project = kitbot_copy(tmp_path, append=crash)
    result = simserver("run", "--robot", project, lockstep, "--check",
                       project / "auto-check.toml", "--wait", LONG_WAIT, "--no-progress",
                       "--robot-log", tmp_path / "robot.log")
    assert result.returncode == 1, result.stderr
    assert "boom: robot code crashed mid-run" in result.stderr  # the end of its output
    assert "the robot program exited with" in result.stderr
    assert "simserver: stopped" not in result.stderr  # what Ctrl-C says, not a crash
    assert "overall: FAIL" in result.stdout
    assert gone(robot_pid(result.stderr))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stopping_simserver_stops_the_robot_program_it_started(tmp_path, sig):
    """Ctrl-C (SIGINT to simserver; the robot program is in a group of its own, so only
    simserver gets it) or a SIGTERM: simserver stops, and takes the robot program along."""
    run = StampedSimserver("--robot", str(KITBOT), "--enable", "teleop", "--robot-log",
                           str(tmp_path / "robot.log"), "--no-progress", log_dir=tmp_path)
    try:
        run.wait_line("robot program is teleop", timeout=60)
        pid = robot_pid(run.stderr())
        assert not gone(pid)
        run.proc.send_signal(sig)
        code = run.proc.wait(30)
    finally:
        run.close()
    assert gone(pid), f"robot program {pid} still runs after simserver ended"
    assert "robot program exited" not in run.stderr()  # stopped by us, not a crash
    assert code == 0, run.stderr()


def test_a_project_without_robot_py_exits_2_naming_it(tmp_path):
    started = time.monotonic()
    result = simserver("run", "--robot", tmp_path, "--lockstep", "--wait", LONG_WAIT)
    assert result.returncode == 2
    assert str(tmp_path / "robot.py") in result.stderr
    assert "nothing was started" in result.stderr
    assert time.monotonic() - started < float(LONG_WAIT) / 2


def test_a_project_without_simserver_toml_exits_2_naming_it(tmp_path):
    (tmp_path / "robot.py").write_text("raise SystemExit(0)\n")
    result = simserver("run", "--robot", tmp_path)
    assert result.returncode == 2
    assert str(tmp_path / "simserver.toml") in result.stderr


@pytest.mark.parametrize("other", [["--serve", "5899"], ["--server", "localhost"],
                                   ["--halsim-ws", "3300"]])
def test_run_robot_refuses_the_options_it_excludes(other):
    result = simserver("run", "--robot", KITBOT, *other)
    assert result.returncode == 2
    assert "--robot" in result.stderr and other[0] in result.stderr


def test_robot_log_needs_robot(tmp_path):
    result = simserver("run", "--robot-log", tmp_path / "robot.log")
    assert result.returncode == 2 and "--robot-log needs --robot" in result.stderr


@pytest.mark.skipif(not (CTRE_SWERVE / "auto-check.toml").is_file(), reason="no scenario")
def test_run_robot_passes_the_ctre_swerve_autonomous_paced(tmp_path):
    """Phoenix 6 simulates on a wall-clock thread: paced lock-step (no --fast)."""
    pytest.importorskip("phoenix6")
    result = simserver("run", "--robot", CTRE_SWERVE, "--lockstep", "--check",
                       CTRE_SWERVE / "auto-check.toml", "--robot-log", tmp_path / "robot.log",
                       "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "overall: PASS" in result.stdout
    assert gone(robot_pid(result.stderr))


def test_a_robot_log_that_cannot_be_written_exits_2_before_the_program_starts(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = simserver("run", "--robot", KITBOT, "--lockstep", "--fast", "--duration", "1",
                       "--robot-log", blocker / "robot.log")
    assert result.returncode == 2
    assert f"--robot-log {blocker / 'robot.log'}: cannot write" in result.stderr
    assert "started the robot program" not in result.stderr


def test_run_robot_warns_when_lockstep_fast_outruns_phoenix6(tmp_path):
    """Measured: examples/ctre_swerve misses its final pose by 0.14-0.16 m with --fast."""
    project = tmp_path / "phoenix"
    project.mkdir()
    (project / "robot.py").write_text("import phoenix6\nraise SystemExit(0)\n")
    shutil.copy(KITBOT / "simserver.toml", project / "simserver.toml")
    log = tmp_path / "robot.log"
    result = simserver("run", "--robot", project, "--lockstep", "--fast", "--duration", "1",
                       "--robot-log", log)
    assert "uses Phoenix 6" in result.stderr and "drop --fast" in result.stderr
    result = simserver("run", "--robot", KITBOT, "--lockstep", "--fast", "--duration", "0.1",
                       "--robot-log", log)
    assert result.returncode == 0 and "Phoenix 6" not in result.stderr


def test_a_relative_config_with_other_robots_reaches_the_robot_program_whole(tmp_path):
    """CONFIG given relative to simserver's folder, its [robots] file relative to CONFIG: the
    robot program (which runs in PROJECT_DIR) reads the same files."""
    project = kitbot_copy(tmp_path)
    other = simserver("config", "-o", project / "other.toml")
    assert other.returncode == 0, other.stderr
    text = (project / "other.toml").read_text()
    start = 'x = "2 m", y = "4 m"'
    assert start in text
    (project / "other.toml").write_text(text.replace(start, 'x = "12 m", y = "2 m"'))
    config = project / "simserver.toml"
    config.write_text(config.read_text() + '\n[robots.other]\nconfig = "other.toml"\n')
    log = tmp_path / "robot.log"
    result = simserver("run", "kitbot/simserver.toml", "--robot", "kitbot", "--lockstep",
                       "--fast", "--enable", "autonomous", "--duration", "1", "--robot-log",
                       "robot.log", cwd=tmp_path)
    assert result.returncode == 0, result.stderr + log.read_text()
    assert "simserver ended the run" in log.read_text()
