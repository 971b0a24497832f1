"""Motor-driven mechanisms: elevator, single-jointed arm, rotary load; and pyfrc's LinearMotion.

Every motor-driven mechanism is one degree of freedom ``q`` (m for an elevator, rad for an arm
or a rotary load) with speed ``w = dq/dt``, a generalized inertia ``J`` (kg or kg·m²), a gear
ratio ``c`` (motor shaft rad per unit of ``q``: G/r for an elevator on a drum of radius r, G for
a rotary joint) and an external generalized force ``F(q)`` (N or N·m). With ``n`` identical
motors, each fed the terminal voltage ``V`` (constant over a substep)::

    motor speed      ω_m = c·w                                      rad/s
    per motor        L·dI/dt = V − R·I − ω_m/Kv                     (L = 0: I = (V − ω_m/Kv)/R)
    load             J·dw/dt = η·n·c·Kt·I − D·w − F_c·sgn(w) + F(q)

    Elevator  J = m (carriage),  c = G/r,  F = −m·g (or a weight of its own)
    Rotary    J = moment of inertia,  c = G,  F = 0
    Arm       J = moment of inertia about the pivot,  c = G,  F = −m·g·d·cos(q) (or τ_g·cos(q))
              (q = 0 horizontal, CCW/up positive, d = pivot-to-CoG distance)

The loss terms (:mod:`simserver.models.losses`, one :class:`JointMotors` per mechanism):
gearbox efficiency η, the damping D of the motors' free-current load and of viscous friction,
and Coulomb friction F_c with stiction. Without inductance the speed obeys
``dw/dt = −α·w + β`` (α = B/J with B the joint's total damping, β = (F − F_c·s + k·V)/J,
k = η·n·c·Kt/R, s the sign of the motion); with inductance ``(w, I)`` is a 2×2 affine system.
Both are linear when F is constant (elevator, rotary), and are then advanced EXACTLY for
constant V (scalar closed form without inductance; with it, Sylvester's formula for e^{Mt} and
its integrals over the 2×2 (w, I) matrix, real or complex poles, cached per substep length):
no step-size error at any substep. The arm's gravity torque is nonlinear; it is advanced by
the exponential integrator ETDRK4 (Cox–Matthews): the stiff linear part (motor damping, L/R
electrical pole) is propagated by matrix exponentials, only the smooth gravity torque is
approximated (4th order). It is stable for any substep and any inductance.

Hard stops (elevator, arm) are inelastic: the crossing time is solved on the solution within
the substep (exactly for the linear mechanisms, by root finding on the ETDRK4 map for the arm),
the mechanism stops there (w = 0; with inductance the current keeps its value) and spends the
rest of the substep at rest as long as the net force pushes into the stop; if it reverses
(now, or later in the substep as the current changes) the mechanism leaves the stop at that
moment. Soft limits are not modelled here (the controller cuts the output).

Coulomb friction is piecewise linear: its sign s is fixed between events, and a zero of the
speed is an event handled like a stop: found the same way (in closed form without
inductance, by safeguarded Newton on the exact solution with it, by root finding on the
ETDRK4 map for the arm), the mechanism stops there and stays at rest while
``|net force| ≤ F_c`` (stiction equal to sliding friction); with inductance the current keeps
changing at rest, and the mechanism breaks away the moment the net force exceeds F_c. With no
losses (``Losses()``, the default) the model is WPILib's ideal machine.

Not modelled: rotor inertia (as in WPILib's sims), backlash, current limits; a gearbox loses
the same fraction back-driven as driven.

Usage::

    kraken = motor_by_name("Kraken X60")
    lift = Elevator(MotorDrive(kraken, count=2, gearing=10.0), carriage_mass=8.0,
                    drum_radius=0.025, min_height=0.0, max_height=1.5,
                    losses=Losses(efficiency=0.9, coulomb=15.0, free_current=True))
    for _ in range(4):                      # one 20 ms tick in 5 ms substeps
        lift.step(0.005, voltage=6.0)       # volts at each motor's terminals
    lift.position, lift.velocity, lift.current, lift.at_upper
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import mul

import numpy as np

from simserver.models.linear import e1, e2, expm, phis
from simserver.models.losses import IDEAL, JointMotors, Losses
from simserver.models.motor import MotorSpec

GRAVITY = 9.80665  # m/s², standard gravity

_POS_TOL = 1e-12  # m or rad: a stop is crossed only when passed by more than this (rounding)
_MAX_EVENTS = 16  # stop/leave events handled within one substep before holding at the stop
_ETD_CACHE = 8  # substep lengths whose ETDRK4 coefficients an Arm keeps
_HELD = 2  # event: the speed reached zero against Coulomb friction


def _phi_r(k: int, lam: float, t: float) -> float:
    """e^{λt}, ∫₀ᵗe^{λs}ds, ∫₀ᵗ∫₀ˢe^{λu}du ds for k = 0, 1, 2 (real λ)."""
    x = lam * t
    if k == 0:
        return math.exp(x)
    if k == 1:
        return t * e1(x)
    return t * t * e2(x)


def _phi_c(k: int, lam: complex, t: float) -> complex:
    """As _phi_r for complex λ."""
    z = lam * t
    if k == 0:
        return cmath.exp(z)
    if abs(z) < 0.5:  # Σ z^j/(j+k)!, truncation < 1e-20
        term = 1.0 / math.factorial(k)
        acc = complex(term)
        for j in range(1, 22):
            term /= j + k
            acc += term * z**j
        return acc * t**k
    if k == 1:
        return t * (cmath.exp(z) - 1.0) / z
    return t * t * (cmath.exp(z) - 1.0 - z) / (z * z)


def _root(f: Callable[[float], tuple[float, float]], a: float, b: float, fa: float,
          fb: float, guess: float | None = None) -> float:
    """A zero of f in [a, b] (fa, fb of opposite signs) by Newton safeguarded by bisection,
    from ``guess`` (default: the midpoint).

    f returns (value, derivative). Converges to a few ulps of t.
    """
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    neg_a = fa < 0.0
    t = guess if guess is not None and a < guess < b else 0.5 * (a + b)
    for _ in range(200):
        v, d = f(t)
        if v == 0.0:
            return t
        if (v < 0.0) == neg_a:
            a = t
        else:
            b = t
        if b - a <= 4e-16 * max(abs(a), abs(b)) + 1e-300:
            return t
        nt = t - v / d if d != 0.0 else math.nan
        if not a < nt < b:
            nt = 0.5 * (a + b)
        if abs(nt - t) <= 2e-16 * abs(t):
            return nt
        t = nt
    return t


@dataclass(frozen=True)
class MotorDrive:
    """``count`` identical motors geared to one output shaft.

    gearing: motor turns per output turn (> 0). inductance: per motor, H (0: the
    steady-state model I = (V − ω/Kv)/R; > 0: RoboSim's L-R model, current is a state).
    """

    motor: MotorSpec
    count: int = 1
    gearing: float = 1.0
    inductance: float = 0.0

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("count must be ≥ 1")
        if not (self.gearing > 0.0 and math.isfinite(self.gearing)):
            raise ValueError("gearing must be a finite number > 0")
        if not (self.inductance >= 0.0 and math.isfinite(self.inductance)):
            raise ValueError("inductance must be a finite number ≥ 0")

    def motor_speed(self, output_speed: float) -> float:
        """Shaft speed of each motor, rad/s, at output-shaft ``output_speed`` rad/s."""
        return self.gearing * output_speed

    def current(self, output_speed: float, voltage: float) -> float:
        """Steady-state current of one motor, A (no inductance), at ``voltage`` V."""
        return self.motor.current(self.gearing * output_speed, voltage)

    def torque(self, current: float) -> float:
        """Output-shaft torque, N·m, when each motor carries ``current`` A (all motors)."""
        return self.count * self.gearing * self.motor.kt * current

    def stall_torque(self, voltage: float) -> float:
        """Output-shaft torque at zero speed under ``voltage`` V, N·m."""
        return self.torque(voltage / self.motor.R)

    def free_speed(self, voltage: float) -> float:
        """Unloaded output-shaft speed at ``voltage`` V, rad/s (no friction modelled)."""
        return voltage * self.motor.kv / self.gearing

    @property
    def electrical_time_constant(self) -> float:
        """L/R of one motor, s (0 without inductance)."""
        return self.inductance / self.motor.R


class _Driven:
    """Shared state, stops and electrical model of the motor-driven mechanisms.

    Subclasses provide ``_force(q)`` and ``_free(T, V)`` (advance ≤ T s of free motion,
    stopping at a crossed stop).
    """

    def __init__(self, drive: MotorDrive, inertia: float, ratio: float, lower: float,
                 upper: float, start: float, losses: Losses):
        if not (inertia > 0.0 and math.isfinite(inertia)):
            raise ValueError("inertia (mass or moment of inertia) must be a finite number > 0")
        if not lower < upper:
            raise ValueError("the lower stop must be below the upper stop")
        self.drive = drive
        m = drive.motor
        self.joint = joint = JointMotors(m, drive.count, ratio, losses)
        self._J = inertia
        self._c = ratio
        self._R = m.R
        self._kv = m.kv
        self._L = drive.inductance
        self._k = joint.force_per_volt  # generalized force per volt at rest, N/V or N·m/V
        self._kI = self._k * m.R  # generalized force per amp of each motor
        self._D = joint.loss_damping  # damping besides the back-EMF's
        self._alpha = joint.damping / inertia  # 1/s, no-inductance damping
        self._fc = joint.coulomb
        self._lo = lower
        self._hi = upper
        self._start = start
        self._q = self._w = self._i = self._v = 0.0
        self._side = 0  # -1 resting on the lower stop, +1 on the upper, 0 off the stops
        self._dir = 0  # sign of the motion the Coulomb friction opposes; 0 at rest
        self.reset()

    # --- state --------------------------------------------------------------------------------

    def reset(self, position: float | None = None, velocity: float = 0.0,
              current: float = 0.0) -> None:
        """Place at ``position`` (default: the start) with ``velocity``; 0 V applied.

        ``current`` (A per motor) is the initial state when the drive has inductance and is
        ignored otherwise (the current then follows from speed and voltage).
        """
        q = self._start if position is None else position
        if not (self._lo <= q <= self._hi) or not math.isfinite(q):
            raise ValueError(f"position {q} outside the stops [{self._lo}, {self._hi}]")
        if not (math.isfinite(velocity) and math.isfinite(current)):
            raise ValueError("velocity and current must be finite")
        self._q, self._w, self._v = float(q), float(velocity), 0.0
        self._i = float(current) if self._L > 0.0 else 0.0
        self._side = 0
        self._dir = (self._w > 0.0) - (self._w < 0.0)
        self._settle()

    def _settle(self) -> None:
        """Rest on a stop when at it and moving into it."""
        if self._q <= self._lo and self._w <= 0.0:
            self._q, self._w, self._side, self._dir = self._lo, 0.0, -1, 0
        elif self._q >= self._hi and self._w >= 0.0:
            self._q, self._w, self._side, self._dir = self._hi, 0.0, 1, 0

    @property
    def position(self) -> float:
        """m (elevator) or rad (arm, rotary)."""
        return self._q

    @property
    def velocity(self) -> float:
        """m/s (elevator) or rad/s (arm, rotary)."""
        return self._w

    @property
    def motor_speed(self) -> float:
        """Shaft speed of each motor, rad/s."""
        return self._c * self._w

    @property
    def current(self) -> float:
        """Stator current of one motor at the end of the last step, A (negative: braking)."""
        if self._L > 0.0:
            return self._i
        return (self._v - self._c * self._w / self._kv) / self._R

    @property
    def voltage(self) -> float:
        """Terminal voltage of each motor during the last step, V."""
        return self._v

    @property
    def held(self) -> bool:
        """At rest (on a stop, or held by static friction)."""
        return self._side != 0 or (self._dir == 0 and self._fc > 0.0)

    @property
    def at_lower(self) -> bool:
        """Resting on the lower hard stop."""
        return self._side < 0

    @property
    def at_upper(self) -> bool:
        """Resting on the upper hard stop."""
        return self._side > 0

    def _force(self, q: float) -> float:
        """External generalized force at ``q`` (N or N·m)."""
        raise NotImplementedError

    # --- stepping -----------------------------------------------------------------------------

    def step(self, h: float, voltage: float) -> None:
        """Advance ``h`` s with ``voltage`` V across each motor's terminals (held constant)."""
        if not (h >= 0.0 and math.isfinite(h)):
            raise ValueError(f"step length must be finite and ≥ 0, got {h}")
        if not math.isfinite(voltage):
            raise ValueError(f"voltage must be finite, got {voltage}")
        self._v = float(voltage)
        if h == 0.0:
            return
        self._settle()
        t = 0.0
        for _ in range(_MAX_EVENTS):
            rem = h - t
            if rem <= 0.0:
                return
            if self._side or (not self._dir and self._fc > 0.0):  # self.held, inlined
                spent = self._rest(rem)
                if spent >= rem:
                    return
                t += spent
                self._side = 0  # the net force overcame the stop or the friction: move off
            else:
                spent, event = self._free(rem, self._v)
                if not event:
                    return
                t += spent
                self._stop(event)
        # Pathological chattering between rest and motion: finish at rest.
        if h - t > 0.0 and not self.held:
            spent, event = self._free(h - t, self._v)
            if not event:
                return
            t += spent
            self._stop(event)
        if h - t > 0.0:
            self._rest_hold(h - t)

    def _stop(self, event: int) -> None:
        """Come to rest: on a stop (event -1 or +1), or where friction stopped it (_HELD)."""
        if event != _HELD:
            self._q, self._side = (self._lo if event < 0 else self._hi), event
        self._w, self._dir = 0.0, 0

    def _rest_current(self, t: float, i0: float) -> float:
        """Current after ``t`` s at zero speed (inductance > 0), A."""
        i_inf = self._v / self._R
        return i_inf + (i0 - i_inf) * math.exp(-self._R / self._L * t)

    def _rest_hold(self, t: float) -> None:
        if self._L > 0.0:
            self._i = self._rest_current(t, self._i)

    def _breakaway(self, net: float) -> int:
        """Direction a resting mechanism starts moving under the net force ``net`` (N or N·m,
        friction aside), or 0 while the stop and the static friction hold it."""
        side = self._side
        if side:  # the stop holds any force into it, the friction up to F_c away from it
            return 0 if net * side >= -self._fc else -side
        return 0 if abs(net) <= self._fc else 1 if net > 0.0 else -1

    def _rest(self, t_max: float) -> float:
        """Stay at rest while the stop and the static friction hold the net force; return the
        time spent (s). When it breaks away, the direction it moves is left in ``_dir``."""
        f_ext = self._force(self._q)
        if self._L == 0.0:
            net, side = f_ext + self._k * self._v, self._side
            if side and net * side >= -self._fc:
                return t_max  # on a stop and held there: the common case, without a call
            leave = self._breakaway(net)
            if not leave:
                return t_max
            self._dir = leave
            return 0.0
        leave = self._breakaway(f_ext + self._kI * self._i)
        if leave:
            self._dir = leave
            return 0.0
        i_inf = self._v / self._R
        leave = self._breakaway(f_ext + self._kI * i_inf)
        if not leave:
            self._i = self._rest_current(t_max, self._i)
            return t_max
        # The net force is monotone in time: it breaks away when I reaches i_turn.
        i_turn = (leave * self._fc - f_ext) / self._kI
        ratio = (i_turn - i_inf) / (self._i - i_inf)
        t_turn = -math.log(ratio) * self._L / self._R if ratio > 0.0 else 0.0
        if t_turn >= t_max:
            self._i = self._rest_current(t_max, self._i)
            return t_max
        self._i = i_turn
        self._dir = leave
        return t_turn

    def _free(self, t_max: float, v: float) -> tuple[float, int]:
        """Advance up to ``t_max`` s in motion; return (time spent, event): the stop hit
        (-1/+1), _HELD when the speed reached zero against Coulomb friction (the state is
        then at that instant, speed not yet zeroed), or 0."""
        raise NotImplementedError


class _LinearDriven(_Driven):
    """Mechanisms with a constant external force: advanced exactly."""

    def __init__(self, drive: MotorDrive, inertia: float, ratio: float, lower: float,
                 upper: float, start: float, force: float, losses: Losses):
        self._f = force
        self._fm = force  # the constant force while moving: with the Coulomb friction
        super().__init__(drive, inertia, ratio, lower, upper, start, losses)
        self._mats: dict[float, tuple[float, ...]] = {}
        if self._L > 0.0:
            # (w, I)' = M·(w, I) + (F/J, V/L), M = [[a, b], [c, d]].
            self._ma = -self._D / self._J
            self._mb = self._kI / self._J
            self._mc = -self._c / (self._kv * self._L)
            self._md = -self._R / self._L
            det = self._ma * self._md - self._mb * self._mc
            half = 0.5 * (self._ma + self._md)
            disc = half * half - det
            if disc > 0.0:  # real poles; the small one from det/λ (no cancellation)
                lam1 = half - math.sqrt(disc)
                self._poles: tuple[complex, complex] = (lam1, det / lam1)
                self._gap = 2.0 * math.sqrt(disc)
            else:  # complex pair σ ± iω (or repeated)
                self._poles = (complex(half, math.sqrt(-disc)), complex(half, -math.sqrt(-disc)))
                self._gap = 2.0 * math.sqrt(-disc)

    def _force(self, q: float) -> float:
        return self._f

    def _state_at(self, t: float, v: float, cached: bool = False) -> tuple[float, float, float]:
        """(q, w, I) after ``t`` s of free motion from the current state, exact."""
        q0, w0 = self._q, self._w
        if self._L == 0.0:
            beta = (self._fm + self._k * v) / self._J
            x = -self._alpha * t
            g1 = t * e1(x)
            w = w0 * math.exp(x) + beta * g1
            q = q0 + w0 * g1 + beta * t * t * e2(x)
            return q, w, (v - self._c * w / self._kv) / self._R
        m = self._mats.get(t) if cached else None
        if m is None:
            m = self._inductive_mats(t)
            if cached:
                if len(self._mats) >= 8:
                    self._mats.clear()
                self._mats[t] = m
        e00, e01, e10, e11, p00, p01, p10, p11, r00, r01 = m
        i0 = self._i
        c0, c1 = self._fm / self._J, v / self._L
        w = e00 * w0 + e01 * i0 + p00 * c0 + p01 * c1
        i = e10 * w0 + e11 * i0 + p10 * c0 + p11 * c1
        q = q0 + p00 * w0 + p01 * i0 + r00 * c0 + r01 * c1
        return q, w, i

    def _inductive_mats(self, t: float) -> tuple[float, ...]:
        """E = e^{Mt}, P1 = ∫₀ᵗe^{Ms}ds (2×2) and the first row of P2 = ∫₀ᵗ∫₀ˢe^{Mu}du ds.

        Sylvester's formula f(M) = f(λ2)·I + f[λ1, λ2]·(M − λ2·I) for f(λ) = e^{λt},
        t·(e^{λt} − 1)/(λt), t²·(e^{λt} − 1 − λt)/(λt)²; when the poles nearly coincide,
        the exponential of the block matrix [[M, I, 0], [0, 0, I], [0, 0, 0]]·t instead.
        """
        a, b, c, d = self._ma, self._mb, self._mc, self._md
        if self._gap * t < 1e-3 or self._gap < 1e-4 * abs(a + d):
            w = np.zeros((6, 6))
            w[0:2, 0:2] = [[a, b], [c, d]]
            w[0:2, 2:4] = w[2:4, 4:6] = np.eye(2)
            x = expm(w * t)
            return (x[0, 0], x[0, 1], x[1, 0], x[1, 1], x[0, 2], x[0, 3], x[1, 2], x[1, 3],
                    x[0, 4], x[0, 5])
        l1, l2 = self._poles
        out: list[float] = []
        for k in range(3):
            if isinstance(l1, complex):
                f1 = _phi_c(k, l1, t)
                dd = f1.imag / l1.imag  # f[λ, λ̄]
                a0 = f1.real - dd * l1.real  # f(λ̄) − f[λ, λ̄]·λ̄, real
            else:
                fa, fb = _phi_r(k, l1, t), _phi_r(k, l2, t)
                dd = (fa - fb) / (l1 - l2)
                a0 = fb - dd * l2
            # f(M) = a0·I + dd·M
            out += [a0 + dd * a, dd * b, dd * c, a0 + dd * d]
        return (*out[0:4], *out[4:8], out[8], out[9])

    def _accel(self, s: tuple[float, float, float], v: float) -> tuple[float, float]:
        """(dw/dt, d²w/dt²) in state s."""
        _, w, i = s
        y = (self._fm + self._kI * i - self._D * w) / self._J
        if self._L == 0.0:
            return y, -self._alpha * y
        di = (v - self._R * i - self._c * w / self._kv) / self._L
        return y, (self._kI * di - self._D * y) / self._J

    def _free(self, t_max: float, v: float) -> tuple[float, int]:
        fc = self._fc
        if fc > 0.0:
            self._fm = self._f - fc * self._dir
        end = self._state_at(t_max, v, cached=True)
        t_end, event = t_max, 0
        if fc > 0.0 and (self._L > 0.0 or end[1] * self._dir < 0.0):
            t_zero = self._speed_zero(t_max, v, end)
            if t_zero is not None:
                t_end, event = t_zero, _HELD
                end = self._state_at(t_zero, v)
        hit = None
        if math.isfinite(self._lo) or math.isfinite(self._hi):
            hit = self._first_crossing(t_end, v, end)
        if hit is None:
            q, w, i = end
            lo, hi = self._lo, self._hi
            self._q = lo if q < lo else hi if q > hi else q  # rounding within _POS_TOL
            self._w, self._i = w, i
            return t_end, event
        t_hit, side = hit
        _, _, i = self._state_at(t_hit, v)
        self._i = i
        return t_hit, side

    def _speed_zero(self, T: float, v: float, end: tuple[float, float, float]) -> float | None:
        """Earliest time in [0, T] the exact speed turns against the motion (the Coulomb
        friction's sign then changes: the mechanism stops there), or None."""
        d = self._dir
        if self._L == 0.0:
            if end[1] * d >= 0.0:
                return None  # w is monotone: it kept its sign
            beta = (self._fm + self._k * v) / self._J  # w(t) = β/α + (w0 − β/α)·e^{−αt}
            x = -self._w * self._alpha / beta
            return min(T, math.log1p(x) / self._alpha if self._alpha > 0.0 else -self._w / beta)
        start = (self._q, self._w, self._i)

        def state(t: float) -> tuple[float, float, float]:
            return start if t == 0.0 else end if t == T else self._state_at(t, v)

        def speed(t: float) -> tuple[float, float]:
            s = state(t)
            return s[1], self._accel(s, v)[0]

        ta, wa = 0.0, self._w
        for tb in (*self._accel_zeros(T, v, state), T):  # w is monotone between these
            wb = state(tb)[1]
            if wb * d < 0.0:
                return _root(speed, ta, tb, wa, wb)
            ta, wa = tb, wb
        return None

    def _first_crossing(self, T: float, v: float, end: tuple[float, float, float]
                        ) -> tuple[float, int] | None:
        """Earliest time in (0, T] the exact trajectory passes a stop, and which one.

        The trajectory is split where dw/dt changes sign (w monotone between), then where w
        changes sign (q monotone between); on each monotone piece a sign change of q − stop
        is located by safeguarded Newton.
        """
        start = (self._q, self._w, self._i)
        lo, hi = self._lo - _POS_TOL, self._hi + _POS_TOL
        reach = self._speed_bound(v, end) * T
        if lo < start[0] - reach and start[0] + reach < hi:
            return None  # cannot reach a stop within T

        def state(t: float) -> tuple[float, float, float]:
            return start if t == 0.0 else end if t == T else self._state_at(t, v)

        def speed(t: float) -> tuple[float, float]:
            s = state(t)
            return s[1], self._accel(s, v)[0]

        nodes = [0.0, *self._accel_zeros(T, v, state), T]
        pieces = pairwise(nodes)
        for ta, tb in pieces:
            sa, sb = state(ta), state(tb)
            qa, wa = sa[0], sa[1]
            qb, wb = sb[0], sb[1]
            sub = [(ta, sa), (tb, sb)]
            if (wa > 0.0 > wb) or (wa < 0.0 < wb):
                # One extremum of q inside; |w| ≤ |wa| before it, so |q − qa| ≤ |wa|·Δt.
                reach = abs(wa) * (tb - ta)
                if not (lo < qa - reach and qa + reach < hi and lo < qb < hi):
                    tw = _root(speed, ta, tb, wa, wb)
                    sub = [(ta, sa), (tw, state(tw)), (tb, sb)]
            for (t0, s0), (t1, s1) in pairwise(sub):
                for stop, side, beyond in ((self._lo, -1, s1[0] < lo),
                                           (self._hi, 1, s1[0] > hi)):
                    if not beyond:
                        continue
                    if (s0[0] - stop) * side >= 0.0:
                        return t0, side
                    def gap(t: float, stop: float = stop) -> tuple[float, float]:
                        s = state(t)
                        return s[0] - stop, s[1]

                    return _root(gap, t0, t1, s0[0] - stop, s1[0] - stop), side
        return None

    def _speed_bound(self, v: float, end: tuple[float, float, float]) -> float:
        """An upper bound of |w| over the step (m/s or rad/s), from its exact solution.

        L = 0: w is monotone, so max(|w0|, |w_end|). L > 0: with z = (w, I) and z∞ the
        equilibrium, w − w∞ is the first row of e^{Mt}·(z0 − z∞), whose entries are bounded
        for all t ≥ 0 (M = [[a, b], [c, d]]) by |λ − a|/ω and |b|/ω (complex poles σ ± iω)
        or (|λ1 − a| + |λ2 − a|)/(λ1 − λ2) and 2|b|/(λ1 − λ2) (real poles), i.e.
        (|λ1 − a| + |λ2 − a|)/gap and 2|b|/gap.
        """
        if self._L == 0.0:
            return max(abs(self._w), abs(end[1]))
        a, b, c, d = self._ma, self._mb, self._mc, self._md
        if self._gap < 1e-4 * abs(a + d):
            return math.inf  # nearly repeated poles: no useful bound
        c0, c1 = self._fm / self._J, v / self._L
        det = a * d - b * c
        w_inf = (b * c1 - d * c0) / det
        i_inf = (c * c0 - a * c1) / det
        l1, l2 = self._poles
        return (abs(w_inf) + (abs(l1 - a) + abs(l2 - a)) / self._gap * abs(self._w - w_inf)
                + 2.0 * abs(b) / self._gap * abs(self._i - i_inf))

    def _accel_zeros(self, T: float, v: float,
                     state: Callable[[float], tuple[float, float, float]]) -> list[float]:
        """Times in (0, T) where dw/dt changes sign, increasing."""
        if self._L == 0.0:
            return []  # dw/dt = (β − α·w0)·e^{−αt}: one sign
        # y = dw/dt obeys y'' − tr(M)·y' + det(M)·y = 0.
        rho = -(self._ma + self._md)
        k = self._ma * self._md - self._mb * self._mc
        disc = 0.25 * rho * rho - k
        if disc >= 0.0:
            edges = [0.0, T]  # real exponents: y has at most one zero
        else:
            spacing = math.pi / math.sqrt(-disc)  # zeros of y are exactly this far apart
            n = int(T / spacing) + 1
            edges = [T * j / n for j in range(n + 1)]

        def fy(t: float) -> tuple[float, float]:
            return self._accel(state(t), v)

        zeros = []
        ya = fy(0.0)[0]
        for ta, tb in pairwise(edges):
            yb = fy(tb)[0]
            if (ya > 0.0 > yb) or (ya < 0.0 < yb):
                zeros.append(_root(fy, ta, tb, ya, yb))
            ya = yb
        return zeros


class Elevator(_LinearDriven):
    """A carriage lifted by a cable on a drum, under constant gravity, with hard stops.

    carriage_mass: kg (everything the cable lifts; with rotating parts reflected, the
    inertia SysId's kA measures). drum_radius: m. min_height, max_height: hard stops, m.
    gravity: m/s² (WPILib's ElevatorSim uses 9.8). start_height: m, default min_height.
    losses: of the joint (force in N at the carriage). weight: the force gravity pulls the
    carriage down with, N; default carriage_mass·gravity (SysId's kG sets it apart from the
    inertia). Position is the carriage height, m; velocity m/s, up positive.
    """

    def __init__(self, drive: MotorDrive, carriage_mass: float, drum_radius: float,
                 min_height: float, max_height: float, gravity: float = GRAVITY,
                 start_height: float | None = None, losses: Losses = IDEAL,
                 weight: float | None = None):
        if not (drum_radius > 0.0 and math.isfinite(drum_radius)):
            raise ValueError("drum_radius must be a finite number > 0")
        if not (math.isfinite(min_height) and math.isfinite(max_height)):
            raise ValueError("elevator stops must be finite")
        self.carriage_mass = carriage_mass
        self.drum_radius = drum_radius
        self.gravity = gravity
        start = min_height if start_height is None else start_height
        self.weight = carriage_mass * gravity if weight is None else weight
        if not math.isfinite(self.weight):
            raise ValueError("weight must be finite")
        super().__init__(drive, carriage_mass, drive.gearing / drum_radius, min_height,
                         max_height, start, -self.weight, losses)

    @property
    def min_height(self) -> float:
        return self._lo

    @property
    def max_height(self) -> float:
        return self._hi


class Rotary(_LinearDriven):
    """A flywheel, a turret or any rotary load without gravity torque.

    moment_of_inertia: of the load about its axis, kg·m² (rotor inertia not added).
    losses: of the joint (torque in N·m at the output). min_angle, max_angle: hard stops, rad
    (default ±inf: none, a flywheel). Position is the output angle, rad; velocity rad/s.
    """

    def __init__(self, drive: MotorDrive, moment_of_inertia: float, start_angle: float = 0.0,
                 losses: Losses = IDEAL, min_angle: float = -math.inf,
                 max_angle: float = math.inf):
        self.moment_of_inertia = moment_of_inertia
        super().__init__(drive, moment_of_inertia, drive.gearing, min_angle, max_angle,
                         start_angle, 0.0, losses)

    def apply_impulse(self, impulse: float) -> None:
        """Take an angular impulse of ``impulse`` N·m·s about the output axis at once (a
        game piece shot off the wheel: negative, against the spin): the speed changes by
        impulse / moment of inertia, the angle and the winding current do not. On a hard stop
        only an impulse away from it moves the load."""
        w = self._w + impulse / self._J
        if (self._side < 0 and w <= 0.0) or (self._side > 0 and w >= 0.0):
            return
        self._w, self._side = w, 0
        self._dir = (w > 0.0) - (w < 0.0)


class _EtdCoeffs:
    """ETDRK4 coefficient vectors for one step length (see Arm), as tuples of floats: the
    state has 2 or 3 elements, where plain float arithmetic beats numpy's per-call cost."""

    __slots__ = ("E", "E2", "a1", "a2", "a3", "aV", "qF", "qV")

    def __init__(self, A: np.ndarray, bF: np.ndarray, bV: np.ndarray, h: float):
        n = A.shape[0]
        w = np.zeros((n + 4, n + 4))
        w[:n, :n] = A
        w[:n, n] = bF
        w[n, n + 1] = 1.0
        w[n + 1, n + 2] = 1.0
        w[:n, n + 3] = bV
        # exp(W·t) holds e^{At} and t·φ1(At)·bF, t²·φ2(At)·bF, t³·φ3(At)·bF, t·φ1(At)·bV.
        x = expm(w * h)
        x2 = expm(w * (0.5 * h))
        p1, p2, p3 = x[:n, n], x[:n, n + 1] / h, x[:n, n + 2] / (h * h)
        self.E = _rows(x[:n, :n])
        self.E2 = _rows(x2[:n, :n])
        self.qF, self.qV = _vec(x2[:n, n]), _vec(x2[:n, n + 3])  # (h/2)·φ1(Ah/2)·b
        self.a1 = _vec(p1 - 3.0 * p2 + 4.0 * p3)  # h·(φ1 − 3φ2 + 4φ3)·bF
        self.a2 = _vec(2.0 * (p2 - 2.0 * p3))  # 2·h·(φ2 − 2φ3)·bF
        self.a3 = _vec(4.0 * p3 - p2)  # h·(4φ3 − φ2)·bF
        self.aV = _vec(x[:n, n + 3])  # h·φ1(Ah)·bV

    @classmethod
    def damped(cls, alpha: float, bf: float, bv: float, h: float) -> _EtdCoeffs:
        """The same coefficients in closed form for A = [[0, 1], [0, −alpha]],
        bF = (0, bf), bV = (0, bv) (an arm without inductance), a few µs instead of two
        matrix exponentials. With z = −alpha·t, φ_k(A·t)·(0, 1) = (t·φ_{k+1}(z), φ_k(z))
        (A's eigenvalues are 0 and −alpha; the divided difference of φ_k over them is
        φ_{k+1})."""
        c = cls.__new__(cls)
        p0, p1, p2, p3, p4 = phis(-alpha * h)
        half = 0.5 * h
        q0, q1, q2, _, _ = phis(-alpha * half)
        c.E = ((1.0, h * p1), (0.0, p0))
        c.E2 = ((1.0, half * q1), (0.0, q0))
        c.qF = (half * bf * half * q2, half * bf * q1)
        c.qV = (half * bv * half * q2, half * bv * q1)
        f1 = (h * bf * h * p2, h * bf * p1)  # h·φ1(Ah)·bF, h·φ2(Ah)·bF, h·φ3(Ah)·bF
        f2 = (h * bf * h * p3, h * bf * p2)
        f3 = (h * bf * h * p4, h * bf * p3)
        c.a1 = tuple(a - 3.0 * b + 4.0 * d for a, b, d in zip(f1, f2, f3, strict=True))
        c.a2 = tuple(2.0 * (b - 2.0 * d) for b, d in zip(f2, f3, strict=True))
        c.a3 = tuple(4.0 * d - b for b, d in zip(f2, f3, strict=True))
        c.aV = (h * bv * h * p2, h * bv * p1)
        return c


Vector = list[float]


def _vec(a: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in a)


def _rows(m: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(_vec(row) for row in m)


def _affine(m: tuple[tuple[float, ...], ...], x: Sequence[float], terms: Sequence[
        tuple[tuple[float, ...], float]]) -> Vector:
    """m·x + Σ vector·scale, element by element."""
    out = [sum(map(mul, row, x)) for row in m]
    for vec, scale in terms:
        out = [o + e * scale for o, e in zip(out, vec, strict=True)]
    return out


class Arm(_Driven):
    """A single-jointed arm under gravity with hard stops.

    length: m. mass: kg. cg_distance: pivot to centre of gravity along the arm, m (default
    length/2). moment_of_inertia: about the pivot, kg·m²; default ``m·d² + m·L²/12``: a point
    mass at the CoG plus a uniform rod's spread about its own centre. That is exact for a
    uniform rod (d = L/2 gives m·L²/3) and an approximation otherwise. min_angle, max_angle:
    hard stops, rad (±inf: none). start_angle: rad, default 0 clamped into the stops.
    losses: of the joint (torque in N·m at the pivot). gravity_torque: the torque gravity
    pulls the arm down with when horizontal, N·m; default m·g·d (SysId's kG sets it apart
    from the mass). Angle 0 is horizontal, CCW (up) positive; gravity torque is
    −gravity_torque·cos(θ).

    Integration: ETDRK4 on ``x' = A·x + bF·(τ_g(θ) − F_c·sgn(ω)) + bV·V`` with x = (θ, ω) or
    (θ, ω, I), the friction's sign fixed between events. The linear part (including the stiff
    motor and L/R poles, and the damping of the losses) and the constant Coulomb torque are
    exact; the error comes only from
    the variation of the gravity torque within a step, 4th order in the step (measured: 3-5e-9
    rad over a 2 s swing at 5 ms, 4e-12 at 1 ms, 6e-7 at 20 ms). Substeps longer than
    ``max_internal_step`` (5 ms) are split.
    """

    max_internal_step = 0.005  # s

    def __init__(self, drive: MotorDrive, length: float, mass: float,
                 cg_distance: float | None = None, moment_of_inertia: float | None = None,
                 min_angle: float = -math.inf, max_angle: float = math.inf,
                 start_angle: float | None = None, gravity: float = GRAVITY,
                 losses: Losses = IDEAL, gravity_torque: float | None = None):
        if not (length > 0.0 and math.isfinite(length)):
            raise ValueError("length must be a finite number > 0")
        if not (mass >= 0.0 and math.isfinite(mass)):
            raise ValueError("mass must be a finite number ≥ 0")
        d = 0.5 * length if cg_distance is None else cg_distance
        if not math.isfinite(d):
            raise ValueError("cg_distance must be finite")
        j = mass * d * d + mass * length * length / 12.0 if moment_of_inertia is None \
            else moment_of_inertia
        self.length, self.mass, self.cg_distance, self.gravity = length, mass, d, gravity
        self.moment_of_inertia = j
        self.gravity_torque = mass * gravity * d if gravity_torque is None else gravity_torque
        if not math.isfinite(self.gravity_torque):
            raise ValueError("gravity_torque must be finite")
        self._mgd = self.gravity_torque
        self._fm = 0.0  # the Coulomb torque while moving, −F_c·sgn(ω), N·m
        self._fq: Callable[[float], float] = self._force  # the torque while moving, τ_g + fm
        start = min(max(0.0, min_angle), max_angle) if start_angle is None else start_angle
        super().__init__(drive, j, drive.gearing, min_angle, max_angle, start, losses)
        n = 3 if self._L > 0.0 else 2
        A = np.zeros((n, n))
        A[0, 1] = 1.0
        bF = np.zeros(n)
        bV = np.zeros(n)
        bF[1] = 1.0 / j
        if n == 3:
            A[1, 1] = -self._D / j
            A[1, 2] = self._kI / j
            A[2, 1] = -self._c / (self._kv * self._L)
            A[2, 2] = -self._R / self._L
            bV[2] = 1.0 / self._L
        else:
            A[1, 1] = -self._alpha
            bV[1] = self._k / j
        self._A, self._bF, self._bV = A, bF, bV
        self._accel_row = _vec(A[1])  # d(speed)/dt = accel_row·x + bF[1]·F + bV[1]·V
        self._etd: dict[float, _EtdCoeffs] = {}

    def _force(self, q: float) -> float:
        return -self._mgd * math.cos(q)

    def _moving_force(self, q: float) -> float:
        return -self._mgd * math.cos(q) + self._fm

    def _coeffs(self, h: float, cache: bool) -> _EtdCoeffs:
        c = self._etd.get(h)
        if c is None:
            c = (_EtdCoeffs(self._A, self._bF, self._bV, h) if self._L > 0.0 else
                 _EtdCoeffs.damped(self._alpha, self._bF[1], self._bV[1], h))
            if cache:
                if len(self._etd) >= _ETD_CACHE:
                    self._etd.clear()
                self._etd[h] = c
        return c

    def _etd_step(self, x: Sequence[float], h: float, v: float, cache: bool = False) -> Vector:
        """One ETDRK4 (Cox–Matthews) step of length h from x."""
        c = self._coeffs(h, cache)
        f = self._fq  # with the Coulomb torque: a constant, integrated exactly
        if len(x) == 2:  # no inductance: written out (only the angle enters f)
            q, w = x
            (e00, e01), (e10, e11) = c.E2
            (f0, f1), (v0, v1) = c.qF, c.qV
            fx = f(q)
            b0, b1 = e00 * q + e01 * w + v0 * v, e10 * q + e11 * w + v1 * v
            a0, a1 = b0 + f0 * fx, b1 + f1 * fx
            fa = f(a0)
            fb = f(b0 + f0 * fa)
            fc = f(e00 * a0 + e01 * a1 + f0 * (2.0 * fb - fx) + v0 * v)
            (g00, g01), (g10, g11) = c.E
            (p0, p1), (r0, r1), (s0, s1), (u0, u1) = c.a1, c.a2, c.a3, c.aV
            fab = fa + fb
            return [g00 * q + g01 * w + p0 * fx + r0 * fab + s0 * fc + u0 * v,
                    g10 * q + g11 * w + p1 * fx + r1 * fab + s1 * fc + u1 * v]
        fx = f(x[0])
        base = _affine(c.E2, x, ((c.qV, v),))
        qf = c.qF
        a = [b + q * fx for b, q in zip(base, qf, strict=True)]
        fa = f(a[0])
        fb = f(base[0] + qf[0] * fa)
        cc = _affine(c.E2, a, ((qf, 2.0 * fb - fx), (c.qV, v)))
        fc = f(cc[0])
        return _affine(c.E, x, ((c.a1, fx), (c.a2, fa + fb), (c.a3, fc), (c.aV, v)))

    def _vec(self) -> Vector:
        if self._L > 0.0:
            return [self._q, self._w, self._i]
        return [self._q, self._w]

    def _set(self, x: Sequence[float]) -> None:
        self._q, self._w = float(x[0]), float(x[1])
        if self._L > 0.0:
            self._i = float(x[2])

    def _free(self, t_max: float, v: float) -> tuple[float, int]:
        if t_max < 1e-12:  # a rounding remainder after an event: not worth an exponential
            self._q = min(max(self._q + self._w * t_max, self._lo), self._hi)
            return t_max, 0
        sticky = self._fc > 0.0
        self._fm = -self._fc * self._dir
        self._fq = self._moving_force if self._fm else self._force
        n = max(1, math.ceil(t_max / self.max_internal_step - 1e-9))
        h = t_max / n
        for k in range(n):
            x0 = self._vec()
            x1 = self._etd_step(x0, h, v, cache=True)
            t_end = h
            if sticky and float(x1[1]) * self._dir < 0.0:
                t_end = self._speed_zero(x0, x1, h, v)
                x1 = self._etd_step(x0, t_end, v) if t_end > 0.0 else list(x0)
            hit = self._crossing(x0, x1, t_end, v) if t_end > 0.0 else None
            if hit is not None:
                tau, side, x_hit = hit
                self._set(x_hit)
                return k * h + tau, side
            self._set(x1)
            if t_end < h:
                return k * h + t_end, _HELD
        lo, hi = self._lo, self._hi
        self._q = lo if self._q < lo else hi if self._q > hi else self._q
        return t_max, 0

    def _speed_zero(self, x0: Vector, x1: Vector, h: float, v: float) -> float:
        """When, within one ETDRK4 step that ends moving against the friction's sign, the
        speed crosses zero: root-found on the ETDRK4 map."""
        row, f = self._accel_row, self._fq
        per_force, per_volt = float(self._bF[1]), float(self._bV[1])

        def g(t: float) -> tuple[float, float]:
            x = self._etd_step(x0, t, v) if t != h else x1
            accel = sum(map(mul, row, x)) + per_force * f(x[0]) + per_volt * v
            return x[1], accel

        w0, w1 = float(x0[1]), float(x1[1])
        return _root(g, 0.0, h, w0, w1, guess=h * w0 / (w0 - w1))  # from the secant

    def _crossing(self, x0: Vector, x1: Vector, h: float, v: float
                  ) -> tuple[float, int, Vector] | None:
        """First stop passed within one ETDRK4 step, located on the ETDRK4 map."""
        lo, hi = self._lo - _POS_TOL, self._hi + _POS_TOL
        if not (math.isfinite(lo) or math.isfinite(hi)):
            return None
        q0, w0, q1, w1 = float(x0[0]), float(x0[1]), float(x1[0]), float(x1[1])
        t_end = None
        stop, side = 0.0, 0
        # An excursion beyond a stop and back within the step: find the extremum of the cubic
        # Hermite interpolant (error O(h⁴)) and check the true map there.
        ext = _hermite_extremum(q0, w0, q1, w1, h)
        if ext is not None:
            s, qs = ext
            margin = 1e-6 * (abs(qs - q0) + abs(q1 - q0)) + _POS_TOL
            if qs < lo + margin or qs > hi - margin:
                qt = float(self._etd_step(x0, s, v)[0])
                if qt < lo:
                    t_end, stop, side = s, self._lo, -1
                elif qt > hi:
                    t_end, stop, side = s, self._hi, 1
        if t_end is None:
            if q1 < lo:
                t_end, stop, side = h, self._lo, -1
            elif q1 > hi:
                t_end, stop, side = h, self._hi, 1
            else:
                return None
        if (q0 - stop) * side >= 0.0:
            return 0.0, side, list(x0)

        def g(t: float) -> tuple[float, float]:
            x = self._etd_step(x0, t, v) if t != h else x1
            return float(x[0]) - stop, float(x[1])

        q_end = float(x1[0]) if t_end == h else float(self._etd_step(x0, t_end, v)[0])
        tau = _root(g, 0.0, t_end, q0 - stop, q_end - stop)
        x_hit = self._etd_step(x0, tau, v) if tau > 0.0 else list(x0)
        return tau, side, x_hit


def _hermite_extremum(q0: float, w0: float, q1: float, w1: float, h: float
                      ) -> tuple[float, float] | None:
    """Interior extremum (time, value) of the cubic Hermite through (q0,w0), (q1,w1) on [0,h].

    Returns the one whose value is farthest from the chord, or None when w keeps its sign.
    """
    if (w0 >= 0.0) == (w1 >= 0.0) and w0 != 0.0 and w1 != 0.0:
        return None
    # p'(u)/h = w0·H00' ... written in u = t/h as a quadratic a·u² + b·u + c.
    d = q1 - q0
    a = 3.0 * (w0 + w1) * h - 6.0 * d
    b = 6.0 * d - (4.0 * w0 + 2.0 * w1) * h
    c = w0 * h
    roots = []
    if abs(a) < 1e-300:
        if b != 0.0:
            roots.append(-c / b)
    else:
        disc = b * b - 4.0 * a * c
        if disc >= 0.0:
            sq = math.sqrt(disc)
            qq = -0.5 * (b + math.copysign(sq, b))
            if qq != 0.0:
                roots += [qq / a, c / qq]
            else:
                roots.append(-b / (2.0 * a))
    best = None
    for u in roots:
        if 0.0 < u < 1.0:
            h00 = 2 * u**3 - 3 * u**2 + 1
            h10 = u**3 - 2 * u**2 + u
            h01 = -2 * u**3 + 3 * u**2
            h11 = u**3 - u**2
            val = h00 * q0 + h10 * h * w0 + h01 * q1 + h11 * h * w1
            if best is None or abs(val - q0) > abs(best[1] - q0):
                best = (u * h, val)
    return best


class LinearMotion:
    """pyfrc's LinearMotion: position moves at duty × speed, clamped, with no dynamics.

    speed: travel per second at full duty (m/s or any unit). min_position, max_position:
    clamps (None: unbounded on that side; pyfrc applies both only when max is given).
    Duty is not clamped to [-1, 1] (as in pyfrc).
    """

    def __init__(self, speed: float, min_position: float | None = None,
                 max_position: float | None = None, start_position: float = 0.0):
        if min_position is not None and max_position is not None \
                and not min_position <= max_position:
            raise ValueError("min_position must be ≤ max_position")
        self.speed = speed
        self.min_position = min_position
        self.max_position = max_position
        self._start = start_position
        self._pos = self._vel = 0.0
        self.reset()

    def reset(self, position: float | None = None) -> None:
        """Back to ``position`` (default: the start), at rest."""
        self._pos = self._clamp(self._start if position is None else position)
        self._vel = 0.0

    def _clamp(self, p: float) -> float:
        if self.max_position is not None and p > self.max_position:
            p = self.max_position
        if self.min_position is not None and p < self.min_position:
            p = self.min_position
        return p

    def step(self, h: float, duty: float) -> None:
        """position += duty · speed · h, then clamp."""
        if not (math.isfinite(h) and math.isfinite(duty)):
            raise ValueError("h and duty must be finite")
        before = self._pos
        self._pos = self._clamp(before + duty * self.speed * h)
        self._vel = (self._pos - before) / h if h > 0.0 else 0.0

    @property
    def position(self) -> float:
        return self._pos

    @property
    def velocity(self) -> float:
        """Mean speed over the last step (0 while clamped)."""
        return self._vel

    @property
    def at_lower(self) -> bool:
        return self.min_position is not None and self._pos <= self.min_position

    @property
    def at_upper(self) -> bool:
        return self.max_position is not None and self._pos >= self.max_position
