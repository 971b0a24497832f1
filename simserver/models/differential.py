"""Differential (tank) drivetrain at three fidelity levels.

All levels share the chassis bookkeeping: wheel distances and speeds per side (no longitudinal
slip: a wheel's ground speed is its rim speed), a body-frame sideways velocity held at zero by
wheel friction until the turn needs more than ``lateral_friction · g`` of centripetal
acceleration, and the pose advanced along the arc the two wheel distances describe.

Levels (what moves the wheels):

- ``KinematicLongitudinal``: speed = deadzone(duty) · max_speed, instantly (pyfrc
  TwoMotorDrivetrain / FourMotorDrivetrain).
- ``CharacterizedLongitudinal``: per side ``V = kS·sgn(v) + kV·v + kA·dv/dt`` with
  ``V = duty · V_bus`` (pyfrc TankModel), solved exactly per substep including stiction.
- ``PhysicalLongitudinal``: motor torque → wheel force → chassis mass and moment of inertia
  (RoboSim §10), with the battery's internal resistance folded into the same linear system so
  sag is exact within a substep. Solved exactly (``models.linear.AffineStep``). The ideal
  machine: no losses, no wheel inertia, rigid traction (``[drivetrain.losses] ideal = true``;
  also the model under winding inductance, ``InductiveLongitudinal``).

The default physical tank, with losses, wheel inertia and traction-limited tires (its wheels
slip), is :class:`simserver.models.tank_traction.TractionDrive`, a DifferentialDrive too.

Usage::

    drive = DifferentialDrive(params, PhysicalLongitudinal(params))
    drive.reset(x=2.0, y=4.0, heading=0.0)
    elec = drive.step(0.005, duty_left=0.5, duty_right=0.5, source=battery.source())
    drive.state.x, elec.bus_voltage, elec.current_left
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from simserver.models.battery import Source
from simserver.models.linear import AffineStep, expm
from simserver.models.losses import coulomb_step
from simserver.models.motor import MotorSpec

GRAVITY = 9.80665  # m/s²


def robosim_moment_of_inertia(mass: float, length: float, track_width: float) -> float:
    """RoboSim's yaw inertia estimate, kg·m²: m/12 · ((0.9·length)² + track_width²)."""
    return mass / 12.0 * ((0.9 * length) ** 2 + track_width**2)


def linear_deadzone(value: float, deadzone: float) -> float:
    """pyfrc's linear_deadzone: 0 inside ±deadzone, rescaled linearly to ±1 outside."""
    if abs(value) <= deadzone:
        return 0.0
    return math.copysign((abs(value) - deadzone) / (1.0 - deadzone), value)


