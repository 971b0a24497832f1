"""End to end: robot programs whose loop and vendor libraries run on HAL notifiers, in
lock-step and in real time (issue 18).

- ``tests/e2e/magicbot``: magicbot (its own loop on robotpy_ext's NotifierDelay, a new HAL
  notifier at each mode change) with Phoenix 6 Talon FX and a Pigeon 2 (Phoenix's enable feed
  on a wpilib.Notifier thread, its device simulation on its own threads). Its config enables
  it at the first lock-step period, so its disabled mode lasts one loop: the mode change that
  hung WPILib's stepTiming for good (see simserver/bridge/clock.py).
- ``tests/e2e/vendorbot``: a TimedRobot with a Talon FX, a SPARK MAX and a Pigeon 2 (its
  lock-step run is in test_bridge.py; real time here).

commands-v2 with Phoenix 6 threads (CTRE's swerve API: odometry thread, simulation Notifier)
runs in both modes in test_holonomic_examples.py. Each test starts the robot program (port
5810: one at a time) and simserver as the user would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.robots import (
    REPO,
    RobotProgram,
    check_vendorbot,
    config_with,
    simserver,
    trace_rows,
)

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

MAGICBOT = REPO / "tests" / "e2e" / "magicbot"
VENDORBOT = REPO / "tests" / "e2e" / "vendorbot"
DURATION = 4.5  # s after enabling: the autonomous routines end at 4 s


def drive(project: Path, log_env: str, tmp_path: Path, lockstep: bool) -> tuple[Path, Path, str]:
    """Run ``project``'s autonomous for DURATION s, paced (Phoenix 6 simulates on wall-clock
    threads); (its sensor log, simserver's --trace, the robot program's output)."""
    cfg, _ = config_with(tmp_path, project / "simserver.toml",
                         "lockstep = true" if lockstep else "")
    log, trace = tmp_path / "robot.jsonl", tmp_path / "trace.csv"
    robot = RobotProgram(project, cfg, tmp_path, env={log_env: str(log)})
    try:
        robot.wait_ready(60)
        run = simserver(str(cfg), *(["--lockstep"] if lockstep else []), "--enable",
                        "autonomous", "--duration", str(DURATION), "--trace", str(trace))
        if lockstep:  # simserver said goodbye: the robot program ends by itself
            assert robot.wait_exit(20) == 0, robot.output()
        output = robot.output()
    finally:
        robot.close()
    assert run.returncode == 0, run.stderr + output
    return log, trace, output


@pytest.mark.parametrize("lockstep", [True, False], ids=["lockstep", "realtime"])
def test_magicbot_on_phoenix6_drives_and_spins(tmp_path, lockstep):
    log, trace, output = drive(MAGICBOT, "MAGICBOT_LOG", tmp_path, lockstep)
    # The run reached its duration: enabled at once (enable_delay 0), then 4.5 s of robot time.
    assert trace_rows(trace)[-1][0] == pytest.approx(DURATION, abs=0.05)
    # Both Talon FX drove the chassis, their rotor sensors and the Pigeon 2 agree with the
    # true motion (as for the TimedRobot vendorbot).
    check_vendorbot(log, trace)
    assert "robot time has waited" not in output, output
    assert "also writes" not in output, output  # the Pigeon 2's own echo is not physics.py
    if lockstep:
        assert "simserver ended the run" in output


def test_timedrobot_vendorbot_in_real_time(tmp_path):
    log, trace, output = drive(VENDORBOT, "VENDORBOT_LOG", tmp_path, lockstep=False)
    assert trace_rows(trace)[-1][0] == pytest.approx(0.5 + DURATION, abs=0.05)
    check_vendorbot(log, trace)
    assert "late robot periods" not in output
