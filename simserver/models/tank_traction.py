"""The physical tank with tires and losses: each side a wheel inertia driven by its motors through
lossy gears, touching the carpet through a traction-limited contact on a rigid chassis.

The same tire model as swerve and mecanum (:mod:`simserver.models.tires`): friction μ along
the wheel with a Coulomb traction limit ``μ·N`` per side (N = m·g/2), scrub across it. Specific
to the tank (two sides, both contacts on the axle line x = 0):

- **Across the wheels** both contacts constrain the same body velocity ``vy``, so they act as
  one: the sideways impulse is at most ``lateral_friction·m·g·h`` a substep (a robot in a turn
  skids once its centripetal acceleration exceeds ``lateral_friction·g``; when it does not, the
  rolling constraint holds exactly and the body frame turns with the velocity). The along and
  across limits are independent (a friction box, not a circle: a side spinning its wheels
  keeps its sideways grip), a simplification; no turning scrub (contacts on one line).
- **Along the wheels**, per side i, rim speed ``u_i`` (m/s: what an encoder reads), effective
  wheel mass ``M_i = J_wheel/r²`` (rotors reflected included) and the joint of
  :mod:`simserver.models.losses`::

      M_i·du_i/dt = k·V_i − B_i·u_i − F_c,i·sgn(u_i) − F_i,     |F_i| ≤ μ·N

  with F_i the ground force on the chassis (N), ``F_c`` the Coulomb friction (gearbox static
  friction plus rolling resistance, which holds a side at rest as stiction), ``B`` the damping.

Two ways through a substep of h seconds, both ending with the pose moved by the exponential of
the substep's body twist:

1. **Rolling** (both contacts stuck at the start, no sideways skid, both wheels moving or
   every side without Coulomb friction): wheels and chassis move together, so per side
   ``(M_c + diag(M_i))·du/dt = k·V − B·u − F_c·s`` with ``M_c`` the chassis mass matrix seen
   at the two contacts and the battery's sag folded in; linear, advanced exactly
   (``linear.AffineStep``, cached per input). Accepted when the average ground force of the
   substep stays within ``μ·N`` and no wheel changed direction; otherwise way 2.
2. **Impulses** (launch over the traction limit, a wheel stopping or starting, after an impact,
   skidding): each wheel advances under its constant voltage (exponential Euler, bus voltage
   from the start speeds) and unknown impulses, found at velocity level by an exact active-set
   search over a box (as ``tires._box``): the ground impulses ``P_i`` (|P_i| ≤ μ·N·h, the rim
   matching the chassis contact speed when within) and the Coulomb impulses ``R_i``
   (|R_i| ≤ F_c·h, the wheel stopping when within). The KKT conditions of that box are
   Coulomb's; its objective is a kinetic energy, so without input no substep adds energy.

Reported currents are those at the end of the substep (``differential.side_currents``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simserver.models.battery import Source
from simserver.models.differential import (
    GRAVITY,
    NO_COAST,
    DifferentialDrive,
    DifferentialParams,
    Electrical,
    side_currents,
)
from simserver.models.linear import AffineStep
from simserver.models.losses import IDEAL, JointMotors, Losses

Matrix = tuple[tuple[float, ...], ...]

#: Active-set passes of the impulse solve (2 almost always suffice) before it falls back to
#: projected Gauss-Seidel sweeps (at most PGS_SWEEPS).
MAX_PASSES = 12
PGS_SWEEPS = 500


@dataclass(frozen=True)
class Traction:
    """What the tank's tires and drive train add to :class:`DifferentialParams` (SI units).

    friction: μ along the wheels (traction limit per side μ·m·g/2). wheel_inertia: (left,
    right) everything turning with a side's wheels, seen at the wheel axle, kg·m² (the rotors
    reflected included). losses: (left, right) loss terms of each side's joint (N, N·s/m at the
    wheel rim; ``losses.Losses``).
    """

    friction: float
    wheel_inertia: tuple[float, float]
    losses: tuple[Losses, Losses] = (IDEAL, IDEAL)

    def __post_init__(self) -> None:
        if not (self.friction > 0.0 and math.isfinite(self.friction)):
            raise ValueError("friction must be a finite number > 0")
        if not all(j > 0.0 and math.isfinite(j) for j in self.wheel_inertia):
            raise ValueError("wheel_inertia must be finite numbers > 0")


def side_joint(p: DifferentialParams, gearing: float, losses: Losses) -> JointMotors:
    """One side's motors as a joint in metres of rim travel (ratio G/r, motor rad per m)."""
    return JointMotors(p.motor, p.motors_per_side, gearing / p.wheel_radius, losses)


