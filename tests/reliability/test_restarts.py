"""simserver killed mid-run and started again beside a running robot program: the robot program
keeps running and its sensor subscribers (the bridge's) receive the new simserver's values.

The opposite case, the robot program killed and restarted under a running simserver (reconnect
and reset within 2 s), is tests/e2e/test_bridge.py::test_sensors_resume_after_the_robot_program_
restarts.
"""

from __future__ import annotations

import time

import ntcore
import pytest

from tests.e2e.robots import KITBOT, RobotProgram, config_with, robot_nt
from tests.ntutil import wait_for
from tests.reliability.procs import StampedSimserver

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

RESUME_LIMIT = 10.0  # s from starting the new simserver (Python start-up and imports included)
GAP = 2.0  # s without any simserver


def test_robot_program_sensors_recover_after_simserver_is_killed_and_restarted(tmp_path):
    cfg, _ = config_with(tmp_path, KITBOT / "simserver.toml")
    sticks = tmp_path / "sticks.csv"
    sticks.write_text("time,joystick0/axis1\n0,-0.5\n100,-0.5\n")
    args = (str(cfg), "--enable", "teleop", "--inputs", str(sticks))
    robot = RobotProgram(KITBOT, cfg, tmp_path)
    sims: list[StampedSimserver] = []
    inst = robot_nt()
    try:
        robot.wait_ready()
        sims.append(StampedSimserver(*args, log_dir=tmp_path, name="first"))
        # What the robot program's own code reads: its encoder distance (SmartDashboard).
        dist = inst.getDoubleTopic("/SmartDashboard/Left distance (m)").subscribe(-1.0)
        wait_for(lambda: dist.get() > 0.5, 30, "the robot's encoder to count")
        sims[0].kill()  # SIGKILL mid-run: no goodbye, no clean-up
        time.sleep(GAP)
        assert robot.proc.poll() is None, robot.output()
        frozen = dist.get()
        time.sleep(0.5)
        assert dist.get() == frozen, "no simserver: the encoder holds its last value"

        second = StampedSimserver(*args, log_dir=tmp_path, name="second")
        sims.append(second)
        started = time.monotonic()
        # The new simserver resets its world on connecting: the encoder reads about 0 ...
        wait_for(lambda: dist.get() < 0.3, RESUME_LIMIT, "the new simserver's first readings")
        resumed = time.monotonic() - started
        # ... and counts again as teleop drives on.
        wait_for(lambda: dist.get() > 0.5, 20, "the encoder to count again")
        connected = second.wait_line("world reset", 1, timeout=1) - started
        print(f"sensors resumed {resumed:.2f} s after starting the new simserver (its start-up "
              f"included; it connected and reset at {connected:.2f} s)")
        assert robot.proc.poll() is None, robot.output()
        assert "Traceback" not in robot.output(), robot.output()
        assert second.interrupt() == 0, second.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        for sim in sims:
            sim.close()
        robot.close()
