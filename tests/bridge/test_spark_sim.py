"""A SPARK's own closed loops run in REV's SparkSim, fed by the bridge with simserver's state,
and the SPARK's other encoders read as REVLib reports them. Real REVLib devices in this
process (the program's objects are found from a holder standing in for its robot object) and
WPILib's FlywheelSim / DCMotorSim as the plant.

The reference is REV's documented pattern with REV's sim alone: step the plant with the
applied output, then ``SparkSim.iterate(plant velocity, vbus, dt)``. Through the bridge the
same program and plant must reach the setpoint the same way.
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import rev
from wpilib.simulation import (
    DCMotorSim,
    DriverStationSim,
    FlywheelSim,
    pauseTiming,
    restartTiming,
    resumeTiming,
    stepTiming,
)
from wpimath.system.plant import DCMotor, LinearSystemId

from simserver.bridge.core import Bridge
from simserver.bridge.objects import ProgramObjects
from simserver.config.loader import loads
from simserver.contract import topics
from simserver.hal import halmap

DT = 0.02  # s, the robot loop
VBUS = 12.0  # V
IDS = itertools.count(50)  # CAN ids: a SPARK id stays taken while its object lives
WARM_UP = 15  # loops disabled before enabling (REV's sim ramps up over its first dozen)
J = 0.004  # kg·m², flywheel
GEAR = 2.0  # motor turns per output turn
ARM_GEAR = 9424.0 / 203.0  # a MAXSwerve module's steering

FLYWHEEL = """
[motors.shooter]
type = "NEO"
hal = "sparkmax:{id}"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 2.0
moment_of_inertia = "0.004 kg*m^2"

[encoders.shooter]
motor = "shooter"
unit = "rotations"
mount = "motor"
hal = "sparkmax:{id}"
"""

TURRET = """
[motors.turret]
type = "NEO 550"
hal = "sparkmax:{id}"

[mechanisms.turret]
type = "flywheel"
motor = "turret"
gearing = 46.42
moment_of_inertia = "0.004 kg*m^2"

