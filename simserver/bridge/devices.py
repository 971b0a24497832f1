"""HAL simulation devices of the robot program: motor outputs to read, sensors to write.

Each class wraps one ``wpilib.simulation`` object or SimDevice named by a
:class:`~simserver.config.hal.HalAddress`. Devices a vendor library creates may appear after
the bridge starts (a TalonFX built in ``robotInit``), so SimDevices are looked up lazily; until
one exists, reads give 0 and writes are skipped.

Sensors the robot program can zero (``Encoder.reset()``, ``AnalogGyro.reset()``) are written
through :class:`Rezero`: the bridge reads the value back before writing, and when the program
changed it, keeps the difference as an offset, as the real device's counter would.

Every sensor also has a ``watch`` (:class:`~simserver.hal.halmap.Watch` or its Rezero) that tells
the bridge when a project's own physics.py wrote the same device in a loop: simserver's value
is written after it and wins, and the user is told once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import wpilib
from wpilib.simulation import (
    AnalogGyroSim,
    AnalogInputSim,
    DIOSim,
    EncoderSim,
    PWMSim,
    SimDeviceSim,
    SolenoidSim,
)

from simserver.bridge.objects import ProgramObjects
from simserver.config.hal import HalAddress
from simserver.config.model import EncoderConfig, SolenoidConfig
from simserver.hal import halmap
from simserver.hal.halmap import Rezero, Watch
from simserver.units import unit_kind


class Watched(Protocol):
    """What a sensor's ``watch`` does (see :class:`~simserver.hal.halmap.Watch`)."""

    def observe(self) -> None: ...

    def settle(self) -> bool: ...


class Guarded:
    """A watch used only while its device exists."""

    def __init__(self, ready: Callable[[], bool], inner: Watched):
        self.ready, self.inner = ready, inner

    def observe(self) -> None:
        if self.ready():
            self.inner.observe()

    def settle(self) -> bool:
        return self.ready() and self.inner.settle()


class Either:
    """A watch that tells a write to any of several values of one device."""

    def __init__(self, *watches: Watched):
        self.watches = watches

    def observe(self) -> None:
        for w in self.watches:
            w.observe()

    def settle(self) -> bool:
        return any([w.settle() for w in self.watches])  # every one settles


class LazyDevice:
    """A SimDevice looked up by name until it exists; with ``prefix``, the first device whose
    name starts with ``name``."""

    def __init__(self, name: str, prefix: bool = False):
        self.name = name
        self.prefix = prefix
        self._sim: SimDeviceSim | None = None

    def get(self) -> SimDeviceSim | None:
        """The device, or None while the robot program has not created it."""
        if self._sim is None:
            names = SimDeviceSim.enumerateDevices(self.name)
            found = names[0] if self.prefix and names else (
                self.name if self.name in names else None)
            if found is not None:
                self._sim = SimDeviceSim(found)
        return self._sim

    def read(self, value: str, default: float = 0.0) -> float:
        """A value of the device, or ``default`` while it does not exist."""
        sim = self.get()
        if sim is None:
            return default
        handle = sim.getValue(value)
        return float(handle.value) if handle else default

    def write(self, value: str, x: float) -> None:
        """Set a double value of the device (skipped while it does not exist)."""
        sim = self.get()
        if sim is None:
            return
        handle = sim.getDouble(value)
        if handle:
            handle.set(x)


# --- motor outputs ---------------------------------------------------------------------------


class MotorSource(Protocol):
    """A motor controller output of the robot program."""

    def duty(self) -> float:
        """Duty cycle the program commands, -1..1."""


class PwmMotor:
    """A PWM motor controller: its speed (inversion already applied by WPILib)."""

    def __init__(self, channel: int):
        self.sim = PWMSim(channel)

    def duty(self) -> float:
        return float(self.sim.getSpeed())


class TalonFxMotor:
    """A Phoenix 6 Talon FX: ``dutyCycle`` of its SimDevice (Phoenix fills it each sim loop)."""

    def __init__(self, can_id: int):
        self.device = LazyDevice(halmap.talonfx_motor(can_id))

    def duty(self) -> float:
        return self.device.read("dutyCycle")


class SimDeviceMotor:
    """Any SimDevice double read as a duty cycle."""

    def __init__(self, device: str, value: str):
        self.device = LazyDevice(device)
        self.value = value

    def duty(self) -> float:
        return self.device.read(self.value)


# --- encoders --------------------------------------------------------------------------------


