"""The H-drive chassis as a pure model: three motor groups pushing a rigid body through omni
wheels. No world, no I/O: voltages in, pose, velocities, wheel travel and currents out.

Geometry (robot frame: x forward, y left, origin at the robot centre, CCW positive): the left
side's wheels roll along x at y = +track/2, the right side's along x at y = −track/2, and the
centre wheel rolls along y at x = ``center_x``. Every wheel is an omni wheel: its rollers let it
slide freely across its rolling direction, so a wheel constrains nothing and only pushes along
the direction it rolls. The rim speed of each wheel is the chassis velocity at its contact
point along that direction, ``u = J · (vx, vy, ω)`` with

    J = [[1, 0, −track/2],     left
         [1, 0, +track/2],     right
         [0, 1,  center_x]]    centre

Physics per substep of ``dt`` s, with terminal voltage ``V_i`` on each of the ``n_i`` motors of
group i (gearing ``G_i`` motor turns per wheel turn, wheel radius ``r_i``, motor constants R,
Kv, Kt):

- DC motor through its gearbox, rotor and wheel inertia neglected: rim force
  ``F_i = n_i·G_i·Kt·(V_i − G_i·u_i/(r_i·Kv))/(R·r_i) = a_i·V_i − b_i·u_i``. A coasting group
  (controller's H-bridge open) has ``a_i = b_i = 0``.
- Rigid chassis of mass m and yaw inertia I: generalized force ``Q = Jᵀ·F``, so
  ``diag(m, m, I)·dv/dt = Jᵀ·(a∘V) − Jᵀ·diag(b)·J·v`` in the robot frame.
- No traction limit: the wheels never slip on the carpet, whatever the force (an H-drive's
  omni wheels do slip when pushed hard; this model does not).
- Integration, semi-implicit: the velocities take one backward-Euler step (the motors'
  back-EMF damping solved implicitly, a 3×3 symmetric linear solve, stable at any substep),
  then the pose advances with the new velocities: the field-frame velocity is the new body
  velocity at the old heading, the heading turns by ``ω·dt``, and the body velocity is
  re-expressed at the new heading (that rotation is the Coriolis term of a rotating frame).
  Each wheel's travel grows by its rim speed × dt.
- Stator current of a group ``I_i = n_i·(V_i − G_i·u_i/(r_i·Kv))/R`` with the new rim speeds
  (the ones its force was computed with), 0 when coasting.

The steady state of the backward-Euler step is the exact one: with constant voltages the rim
speeds settle at ``u_i = V_i·Kv·r_i/G_i`` (a motor's free speed at that voltage), whatever the
mass and inertia.

The battery: :func:`bus_voltage` solves the bus with the groups as loads linear in it (each
``d·V_bus`` on its terminals), seen through a Thevenin source, before the controllers run.

    cim = motor_by_name("CIM")
    params = HDriveParams(mass=30.0, moment_of_inertia=1.5, track_width=0.55, center_x=0.0,
                          groups=(WheelGroup(cim, 2, 10.71, 0.0508),
                                  WheelGroup(cim, 2, 10.71, 0.0508),
                                  WheelGroup(cim, 1, 8.0, 0.0508)))
    model = HDriveModel(params)
    model.reset(2.0, 4.0, 0.0)
    currents = model.step(0.005, volts=(6.0, 6.0, 0.0), coasting=(False, False, False))
    model.vx, model.rim_speeds(), model.travel
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from simserver.models.battery import Source
from simserver.models.motor import MotorSpec

SIDES = ("left", "right", "center")
"""The motor groups, in the order of every per-group sequence here."""


@dataclass(frozen=True)
class WheelGroup:
    """The motors of one motor output and the wheels they turn: motor constants, how many
    motors (``count``), ``gearing`` (motor turns per wheel turn) and the wheel ``radius``, m."""

    spec: MotorSpec
    count: int
    gearing: float
    radius: float

    @property
    def force_per_volt(self) -> float:
        """``a``: rim force per terminal volt at zero speed, N/V."""
        return self.count * self.gearing * self.spec.kt / (self.spec.R * self.radius)

    @property
    def damping(self) -> float:
        """``b``: rim force lost per m/s of rim speed to back-EMF, N·s/m."""
        return self.force_per_volt * self.gearing / (self.radius * self.spec.kv)

    def motor_speed(self, rim_speed: float) -> float:
        """Motor shaft speed, rad/s, at rim speed ``rim_speed`` m/s."""
        return rim_speed * self.gearing / self.radius

    def free_speed(self, volts: float) -> float:
        """Rim speed, m/s, the group settles at with ``volts`` on its terminals."""
        return volts * self.spec.kv * self.radius / self.gearing


@dataclass(frozen=True)
class HDriveParams:
    """An H-drive. mass: kg; moment_of_inertia: yaw, kg·m²; track_width: left to right wheel
    distance, m; center_x: the centre wheel's contact point forward of the robot centre, m;
    groups: the left, right and centre :class:`WheelGroup` (:data:`SIDES` order)."""

    mass: float
    moment_of_inertia: float
    track_width: float
    center_x: float
    groups: tuple[WheelGroup, WheelGroup, WheelGroup]


def bus_voltage(source: Source, groups: Sequence[WheelGroup], duty: Sequence[float],
                motor_speeds: Sequence[float]) -> float:
    """The bus voltage, V, with each group's motors at ``duty`` × the bus (before any current
    limit) drawing ``n·d·(d·V − ω/Kv)/R`` of supply current, seen through ``source``. Never
    below 0."""
    g = i0 = 0.0
    for grp, d, w in zip(groups, duty, motor_speeds, strict=True):
        spec = grp.spec
        g += grp.count * d * d / spec.R
        i0 -= grp.count * d * w / (spec.kv * spec.R)
    return max(0.0, (source.open_voltage - source.resistance * i0)
               / (1.0 + source.resistance * g))


class HDriveModel:
    """The state and step of an H-drive chassis (see the module docstring for the physics).

    State: pose ``x``, ``y`` (m, field), ``heading`` (rad); body velocities ``vx``, ``vy``
    (m/s, robot frame) and ``omega`` (rad/s); ``travel``: each wheel group's rim travel since
    reset, m (:data:`SIDES` order).
    """

    def __init__(self, params: HDriveParams):
        self.params = params
        self._a = [g.force_per_volt for g in params.groups]
        self._b = [g.damping for g in params.groups]
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """At rest at (x m, y m, heading rad), travel zeroed."""
        self.x, self.y, self.heading = x, y, heading
        self.vx = self.vy = self.omega = 0.0
        self.travel = [0.0, 0.0, 0.0]

    def rim_speeds(self) -> tuple[float, float, float]:
        """Rim speed of each wheel group, m/s (:data:`SIDES` order)."""
        h = self.params.track_width / 2.0
        return (self.vx - self.omega * h, self.vx + self.omega * h,
                self.vy + self.omega * self.params.center_x)

    def motor_speeds(self) -> list[float]:
        """Shaft speed of each group's motors, rad/s."""
        return [g.motor_speed(u) for g, u in zip(self.params.groups, self.rim_speeds(),
                                                   strict=True)]

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Take a body velocity (m/s, m/s, rad/s, robot frame) an impact gave the chassis."""
        self.vx, self.vy, self.omega = vx, vy, omega

    def place(self, x: float, y: float) -> None:
        """Move the centre to (x, y) m without turning it. The wheels roll along with the
        chassis (no slip): each one's travel takes the move's component along its rolling
        direction."""
        c, s = math.cos(self.heading), math.sin(self.heading)
        dx, dy = x - self.x, y - self.y
        forward, left = dx * c + dy * s, -dx * s + dy * c
        self.travel[0] += forward
        self.travel[1] += forward
        self.travel[2] += left
        self.x, self.y = x, y

    def step(self, dt: float, volts: Sequence[float], coasting: Sequence[bool]) -> list[float]:
        """Advance ``dt`` s with ``volts`` on each group's motors (V, the same on each motor
        of a group) and the groups in ``coasting`` left unpowered. Returns each group's total
        stator current, A."""
        p = self.params
        h, cx, m, inertia = p.track_width / 2.0, p.center_x, p.mass, p.moment_of_inertia
        (al, ar, ac), (bl, br, bc) = (
            [0.0 if off else k for k, off in zip(coef, coasting, strict=True)]
            for coef in (self._a, self._b))
        fl, fr, fc = al * volts[0], ar * volts[1], ac * volts[2]  # N, at standstill
        # Backward Euler: (M + dt·Jᵀ·diag(b)·J)·v' = M·v + dt·Jᵀ·(a∘V). The matrix is symmetric
        # with no vx-vy term, so ω' comes from its Schur complement, then vx' and vy'.
        k11, k13 = m + dt * (bl + br), dt * h * (br - bl)
        k22, k23 = m + dt * bc, dt * bc * cx
        k33 = inertia + dt * (h * h * (bl + br) + bc * cx * cx)
        r1 = m * self.vx + dt * (fl + fr)
        r2 = m * self.vy + dt * fc
        r3 = inertia * self.omega + dt * (h * (fr - fl) + cx * fc)
        omega = ((r3 - k13 * r1 / k11 - k23 * r2 / k22)
                 / (k33 - k13 * k13 / k11 - k23 * k23 / k22))
        vx, vy = (r1 - k13 * omega) / k11, (r2 - k23 * omega) / k22
        rims = (vx - omega * h, vx + omega * h, vy + omega * cx)
        c, s = math.cos(self.heading), math.sin(self.heading)
        self.x += (vx * c - vy * s) * dt
        self.y += (vx * s + vy * c) * dt
        turn = omega * dt
        self.heading += turn
        ct, st = math.cos(turn), math.sin(turn)
        self.vx, self.vy, self.omega = vx * ct + vy * st, -vx * st + vy * ct, omega
        currents = []
        for i, (grp, u, volt) in enumerate(zip(p.groups, rims, volts, strict=True)):
            self.travel[i] += u * dt
            spec = grp.spec
            amps = grp.count * (volt - grp.motor_speed(u) / spec.kv) / spec.R
            currents.append(0.0 if coasting[i] else amps)
        return currents
