"""The world side of the holonomic drivetrains (swerve, mecanum): motor outputs through their
controllers into a pure model (``models/swerve.py``, ``models/mecanum.py``), the battery solved
with them, and the wheels and modules exposed as joints encoders can read.

Each substep:

1. The bus voltage is solved with every drivetrain motor as a load linear in it (the same
   treatment as mechanisms' ``load``): per motor ``I = (d·V_bus − ω/Kv)/R``.
2. Each motor's controller (ramp, noise, current limits, neutral mode, brownout) turns its duty
   into a terminal voltage at that bus voltage.
3. The model advances with those voltages (``physical``) or duties (``kinematic``).
4. Stator currents are reported per motor output; their supply currents load the battery.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import mul
from typing import Any

import numpy as np

from simserver.config.losses import DriveLossesConfig, LinearCharacterization, losses_from_config
from simserver.config.model import Config
from simserver.models.api import DriveView, Joint
from simserver.models.battery import Source
from simserver.models.losses import (
    IDEAL,
    CharacterizationError,
    Feedforward,
    JointMotors,
    Losses,
    from_feedforward,
)
from simserver.models.motor import MotorSpec, motor_by_name


@dataclass(frozen=True)
class MotorGroup:
    """One motor output of the drivetrain: its name in [motors], motor constants, count, the
    reduction to what it turns, and that joint's radius (m; 0 for an azimuth)."""

    name: str
    spec: MotorSpec
    count: int
    gearing: float
    radius: float


