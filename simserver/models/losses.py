"""Losses of a motor-driven joint, and what SysId's feedforward constants mean physically.

A joint ``q`` (m: a wheel's ground travel, an elevator carriage; rad: an arm, a flywheel) is
turned by ``n`` identical DC motors through a ratio ``c`` (motor shaft rad per unit of q: G/r
for a wheel or a drum of radius r, G for a rotary joint). Each motor is fed ``V`` and carries
``I = (V − c·w/Kv)/R``; the joint obeys::

    J·dw/dt = η·n·c·Kt·(I − I_free·c·w/ω_free) − b·w − F_c·sgn(w) + F_ext

- ``η``: gearbox efficiency. It scales the torque the gears pass on, so it costs force under
  load but not free speed. Applied the same way when the load back-drives the motors (a
  simplification: a real gearbox loses more torque back-driven).
- ``I_free·c·w/ω_free``: the motor's own no-load losses (bearings, brushes, iron, windage), a
  torque growing with speed that draws exactly the catalog free current at the catalog free
  speed. With it the unloaded joint turns at the catalog free speed; without it, at
  ``V·Kv`` (wpimath's DCMotor, whose Kv is fitted through the free current), a few % faster.
- ``b``: viscous friction (grease, seals, belts), N·s/m or N·m·s/rad.
- ``F_c``: Coulomb friction, N or N·m: opposes motion, and holds the joint at rest while the
  other forces are smaller (stiction equal to sliding friction).

Collecting terms, with ``k = η·n·c·Kt/R`` (N per V)::

    J·dw/dt = k·V − B·w − F_c·sgn(w) + F_ext,   B = k·c·(1/Kv + R·I_free/ω_free) + b

which is WPILib SysId's feedforward ``V = kS·sgn(w) + kV·w + kA·a + kG`` with
``kS = F_c/k``, ``kV = B/k``, ``kA = J/k`` and ``kG = −F_ext/k`` (:func:`feedforward`). The
inverse (:func:`from_feedforward`) gives the loss terms and inertia that make a joint have
given constants; a kV below the motors' own back-EMF bound (``c·V_nominal/ω_free`` with the
free-current load: the catalog free speed) is refused: no friction makes a joint faster than
its motors.

Every default here is the ideal machine (efficiency 1, no friction, no free-current load):
models built without losses are exactly today's ideal models. Config defaults (estimates with
their sources) live in :mod:`simserver.config.losses`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simserver.models.motor import MotorSpec


class CharacterizationError(ValueError):
    """Feedforward constants no joint with these motors can have; ``key``: the constant at
    fault ("ks", "kv", "ka" or "kg")."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Losses:
    """Loss terms of one joint (SI at the joint: N and N·s/m, or N·m and N·m·s/rad).

    efficiency: gearbox efficiency η, 0 < η ≤ 1. coulomb: Coulomb (and static) friction F_c ≥ 0.
    viscous: viscous friction b ≥ 0. free_current: load each motor with its catalog free
    current (see the module docstring).
    """

    efficiency: float = 1.0
    coulomb: float = 0.0
    viscous: float = 0.0
    free_current: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.efficiency <= 1.0:
            raise ValueError("efficiency must be in (0, 1]")
        for name in ("coulomb", "viscous"):
            value = getattr(self, name)
            if not (value >= 0.0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number ≥ 0")

    @property
    def ideal(self) -> bool:
        """Whether these are no losses at all."""
        return self == IDEAL


IDEAL = Losses()


@dataclass(frozen=True)
class JointMotors:
    """``count`` identical motors turning a joint through ``ratio`` (motor rad per unit of q),
    with ``losses``. Gives the joint's linear coefficients (module docstring)."""

    motor: MotorSpec
    count: int
    ratio: float
    losses: Losses = IDEAL

    def __post_init__(self) -> None:
        if self.count < 1 or not (self.ratio > 0.0 and math.isfinite(self.ratio)):
            raise ValueError("count must be ≥ 1 and ratio a finite number > 0")

    @property
    def force_per_volt(self) -> float:
        """k = η·n·c·Kt/R: joint force (N or N·m) per volt at the motors at rest."""
        m = self.motor
        return self.losses.efficiency * self.count * self.ratio * m.kt / m.R

    @property
    def emf_damping(self) -> float:
        """Back-EMF damping of the powered motors, k·c/Kv (N·s/m or N·m·s/rad)."""
        return self.force_per_volt * self.ratio / self.motor.kv

    @property
    def loss_damping(self) -> float:
        """Damping of the losses alone: free-current load plus viscous friction, which act
        whether or not the windings carry current (N·s/m or N·m·s/rad)."""
        m = self.motor
        free = (self.force_per_volt * self.ratio * m.R * m.free_current / m.free_speed
                if self.losses.free_current else 0.0)
        return free + self.losses.viscous

    @property
    def damping(self) -> float:
        """B: total damping of the powered joint (N·s/m or N·m·s/rad)."""
        return self.emf_damping + self.loss_damping

    @property
    def coulomb(self) -> float:
        """F_c, N or N·m."""
        return self.losses.coulomb

    def kv_bound(self) -> float:
        """The smallest kV these motors allow, V per unit/s: kV with no viscous friction."""
        return (self.emf_damping + (self.loss_damping - self.losses.viscous)) / self.force_per_volt


@dataclass(frozen=True)
class Feedforward:
    """SysId's constants of one joint: ks V, kv V per unit/s, ka V per unit/s², kg V (gravity
    at its worst: an elevator's weight, an arm held horizontal; 0 for other joints)."""

    ks: float
    kv: float
    ka: float
    kg: float = 0.0


def feedforward(joint: JointMotors, inertia: float, gravity: float = 0.0) -> Feedforward:
    """The feedforward constants of ``joint`` moving ``inertia`` (kg or kg·m², everything
    reflected to the joint) against a gravity force or torque of at most ``gravity`` (N or
    N·m)."""
    k = joint.force_per_volt
    return Feedforward(joint.coulomb / k, joint.damping / k, inertia / k, gravity / k)


@dataclass(frozen=True)
class Derived:
    """What :func:`from_feedforward` derives: the joint's losses, its total inertia (kg or
    kg·m², reflected rotors included) and its largest gravity load (N or N·m)."""

    losses: Losses
    inertia: float
    gravity: float


def from_feedforward(joint: JointMotors, ff: Feedforward, per: str = "m") -> Derived:
    """Loss terms, inertia and gravity load that give ``joint`` exactly the constants ``ff``.

    Keeps ``joint.losses.efficiency`` and ``free_current`` (they set how much current a force
    costs; SysId cannot tell them apart); the Coulomb and viscous friction are replaced.
    Raises CharacterizationError when no friction can give ``ff`` (a kV below the motors'
    bound, a negative constant). per: the joint's unit ("m" or "rad"), for messages.
    """
    for name in ("ks", "kv", "ka", "kg"):
        value = getattr(ff, name)
        if not (value >= 0.0 and math.isfinite(value)):
            raise CharacterizationError(name, f"{name} must be a finite number ≥ 0, got "
                                        f"{value!r}")
    if not ff.ka > 0.0:
        raise CharacterizationError("ka", "ka must be > 0 (a joint with no inertia)")
    k = joint.force_per_volt
    bound = joint.kv_bound()
    if ff.kv < bound * (1.0 - 1e-9):
        raise CharacterizationError(
            "kv", f"kv {ff.kv:.4g} V·s/{per} is below {bound:.4g} V·s/{per}, the least these "
            "motors allow (their free speed through the gearing): no friction makes a joint "
            "faster than its motors; check the gearing, the wheel size, the motor and the "
            "units")
    viscous = max(0.0, ff.kv * k - joint.damping + joint.losses.viscous)
    losses = Losses(joint.losses.efficiency, ff.ks * k, viscous, joint.losses.free_current)
    return Derived(losses, ff.ka * k, ff.kg * k)


def coulomb_step(w0: float, force: float, damping: float, coulomb: float, inertia: float,
                 h: float) -> tuple[float, float]:
    """Exact speed and travel over ``h`` s of ``J·dw/dt = F − B·w − F_c·sgn(w)``.

    ``force`` F is constant over the step (N or N·m); ``damping`` B > 0; ``coulomb`` F_c ≥ 0;
    ``inertia`` J > 0. A joint at rest stays at rest while ``|F| ≤ F_c`` (stiction), and a
    moving one that reaches zero stops there if so. Returns (w_end, travel) in units/s, units.
    """
    rate = damping / inertia
    t_left = h
    w = w0
    dist = 0.0
    for _ in range(3):  # at most: decelerate to 0, then restart in the other direction
        if w == 0.0 and abs(force) <= coulomb:
            return 0.0, dist
        sign = math.copysign(1.0, w) if w != 0.0 else math.copysign(1.0, force)
        w_inf = (force - coulomb * sign) / damping
        if w != 0.0 and w_inf * sign < 0.0:
            t_zero = math.log((w_inf - w) / w_inf) / rate  # w(t) = 0
            if t_zero < t_left:
                dist += w_inf * t_zero + (w - w_inf) * (-math.expm1(-rate * t_zero)) / rate
                t_left -= t_zero
                w = 0.0
                continue
        dist += w_inf * t_left + (w - w_inf) * (-math.expm1(-rate * t_left)) / rate
        w = w_inf + (w - w_inf) * math.exp(-rate * t_left)
        return w, dist
    return w, dist
