"""What each HAL device reads and writes, in its own names and units.

The conversions both robot-side transports share: the in-process bridge
(``simserver.bridge``, through ``wpilib.simulation``) and the halsim_ws client
(``simserver.io.halsim_ws``, through WPILib's WebSocket protocol). Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from simserver.units import unit_kind, unit_scale

# Gyros whose WPILib/vendor class reads clockwise positive (simserver's yaw is CCW positive).
CLOCKWISE_GYROS = frozenset({"analoggyro", "adxrs450", "navx"})
ADXRS450_DEVICE = "Gyro:ADXRS450[0]"  # on the onboard SPI CS0 port
NAVX_PREFIX = "navX-Sensor["
ADIS_PREFIXES = {"adis16470": "Gyro:ADIS16470[", "adis16448": "Gyro:ADIS16448["}
# REV SPARK "Control Mode" values whose "Setpoint" is an open-loop output.
SPARK_DUTY, SPARK_VOLTAGE = 0, 2
MAX_AXES, MAX_BUTTONS = 12, 32
# How far Phoenix 6's simulation moves a value written to it (measured, Phoenix 26.3): its
# thread rounds rotor and CANcoder positions to 1/4096 rotation and the Pigeon 2's yaw to a
# float32, some time after the write.
PHOENIX_POSITION_STEP = 1.0 / 4096  # rotations
PHOENIX_YAW_STEP = 1e-3  # degrees, well above float32 rounding of any yaw a match reaches
PHOENIX_YAW_WRAP = 360.0  # degrees: the Pigeon 2's own SimPeriodicBefore callback writes its
# raw yaw back wrapped to [0, 360) (-0.0002 written reads 359.9998 after it)


def talonfx_motor(can_id: int) -> str:
    """SimDevice of a Phoenix 6 Talon FX's motor output (``dutyCycle``, ``supplyVoltage``)."""
    return f"CANMotor:Talon FX (v6)[{can_id}]"


def talonfx_rotor(can_id: int) -> str:
    """SimDevice of a Talon FX's rotor sensor (``rawPositionInput`` rot, ``velocity`` rot/s)."""
    return f"CANEncoder:Talon FX (v6)[{can_id}]/Rotor Sensor"


def cancoder(can_id: int) -> str:
    """SimDevice of a Phoenix 6 CANcoder (``rawPositionInput`` rot, ``velocity`` rot/s)."""
    return f"CANEncoder:CANcoder (v6)[{can_id}]"


def pigeon2(can_id: int) -> str:
    """SimDevice of a Phoenix 6 Pigeon 2 (``rawYawInput`` deg CCW, ``angularVelZ`` deg/s)."""
    return f"CANGyro:Pigeon 2 (v6)[{can_id}]"


def spark(kind: str, can_id: int) -> str:
    """SimDevice of a REV SPARK MAX / Flex (``Control Mode``, ``Setpoint``, ``Bus Voltage``)."""
    return f"{'SPARK MAX' if kind == 'sparkmax' else 'SPARK Flex'} [{can_id}]"


# A SPARK encoder port (HalAddress.port) -> its SimDevice's name suffix.
SPARK_SENSORS = {"": "RELATIVE ENCODER", "absolute": "ABSOLUTE ENCODER",
                 "alternate": "ALTERNATE ENCODER", "external": "EXTERNAL ENCODER"}
# REVLib's FeedbackSensor values -> the port of the sensor a SPARK's closed loop reads.
SPARK_FEEDBACK = {1: "", 3: "alternate", 4: "absolute"}


def spark_feedback_port(kind: str, sensor: int) -> str | None:
    """The encoder port a SPARK of ``kind`` reads for REVLib FeedbackSensor ``sensor`` (the
    alternate port is a SPARK Flex's external encoder); None for sensors without one here
    (analog, detached)."""
    port = SPARK_FEEDBACK.get(sensor)
    return "external" if port == "alternate" and kind == "sparkflex" else port


def spark_encoder(kind: str, can_id: int, port: str = "") -> str:
    """SimDevice of one of a SPARK's encoders (``Position``, ``Velocity`` as the program reads
    them, ``Is Inverted``, the program's conversion factors; absolute: ``Zero Offset``)."""
    return f"{spark(kind, can_id)} {SPARK_SENSORS[port]}"


