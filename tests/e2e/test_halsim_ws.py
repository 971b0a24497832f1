"""End to end over WPILib's HALSim WebSocket protocol: real `robotpy sim --nogui --ws-server`
robot programs (robotpy-halsim-ws, the same server Java and C++ programs get from
`wpi.sim.addWebsocketsServer()`) against `simserver run --halsim-ws`. No bridge in the robot.

Robot programs bind ports 5810 and 3300: one at a time.
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

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

VENDORBOT = REPO / "tests" / "e2e" / "vendorbot"
WSBOT = REPO / "tests" / "e2e" / "wsbot"
# The kitbot's AnalogGyro has no halsim_ws messages in WPILib 2026: wire everything else.
NO_GYRO = ('[gyro]\nhal = "analoggyro:0"\n', "")






@pytest.fixture
def ws_robot(tmp_path):
    programs: list[RobotProgram] = []

    def start(project: Path, replace: tuple[str, str] | None = None, name: str = "robot",
              env: dict[str, str] | None = None) -> tuple[RobotProgram, Path]:
        cfg, _ = config_with(tmp_path, project / "simserver.toml", replace=replace)
        program = RobotProgram(project, cfg, tmp_path, name, env=env, extension="ws-server")
        programs.append(program)
        program.wait_ready(60)
        return program, cfg

    yield start
    for p in programs:
        p.close()


def test_kitbot_teleop_over_halsim_ws_odometry_agrees_with_true_pose(ws_robot, tmp_path):
    _, cfg = ws_robot(KITBOT, replace=NO_GYRO)
    sticks = tmp_path / "sticks.csv"
    sticks.write_text("time,joystick0/axis1\n0,-0.6\n2,-0.6\n2.5,0\n")
    out = tmp_path / "ws.json"
    run = simserver(str(cfg), "--halsim-ws", "3300", "--enable", "teleop", "--inputs",
                    str(sticks), "--duration", "4", "--json", str(out))
    assert run.returncode == 0, run.stderr
    assert "robot program is teleop" in run.stderr
    truth = json.loads(out.read_text())["summary"]
    assert truth["x"] - 2.0 > 2.0  # PWM outputs, joystick and Driver Station all went through
    inst = robot_nt()
    try:
        sub = inst.getStructTopic("/kitbot/odometry", Pose2d).subscribe(Pose2d(-1, -1, 0))
        odo = wait_for(lambda: (p := sub.get()).X() >= 0 and p, 10, "the robot's odometry")
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
    # Its odometry integrates the encoder counts sent over halsim_ws (1.3 mm a count); its gyro
    # stays at 0 (no AnalogGyro messages), and the true heading drifts by PWM quantization only.
    assert abs(odo.X() - truth["x"]) < 0.02
    assert abs(odo.Y() - truth["y"]) < 0.05
    assert abs(truth["heading_deg"]) < 2.0


def test_vendor_can_devices_over_halsim_ws(ws_robot, tmp_path):
    log = tmp_path / "vendorbot.jsonl"
    _, cfg = ws_robot(VENDORBOT, env={"VENDORBOT_LOG": str(log)})
    trace = tmp_path / "trace.csv"
    run = simserver(str(cfg), "--halsim-ws", "3300", "--enable", "autonomous", "--duration",
                    "4.6", "--trace", str(trace))
    assert run.returncode == 0, run.stderr
    check_vendorbot(log, trace)  # Talon FX as type CANMotor, SPARK as SimDevice, CANGyro


def test_adxrs450_over_halsim_ws_keeps_the_robots_reset(ws_robot, tmp_path):
    log = tmp_path / "wsbot.jsonl"
    _, cfg = ws_robot(WSBOT, env={"WSBOT_LOG": str(log)})
    trace = tmp_path / "trace.csv"
    run = simserver(str(cfg), "--halsim-ws", "3300", "--enable", "autonomous", "--duration",
                    "4.2", "--trace", str(trace))
    assert run.returncode == 0, run.stderr
    records = {r["phase"]: r for r in map(json.loads, log.read_text().splitlines())}
    headings = [math.degrees(row[3]) for row in trace_rows(trace)]
    # The robot rests between its two spins: the first plateau of the true heading.
    plateau = next(h for i, h in enumerate(headings[20:], start=20)
                   if h > 90 and all(abs(h - x) < 1e-3 for x in headings[i - 20:i]))
    # ADXRS450 reads clockwise positive; after the robot's gyro.reset() at the plateau, its
    # reading is relative to it.
    assert records["first"]["gyro_deg"] == pytest.approx(-plateau, abs=0.1)
    assert records["second"]["gyro_deg"] == pytest.approx(-(headings[-1] - plateau), abs=0.1)


def test_reconnects_when_the_robot_program_restarts(ws_robot, tmp_path):
    first, cfg = ws_robot(KITBOT, replace=NO_GYRO, name="first")
    sticks = tmp_path / "sticks.csv"
    sticks.write_text("time,joystick0/axis1\n0,-0.5\n100,-0.5\n")
    sim = subprocess.Popen([sys.executable, "-m", "simserver", "run", str(cfg), "--halsim-ws",
                            "3300", "--enable", "teleop", "--inputs", str(sticks)], cwd=REPO,
                           stderr=subprocess.DEVNULL)
    inst = robot_nt()
    try:
        dist = inst.getDoubleTopic("/SmartDashboard/Left distance (m)").subscribe(-1.0)
        wait_for(lambda: dist.get() > 0.5, 20, "the first program's encoder to count")
        first.close()
        ws_robot(KITBOT, replace=NO_GYRO, name="second")
        wait_for(lambda: dist.get() < 0.3, 20, "the second program's first readings")
        wait_for(lambda: dist.get() > 0.5, 20, "the second program's encoder to count")
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        sim.terminate()
        sim.wait(10)


def test_unwired_pwm_is_reported(ws_robot, tmp_path):
    _, cfg = ws_robot(KITBOT, replace=('hal = ["pwm:2", "pwm:3"]\n', ""))
    text = cfg.read_text().replace('hal = "analoggyro:0"', "")
    cfg.write_text(text)
    run = simserver(str(cfg), "--halsim-ws", "3300", "--duration", "1.5")
    assert run.returncode == 0, run.stderr
    assert 'PWM 2: add hal = "pwm:2" to a [motors.<name>] table' in run.stderr
    assert 'PWM 3: add hal = "pwm:3"' in run.stderr


def test_configs_halsim_ws_cannot_carry_are_refused_before_starting(tmp_path):
    run = simserver(str(KITBOT / "simserver.toml"), "--halsim-ws", "3300", "--duration", "1")
    assert run.returncode == 2
    assert "gyro.hal: WPILib 2026's halsim_ws has no AnalogGyro messages" in run.stderr
    assert "nothing was started" in run.stderr
    metres = tmp_path / "metres.toml"
    metres.write_text((KITBOT / "simserver.toml").read_text()
                      .replace('unit = "ticks"', 'unit = "m"').replace('hal = "analoggyro:0"', ""))
    run = simserver(str(metres), "--halsim-ws", "3300", "--duration", "1")
    assert run.returncode == 2
    assert 'encoders.left.unit: halsim_ws carries encoder counts' in run.stderr


def test_waits_politely_while_another_client_holds_the_server(ws_robot, tmp_path):
    from simserver.io.halsim_ws import connect

    _, cfg = ws_robot(KITBOT, replace=NO_GYRO)
    holder = connect("ws://localhost:3300/wpilibws")  # one client allowed
    sim = subprocess.Popen([sys.executable, "-m", "simserver", "run", str(cfg), "--halsim-ws",
                            "3300", "--duration", "6"], cwd=REPO, stderr=subprocess.PIPE,
                           text=True)
    try:
        time.sleep(3.0)
        holder.close()
        _, err = sim.communicate(timeout=30)
    finally:
        sim.kill()
    assert sim.returncode == 0, err
    # Told once, not once per retry; connected when the other client left.
    assert err.count("halsim_ws allows one client") == 1, err
    assert err.count("robot program connected") == 1, err