[encoders.turret]
motor = "turret"
unit = "rotations"
absolute = true
hal = "sparkmax:{id}/absolute"
"""


@pytest.fixture
def sim_time() -> Iterator[None]:
    """The robot clock stepped by hand (the bridge times REV's iterations by it), the Driver
    Station attached and disabled; both restored afterwards."""
    pauseTiming()
    restartTiming()
    DriverStationSim.setDsAttached(True)
    enable(False)
    yield
    DriverStationSim.resetData()
    DriverStationSim.notifyNewData()
    resumeTiming()


def enable(on: bool) -> None:
    DriverStationSim.setEnabled(on)
    DriverStationSim.notifyNewData()


def configure(spark: Any, build: Callable[[Any], None]) -> None:
    config = rev.SparkMaxConfig()
    build(config)
    spark.configure(config, rev.ResetMode.kResetSafeParameters,
                    rev.PersistMode.kNoPersistParameters)


class Plant:
    """A WPILib plant on the motor: ``velocity`` in motor rpm, ``angle`` in output turns."""

    def __init__(self, flywheel: bool, motor: DCMotor):
        if flywheel:
            self.sim: Any = FlywheelSim(LinearSystemId.flywheelSystem(motor, J, GEAR), motor)
        else:
            self.sim = DCMotorSim(LinearSystemId.DCMotorSystem(motor, J, ARM_GEAR), motor)
        self.flywheel = flywheel
        self.turns = 0.0

    def step(self, volts: float) -> None:
        self.sim.setInputVoltage(volts)
        self.sim.update(DT)
        if self.flywheel:
            self.turns += self.output_rps * DT

    @property
    def output_rps(self) -> float:
        return float(self.sim.getAngularVelocity()) / (2.0 * math.pi)

    @property
    def angle(self) -> float:
        return self.turns if self.flywheel else float(self.sim.getAngularPosition()) / (
            2.0 * math.pi)


def alone(spark: Any, plant: Plant, loops: int, command: Callable[[], None],
          velocity: Callable[[Plant], float]) -> list[tuple[float, float]]:
    """REV's pattern with REV's sim alone: (output rps, output turns) after each loop."""
    motor = DCMotor.NEO(1)
    sim = rev.SparkMaxSim(spark, motor)
    for _ in range(WARM_UP):
        sim.iterate(0.0, VBUS, DT)
    enable(True)
    out = []
    for _ in range(loops):
        command()
        plant.step(sim.getAppliedOutput() * VBUS)
        sim.iterate(velocity(plant), VBUS, DT)
        stepTiming(DT)
        out.append((plant.output_rps, plant.angle))
    enable(False)
    return out


def bridged(bridge: Bridge, name: str, plant: Plant, loops: int, command: Callable[[], None],
            reading: Callable[[Plant], tuple[float, float]]) -> list[tuple[float, float]]:
    """The same through the bridge: its outputs drive the plant, the plant's state (in the
    encoder's config unit) goes back through ``apply``."""
    for _ in range(WARM_UP):
        bridge.outputs()
        stepTiming(DT)
    enable(True)
    out = []
    for _ in range(loops):
        command()
        plant.step(bridge.outputs()[topics.motor(name)] * VBUS)
        position, velocity = reading(plant)
        bridge.apply({topics.encoder_position(name): position,
                      topics.encoder_velocity(name): velocity})
        stepTiming(DT)
        out.append((plant.output_rps, plant.angle))
    enable(False)
    return out


def velocity_loop(config: Any) -> None:
    config.closedLoop.pid(0.0002, 0.0, 0.0)
    config.closedLoop.feedForward.kV(12.0 / 5676)  # V per rpm: a NEO's free speed


def test_velocity_loop_on_the_spark_reaches_its_setpoint_as_revs_sim_does_alone(sim_time):
    setpoint = 3000.0  # motor rpm
    a = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(a, velocity_loop)
    reference = alone(a, Plant(True, DCMotor.NEO(1)), 100,
                      lambda: a.getClosedLoopController().setReference(
                          setpoint, rev.SparkBase.ControlType.kVelocity),
                      lambda p: p.output_rps * GEAR * 60.0)

    b = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(b, velocity_loop)
    robot = types.SimpleNamespace(shooter=b)
    bridge = Bridge(loads(FLYWHEEL.format(id=b.getDeviceId())), ProgramObjects(root=lambda: robot))
    ours = bridged(bridge, "shooter", Plant(True, DCMotor.NEO(1)), 100,
                   lambda: b.getClosedLoopController().setReference(
                       setpoint, rev.SparkBase.ControlType.kVelocity),
                   lambda p: (p.angle * GEAR, p.output_rps * GEAR))

    target = setpoint / 60.0 / GEAR  # output rps
    assert reference[-1][0] == pytest.approx(target, rel=0.01)
    assert ours[-1][0] == pytest.approx(target, rel=0.01)
    # REV's pattern applies in each loop the output of the previous loop's iterate, so it
    # answers a new setpoint one loop later than the controller (and the bridge) does
    worst = max(abs(r[0] - o[0]) for r, o in zip(reference[1:], ours, strict=False))
    assert worst < 0.01 * target  # measured 0.8 %
    assert bridge.warnings == []


def turret_loop(config: Any) -> None:
    config.absoluteEncoder.positionConversionFactor(2.0 * math.pi) \
        .velocityConversionFactor(2.0 * math.pi / 60.0)
    config.closedLoop.setFeedbackSensor(rev.FeedbackSensor.kAbsoluteEncoder) \
        .pid(1.0, 0.0, 0.0).positionWrappingEnabled(True) \
        .positionWrappingInputRange(0.0, 2.0 * math.pi)


@pytest.mark.parametrize("start_turns", [0.0, 0.9])
def test_position_loop_on_the_absolute_encoder_reaches_its_setpoint_as_revs_sim_does_alone(
        sim_time, start_turns):
    # 0.9 turns: the shortest way to 1 rad (0.16 turn) crosses the wrap at 0
    setpoint = 1.0  # rad
    a = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(a, turret_loop)
    plant_a = Plant(False, DCMotor.NEO550(1))
    plant_a.sim.setState(start_turns * 2.0 * math.pi, 0.0)
    a_sim_start = (start_turns % 1.0) * 2.0 * math.pi
    command_a = lambda: a.getClosedLoopController().setReference(  # noqa: E731
        setpoint, rev.SparkBase.ControlType.kPosition)
    reference = alone_from(a, plant_a, a_sim_start, command_a)

    b = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(b, turret_loop)
    robot = types.SimpleNamespace(turret=b)
    bridge = Bridge(loads(TURRET.format(id=b.getDeviceId())), ProgramObjects(root=lambda: robot))
    plant_b = Plant(False, DCMotor.NEO550(1))
    plant_b.sim.setState(start_turns * 2.0 * math.pi, 0.0)
    ours = bridged(bridge, "turret", plant_b, 100,
                   lambda: b.getClosedLoopController().setReference(
                       setpoint, rev.SparkBase.ControlType.kPosition),
                   lambda p: (p.angle % 1.0, p.output_rps))

    def wrapped_error(turns: float) -> float:
        return abs((turns - setpoint / (2.0 * math.pi) + 0.5) % 1.0 - 0.5)

    assert wrapped_error(reference[-1][1]) < 0.002
    assert wrapped_error(ours[-1][1]) < 0.002
    # one loop apart, as for the velocity loop (REV's pattern also integrates its sensor,
    # v·dt per loop, where the bridge sets it to the plant's)
    worst = max(abs(r[1] - o[1]) for r, o in zip(reference[1:], ours, strict=False))
    assert worst < 0.01  # turns, over the whole move (measured 0.005)
    assert b.getAbsoluteEncoder().getPosition() == pytest.approx(
        (ours[-1][1] % 1.0) * 2.0 * math.pi, abs=1e-6)  # REV keeps a float32


def alone_from(spark: Any, plant: Plant, start: float,
               command: Callable[[], None]) -> list[tuple[float, float]]:
    """:func:`alone` for the turret: REV's sim starts at the absolute angle ``start`` (rad)
    and is fed the output shaft's speed in rad/s (the absolute encoder's units)."""
    motor = DCMotor.NEO550(1)
    sim = rev.SparkMaxSim(spark, motor)
    sim.setPosition(start)
    for _ in range(WARM_UP):
        sim.iterate(0.0, VBUS, DT)
    enable(True)
    out = []
    for _ in range(100):
        command()
        plant.step(sim.getAppliedOutput() * VBUS)
        sim.iterate(plant.output_rps * 2.0 * math.pi, VBUS, DT)
        stepTiming(DT)
        out.append((plant.output_rps, plant.angle))
    enable(False)
    return out


def test_a_closed_loop_on_a_sensor_simserver_does_not_write_is_warned_once(sim_time):
    spark = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(spark, velocity_loop)
    robot = types.SimpleNamespace(shooter=spark)
    unwired = FLYWHEEL.format(id=spark.getDeviceId()).split("[encoders.shooter]")[0]
    bridge = Bridge(loads(unwired), ProgramObjects(root=lambda: robot))
    enable(True)
    spark.getClosedLoopController().setReference(1000.0, rev.SparkBase.ControlType.kVelocity)
    for _ in range(3):
        bridge.outputs()
        stepTiming(DT)
    assert bridge.warnings == [
        "motors.shooter: the SPARK's closed loop reads its relative encoder, which simserver "
        "does not write, so the loop never sees the motor move: wire it with an "
        f'[encoders.<name>] table, hal = "sparkmax:{spark.getDeviceId()}"']


# --- the SPARK's other encoders -------------------------------------------------------------


@pytest.mark.parametrize(("inverted", "zero", "turns", "expected"), [
    (False, 0.0, 0.25, 0.25), (False, 0.0, 1.25, 0.25), (True, 0.0, 0.25, 0.75),
    (False, 0.1, 0.05, 0.95), (True, 0.1, 0.25, 0.85)])
def test_absolute_encoder_reads_one_turn_after_the_programs_zero_offset_and_inversion(
        sim_time, inverted, zero, turns, expected):
    # REV's zero offset is in raw rotations, before inversion and conversion factor
    can_id = next(IDS)
    spark = rev.SparkMax(can_id, rev.SparkLowLevel.MotorType.kBrushless)
    configure(spark, lambda c: c.absoluteEncoder.inverted(inverted).zeroOffset(zero)
              .positionConversionFactor(360.0).velocityConversionFactor(6.0))
    bridge = Bridge(loads(TURRET.format(id=can_id)), ProgramObjects(root=lambda: None))
    bridge.apply({topics.encoder_position("turret"): turns,
                  topics.encoder_velocity("turret"): 0.5})
    encoder = spark.getAbsoluteEncoder()
    assert encoder.getPosition() == pytest.approx(expected * 360.0, abs=1e-4)
    assert encoder.getVelocity() == pytest.approx((-1 if inverted else 1) * 0.5 * 60.0 * 6.0)


ALTERNATE = FLYWHEEL.replace('mount = "motor"\nhal = "sparkmax:{id}"\n',
                             'hal = "sparkmax:{id}/alternate"\n')


def test_alternate_encoder_counts_with_its_own_inversion_not_the_motors(sim_time):
    spark = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(spark, lambda c: (c.inverted(True), c.alternateEncoder.inverted(False)
                                .positionConversionFactor(0.5)))
    robot = types.SimpleNamespace(shooter=spark)
    bridge = Bridge(loads(ALTERNATE.format(id=spark.getDeviceId())),
                    ProgramObjects(root=lambda: robot))
    bridge.apply({topics.encoder_position("shooter"): 4.0})
    assert spark.getAlternateEncoder().getPosition() == pytest.approx(2.0)
    assert bridge.missing() == []


@pytest.mark.parametrize(("position_factor", "velocity_factor"), [
    (1.0, 1.0), (0.5, 2.0), (0.0479, 0.0479 / 60.0), (math.tau, 1.0)])
def test_one_step_back_lands_revs_advance_on_the_position(sim_time, position_factor,
                                                          velocity_factor):
    spark = rev.SparkMax(next(IDS), rev.SparkLowLevel.MotorType.kBrushless)
    configure(spark, lambda c: c.encoder.positionConversionFactor(position_factor)
              .velocityConversionFactor(velocity_factor))
    motor = DCMotor.NEO(1)
    sim = rev.SparkMaxSim(spark, motor)
    position, velocity = 3.25, 1234.0  # the sensor's units, and its units "per minute"
    sim.setPosition(halmap.spark_step_back(position, velocity, position_factor,
                                           velocity_factor, DT))
    sim.iterate(velocity, VBUS, DT)
    assert sim.getPosition() == pytest.approx(position, rel=1e-6)