def spark_reading(rotations: float, rps: float, position_factor: float,
                  velocity_factor: float, inverted: bool,
                  zero_offset: float | None = None) -> tuple[float, float]:
    """(position, velocity) a SPARK encoder reports for a shaft at ``rotations`` turning at
    ``rps`` rot/s, as the controller computes them: negated when the program inverts the
    sensor, times its conversion factors (velocity per minute, REV's RPM). An absolute encoder
    (``zero_offset`` given: REV's, in raw rotations before inversion and factor) reads within
    one turn, 0 at its zero offset."""
    sign = -1.0 if inverted else 1.0
    turns = sign * rotations if zero_offset is None else (sign * (rotations - zero_offset)) % 1.0
    return turns * position_factor, sign * rps * 60.0 * velocity_factor


def spark_step_back(position: float, velocity: float, position_factor: float,
                    velocity_factor: float, dt: float) -> float:
    """The position, in a SPARK sensor's units, one step of ``dt`` s before ``position`` at
    ``velocity`` (its units per minute over the factors): REV's ``SparkSim.iterate`` advances
    its sensor by one step before it runs the loop, so starting it there makes it run the loop
    on ``position``."""
    if not velocity_factor:
        return position
    return position - velocity / velocity_factor / 60.0 * position_factor * dt


def spark_closed_loop(mode: int) -> bool:
    """Whether a SPARK "Control Mode" runs a loop inside the controller (not open loop)."""
    return mode not in (SPARK_DUTY, SPARK_VOLTAGE)


def spark_duty(mode: int, setpoint: float, bus_voltage: float,
               applied: float) -> tuple[float, bool]:
    """(duty cycle, simulated) of a SPARK: open-loop setpoints are simulated; closed-loop
    modes run inside the controller, so only its applied output (from REV's own SparkSim)
    is known."""
    if mode == SPARK_DUTY:
        return setpoint, True
    if mode == SPARK_VOLTAGE:
        return setpoint / (bus_voltage or 12.0), True
    return applied, False


def rotations_per_unit(unit: str, ticks_per_revolution: int) -> float:
    """Shaft rotations per unit of an encoder configured in ``unit`` (an angle or ticks)."""
    if unit_kind(unit) == "ticks":
        return 1.0 / ticks_per_revolution
    return unit_scale(unit) / (2.0 * math.pi)


ANALOG_FULL_SCALE = 5.0  # V: the roboRIO's analog inputs read 0..5 V


def analog_voltage(position: float, unit: str, ticks_per_revolution: int,
                   full_range: float = 2.0 * math.pi) -> float:
    """The voltage (V) an absolute sensor on an analog input gives for an encoder reading in
    ``unit``: 0..5 V over ``full_range`` (rad) of its shaft, one turn for an analog absolute
    encoder, the travel of a potentiometer."""
    turns = position * rotations_per_unit(unit, ticks_per_revolution)
    return ANALOG_FULL_SCALE * ((turns * 2.0 * math.pi / full_range) % 1.0)


class Valve:
    """A solenoid valve driven by its channel outputs. A single solenoid is on while its
    channel is; a double solenoid (``double``) turns on when the forward channel fires, off
    when the reverse one does, and holds its spool while neither does. The roboRIO cuts the
    outputs while disabled: a single solenoid falls off, a double one holds.

        valve = Valve(initial=False, double=True)
        valve.update(True, forward=True)    # -> True
        valve.update(True, forward=False)   # -> True (held)
    """

    def __init__(self, initial: bool, double: bool):
        self.initial, self.double = initial, double
        self.state = initial

    def update(self, enabled: bool, forward: bool, reverse: bool = False) -> bool:
        """The valve's state after the program's outputs ``forward`` (and ``reverse``)."""
        if not self.double:
            self.state = enabled and forward
        elif enabled and forward != reverse:
            self.state = forward
        return self.state

    def reset(self) -> None:
        """Back to the initial state (a new robot program)."""
        self.state = self.initial


def gyro_reading(kind: str, yaw: float, rate: float) -> tuple[float, float]:
    """The angle (deg) and rate (deg/s) a gyro of ``kind`` reports for simserver's yaw and
    rate (deg, deg/s, counter-clockwise positive)."""
    return (-yaw, -rate) if kind in CLOCKWISE_GYROS else (yaw, rate)


def adis_values(axis: str) -> tuple[str, str]:
    """The SimDevice values (angle deg, rate deg/s, counter-clockwise positive) of an ADIS
    IMU's yaw axis: ``axis`` is ``x``, ``y`` or ``z``, or an ``IMUAxis`` name (``kZ``);
    anything else is taken as ``z``."""
    letter = axis.removeprefix("k").lower()
    letter = letter if letter in ("x", "y", "z") else "z"
    return f"gyro_angle_{letter}", f"gyro_rate_{letter}"


def mode_flags(mode: str) -> tuple[bool, bool, bool]:
    """(enabled, autonomous, test) of a Driver Station mode name."""
    return mode != "disabled", mode == "autonomous", mode == "test"


