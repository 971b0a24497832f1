"""Tire contact and chassis dynamics shared by the holonomic drivetrains (swerve, mecanum).

A drivetrain is a planar rigid body (mass m kg, yaw inertia J kg·m²) standing on wheels. Each
wheel is an inertia driven by DC motors through a gearing (:class:`GearedMotors`), and touches
the carpet at a contact whose impulse obeys a Coulomb limit. One substep of ``h`` seconds:

1. The body-frame velocity of the free body is rotated by ``-omega·h`` (the body frame turns
   under it), so a spinning robot that slides with no grip keeps a straight course in the field.
2. Every motor-driven inertia advances exactly under its constant voltage and a constant
   ground force (exponential Euler; :meth:`GearedMotors.discretize`). Its end speed is then
   affine in the unknown ground impulse: ``ω' = ω_free − mobility·r·P``.
3. The contacts are solved at velocity level (:func:`contact_impulses`): impulses ``P`` such that
   after the step the contact-point velocity equals the rim velocity along each constrained
   direction. With the contact Jacobian ``J`` (rows × 3: body twist → contact velocity
   component) and ``M⁻¹ = diag(1/m, 1/m, 1/J)``::

       (J M⁻¹ Jᵀ + D) P = target − J v        D = diag(r²·mobility on wheel rows, c on scrub rows)

   one linear solve. A contact whose impulse exceeds ``μ·N·h`` (N = m·g / wheels) slides; the
   sliding impulses are found so that each opposes the slip it leaves (Coulomb) with magnitude
   exactly ``μ·N·h``, and the sticking contacts are solved again given them. Every row of one
   chassis shares the 3 columns of J, so with a compliance on every row each of those solves
   is a 3 × 3 one (:class:`ReducedContacts`, the Woodbury identity); rigid rows take the whole
   matrix (:class:`DenseContacts`).
4. The pose advances by the pose exponential of the end-of-step body twist, as WPILib odometry
   does with module deltas; when nothing slides and the contacts are rigid, odometry fed every
   substep reproduces the pose.

Energy: the sticking impulse minimises ``Φ(P) = ½ P·A P − rhs·P``, a kinetic-energy function
whose gradient is the constraint violation, so a step never adds energy; a last guard shrinks
any sliding solution that would along its ray. Hence a coasting or braking robot never gains
energy. The guard acts when the few damped solves have not found the sliding directions: in
random collision states it never did with the default scrub damping (0 of 29 000 sliding
substeps) but did in 8 % of them with rigid scrub rows, whose nearly dependent rows make
the contacts strongly coupled.

Swerve scrub rows (across each wheel) carry a compliance ``c``: ``1/(scrub_damping·h)`` for a
tire whose sideways force grows with its sideways slip speed (the default, see swerve.py), and
always a tiny ``1e-9/m``. Four or more modules make the scrub rows redundant (statically
indeterminate): the tiny term picks the internal "squeeze" of least Σ P² and bends the
constraints by ≈1e-11 m/s. Rigid scrub rows (``scrub_damping=None``) are exact, but modules a
fraction of a degree off a common instant centre then bind: their internal forces exceed μ·N
and they skid.

Typical friction coefficients are in :data:`WHEEL_FRICTION`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul, truediv
from typing import NamedTuple

import numpy as np

from simserver.models.differential import GRAVITY
from simserver.models.losses import IDEAL, JointMotors, Losses, coulomb_step
from simserver.models.motor import MotorSpec

#: Typical static friction coefficients of FRC wheels on field carpet (dimensionless).
#: Planning values, not measurements: vendor pages and teams' tables give 1.19 for AndyMark blue
#: nitrile roughtop, about 1.0 for Colson Performa and 0.7 (static) / 0.6 (kinetic) for AndyMark
#: mecanum rollers, while maple-sim uses 1.54 (blue nitrile), 1.43 (SDS MK4 neoprene) and 0.90
#: (Colson). Carpet differs between venues and wears, and tread is directional (Team 159's tilt
#: tests, Chief Delphi 2018): expect ±20 %, and measure yours (a fish scale on a loaded robot).
WHEEL_FRICTION: dict[str, float] = {
    "colson": 1.0,
    "blue_nitrile": 1.2,
    "neoprene": 1.3,
    "mecanum": 0.7,
}

#: Compliance always added to swerve scrub rows, times the mass (m/s per N·s, times kg): picks
#: the least-squares internal squeeze of redundant modules and keeps the matrix regular.
SCRUB_COMPLIANCE = 1e-9


def wheel_inertia_estimate(wheel_radius: float, wheel_mass: float, rotor_inertia: float = 0.0,
                           gearing: float = 1.0, motor_count: int = 1) -> float:
    """Inertia felt at a wheel, kg·m²: a uniform disc ``m·r²/2`` plus the motors' rotors
    reflected through the gearing, ``count·G²·J_rotor``.

    wheel_radius: m. wheel_mass: kg. rotor_inertia: kg·m² per motor (from the vendor; the
    rotors usually dominate, 0 ignores them). gearing: motor turns per wheel turn.
    """
    return 0.5 * wheel_mass * wheel_radius**2 + motor_count * gearing**2 * rotor_inertia


def pose_exp(x: float, y: float, heading: float, dx: float, dy: float,
             dtheta: float) -> tuple[float, float, float]:
    """Apply a body-frame twist (dx m, dy m, dtheta rad) to a field pose as ``Pose2d.exp`` does.

    Returns (x m, y m, heading rad). Uses ``(1 − cos θ)/θ = 2·sin²(θ/2)/θ``: wpimath's
    textbook form loses digits for small turns (1e-10 m on a 2 cm step at θ = 1e-8 rad).
    """
    if abs(dtheta) < 1e-9:
        s, c = 1.0 - dtheta * dtheta / 6.0, 0.5 * dtheta
    else:
        half = math.sin(0.5 * dtheta)
        s, c = math.sin(dtheta) / dtheta, 2.0 * half * half / dtheta
    bx, by = dx * s - dy * c, dx * c + dy * s
    ch, sh = math.cos(heading), math.sin(heading)
    return x + bx * ch - by * sh, y + bx * sh + by * ch, heading + dtheta


@dataclass(frozen=True)
class MotorStep:
    """Exact one-substep map of a group of geared inertias, per element (arrays of one length).

    Under a constant voltage V and a constant load angular impulse L (N·m·s: the ground's
    r·P plus any Coulomb friction impulse), with b the element's damping (powered or coasting):

        ω'  = alpha·ω + gain·V − mobility·L                      rad/s
        Δθ  = pos_speed·ω + pos_volt·V − pos_load·L              rad, exact
        I   = amps_volt·V − amps_travel·Δθ                       A, time average of all motors

    The current is ``n·(V − G·ω̄/Kv)/R`` with ω̄ = Δθ/h the exact mean speed: losses do not
    change it (:mod:`simserver.models.losses`). A coasting element (open windings) has
    gain = pos_volt = amps_volt = amps_travel = 0 and only its loss damping (alpha = 1 with
    none). ``current_scale`` (A per N·m·s) gives the same current from the impulse when the
    element has no losses: ``I = current_scale·(inertia·(ω' − ω) + L)``.
    """

    alpha: np.ndarray  # 1
    gain: np.ndarray  # rad/s per V
    mobility: np.ndarray  # rad/s per N·m·s (1/kg·m²)
    pos_speed: np.ndarray  # s
    pos_volt: np.ndarray  # rad per V
    pos_load: np.ndarray  # rad per N·m·s: (1 − e^−x)/b, h/(2J) with no damping
    amps_volt: np.ndarray  # A per V
    amps_travel: np.ndarray  # A per rad of travel in the substep
    current_scale: np.ndarray  # A per N·m·s (lossless elements)


class GearedMotors:
    """Like elements, each an inertia turned by ``count`` identical DC motors through a gearing,
    with optional losses (:class:`~simserver.models.losses.Losses`, in N·m and N·m·s/rad at
    the driven inertia; default none).

    Per element (:mod:`simserver.models.losses`, the joint being the driven inertia's angle):
    ``J·dω/dt = c·V − b·ω − F_c·sgn(ω) − τ_load`` with ``c = η·n·G·Kt/R`` (N·m/V) and
    ``b = η·n·G²·Kt/(R·Kv) + b_loss`` (N·m·s/rad) powered, ``b_loss`` (free-current load and
    viscous friction) coasting; ω the speed of the driven inertia (rad/s). The Coulomb
    friction F_c (``coulomb``, N·m) is not in the linear map: callers add it as a load impulse
    (:func:`coulomb_advance`, or the contact solve). Arrays are in element order;
    construction checks the shapes once.
    """

    def __init__(self, motors: Sequence[MotorSpec], counts: Sequence[int],
                 gearings: Sequence[float], inertias: Sequence[float],
                 losses: Sequence[Losses] | None = None):
        if losses is None:
            losses = [IDEAL] * len(motors)
        if not len(motors) == len(counts) == len(gearings) == len(inertias) == len(losses):
            raise ValueError("motors, counts, gearings, inertias and losses must have one "
                             "length")
        for count, gearing, inertia in zip(counts, gearings, inertias, strict=True):
            if count < 1 or not gearing > 0 or not inertia > 0:
                raise ValueError("motor counts must be ≥ 1, gearings and inertias > 0")
        joints = [JointMotors(m, c, g, lo)
                  for m, c, g, lo in zip(motors, counts, gearings, losses, strict=True)]
        n = np.array(counts, dtype=float)
        g = np.array(gearings, dtype=float)
        kt = np.array([m.kt for m in motors])
        r = np.array([m.R for m in motors])
        kv = np.array([m.kv for m in motors])
        eff = np.array([lo.efficiency for lo in losses])
        emf = eff * (n * g * g * kt / (r * kv))
        self.gearing = g
        self.inertia = np.array(inertias, dtype=float)  # kg·m²
        self.loss_damping = np.array([j.loss_damping for j in joints])  # N·m·s/rad
        self.coulomb = np.array([j.coulomb for j in joints])  # N·m
        self.damping = emf + self.loss_damping  # N·m·s/rad, powered
        self.speed_per_volt = kv / g * (emf / self.damping)  # rad/s per V: c/b
        self.torque_per_volt = eff * n * g * kt / r  # c, N·m per V at rest
        self.torque_per_amp = eff * g * kt  # N·m per A of the group's total current
        self.amps_per_volt = n / r  # A per V
        self.amps_per_speed = n * g / (r * kv)  # A per rad/s of the driven inertia
        self.lossless = np.array([lo.ideal for lo in losses])

    def discretize(self, h: float, coast: np.ndarray) -> MotorStep:
        """Exact coefficients for a substep of ``h`` s; ``coast``: bool per element."""
        powered = ~coast
        x = np.where(powered, self.damping, self.loss_damping) * h / self.inertia
        big = x > 1e-3
        safe = np.where(big, x, 1.0)
        # phi1(x) = (1 − e^−x)/x and psi(x) = (1 − phi1)/x, with series where division loses
        # digits.
        phi1 = np.where(x > 1e-6, -np.expm1(-x) / np.where(x > 1e-6, x, 1.0),
                        1.0 - x * (0.5 - x / 6.0))
        psi = np.where(big, (1.0 - phi1) / safe,
                       0.5 - x * (1.0 / 6.0 - x * (1.0 / 24.0 - x / 120.0)))
        spv = np.where(powered, self.speed_per_volt, 0.0)
        return MotorStep(
            alpha=np.exp(-x),
            gain=-np.expm1(-x) * spv,
            mobility=phi1 / self.inertia,
            pos_speed=h * phi1,
            pos_volt=h * (1.0 - phi1) * spv,
            pos_load=h * psi / self.inertia,
            amps_volt=np.where(powered, self.amps_per_volt, 0.0),
            amps_travel=np.where(powered, self.amps_per_speed / h, 0.0),
            current_scale=np.where(powered, 1.0 / (h * self.torque_per_amp), 0.0),
        )


def coulomb_advance(w0: float, volts: float, alpha: float, gain: float, mobility: float,
                    pos_speed: float, pos_volt: float, pos_load: float, coulomb: float,
                    force: float, damping: float, inertia: float, h: float
                    ) -> tuple[float, float, float]:
    """Exact substep of one geared inertia with Coulomb friction ``coulomb`` (N·m) and
    stiction, no other load: (end speed rad/s, travel rad, friction impulse N·m·s).

    The coefficients are the element's :class:`MotorStep` ones; ``force``: c·V, the motors'
    torque at rest (N·m, 0 coasting); ``damping``: its b (N·m·s/rad). While the element keeps
    turning one way the friction is a constant load and the linear map is exact; when it
    stops within the step, :func:`~simserver.models.losses.coulomb_step` solves the step.
    """
    if w0 == 0.0:
        if abs(force) <= coulomb:
            return 0.0, 0.0, 0.0
        sign = math.copysign(1.0, force)
    else:
        sign = math.copysign(1.0, w0)
    load = coulomb * h * sign
    w = alpha * w0 + gain * volts - mobility * load
    if w * sign >= 0.0:
        return w, pos_speed * w0 + pos_volt * volts - pos_load * load, load
    if damping > 0.0:
        w, travel = coulomb_step(w0, force, damping, coulomb, inertia, h)
    else:  # coasting with no damping: a constant deceleration to rest
        t_stop = inertia * abs(w0) / coulomb
        w, travel = 0.0, 0.5 * w0 * t_stop
    # The friction impulse that makes the momentum balance: J·Δω = force·h − b·travel − Q.
    return w, travel, force * h - damping * travel - inertia * (w - w0)


#: Damped re-solves of the sliding contacts per substep from a cold start (see
#: contact_impulses) and from a warm start (the damping of the last substep).
SLIDE_ITERATIONS = 2
WARM_ITERATIONS = 1
#: A warm solve is kept without re-solving when every sliding impulse is within this fraction
#: of its limit and no sticking one is over its limit.
WARM_TOLERANCE = 1e-3

Row = tuple[float, float, float]


def twist(rows: Sequence[Row], p: Sequence[float]) -> tuple[float, float, float]:
    """``Jᵀ P``: the change of the mass-scaled chassis velocity the impulses P (N·s) make, with
    ``rows`` the scaled Jacobian rows."""
    z0 = z1 = z2 = 0.0
    for (j0, j1, j2), pi in zip(rows, p, strict=True):
        z0 += j0 * pi
        z1 += j1 * pi
        z2 += j2 * pi
    return z0, z1, z2


class DenseContacts:
    """A contact system ``A P = rhs`` given by its whole matrix A (rows × rows, symmetric
    positive definite, m/s per N·s) and rhs (m/s). Every solve is a rows × rows one; suits any
    A, including rigid rows (no compliance)."""

    def __init__(self, a: np.ndarray, rhs: np.ndarray):
        self._a, self._rhs_array = a, rhs
        self.rhs: list[float] = rhs.tolist()

    def solve(self, damping: list[float] | None = None) -> list[float]:
        """P with ``(A + diag(damping)) P = rhs``."""
        if damping is not None:
            p = np.linalg.solve(self._a + np.diag(damping), self._rhs_array)
        else:
            p = np.linalg.solve(self._a, self._rhs_array)
        return p.tolist()

    def solve_given(self, free: list[bool], fixed: list[float]) -> list[float]:
        """P equal to ``fixed`` on the rows not ``free``, with the free rows of A P = rhs exact
        (``fixed`` is 0 on free rows)."""
        mask = np.array(free)
        p = np.array(fixed)
        a_free = self._a[mask]
        p[mask] = np.linalg.solve(a_free[:, mask], self._rhs_array[mask] - a_free @ p)
        return p.tolist()

    def pair_blocks(self) -> list[tuple[float, float, float]]:
        """Per contact of two rows j, j+1: its block of A as (A_jj, A_j,j+1, A_j+1,j+1)."""
        diag, off = self._a.diagonal().tolist(), self._a.diagonal(1).tolist()
        return [(diag[j], off[j], diag[j + 1]) for j in range(0, len(diag), 2)]

    def quad(self, p: list[float]) -> float:
        """``P·A·P``."""
        v = np.array(p)
        return float(v @ self._a @ v)

    def residual(self, p: list[float]) -> list[float]:
        """``A P − rhs``: the velocity each row is left with after the step, m/s."""
        return (self._a @ np.array(p) - self._rhs_array).tolist()


class ReducedContacts:
    """A contact system whose matrix is ``A = D + J Jᵀ``: D diagonal (each row's compliance,
    m/s per N·s, > 0) and J the chassis Jacobian in mass-scaled form (rows × 3), as every
    contact of one rigid chassis has. Each solve is then a 3 × 3 one (the Woodbury identity):
    with W = D⁻¹ (0 on rows whose impulse is given) and c = Jᵀ P of the given impulses,

        (I + Jᵀ W J) z = c + Jᵀ W rhs,        P = W·(rhs − J z),        z = Jᵀ P

    where z is the change of the scaled chassis velocity. I + Jᵀ W J has eigenvalues ≥ 1, so
    the 3 × 3 solve is always well posed; but P = W·(rhs − J z) loses digits where D is tiny
    (a rigid row): use :class:`DenseContacts` for those.
    """

    def __init__(self, rows: list[Row], compliance: list[float], rhs: list[float],
                 weight: list[float] | None = None):
        self.rows = rows
        self.compliance = compliance
        self.rhs = rhs
        self._weight = weight  # 1/compliance, when the caller has it cached
        self._last: tuple[list[float], tuple[float, float, float]] | None = None

    def _solve(self, weight: list[float], c: tuple[float, float, float]) -> list[float]:
        """P for the row weights W (see the class docstring) and the given twist c."""
        s00 = s01 = s02 = s11 = s12 = s22 = 0.0
        r0, r1, r2 = c
        for (j0, j1, j2), wi, bi in zip(self.rows, weight, self.rhs, strict=True):
            if wi:
                a0, a1, a2 = wi * j0, wi * j1, wi * j2
                s00 += a0 * j0
                s01 += a0 * j1
                s02 += a0 * j2
                s11 += a1 * j1
                s12 += a1 * j2
                s22 += a2 * j2
                r0 += a0 * bi
                r1 += a1 * bi
                r2 += a2 * bi
        s00 += 1.0
        s11 += 1.0
        s22 += 1.0
        c00, c01, c02 = s11 * s22 - s12 * s12, s02 * s12 - s01 * s22, s01 * s12 - s02 * s11
        c11, c12, c22 = s00 * s22 - s02 * s02, s01 * s02 - s00 * s12, s00 * s11 - s01 * s01
        inv = 1.0 / (s00 * c00 + s01 * c01 + s02 * c02)
        z0 = (c00 * r0 + c01 * r1 + c02 * r2) * inv
        z1 = (c01 * r0 + c11 * r1 + c12 * r2) * inv
        z2 = (c02 * r0 + c12 * r1 + c22 * r2) * inv
        p = [wi * (bi - j0 * z0 - j1 * z1 - j2 * z2)
             for (j0, j1, j2), wi, bi in zip(self.rows, weight, self.rhs, strict=True)]
        self._last = (p, (z0, z1, z2))
        return p

    def solve(self, damping: list[float] | None = None) -> list[float]:
        """P with ``(A + diag(damping)) P = rhs``."""
        if damping is None:
            weight = self._weight or [1.0 / d for d in self.compliance]
        else:
            weight = [1.0 / (d + e) for d, e in zip(self.compliance, damping, strict=True)]
        return self._solve(weight, (0.0, 0.0, 0.0))

    def solve_given(self, free: list[bool], fixed: list[float]) -> list[float]:
        """P equal to ``fixed`` on the rows not ``free``, with the free rows of A P = rhs exact
        (``fixed`` is 0 on free rows)."""
        weight = [1.0 / d if f else 0.0 for d, f in zip(self.compliance, free, strict=True)]
        p = self._solve(weight, twist(self.rows, fixed))
        out = [pi if f else q for pi, f, q in zip(p, free, fixed, strict=True)]
        self._last = None
        return out

    def pair_blocks(self) -> list[tuple[float, float, float]]:
        """Per contact of two rows j, j+1: its block of A as (A_jj, A_j,j+1, A_j+1,j+1)."""
        rows, d = self.rows, self.compliance
        out = []
        for j in range(0, len(rows), 2):
            a0, a1, a2 = rows[j]
            b0, b1, b2 = rows[j + 1]
            out.append((d[j] + a0 * a0 + a1 * a1 + a2 * a2, a0 * b0 + a1 * b1 + a2 * b2,
                        d[j + 1] + b0 * b0 + b1 * b1 + b2 * b2))
        return out

    def quad(self, p: list[float]) -> float:
        """``P·A·P = Σ D P² + |Jᵀ P|²``."""
        z0, z1, z2 = self.twist(p)
        if len(p) != len(self.compliance):
            raise ValueError(f"expected {len(self.compliance)} impulses, got {len(p)}")
        return sum(map(mul, map(mul, self.compliance, p), p)) + z0 * z0 + z1 * z1 + z2 * z2

    def residual(self, p: list[float]) -> list[float]:
        """``A P − rhs = D P + J Jᵀ P − rhs``: the velocity each row is left with after the
        step, m/s."""
        z0, z1, z2 = self.twist(p)
        return [d * pi + j0 * z0 + j1 * z1 + j2 * z2 - bi for d, pi, (j0, j1, j2), bi in zip(
            self.compliance, p, self.rows, self.rhs, strict=True)]

    def twist(self, p: list[float]) -> tuple[float, float, float]:
        """``Jᵀ P`` (remembered for the last P asked about or solved for)."""
        if self._last is not None and self._last[0] is p:
            return self._last[1]
        z = twist(self.rows, p)
        self._last = (p, z)
        return z


ContactSystem = DenseContacts | ReducedContacts


def _ratios(p: list[float], limit: list[float], k: int) -> list[float]:
    """|P_i| / limit_i per contact."""
    if k == 1:
        return [abs(x) / m for x, m in zip(p, limit, strict=True)]
    return list(map(truediv, map(math.hypot, p[0::2], p[1::2]), limit))


def contact_impulses(system: ContactSystem, limit: list[float], k: int,
                     warm: list[float] | None = None) -> tuple[list[float], list[bool]]:
    """Contact impulses with a Coulomb limit per contact (velocity level, one substep).

    system: the contact matrix A (symmetric positive definite, ``J M⁻¹ Jᵀ + D``) and the
    constraint violation rhs the impulses must remove (m/s). limit: per contact, μ·N·h > 0
    (N·s). k: rows per contact, 1 (mecanum roller normal) or 2 (swerve: along, across); rows
    of contact i are ``i·k .. i·k+k−1``. warm (optional): per contact, what the solver ended
    the last substep with, as a start for this one, overwritten with this substep's (all 0:
    nothing slid): for k = 2 the sliding damping κ_i (m/s per N·s), for k = 1 the side the
    impulse was held at (+1 or −1 at its limit, 0 sticking).

    Returns (impulse per row, N·s; sliding flag per contact).

    1. Solve every contact as sticking. If no impulse exceeds its limit, that is the answer
       and every row holds exactly.
    2. Otherwise solve ``(A + K) P = rhs`` with ``K = diag(κ_i)`` on the sliding contacts: the
       slip velocity left after the step, ``(A P − rhs)_i = −κ_i P_i``, then opposes the
       friction impulse (Coulomb, maximal dissipation). ``κ_i`` is adjusted so that
       ``|P_i| = limit_i`` (a secular-equation update per contact from the Rayleigh quotient of
       its block; SLIDE_ITERATIONS damped solves); a contact whose κ reaches 0 sticks again, a
       sticking one over its limit starts to slide. On random collision states the dissipation
       is within 7e-5 (relative) of the exact Coulomb optimum in 90 % of the sliding substeps.
    3. Sliding impulses are set to exactly ``limit`` in the direction found and the sticking
       contacts re-solved given them (repeated if one of them then exceeds its limit).
    4. Energy guard (module docstring).

    Warm start: when the last substep slid, step 1 is replaced by a solve with its κ, and
    step 2 makes WARM_ITERATIONS damped solves, none if that solve already put every sliding
    impulse within WARM_TOLERANCE of its limit. Sliding changes little between substeps, so
    this is both cheaper and closer to the optimum: on the states of the benchmark's swerve
    pushing into a field element, 1.6 solves per sliding substep instead of 3, and the
    largest impulse error within 2.4e-5 of the limit in 90 % of the substeps (cold: 3.2e-4),
    against the converged solve. If every κ drops to 0 and the sticking impulses do not fit,
    the solve continues from step 2 as a cold one.

    With one row per contact (k = 1) the friction disc is an interval, and steps 2-3 are
    replaced by an exact active-set search (:func:`_box`), usually a single extra solve; warm,
    the search starts from the last substep's active set instead of step 1 and usually ends
    after its first solve.

    Step 2 replaces scaling the sticking impulses onto the friction circle: with redundant
    contacts those can be dominated by internal forces that cancel in the net force, and scaled
    one by one they push in arbitrary directions (and can add energy).
    """
    n = len(limit)
    if warm is not None and any(warm):
        if k == 1:
            p, used = _box(system, limit, list(warm))
            sliding = [x != 0.0 for x in used]
        else:
            p = system.solve([warm[j >> 1] for j in range(2 * n)])
            p, sliding, used = _slide(system, limit, p, warm, WARM_ITERATIONS, warm=True)
    else:
        p = system.solve()
        if max(_ratios(p, limit, k)) <= 1.0:
            if warm is not None:
                warm[:] = [0.0] * n
            return p, [False] * n
        if k == 1:
            p, used = _box(system, limit, [0.0 if abs(x) <= lim else math.copysign(1.0, x)
                                           for x, lim in zip(p, limit, strict=True)])
            sliding = [x != 0.0 for x in used]
        else:
            p, sliding, used = _slide(system, limit, p, [0.0] * n, SLIDE_ITERATIONS)
    if warm is not None:
        warm[:] = used
    return p, sliding


def _box(system: ContactSystem, limit: list[float], side: list[float]
         ) -> tuple[list[float], list[float]]:
    """Steps 2-3 of contact_impulses for one row per contact, exactly: the friction "disc" is
    the interval ``|P_i| ≤ limit_i``, so the Coulomb impulses are the minimum of Φ over that
    box, found by an active set. A contact over its limit is held at ``±limit`` and the others
    solved given it; one held whose slip ``(A P − rhs)_i`` runs along its impulse is let go
    (it would stick), one free over its limit is held. Each pass is one solve; two suffice
    almost always. The KKT conditions met at the end are exactly Coulomb's: a sliding
    contact's impulse at its limit against its slip, a sticking one within it with no slip.

    side: per contact, the starting active set, +1 / −1 held at ±limit, 0 free (sticking);
    updated in place. Returns (P, side)."""
    n = len(limit)
    p: list[float] = []
    for _ in range(2 * n + 2):
        free = [s == 0.0 for s in side]
        fixed = [s * lim for s, lim in zip(side, limit, strict=True)]
        p = system.solve_given(free, fixed) if any(free) else fixed
        slip = system.residual(p)
        changed = False
        for i in range(n):
            if side[i] == 0.0:
                if abs(p[i]) > limit[i]:
                    side[i] = math.copysign(1.0, p[i])
                    changed = True
            elif side[i] * slip[i] > 0.0:
                side[i] = 0.0
                changed = True
        if not changed:  # the minimum of Φ over a box holding P = 0: no energy gained
            return p, side
    return _energy_guard(system, p), side


def _slide(system: ContactSystem, limit: list[float], p: list[float], kappa: list[float],
           iterations: int, warm: bool = False) -> tuple[list[float], list[bool], list[float]]:
    """Steps 2-4 of contact_impulses for two rows per contact, on Python floats (for 2 to 12
    contacts several times faster than numpy's per-call overhead, measured), from P solved
    with the damping ``kappa`` per contact (all 0: the sticking solve). Returns (P, sliding
    flags, the κ of the last damped solve)."""
    n = len(limit)
    ratio = _ratios(p, limit, 2)
    sliding = [x > 0.0 for x in kappa]
    if warm and all(abs(r - 1.0) < WARM_TOLERANCE if s else r <= 1.0
                    for r, s in zip(ratio, sliding, strict=True)):
        iterations = 0  # the last substep's damping still fits
    blocks = system.pair_blocks() if iterations else []
    for _ in range(iterations):
        damping: list[float] = []
        updated = [0.0] * n
        for i in range(n):
            r, kap = ratio[i], 0.0
            if sliding[i] or r > 1.0:
                p0, p1 = p[2 * i], p[2 * i + 1]
                m2 = p0 * p0 + p1 * p1
                if m2 > 0.0:
                    d0, d01, d1 = blocks[i]
                    stiff = (d0 * p0 * p0 + 2.0 * d01 * p0 * p1 + d1 * p1 * p1) / m2
                    # Locally |P_i| ∝ 1/(stiff_i + κ_i): the κ_i that brings |P_i| to the limit.
                    kap = max((stiff + kappa[i]) * r - stiff, 0.0)
            updated[i] = kap
            damping += (kap, kap)
        kappa = updated
        sliding = [x > 0.0 for x in kappa]
        p = system.solve(damping)
        ratio = _ratios(p, limit, 2)
        if not any(sliding):  # that was the sticking solve
            if max(ratio) <= 1.0:
                return p, sliding, kappa
            if warm:  # the warm start was wrong: slide from this state as a cold solve does
                return _slide(system, limit, p, kappa, SLIDE_ITERATIONS)
    # Exactly on the friction circle; the sticking contacts exact given the sliding ones.
    slid = sliding
    while True:
        scale = [1.0 / r if s and r > 0.0 else 0.0 for r, s in zip(ratio, slid, strict=True)]
        fixed = [x * scale[j >> 1] for j, x in enumerate(p)]
        if all(slid):
            p = fixed
            break
        free = [not slid[j >> 1] for j in range(len(p))]
        p = system.solve_given(free, fixed)
        ratio = _ratios(p, limit, 2)
        over = [r > 1.0 and not s for r, s in zip(ratio, slid, strict=True)]
        if not any(over):
            break
        slid = [s or o for s, o in zip(slid, over, strict=True)]
    return _energy_guard(system, p), slid, kappa


def _energy_guard(system: ContactSystem, p: list[float]) -> list[float]:
    """P, shrunk along its ray if needed so that Φ(P) − Φ(0) = ½ P·A P − rhs·P ≤ 0."""
    quad = system.quad(p)
    lin = sum(map(mul, system.rhs, p))
    if 0.5 * quad > lin:
        scale = max(0.0, lin / quad) if quad > 0.0 else 0.0
        p = [x * scale for x in p]
    return p


#: Compliance of the rim row of a wheel its Coulomb friction holds still, times the mass:
#: rigid, up to the digits a solve keeps (see SCRUB_COMPLIANCE).
LOCKED_COMPLIANCE = 1e-9


class WheelRows(NamedTuple):
    """Per wheel, what :meth:`PlanarChassis._solve_wheels` needs (lists of one length).

    rim: rim speed along the wheel's driven row per rad/s of the wheel, m. free: the wheel's
    end speed with no load, rad/s. mobility: its end speed change per N·m·s of load impulse.
    start: its speed at the step's start, rad/s. push: c·V·h, the impulse its motors give at
    rest over the step, N·m·s (0 coasting). friction: F_c·h, its Coulomb friction impulse,
    N·m·s.
    """

    rim: list[float]
    free: list[float]
    mobility: list[float]
    start: list[float]
    push: list[float]
    friction: list[float]


class PlanarChassis:
    """The rigid chassis of a holonomic drivetrain: pose, body velocity and tire contacts.

    State (floats): x, y m and heading rad in the field frame (WPILib: x forward, y left, CCW);
    vx, vy m/s and omega rad/s in the body frame. ``slipping``: bool per contact, whether it
    slid in the last substep. Subclasses supply the wheels (see swerve.py, mecanum.py).

    Internally the chassis velocity is handled in mass-scaled form ``u = (√m·vx, √m·vy,
    √J·omega)``, so that with the scaled contact Jacobian ``Js = J·M^-½`` the contact matrix is
    ``Js·Jsᵀ + D`` and an impulse P changes u by ``Jsᵀ·P``.
    """

    def __init__(self, mass: float, moment_of_inertia: float, friction: float,
                 contacts: int, rows_per_contact: int):
        if not mass > 0 or not moment_of_inertia > 0:
            raise ValueError("mass and moment_of_inertia must be > 0")
        if not friction >= 0:
            raise ValueError("friction must be ≥ 0")
        self.mass = float(mass)
        self.moment_of_inertia = float(moment_of_inertia)
        self.friction = float(friction)
        self._rows_per_contact = rows_per_contact
        self._sqrt_m = math.sqrt(self.mass)
        self._sqrt_j = math.sqrt(self.moment_of_inertia)
        self._normal = self.mass * GRAVITY / contacts  # N per contact
        self.x = self.y = self.heading = 0.0
        self.vx = self.vy = self.omega = 0.0
        self._slipping = [False] * contacts
        self._warm = [0.0] * contacts  # the contact solver's state, to start the next substep

    @property
    def slipping(self) -> np.ndarray:
        """Per contact, whether it slid in the last substep (bool array)."""
        return np.array(self._slipping, dtype=bool)

    def _reset_chassis(self, x: float, y: float, heading: float) -> None:
        self.x, self.y, self.heading = float(x), float(y), float(heading)
        self.vx = self.vy = self.omega = 0.0
        self._slipping = [False] * len(self._slipping)
        self._warm = [0.0] * len(self._slipping)

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Impose a body-frame velocity (m/s, m/s, rad/s), e.g. after a collision impulse.
        Wheels keep spinning; the next substep's contacts resolve any slip."""
        self.vx, self.vy, self.omega = float(vx), float(vy), float(omega)

    def _friction_limit(self, h: float) -> list[float]:
        """μ·N·h per contact, N·s."""
        return [self.friction * self._normal * h] * len(self._slipping)

    def _solve(self, system: ContactSystem, limit: list[float]) -> list[float]:
        """contact_impulses, and no grip at all when μ = 0. Sets ``slipping``; returns P."""
        if self.friction == 0.0:
            self._slipping = [True] * len(self._slipping)
            return [0.0] * len(system.rhs)
        p, sliding = contact_impulses(system, limit, self._rows_per_contact, self._warm)
        self._slipping = sliding
        return p

    def _solve_wheels(self, rows: list[Row], compliance: list[float],
                      weight: list[float] | None, base: list[float], wheels: WheelRows,
                      limit: list[float], dense: bool
                      ) -> tuple[list[float], tuple[float, float, float], list[float],
                                 list[float]]:
        """The contact impulses of one substep with each wheel's Coulomb friction.

        rows: scaled Jacobian rows, ``rows_per_contact`` per wheel, the first of wheel i (row
        i·k) the one its rim drives. compliance: D per row with the wheels turning freely;
        weight: 1/D (or None). base: −J·u per row, the rhs without the rims. limit: μ·N·h per
        contact. dense: solve the whole matrix even with every wheel free.

        A wheel's friction (``wheels.friction``, F_c·h) is a load impulse of that size against
        its turning. Each wheel is first assumed to keep turning the way it turned (at rest:
        the way its motors push, if they beat the friction; otherwise held); a wheel whose end
        speed then runs against its friction stopped within the step and is held (end speed
        0: its rim row becomes rigid, target 0), and a held wheel that needs more than the
        friction to stay still turns the way it is pushed; re-solved until nothing changes
        (at most 4 solves). Exact while every wheel keeps its direction through the substep;
        a wheel that stops mid-step is treated as stopped for the whole step (the end-of-step
        velocities move the pose, as everywhere here).

        Returns (P per row N·s, the scaled twist Jᵀ·P, end speed per wheel rad/s, load impulse
        per wheel N·m·s: rim·P + its friction impulse).
        """
        k = self._rows_per_contact
        w = wheels
        n = len(w.free)
        if not any(w.friction):
            rhs = list(base)
            for i in range(n):
                rhs[i * k] += w.rim[i] * w.free[i]
            free = self._system(rows, compliance, weight, rhs, dense)
            p = self._solve(free, limit)
            z = free.twist(p) if isinstance(free, ReducedContacts) else twist(rows, p)
            load = [r * p[i * k] for i, r in enumerate(w.rim)]
            end = [f - m * x for f, m, x in zip(w.free, w.mobility, load, strict=True)]
            return p, z, end, load
        rim, unloaded, mobility, friction = w.rim, w.free, w.mobility, w.friction
        side = [math.copysign(1.0, s) if s != 0.0 else
                math.copysign(1.0, d) if abs(d) > f else 0.0
                for s, d, f in zip(w.start, w.push, friction, strict=True)]
        if not any(side) and not any(base):  # everything at rest and held: nothing moves
            self._slipping = [False] * len(self._slipping)
            p = [0.0] * len(rows)
            hold = [f / m for f, m in zip(unloaded, mobility, strict=True)]
            return p, (0.0, 0.0, 0.0), [0.0] * n, hold
        rigid = LOCKED_COMPLIANCE / self.mass
        end = [0.0] * n
        load = [0.0] * n
        p = []
        system: ContactSystem | None = None
        for _ in range(4):
            rhs = list(base)
            held = 0.0 in side
            comp = list(compliance) if held else compliance
            for i, s in enumerate(side):
                if s:
                    rhs[i * k] += rim[i] * (unloaded[i] - mobility[i] * s * friction[i])
                else:
                    comp[i * k] = rigid
            system = self._system(rows, comp, None if held else weight, rhs, dense or held)
            p = self._solve(system, limit)
            changed = False
            for i, s in enumerate(side):
                along = rim[i] * p[i * k]
                if s:
                    q = s * friction[i]
                    e = unloaded[i] - mobility[i] * (along + q)
                    end[i] = e
                    if e * s < 0.0:
                        side[i] = 0.0
                        changed = True
                else:
                    q = unloaded[i] / mobility[i] - along
                    end[i] = 0.0
                    if abs(q) > friction[i]:
                        side[i] = math.copysign(1.0, q)
                        changed = True
                load[i] = along + q
            if not changed:
                break
        z = system.twist(p) if isinstance(system, ReducedContacts) else twist(rows, p)
        return p, z, end, load

    @staticmethod
    def _system(rows: list[Row], compliance: list[float], weight: list[float] | None,
                rhs: list[float], dense: bool) -> ContactSystem:
        if dense:
            jac = np.array(rows)
            return DenseContacts(jac @ jac.T + np.diag(compliance), np.array(rhs))
        return ReducedContacts(rows, compliance, rhs, weight)

    def _scaled_jacobian(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per wheel at (x, y) m, the scaled Jacobian rows of the contact velocity components
        along body x and body y: (rows for x, rows for y), each wheels × 3."""
        im, ij = 1.0 / self._sqrt_m, 1.0 / self._sqrt_j
        zero = np.zeros_like(x)
        rows_x = np.stack([zero + im, zero, -y * ij], axis=1)
        rows_y = np.stack([zero, zero + im, x * ij], axis=1)
        return rows_x, rows_y

    def _rotated_momentum(self, h: float) -> tuple[float, float, float]:
        """The scaled velocity u after the body frame turned by omega·h under it."""
        wh = self.omega * h
        c, s = math.cos(wh), math.sin(wh)
        vx, vy = self.vx, self.vy
        return (self._sqrt_m * (c * vx + s * vy), self._sqrt_m * (c * vy - s * vx),
                self._sqrt_j * self.omega)

    def _advance(self, h: float, ux: float, uy: float, uw: float) -> None:
        """Take the end-of-step scaled velocity u and move along its twist for h seconds."""
        vx, vy, omega = ux / self._sqrt_m, uy / self._sqrt_m, uw / self._sqrt_j
        self.vx, self.vy, self.omega = vx, vy, omega
        self.x, self.y, self.heading = pose_exp(self.x, self.y, self.heading,
                                                vx * h, vy * h, omega * h)