class EncoderSink(Protocol):
    """An encoder input of the robot program."""

    watch: Watched

    def write(self, position: float, velocity: float) -> None:
        """Position and velocity in the encoder's config unit (and per second)."""


class QuadratureEncoder:
    """A ``wpilib.Encoder``: integer counts and a rate in the program's distance units.

    With ``unit = "ticks"`` simserver's counts are written as they are (the program's
    distance-per-pulse then scales them, as on the robot); with a length or angle unit the
    position is divided by the program's distance-per-pulse and rounded to whole counts. A
    reversed encoder gets negated counts, as its hardware would produce."""

    def __init__(self, channel: int, unit: str):
        self.channel = channel
        self.ticks = unit_kind(unit) == "ticks"
        self.sim: EncoderSim | None = None
        self._count = Rezero(self._read_count, self._write_count)
        # physics.py may write the count, or only the rate (robotpy's FlywheelBangBangController)
        self.watch: Watched = Guarded(lambda: self._device() is not None,
                                      Either(self._count, Watch(self._read_rate)))

    def _device(self) -> EncoderSim | None:
        if self.sim is None:
            try:
                self.sim = EncoderSim.createForChannel(self.channel)
            except IndexError:  # not created by the program (yet)
                return None
        return self.sim

    def _read_count(self) -> float:
        return float(self.sim.getCount()) if self.sim is not None else 0.0

    def _write_count(self, count: float) -> None:
        if self.sim is not None:
            self.sim.setCount(round(count))

    def _read_rate(self) -> float:
        return self.sim.getRate() if self.sim is not None else 0.0

    def write(self, position: float, velocity: float) -> None:
        sim = self._device()
        if sim is None:
            return
        dpp = sim.getDistancePerPulse() or 1.0
        sign = -1.0 if sim.getReverseDirection() else 1.0
        if self.ticks:
            count, rate = position, velocity * dpp
        else:
            count, rate = round(position / dpp), velocity
        self._count(sign * count)
        sim.setRate(sign * rate)


class CanEncoder:
    """A Phoenix 6 CAN encoder that reads shaft rotations: a Talon FX rotor sensor or a
    CANcoder. The position written is the device's raw one: Phoenix applies the program's
    direction settings and offsets itself. ``turn`` (rotations) is the range an absolute
    encoder's reading wraps in, 0 for none: the device counts turns across it."""

    def __init__(self, address: HalAddress, unit: str, ticks_per_revolution: int,
                 turn: float = 0.0):
        ch = address.channel if address.channel is not None else 0
        self.device = LazyDevice(halmap.talonfx_rotor(ch) if address.kind == "talonfx"
                                 else halmap.cancoder(ch))
        self.per_unit = halmap.rotations_per_unit(unit, ticks_per_revolution)
        self.turns = halmap.TurnCounter(turn)
        self.watch: Watched = Guarded(lambda: self.device.get() is not None, Watch(
            lambda: self.device.read("rawPositionInput"), halmap.PHOENIX_POSITION_STEP))

    def write(self, position: float, velocity: float) -> None:
        self.device.write("rawPositionInput", self.turns(position * self.per_unit))
        self.device.write("velocity", velocity * self.per_unit)


class SimDeviceEncoder:
    """Any SimDevice double, written with the position in the encoder's config unit."""

    def __init__(self, device: str, value: str):
        self.device = LazyDevice(device)
        self._position = Rezero(lambda: self.device.read(value),
                                lambda x: self.device.write(value, x))
        self.watch: Watched = Guarded(lambda: self.device.get() is not None, self._position)

    def write(self, position: float, velocity: float) -> None:
        if self.device.get() is not None:
            self._position(position)


class AnalogSensor:
    """An absolute sensor on an analog input: 0..5 V over the encoder's ``full_range``."""

    def __init__(self, channel: int, enc: EncoderConfig):
        self.sim = AnalogInputSim(channel)
        self.enc = enc
        self.watch: Watched = Watch(self.sim.getVoltage)

    def write(self, position: float, velocity: float) -> None:
        e = self.enc
        self.sim.setVoltage(halmap.analog_voltage(position, e.unit, e.ticks_per_revolution,
                                                  e.full_range))


# --- gyros, switches, solenoids, battery -----------------------------------------------------