class Holonomic:
    """A swerve or mecanum drivetrain seen by the world (:class:`~simserver.models.api.Drivetrain`).

    model: a ``SwerveDrive``/``MecanumDrive`` (physical: stepped with voltages) or
    ``KinematicSwerve``/``KinematicMecanum`` (stepped with duty cycles). drive: the motor output
    of each wheel (model order). steer: the steer motor of each module (swerve; empty
    otherwise). coupling: drive motor turns per module azimuth turn (swerve), seen by the
    drive motors' rotor sensors only (the ``rotor`` of their joints). outputs: the published
    outputs of the model (its type's declared ones).
    """

    def __init__(self, model: Any, drive: Sequence[MotorGroup],
                 steer: Sequence[MotorGroup], physical: bool, mass: float,
                 moment_of_inertia: float, outputs: Callable[[Holonomic], dict[str, Any]],
                 coupling: float = 0.0):
        self.model = model
        self._outputs = outputs
        self.drive = tuple(drive)
        self.steer = tuple(steer)
        self.physical = physical
        self.coupling = coupling
        self.mass = mass
        self.moment_of_inertia = moment_of_inertia
        self.groups = self.drive + self.steer
        self._joint = {g.name: (i, g) for i, g in enumerate(self.groups)}
        self.currents = [0.0] * len(self.groups)  # stator current per group, last substep, A
        self.volts = [0.0] * len(self.groups)  # terminal voltage per group in the last substep
        self._count = np.array([g.count for g in self.groups], dtype=float)
        self._r = np.array([g.spec.R for g in self.groups])
        self._kv = np.array([g.spec.kv for g in self.groups])
        self._count_per_r = (self._count / self._r).tolist()
        self._count_per_kv_r = (self._count / (self._kv * self._r)).tolist()
        self._ctrls: list[Any] | None = None
        self._plain = False
        self._names = [g.name for g in self.groups]
        self._neutral_coast = [False] * len(self.groups)
        self._travelled = 0.0

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at rest; wheels and modules at zero."""
        self.model.reset(x, y, heading)
        self.currents = [0.0] * len(self.groups)
        self.volts = [0.0] * len(self.groups)
        self._travelled = 0.0

    # --- chassis ------------------------------------------------------------------------------

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad)."""
        m = self.model
        return m.x, m.y, m.heading

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        m = self.model
        return m.vx, m.vy, m.omega

    def place(self, x: float, y: float, vx: float, vy: float, omega: float) -> None:
        """Take an impact's position and robot-frame velocity; the wheels keep turning."""
        self.model.x, self.model.y = x, y
        self.model.set_body_velocity(vx, vy, omega)

    # --- joints and states --------------------------------------------------------------------

    def joint(self, motor: str) -> Joint | None:
        """What ``motor`` turns: a wheel's travel (m, m/s, its radius; a drive motor's rotor
        also turns with its module's azimuth by ``coupling``) or a module's azimuth (rad,
        rad/s, radius 0); None for a motor not ours."""
        found = self._joint.get(motor)
        if found is None:
            return None
        i, g = found
        m = self.model
        n = len(self.drive)
        if i >= n:
            return Joint(float(m.steer_angle[i - n]), float(m.steer_rate[i - n]), 0.0,
                         g.gearing)
        r = g.radius
        if self.coupling == 0.0 or not self.steer:
            rotor = rate = 0.0
        else:
            rotor = self.coupling * float(m.steer_angle[i])
            rate = self.coupling * float(m.steer_rate[i])
        return Joint(float(m.wheel_angle[i]) * r, float(m.wheel_speed[i]) * r, r, g.gearing,
                     rotor, rate)

    def outputs(self) -> dict[str, Any]:
        """The declared outputs of the model."""
        return self._outputs(self)

    def wheel_speeds(self) -> tuple[float, ...]:
        """Rim speed of each wheel, m/s (drive order)."""
        return tuple(float(w) * g.radius for w, g in zip(self.model.wheel_speed, self.drive,
                                                          strict=True))

    # --- stepping -----------------------------------------------------------------------------

    def begin_tick(self, robot: DriveView) -> None:
        """Take this tick's duty cycles (held for all its substeps)."""
        if self._ctrls is None:
            self._ctrls = [robot.controller(g.name) for g in self.groups]
            self._neutral_coast = [c.neutral == "coast" for c in self._ctrls]
            self._plain = all(c.passthrough for c in self._ctrls)  # config: fixed
        duty = []
        for name in self._names:
            d = robot.motor(name)
            # Clamped to [-1, 1] by comparisons (min/max calls cost more); NaN gives 0.
            duty.append(d if -1.0 <= d <= 1.0 else 1.0 if d > 1.0 else -1.0 if d < -1.0 else 0.0)
        self._duty = duty
        # Bus solve terms: supply = Σ n·d·(d·V − ω/Kv)/R = g·V + Σ i0_speed·ω.
        self._g = sum(c * d * d for c, d in zip(self._count_per_r, duty, strict=True))
        self._i0_speed = [-c * d for c, d in zip(self._count_per_kv_r, duty, strict=True)]
        coast = [d == 0.0 and nc for d, nc in zip(duty, self._neutral_coast, strict=True)]
        self._plain_coast = coast if any(coast) else None

    def substep(self, h: float, source: Source, enabled: bool) -> tuple[float, float]:
        """Advance ``h`` s. Returns (bus voltage V, supply current A drawn by the drivetrain)."""
        speeds = self.model.motor_speeds()  # rad/s per group, in group order
        duty = self._duty
        if enabled:
            g_sum = self._g
            i0 = sum(map(mul, self._i0_speed, speeds))
        else:
            g_sum = i0 = 0.0
        bus = max(0.0, (source.open_voltage - source.resistance * i0)
                  / (1.0 + source.resistance * g_sum))
        coast: list[bool] | None
        if self._plain and enabled:
            volts = [d * bus for d in duty]
            coast = self._plain_coast
        else:
            volts, flags = [], []
            assert self._ctrls is not None
            for ctrl, d, w in zip(self._ctrls, duty, speeds, strict=True):
                out = ctrl.apply(d, bus, w, h, enabled)
                volts.append(out.voltage)
                flags.append(out.coasting)
            coast = flags if any(flags) else None
        self.volts = volts
        n = len(self.drive)
        m = self.model
        if self.physical:
            if self.steer:
                m.step_groups(h, volts, coast)
            else:
                m.step(h, volts, coast)
            currents = m.currents
        else:
            off = np.zeros(len(duty), dtype=bool) if coast is None else np.array(coast)
            eff = np.where(off, 0.0, np.array(volts) / bus if bus > 0.0 else 0.0)
            if self.steer:
                m.step(h, eff[:n], eff[n:])
            else:
                m.step(h, eff)
            after = np.array(self.model.motor_speeds())
            currents = np.where(off, 0.0, self._count / self._r
                                * (np.array(volts) - after / self._kv)).tolist()
        self.currents = currents
        vx, vy = m.vx, m.vy
        self._travelled = math.hypot(vx, vy) * h  # the pose moved with these velocities
        supply = sum(map(mul, currents, volts)) / bus if bus > 0.0 else 0.0
        return bus, supply

    @property
    def travelled(self) -> float:
        """Distance the centre covered in the last substep, m (before any impact)."""
        return self._travelled

    def end_tick(self) -> None:
        """Nothing is taken once per tick."""

    def motor_states(self) -> dict[str, tuple[float, float]]:
        """Stator current A and terminal voltage V of each motor output, last substep."""
        return dict(zip(self._names, zip(self.currents, self.volts, strict=True), strict=True))


