"""Mecanum drivetrain at two fidelity levels.

- :class:`MecanumDrive` (physical): four wheels, each turned by a motor group (exact for constant
  voltage over a substep), touching the carpet through a roller whose axis is at 45° to the
  wheel: the roller turns freely along its own axis, so each wheel constrains only the contact
  velocity along the roller normal ``n_i``. The contacts are rigid with a Coulomb limit per
  wheel (see :mod:`simserver.models.tires`). Forward traction is therefore ``μ·g·cos 45°``.
- :class:`KinematicMecanum` (pyfrc ``MecanumDrivetrain`` semantics): wheel speed =
  deadzone(duty)·max_speed, chassis speeds from wpimath's ``MecanumDriveKinematics``.

Wheel order is wpimath's: front-left, front-right, rear-left, rear-right. Rollers are the usual
"X seen from above" layout that wpimath's kinematics assumes: the front-left rim speed is
``vx − vy − ω·(x + y)``, front-right ``vx + vy + ω·(x − y)``, and so on (roller normal
(1, −1)/√2 for front-left and rear-right, (1, 1)/√2 for front-right and rear-left). Positive
voltage or duty turns every wheel forward (invert the right side yourself if your controllers
need it; :class:`KinematicMecanum` can do it as pyfrc does).

Usage::

    cim = motor_by_name("CIM")
    wheels = [MecanumWheelParams(x, y, wheel_radius=0.0762, motor=cim, count=1,
                                 gearing=10.71, wheel_inertia=0.02)
              for x, y in ((0.25, 0.3), (0.25, -0.3), (-0.25, 0.3), (-0.25, -0.3))]
    drive = MecanumDrive(wheels, mass=50.0, moment_of_inertia=3.0,
                         friction=WHEEL_FRICTION["mecanum"])
    drive.reset(x=2.0, y=4.0, heading=0.0)
    drive.step(0.005, volts=[6.0, 6.0, 6.0, 6.0])
    drive.vx, drive.wheel_positions(), drive.currents
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from wpimath.geometry import Translation2d
from wpimath.kinematics import MecanumDriveKinematics, MecanumDriveWheelSpeeds

from simserver.models.differential import linear_deadzone
from simserver.models.motor import MotorSpec
from simserver.models.tires import (
    WHEEL_FRICTION,
    GearedMotors,
    PlanarChassis,
    ReducedContacts,
    Row,
    pose_exp,
)

__all__ = ["WHEEL_FRICTION", "KinematicMecanum", "MecanumDrive", "MecanumWheelParams"]

#: Roller normal per wheel (FL, FR, RL, RR), body frame.
_ROLLER_NORMAL = np.array([[1.0, -1.0], [1.0, 1.0], [1.0, 1.0], [1.0, -1.0]]) / math.sqrt(2.0)


def _four(value: Sequence[float]) -> list[float]:
    """One float per wheel, checked."""
    values = [float(v) for v in value]
    if len(values) != 4:
        raise ValueError(f"expected 4 values (FL, FR, RL, RR), got {len(values)}")
    return values


@dataclass(frozen=True)
class MecanumWheelParams:
    """One mecanum wheel (SI units).

    x, y: contact position in the body frame, m (+x forward, +y left). wheel_radius: m.
    motor, count, gearing: the motors geared together to this wheel (gearing = motor turns per
    wheel turn). wheel_inertia: everything turning with the wheel, reflected to it, kg·m².
    """

    x: float
    y: float
    wheel_radius: float
    motor: MotorSpec
    count: int
    gearing: float
    wheel_inertia: float

    def __post_init__(self) -> None:
        if not self.wheel_radius > 0:
            raise ValueError("wheel_radius must be > 0")


@dataclass(frozen=True)
class _Constants:
    """Everything that depends only on (h, coast flags), cached between substeps (per wheel,
    Python floats)."""

    alpha: list[float]  # free-speed decay
    gain: list[float]  # rad/s per V
    compliance: list[float]  # D per roller-normal row, m/s per N·s
    weight: list[float]  # 1/D per row
    kick: list[float]  # wheel speed change per N·s of roller-normal impulse
    current_speed: list[float]  # A per rad/s of speed change
    current_kick: list[float]  # A per N·s of impulse
    limit: list[float]  # μ·N·h, N·s


class MecanumDrive(PlanarChassis):
    """Physical mecanum drivetrain (see the module docstring).

    Chassis state: x, y (m), heading (rad) in the field frame; vx, vy (m/s), omega (rad/s) in
    the body frame. Per wheel (FL, FR, RL, RR): ``wheel_speed`` rad/s, ``wheel_angle`` rad
    (cumulative), ``slipping`` bool, and after a step ``currents``: the time-average stator
    current of each wheel's motors over the substep, A (0 when coasting).
    """

    def __init__(self, wheels: Sequence[MecanumWheelParams], mass: float,
                 moment_of_inertia: float, friction: float):
        if len(wheels) != 4:
            raise ValueError("a mecanum drive has 4 wheels: front-left, front-right, rear-left, "
                             "rear-right")
        super().__init__(mass, moment_of_inertia, friction, 4, 1)
        self.wheels = tuple(wheels)
        self._motors = GearedMotors([w.motor for w in wheels], [w.count for w in wheels],
                                    [w.gearing for w in wheels],
                                    [w.wheel_inertia for w in wheels])
        ax, ay = self._scaled_jacobian(np.array([w.x for w in wheels], dtype=float),
                                       np.array([w.y for w in wheels], dtype=float))
        jac = _ROLLER_NORMAL[:, :1] * ax + _ROLLER_NORMAL[:, 1:] * ay
        self._rows: list[Row] = [(j0, j1, j2) for j0, j1, j2 in jac.tolist()]
        # Rim speed r·ω projected on the roller normal: r·(n · forward).
        self._rim = np.array([w.wheel_radius for w in wheels]) * _ROLLER_NORMAL[:, 0]
        self._rim_list: list[float] = self._rim.tolist()
        self._radius = [w.wheel_radius for w in wheels]
        self._gearing: list[float] = self._motors.gearing.tolist()
        self.reset(0.0, 0.0, 0.0)
        self._cache: dict[object, _Constants] = {}

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad; wheels at rest, angle 0."""
        self._reset_chassis(x, y, heading)
        # State as Python floats (the substep's arithmetic is on floats); the public views
        # wheel_speed and wheel_angle are numpy copies.
        self._speed = [0.0] * 4
        self._angle = [0.0] * 4
        self.currents: list[float] = [0.0] * 4

    @property
    def wheel_speed(self) -> np.ndarray:
        """Wheel angular speed per wheel, rad/s (+ turns forward)."""
        return np.array(self._speed)

    @wheel_speed.setter
    def wheel_speed(self, value: Sequence[float]) -> None:
        self._speed = _four(value)

    @property
    def wheel_angle(self) -> np.ndarray:
        """Cumulative wheel rotation per wheel, rad."""
        return np.array(self._angle)

    @wheel_angle.setter
    def wheel_angle(self, value: Sequence[float]) -> None:
        self._angle = _four(value)

    def motor_speeds(self) -> list[float]:
        """Motor shaft speed per wheel, rad/s."""
        return [w * g for w, g in zip(self._speed, self._gearing, strict=True)]

    def wheel_speeds(self) -> list[float]:
        """Rim speed per wheel, m/s (what an encoder on the wheel reads; wpimath's
        MecanumDriveWheelSpeeds)."""
        return [r * w for r, w in zip(self._radius, self._speed, strict=True)]

    def wheel_positions(self) -> list[float]:
        """Rim distance per wheel, m (wpimath's MecanumDriveWheelPositions)."""
        return [r * a for r, a in zip(self._radius, self._angle, strict=True)]

    def _constants(self, h: float, coast: Sequence[bool] | None) -> _Constants:
        """The substep's constant coefficients, built once per (h, coast flags)."""
        if coast is not None and not any(coast):
            coast = None
        key: object = h if coast is None else (h, tuple(coast))
        found = self._cache.get(key)
        if found is not None:
            return found
        if not h > 0:
            raise ValueError(f"step h must be > 0 s, got {h}")
        flags = np.zeros(4, dtype=bool)
        if coast is not None:
            flags[:] = [bool(c) for c in coast]
        ms = self._motors.discretize(h, flags)
        const = _Constants(
            alpha=ms.alpha.tolist(), gain=ms.gain.tolist(),
            compliance=(self._rim**2 * ms.mobility).tolist(),
            weight=(1.0 / (self._rim**2 * ms.mobility)).tolist(),
            kick=(-ms.mobility * self._rim).tolist(),
            current_speed=(ms.current_scale * self._motors.inertia).tolist(),
            current_kick=(ms.current_scale * self._rim).tolist(),
            limit=self._friction_limit(h),
        )
        if len(self._cache) > 32:
            self._cache.clear()
        self._cache[key] = const
        return const

    def step(self, h: float, volts: Sequence[float], coast: Sequence[bool] | None = None) -> None:
        """Advance ``h`` seconds with constant motor voltages (V, per wheel, + turns forward).

        coast: per wheel, the motors' windings are open (no torque, no current, no back-EMF
        braking); its voltage is ignored.
        """
        if len(volts) != 4 or (coast is not None and len(coast) != 4):
            raise ValueError("expected 4 voltages (and 4 coast flags)")
        k = self._constants(h, coast)
        w0 = self._speed
        w = [a * x + g * float(v) for a, x, g, v in zip(k.alpha, w0, k.gain, volts, strict=True)]
        ux, uy, uw = self._rotated_momentum(h)
        rhs = [r * wi - (j0 * ux + j1 * uy + j2 * uw)
               for r, wi, (j0, j1, j2) in zip(self._rim_list, w, self._rows, strict=True)]
        system = ReducedContacts(self._rows, k.compliance, rhs, k.weight)
        p = self._solve(system, k.limit)
        zx, zy, zw = system.twist(p)
        self._advance(h, ux + zx, uy + zy, uw + zw)
        w = [wi + kick * pi for wi, kick, pi in zip(w, k.kick, p, strict=True)]
        self.currents = [cs * (a - b) + ck * pi for cs, a, b, ck, pi in zip(
            k.current_speed, w, w0, k.current_kick, p, strict=True)]
        self._speed = w
        self._angle = [a + wi * h for a, wi in zip(self._angle, w, strict=True)]


