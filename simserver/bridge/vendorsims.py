"""Vendor simulations in the robot program that would fight simserver over its devices.

CTRE's swerve API (``phoenix6.swerve.SwerveDrivetrain``, what Tuner X generates) simulates
itself: the generated drivetrain class starts a 4 ms Notifier that calls
``update_sim_state``, which steps CTRE's own motor models and writes every module's Talon FX
rotors and CANcoder and the Pigeon 2's yaw through their sim state. A wired device is
simserver's alone; with two writers, the program's odometry (CTRE's own thread, reading those
devices at 250 Hz) follows neither: measured on CTRE's SwerveWithPathPlanner example in
lock-step, its pose ended 0.56 m and 52° from the true one after its path.

:func:`take_over` makes ``update_sim_state`` do nothing for every drivetrain that has a device
wired in simserver.toml, so simserver's values are the only ones its odometry reads. It
patches the class the program imported (nothing is imported here: a program without
phoenix6.swerve is untouched); drivetrains with no wired device keep CTRE's simulation.

REV's ``SparkSim`` (a physics.py or ``simulationPeriodic`` that steps its own plant and calls
``iterate``) runs the SPARK's controller: iterated by the program as well as by the bridge,
its MAXMotion profiles and integrators would advance twice per loop. :func:`take_over_rev`
makes the program's ``iterate`` do nothing for a wired SPARK; the bridge's own SparkSims
(:func:`own`) run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from simserver.bridge.devices import LazyDevice
from simserver.bridge.objects import address_of
from simserver.hal import halmap

CTRE_SWERVE_MODULE = "phoenix6.swerve.swerve_drivetrain"
_PATCHED = "_simserver_patched"  # attribute marking a method replaced here
REV_PROBE = 1234.5  # V: a bus voltage no SPARK has, exact in float32
_OWN: set[int] = set()  # ids of the bridge's own SparkSims


def ctre_swerve_addresses(drivetrain: Any) -> list[str]:
    """The ``hal`` addresses of a CTRE SwerveDrivetrain's devices: each module's drive and
    steer Talon FX and its CANcoder, and the Pigeon 2 (kinds simserver has no address for,
    such as a CANdi, are left out)."""
    devices = [drivetrain.pigeon2]
    for module in drivetrain.modules:
        devices += [module.drive_motor, module.steer_motor, module.encoder]
    return [a for a in map(address_of, devices) if a is not None]


def _patch(module: str, class_name: str, method: str,
           make: Callable[[Callable[..., None]], Callable[..., None]]) -> bool:
    """Replace ``method`` of class ``class_name`` of the already imported ``module`` by
    ``make(original)``, once; False while the program has not imported it (nothing is
    imported here)."""
    cls = getattr(sys.modules.get(module), class_name, None)
    original = getattr(cls, method, None)
    if cls is None or original is None:
        return False
    if not getattr(original, _PATCHED, False):
        replacement = make(original)
        setattr(replacement, _PATCHED, True)
        replacement.__doc__ = original.__doc__
        setattr(cls, method, replacement)
    return True


def take_over(wired: Iterable[str], say: Callable[[str], None]) -> bool:
    """Patch CTRE's ``SwerveDrivetrain.update_sim_state`` (if the program imported it) so it
    does nothing for a drivetrain with a device among ``wired`` addresses; ``say`` is told
    once per such drivetrain. True once patched (calling again is harmless)."""
    wired_set = frozenset(wired)
    decided: dict[int, bool] = {}

    def make(original: Callable[..., None]) -> Callable[..., None]:
        def update_sim_state(self: Any, dt: float, supply_voltage: float) -> None:
            owned = decided.get(id(self))
            if owned is None:
                mine = [a for a in ctre_swerve_addresses(self) if a in wired_set]
                owned = decided[id(self)] = bool(mine)
                if owned:
                    say(f"CTRE SwerveDrivetrain ({type(self).__name__}): update_sim_state is "
                        f"turned off, since simserver.toml wires its devices "
                        f"({', '.join(mine)}); simserver drives its Talon FX rotors, CANcoders "
                        "and Pigeon 2")
            if not owned:
                original(self, dt, supply_voltage)
        return update_sim_state

    return _patch(CTRE_SWERVE_MODULE, "SwerveDrivetrain", "update_sim_state", make)


def own(sim: Any) -> None:
    """Register one of the bridge's own SparkSims: its ``iterate`` always runs."""
    _OWN.add(id(sim))


def spark_of(sim: Any, candidates: Iterable[str]) -> str | None:
    """The address among ``candidates`` (``sparkmax:N``, ``sparkflex:N``) of the SPARK a
    SparkSim drives, found by giving the sim a probe bus voltage and looking for it on the
    SPARKs' SimDevices (the sim does not say which SPARK it has), then restoring it."""
    devices = {}
    for address in candidates:
        kind, _, can_id = address.partition(":")
        if kind in ("sparkmax", "sparkflex") and can_id.isdigit():
            devices[address] = LazyDevice(halmap.spark(kind, int(can_id)))
    saved = sim.getBusVoltage()
    sim.setBusVoltage(REV_PROBE)
    found = next((a for a, d in devices.items() if d.read("Bus Voltage") == REV_PROBE), None)
    sim.setBusVoltage(saved)
    return found


def take_over_rev(wired: Iterable[str], say: Callable[[str], None]) -> bool:
    """Patch REV's ``SparkSim.iterate`` (if the program imported rev) so it does nothing when
    the program calls it for a SPARK among ``wired`` addresses; ``say`` is told once per
    SPARK. True once patched (calling again is harmless)."""
    wired_set = frozenset(wired)
    sparks: dict[int, str | None] = {}  # id of a program's SparkSim -> its wired SPARK
    told: set[str] = set()

    def make(original: Callable[..., None]) -> Callable[..., None]:
        def iterate(self: Any, velocity: float, vbus: float, dt: float) -> None:
            if id(self) not in _OWN and id(self) not in sparks:
                sparks[id(self)] = spark_of(self, wired_set)
            address = None if id(self) in _OWN else sparks[id(self)]
            if address is None:
                original(self, velocity, vbus, dt)
            elif address not in told:
                told.add(address)
                say(f"REV SparkSim.iterate from the robot program is turned off for "
                    f"{address}, since simserver.toml wires it: simserver runs that SPARK's "
                    "controller with its own state")
        return iterate

    return _patch("rev", "SparkSim", "iterate", make)
