"""The robot-side bridge (`simserver.bridge.core.Bridge`, `simserver.bridge.devices`) against the
real WPILib HAL simulation, in process: the test plays the robot program (it creates the wpilib
devices and SimDevices a program or vendor library would) and checks what the bridge reads from
them and writes into them.

HAL simulation state is process-global and the rest of the suite runs in this process, so every
test uses its own channels and SimDevice names, the `hw` fixture frees each device it created
(robotpy 2026 devices have no close(): the HAL handle is released when the object is deleted),
the Driver Station and roboRIO are reset after every test, and a module fixture checks that the
module leaves no device behind.
"""

from __future__ import annotations

import gc
import math
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import hal
import pytest
import wpilib
from wpilib.simulation import (
    AnalogGyroSim,
    AnalogInputSim,
    DIOSim,
    DriverStationSim,
    EncoderSim,
    PWMSim,
    RoboRioSim,
    SimDeviceSim,
    SolenoidSim,
)

from simserver.bridge.core import FOREIGN_LOOPS, Bridge
from simserver.bridge.objects import ProgramObjects
from simserver.config.loader import loads
from simserver.contract import topics
from tests.worlds import ARM, LIFT, SHOULDER_NEO

T = TypeVar("T")
OUT = hal.SimDevice.Direction.kOutput
IN = hal.SimDevice.Direction.kInput
BIDIR = hal.SimDevice.Direction.kBidir
CTRE = wpilib.PneumaticsModuleType.CTREPCM
REV = wpilib.PneumaticsModuleType.REVPH


# --- fixtures: free every device, reset the Driver Station and roboRIO -------------------------


def _hal_state() -> dict[str, Any]:
    """What the HAL has initialized: PWM channels, encoders, DIOs, SimDevices. (Only valid
    channels: the sim classes do not bounds-check, DIOSim(31).getInitialized() never returns.)"""
    dios = range(wpilib.SensorUtil.getNumDigitalChannels())
    encoders = set()
    for ch in dios:
        try:
            if EncoderSim.createForChannel(ch).getInitialized():
                encoders.add(ch)
        except IndexError:
            pass
    return {
        "pwm": {ch for ch in range(wpilib.SensorUtil.getNumPwmChannels())
                if PWMSim(ch).getInitialized()},
        "encoders": encoders,
        "dio": {ch for ch in dios if DIOSim(ch).getInitialized()},
        "simdevices": set(SimDeviceSim.enumerateDevices("")),
    }


# Every device a test of this module created, to check that none outlives the module.
_CREATED: list[weakref.ref[Any]] = []


@pytest.fixture(scope="module", autouse=True)
def no_leaks() -> Iterator[None]:
    """This module leaves the HAL with the devices it found (the suite shares the process)."""
    gc.collect()
    before = _hal_state()
    yield
    gc.collect()
    assert [ref() for ref in _CREATED if ref() is not None] == []
    assert _hal_state() == before


@pytest.fixture(autouse=True)
def reset_driver_station() -> Iterator[None]:
    DriverStationSim.resetData()
    DriverStationSim.notifyNewData()
    try:
        yield
    finally:
        DriverStationSim.resetData()
        DriverStationSim.notifyNewData()
        RoboRioSim.resetData()


@pytest.fixture
def hw() -> Iterator[Callable[[T], T]]:
    """``hw(device)`` keeps a wpilib device or SimDevice for the test and frees it afterwards
    (a failed test's traceback may keep it a little longer: tests use their own channels)."""
    held: list[Any] = []

    def add(device: T) -> T:
        if isinstance(device, hal.SimDevice):
            assert device, "SimDevice name already in use (leaked by an earlier test?)"
        held.append(device)
        _CREATED.append(weakref.ref(device))
        return device

    try:
        yield add
    finally:
        _reset_sims(held)
        held.clear()
        gc.collect()


def _reset_sims(devices: list[Any]) -> None:
    """Reset the sim data of each device's channel, which outlives the object: a PCM channel
    stays on, a DIO keeps its value, a reused encoder slot its distance per pulse."""
    for device in devices:
        if isinstance(device, wpilib.Solenoid):
            device.set(False)
        elif isinstance(device, wpilib.DoubleSolenoid):
            device.set(wpilib.DoubleSolenoid.Value.kOff)
        elif isinstance(device, wpilib.Encoder):
            EncoderSim(device).resetData()
        elif isinstance(device, wpilib.DigitalInput):
            DIOSim(device).resetData()
        elif isinstance(device, wpilib.AnalogGyro):
            AnalogGyroSim(device).resetData()
        elif isinstance(device, wpilib.PWMMotorController):
            PWMSim(device.getChannel()).resetData()


def enable(mode: str = "teleop") -> None:
    """Put the simulated Driver Station in ``mode`` (as the DS or a test harness would)."""
    DriverStationSim.setDsAttached(True)
    DriverStationSim.setAutonomous(mode == "autonomous")
    DriverStationSim.setTest(mode == "test")
    DriverStationSim.setEnabled(mode != "disabled")
    DriverStationSim.notifyNewData()


def disable() -> None:
    enable("disabled")


# --- configs ------------------------------------------------------------------------------------


def config_text(extra: str = "", left: str | None = None, right: str | None = None) -> str:
    """The smallest valid config (motors left and right, ``hal = left/right`` as TOML values)
    plus ``extra``."""
    text = '[drivetrain]\n\n[motors.left]\ntype = "CIM"\n'
    text += f"hal = {left}\n" if left else ""
    text += '\n[motors.right]\ntype = "CIM"\n'
    text += f"hal = {right}\n" if right else ""
    return text + "\n" + extra


def make_bridge(extra: str = "", left: str | None = None, right: str | None = None) -> Bridge:
    return Bridge(loads(config_text(extra, left, right)))


