"""REV SPARK MAX and SPARK Flex: REV's own controller simulation, and the SPARK's encoders.

A SPARK runs its control loops itself: duty cycle, voltage, velocity, position, MAXMotion and
current, with the program's ramp rates, voltage compensation, current and soft limits. REVLib
simulates that controller in ``SparkSim``: ``iterate(velocity, vbus, dt)`` advances the loop's
feedback sensor by ``velocity·dt``, runs REV's loop on it and sets the applied output. The
bridge gives every wired SPARK one SparkSim on the program's own object and iterates it once
per robot loop with simserver's state, as a team's physics.py does after stepping its plant:
the feedback sensor starts one step back from the value simserver wrote, so REV's advance
lands on it (:func:`~simserver.hal.halmap.spark_step_back`).

A SPARK whose object the program keeps out of reach (not an attribute path from its robot
object) is read without REV's simulation: duty-cycle and voltage setpoints only.

The encoders' SimDevices hold what the program reads: after its inversion and conversion
factors, and for the absolute encoder after its zero offset, so those are applied here
(:func:`~simserver.hal.halmap.spark_reading`).
"""

from __future__ import annotations

from typing import Any

import wpilib
from wpilib.simulation import RoboRioSim

from simserver.bridge import vendorsims
from simserver.bridge.devices import Guarded, LazyDevice, Watched
from simserver.bridge.objects import ProgramObjects
from simserver.config.hal import HalAddress
from simserver.hal import halmap
from simserver.models.motor import motor_by_name

DEFAULT_MOTORS = {"sparkmax": "NEO", "sparkflex": "NEO Vortex"}
FIRST_STEP = 0.02  # s: the loop before the first measured one (TimedRobot's period)
LONGEST_STEP = 0.1  # s: a longer gap (a paused program) is iterated as this


def spark_direction(objects: ProgramObjects, address: str) -> float:
    """+1, or -1 for a SPARK the program configures ``inverted(True)``: REVLib applies it
    inside the controller, so the SimDevice holds the program's values, not the motor's. Its
    object not found: +1."""
    spark = objects.get(address)
    try:
        return -1.0 if spark is not None and spark.configAccessor.getInverted() else 1.0
    except Exception:  # a closed device
        return 1.0


def feedback_port(kind: str, spark: Any) -> str | None:
    """The encoder port (``""`` relative, ``"absolute"``, ``"alternate"``, ``"external"``)
    the SPARK's closed loop reads, or None for a sensor the bridge does not write (analog,
    detached)."""
    try:
        sensor = int(spark.configAccessor.closedLoop.getFeedbackSensor())
    except Exception:  # a closed device
        return None
    return halmap.spark_feedback_port(kind, sensor)


