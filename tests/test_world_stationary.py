"""A config without `[drivetrain]`: the robot stays at its start pose while its mechanisms,
sensors and battery work (an arm bench program)."""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import loads
from simserver.world import World
from tests import worlds

ARM_BENCH = """
[robot]
start = { x = "3 m", y = "2 m", heading = "30 deg" }
""" + worlds.ARM_BENCH + """
[encoders.arm]
motor = "arm"
unit = "deg"
hal = "encoder:0"
"""


def bench() -> World:
    return World(loads(ARM_BENCH, source="arm.toml"))


def test_robot_without_drivetrain_stays_at_its_start_pose():
    world = bench()
    world.set_motor("arm", 1.0)
    for _ in range(100):
        world.step(0.02)
    snap = world.snapshot()
    assert (snap.x, snap.y) == (3.0, 2.0)
    assert snap.heading == pytest.approx(math.radians(30.0), rel=1e-12)
    assert (snap.vx, snap.vy, snap.omega) == (0.0, 0.0, 0.0)
    assert snap.drive == {} and snap.drive_log == {}
    assert snap.gyro_rate == 0.0
    assert world.distance == 0.0


def test_mechanism_and_its_encoder_move_without_drivetrain():
    world = bench()
    start = world.snapshot().mechanisms["arm"]["angle"]  # deg
    world.set_motor("arm", 1.0)
    for _ in range(50):
        world.step(0.02)
    snap = world.snapshot()
    angle = snap.mechanisms["arm"]["angle"]
    assert angle > start + 5.0, "the arm lifts at full power"
    assert snap.encoders["arm"][0] == pytest.approx(angle - start, rel=1e-9)
    assert snap.currents["arm"] > 0.0
    assert snap.battery_voltage < world.cfg.battery.nominal_voltage, "the arm loads the battery"


def test_reset_puts_a_stationary_robot_back_at_rest():
    world = bench()
    world.set_motor("arm", 1.0)
    world.step(0.5)
    world.reset()
    snap = world.snapshot()
    assert snap.mechanisms["arm"]["angle"] == bench().snapshot().mechanisms["arm"]["angle"]
    assert snap.encoders["arm"][0] == 0.0
    assert (snap.x, snap.y) == (3.0, 2.0)


def test_check_and_scripted_run_accept_a_config_without_drivetrain(tmp_path):
    import json

    from click.testing import CliRunner

    from simserver.cli import main

    cfg = tmp_path / "arm.toml"
    cfg.write_text(ARM_BENCH, encoding="utf-8")
    inputs = tmp_path / "x.csv"
    inputs.write_text("time,arm\n0,0.5\n1,0.5\n", encoding="utf-8")
    out = tmp_path / "out.json"
    check = CliRunner().invoke(main, ["check", str(cfg)])
    assert check.exit_code == 0, check.output
    run = CliRunner().invoke(main, ["run", str(cfg), "--inputs", str(inputs), "--fast",
                                    "--duration", "1", "--json", str(out)])
    assert run.exit_code == 0, run.output
    summary = json.loads(out.read_text())["summary"]
    assert (summary["x"], summary["y"], summary["distance"]) == (3.0, 2.0, 0.0)
    assert summary["charge_used"] > 0.0, "the arm motor drew current"