class Gyro:
    """A yaw gyro. ``write`` takes yaw and rate CCW positive (deg, deg/s); WPILib's analog and
    ADXRS450 gyros and the navX read clockwise positive, so they get the negation."""

    def __init__(self, address: HalAddress, objects: ProgramObjects | None = None):
        self.kind = address.kind
        self.channel = address.channel or 0
        self.objects = objects
        self._analog: AnalogGyroSim | None = None
        self._device: LazyDevice | None = None
        self._value = "angle_x"  # the ADXRS450's SimDevice value
        self._rate = "rate_x"
        if address.kind in halmap.ADIS_PREFIXES:
            self._device = LazyDevice(halmap.ADIS_PREFIXES[address.kind], prefix=True)
            self._value, self._rate = halmap.adis_values("z")
        elif address.kind == "pigeon2":
            self._device = LazyDevice(halmap.pigeon2(self.channel))
        elif address.kind == "adxrs450":
            self._device = LazyDevice(halmap.ADXRS450_DEVICE)
        elif address.kind == "navx":
            self._device = LazyDevice(halmap.NAVX_PREFIX, prefix=True)
        elif address.kind == "simdevice":
            self._device = LazyDevice(address.device)
            self._value = address.value
        self._yaw = Rezero(self._read, self._write)
        vendor = {"pigeon2": "rawYawInput", "navx": "Yaw"}.get(self.kind)
        self.watch: Watched = Guarded(self._ready, self._yaw if vendor is None else Watch(
            lambda: self._device.read(vendor) if self._device is not None else 0.0,
            halmap.PHOENIX_YAW_STEP if self.kind == "pigeon2" else 0.0,
            halmap.PHOENIX_YAW_WRAP if self.kind == "pigeon2" else 0.0))

    def _ready(self) -> bool:
        if self.kind in halmap.ADIS_PREFIXES and self.objects is not None:
            imu = self.objects.get(self.kind)  # the program chooses the yaw axis
            if imu is not None:
                self._value, self._rate = halmap.adis_values(imu.getYawAxis().name)
                self.objects = None
        if self.kind == "analoggyro":
            if self._analog is None:
                sim = AnalogGyroSim(self.channel)
                self._analog = sim if sim.getInitialized() else None
            return self._analog is not None
        assert self._device is not None
        return self._device.get() is not None

    def _read(self) -> float:
        if self._analog is not None:
            return float(self._analog.getAngle())
        assert self._device is not None
        return self._device.read(self._value)

    def _write(self, angle: float) -> None:
        if self._analog is not None:
            self._analog.setAngle(angle)
        elif self._device is not None:
            self._device.write(self._value, angle)

    def write(self, yaw: float, rate: float) -> None:
        if not self._ready():
            return
        angle, angle_rate = halmap.gyro_reading(self.kind, yaw, rate)
        if self.kind == "pigeon2":  # Phoenix keeps the program's setYaw offset itself
            assert self._device is not None
            self._device.write("rawYawInput", angle)
            self._device.write("angularVelZ", angle_rate)
        elif self.kind == "navx":  # so does the navX library (a software zero)
            assert self._device is not None
            self._device.write("Yaw", angle)
            self._device.write("Rate", angle_rate)
        else:
            self._yaw(angle)
            if self._analog is not None:
                self._analog.setRate(angle_rate)
            elif self._device is not None:
                self._device.write(self._rate, angle_rate)


class Switch:
    """A limit switch on a DIO input (``inverted``: reads false when pressed)."""

    def __init__(self, address: HalAddress):
        self.sim = DIOSim(address.channel or 0)
        self.inverted = address.inverted

    def write(self, pressed: bool) -> None:
        self.sim.setValue(bool(pressed) != self.inverted)


class Solenoid:
    """A solenoid (``hal``) or double solenoid (``hal`` forward, ``reverse_hal``) on a CTRE
    PCM or REV PH (module 0 or 1 respectively), as a :class:`~simserver.hal.halmap.Valve`."""

    def __init__(self, cfg: SolenoidConfig):
        self.channels = [SolenoidSim(self._module(a), a.channel or 0)
                         for a in (*cfg.hal, *cfg.reverse_hal)]
        self.valve = halmap.Valve(cfg.initial, bool(cfg.reverse_hal))

    @staticmethod
    def _module(address: HalAddress) -> wpilib.PneumaticsModuleType:
        return (wpilib.PneumaticsModuleType.CTREPCM if address.kind == "ctre"
                else wpilib.PneumaticsModuleType.REVPH)

    def on(self, enabled: bool) -> bool:
        """The valve's state after this loop's outputs (``enabled``: the robot is)."""
        forward, *reverse = [bool(sim.getOutput()) for sim in self.channels]
        return self.valve.update(enabled, forward, any(reverse))
