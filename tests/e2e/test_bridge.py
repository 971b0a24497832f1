"""End to end: real `robotpy sim --nogui --simserver` robot programs against `simserver run`.

Each test starts the robot program (port 5810: one at a time) and simserver as the user would.
Tolerances are stated where they are asserted.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import ntcore
import pytest
from wpimath.geometry import Pose2d

from tests.e2e.robots import (
    KITBOT,
    REPO,
    RobotProgram,
    check_vendorbot,
    config_with,
    robot_nt,
    simserver,
    trace_rows,
)
from tests.ntutil import wait_for
from tests.reliability.procs import StampedSimserver

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

TRAJECTORY_END = (6.5, 5.5)  # examples/kitbot/paths.py




def odometry(inst: ntcore.NetworkTableInstance) -> Pose2d:
    """The kitbot's own odometry (published by its robot code)."""
    sub = inst.getStructTopic("/kitbot/odometry", Pose2d).subscribe(Pose2d(-1, -1, 0))
    return wait_for(lambda: (p := sub.get()).X() >= 0 and p, 10, "the robot's odometry")




@pytest.fixture
def kitbot(tmp_path):
    programs: list[RobotProgram] = []

    def start(extra_bridge: str = "", replace: tuple[str, str] | None = None,
              name: str = "robot") -> tuple[RobotProgram, Path, int]:
        cfg, port = config_with(tmp_path, KITBOT / "simserver.toml", extra_bridge, replace)
        program = RobotProgram(KITBOT, cfg, tmp_path, name)
        programs.append(program)
        program.wait_ready()
        return program, cfg, port

    yield start
    for p in programs:
        p.close()


def test_kitbot_autonomous_in_real_time_odometry_agrees_with_true_pose(kitbot, tmp_path):
    robot, cfg, _ = kitbot()
    out = tmp_path / "rt.json"
    run = simserver(str(cfg), "--enable", "autonomous", "--duration", "5", "--json", str(out))
    assert run.returncode == 0, run.stderr
    assert "robot program is autonomous" in run.stderr
    truth = json.loads(out.read_text())["summary"]
    # The path ends at (6.5, 5.5), reached at 3.85 s; the robot code stops there.
    assert math.dist((truth["x"], truth["y"]), TRAJECTORY_END) < 0.15, (
        truth, run.stderr[-4000:], robot.output()[-4000:])
    inst = robot_nt()
    try:
        odo = odometry(inst)
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
    # The robot computed this from the simulated encoders (360 counts/rev: 1.3 mm a count)
    # and gyro; at rest it must agree with the true pose within 3 cm and 1 degree.
    assert math.dist((odo.X(), odo.Y()), (truth["x"], truth["y"])) < 0.03
    assert abs(odo.rotation().degrees() - truth["heading_deg"]) < 1.0
    assert "does not wire" not in robot.output()


# Seconds the robot program runs in real time before simserver attaches in lock-step: each
# attach meets its loops at another phase, which must not change the trace.
ATTACH_DELAYS = (0.0, 0.37, 1.13, 0.71, 1.55)


def test_lockstep_runs_are_bit_identical_and_end_the_robot_program(kitbot, tmp_path):
    traces = []
    for i, delay in enumerate(ATTACH_DELAYS):
        robot, cfg, _ = kitbot(name=f"robot{i}")
        time.sleep(delay)
        trace = tmp_path / f"trace{i}.csv"
        run = simserver(str(cfg), "--lockstep", "--fast", "--enable", "autonomous",
                        "--duration", "5", "--trace", str(trace))
        assert run.returncode == 0, run.stderr
        assert robot.wait_exit(15) == 0  # simserver said goodbye: the robot program ends
        assert "simserver ended the run" in robot.output()
        robot.close()
        traces.append(trace.read_bytes())
    assert all(t == traces[0] for t in traces), [t == traces[0] for t in traces]
    rows = trace_rows(tmp_path / "trace0.csv")
    assert len(rows) >= 250
    assert math.dist(rows[-1][1:3], TRAJECTORY_END) < 0.15


