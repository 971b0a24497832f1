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
from simserver.models.losses import IDEAL, Losses
from simserver.models.motor import MotorSpec
from simserver.models.tires import (
    WHEEL_FRICTION,
    GearedMotors,
    PlanarChassis,
    Row,
    WheelRows,
    pose_exp,
)

__all__ = ["WHEEL_FRICTION", "KinematicMecanum", "MecanumDrive", "MecanumWheelParams"]

#: Roller normal per wheel (FL, FR, RL, RR), body frame.
_ROLLER_NORMAL = np.array([[1.0, -1.0], [1.0, 1.0], [1.0, 1.0], [1.0, -1.0]]) / math.sqrt(2.0)
#: Roller axis per wheel (the direction a roller lets the contact slide), body frame.
_ROLLER_AXIS = np.stack([-_ROLLER_NORMAL[:, 1], _ROLLER_NORMAL[:, 0]], axis=1)


def roller_damping(strafe_efficiency: float, wheel_damping: float, radius: float) -> float:
    """Viscous drag of a wheel's rollers, N·s per m/s of roller spin (the contact's slip
    along the roller axis), that makes a robot strafe at ``strafe_efficiency`` times its
    forward speed at the same voltage.

    Driving forward, the rollers do not spin; strafing at v, each spins at √2·v (the contact
    slides along the roller axis at √2·v), so at steady state the wheels' power balance
    ``(c·V − F_c)·v/r = (b/r² + 2·b_r)·v²`` gives ``v_strafe / v_forward = (b/r²)/(b/r² +
    2·b_r)``; hence ``b_r = (b/r²)·(1/e − 1)/2``. wheel_damping: b of the powered wheel,
    N·m·s/rad; radius: m.
    """
    if not 0.0 < strafe_efficiency <= 1.0:
        raise ValueError("strafe_efficiency must be in (0, 1]")
    return wheel_damping / radius**2 * (1.0 / strafe_efficiency - 1.0) / 2.0


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
    losses: the wheel's losses at its angle (:mod:`simserver.models.losses`; N·m, N·m·s/rad).
    """

    x: float
    y: float
    wheel_radius: float
    motor: MotorSpec
    count: int
    gearing: float
    wheel_inertia: float
    losses: Losses = IDEAL

    def __post_init__(self) -> None:
        if not self.wheel_radius > 0:
            raise ValueError("wheel_radius must be > 0")


@dataclass(frozen=True)
class _Constants:
    """Everything that depends only on (h, coast flags), cached between substeps (per wheel,
    Python floats)."""

    alpha: list[float]  # free-speed decay
    gain: list[float]  # rad/s per V
    mobility: list[float]  # wheel speed change per N·m·s of load
    pos_speed: list[float]  # exact wheel angle advance per unit start speed, s
    pos_volt: list[float]  # per volt, rad/V
    pos_load: list[float]  # per N·m·s of load, rad
    amps_volt: list[float]  # current per volt, A/V
    amps_travel: list[float]  # current per rad of travel in the step, A/rad
    compliance: list[float]  # D per roller-normal row, m/s per N·s
    weight: list[float]  # 1/D per row
    push: list[float]  # c·h, the motors' impulse at rest per volt, N·m·s/V
    friction: list[float]  # Coulomb impulse F_c·h (rolling resistance included), N·m·s
    roller: list[float]  # roller drag b_r·h, N·s per m/s of roller slip
    limit: list[float]  # μ·N·h, N·s


class MecanumDrive(PlanarChassis):
    """Physical mecanum drivetrain (see the module docstring).

    Chassis state: x, y (m), heading (rad) in the field frame; vx, vy (m/s), omega (rad/s) in
    the body frame. Per wheel (FL, FR, RL, RR): ``wheel_speed`` rad/s, ``wheel_angle`` rad
    (cumulative), ``slipping`` bool, and after a step ``currents``: the time-average stator
    current of each wheel's motors over the substep, A (0 when coasting).

    rolling_resistance: coefficient C of the tires: a Coulomb torque C·N·r (N = the wheel's
    share of the weight) against each wheel's turning, added to its losses' Coulomb.
    strafe_efficiency: steady strafe speed / steady forward speed at the same voltage on every
    wheel (1: free rollers, the ideal mecanum): a viscous drag on the rollers' spin
    (:func:`roller_damping`), applied each substep from the slip at its start. Its impulse is
    capped at the one that stops the slip, so a drag too stiff for the substep cannot
    overshoot; the steady state is exact either way.
    """

    def __init__(self, wheels: Sequence[MecanumWheelParams], mass: float,
                 moment_of_inertia: float, friction: float, rolling_resistance: float = 0.0,
                 strafe_efficiency: float = 1.0):
        if len(wheels) != 4:
            raise ValueError("a mecanum drive has 4 wheels: front-left, front-right, rear-left, "
                             "rear-right")
        if not (rolling_resistance >= 0.0 and math.isfinite(rolling_resistance)):
            raise ValueError("rolling_resistance must be a finite number ≥ 0")
        super().__init__(mass, moment_of_inertia, friction, 4, 1)
        self.wheels = tuple(wheels)
        self.rolling_resistance = float(rolling_resistance)
        self.strafe_efficiency = float(strafe_efficiency)
        self._motors = GearedMotors([w.motor for w in wheels], [w.count for w in wheels],
                                    [w.gearing for w in wheels],
                                    [w.wheel_inertia for w in wheels],
                                    [w.losses for w in wheels])
        radius = np.array([w.wheel_radius for w in wheels], dtype=float)
        self._roller_damping = np.array([
            roller_damping(strafe_efficiency, b, r)
            for b, r in zip(self._motors.damping.tolist(), radius.tolist(), strict=True)])
        ax, ay = self._scaled_jacobian(np.array([w.x for w in wheels], dtype=float),
                                       np.array([w.y for w in wheels], dtype=float))
        jac = _ROLLER_NORMAL[:, :1] * ax + _ROLLER_NORMAL[:, 1:] * ay
        self._rows: list[Row] = [(j0, j1, j2) for j0, j1, j2 in jac.tolist()]
        axis = _ROLLER_AXIS[:, :1] * ax + _ROLLER_AXIS[:, 1:] * ay
        self._axis_rows: list[Row] = [(j0, j1, j2) for j0, j1, j2 in axis.tolist()]
        # Rim speed along the roller axis per rad/s of the wheel: r·(a · forward).
        self._axis_rim: list[float] = (radius * _ROLLER_AXIS[:, 0]).tolist()
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
        motors = self._motors
        ms = motors.discretize(h, flags)
        force = np.where(flags, 0.0, motors.torque_per_volt)
        rim_axis = np.array(self._axis_rim)
        # The drag impulse that would stop a roller's slip: 1 / (mobility of the slip).
        stop = 1.0 / (np.sum(np.array(self._axis_rows) ** 2, axis=1)
                      + rim_axis**2 * ms.mobility)
        const = _Constants(
            alpha=ms.alpha.tolist(), gain=ms.gain.tolist(), mobility=ms.mobility.tolist(),
            pos_speed=ms.pos_speed.tolist(), pos_volt=ms.pos_volt.tolist(),
            pos_load=ms.pos_load.tolist(), amps_volt=ms.amps_volt.tolist(),
            amps_travel=ms.amps_travel.tolist(),
            compliance=(self._rim**2 * ms.mobility).tolist(),
            weight=(1.0 / (self._rim**2 * ms.mobility)).tolist(),
            push=(force * h).tolist(),
            friction=((motors.coulomb + self.rolling_resistance * self._normal
                       * np.array(self._radius)) * h).tolist(),
            roller=np.minimum(self._roller_damping * h, stop).tolist(),
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
        volts = [float(v) for v in volts]
        w = [a * x + g * v for a, x, g, v in zip(k.alpha, w0, k.gain, volts, strict=True)]
        ux, uy, uw = self._rotated_momentum(h)
        drag = [0.0] * 4  # the rollers' load impulse on each wheel, N·m·s
        if self.strafe_efficiency < 1.0:
            # Every roller's impulse from the slip at the step's start (then applied at once).
            dx = dy = dw = 0.0
            for i, (j0, j1, j2) in enumerate(self._axis_rows):
                rim = self._axis_rim[i]
                impulse = -k.roller[i] * (j0 * ux + j1 * uy + j2 * uw - rim * w0[i])
                dx, dy, dw = dx + j0 * impulse, dy + j1 * impulse, dw + j2 * impulse
                drag[i] = rim * impulse
                w[i] -= k.mobility[i] * drag[i]
            ux, uy, uw = ux + dx, uy + dy, uw + dw
        base = [-(j0 * ux + j1 * uy + j2 * uw) for j0, j1, j2 in self._rows]
        push = [c * v for c, v in zip(k.push, volts, strict=True)]
        wheels = WheelRows(self._rim_list, w, k.mobility, w0, push, k.friction)
        _, (zx, zy, zw), end, load = self._solve_wheels(
            self._rows, k.compliance, k.weight, base, wheels, k.limit, False)
        self._advance(h, ux + zx, uy + zy, uw + zw)
        self.currents = [
            av * v - at * (ps * x0 + pv * v - pl * (lo + d))
            for av, at, ps, pv, pl, x0, v, lo, d in zip(
                k.amps_volt, k.amps_travel, k.pos_speed, k.pos_volt, k.pos_load, w0, volts,
                load, drag, strict=True)]
        self._speed = end
        self._angle = [a + wi * h for a, wi in zip(self._angle, end, strict=True)]


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