class SparkMotor:
    """A SPARK's motor output: REV's applied output from its SparkSim, negated when the
    program inverts the SPARK, as the controller does (the motor's own direction, like a PWM
    output or a Talon FX's).

    ``wired_ports`` are the encoder ports of this SPARK that simserver writes;
    ``motor_type`` is the config's motor (REV's model computes the current from it)."""

    def __init__(self, kind: str, can_id: int, objects: ProgramObjects,
                 wired_ports: frozenset[str] = frozenset(), motor_type: str | None = None):
        self.kind, self.can_id = kind, can_id
        self.address = f"{kind}:{can_id}"
        self.device = LazyDevice(halmap.spark(kind, can_id))
        self.objects = objects
        self.wired_ports = wired_ports
        self.motor_type = motor_type or DEFAULT_MOTORS[kind]
        self.unsupported_mode: int | None = None  # a closed loop run without REV's sim
        self.unfed_port: str | None = None  # a closed loop reads a sensor nobody writes
        self._sim: Any = None
        self._motor: Any = None
        self._sensors: dict[str, LazyDevice] = {}
        self._last: float | None = None

    def duty(self) -> float:
        dev = self.device
        if dev.get() is None:
            return 0.0
        mode = round(dev.read("Control Mode"))
        sim = self._vendor_sim()
        if sim is not None:
            applied = self._iterate(sim, mode)
        else:
            applied, simulated = halmap.spark_duty(mode, dev.read("Setpoint"),
                                                   dev.read("Bus Voltage", 12.0),
                                                   dev.read("Applied Output"))
            if not simulated:
                self.unsupported_mode = mode
        # REV's sim can report more than full output (1.745 seen on a team's climber in
        # position mode); a controller cannot apply more than its bus voltage
        return spark_direction(self.objects, self.address) * max(-1.0, min(1.0, applied))

    def _vendor_sim(self) -> Any:
        """REV's SparkSim on the program's object (made once it is found), or None."""
        if self._sim is None:
            spark = self.objects.get(self.address)
            if spark is None:
                return None
            import rev

            # SparkSim keeps a pointer to the DCMotor: it must live as long as the sim
            self._motor = motor_by_name(self.motor_type).dcmotor()
            sim_class = rev.SparkMaxSim if self.kind == "sparkmax" else rev.SparkFlexSim
            self._sim = sim_class(spark, self._motor)
            vendorsims.own(self._sim)
        return self._sim

    def _iterate(self, sim: Any, mode: int) -> float:
        """One robot loop of REV's controller on simserver's state; its applied output."""
        now = wpilib.Timer.getFPGATimestamp()
        dt = FIRST_STEP if self._last is None else min(now - self._last, LONGEST_STEP)
        self._last = now
        if dt <= 0.0:  # a second read in the same loop
            return float(sim.getAppliedOutput())
        port = feedback_port(self.kind, self.objects.get(self.address))
        sensor = self._sensor(port) if port is not None else None
        velocity = sensor.read("Velocity") if sensor is not None else 0.0
        if sensor is not None and port in self.wired_ports:
            sim.setPosition(halmap.spark_step_back(
                sensor.read("Position"), velocity,
                sensor.read("Position Conversion Factor", 1.0),
                sensor.read("Velocity Conversion Factor", 1.0), dt))
        elif halmap.spark_closed_loop(mode):
            self.unfed_port = "analog or detached" if port is None else port
        sim.iterate(velocity, RoboRioSim.getVInVoltage(), dt)
        return float(sim.getAppliedOutput())

    def _sensor(self, port: str) -> LazyDevice:
        if port not in self._sensors:
            self._sensors[port] = LazyDevice(halmap.spark_encoder(self.kind, self.can_id, port))
        return self._sensors[port]


class SparkEncoder:
    """One of a SPARK's encoders (relative, absolute, alternate or external), written in
    shaft rotations as the program reads them: its inversion (the relative encoder's is the
    motor's), conversion factors and, absolute, its zero offset."""

    def __init__(self, address: HalAddress, unit: str, ticks_per_revolution: int,
                 objects: ProgramObjects):
        self.controller = address.controller
        self.port = address.port
        self.objects = objects
        self.device = LazyDevice(halmap.spark_encoder(address.kind, address.channel or 0,
                                                      address.port))
        self.per_unit = halmap.rotations_per_unit(unit, ticks_per_revolution)
        self.watch: Watched = Guarded(lambda: self.device.get() is not None, halmap.Watch(
            lambda: self.device.read("Position")))

    def write(self, position: float, velocity: float) -> None:
        dev = self.device
        if dev.get() is None:
            return
        if self.port:
            inverted = bool(dev.read("Is Inverted"))
        else:
            inverted = spark_direction(self.objects, self.controller) < 0.0
        zero = dev.read("Zero Offset") if self.port == "absolute" else None
        pos, vel = halmap.spark_reading(position * self.per_unit, velocity * self.per_unit,
                                        dev.read("Position Conversion Factor", 1.0),
                                        dev.read("Velocity Conversion Factor", 1.0),
                                        inverted, zero)
        dev.write("Position", pos)
        dev.write("Velocity", vel)
