"""The bridge's mapping between the robot program's HAL and simserver's topic values.

Both transports (NetworkTables in real time, the lock-step socket) carry the same thing: a
mapping from topic name (``simserver.contract.topics``) to value. :meth:`Bridge.outputs` reads the
program's outputs into one; :meth:`Bridge.apply` writes one into the program's sensors and
Driver Station. Runs on the robot thread (real time) or while the robot thread is parked
(lock-step), never both at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from wpilib.simulation import (
    AnalogInputSim,
    DIOSim,
    DriverStationSim,
    RoboRioSim,
    SimDeviceSim,
)

from simserver.bridge import inventory
from simserver.bridge.devices import (
    AnalogSensor,
    CanEncoder,
    EncoderSink,
    Gyro,
    LazyDevice,
    MotorSource,
    PwmMotor,
    QuadratureEncoder,
    SimDeviceEncoder,
    SimDeviceMotor,
    Solenoid,
    Switch,
    TalonFxMotor,
    Watched,
)
from simserver.bridge.objects import ProgramObjects
from simserver.bridge.spark import SparkEncoder, SparkMotor
from simserver.config.hal import HalAddress
from simserver.config.model import Config, EncoderConfig
from simserver.contract import topics
from simserver.hal import halmap
from simserver.hal.halmap import Watch


def robot_mode() -> str:
    """The Driver Station state the robot program sees: one of ``topics.MODES``."""
    return halmap.mode_name(DriverStationSim.getEnabled(), DriverStationSim.getAutonomous(),
                            DriverStationSim.getTest())




def motor_source(address: HalAddress, objects: ProgramObjects, cfg: Config,
                 motor: str) -> MotorSource:
    """The reader for a motor address of motor output ``motor``."""
    ch = address.channel if address.channel is not None else 0
    if address.kind == "pwm":
        return PwmMotor(ch)
    if address.kind == "talonfx":
        return TalonFxMotor(ch)
    if address.kind in ("sparkmax", "sparkflex"):
        ports = frozenset(e.hal[0].port for e in cfg.encoders.values()
                          if e.hal and e.hal[0].controller == str(address))
        return SparkMotor(address.kind, ch, objects, ports, cfg.motors[motor].type)
    return SimDeviceMotor(address.device, address.value)


def encoder_sink(address: HalAddress, enc: EncoderConfig,
                 objects: ProgramObjects) -> EncoderSink:
    """The writer for an encoder address of the encoder ``enc``."""
    if address.kind == "analog":
        return AnalogSensor(address.channel or 0, enc)
    if address.kind == "encoder":
        return QuadratureEncoder(address.channel or 0, enc.unit)
    if address.kind == "simdevice":
        return SimDeviceEncoder(address.device, address.value)
    if address.kind in ("sparkmax", "sparkflex"):
        return SparkEncoder(address, enc.unit, enc.ticks_per_revolution, objects)
    return CanEncoder(address, enc.unit, enc.ticks_per_revolution, enc.wrap / math.tau)


# Each Driver Station joystick's (axes, buttons) topics, looked up every period.
_STICKS = tuple((topics.joystick_axes(i), topics.joystick_buttons(i))
                for i in range(topics.JOYSTICKS))
FOREIGN_LOOPS = 2  # loops with another writer of a device before the bridge warns


class Bridge:
    """The HAL devices named by a config's ``hal`` keys."""

    def __init__(self, cfg: Config, objects: ProgramObjects | None = None):
        self.cfg = cfg
        self.objects = objects if objects is not None else ProgramObjects()
        self.motors: dict[str, list[MotorSource]] = {
            name: [motor_source(a, self.objects, cfg, name) for a in m.hal]
            for name, m in cfg.motors.items() if m.hal}
        self.solenoids = {name: Solenoid(s) for name, s in cfg.solenoids.items() if s.hal}
        self.encoders = {name: encoder_sink(e.hal[0], e, self.objects)
                         for name, e in cfg.encoders.items() if e.hal}
        self.gyro = Gyro(cfg.gyro.hal[0], self.objects) if cfg.gyro.hal else None
        self.switches = {name: Switch(s.hal[0]) for name, s in cfg.switches.items() if s.hal}
        self._talons = [LazyDevice(halmap.talonfx_motor(a.channel or 0))
                        for m in cfg.motors.values() for a in m.controllers
                        if a.kind == "talonfx"]
        self._mode = ""
        self._warned_spark: set[tuple[str, str]] = set()
        self.warnings: list[str] = []
        self._watches: dict[str, Watched] = {
            f"encoders.{name} ({cfg.encoders[name].hal[0]})": sink.watch
            for name, sink in self.encoders.items()}
        if self.gyro is not None:
            self._watches[f"gyro ({cfg.gyro.hal[0]})"] = self.gyro.watch
        self._watches["battery voltage (RoboRioSim.setVInVoltage)"] = Watch(
            RoboRioSim.getVInVoltage)
        self.overwritten: set[str] = set()  # devices another writer (physics.py) also wrote
        self._foreign: dict[str, int] = {}  # device -> loops in which another writer wrote it

    # --- a robot loop's simulation part: who else writes our devices -------------------------

    def observe(self) -> None:
        """SimPeriodicBefore (the program's code has run, physics.py has not): remember every
        wired sensor's value, taking changes the program made as its own (resets)."""
        for watch in self._watches.values():
            watch.observe()

    def settle(self) -> None:
        """SimPeriodicAfter, before simserver's values are written: note the devices that
        physics.py or simulationPeriodic wrote, once (a warning) when seen in a second loop:
        such code writes every loop, while a vendor device may move a value once as it starts
        (Phoenix 6 did, once, under load, in the first loops before its initialization)."""
        seen = [label for label, watch in self._watches.items() if watch.settle()]
        for label in seen:
            self._foreign[label] = self._foreign.get(label, 0) + 1
        fresh = [label for label in seen
                 if self._foreign[label] == FOREIGN_LOOPS and label not in self.overwritten]
        if fresh:
            self.overwritten.update(fresh)
            self.warnings.append(
                "physics.py (or simulationPeriodic) also writes " + ", ".join(fresh) +
                ": simserver's values are written after it every loop and are what robot "
                "code reads; remove those writes from physics.py, or run without --simserver "
                "to use physics.py alone")

    # --- robot -> simserver ----------------------------------------------------------------

    def outputs(self) -> dict[str, Any]:
        """Topic -> value of every wired output: motor duty cycles and solenoid states (0 and
        off while disabled, as the roboRIO cuts them), and the robot's mode."""
        enabled = DriverStationSim.getEnabled()
        out: dict[str, Any] = {}
        for name, sources in self.motors.items():
            out[topics.motor(name)] = halmap.mean_duty([s.duty() for s in sources], enabled)
            for s in sources:
                if isinstance(s, SparkMotor):
                    self._check_spark(name, s)
        for name, sol in self.solenoids.items():
            out[topics.solenoid(name)] = sol.on(enabled)
        out[topics.ROBOT_MODE] = robot_mode()
        return out

    def _check_spark(self, name: str, spark: SparkMotor) -> None:
        """Warn once per motor about what the bridge cannot simulate of a SPARK."""
        if spark.unsupported_mode is not None and (name, "mode") not in self._warned_spark:
            self._warned_spark.add((name, "mode"))
            self.warnings.append(
                f"motors.{name}: the SPARK runs closed-loop control mode "
                f"{spark.unsupported_mode}, but its object is out of the bridge's reach, so "
                "REV's SparkSim cannot run it: only duty-cycle and voltage setpoints are "
                "simulated (keep the SparkMax/SparkFlex as an attribute of the robot or of "
                "one of its attributes)")
        if spark.unfed_port is not None and (name, "sensor") not in self._warned_spark:
            self._warned_spark.add((name, "sensor"))
            port = spark.unfed_port
            self.warnings.append(
                f"motors.{name}: the SPARK's closed loop reads its "
                f"{port or 'relative'} encoder, which simserver does not write, so the loop "
                "never sees the motor move" + (
                    "" if " " in port else f": wire it with an [encoders.<name>] table, "
                    f'hal = "{spark.address}{"/" + port if port else ""}"'))
        if self.objects.given_up(spark.address) and (name, "object") not in self._warned_spark:
            self._warned_spark.add((name, "object"))
            self.warnings.append(
                f"motors.{name}: the program's {spark.address} object is not reachable from "
                "its robot object, so whether the program inverts it is not known: taken as "
                "not inverted")

    # --- simserver -> robot ----------------------------------------------------------------

    def apply(self, values: Mapping[str, Any]) -> None:
        """Write sensor values and Driver Station commands (topic -> value); values that are
        missing, of the wrong type or not finite are skipped."""
        for name, sink in self.encoders.items():
            pos = halmap.finite(values.get(topics.encoder_position(name)))
            if pos is not None:
                vel = halmap.finite(values.get(topics.encoder_velocity(name)))
                sink.write(pos, vel or 0.0)
        if self.gyro is not None:
            yaw = halmap.finite(values.get(topics.GYRO_YAW))
            if yaw is not None:
                self.gyro.write(yaw, halmap.finite(values.get(topics.GYRO_RATE)) or 0.0)
        volts = halmap.finite(values.get(topics.BATTERY_VOLTAGE))
        if volts is not None and volts >= 0.0:
            RoboRioSim.setVInVoltage(volts)
            for talon in self._talons:
                talon.write("supplyVoltage", volts)
        for name, sw in self.switches.items():
            pressed = values.get(topics.switch(name))
            if isinstance(pressed, bool):
                sw.write(pressed)
        self._apply_ds(values)

    def _apply_ds(self, values: Mapping[str, Any]) -> None:
        mode = values.get(topics.DS_MODE)
        sticks = False
        for i, (axes_topic, buttons_topic) in enumerate(_STICKS):
            axes = values.get(axes_topic)
            if isinstance(axes, (list, tuple)):
                clean = halmap.clean_axes(axes)
                DriverStationSim.setJoystickAxisCount(i, len(clean))
                for k, a in enumerate(clean):
                    DriverStationSim.setJoystickAxis(i, k, a)
                sticks = True
            buttons = values.get(buttons_topic)
            if isinstance(buttons, (list, tuple)):
                pressed = halmap.clean_buttons(buttons)
                DriverStationSim.setJoystickButtonCount(i, len(pressed))
                for k, b in enumerate(pressed):
                    DriverStationSim.setJoystickButton(i, k + 1, b)
                sticks = True
        changed = isinstance(mode, str) and mode in topics.MODES and mode != self._mode
        if changed:
            assert isinstance(mode, str)
            self._mode = mode
            enabled, autonomous, test = halmap.mode_flags(mode)
            DriverStationSim.setDsAttached(True)
            DriverStationSim.setAutonomous(autonomous)
            DriverStationSim.setTest(test)
            DriverStationSim.setEnabled(enabled)
        if changed or sticks:
            DriverStationSim.notifyNewData()

    # --- start-up report -------------------------------------------------------------------

    def missing(self) -> list[str]:
        """One line per ``hal`` address naming a device the program did not create (a motor
        there would be averaged in as 0, a sensor written nowhere). Call after robotInit."""
        created: set[str] = set()
        for dev in inventory.devices():
            created |= {dev.address, *dev.aliases}
        sim_devices = set(SimDeviceSim.enumerateDevices(""))
        out = []
        for path, address in self._addresses():
            ch = address.channel or 0
            if address.kind == "simdevice":
                found = address.device in sim_devices
            elif address.kind == "dio":
                found = DIOSim(ch).getInitialized()
            elif address.kind == "analog":
                found = AnalogInputSim(ch).getInitialized()
            elif address.kind in ("ctre", "rev"):
                found = address.kind in created  # the module: the HAL keeps no channel list
            else:  # a SPARK's encoder port exists with its SPARK
                found = address.controller in created
            if not found:
                out.append(f'{path}: hal = "{address}", but the robot program created no such '
                           "device (check the channel or CAN id against robot.py, or run "
                           "`simserver init`)")
        return out

    def _addresses(self) -> list[tuple[str, Any]]:
        """(config key, address) of every ``hal`` address of the config."""
        cfg = self.cfg
        out: list[tuple[str, Any]] = []
        for table, entries in (("motors", cfg.motors), ("encoders", cfg.encoders),
                               ("solenoids", cfg.solenoids), ("switches", cfg.switches)):
            for name, entry in entries.items():
                for key in ("hal", "followers", "reverse_hal"):
                    out += [(f"{table}.{name}.{key}", a) for a in getattr(entry, key, ())]
        out += [("gyro.hal", a) for a in cfg.gyro.hal]
        return out

    def wired(self) -> set[str]:
        """The addresses of every motor controller, encoder and gyro the config wires."""
        cfg = self.cfg
        out = {str(a) for m in cfg.motors.values() for a in m.controllers}
        out |= {str(a) for e in cfg.encoders.values() for a in e.hal}
        return out | {str(a) for a in cfg.gyro.hal}

    def unwired(self) -> list[str]:
        """One line per device the program created that no ``hal`` key names, with the line
        to add to simserver.toml (motors, encoders and gyros: :mod:`simserver.bridge.inventory`
        finds them)."""
        wired = self.wired()
        return [dev.line() for dev in inventory.devices()
                if dev.role in ("motor", "encoder", "gyro")
                and not wired & {dev.address, *dev.aliases}]