def encoder_table(name: str, hal_address: str, unit: str = "m", motor: str = "left",
                  **keys: str) -> str:
    more = "".join(f"{k} = {v}\n" for k, v in keys.items())
    return (f'[encoders.{name}]\nmotor = "{motor}"\nunit = "{unit}"\nhal = "{hal_address}"\n'
            + more + "\n")


# A mechanism with a position, for limit switches.
LIFT_MOTOR = LIFT + '\n[motors.lift]\ntype = "Kraken X60"\n\n'


def enc(name: str, position: Any, velocity: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {topics.encoder_position(name): position}
    if velocity is not None:
        out[topics.encoder_velocity(name)] = velocity
    return out


# --- outputs: motor duty cycles, solenoids, robot mode ------------------------------------------


def test_outputs_are_zero_and_off_while_disabled_and_follow_the_program_when_enabled(hw):
    bridge = make_bridge('[solenoids.claw]\nhal = "ctre:0"\n', left='"pwm:0"', right='"pwm:1"')
    left, right = hw(wpilib.PWMSparkMax(0)), hw(wpilib.PWMSparkMax(1))
    claw = hw(wpilib.Solenoid(CTRE, 0))
    left.set(0.5)
    right.set(-0.25)
    claw.set(True)
    assert PWMSim(0).getSpeed() == 0.5  # the program's output is there, but disabled...
    disable()
    assert bridge.outputs() == {
        topics.motor("left"): 0.0, topics.motor("right"): 0.0,
        topics.solenoid("claw"): False, topics.ROBOT_MODE: "disabled",
    }
    enable()
    assert bridge.outputs() == {
        topics.motor("left"): 0.5, topics.motor("right"): -0.25,
        topics.solenoid("claw"): True, topics.ROBOT_MODE: "teleop",
    }
    claw.set(False)
    left.set(-1.0)
    out = bridge.outputs()
    assert out[topics.solenoid("claw")] is False
    assert out[topics.motor("left")] == -1.0
    disable()
    assert bridge.outputs()[topics.motor("right")] == 0.0


def test_duty_is_the_pwm_speed_as_wpilib_quantizes_it(hw):
    bridge = make_bridge(left='"pwm:2"')
    motor = hw(wpilib.PWMVictorSPX(2))
    enable()
    for speed in (0.3, -0.123, 0.999):
        motor.set(speed)
        duty = bridge.outputs()[topics.motor("left")]
        assert duty == PWMSim(2).getSpeed()
        assert duty == pytest.approx(speed, abs=2e-3)  # PWM pulse-width resolution


def test_motor_wired_to_two_pwm_channels_reads_their_mean(hw):
    bridge = make_bridge(left='["pwm:3", "pwm:4"]')
    a, b = hw(wpilib.PWMSparkMax(3)), hw(wpilib.PWMTalonFX(4))
    enable()
    a.set(0.5)
    b.set(1.0)
    assert bridge.outputs()[topics.motor("left")] == 0.75
    b.set(-0.5)
    assert bridge.outputs()[topics.motor("left")] == 0.0
    b.set(-1.0)
    assert bridge.outputs()[topics.motor("left")] == -0.25


def test_inverted_pwm_controller_reads_negated(hw):
    bridge = make_bridge(left='"pwm:5"')
    motor = hw(wpilib.PWMSparkMax(5))
    motor.setInverted(True)
    motor.set(0.5)
    enable()
    assert bridge.outputs()[topics.motor("left")] == -0.5


def test_outputs_hold_only_wired_motors_and_solenoids():
    bridge = make_bridge('[solenoids.a]\n[solenoids.b]\nhal = "ctre:5"\n', right='"pwm:6"')
    assert set(bridge.outputs()) == {topics.motor("right"), topics.solenoid("b"),
                                     topics.ROBOT_MODE}
    assert set(bridge.motors) == {"right"}
    assert set(bridge.solenoids) == {"b"}


def test_double_solenoid_is_on_after_forward_off_after_reverse_and_holds_between(hw):
    bridge = make_bridge('[solenoids.claw]\nhal = "ctre:3"\nreverse_hal = "ctre:4"\n'
                         "initial = true\n")
    claw = hw(wpilib.DoubleSolenoid(CTRE, 3, 4))
    value = wpilib.DoubleSolenoid.Value
    disable()
    assert bridge.outputs()[topics.solenoid("claw")] is True  # initial, until it fires
    enable()
    states = []
    for command in (value.kReverse, value.kOff, value.kForward, value.kOff):
        claw.set(command)
        states.append(bridge.outputs()[topics.solenoid("claw")])
    assert states == [False, False, True, True]
    disable()  # the roboRIO cuts both channels: the valve holds its spool
    claw.set(value.kReverse)
    assert bridge.outputs()[topics.solenoid("claw")] is True


def test_rev_ph_solenoid_is_read(hw):
    bridge = make_bridge('[solenoids.shift]\nhal = "rev:3"\n')
    valve = hw(wpilib.Solenoid(REV, 3))
    enable()
    assert bridge.outputs()[topics.solenoid("shift")] is False
    valve.set(True)
    assert SolenoidSim(REV, 3).getOutput()
    assert bridge.outputs()[topics.solenoid("shift")] is True


@pytest.mark.parametrize("mode", ["disabled", "autonomous", "teleop", "test"])
def test_robot_mode_is_what_the_driver_station_says(mode):
    bridge = make_bridge()
    enable(mode)
    assert bridge.outputs() == {topics.ROBOT_MODE: mode}


# --- SimDevice motors: Talon FX, SPARK, any double ---------------------------------------------


def test_talonfx_motor_reads_the_duty_cycle_of_its_simdevice(hw):
    bridge = make_bridge(left='"talonfx:7"')
    enable()
    assert bridge.outputs()[topics.motor("left")] == 0.0  # not created yet: 0, no error
    talon = hw(hal.SimDevice("CANMotor:Talon FX (v6)[7]"))
    duty = talon.createDouble("dutyCycle", OUT, 0.0)
    duty.set(0.3)
    assert bridge.outputs()[topics.motor("left")] == 0.3
    duty.set(-0.8)
    assert bridge.outputs()[topics.motor("left")] == -0.8
    disable()
    assert bridge.outputs()[topics.motor("left")] == 0.0


def test_talonfx_gets_the_battery_voltage(hw):
    bridge = make_bridge(left='"talonfx:8"')
    talon = hw(hal.SimDevice("CANMotor:Talon FX (v6)[8]"))
    talon.createDouble("dutyCycle", OUT, 0.0)
    supply = talon.createDouble("supplyVoltage", IN, 12.0)
    bridge.apply({topics.BATTERY_VOLTAGE: 10.25})
    assert supply.get() == 10.25


def test_simdevice_motor_reads_any_double(hw):
    bridge = make_bridge(right='"simdevice:TestMotor[1]/output"')
    device = hw(hal.SimDevice("TestMotor[1]"))
    output = device.createDouble("output", OUT, 0.0)
    output.set(-0.625)
    enable()
    assert bridge.outputs()[topics.motor("right")] == -0.625


def spark(hw: Callable[[Any], Any], name: str) -> dict[str, Any]:
    device = hw(hal.SimDevice(name))
    return {
        "device": device,
        "mode": device.createInt("Control Mode", OUT, 0),
        "setpoint": device.createDouble("Setpoint", OUT, 0.0),
        "bus": device.createDouble("Bus Voltage", IN, 12.0),
        "applied": device.createDouble("Applied Output", OUT, 0.0),
    }


def test_spark_max_duty_cycle_mode_reads_the_setpoint(hw):
    bridge = make_bridge(left='"sparkmax:9"')
    s = spark(hw, "SPARK MAX [9]")
    s["setpoint"].set(0.4)
    enable()
    assert bridge.outputs()[topics.motor("left")] == 0.4
    assert bridge.warnings == []


def test_spark_voltage_mode_reads_setpoint_over_bus_voltage(hw):
    bridge = make_bridge(left='"sparkmax:10"')
    s = spark(hw, "SPARK MAX [10]")
    s["mode"].set(2)
    s["setpoint"].set(6.0)
    s["bus"].set(12.0)
    enable()
    assert bridge.outputs()[topics.motor("left")] == 0.5
    s["bus"].set(8.0)
    assert bridge.outputs()[topics.motor("left")] == 0.75
    s["bus"].set(0.0)  # no bus voltage reported: nominal 12 V
    assert bridge.outputs()[topics.motor("left")] == 0.5


def test_spark_flex_is_found_by_its_own_name(hw):
    bridge = make_bridge(right='"sparkflex:11"')
    s = spark(hw, "SPARK Flex [11]")
    s["setpoint"].set(-0.2)
    enable()
    assert bridge.outputs()[topics.motor("right")] == -0.2


def test_spark_closed_loop_reads_applied_output_and_warns_once(hw):
    bridge = make_bridge(left='"sparkmax:12"')
    s = spark(hw, "SPARK MAX [12]")
    s["mode"].set(1)  # velocity control
    s["setpoint"].set(3000.0)
    s["applied"].set(0.7)
    enable()
    assert bridge.outputs()[topics.motor("left")] == 0.7
    bridge.outputs()
    assert len(bridge.warnings) == 1
    assert bridge.warnings[0].startswith("motors.left: the SPARK runs closed-loop control mode 1")


# --- encoders -----------------------------------------------------------------------------------


def test_analog_potentiometer_reads_five_volts_over_one_turn(hw):
    # An arm's absolute angle on analog input 3, read by the program as a potentiometer.
    bridge = make_bridge(ARM + SHOULDER_NEO + '\n'
                         + encoder_table("pot", "analog:3", unit="deg", motor="shoulder",
                                         absolute="true"))
    pot = hw(wpilib.AnalogPotentiometer(3, 360.0))
    bridge.apply(enc("pot", 90.0))
    assert pot.get() == pytest.approx(90.0, abs=1e-9)
    bridge.apply(enc("pot", 450.0))  # one turn more: the same voltage
    assert pot.get() == pytest.approx(90.0, abs=1e-9)


def test_analog_potentiometer_spans_five_volts_over_its_full_range(hw):
    # A 270-degree potentiometer the program scales to read -90 deg at 0 V; simserver's
    # offset of 90 deg makes the program read the arm's angle.
    bridge = make_bridge(ARM + SHOULDER_NEO + '\n'
                         + encoder_table("pot", "analog:4", unit="deg", motor="shoulder",
                                         absolute="true", full_range='"270 deg"'))
    pot = hw(wpilib.AnalogPotentiometer(4, 270.0, -90.0))
    for angle in (0.0, 90.0, 135.0, 269.0):
        bridge.apply(enc("pot", angle))
        assert AnalogInputSim(4).getVoltage() == pytest.approx(5.0 * angle / 270.0)
        assert pot.get() == pytest.approx(angle - 90.0, abs=1e-9)


def test_ticks_encoder_gets_the_count_and_rate_times_distance_per_pulse(hw):
    bridge = make_bridge(encoder_table("e", "encoder:0", unit="ticks"))
    encoder = hw(wpilib.Encoder(0, 1))
    encoder.setDistancePerPulse(0.5)
    bridge.apply(enc("e", 100.0, 40.0))
    assert encoder.get() == 100
    assert encoder.getDistance() == pytest.approx(50.0, rel=1e-12)
    assert encoder.getRate() == pytest.approx(40.0 * 0.5, rel=1e-9)
    bridge.apply(enc("e", 100.6, -8.0))  # simserver's ticks are floats: whole counts only
    assert encoder.get() == 101
    assert encoder.getRate() == pytest.approx(-4.0, rel=1e-9)


@pytest.mark.parametrize("position", [1.234, -0.5551, 0.0049, 0.0051, 12.3456789, 0.0])
def test_length_encoder_counts_position_over_distance_per_pulse(hw, position):
    bridge = make_bridge(encoder_table("e", "encoder:2", unit="m"))
    encoder = hw(wpilib.Encoder(2, 3))
    dpp = 0.01
    encoder.setDistancePerPulse(dpp)
    bridge.apply(enc("e", position, 2.5))
    assert encoder.get() == round(position / dpp)
    assert abs(encoder.getDistance() - position) <= dpp / 2 + 1e-12  # quantized to counts
    assert encoder.getRate() == pytest.approx(2.5, rel=1e-9)  # already in the program's units


def test_length_encoder_without_distance_per_pulse_counts_units(hw):
    bridge = make_bridge(encoder_table("e", "encoder:4", unit="m"))
    encoder = hw(wpilib.Encoder(4, 5))
    bridge.apply(enc("e", 7.4, 1.0))
    assert encoder.get() == 7


def test_reversed_encoder_reads_the_negation_of_a_forward_one(hw):
    bridge = make_bridge(encoder_table("fwd", "encoder:6", unit="m")
                         + encoder_table("rev", "encoder:8", unit="m", motor="right"))
    forward = hw(wpilib.Encoder(6, 7))
    reverse = hw(wpilib.Encoder(8, 9, True))
    for e in (forward, reverse):
        e.setDistancePerPulse(0.001)
    bridge.apply({**enc("fwd", 0.8766, 1.5), **enc("rev", 0.8766, 1.5)})
    assert forward.get() == 877
    assert reverse.get() == -877
    assert reverse.getDistance() == pytest.approx(-forward.getDistance(), rel=1e-12)
    assert forward.getRate() == pytest.approx(1.5, rel=1e-9)
    assert reverse.getRate() == pytest.approx(-1.5, rel=1e-9)


def test_reversed_ticks_encoder_reads_negated_counts(hw):
    bridge = make_bridge(encoder_table("e", "encoder:10", unit="ticks"))
    encoder = hw(wpilib.Encoder(10, 11, True))
    bridge.apply(enc("e", 300.0, 20.0))
    assert encoder.get() == -300
    assert encoder.getRate() == pytest.approx(-20.0, rel=1e-9)


def test_encoder_reset_makes_later_readings_relative_to_the_reset(hw):
    bridge = make_bridge(encoder_table("e", "encoder:12", unit="ticks"))
    encoder = hw(wpilib.Encoder(12, 13))
    bridge.apply(enc("e", 100.0))
    assert encoder.get() == 100
    encoder.reset()
    assert encoder.get() == 0
    bridge.apply(enc("e", 100.0))
    assert encoder.get() == 0  # still where it was reset
    bridge.apply(enc("e", 150.0))
    assert encoder.get() == 50
    bridge.apply(enc("e", 40.0))
    assert encoder.get() == -60
    encoder.reset()  # a second reset moves the zero again
    bridge.apply(enc("e", 45.0))
    assert encoder.get() == 5


def test_length_encoder_reset_keeps_counting_from_zero(hw):
    bridge = make_bridge(encoder_table("e", "encoder:14", unit="m"))
    encoder = hw(wpilib.Encoder(14, 15))
    encoder.setDistancePerPulse(0.01)
    bridge.apply(enc("e", 2.0))
    encoder.reset()
    bridge.apply(enc("e", 2.5))
    assert encoder.get() == 50
    assert encoder.getDistance() == pytest.approx(0.5, abs=0.005)


def test_encoder_position_that_is_not_finite_or_a_number_is_skipped(hw):
    bridge = make_bridge(encoder_table("e", "encoder:16", unit="ticks"))
    encoder = hw(wpilib.Encoder(16, 17))
    encoder.setDistancePerPulse(1.0)
    bridge.apply(enc("e", 42.0, 3.0))
    for bad in (math.nan, math.inf, -math.inf, "42", True, None, [1.0]):
        bridge.apply(enc("e", bad, 99.0))
        assert encoder.get() == 42
        assert encoder.getRate() == pytest.approx(3.0, rel=1e-9)
    bridge.apply({})
    assert encoder.get() == 42


def test_encoder_velocity_missing_or_not_finite_writes_zero_rate(hw):
    bridge = make_bridge(encoder_table("e", "encoder:18", unit="ticks"))
    encoder = hw(wpilib.Encoder(18, 19))
    bridge.apply(enc("e", 5.0, 10.0))
    assert encoder.getRate() == pytest.approx(10.0, rel=1e-9)
    bridge.apply(enc("e", 6.0, math.nan))
    assert encoder.get() == 6
    assert encoder.getRate() == 0.0
    bridge.apply(enc("e", 7.0, 10.0))
    bridge.apply(enc("e", 8.0))
    assert encoder.getRate() == 0.0


def test_encoder_created_after_the_bridge_starts_is_picked_up(hw):
    bridge = make_bridge(encoder_table("e", "encoder:20", unit="ticks"))
    bridge.apply(enc("e", 10.0))  # the program has no encoder yet: skipped, no error
    encoder = hw(wpilib.Encoder(20, 21))
    bridge.apply(enc("e", 11.0))
    assert encoder.get() == 11


def _loops(bridge: Bridge, physics_py: Callable[[int], None], n: int = FOREIGN_LOOPS) -> None:
    """``n`` robot loops' simulation part: SimPeriodicBefore, ``physics_py(loop)``,
    SimPeriodicAfter, then simserver's values written (moving every loop)."""
    for loop in range(n):
        bridge.observe()
        physics_py(loop)
        bridge.settle()
        bridge.apply(enc("e", 1.0 + loop, 2.0 + loop))


def test_a_physics_py_that_writes_only_an_encoders_rate_is_named(hw):
    """robotpy's FlywheelBangBangController: its physics.py sets the EncoderSim's rate only."""
    bridge = make_bridge(encoder_table("e", "encoder:22", unit="rad"))
    sim = EncoderSim(hw(wpilib.Encoder(22, 23)))
    _loops(bridge, lambda loop: sim.setRate(100.0 + loop))
    assert [w for w in bridge.warnings if "also writes encoders.e (encoder:22)" in w], (
        bridge.warnings)


def test_the_bridges_own_encoder_writes_and_a_reset_are_no_other_writer(hw):
    bridge = make_bridge(encoder_table("e", "encoder:24", unit="rad"))
    encoder = hw(wpilib.Encoder(24, 25))
    encoder.reset()  # the program's own code runs before SimPeriodicBefore
    _loops(bridge, lambda loop: None, 2 * FOREIGN_LOOPS)
    assert bridge.warnings == []


# --- CAN and SimDevice encoders (the values a vendor library's sim reads) -----------------------


def test_talonfx_rotor_encoder_gets_rotations(hw):
    bridge = make_bridge(encoder_table("e", "talonfx:13", unit="deg", mount='"motor"'))
    rotor = hw(hal.SimDevice("CANEncoder:Talon FX (v6)[13]/Rotor Sensor"))
    position = rotor.createDouble("rawPositionInput", IN, 0.0)
    velocity = rotor.createDouble("velocity", IN, 0.0)
    bridge.apply(enc("e", 720.0, -90.0))
    assert position.get() == pytest.approx(2.0, rel=1e-12)
    assert velocity.get() == pytest.approx(-0.25, rel=1e-12)


def test_cancoder_in_ticks_gets_rotations(hw):
    bridge = make_bridge(encoder_table("e", "cancoder:14", unit="ticks",
                                       ticks_per_revolution="4096"))
    cancoder = hw(hal.SimDevice("CANEncoder:CANcoder (v6)[14]"))
    position = cancoder.createDouble("rawPositionInput", IN, 0.0)
    velocity = cancoder.createDouble("velocity", IN, 0.0)
    bridge.apply(enc("e", 8192.0, 1024.0))
    assert position.get() == 2.0
    assert velocity.get() == 0.25


def test_cancoder_absolute_reading_is_written_as_turns_it_counts(hw):
    """simserver's absolute reading wraps within a turn; a CANcoder counts turns (CTRE's swerve
    odometry moved 4 cm each time a wrapped steer angle jumped a turn)."""
    bridge = make_bridge(LIFT_MOTOR + encoder_table("e", "cancoder:14", unit="rotations",
                                                    motor="lift", absolute="true"))
    cancoder = hw(hal.SimDevice("CANEncoder:CANcoder (v6)[14]"))
    position = cancoder.createDouble("rawPositionInput", IN, 0.0)
    cancoder.createDouble("velocity", IN, 0.0)
    written = []
    for reading in (0.90, 0.97, 0.04, 0.11, 0.02, 0.93, 0.85):
        bridge.apply(enc("e", reading, 0.0))
        written.append(position.get())
    assert written == pytest.approx([0.90, 0.97, 1.04, 1.11, 1.02, 0.93, 0.85])


def test_spark_relative_encoder_gets_converted_position_and_rpm(hw):
    bridge = make_bridge(encoder_table("e", "sparkmax:15", unit="rotations"))
    encoder = hw(hal.SimDevice("SPARK MAX [15] RELATIVE ENCODER"))
    position = encoder.createDouble("Position", BIDIR, 0.0)
    velocity = encoder.createDouble("Velocity", BIDIR, 0.0)
    encoder.createDouble("Position Conversion Factor", OUT, 2.0)
    encoder.createDouble("Velocity Conversion Factor", OUT, 0.5)
    bridge.apply(enc("e", 3.0, 4.0))
    assert position.get() == pytest.approx(6.0, rel=1e-12)  # 3 rotations x 2
    assert velocity.get() == pytest.approx(4.0 * 60.0 * 0.5, rel=1e-12)  # rpm x 0.5


def test_simdevice_encoder_gets_the_position_and_keeps_the_programs_zero(hw):
    bridge = make_bridge(encoder_table("e", "simdevice:TestEncoder[2]/pos", unit="m"))
    device = hw(hal.SimDevice("TestEncoder[2]"))
    pos = device.createDouble("pos", BIDIR, 0.0)
    bridge.apply(enc("e", 5.0))
    assert pos.get() == 5.0
    pos.set(10.0)  # the program sets the position (setPosition(10))
    bridge.apply(enc("e", 7.0))
    assert pos.get() == 12.0


# --- gyros --------------------------------------------------------------------------------------


def test_analog_gyro_reads_clockwise_positive(hw):
    bridge = make_bridge('[gyro]\nhal = "analoggyro:0"\n')
    gyro = hw(wpilib.AnalogGyro(0))
    bridge.apply({topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 5.0})
    assert gyro.getAngle() == -30.0
    assert gyro.getRate() == -5.0
    assert gyro.getRotation2d().degrees() == pytest.approx(30.0, rel=1e-12)


def test_analog_gyro_reset_makes_later_readings_relative(hw):
    bridge = make_bridge('[gyro]\nhal = "analoggyro:1"\n')
    gyro = hw(wpilib.AnalogGyro(1))
    bridge.apply({topics.GYRO_YAW: 30.0})
    gyro.reset()
    assert gyro.getAngle() == 0.0
    bridge.apply({topics.GYRO_YAW: 50.0})
    assert gyro.getAngle() == pytest.approx(-20.0, rel=1e-12)
    assert gyro.getRotation2d().degrees() == pytest.approx(20.0, rel=1e-12)
    bridge.apply({topics.GYRO_YAW: 10.0})
    assert gyro.getAngle() == pytest.approx(20.0, rel=1e-12)


def test_gyro_yaw_that_is_not_finite_is_skipped_and_missing_rate_is_zero(hw):
    bridge = make_bridge('[gyro]\nhal = "analoggyro:0"\n')
    gyro = hw(wpilib.AnalogGyro(0))
    bridge.apply({topics.GYRO_YAW: 12.0, topics.GYRO_RATE: 3.0})
    for bad in (math.nan, math.inf, "12", None, False):
        bridge.apply({topics.GYRO_YAW: bad, topics.GYRO_RATE: 99.0})
        assert gyro.getAngle() == -12.0
        assert gyro.getRate() == -3.0
    bridge.apply({topics.GYRO_YAW: 13.0})
    assert gyro.getAngle() == -13.0
    assert gyro.getRate() == 0.0


def test_analog_gyro_created_after_the_bridge_starts_is_picked_up(hw):
    bridge = make_bridge('[gyro]\nhal = "analoggyro:1"\n')
    bridge.apply({topics.GYRO_YAW: 1.0})
    gyro = hw(wpilib.AnalogGyro(1))
    bridge.apply({topics.GYRO_YAW: 2.0})
    assert gyro.getAngle() == -2.0


def test_adxrs450_reads_clockwise_positive(hw):
    bridge = make_bridge('[gyro]\nhal = "adxrs450"\n')
    gyro = hw(wpilib.ADXRS450_Gyro())
    bridge.apply({topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 5.0})
    assert gyro.getAngle() == -30.0
    assert gyro.getRate() == -5.0


@pytest.mark.parametrize("kind", ["adis16470", "adis16448"])
def test_adis_imus_read_counterclockwise_positive_on_their_yaw_axis(hw, kind):
    bridge = make_bridge(f'[gyro]\nhal = "{kind}"\n')
    imu = hw(wpilib.ADIS16470_IMU() if kind == "adis16470" else wpilib.ADIS16448_IMU())
    bridge.apply({topics.GYRO_YAW: 30.0, topics.GYRO_RATE: -5.0})
    assert (imu.getAngle(), imu.getRate()) == (30.0, -5.0)


def test_adis16470_mounted_on_its_side_gets_yaw_on_the_axis_the_program_chose(hw):
    axis = wpilib.ADIS16470_IMU.IMUAxis
    imu = hw(wpilib.ADIS16470_IMU(axis.kX, axis.kY, axis.kZ, wpilib.SPI.Port.kOnboardCS1,
                                  wpilib.ADIS16470_IMU.CalibrationTime._1s))
    robot = types.SimpleNamespace(imu=imu)
    bridge = Bridge(loads(config_text('[gyro]\nhal = "adis16470"\n')),
                    ProgramObjects(root=lambda: robot))
    bridge.apply({topics.GYRO_YAW: 12.0, topics.GYRO_RATE: 3.0})
    assert (imu.getAngle(), imu.getRate()) == (12.0, 3.0)
    device = SimDeviceSim("Gyro:ADIS16470[1]")
    assert device.getDouble("gyro_angle_z").get() == 0.0


def test_pigeon2_gets_yaw_and_rate_counterclockwise_positive(hw):
    bridge = make_bridge('[gyro]\nhal = "pigeon2:4"\n')
    pigeon = hw(hal.SimDevice("CANGyro:Pigeon 2 (v6)[4]"))
    yaw = pigeon.createDouble("rawYawInput", IN, 0.0)
    rate = pigeon.createDouble("angularVelZ", IN, 0.0)
    bridge.apply({topics.GYRO_YAW: 30.0, topics.GYRO_RATE: -7.5})
    assert (yaw.get(), rate.get()) == (30.0, -7.5)
    yaw.set(0.0)  # Phoenix keeps setYaw offsets itself: the raw input is always physical
    bridge.apply({topics.GYRO_YAW: 31.0})
    assert yaw.get() == 31.0


def test_simdevice_gyro_gets_yaw_counterclockwise_positive_and_keeps_resets(hw):
    bridge = make_bridge('[gyro]\nhal = "simdevice:TestGyro[3]/Yaw"\n')
    device = hw(hal.SimDevice("TestGyro[3]"))
    yaw = device.createDouble("Yaw", BIDIR, 0.0)
    bridge.apply({topics.GYRO_YAW: 45.0})
    assert yaw.get() == 45.0
    yaw.set(0.0)  # the program zeroes its gyro
    bridge.apply({topics.GYRO_YAW: 50.0})
    assert yaw.get() == 5.0


# --- battery, switches --------------------------------------------------------------------------


def test_battery_voltage_reaches_the_robot_controller():
    bridge = make_bridge()
    bridge.apply({topics.BATTERY_VOLTAGE: 11.5})
    assert wpilib.RobotController.getBatteryVoltage() == 11.5
    bridge.apply({topics.BATTERY_VOLTAGE: 9})  # an integer is a number too
    assert wpilib.RobotController.getBatteryVoltage() == 9.0


@pytest.mark.parametrize("bad", [-1.0, -1e-9, math.nan, math.inf, -math.inf, "12", True, None,
                                 [12.0]], ids=repr)
def test_battery_voltage_that_is_negative_not_finite_or_not_a_number_is_skipped(bad):
    bridge = make_bridge()
    bridge.apply({topics.BATTERY_VOLTAGE: 11.5})
    bridge.apply({topics.BATTERY_VOLTAGE: bad})
    assert wpilib.RobotController.getBatteryVoltage() == 11.5


def test_zero_battery_voltage_is_applied():
    bridge = make_bridge()
    bridge.apply({topics.BATTERY_VOLTAGE: 11.5})
    bridge.apply({topics.BATTERY_VOLTAGE: 0.0})  # a tripped breaker
    assert wpilib.RobotController.getBatteryVoltage() == 0.0


SWITCHES = LIFT_MOTOR + """
[switches.bottom]
mechanism = "lift"
position = "0 m"
hal = "dio:28"

[switches.top]
mechanism = "lift"
position = "1.1 m"
trigger = "above"
hal = "!dio:29"
"""


def test_dio_switch_reads_true_when_pressed_and_inverted_false(hw):
    bridge = make_bridge(SWITCHES)
    bottom, top = hw(wpilib.DigitalInput(28)), hw(wpilib.DigitalInput(29))
    bridge.apply({topics.switch("bottom"): True, topics.switch("top"): True})
    assert bottom.get() is True
    assert top.get() is False
    bridge.apply({topics.switch("bottom"): False, topics.switch("top"): False})
    assert bottom.get() is False
    assert top.get() is True


def test_switch_value_that_is_not_a_boolean_is_skipped(hw):
    bridge = make_bridge(SWITCHES)
    bottom = hw(wpilib.DigitalInput(28))
    bridge.apply({topics.switch("bottom"): True})
    for bad in (0, 0.0, "false", None):
        bridge.apply({topics.switch("bottom"): bad})
        assert bottom.get() is True


# --- the Driver Station -------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "enabled", "auto", "teleop", "test"), [
    ("autonomous", True, True, False, False),
    ("teleop", True, False, True, False),
    ("test", True, False, False, True),
    ("disabled", False, False, True, False),  # WPILib: neither autonomous nor test is teleop
])
def test_ds_mode_puts_the_driver_station_in_that_mode(mode, enabled, auto, teleop, test):
    bridge = make_bridge()
    if mode == "disabled":
        bridge.apply({topics.DS_MODE: "teleop"})
        assert wpilib.DriverStation.isEnabled()
    bridge.apply({topics.DS_MODE: mode})
    wpilib.DriverStation.refreshData()
    ds = wpilib.DriverStation
    assert ds.isDSAttached()
    assert ds.isEnabled() is enabled
    assert ds.isAutonomous() is auto
    assert ds.isTeleop() is teleop
    assert ds.isTest() is test
    assert (ds.isAutonomousEnabled(), ds.isTeleopEnabled()) == (auto and enabled,
                                                                teleop and enabled)
    assert bridge.outputs()[topics.ROBOT_MODE] == mode  # the round trip through the DS


