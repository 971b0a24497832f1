"""A SPARK the program inverts (`SparkMaxConfig.inverted(True)`) turns its motor the other way
and counts its built-in encoder the other way round, inside the controller: the bridge reads
the motor's own direction (as from a PWM output or a Talon FX) and writes the encoder as REVLib
would report it. Real REVLib devices in this process; the program's objects are found from a
holder standing in for its robot object."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest
import rev
from wpilib.simulation import DriverStationSim

from simserver.bridge.core import Bridge
from simserver.bridge.objects import SEARCHES, ProgramObjects
from simserver.config.loader import loads
from simserver.contract import topics

CONFIG = """
[motors.arm]
type = "NEO"
{inverted}hal = "sparkmax:{id}"

[mechanisms.arm]
type = "arm"
motor = "arm"
gearing = 50
length = "20 in"
mass = "3 kg"

[encoders.arm]
motor = "arm"
unit = "rotations"
mount = "motor"
hal = "sparkmax:{id}"
"""


WARM_UP = 15  # robot loops


def spark(can_id: int, inverted: bool) -> Any:
    device = rev.SparkMax(can_id, rev.SparkLowLevel.MotorType.kBrushless)
    config = rev.SparkMaxConfig()
    config.inverted(inverted)
    device.configure(config, rev.ResetMode.kResetSafeParameters,
                     rev.PersistMode.kNoPersistParameters)
    return device


def enable(on: bool) -> None:
    DriverStationSim.setDsAttached(True)
    DriverStationSim.setEnabled(on)
    DriverStationSim.notifyNewData()


def warm_up(bridge: Bridge) -> None:
    """Robot loops while disabled, as before an enable: REV's SparkSim ramps its applied output
    up over its first dozen iterations (measured: 0.001, 0.0027, ... 0.494, then the setpoint)."""
    enable(False)
    for _ in range(WARM_UP):
        bridge.outputs()
    enable(True)


@pytest.fixture
def enabled() -> Iterator[None]:
    enable(True)
    yield
    DriverStationSim.resetData()
    DriverStationSim.notifyNewData()


@pytest.mark.parametrize(("can_id", "in_code", "mounted"), [
    (41, False, False), (42, True, True), (43, True, False), (44, False, True)])
def test_spark_reads_and_counts_the_way_its_motor_turns(enabled, can_id, in_code, mounted):
    robot = types.SimpleNamespace(arm=types.SimpleNamespace(motor=spark(can_id, in_code)))
    text = CONFIG.format(id=can_id, inverted="inverted = true\n" if mounted else "")
    bridge = Bridge(loads(text), ProgramObjects(root=lambda: robot))
    warm_up(bridge)
    robot.arm.motor.set(0.5)
    turns_forward = 1.0 if in_code == mounted else -1.0
    # What simserver sees, after the motor's mounting: forward when code and mounting agree.
    duty = bridge.outputs()[topics.motor("arm")]
    assert duty == pytest.approx(-0.5 if in_code else 0.5)
    assert duty * (-1.0 if mounted else 1.0) == pytest.approx(0.5 * turns_forward)
    # The arm moved +3 motor rotations: simserver's integrated-encoder reading is the rotor's
    # raw count (the world negates it for an inverted mounting); the program reads it after
    # its own inversion: +3 when code and mounting agree, -3 when they do not (as on a robot).
    raw = -3.0 if mounted else 3.0
    bridge.apply({topics.encoder_position("arm"): raw, topics.encoder_velocity("arm"): 0.0})
    assert robot.arm.motor.getEncoder().getPosition() == pytest.approx(3.0 * turns_forward)


def test_a_spark_the_bridge_cannot_reach_is_not_inverted_and_warned_once(enabled):
    unreachable = spark(45, True)  # held here, not by the robot object
    clock = iter(range(1000))
    objects = ProgramObjects(root=lambda: types.SimpleNamespace(), clock=lambda: next(clock))
    bridge = Bridge(loads(CONFIG.format(id=45, inverted="")), objects)
    unreachable.set(0.5)
    for _ in range(SEARCHES + 2):
        assert bridge.outputs()[topics.motor("arm")] == pytest.approx(0.5)
    assert objects.searches == SEARCHES
    assert [w for w in bridge.warnings if "sparkmax:45" in w] == [
        "motors.arm: the program's sparkmax:45 object is not reachable from its robot object, "
        "so whether the program inverts it is not known: taken as not inverted"]