def mode_name(enabled: bool, autonomous: bool, test: bool) -> str:
    """The mode name of a Driver Station state."""
    if not enabled:
        return "disabled"
    return "autonomous" if autonomous else "test" if test else "teleop"


def finite(x: Any) -> float | None:
    """``x`` as a float if it is a finite real number (not a bool), else None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x)


def clean_axes(values: Sequence[Any]) -> list[float]:
    """Joystick axes clamped to -1..1, non-numbers and non-finite values as 0."""
    return [max(-1.0, min(1.0, x)) if (x := finite(a)) is not None else 0.0
            for a in values[:MAX_AXES]]


def clean_buttons(values: Sequence[Any]) -> list[bool]:
    """Joystick buttons, button 1 first; anything but ``True`` is released."""
    return [b is True for b in values[:MAX_BUTTONS]]


def mean_duty(duties: Sequence[float], enabled: bool) -> float:
    """The duty cycle of a motor output driven by several controllers: their mean (exact for
    DC motors on one shaft), and 0 while the robot is disabled."""
    return sum(duties) / len(duties) if enabled and duties else 0.0


class Watch:
    """Tells whether something other than the bridge wrote a HAL value during the simulation
    part of a robot loop: :meth:`observe` at SimPeriodicBefore (after the program's own code),
    :meth:`settle` at SimPeriodicAfter (after physics.py and simulationPeriodic).

    The device itself may move a value it stores, which is no one else's write: ``tolerance``
    (in the value's unit) covers rounding (Phoenix 6's simulation thread rounds a written
    rotor or CANcoder position to 1/4096 rotation at moments of its own choosing), ``wrap``
    a value kept modulo a turn (the Pigeon 2 writes its raw yaw back within [0, 360))."""

    def __init__(self, read: Callable[[], float], tolerance: float = 0.0, wrap: float = 0.0):
        self._read = read
        self.tolerance = tolerance
        self.wrap = wrap
        self._before: float | None = None

    def observe(self) -> None:
        self._before = self._read()

    def settle(self) -> bool:
        """Whether the value changed since :meth:`observe` (a foreign write)."""
        before, self._before = self._before, None
        if before is None:
            return False
        change = abs(self._read() - before)
        if self.wrap:
            change = min(change % self.wrap, self.wrap - change % self.wrap)
        return change > self.tolerance


class TurnCounter:
    """A multi-turn position from a reading that wraps every ``period``, as a CANcoder or a
    Talon FX rotor keeps one: it starts at the first reading and then follows the shaft across
    the wrap. Each reading must be less than half a period from the last (a steer azimuth
    turns about 0.1 rotation in a 20 ms robot loop).

    simserver's absolute encoders read within one turn; CTRE's devices count turns, and their
    swerve odometry subtracts the steer's whole rotations times the coupling ratio from the
    drive's, so a wrapped position written to them moves the robot 4 cm per wrap."""

    def __init__(self, period: float):
        self.period = period
        self._position: float | None = None

    def __call__(self, reading: float) -> float:
        if self._position is None or not self.period:
            self._position = reading
        else:
            step = reading - self._position
            self._position += step - self.period * round(step / self.period)
        return self._position


class Rezero:
    """Writes a sensor value the robot program may reset or set, keeping its offset.

    Without the loop hooks (halsim_ws) any change since the last write is the program's (a
    reset). With them (the bridge), only a change made while the program's own code ran counts
    as one: :meth:`observe` runs before physics.py, and :meth:`settle` counts what physics.py
    or simulationPeriodic wrote after it as foreign writes instead (``overwritten``)."""

    def __init__(self, read: Callable[[], float], write: Callable[[float], None]):
        self._read, self._write = read, write
        self._offset = 0.0
        self._physical: float | None = None  # the last physical value written
        self._expected = 0.0  # what the program reads unless someone else writes
        self._hooked = False
        self.overwritten = 0  # loops in which a foreign write was seen

    def _adopt(self) -> None:
        seen = self._read()
        if self._physical is not None and seen != self._expected:
            self._offset = self._physical - seen
        self._expected = seen

    def observe(self) -> None:
        """SimPeriodicBefore: a change since the last write or settle is the program's own."""
        self._hooked = True
        self._adopt()

    def settle(self) -> bool:
        """SimPeriodicAfter, before writing: whether something wrote since :meth:`observe`."""
        seen = self._read()
        foreign = self._hooked and self._physical is not None and seen != self._expected
        if foreign:
            self.overwritten += 1
        self._expected = seen
        return foreign

    def __call__(self, physical: float) -> None:
        if not self._hooked:
            self._adopt()
        self._write(physical - self._offset)
        self._physical = physical
        self._expected = self._read()