def test_ds_mode_is_seen_without_an_explicit_refresh():
    make_bridge().apply({topics.DS_MODE: "autonomous"})
    assert wpilib.DriverStation.isEnabled()
    assert wpilib.DriverStation.isAutonomous()


@pytest.mark.parametrize("bad", ["auto", "Teleop", "", 1, None, True])
def test_unknown_ds_mode_changes_nothing(bad):
    bridge = make_bridge()
    bridge.apply({topics.DS_MODE: "autonomous"})
    bridge.apply({topics.DS_MODE: bad})
    wpilib.DriverStation.refreshData()
    assert wpilib.DriverStation.isEnabled()
    assert wpilib.DriverStation.isAutonomous()
    assert bridge.outputs()[topics.ROBOT_MODE] == "autonomous"


def test_ds_mode_is_only_written_when_it_changes():
    # The bridge re-asserts nothing while the mode stays the same, so a harness (or the
    # program's own sim GUI) may change the DS in between.
    bridge = make_bridge()
    bridge.apply({topics.DS_MODE: "teleop"})
    disable()
    bridge.apply({topics.DS_MODE: "teleop"})
    assert not wpilib.DriverStation.isEnabled()
    bridge.apply({topics.DS_MODE: "test"})
    assert wpilib.DriverStation.isTest() and wpilib.DriverStation.isEnabled()