def free_wheel_speed(spec: MotorSpec, gearing: float, radius: float) -> float:
    """A motor's free speed at a wheel rim through ``gearing``, m/s."""
    return spec.free_speed / gearing * radius


def free_azimuth_rate(spec: MotorSpec, gearing: float) -> float:
    """A steer motor's free speed at the module azimuth, rad/s."""
    return spec.free_speed / gearing


def motor_group(cfg: Config, motor: str, gearing: float, radius: float) -> MotorGroup:
    """The :class:`MotorGroup` of motor output ``motor`` of ``cfg``."""
    m = cfg.motors[motor]
    return MotorGroup(motor, motor_by_name(m.type), m.count, gearing, radius)


@dataclass(frozen=True)
class Wheel:
    """A drive wheel's losses (N·m, N·m·s/rad at the wheel), inertia (kg·m²) and the
    rolling resistance coefficient the model adds."""

    losses: Losses
    inertia: float
    rolling_resistance: float


def drive_wheel(cfg: DriveLossesConfig, sysid: LinearCharacterization | None,
                group: MotorGroup, inertia: float, mass: float, wheels: int) -> Wheel:
    """A drive wheel from the config: its losses and inertia, or, with ``characterization``,
    those that give the drive exactly SysId's kS, kV, kA (per wheel, wheel metres).

    kS becomes the wheel's Coulomb friction (rolling resistance included: it is then 0), kV its
    viscous friction (gearbox efficiency and free current kept from the losses), and kA the
    inertia each wheel moves, ``mass/wheels + J_wheel/r²``: the robot's mass stays (it sets
    traction and collisions) and the wheel inertia takes the rest. Raises CharacterizationError
    (naming the constant) when no wheel can have them: kV below the motors' free speed, or kA
    below the robot's mass alone.
    """
    if sysid is None:
        return Wheel(losses_from_config(cfg, group.spec, group.count, group.gearing), inertia,
                     0.0 if cfg.ideal else cfg.rolling_resistance)
    r = group.radius
    base = IDEAL if cfg.ideal else Losses(cfg.gearbox_efficiency,
                                          free_current=cfg.free_current)
    joint = JointMotors(group.spec, group.count, group.gearing / r, base)
    derived = from_feedforward(joint, Feedforward(sysid.ks, sysid.kv, sysid.ka))
    share = mass / wheels
    if not derived.inertia > share * (1.0 + 1e-9):
        least = share / joint.force_per_volt
        raise CharacterizationError("ka",
            f"ka {sysid.ka:.4g} V·s²/m is at or below {least:.4g}, what the robot's mass alone "
            f"({mass:g} kg over {wheels} wheels) needs with these motors: check the mass, "
            "the gearing, the wheel size and the units")
    lo = derived.losses
    return Wheel(Losses(lo.efficiency, lo.coulomb * r, lo.viscous * r * r, lo.free_current),
                 (derived.inertia - share) * r * r, 0.0)


def characterization_problems(losses: DriveLossesConfig, sysid: LinearCharacterization | None,
                              cfg: Config, motor: str, gearing: float, radius: float,
                              wheels: int) -> list[tuple[str, str]]:
    """(key, message) for ``characterization`` constants no drive wheel can have."""
    if sysid is None or motor not in cfg.motors:
        return []
    try:
        drive_wheel(losses, sysid, motor_group(cfg, motor, gearing, radius), 1e-3,
                    cfg.robot.mass, wheels)
    except CharacterizationError as e:
        return [(f"characterization.{e.key}", str(e))]
    return []