class _Side:
    """One side's joint coefficients at one gearing: k N/V, damping powered/coasting N·s/m,
    back-EMF V per m/s of one motor."""

    __slots__ = ("coulomb", "damping", "force_per_volt", "loss_damping")

    def __init__(self, joint: JointMotors):
        self.force_per_volt = joint.force_per_volt
        self.damping = joint.damping
        self.loss_damping = joint.loss_damping
        self.coulomb = joint.coulomb


def _start(side: _Side, volts: float, coast: bool) -> int:
    """The direction a side at rest starts in under ``volts`` V, 0 if friction holds it."""
    force = 0.0 if coast else side.force_per_volt * volts
    return 0 if abs(force) <= side.coulomb else (1 if force > 0.0 else -1)


class TractionDrive(DifferentialDrive):
    """The physical tank on tires (module docstring). Same interface as
    :class:`DifferentialDrive`; ``state.v_left/v_right`` and ``s_left/s_right`` are the
    wheels' rim speed and travel (what encoders read), which run ahead of the chassis when the
    wheels spin. Chassis velocity: ``vx`` m/s, ``state.v_lat`` m/s, ``yaw_rate`` rad/s (body
    frame). ``slipping``: per side, whether its contact slid in the last substep.
    """

    def __init__(self, params: DifferentialParams, traction: Traction):
        self.traction = traction
        self._mass_w = tuple(j / params.wheel_radius**2 for j in traction.wheel_inertia)
        self._half_w = 0.5 * params.track_width
        w = self._half_w
        self._p = 1.0 / params.mass + w * w / params.moment_of_inertia
        self._q = 1.0 / params.mass - w * w / params.moment_of_inertia
        self._limit_force = traction.friction * params.mass * GRAVITY / 2.0  # N per side
        self._sides: dict[float, tuple[_Side, _Side]] = {}
        self._roll_key: tuple[object, ...] = ()
        self._roll: AffineStep | None = None
        self._impulse_cache: dict[object, tuple[tuple[float, ...], Matrix]] = {}
        super().__init__(params, _NoLongitudinal())
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at rest at (x, y) m facing ``heading`` rad; zero the wheels."""
        super().reset(x, y, heading)
        self.vx = 0.0
        self.yaw_rate = 0.0
        self.rolling = True  # the contacts stuck at the end of the last substep
        self.slipping = (False, False)
        self._held = [0.0, 0.0, 0.0, 0.0]  # the impulse solve's active set (warm start)

    @property
    def omega(self) -> float:
        """Yaw rate, rad/s (CCW)."""
        return self.yaw_rate

    @property
    def v_forward(self) -> float:
        """Body-frame forward speed of the chassis, m/s."""
        return self.vx

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """Impose a body-frame chassis velocity (after an impact); the wheels keep spinning and
        the next substep's contacts resolve the slip."""
        self.vx, self.state.v_lat, self.yaw_rate = vx, vy, omega
        self.rolling = False

    def sides(self, gearing: float) -> tuple[_Side, _Side]:
        """Both sides' joint coefficients at ``gearing`` (cached)."""
        found = self._sides.get(gearing)
        if found is None:
            p = self.params
            found = (_Side(side_joint(p, gearing, self.traction.losses[0])),
                     _Side(side_joint(p, gearing, self.traction.losses[1])))
            self._sides[gearing] = found
        return found

    def step(self, h: float, duty_left: float, duty_right: float, source: Source) -> Electrical:
        """Advance ``h`` seconds with duty cycles in [-1, 1] applied to each side."""
        st = self.state
        p = self.params
        coast = self.coast
        s_l, s_r = st.s_left, st.s_right
        skid = st.v_lat != 0.0 or abs(self.yaw_rate * self.vx) > p.lateral_friction * GRAVITY
        if skid or not (self.rolling and self._roll_step(h, duty_left, duty_right, source)):
            u_l, u_r = st.v_left, st.v_right
            if skid:
                self._skid(h)
            self._impulse_step(h, duty_left, duty_right, source)
            st.s_left += 0.5 * h * (u_l + st.v_left)
            st.s_right += 0.5 * h * (u_r + st.v_right)
            self._move(self.vx * h, st.v_lat * h, self.yaw_rate * h)
        else:
            self._move(0.5 * (st.s_left - s_l + st.s_right - s_r), 0.0,
                       (st.s_right - s_r - (st.s_left - s_l)) / p.track_width)
        return side_currents(p, self.gearing, duty_left, duty_right, st.v_left, st.v_right,
                             source, coast)

    # --- way 1: rolling -------------------------------------------------------------------------

    def _roll_step(self, h: float, duty_l: float, duty_r: float, source: Source) -> bool:
        """Advance exactly with both contacts stuck; False (state untouched) when that does
        not hold over the substep."""
        st = self.state
        u_l, u_r = st.v_left, st.v_right
        left, right = self.sides(self.gearing)
        # The direction each side's Coulomb friction opposes (0: a side without any).
        sign_l = (1 if u_l > 0.0 else -1 if u_l < 0.0 else 0) if left.coulomb else 0
        sign_r = (1 if u_r > 0.0 else -1 if u_r < 0.0 else 0) if right.coulomb else 0
        if (sign_l == 0 and left.coulomb) or (sign_r == 0 and right.coulomb):
            if u_l == 0.0 and u_r == 0.0 and duty_l == 0.0 and duty_r == 0.0:
                self.slipping = (False, False)
                return True  # at rest with no input: nothing moves (stiction)
            # A wheel at rest starts the way its motors push it if they beat its friction.
            bus = self._bus(duty_l, duty_r, u_l, u_r, source)
            if sign_l == 0:
                sign_l = _start(left, duty_l * bus, self.coast[0])
            if sign_r == 0:
                sign_r = _start(right, duty_r * bus, self.coast[1])
            if not (sign_l and sign_r):
                return False
        key = (h, duty_l, duty_r, self.gearing, source.open_voltage, source.resistance,
               self.coast, sign_l, sign_r)
        if key != self._roll_key or self._roll is None:
            self._roll = self._build_roll(h, duty_l, duty_r, source, sign_l, sign_r, True)
            self._roll_key = key
        roll = self._roll
        if source.open_voltage <= 0.0 or self._bus(duty_l, duty_r, u_l, u_r, source) <= 0.0:
            roll = self._build_roll(h, duty_l, duty_r, source, sign_l, sign_r, False)
        s_l, s_r, e_l, e_r = roll.apply(st.s_left, st.s_right, u_l, u_r)
        # Ground impulses of the substep, from the chassis momentum they changed.
        w = self._half_w
        sum_p = self.params.mass * 0.5 * (e_l + e_r - u_l - u_r)
        diff_p = self.params.moment_of_inertia * (e_r - e_l - u_r + u_l) / (4.0 * w * w)
        limit = self._limit_force * h
        if (abs(sum_p - diff_p) > 2.0 * limit or abs(sum_p + diff_p) > 2.0 * limit
                or (sign_l and e_l * sign_l < 0.0) or (sign_r and e_r * sign_r < 0.0)):
            return False
        st.s_left, st.s_right, st.v_left, st.v_right = s_l, s_r, e_l, e_r
        self.vx = 0.5 * (e_l + e_r)
        self.yaw_rate = (e_r - e_l) / (2.0 * w)
        self.slipping = (False, False)
        return True

    def _bus(self, duty_l: float, duty_r: float, u_l: float, u_r: float,
             source: Source) -> float:
        """Bus voltage at rim speeds (u_l, u_r) m/s, V (may be ≤ 0: the bus collapsed)."""
        p = self.params
        m = p.motor
        k = self.gearing / (p.wheel_radius * m.kv)
        g = source.resistance * p.motors_per_side / m.R
        return ((source.open_voltage + g * k * (duty_l * u_l + duty_r * u_r))
                / (1.0 + g * (duty_l * duty_l + duty_r * duty_r)))

    def _build_roll(self, h: float, duty_l: float, duty_r: float, source: Source, sign_l: int,
                    sign_r: int, live_bus: bool) -> AffineStep:
        """The exact map of the rolling substep: ``du/dt = G·(K u + f0)`` with
        ``G = (M_c + diag(M_i))⁻¹`` and side forces ``F = K u + f0`` (battery sag folded in as
        PhysicalLongitudinal does; a collapsed bus only brakes)."""
        p = self.params
        m = p.motor
        n = p.motors_per_side
        left, right = self.sides(self.gearing)
        k_emf = self.gearing / (p.wheel_radius * m.kv)  # back-EMF V per m/s of one motor
        if live_bus:
            g = source.resistance * n / m.R
            denom = 1.0 + g * (duty_l * duty_l + duty_r * duty_r)
            alpha = source.open_voltage / denom
            bl, br = g * k_emf * duty_l / denom, g * k_emf * duty_r / denom
        else:
            alpha = bl = br = 0.0
        coast = self.coast
        b_l = left.loss_damping if coast[0] else left.damping
        b_r = right.loss_damping if coast[1] else right.damping
        kl, kr = left.force_per_volt, right.force_per_volt
        # F_i = k_i·d_i·(alpha + bl·u_l + br·u_r) − B_i·u_i − F_c,i·s_i
        k00, k01 = kl * duty_l * bl - b_l, kl * duty_l * br
        k10, k11 = kr * duty_r * bl, kr * duty_r * br - b_r
        f0 = kl * duty_l * alpha - left.coulomb * sign_l
        f1 = kr * duty_r * alpha - right.coulomb * sign_r
        # M_c = [[p, q], [q, p]]⁻¹; G = (M_c + diag(M_l, M_r))⁻¹.
        pp, qq = self._p, self._q
        det_a = pp * pp - qq * qq
        g00, g01, g11 = pp / det_a + self._mass_w[0], -qq / det_a, pp / det_a + self._mass_w[1]
        det_g = g00 * g11 - g01 * g01
        i00, i01, i11 = g11 / det_g, -g01 / det_g, g00 / det_g
        return AffineStep(i00 * k00 + i01 * k10, i00 * k01 + i01 * k11,
                          i01 * k00 + i11 * k10, i01 * k01 + i11 * k11,
                          i00 * f0 + i01 * f1, i01 * f0 + i11 * f1, h)

    # --- way 2: impulses --------------------------------------------------------------------------

    def _skid(self, h: float) -> None:
        """The body frame turns under the chassis velocity by omega·h (exact, keeping its
        magnitude); the sideways friction then takes at most lateral_friction·g·h off v_lat."""
        st = self.state
        wh = self.yaw_rate * h
        c, s = math.cos(wh), math.sin(wh)
        vx, vy = self.vx, st.v_lat
        self.vx = c * vx + s * vy
        v_lat = c * vy - s * vx
        limit = self.params.lateral_friction * GRAVITY * h
        st.v_lat = 0.0 if abs(v_lat) <= limit else v_lat - math.copysign(limit, v_lat)

    def _impulse_constants(self, h: float) -> tuple[tuple[float, ...], Matrix]:
        """What the impulse substep needs that depends only on (h, gearing, coast), cached:
        per side the free decay, the speed per N of motor force, the speed per N·s of impulse
        (mobility), the force per volt and the Coulomb limit; and the box matrix."""
        key = (h, self.gearing, self.coast)
        found = self._impulse_cache.get(key)
        if found is not None:
            return found
        out: list[float] = []
        for i, side in enumerate(self.sides(self.gearing)):
            mass = self._mass_w[i]
            coast = self.coast[i]
            damping = side.loss_damping if coast else side.damping
            x = damping * h / mass
            phi1 = -math.expm1(-x) / x if x > 1e-6 else 1.0 - x * (0.5 - x / 6.0)
            out += (math.exp(-x), h * phi1 / mass, phi1 / mass,
                    0.0 if coast else side.force_per_volt, side.coulomb * h)
        d_l, d_r = out[2], out[7]
        pp, qq = self._p, self._q
        # Unknowns (P_l, P_r, R_l, R_r): ground impulses on the chassis, Coulomb impulses
        # against the wheels. Rows: rim minus contact speed, rim speed, after the step.
        a = ((pp + d_l, qq, d_l, 0.0), (qq, pp + d_r, 0.0, d_r),
             (d_l, 0.0, d_l, 0.0), (0.0, d_r, 0.0, d_r))
        if len(self._impulse_cache) > 16:
            self._impulse_cache.clear()
        found = self._impulse_cache[key] = (tuple(out), a)
        return found

    def _impulse_step(self, h: float, duty_l: float, duty_r: float, source: Source) -> None:
        """Wheels under constant voltages and the contact and Coulomb impulses (way 2)."""
        st = self.state
        p = self.params
        u_l, u_r = st.v_left, st.v_right
        bus = max(0.0, self._bus(duty_l, duty_r, u_l, u_r, source))
        (alpha_l, gain_l, d_l, k_l, lim_l, alpha_r, gain_r, d_r, k_r, lim_r), a = \
            self._impulse_constants(h)
        free_l = alpha_l * u_l + gain_l * k_l * duty_l * bus
        free_r = alpha_r * u_r + gain_r * k_r * duty_r * bus
        w = self._half_w
        c_l, c_r = self.vx - w * self.yaw_rate, self.vx + w * self.yaw_rate
        lim_p = self._limit_force * h
        held = self._held
        p_l, p_r, r_l, r_r = box_impulses(a, (free_l - c_l, free_r - c_r, free_l, free_r),
                                          (lim_p, lim_p, lim_l, lim_r), held)
        # A wheel its Coulomb friction holds (row free, within its limit) is at rest exactly.
        st.v_left = 0.0 if lim_l and not held[2] else free_l - d_l * (p_l + r_l)
        st.v_right = 0.0 if lim_r and not held[3] else free_r - d_r * (p_r + r_r)
        self.vx += (p_l + p_r) / p.mass
        self.yaw_rate += w * (p_r - p_l) / p.moment_of_inertia
        self.slipping = (held[0] != 0.0, held[1] != 0.0)
        self.rolling = not (held[0] or held[1]) and st.v_lat == 0.0
        if self.rolling:  # rim and contact speeds agree up to rounding: make them equal
            self.vx = 0.5 * (st.v_left + st.v_right)
            self.yaw_rate = (st.v_right - st.v_left) / (2.0 * w)