def test_joystick_axes_and_buttons_reach_the_program():
    bridge = make_bridge()
    bridge.apply({
        topics.DS_MODE: "teleop",
        topics.joystick_axes(2): [0.5, -0.25, 0.0, 1.0],
        topics.joystick_buttons(2): [True, False, True],
    })
    stick = wpilib.Joystick(2)
    assert stick.getAxisCount() == 4
    assert [stick.getRawAxis(k) for k in range(4)] == [0.5, -0.25, 0.0, 1.0]
    assert stick.getButtonCount() == 3
    assert [stick.getRawButton(k) for k in (1, 2, 3)] == [True, False, True]  # 1-based


def test_joystick_values_are_clamped_and_nan_or_junk_becomes_zero():
    bridge = make_bridge()
    bridge.apply({
        topics.joystick_axes(0): [2.0, -3.5, math.nan, math.inf, "0.5", None, True, 0.75],
        topics.joystick_buttons(0): [True, 1, "true", None, False, True],
    })
    stick = wpilib.Joystick(0)
    assert [stick.getRawAxis(k) for k in range(8)] == [1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.75]
    # Only true is pressed.
    assert [stick.getRawButton(k) for k in range(1, 7)] == [True, False, False, False, False,
                                                            True]


def test_joysticks_are_independent_and_limited_to_12_axes_and_32_buttons():
    bridge = make_bridge()
    bridge.apply({
        topics.joystick_axes(5): [0.5] * 14,
        topics.joystick_buttons(5): [True] * 40,
        topics.joystick_axes(1): [-0.5],
    })
    last, other = wpilib.Joystick(5), wpilib.Joystick(1)
    assert last.getAxisCount() == 12
    assert last.getButtonCount() == 32
    assert last.getRawButton(32)
    assert other.getAxisCount() == 1
    assert other.getRawAxis(0) == -0.5
    assert other.getButtonCount() == 0