def test_scenario_check_passes_and_fails_with_report_and_json(kitbot, tmp_path):
    robot, cfg, _ = kitbot(name="pass")
    out = tmp_path / "pass.json"
    run = simserver(str(cfg), "--lockstep", "--fast", "--check",
                    str(KITBOT / "auto-check.toml"), "--json", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "overall: PASS" in run.stdout
    doc = json.loads(out.read_text())
    assert doc["passed"] is True
    assert {c["name"] for c in doc["checks"]} == {
        "final_pose", "no_wall_contact", "min_battery_voltage", "trajectory"}
    traj = next(c for c in doc["checks"] if c["name"] == "trajectory")
    assert traj["passed"] and traj["values"]["max_error"] < 0.15
    robot.wait_exit(15)
    robot.close()

    scenario = (KITBOT / "auto-check.toml").read_text().replace('x = "6.5 m"', 'x = "7.5 m"')
    scenario = scenario.replace('file = "deploy/', f'file = "{KITBOT}/deploy/')
    bad = tmp_path / "bad-check.toml"
    bad.write_text(scenario)
    robot, cfg, _ = kitbot(name="fail")
    out = tmp_path / "fail.json"
    run = simserver(str(cfg), "--lockstep", "--fast", "--check", str(bad), "--json", str(out))
    assert run.returncode == 1
    assert "final_pose           FAIL" in run.stdout
    assert "overall: FAIL (1 of 4 checks failed)" in run.stdout
    assert json.loads(out.read_text())["passed"] is False


def test_lockstep_robot_program_fails_clearly_without_simserver(tmp_path):
    cfg, _ = config_with(tmp_path, KITBOT / "simserver.toml",
                         'lockstep = true\nconnect_timeout = "2 s"')
    robot = RobotProgram(KITBOT, cfg, tmp_path)
    try:
        start = time.monotonic()
        code = robot.wait_exit(30)
        elapsed = time.monotonic() - start
    finally:
        robot.close()
    assert code == 1
    assert "no simserver connected" in robot.output()
    assert elapsed < 15  # 2 s of waiting plus robot start-up


def test_lockstep_robot_program_exits_when_simserver_dies(kitbot, tmp_path):
    robot, cfg, _ = kitbot('timeout = "2 s"')
    sim = subprocess.Popen([sys.executable, "-m", "simserver", "run", str(cfg), "--lockstep",
                            "--enable", "autonomous"], cwd=REPO, stderr=subprocess.PIPE,
                           text=True)
    try:
        assert sim.stderr is not None
        wait_for(lambda: "lock-step with the robot program" in sim.stderr.readline(), 30,
                 "lock-step to start")
        time.sleep(1.0)
        sim.kill()
        killed = time.monotonic()
        assert robot.wait_exit(10) == 1
        assert time.monotonic() - killed < 5
    finally:
        sim.kill()
        sim.wait()
    assert "simserver stopped answering" in robot.output()


def test_unwired_devices_are_reported_with_the_line_to_add(kitbot):
    robot, _, _ = kitbot(replace=('hal = ["pwm:2", "pwm:3"]\n', ""))
    wait_for(lambda: "does not wire" in robot.output(), 15, "the unwired-device report")
    out = robot.output()
    assert 'PWM 2: add hal = "pwm:2" to a [motors.<name>] table' in out
    assert 'PWM 3: add hal = "pwm:3"' in out
    assert "PWM 0" not in out


def test_joystick_columns_drive_teleop(kitbot, tmp_path):
    _, cfg, _ = kitbot()
    sticks = tmp_path / "sticks.csv"
    sticks.write_text("time,joystick0/axis1,joystick0/axis4\n0,-0.6,0\n1.5,-0.6,0\n2,0,0\n")
    out = tmp_path / "teleop.json"
    run = simserver(str(cfg), "--lockstep", "--fast", "--enable", "teleop", "--inputs",
                    str(sticks), "--duration", "3", "--json", str(out))
    assert run.returncode == 0, run.stderr
    final = json.loads(out.read_text())["summary"]
    # Left stick pushed forward (-Y) for 2 s: the robot drove straight ahead and stopped.
    assert final["x"] - 2.0 > 1.0
    assert abs(final["y"] - 4.0) < 0.02 and abs(final["heading_deg"]) < 1.0


def test_vendor_can_devices_talonfx_spark_pigeon(tmp_path):
    project = REPO / "tests" / "e2e" / "vendorbot"
    cfg, _ = config_with(tmp_path, project / "simserver.toml")
    log = tmp_path / "vendorbot.jsonl"
    robot = RobotProgram(project, cfg, tmp_path, env={"VENDORBOT_LOG": str(log)})
    try:
        robot.wait_ready(60)
        trace = tmp_path / "trace.csv"
        # Paced, not --fast: Phoenix 6 simulates its CAN devices on its own wall-clock thread,
        # so at 10x real time a Talon FX's output lags many robot periods behind.
        run = simserver(str(cfg), "--lockstep", "--enable", "autonomous",
                        "--duration", "4.5", "--trace", str(trace))
        robot.wait_exit(20)
    finally:
        robot.close()
    assert run.returncode == 0, run.stderr
    check_vendorbot(log, trace)


RECONNECT_LIMIT = 2.0  # s: robot program restarted -> simserver connected and world reset


def test_sensors_resume_after_the_robot_program_restarts(kitbot, tmp_path):
    """A robot program killed and started again: simserver (a real-time NT client) reconnects
    and resets the world within RECONNECT_LIMIT s of the new program's NT server listening,
    keeps running, and the new program's sensors count again. The listening moment is taken
    when RobotProgram.wait_ready sees port 5810 open (polled every 10 ms, so it is at most
    about 10 ms late: the measured delay is at most that much short); the reset moment is when
    simserver's "world reset" log line arrives on its stderr pipe."""
    first, cfg, _ = kitbot(name="first")
    sticks = tmp_path / "sticks.csv"
    sticks.write_text("time,joystick0/axis1\n0,-0.5\n100,-0.5\n")
    sim = StampedSimserver(str(cfg), "--enable", "teleop", "--inputs", str(sticks),
                           log_dir=tmp_path)
    inst = robot_nt()
    second: RobotProgram | None = None
    try:
        dist = inst.getDoubleTopic("/SmartDashboard/Left distance (m)").subscribe(-1.0)
        wait_for(lambda: dist.get() > 0.5, 20, "the first program's encoder to count")
        sim.wait_line("world reset", 1)
        first.signal(kill=True)  # a crash: no clean shutdown
        first.close()
        second = RobotProgram(KITBOT, cfg, tmp_path, "second")
        second.wait_ready()
        listening = time.monotonic()
        reset = sim.wait_line("world reset", 2, timeout=10)
        delay = reset - listening
        assert delay < RECONNECT_LIMIT, f"reconnected and reset {delay:.2f} s after the restart"
        # The new program's encoders start from 0 and count again.
        wait_for(lambda: dist.get() < 0.3, 20, "the second program's first readings")
        wait_for(lambda: dist.get() > 0.5, 20, "the second program's encoder to count")
        assert sim.alive(), sim.stderr()
        assert "Traceback" not in sim.stderr()
        print(f"simserver reconnected and reset {delay * 1e3:.0f} ms after the robot program's "
              "NT server came back")
        second.close()
        assert sim.interrupt() == 0, sim.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        sim.close()
        if second is not None:
            second.close()  # a failed test must not keep the robot-program lock


PHYSICS_PY = '''
import os


class PhysicsEngine:
    """A team's own physics.py: counts its calls into $PHYSICS_LOG."""

    def __init__(self, physics_controller, robot):
        self.calls = 0

    def update_sim(self, now, tm_diff):
        self.calls += 1
        with open(os.environ["PHYSICS_LOG"], "w") as fh:
            fh.write(str(self.calls))
'''


def test_a_teams_own_physics_py_keeps_working_beside_the_bridge(tmp_path):
    import shutil

    project = tmp_path / "kitbot"
    shutil.copytree(KITBOT, project)
    (project / "physics.py").write_text(PHYSICS_PY)
    cfg, _ = config_with(tmp_path, KITBOT / "simserver.toml")
    calls = tmp_path / "physics-calls.txt"
    robot = RobotProgram(project, cfg, tmp_path, env={"PHYSICS_LOG": str(calls)})
    try:
        robot.wait_ready()
        out = tmp_path / "run.json"
        run = simserver(str(cfg), "--lockstep", "--fast", "--enable", "autonomous",
                        "--duration", "2", "--json", str(out))
        robot.wait_exit(15)
    finally:
        robot.close()
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text())["summary"]["x"] > 2.5  # the bridge drove the robot
    assert int(calls.read_text()) >= 100  # and physics.py ran every loop (2 s = 100 loops)