class _NoLongitudinal:
    """Placeholder: TractionDrive advances its wheels itself."""

    def advance(self, st: object, h: float, duty_l: float, duty_r: float, gearing: float,
                source: Source, coast: tuple[bool, bool] = NO_COAST) -> None:
        raise NotImplementedError


def box_impulses(a: Matrix, rhs: tuple[float, ...], limit: tuple[float, ...],
                 held: list[float]) -> list[float]:
    """The minimum of ``½ P·A P − rhs·P`` over the box ``|P_j| ≤ limit_j`` (A small, symmetric
    positive definite), by an active set: a row over its limit is held at ±limit, one held
    whose residual ``(A P − rhs)_j`` runs along its impulse is let go. Rows with limit 0 stay
    at 0. ``held``: per row the starting set (+1/−1 held, 0 free), updated in place (a warm
    start for the next call). The KKT conditions met at the end are Coulomb's. Should the
    active set cycle (seen on random dense systems, not on the tank's), projected Gauss-Seidel
    takes over (:func:`_gauss_seidel`)."""
    n = len(rhs)
    for j in range(n):
        if limit[j] == 0.0:
            held[j] = 1.0
    p: list[float] = [0.0] * n
    for _ in range(MAX_PASSES):
        p = [held[j] * limit[j] for j in range(n)]
        free = [j for j in range(n) if held[j] == 0.0]
        if free:
            _solve_free(a, rhs, p, free)
        changed = False
        for j in range(n):
            if limit[j] == 0.0:
                continue
            if held[j] == 0.0:
                if abs(p[j]) > limit[j]:
                    held[j] = 1.0 if p[j] > 0.0 else -1.0
                    changed = True
            else:
                row = a[j]
                slip = -rhs[j]
                for i in range(n):
                    slip += row[i] * p[i]
                if held[j] * slip > 0.0:
                    held[j] = 0.0
                    changed = True
        if not changed:
            return p
    return _gauss_seidel(a, rhs, limit, held)