def test_joysticks_do_not_enable_the_robot():
    make_bridge().apply({topics.joystick_axes(0): [0.5]})
    assert wpilib.Joystick(0).getRawAxis(0) == 0.5
    assert not wpilib.DriverStation.isEnabled()


# --- unwired devices ----------------------------------------------------------------------------


def test_unwired_pwm_controller_is_reported_with_the_line_to_add(hw):
    bridge = make_bridge(left='"pwm:10"')
    hw(wpilib.PWMSparkMax(10))
    assert not [line for line in bridge.unwired() if line.startswith("PWM 11:")]
    hw(wpilib.PWMSparkMax(11))
    lines = bridge.unwired()
    assert 'PWM 11: add hal = "pwm:11" to a [motors.<name>] table' in lines
    assert not [line for line in lines if line.startswith("PWM 10:")]


def encoder_lines(bridge: Bridge, channels: range) -> list[str]:
    return [line for line in bridge.unwired()
            if any(line.startswith(f"Encoder on DIO {ch} ") for ch in channels)]


def test_unwired_encoder_is_reported_with_the_line_to_add(hw):
    bridge = make_bridge()
    hw(wpilib.Encoder(22, 23))
    lines = encoder_lines(bridge, range(22, 24))
    assert lines == ['Encoder on DIO 22 and 23: add hal = "encoder:22" to an [encoders.<name>] '
                     "table"]