@dataclass(frozen=True)
class DifferentialParams:
    """Physical description of a tank drivetrain (SI units).

    mass: kg. moment_of_inertia: yaw inertia, kg·m². track_width, wheel_radius: m.
    gearing: motor turns per wheel turn. motors_per_side: motors geared to each side.
    lateral_friction: sideways friction coefficient of the wheels (dimensionless).
    inductance: winding inductance per motor, H (0: currents follow the voltage instantly).
    """

    mass: float
    moment_of_inertia: float
    track_width: float
    wheel_radius: float
    gearing: float
    motor: MotorSpec
    motors_per_side: int
    lateral_friction: float = 1.0
    inductance: float = 0.0

    def __post_init__(self) -> None:
        for name in ("mass", "moment_of_inertia", "track_width", "wheel_radius", "gearing"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        if self.motors_per_side < 1:
            raise ValueError("motors_per_side must be ≥ 1")


class DriveState:
    """Mutable drivetrain state.

    x, y: m, field frame. heading: rad, CCW. s_left, s_right: wheel distance, m. v_left,
    v_right: wheel ground speed, m/s. v_lat: body-frame sideways velocity (y, left), m/s.
    """

    __slots__ = ("heading", "i_left", "i_right", "s_left", "s_right", "v_lat", "v_left",
                 "v_right", "x", "y")

    def __init__(self, x: float = 0.0, y: float = 0.0, heading: float = 0.0):
        self.x, self.y, self.heading = x, y, heading
        self.s_left = self.s_right = 0.0
        self.v_left = self.v_right = 0.0
        self.v_lat = 0.0
        self.i_left = self.i_right = 0.0  # winding current per motor, A (inductive model)


@dataclass
class Electrical:
    """Electrical result of a substep, at its end.

    bus_voltage: V at the battery terminals. current_left/right: stator current of all motors
    on a side, A (negative when braking). supply_current: drawn from the battery by both sides, A.
    """

    bus_voltage: float
    current_left: float
    current_right: float
    supply_current: float


NO_COAST = (False, False)


def side_currents(p: DifferentialParams, gearing: float, duty_l: float, duty_r: float,
                  v_l: float, v_r: float, source: Source,
                  coast: tuple[bool, bool] = NO_COAST) -> Electrical:
    """Solve bus voltage and currents exactly for given wheel speeds (battery sag included).

    Per motor ``I = (d·V - k·v)/R`` with ``k = G/(r·Kv)``; the battery gives
    ``V = V_oc - R_s·n·Σ d·I``, linear in V, solved in closed form and clamped at 0. A side in
    ``coast`` (zero output, windings open) carries no current.
    """
    m = p.motor
    n = p.motors_per_side
    k = gearing / (p.wheel_radius * m.kv)
    g = source.resistance * n / m.R
    denom = 1.0 + g * (duty_l * duty_l + duty_r * duty_r)
    v_bus = (source.open_voltage + g * k * (duty_l * v_l + duty_r * v_r)) / denom
    if v_bus < 0.0:
        v_bus = 0.0
    i_l = 0.0 if coast[0] else (duty_l * v_bus - k * v_l) / m.R
    i_r = 0.0 if coast[1] else (duty_r * v_bus - k * v_r) / m.R
    supply = n * (duty_l * i_l + duty_r * i_r)
    return Electrical(v_bus, n * i_l, n * i_r, supply)


def inductive_currents(p: DifferentialParams, duty_l: float, duty_r: float, st: DriveState,
                       source: Source) -> Electrical:
    """Bus voltage and currents when the winding currents are state (inductive model)."""
    n = p.motors_per_side
    supply = n * (duty_l * st.i_left + duty_r * st.i_right)
    return Electrical(max(0.0, source.open_voltage - source.resistance * supply),
                      n * st.i_left, n * st.i_right, supply)


class Longitudinal(Protocol):
    """What advances the wheel speeds and distances of both sides over one substep."""

    def advance(self, st: DriveState, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        """Advance st.s_left/right and st.v_left/right by ``h`` seconds. ``coast``: a side at
        zero output with its windings open (no motor force at all)."""
        ...


class KinematicLongitudinal:
    """Wheel speed proportional to duty cycle (pyfrc's kinematic drivetrains).

    max_speed: wheel speed at full duty, m/s. deadzone: pyfrc linear_deadzone width (0..1).
    Battery sag does not slow this level; currents are still computed from the motor model.
    """

    def __init__(self, max_speed: float, deadzone: float = 0.0):
        self.max_speed = max_speed
        self.deadzone = deadzone

    def advance(self, st: DriveState, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        st.v_left = linear_deadzone(duty_l, self.deadzone) * self.max_speed
        st.v_right = linear_deadzone(duty_r, self.deadzone) * self.max_speed
        st.s_left += st.v_left * h
        st.s_right += st.v_right * h


@dataclass(frozen=True)
class SideGains:
    """Feedforward gains of one side: kv V·s/m, ka V·s²/m, ks V."""

    kv: float
    ka: float
    ks: float = 0.0


def characterized_side(v0: float, voltage: float, g: SideGains, h: float) -> tuple[float, float]:
    """Exact speed and distance change of one side over ``h`` under ``voltage`` (constant):
    ``ka·dv/dt = V - ks·sgn(v) - kv·v`` with stiction (``losses.coulomb_step``).
    Returns (v_end m/s, distance m)."""
    return coulomb_step(v0, voltage, g.kv, g.ks, g.ka, h)


class CharacterizedLongitudinal:
    """Measured kV/kA/kS per side (pyfrc TankModel semantics), exact per substep.

    The applied voltage is duty × bus voltage at the start of the substep (sag felt with a
    zero-order hold of one substep).
    """

    def __init__(self, params: DifferentialParams, left: SideGains, right: SideGains):
        self.params = params
        self.left = left
        self.right = right

    def advance(self, st: DriveState, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        v_bus = side_currents(self.params, gearing, duty_l, duty_r, st.v_left, st.v_right,
                              source).bus_voltage
        st.v_left, dl = characterized_side(st.v_left, duty_l * v_bus, self.left, h)
        st.v_right, dr = characterized_side(st.v_right, duty_r * v_bus, self.right, h)
        st.s_left += dl
        st.s_right += dr


class PhysicalLongitudinal:
    """Motor torque → wheel force → rigid chassis, exact for constant duty over a substep.

    With side forces ``F = a·(d·V_bus - k·v)`` (a = n·G·Kt/(r·R), k = G/(r·Kv)), the bus
    voltage affine in the wheel speeds, and ``m·dv/dt = F_l + F_r``,
    ``J·dω/dt = (F_r - F_l)·w``, the wheel speeds obey ``dv/dt = A v + c``. The one-step map is
    cached per (duties, gearing, source, h): it is rebuilt only when an input changes.
    """

    def __init__(self, params: DifferentialParams):
        self.params = params
        w = params.track_width / 2.0
        self._p = 1.0 / params.mass + w * w / params.moment_of_inertia
        self._q = 1.0 / params.mass - w * w / params.moment_of_inertia
        self._key: tuple[object, ...] = ()
        self._step: AffineStep | None = None
        self._dead_key: tuple[object, ...] = ()
        self._dead_step: AffineStep | None = None

    def _build(self, h: float, duty_l: float, duty_r: float, gearing: float, source: Source,
               dead_bus: bool, coast: tuple[bool, bool]) -> AffineStep:
        p = self.params
        m = p.motor
        n = p.motors_per_side
        a = n * gearing * m.kt / (p.wheel_radius * m.R)
        k = gearing / (p.wheel_radius * m.kv)
        if dead_bus:  # battery collapsed to 0 V: motors only brake
            alpha = bl = br = 0.0
        else:
            g = source.resistance * n / m.R
            denom = 1.0 + g * (duty_l * duty_l + duty_r * duty_r)
            alpha = source.open_voltage / denom
            bl = g * k * duty_l / denom
            br = g * k * duty_r / denom
        # Side forces F = a * (K v + f0), K = d β^T - k I, f0 = d α; a coasting side (d = 0)
        # has no back-EMF braking either.
        kl, kr = (0.0 if coast[0] else k), (0.0 if coast[1] else k)
        k00, k01 = duty_l * bl - kl, duty_l * br
        k10, k11 = duty_r * bl, duty_r * br - kr
        f0, f1 = a * duty_l * alpha, a * duty_r * alpha
        pp, qq = self._p, self._q
        return AffineStep(
            a * (pp * k00 + qq * k10), a * (pp * k01 + qq * k11),
            a * (qq * k00 + pp * k10), a * (qq * k01 + pp * k11),
            pp * f0 + qq * f1, qq * f0 + pp * f1, h,
        )

    def advance(self, st: DriveState, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        key = (h, duty_l, duty_r, gearing, source.open_voltage, source.resistance, coast)
        elec = side_currents(self.params, gearing, duty_l, duty_r, st.v_left, st.v_right, source,
                             coast)
        if elec.bus_voltage > 0.0:
            if key != self._key or self._step is None:
                self._step = self._build(h, duty_l, duty_r, gearing, source, False, coast)
                self._key = key
            step = self._step
        else:
            if key != self._dead_key or self._dead_step is None:
                self._dead_step = self._build(h, duty_l, duty_r, gearing, source, True, coast)
                self._dead_key = key
            step = self._dead_step
        st.s_left, st.s_right, st.v_left, st.v_right = step.apply(
            st.s_left, st.s_right, st.v_left, st.v_right
        )


class InductiveLongitudinal:
    """The physical model with winding inductance: per motor ``L·di/dt = d·V_bus − R·i − k·v``,
    side force ``F = n·G·Kt·i/r``, bus ``V_bus = V_oc − R_s·n·Σ d·i``. Still linear in
    (v_left, v_right, i_left, i_right), so it is integrated exactly: the matrix exponential of
    the augmented system, cached per (duties, gearing, source, coast, h). The electrical time
    constant L/R is usually far below the substep; the exact step stays stable regardless.
    """

    def __init__(self, params: DifferentialParams):
        if params.inductance <= 0.0:
            raise ValueError("InductiveLongitudinal needs inductance > 0")
        self.params = params
        w = params.track_width / 2.0
        self._p = 1.0 / params.mass + w * w / params.moment_of_inertia
        self._q = 1.0 / params.mass - w * w / params.moment_of_inertia
        self._key: tuple[object, ...] = ()
        self._phi: np.ndarray | None = None

    def _build(self, h: float, d: tuple[float, float], gearing: float, source: Source,
               coast: tuple[bool, bool]) -> np.ndarray:
        p = self.params
        m = p.motor
        n = p.motors_per_side
        big_l = p.inductance
        force = n * gearing * m.kt / p.wheel_radius  # N per A of each motor
        k = gearing / (p.wheel_radius * m.kv)  # V of back-EMF per m/s
        a = np.zeros((7, 7))  # state: s_l, s_r, v_l, v_r, i_l, i_r, 1
        a[0, 2] = a[1, 3] = 1.0
        pq = ((self._p, self._q), (self._q, self._p))
        for row in (0, 1):
            for col in (0, 1):
                a[2 + row, 4 + col] = pq[row][col] * force
        for side in (0, 1):
            if coast[side]:
                continue  # open windings: the current stays 0
            a[4 + side, 2 + side] -= k / big_l
            a[4 + side, 4 + side] -= m.R / big_l
            for other in (0, 1):
                if not coast[other]:
                    a[4 + side, 4 + other] -= d[side] * source.resistance * n * d[other] / big_l
            a[4 + side, 6] = d[side] * source.open_voltage / big_l
        return expm(a * h)

    def advance(self, st: DriveState, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        key = (h, duty_l, duty_r, gearing, source.open_voltage, source.resistance, coast)
        if key != self._key or self._phi is None:
            self._phi = self._build(h, (duty_l, duty_r), gearing, source, coast)
            self._key = key
        x = self._phi @ np.array([st.s_left, st.s_right, st.v_left, st.v_right,
                                  0.0 if coast[0] else st.i_left,
                                  0.0 if coast[1] else st.i_right, 1.0])
        st.s_left, st.s_right, st.v_left, st.v_right = (float(v) for v in x[:4])
        st.i_left, st.i_right = float(x[4]), float(x[5])


class DifferentialDrive:
    """A tank drivetrain: a longitudinal model plus shared chassis kinematics."""

    def __init__(self, params: DifferentialParams, longitudinal: Longitudinal):
        self.params = params
        self.longitudinal = longitudinal
        self.state = DriveState()
        self.gearing = params.gearing
        self.coast = NO_COAST  # per side: zero output with the windings open

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad; zero the wheels."""
        self.state = DriveState(x, y, heading)

    @property
    def omega(self) -> float:
        """Yaw rate, rad/s (CCW)."""
        st = self.state
        return (st.v_right - st.v_left) / self.params.track_width

    @property
    def v_forward(self) -> float:
        """Body-frame forward speed, m/s."""
        return 0.5 * (self.state.v_left + self.state.v_right)

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Impose a body-frame velocity (after an impact); wheels follow (no rolling slip)."""
        w = 0.5 * self.params.track_width
        self.state.v_left = vx - w * omega
        self.state.v_right = vx + w * omega
        self.state.v_lat = vy

    def step(self, h: float, duty_left: float, duty_right: float, source: Source) -> Electrical:
        """Advance ``h`` seconds with duty cycles in [-1, 1] applied to each side."""
        st = self.state
        p = self.params
        s_l, s_r = st.s_left, st.s_right
        self.longitudinal.advance(st, h, duty_left, duty_right, self.gearing, source, self.coast)
        omega = (st.v_right - st.v_left) / p.track_width
        vx = 0.5 * (st.v_left + st.v_right)
        if st.v_lat != 0.0 or abs(omega * vx) > p.lateral_friction * GRAVITY:
            # The wheels roll on with the forward speed the turn gave them: the pose moves
            # with the end-of-step body velocity, as its sideways part does (mixing the
            # forward travel from before the turn with the sideways speed after it moved the
            # robot faster than it goes, energy from nowhere).
            couple = self._lateral(h, omega, vx) * h
            st.s_left += couple
            st.s_right += couple
        ds = 0.5 * (st.s_left - s_l + st.s_right - s_r)
        dtheta = (st.s_right - s_r - (st.s_left - s_l)) / p.track_width
        self._move(ds, st.v_lat * h, dtheta)
        if isinstance(self.longitudinal, InductiveLongitudinal):
            return inductive_currents(p, duty_left, duty_right, st, source)
        return side_currents(p, self.gearing, duty_left, duty_right, st.v_left, st.v_right,
                             source, self.coast)

    def _lateral(self, h: float, omega: float, vx: float) -> float:
        """Sideways skid: the body turns under the velocity; friction brings v_lat back to 0.

        The turn is exact: the body-frame velocity (vx, v_lat) rotates by -omega·h, keeping
        its magnitude (a first-order step grew it by sqrt(1 + (omega·h)²) every substep,
        which at long substeps or fast spins fed the skid until it overflowed). Returns the
        forward speed the turn added to the wheels, m/s."""
        st = self.state
        c, s = math.cos(omega * h), math.sin(omega * h)
        v_lat = st.v_lat * c - vx * s
        couple = vx * (c - 1.0) + st.v_lat * s
        st.v_left += couple
        st.v_right += couple
        limit = self.params.lateral_friction * GRAVITY * h
        st.v_lat = 0.0 if abs(v_lat) <= limit else v_lat - math.copysign(limit, v_lat)
        return couple

    def _move(self, dx: float, dy: float, dtheta: float) -> None:
        """Apply a body-frame twist (dx, dy, dtheta) as Pose2d.exp does."""
        st = self.state
        if abs(dtheta) < 1e-9:
            s, c = 1.0 - dtheta * dtheta / 6.0, 0.5 * dtheta
        else:
            s, c = math.sin(dtheta) / dtheta, (1.0 - math.cos(dtheta)) / dtheta
        bx, by = dx * s - dy * c, dx * c + dy * s
        ch, sh = math.cos(st.heading), math.sin(st.heading)
        st.x += bx * ch - by * sh
        st.y += bx * sh + by * ch
        st.heading += dtheta