def _gauss_seidel(a: Matrix, rhs: tuple[float, ...], limit: tuple[float, ...],
                  held: list[float]) -> list[float]:
    """box_impulses when its active set cycled: projected Gauss-Seidel from P = 0, which lowers
    the objective every sweep (so adds no energy) and converges for any A; then the exact solve
    on the active set it found, kept if it stays within the box. Updates ``held``."""
    n = len(rhs)
    p = [0.0] * n
    for _ in range(PGS_SWEEPS):
        change = 0.0
        for j in range(n):
            row = a[j]
            r = rhs[j]
            for i in range(n):
                if i != j:
                    r -= row[i] * p[i]
            x = min(limit[j], max(-limit[j], r / row[j]))
            change = max(change, abs(x - p[j]))
            p[j] = x
        if change <= 1e-15 * (1.0 + max(limit)):
            break
    for j in range(n):
        held[j] = 0.0 if abs(p[j]) < limit[j] else (1.0 if p[j] > 0.0 else -1.0)
    exact = [held[j] * limit[j] for j in range(n)]
    free = [j for j in range(n) if held[j] == 0.0]
    if free:
        _solve_free(a, rhs, exact, free)
    if all(abs(exact[j]) <= limit[j] for j in free):
        return exact
    return p


def _solve_free(a: Matrix, rhs: tuple[float, ...], p: list[float], free: list[int]) -> None:
    """Solve the free rows of ``A P = rhs`` given the held entries of p (in place): Gaussian
    elimination on at most four unknowns."""
    n = len(rhs)
    held = [i for i in range(n) if i not in free]
    b = []
    for j in free:  # the free rows' right-hand side given the held impulses
        r = rhs[j]
        for i in held:
            r -= a[j][i] * p[i]
        b.append(r)
    k = len(free)
    if k == 1:
        j = free[0]
        p[j] = b[0] / a[j][j]
        return
    if k == 2:
        i, j = free
        a0, a1, c1 = a[i][i], a[i][j], a[j][j]
        det = a0 * c1 - a1 * a1
        p[i] = (b[0] * c1 - a1 * b[1]) / det
        p[j] = (a0 * b[1] - a1 * b[0]) / det
        return
    m = [[a[j][i] for i in free] + [bj] for j, bj in zip(free, b, strict=True)]
    for col in range(k):  # SPD: no pivoting needed
        piv = m[col][col]
        for below in range(col + 1, k):
            f = m[below][col] / piv
            if f:
                m[below] = [u - f * w for u, w in zip(m[below], m[col], strict=True)]
    solved = [0.0] * k
    for row in range(k - 1, -1, -1):
        solved[row] = (m[row][k] - sum(m[row][i] * solved[i] for i in range(row + 1, k))
                       ) / m[row][row]
    for j, v in zip(free, solved, strict=True):
        p[j] = v