def test_wired_encoder_is_not_reported(hw):
    bridge = make_bridge(encoder_table("e", "encoder:24"))
    hw(wpilib.Encoder(24, 25))
    assert encoder_lines(bridge, range(24, 26)) == []


def test_unwired_encoder_is_reported_once(hw):
    bridge = make_bridge()
    hw(wpilib.Encoder(26, 27))
    assert encoder_lines(bridge, range(26, 28)) == [
        'Encoder on DIO 26 and 27: add hal = "encoder:26" to an [encoders.<name>] table']


def test_wired_encoder_on_non_adjacent_channels_is_not_reported(hw):
    bridge = make_bridge(encoder_table("e", "encoder:28"))
    encoder = hw(wpilib.Encoder(28, 30))
    bridge.apply(enc("e", 3.0))
    assert encoder.get() == 3  # the bridge does drive it
    assert encoder_lines(bridge, range(28, 31)) == []


@pytest.mark.parametrize(("device", "line"), [
    ("CANMotor:Talon FX (v6)[21]", 'add hal = "talonfx:21" to a [motors.<name>] table'),
    ("SPARK MAX [22]", 'add hal = "sparkmax:22" to a [motors.<name>] table'),
    ("SPARK Flex [23]", 'add hal = "sparkflex:23" to a [motors.<name>] table'),
    ("CANGyro:Pigeon 2 (v6)[24]", 'add hal = "pigeon2:24" to a [gyro] table'),
    ("CANEncoder:CANcoder (v6)[25]", 'add hal = "cancoder:25" to a [encoders.<name>] table'),
])
def test_unwired_can_device_is_reported_with_the_line_to_add(hw, device, line):
    bridge = make_bridge()
    hw(hal.SimDevice(device))
    assert f"{device}: {line}" in bridge.unwired()