class KinematicMecanum:
    """Mecanum with wheel speeds proportional to duty cycles (pyfrc ``MecanumDrivetrain``).

    locations: (x, y) m of the FL, FR, RL, RR wheels, body frame. max_speed: wheel rim speed at
    full duty, m/s. wheel_radius: m (for wheel_speed / wheel_angle). deadzone: pyfrc
    ``linear_deadzone`` width (0..1). invert_right: negate the right wheels' duties as pyfrc
    does (its convention: right motors at −1 drive forward); default: +1 is forward everywhere.
    gearing: motor turns per wheel turn (for motor_speeds). Duties are used as given.
    """

    def __init__(self, locations: Sequence[tuple[float, float]], max_speed: float,
                 wheel_radius: float = 0.0762, deadzone: float = 0.0,
                 invert_right: bool = False, gearing: float = 1.0):
        if len(locations) != 4:
            raise ValueError("a mecanum drive has 4 wheels: FL, FR, RL, RR")
        if not wheel_radius > 0:
            raise ValueError("wheel_radius must be > 0")
        self.kinematics = MecanumDriveKinematics(*(Translation2d(x, y) for x, y in locations))
        self.max_speed = float(max_speed)
        self.wheel_radius = float(wheel_radius)
        self.deadzone = float(deadzone)
        self.gearing = float(gearing)
        self._sign = np.array([1.0, -1.0, 1.0, -1.0]) if invert_right else np.ones(4)
        self.currents = np.zeros(4)
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad."""
        self.x, self.y, self.heading = float(x), float(y), float(heading)
        self.vx = self.vy = self.omega = 0.0
        # np.ndarray, not the 1-D type numpy 2.2's stubs give np.zeros(4): reassigned in step
        self.wheel_speed: np.ndarray = np.zeros(4)
        self.wheel_angle: np.ndarray = np.zeros(4)
        self.slipping = np.zeros(4, dtype=bool)

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Impose a body-frame velocity (m/s, m/s, rad/s); the next step overrides it."""
        self.vx, self.vy, self.omega = float(vx), float(vy), float(omega)

    def motor_speeds(self) -> list[float]:
        """Motor shaft speed per wheel, rad/s."""
        return (self.wheel_speed * self.gearing).tolist()

    def wheel_speeds(self) -> list[float]:
        """Rim speed per wheel, m/s."""
        return (self.wheel_speed * self.wheel_radius).tolist()

    def wheel_positions(self) -> list[float]:
        """Rim distance per wheel, m."""
        return (self.wheel_angle * self.wheel_radius).tolist()

    def step(self, h: float, duties: Sequence[float]) -> None:
        """Advance ``h`` seconds: rim speeds deadzone(duty)·max_speed, chassis speeds from
        wpimath's forward kinematics, pose by the exponential of that twist (as odometry)."""
        if len(duties) != 4:
            raise ValueError("expected 4 duties")
        if not h > 0:
            raise ValueError(f"step h must be > 0 s, got {h}")
        rim = [linear_deadzone(float(d), self.deadzone) * self.max_speed * float(s)
               for d, s in zip(duties, self._sign, strict=True)]
        chassis = self.kinematics.toChassisSpeeds(MecanumDriveWheelSpeeds(*rim))
        self.vx, self.vy, self.omega = chassis.vx, chassis.vy, chassis.omega
        self.wheel_speed = np.array(rim) / self.wheel_radius
        self.wheel_angle = self.wheel_angle + self.wheel_speed * h
        self.x, self.y, self.heading = pose_exp(self.x, self.y, self.heading, self.vx * h,
                                                self.vy * h, self.omega * h)
