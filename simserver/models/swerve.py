"""Swerve drivetrain at two fidelity levels.

- :class:`SwerveDrive` (physical): each module is a drive motor group turning a wheel and a steer
  (azimuth) motor group turning the module, both exact for constant voltage over a substep; the
  wheels touch the carpet through velocity-level contacts with a Coulomb limit per module:
  rigid along the wheel (it rolls without slip until the limit), a stiff viscous scrub across
  it (``scrub_damping``; rigid if None). See :mod:`simserver.models.tires` for the contact model
  and the substep order. Reports the current of every motor group and the shaft speeds motor
  controllers read.
- :class:`KinematicSwerve` (pyfrc-style): module speed = deadzone(duty)·max_speed, steer rate =
  duty·max_steer_rate, chassis speeds from wpimath's ``SwerveDriveNKinematics.toChassisSpeeds``.

Frames: module positions (x, y) in metres in the body frame, +x forward, +y left; steer angle
0 points the wheel forward, CCW positive, continuous (not wrapped). Typical friction
coefficients are in :data:`simserver.models.tires.WHEEL_FRICTION`.

Usage::

    kraken = motor_by_name("Kraken X60")
    def module(x, y):
        return SwerveModuleParams(x, y, wheel_radius=0.0508,
                                  drive_motor=kraken, drive_count=1, drive_gearing=6.75,
                                  wheel_inertia=0.01, steer_motor=kraken, steer_count=1,
                                  steer_gearing=150 / 7, steer_inertia=0.004)
    drive = SwerveDrive([module(0.28, 0.28), module(0.28, -0.28), module(-0.28, 0.28),
                         module(-0.28, -0.28)], mass=60.0, moment_of_inertia=4.0,
                        friction=WHEEL_FRICTION["blue_nitrile"])
    drive.reset(x=2.0, y=4.0, heading=0.0)
    drive.step(0.005, drive_volts=[6.0] * 4, steer_volts=[0.0] * 4)
    drive.x, drive.vx, drive.module_positions(), drive.drive_currents
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from wpimath.geometry import Rotation2d, Translation2d
from wpimath.kinematics import (
    SwerveDrive2Kinematics,
    SwerveDrive3Kinematics,
    SwerveDrive4Kinematics,
    SwerveDrive6Kinematics,
    SwerveModuleState,
)

from simserver.models.differential import linear_deadzone
from simserver.models.losses import IDEAL, Losses
from simserver.models.motor import MotorSpec
from simserver.models.tires import (
    SCRUB_COMPLIANCE,
    WHEEL_FRICTION,
    GearedMotors,
    PlanarChassis,
    Row,
    WheelRows,
    coulomb_advance,
    pose_exp,
)

__all__ = ["DEFAULT_SCRUB_DAMPING", "WHEEL_FRICTION", "KinematicSwerve", "SwerveDrive",
           "SwerveModuleParams"]

#: Sideways force of a module per m/s of sideways slip, N·s/m (until it saturates at μ·N).
#: An estimate, not a measurement: with it a 60 kg robot on blue nitrile reaches full friction
#: at ≈3.5 cm/s of sideways slip per module, and crabs ≈2 cm/s in a 3 m/s, 2 rad/s turn.
DEFAULT_SCRUB_DAMPING = 5000.0


@dataclass(frozen=True)
class SwerveModuleParams:
    """One swerve module (SI units).

    x, y: wheel contact position in the body frame, m (+x forward, +y left). wheel_radius: m.
    drive_motor, drive_count, drive_gearing: drive motors (count geared together; gearing =
    motor turns per wheel turn). wheel_inertia: everything turning with the wheel, reflected to
    the wheel, kg·m² (see ``tires.wheel_inertia_estimate``). steer_motor, steer_count,
    steer_gearing: azimuth motors (gearing = motor turns per module turn). steer_inertia: the
    azimuth's inertia about its vertical axis, including reflected rotors, kg·m².
    drive_losses, steer_losses: losses of each group (:mod:`simserver.models.losses`) at the
    wheel's or the azimuth's angle: Coulomb in N·m, viscous in N·m·s/rad (default none).
    """

    x: float
    y: float
    wheel_radius: float
    drive_motor: MotorSpec
    drive_count: int
    drive_gearing: float
    wheel_inertia: float
    steer_motor: MotorSpec
    steer_count: int
    steer_gearing: float
    steer_inertia: float
    drive_losses: Losses = IDEAL
    steer_losses: Losses = IDEAL

    def __post_init__(self) -> None:
        if not self.wheel_radius > 0:
            raise ValueError("wheel_radius must be > 0")


@dataclass(frozen=True)
class _Constants:
    """Everything that depends only on (h, coast flags), cached between substeps, as Python
    floats (per-element arithmetic on 8 numbers is faster than numpy's per-call cost). Lists
    over the 2N motor elements are drive elements then steer elements; rows are (along,
    across) per module."""

    alpha: list[float]  # free-speed decay per element
    gain: list[float]  # rad/s per V
    pos_speed: list[float]  # exact angle advance per unit start speed, s
    pos_volt: list[float]  # exact angle advance per volt, rad/V
    pos_load: list[float]  # exact angle advance per N·m·s of load, rad
    amps_volt: list[float]  # current per volt, A/V
    amps_travel: list[float]  # current per rad of travel in the step, A/rad
    compliance: list[float]  # D per row, m/s per N·s
    weight: list[float] | None  # 1/D per row (None: rigid scrub rows, dense solves)
    rim: list[float]  # drive: wheel radius, m (rim speed per wheel rad/s)
    mobility: list[float]  # speed change per N·m·s of load, per element
    push: list[float]  # drive: c·h, the motors' impulse at rest per volt, N·m·s/V
    friction: list[float]  # drive: Coulomb impulse F_c·h (rolling resistance included), N·m·s
    steer_coulomb: list[float]  # steer: Coulomb torque, N·m (all 0: no Coulomb on the steer)
    steer_force: list[float]  # steer: c, N·m per V (0 coasting)
    steer_damping: list[float]  # steer: b, N·m·s/rad
    steer_inertia: list[float]  # steer: J, kg·m²
    limit: list[float]  # μ·N·h per module, N·s
    held: bool  # whether any wheel has Coulomb friction


class SwerveDrive(PlanarChassis):
    """Physical swerve drivetrain of N ≥ 2 modules (see the module docstring).

    modules: geometry and motors per module. mass: kg. moment_of_inertia: yaw, kg·m².
    friction: tire friction coefficient μ (WHEEL_FRICTION). scrub_damping: sideways force per
    m/s of sideways slip of one module, N·s/m (DEFAULT_SCRUB_DAMPING); ``None`` makes the
    sideways contact rigid: exact no-slip rolling, but modules even slightly off a common
    instant centre (a steering controller's lag) then bind, skid at μ·N and drag the robot.
    rolling_resistance: coefficient C of the tires: a Coulomb torque C·N·r (N = the module's
    share of the weight) against each wheel's turning, added to its drive_losses' Coulomb.

    Chassis state: x, y (m), heading (rad) in the field frame; vx, vy (m/s), omega (rad/s) in
    the body frame. Per-module arrays (module order): ``wheel_speed`` rad/s at the wheel,
    ``wheel_angle`` rad (cumulative), ``steer_angle`` rad (continuous), ``steer_rate`` rad/s,
    ``slipping`` bool, and after a step ``drive_currents`` / ``steer_currents``: the time-average
    stator current of all motors of each group over the substep, A (exactly the charge drawn;
    0 for a coasting group).
    """

    def __init__(self, modules: Sequence[SwerveModuleParams], mass: float,
                 moment_of_inertia: float, friction: float,
                 scrub_damping: float | None = DEFAULT_SCRUB_DAMPING,
                 rolling_resistance: float = 0.0):
        n = len(modules)
        if n < 2:
            raise ValueError("a swerve drive needs at least 2 modules")
        if scrub_damping is not None and not scrub_damping > 0:
            raise ValueError("scrub_damping must be > 0 (or None: rigid)")
        if not (rolling_resistance >= 0.0 and math.isfinite(rolling_resistance)):
            raise ValueError("rolling_resistance must be a finite number ≥ 0")
        self.scrub_damping = scrub_damping
        self.rolling_resistance = float(rolling_resistance)
        super().__init__(mass, moment_of_inertia, friction, n, 2)
        self.modules = tuple(modules)
        self._n = n
        ms = self.modules
        self._motors = GearedMotors(
            [m.drive_motor for m in ms] + [m.steer_motor for m in ms],
            [m.drive_count for m in ms] + [m.steer_count for m in ms],
            [m.drive_gearing for m in ms] + [m.steer_gearing for m in ms],
            [m.wheel_inertia for m in ms] + [m.steer_inertia for m in ms],
            [m.drive_losses for m in ms] + [m.steer_losses for m in ms],
        )
        # Module positions scaled by 1/√J for the mass-scaled Jacobian rows (see step).
        self._scaled_xy = [(m.x / self._sqrt_j, m.y / self._sqrt_j) for m in ms]
        self._radius = np.array([m.wheel_radius for m in ms], dtype=float)
        self._radius_list: list[float] = self._radius.tolist()
        self._gearing: list[float] = self._motors.gearing.tolist()
        # State as Python floats (the substep's arithmetic is on floats); the public views
        # below are numpy copies.
        self._speed = [0.0] * (2 * n)  # wheel speeds, then steer rates (rad/s)
        self._angle = [0.0] * (2 * n)  # wheel angles, then steer angles (rad)
        self._current = [0.0] * (2 * n)  # drive groups, then steer groups (A)
        self._cache: dict[object, _Constants] = {}

    # --- state views (numpy copies; assign a whole sequence to change one) ---------------

    def _set(self, state: list[float], start: int, value: Sequence[float]) -> None:
        values = [float(v) for v in value]
        if len(values) != self._n:
            raise ValueError(f"expected {self._n} values, got {len(values)}")
        state[start:start + self._n] = values

    @property
    def wheel_speed(self) -> np.ndarray:
        """Wheel angular speed per module, rad/s (forward rolling positive)."""
        return np.array(self._speed[: self._n])

    @wheel_speed.setter
    def wheel_speed(self, value: Sequence[float]) -> None:
        self._set(self._speed, 0, value)

    @property
    def steer_rate(self) -> np.ndarray:
        """Azimuth rate per module, rad/s (CCW)."""
        return np.array(self._speed[self._n:])

    @steer_rate.setter
    def steer_rate(self, value: Sequence[float]) -> None:
        self._set(self._speed, self._n, value)

    @property
    def wheel_angle(self) -> np.ndarray:
        """Cumulative wheel rotation per module, rad."""
        return np.array(self._angle[: self._n])

    @wheel_angle.setter
    def wheel_angle(self, value: Sequence[float]) -> None:
        self._set(self._angle, 0, value)

    @property
    def steer_angle(self) -> np.ndarray:
        """Azimuth per module, rad (0 = wheel rolls forward, CCW, not wrapped)."""
        return np.array(self._angle[self._n:])

    @steer_angle.setter
    def steer_angle(self, value: Sequence[float]) -> None:
        self._set(self._angle, self._n, value)

    @property
    def drive_currents(self) -> np.ndarray:
        """Average stator current of each drive group over the last substep, A."""
        return np.array(self._current[: self._n])

    @property
    def steer_currents(self) -> np.ndarray:
        """Average stator current of each steer group over the last substep, A."""
        return np.array(self._current[self._n:])

    # --- life cycle -------------------------------------------------------------------------

    def reset(self, x: float, y: float, heading: float,
              steer_angles: Sequence[float] | None = None) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad; wheels at rest and at
        angle 0, modules at ``steer_angles`` rad (default 0: all forward)."""
        self._reset_chassis(x, y, heading)
        n = self._n
        self._speed = [0.0] * (2 * n)
        self._angle = [0.0] * (2 * n)
        self._current = [0.0] * (2 * n)
        if steer_angles is not None:
            if len(steer_angles) != n:
                raise ValueError(f"expected {n} steer angles, got {len(steer_angles)}")
            self._set(self._angle, n, steer_angles)

    @property
    def currents(self) -> list[float]:
        """Average stator current of every group over the last substep, A: the drive groups
        in module order, then the steer groups."""
        return self._current

    def motor_speeds(self) -> list[float]:
        """Shaft speed of every motor group, rad/s: drive motors in module order, then steer
        motors."""
        return [w * g for w, g in zip(self._speed, self._gearing, strict=True)]

    def drive_motor_speeds(self) -> np.ndarray:
        """Drive motor shaft speed per module, rad/s."""
        return np.array(self.motor_speeds()[: self._n])

    def steer_motor_speeds(self) -> np.ndarray:
        """Steer motor shaft speed per module, rad/s."""
        return np.array(self.motor_speeds()[self._n:])

    def module_states(self) -> list[tuple[float, float]]:
        """(speed m/s, angle rad) per module as the wheel measures it: rim speed r·ω."""
        n = self._n
        return [(r * w, a) for r, w, a in zip(self._radius_list, self._speed[:n],
                                              self._angle[n:], strict=True)]

    def module_positions(self) -> list[tuple[float, float]]:
        """(distance m, angle rad) per module: r·(cumulative wheel angle), steer angle."""
        n = self._n
        return [(r * d, a) for r, d, a in zip(self._radius_list, self._angle[:n],
                                              self._angle[n:], strict=True)]

    # --- the substep ------------------------------------------------------------------------

    def _constants(self, h: float, coast: Sequence[bool] | None) -> _Constants:
        """The substep's constant coefficients, built once per (h, coast flag per group)."""
        n = self._n
        if coast is None or not any(coast):
            coast = None
            key: object = h
        else:
            coast = [bool(f) for f in coast]
            key = (h, tuple(coast))
        found = self._cache.get(key)
        if found is not None:
            return found
        if not h > 0:
            raise ValueError(f"step h must be > 0 s, got {h}")
        flags = np.zeros(2 * n, dtype=bool) if coast is None else np.array(coast)
        motors = self._motors
        ms = motors.discretize(h, flags)
        r = self._radius
        scrub = SCRUB_COMPLIANCE / self.mass
        if self.scrub_damping is not None:
            scrub += 1.0 / (self.scrub_damping * h)
        compliance = np.full(2 * n, scrub)
        compliance[0::2] = r * r * ms.mobility[:n]
        powered = ~flags
        force = np.where(powered, motors.torque_per_volt, 0.0)
        damping = np.where(powered, motors.damping, motors.loss_damping)
        rolling = self.rolling_resistance * self._normal * r
        const = _Constants(
            alpha=ms.alpha.tolist(), gain=ms.gain.tolist(), pos_speed=ms.pos_speed.tolist(),
            pos_volt=ms.pos_volt.tolist(), pos_load=ms.pos_load.tolist(),
            amps_volt=ms.amps_volt.tolist(), amps_travel=ms.amps_travel.tolist(),
            compliance=compliance.tolist(),
            weight=None if self.scrub_damping is None else (1.0 / compliance).tolist(),
            rim=r.tolist(), mobility=ms.mobility.tolist(), push=(force[:n] * h).tolist(),
            friction=((motors.coulomb[:n] + rolling) * h).tolist(),
            steer_coulomb=motors.coulomb[n:].tolist(), steer_force=force[n:].tolist(),
            steer_damping=damping[n:].tolist(),
            steer_inertia=motors.inertia[n:].tolist(), limit=self._friction_limit(h),
            held=bool(np.any(motors.coulomb[:n] + rolling > 0.0)),
        )
        if len(self._cache) > 32:
            self._cache.clear()
        self._cache[key] = const
        return const

    def step(self, h: float, drive_volts: Sequence[float], steer_volts: Sequence[float],
             drive_coast: Sequence[bool] | None = None,
             steer_coast: Sequence[bool] | None = None) -> None:
        """Advance ``h`` seconds with constant motor voltages (V, per module).

        drive_coast / steer_coast: per module, the group's windings are open (no torque, no
        current, no back-EMF braking); its voltage is ignored.
        """
        n = self._n
        if len(drive_volts) != n or len(steer_volts) != n:
            raise ValueError(f"expected {n} drive and {n} steer voltages")
        if (drive_coast is not None and len(drive_coast) != n) or (
                steer_coast is not None and len(steer_coast) != n):
            raise ValueError(f"expected {n} coast flags per motor group")
        coast = None
        if drive_coast is not None or steer_coast is not None:
            coast = [*([False] * n if drive_coast is None else map(bool, drive_coast)),
                     *([False] * n if steer_coast is None else map(bool, steer_coast))]
        self.step_groups(h, [*map(float, drive_volts), *map(float, steer_volts)], coast)

    def step_groups(self, h: float, volts: Sequence[float],
                    coast: Sequence[bool] | None = None) -> None:
        """:meth:`step` with one voltage (V) and coast flag per motor group, in the order of
        ``currents`` and ``motor_speeds()``: drive groups in module order, then steer groups."""
        n = self._n
        if len(volts) != 2 * n or (coast is not None and len(coast) != 2 * n):
            raise ValueError(f"expected {2 * n} voltages (and coast flags): drive, then steer")
        k = self._constants(h, coast)
        w0 = self._speed
        angle = self._angle  # updated in place
        # End speeds if nothing but the motors acted.
        w = [a * x + g * v for a, x, g, v in zip(k.alpha, w0, k.gain, volts, strict=True)]
        travel = [0.0] * (2 * n)
        ux, uy, uw = self._rotated_momentum(h)
        im = 1.0 / self._sqrt_m
        steer_friction = any(k.steer_coulomb)
        rows: list[Row] = []
        base: list[float] = []
        for i, (px, py) in enumerate(self._scaled_xy):
            j = n + i
            if steer_friction:
                w[j], travel[j], _ = coulomb_advance(
                    w0[j], volts[j], k.alpha[j], k.gain[j], k.mobility[j], k.pos_speed[j],
                    k.pos_volt[j], k.pos_load[j], k.steer_coulomb[i],
                    k.steer_force[i] * volts[j], k.steer_damping[i], k.steer_inertia[i], h)
            else:
                travel[j] = k.pos_speed[j] * w0[j] + k.pos_volt[j] * volts[j]  # exact
            theta = angle[j] + travel[j]
            angle[j] = theta
            c, s = math.cos(theta), math.sin(theta)
            # Scaled Jacobian rows of the contact velocity along and across the wheel.
            a0, a1, a2 = c * im, s * im, px * s - py * c
            b0, b1, b2 = -s * im, c * im, px * c + py * s
            rows.append((a0, a1, a2))
            rows.append((b0, b1, b2))
            base.append(-(a0 * ux + a1 * uy + a2 * uw))
            base.append(-(b0 * ux + b1 * uy + b2 * uw))
        push = [c * v for c, v in zip(k.push, volts, strict=False)] if k.held else k.push
        wheels = WheelRows(k.rim, w[:n], k.mobility[:n], w0[:n], push, k.friction)
        _, (zx, zy, zw), end, load = self._solve_wheels(
            rows, k.compliance, k.weight, base, wheels, k.limit, k.weight is None)
        self._advance(h, ux + zx, uy + zy, uw + zw)
        for i in range(n):
            travel[i] = (k.pos_speed[i] * w0[i] + k.pos_volt[i] * volts[i]
                         - k.pos_load[i] * load[i])
            w[i] = end[i]
            angle[i] += h * end[i]
        self._speed = w
        self._current = [av * v - at * d for av, v, at, d in zip(
            k.amps_volt, volts, k.amps_travel, travel, strict=True)]


_KINEMATICS = {
    2: SwerveDrive2Kinematics,
    3: SwerveDrive3Kinematics,
    4: SwerveDrive4Kinematics,
    6: SwerveDrive6Kinematics,
}


class KinematicSwerve:
    """Swerve with speeds proportional to duty cycles (the cheap level, pyfrc-style).

    locations: (x, y) m per module, body frame. max_speed: module speed at full duty, m/s.
    max_steer_rate: azimuth rate at full duty, rad/s. wheel_radius: m (for wheel_speed and
    wheel_angle). deadzone: pyfrc ``linear_deadzone`` width applied to the drive duties (0..1).
    drive_gearing, steer_gearing: motor turns per wheel / module turn (for the motor speeds).
    Duties are used as given (not clamped). Same state attributes and readouts as
    :class:`SwerveDrive`; currents are reported as 0.
    """

    def __init__(self, locations: Sequence[tuple[float, float]], max_speed: float,
                 max_steer_rate: float, wheel_radius: float = 0.0508, deadzone: float = 0.0,
                 drive_gearing: float = 1.0, steer_gearing: float = 1.0):
        n = len(locations)
        if n not in _KINEMATICS:
            raise ValueError(f"wpimath has swerve kinematics for 2, 3, 4 or 6 modules, not {n}")
        if not wheel_radius > 0:
            raise ValueError("wheel_radius must be > 0")
        self._n = n
        self.kinematics = _KINEMATICS[n](*(Translation2d(x, y) for x, y in locations))
        self.max_speed = float(max_speed)
        self.max_steer_rate = float(max_steer_rate)
        self.wheel_radius = float(wheel_radius)
        self.deadzone = float(deadzone)
        self.drive_gearing = float(drive_gearing)
        self.steer_gearing = float(steer_gearing)
        self.drive_currents = np.zeros(n)
        self.steer_currents = np.zeros(n)
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float,
              steer_angles: Sequence[float] | None = None) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad, modules at
        ``steer_angles`` rad (default 0)."""
        n = self._n
        self.x, self.y, self.heading = float(x), float(y), float(heading)
        self.vx = self.vy = self.omega = 0.0
        # np.ndarray, not the 1-D type numpy 2.2's stubs give np.zeros(n): reassigned below
        self.wheel_speed: np.ndarray = np.zeros(n)
        self.wheel_angle: np.ndarray = np.zeros(n)
        self.steer_rate: np.ndarray = np.zeros(n)
        self.steer_angle: np.ndarray = np.zeros(n) if steer_angles is None else np.array(
            steer_angles, dtype=float)
        if self.steer_angle.shape != (n,):
            raise ValueError(f"expected {n} steer angles")
        self.slipping = np.zeros(n, dtype=bool)

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Impose a body-frame velocity (m/s, m/s, rad/s); the next step overrides it."""
        self.vx, self.vy, self.omega = float(vx), float(vy), float(omega)

    def motor_speeds(self) -> list[float]:
        """Shaft speed of every motor group, rad/s: drive motors in module order, then steer
        motors."""
        return [*self.drive_motor_speeds().tolist(), *self.steer_motor_speeds().tolist()]

    def drive_motor_speeds(self) -> np.ndarray:
        """Drive motor shaft speed per module, rad/s."""
        return self.wheel_speed * self.drive_gearing

    def steer_motor_speeds(self) -> np.ndarray:
        """Steer motor shaft speed per module, rad/s."""
        return self.steer_rate * self.steer_gearing

    def module_states(self) -> list[tuple[float, float]]:
        """(speed m/s, angle rad) per module."""
        return list(zip((self.wheel_speed * self.wheel_radius).tolist(),
                        self.steer_angle.tolist(), strict=True))

    def module_positions(self) -> list[tuple[float, float]]:
        """(distance m, angle rad) per module."""
        return list(zip((self.wheel_angle * self.wheel_radius).tolist(),
                        self.steer_angle.tolist(), strict=True))

    def step(self, h: float, drive_duties: Sequence[float],
             steer_duties: Sequence[float]) -> None:
        """Advance ``h`` seconds: azimuths turn at duty·max_steer_rate, then modules run at
        deadzone(duty)·max_speed along their end-of-step angles; the chassis follows wpimath's
        forward kinematics and moves by the pose exponential of that twist (as odometry does)."""
        n = self._n
        if len(drive_duties) != n or len(steer_duties) != n:
            raise ValueError(f"expected {n} drive and {n} steer duties")
        if not h > 0:
            raise ValueError(f"step h must be > 0 s, got {h}")
        self.steer_rate = np.array(steer_duties, dtype=float) * self.max_steer_rate
        self.steer_angle = self.steer_angle + self.steer_rate * h
        speeds = [linear_deadzone(float(d), self.deadzone) * self.max_speed
                  for d in drive_duties]
        states = tuple(SwerveModuleState(v, Rotation2d(a))
                       for v, a in zip(speeds, self.steer_angle.tolist(), strict=True))
        chassis = self.kinematics.toChassisSpeeds(states)
        self.vx, self.vy, self.omega = chassis.vx, chassis.vy, chassis.omega
        self.wheel_speed = np.array(speeds) / self.wheel_radius
        self.wheel_angle = self.wheel_angle + self.wheel_speed * h
        self.x, self.y, self.heading = pose_exp(self.x, self.y, self.heading, self.vx * h,
                                                self.vy * h, self.omega * h)