def test_wired_can_devices_are_not_reported(hw):
    bridge = make_bridge('[gyro]\nhal = "pigeon2:26"\n'
                         + encoder_table("e", "cancoder:27", unit="rotations"),
                         left='"talonfx:28"', right='"sparkmax:29"')
    names = ["CANMotor:Talon FX (v6)[28]", "SPARK MAX [29]", "CANGyro:Pigeon 2 (v6)[26]",
             "CANEncoder:CANcoder (v6)[27]"]
    for name in names:
        hw(hal.SimDevice(name))
    assert not [line for line in bridge.unwired()
                if any(line.startswith(f"{n}: ") for n in names)]


def test_followers_are_wired_not_read_and_must_exist(hw):
    # A SPARK follower's own SimDevice holds no output: the leader is read alone.
    bridge = make_bridge(left='"sparkmax:31"\ncount = 2\nfollowers = ["sparkmax:32"]',
                         right='"pwm:19"\ncount = 2')
    leader = spark(hw, "SPARK MAX [31]")
    leader["setpoint"].set(0.4)
    enable()
    assert bridge.outputs()[topics.motor("left")] == pytest.approx(0.4)
    missing = bridge.missing()
    assert [line for line in missing if "sparkmax:32" in line] == [
        'motors.left.followers: hal = "sparkmax:32", but the robot program created no such '
        "device (check the channel or CAN id against robot.py, or run `simserver init`)"]
    hw(hal.SimDevice("SPARK MAX [32]"))
    assert not [line for line in bridge.unwired() if line.startswith("SPARK MAX [32]")]
    assert not [line for line in bridge.missing() if "sparkmax:32" in line]


def test_talonfx_followers_get_the_battery_voltage(hw):
    bridge = make_bridge(left='"talonfx:33"\ncount = 2\nfollowers = ["talonfx:34"]',
                         right='"pwm:19"\ncount = 2')
    follower = hw(hal.SimDevice("CANMotor:Talon FX (v6)[34]"))
    supply = follower.createDouble("supplyVoltage", IN, 0.0)
    bridge.apply({topics.BATTERY_VOLTAGE: 11.5})
    assert supply.get() == 11.5


def test_unwired_analog_gyro_is_reported_with_the_line_to_add(hw):
    bridge = make_bridge()
    hw(wpilib.AnalogGyro(1))
    assert ('AnalogGyro on analog 1: add hal = "analoggyro:1" to the [gyro] table'
            in bridge.unwired())
    wired = make_bridge('[gyro]\nhal = "analoggyro:1"\n')
    assert not [line for line in wired.unwired() if line.startswith("AnalogGyro on analog 1:")]


def test_unwired_adxrs450_is_reported_with_the_line_to_add(hw):
    bridge = make_bridge()
    hw(wpilib.ADXRS450_Gyro())
    assert ('Gyro:ADXRS450[0]: add hal = "adxrs450" to a [gyro] table'
            in bridge.unwired())
    wired = make_bridge('[gyro]\nhal = "adxrs450"\n')
    assert not [line for line in wired.unwired() if line.startswith("Gyro:ADXRS450[0]:")]


def test_other_simdevices_are_not_reported(hw):
    bridge = make_bridge()
    hw(hal.SimDevice("SomethingElse[30]"))
    hw(hal.SimDevice("SPARK MAX [notanid]"))
    lines = bridge.unwired()
    assert not [line for line in lines if "SomethingElse" in line or "notanid" in line]
