"""Shared tire-contact machinery: pose exponential, geared-motor step, contact solver.

References: wpimath's Pose2d.exp; the closed-form solution of J·dω/dt = c·V − b·ω − τ (written
out here from the motor constants, not taken from the model); Simpson quadrature of the
current for the step average; and, for the contact solver, the optimality conditions of
``min ½ PᵀAP − rhsᵀP`` over the friction discs (sticking rows hold, sliding impulses on the
circle, the energy-like function Φ never above Φ(0)).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wpimath.geometry import Pose2d, Rotation2d, Twist2d

from simserver.models.motor import motor_by_name
from simserver.models.tires import (
    WHEEL_FRICTION,
    DenseContacts,
    GearedMotors,
    ReducedContacts,
    contact_impulses,
    pose_exp,
    wheel_inertia_estimate,
)

KRAKEN = motor_by_name("Kraken X60")


def phi(a: np.ndarray, rhs: np.ndarray, p: np.ndarray) -> float:
    """Φ(P) − Φ(0) = ½ PᵀAP − rhsᵀP: the kinetic energy change of the contact step."""
    return float(0.5 * p @ a @ p - rhs @ p)


def spd(rng: np.random.Generator, rows: int, cond: float = 1e3) -> np.ndarray:
    q, _ = np.linalg.qr(rng.normal(size=(rows, rows)))
    return q @ np.diag(np.geomspace(1.0, 1.0 / cond, rows)) @ q.T


# --- pose exponential ---------------------------------------------------------------------------

def _sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    s, c, term, k = Decimal(0), Decimal(0), Decimal(1), 0
    while k < 60:  # term = x^k / k!
        if k % 4 == 0:
            c += term
        elif k % 4 == 1:
            s += term
        elif k % 4 == 2:
            c -= term
        else:
            s -= term
        k += 1
        term = term * x / k
    return s, c


def exact_pose_exp(x, y, heading, dx, dy, dtheta) -> tuple[float, float]:
    """Pose2d.exp in 50-digit arithmetic (series for sin, cos and (1 − cos θ)/θ)."""
    with localcontext() as ctx:
        ctx.prec = 50
        t = Decimal(dtheta)
        sin_t = _sin_cos(t)[0]
        if t == 0:
            s, c = Decimal(1), Decimal(0)
        else:
            s = sin_t / t
            # 1 − cos t = 2 sin²(t/2), free of cancellation
            c = 2 * _sin_cos(t / 2)[0] ** 2 / t
        bx = Decimal(dx) * s - Decimal(dy) * c
        by = Decimal(dx) * c + Decimal(dy) * s
        sh, ch = _sin_cos(Decimal(heading))
        return float(Decimal(x) + bx * ch - by * sh), float(Decimal(y) + bx * sh + by * ch)


@settings(max_examples=200, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(-7, 7),
       st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.floats(-1.0, 1.0))
def test_pose_exp_matches_exact_arithmetic_to_1e15(x, y, heading, dx, dy, dtheta):
    got = pose_exp(x, y, heading, dx, dy, dtheta)
    want = exact_pose_exp(x, y, heading, dx, dy, dtheta)
    assert abs(got[0] - want[0]) < 1e-15 * (1 + abs(want[0]))
    assert abs(got[1] - want[1]) < 1e-15 * (1 + abs(want[1]))
    assert got[2] == heading + dtheta


@settings(max_examples=200, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(-7, 7),
       st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.floats(1e-3, 1.0), st.booleans())
def test_pose_exp_matches_wpimath_pose2d_exp_to_1e12(x, y, heading, dx, dy, dtheta, negative):
    """Same formula as wpimath for turns ≥ 1e-3 rad. Below that wpimath's (1 − cos θ)/θ loses
    digits (1e-10 m per 2 cm step at θ = 1e-8, measured); pose_exp does not."""
    dtheta = -dtheta if negative else dtheta
    got = pose_exp(x, y, heading, dx, dy, dtheta)
    want = Pose2d(x, y, Rotation2d(heading)).exp(Twist2d(dx, dy, dtheta))
    assert abs(got[0] - want.X()) < 1e-12
    assert abs(got[1] - want.Y()) < 1e-12
    assert abs(math.remainder(got[2] - want.rotation().radians(), math.tau)) < 1e-12


def test_pose_exp_small_angle_branch_agrees_with_the_exact_form_to_1e15():
    dx, dy, dtheta = 0.01, 0.002, 0.99e-9  # just inside the series branch
    s, c = math.sin(dtheta) / dtheta, 2.0 * math.sin(0.5 * dtheta) ** 2 / dtheta
    x, y, heading = pose_exp(0.0, 0.0, 0.0, dx, dy, dtheta)
    assert abs(x - (dx * s - dy * c)) < 1e-15 * dx
    assert abs(y - (dx * c + dy * s)) < 1e-15 * dx
    assert heading == dtheta


# --- geared motors ------------------------------------------------------------------------------

def analytic_motor(j: float, c: float, b: float, volts: float, load: float, w0: float,
                   t: float) -> tuple[float, float]:
    """ω(t) and ∫ω for J·dω/dt = c·V − b·ω − load (constant), from first principles."""
    w_inf = (c * volts - load) / b
    decay = math.exp(-b * t / j)
    return w_inf + (w0 - w_inf) * decay, w_inf * t + (w0 - w_inf) * (j / b) * (1.0 - decay)


@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_geared_motor_step_is_exact_for_constant_voltage_and_load_to_1e12(h):
    n, g, j = 2, 6.75, 0.01
    motors = GearedMotors([KRAKEN], [n], [g], [j])
    step = motors.discretize(h, np.array([False]))
    c = n * g * KRAKEN.kt / KRAKEN.R
    b = n * g * g * KRAKEN.kt / (KRAKEN.R * KRAKEN.kv)
    volts, load, w0 = 9.0, 3.5, 40.0
    w_end, _ = analytic_motor(j, c, b, volts, load, w0, h)
    got = step.alpha[0] * w0 + step.gain[0] * volts - step.mobility[0] * load * h
    assert got == pytest.approx(w_end, rel=1e-12)
    _, free_int = analytic_motor(j, c, b, volts, 0.0, w0, h)
    angle = step.pos_speed[0] * w0 + step.pos_volt[0] * volts
    assert angle == pytest.approx(free_int, rel=1e-12)
    # Average current = (1/h)∫ n·(V − G·ω/Kv)/R dt, here by Simpson on 2001 points.
    ts = np.linspace(0.0, h, 2001)
    w_inf = (c * volts - load) / b
    ws = w_inf + (w0 - w_inf) * np.exp(-b * ts / j)
    amps = n * (volts - g * ws / KRAKEN.kv) / KRAKEN.R
    simpson = (amps[0] + amps[-1] + 4 * amps[1:-1:2].sum() + 2 * amps[2:-1:2].sum()) / 6000
    current = step.current_scale[0] * (j * (got - w0) + load * h)
    assert current == pytest.approx(simpson, rel=1e-9)


def test_coasting_motor_has_no_torque_no_current_and_plain_inertia():
    motors = GearedMotors([KRAKEN, KRAKEN], [1, 1], [10.0, 10.0], [0.01, 0.01])
    step = motors.discretize(0.005, np.array([True, False]))
    assert step.alpha[0] == 1.0 and step.gain[0] == 0.0 and step.current_scale[0] == 0.0
    assert step.mobility[0] == pytest.approx(1 / 0.01, rel=1e-15)
    assert step.pos_speed[0] == 0.005 and step.pos_volt[0] == 0.0
    assert step.gain[1] > 0.0 and step.current_scale[1] > 0.0


def test_stiff_motor_step_stays_bounded_where_euler_would_diverge():
    """Steer at 150/7 on 0.004 kg·m² with a Kraken: τ ≈ 0.75 ms; at 20 ms explicit Euler's
    factor 1 − h/τ ≈ −26 would blow up, the exact factor e^(−h/τ) is ≈ 3e-12."""
    motors = GearedMotors([KRAKEN], [1], [150 / 7], [0.004])
    tau = 0.004 / motors.damping[0]
    assert 0.5e-3 < tau < 1.5e-3
    step = motors.discretize(0.02, np.array([False]))
    assert 0.0 <= step.alpha[0] < 1e-10
    assert abs(1.0 - 0.02 / tau) > 20.0


def test_wheel_inertia_estimate_is_disc_plus_reflected_rotors():
    assert wheel_inertia_estimate(0.05, 0.2) == pytest.approx(0.5 * 0.2 * 0.05**2)
    assert wheel_inertia_estimate(0.05, 0.2, rotor_inertia=1e-4, gearing=6.0, motor_count=2) == (
        pytest.approx(0.5 * 0.2 * 0.05**2 + 2 * 36 * 1e-4))


def test_friction_table_holds_plausible_coefficients():
    assert all(0.5 <= mu <= 1.6 for mu in WHEEL_FRICTION.values())
    assert WHEEL_FRICTION["blue_nitrile"] > WHEEL_FRICTION["colson"]


# --- contact solver -----------------------------------------------------------------------------

def solve_contacts(a: np.ndarray, rhs: np.ndarray, limit: np.ndarray, k: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """contact_impulses on a whole matrix, as arrays: (impulses N·s, sliding mask)."""
    p, sliding = contact_impulses(DenseContacts(a, rhs), limit.tolist(), k)
    return np.array(p), np.array(sliding, dtype=bool)


def magnitudes(p: np.ndarray, k: int) -> np.ndarray:
    """|P_i| per contact of k rows each."""
    return np.abs(p) if k == 1 else np.hypot(p[0::2], p[1::2])


def residual_scale(a: np.ndarray, p: np.ndarray, rhs: np.ndarray) -> float:
    return float(np.abs(a).max() * np.abs(p).sum() + np.abs(rhs).max())


@pytest.mark.parametrize("k", [1, 2])
def test_sticking_contacts_satisfy_every_row_to_1e12(k):
    rng = np.random.default_rng(1)
    a = spd(rng, 4 * k)
    rhs = rng.normal(size=4 * k)
    p, sliding = solve_contacts(a, rhs, np.full(4, 1e6), k)
    assert not sliding.any()
    assert np.abs(a @ p - rhs).max() < 1e-12 * residual_scale(a, p, rhs)


@pytest.mark.parametrize("k", [1, 2])
def test_sliding_contacts_carry_exactly_the_limit_and_the_rest_stick_to_1e12(k):
    """Random well-conditioned problems with some contacts over their limit: every impulse
    within its limit; sliding ones exactly on it and sticking rows exact (to 1e-12), except
    where the energy guard had to shrink the result, which must be rare (≤ 5 %)."""
    rng = np.random.default_rng(2)
    trials, exact = 300, 0
    for _ in range(trials):
        a = spd(rng, 4 * k, cond=50.0)
        rhs = rng.normal(size=4 * k)
        free = np.linalg.solve(a, rhs)
        mags = magnitudes(free, k)
        limit = mags * rng.uniform(0.3, 1.5, 4)
        p, sliding = solve_contacts(a, rhs, limit, k)
        got = magnitudes(p, k)
        assert np.all(got <= limit * (1 + 1e-12))
        assert sliding.any() == bool(np.any(mags > limit))
        if np.allclose(got[sliding], limit[sliding], rtol=1e-12, atol=0.0):
            exact += 1
            rows = ~sliding if k == 1 else np.repeat(~sliding, k)
            residual = (a @ p - rhs)[rows]
            assert np.abs(residual).max(initial=0.0) < 1e-12 * residual_scale(a, p, rhs)
    assert exact >= 0.95 * trials


def test_sliding_impulse_opposes_the_slip_it_leaves_within_1_degree():
    """Coulomb: after the step a sliding contact's slip (A·P − rhs)_i points against P_i.
    One isolated contact (no coupling), strongly anisotropic block: the damped solve is the
    trust-region solution, so the angle is exact; 1° leaves room for the capped iterations."""
    a = np.diag([0.3, 0.02])
    rhs = np.array([0.2, 0.05])
    p, sliding = solve_contacts(a, rhs, np.array([0.5]), 2)
    assert sliding[0]
    slip = a @ p - rhs
    cos = -(slip @ p) / (np.linalg.norm(slip) * np.linalg.norm(p))
    assert cos > math.cos(math.radians(1.0))
    assert np.linalg.norm(p) == pytest.approx(0.5, rel=1e-12)


def test_energy_guard_prevents_gain_from_strongly_coupled_sliding_contacts():
    """Two contacts whose sticking impulses mostly cancel (an internal force): scaling each onto
    its friction circle would add energy (Φ > 0); the solver's result never does."""
    a = np.array([[1.0, -0.99], [-0.99, 1.0]])
    rhs = a @ np.array([1.0, 1.0])
    limit = np.array([0.01, 0.99])
    naive = np.array([0.01, 0.99])
    assert phi(a, rhs, naive) > 0.1  # the failure this guards against
    p, _ = solve_contacts(a, rhs, limit, 1)
    assert phi(a, rhs, p) <= 0.0
    assert np.all(np.abs(p) <= limit * (1 + 1e-12))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2]), st.integers(2, 6),
       st.floats(0.01, 3.0))
def test_contact_step_never_adds_energy(seed, k, contacts, limit_scale):
    rng = np.random.default_rng(seed)
    a = spd(rng, contacts * k, cond=float(rng.choice([10.0, 1e3, 1e6])))
    rhs = rng.normal(size=contacts * k)
    p, _ = solve_contacts(a, rhs, np.full(contacts, limit_scale) * rng.uniform(0.1, 1, contacts),
                          k)
    assert phi(a, rhs, p) <= 1e-12 * max(1.0, float(rhs @ rhs))


# --- the reduced (Woodbury) system against the whole matrix ------------------------------------

def chassis_problem(rng: np.random.Generator, contacts: int, k: int
                    ) -> tuple[list[tuple[float, float, float]], list[float], list[float]]:
    """Random contacts of one chassis: scaled Jacobian rows (rows × 3, the size of 1/√m and
    r/√J of an FRC robot), compliances from 1e-3 to 1 (m/s per N·s) and a violation rhs."""
    jac = rng.normal(scale=0.15, size=(contacts * k, 3))
    compliance = 10.0 ** rng.uniform(-3.0, 0.0, contacts * k)
    rhs = rng.normal(size=contacts * k)
    return [tuple(r) for r in jac.tolist()], compliance.tolist(), rhs.tolist()


def dense(rows, compliance, rhs) -> tuple[np.ndarray, np.ndarray]:
    jac = np.array(rows)
    return jac @ jac.T + np.diag(compliance), np.array(rhs)


@pytest.mark.parametrize("k", [1, 2])
def test_reduced_solves_equal_dense_solves_to_1e12(k):
    """Every solve the contact solver asks for: plain, damped, and with some rows given."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        rows, compliance, rhs = chassis_problem(rng, 4, k)
        a, b = dense(rows, compliance, rhs)
        reduced, whole = ReducedContacts(rows, compliance, rhs), DenseContacts(a, b)
        scale = float(np.abs(np.linalg.solve(a, b)).max())
        damping = rng.uniform(0.0, 2.0, 4 * k).tolist()
        free = (rng.uniform(size=4 * k) < 0.5).tolist()
        fixed = [0.0 if f else float(v) for f, v in zip(free, rng.normal(size=4 * k),
                                                        strict=True)]
        for got, want in ((reduced.solve(), whole.solve()),
                          (reduced.solve(damping), whole.solve(damping)),
                          (reduced.solve_given(free, fixed), whole.solve_given(free, fixed))):
            assert np.abs(np.array(got) - want).max() <= 1e-12 * scale
        p = reduced.solve()
        assert reduced.quad(p) == pytest.approx(whole.quad(p), rel=1e-12)
        assert np.allclose(reduced.twist(p), np.array(rows).T @ np.array(p), rtol=0.0,
                           atol=1e-12 * scale)
        if k == 2:
            assert np.allclose(reduced.pair_blocks(), whole.pair_blocks(), rtol=1e-14,
                               atol=1e-14)


@pytest.mark.parametrize("k", [1, 2])
def test_contact_impulses_are_the_same_on_either_system(k):
    """The whole solver (sticking, sliding, re-solving the sticking rows, energy guard) gives
    the same impulses and sliding flags from the reduced system as from the whole matrix."""
    rng = np.random.default_rng(6)
    slid = 0
    for _ in range(300):
        rows, compliance, rhs = chassis_problem(rng, 4, k)
        a, b = dense(rows, compliance, rhs)
        free = np.linalg.solve(a, b)
        mags = magnitudes(free, k)
        limit = (mags * rng.uniform(0.3, 1.5, 4)).tolist()
        p_r, s_r = contact_impulses(ReducedContacts(rows, compliance, rhs), limit, k)
        p_w, s_w = contact_impulses(DenseContacts(a, b), limit, k)
        assert s_r == s_w
        assert np.abs(np.array(p_r) - p_w).max() <= 1e-10 * float(np.abs(free).max())
        slid += any(s_r)
    assert slid > 200  # the sliding paths were exercised


def box_minimum(a: np.ndarray, rhs: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """The minimum of Φ(P) = ½ PᵀAP − rhsᵀP over |P_i| ≤ limit_i by brute force: every
    pattern of held-at-+limit, held-at-−limit and free contacts, the free ones solved exactly,
    the feasible pattern of least Φ (a convex minimum over a box is one of them)."""
    best, best_phi = None, math.inf
    for pattern in np.ndindex(*(3,) * len(rhs)):
        side = np.array(pattern, dtype=float) - 1.0  # −1, 0, +1
        free = side == 0.0
        p = side * limit
        if free.any():
            p[free] = np.linalg.solve(a[np.ix_(free, free)], rhs[free] - a[free] @ p)
        if np.all(np.abs(p) <= limit * (1 + 1e-12)) and phi(a, rhs, p) < best_phi:
            best, best_phi = p, phi(a, rhs, p)
    assert best is not None
    return best


@pytest.mark.parametrize("reduced", [False, True])
def test_one_row_contacts_slide_exactly_at_the_coulomb_optimum(reduced):
    """One row per contact (mecanum rollers): the impulses are the exact minimum of Φ over the
    friction intervals, against a brute-force search of every stick/slide pattern, to 1e-10."""
    rng = np.random.default_rng(7)
    sliding_cases = 0
    for _ in range(150):
        rows, compliance, rhs = chassis_problem(rng, 4, 1)
        a, b = dense(rows, compliance, rhs)
        free = np.linalg.solve(a, b)
        limit = np.abs(free) * rng.uniform(0.2, 1.5, 4)
        system = (ReducedContacts(rows, compliance, rhs) if reduced
                  else DenseContacts(a, b))
        p, sliding = contact_impulses(system, limit.tolist(), 1)
        want = box_minimum(a, b, limit)
        assert np.abs(np.array(p) - want).max() <= 1e-10 * float(np.abs(free).max())
        assert sliding == (np.abs(want) >= limit * (1 - 1e-12)).tolist()
        sliding_cases += any(sliding)
    assert sliding_cases > 100


# --- warm start of the sliding solver -----------------------------------------------------------

class CountingContacts(ReducedContacts):
    """The reduced contact system, counting its 3 × 3 solves."""

    solves = 0

    def _solve(self, weight, c):
        CountingContacts.solves += 1
        return super()._solve(weight, c)


def test_warm_one_row_contacts_stay_exact_with_fewer_solves():
    """Mecanum rollers (one row per contact) started from the last substep's active set:
    still the exact Coulomb optimum (brute force, 1e-10) on 30 drifting problems of 20
    substeps, with fewer solves than starting from the sticking solve."""
    cold_solves = warm_solves = slid = 0
    for seed in range(30):
        rng = np.random.default_rng(200 + seed)
        rows, compliance, rhs = chassis_problem(rng, 4, 1)
        drift = rng.normal(scale=0.02, size=4)
        a, b = dense(rows, compliance, rhs)
        limit = np.abs(np.linalg.solve(a, b)) * rng.uniform(0.3, 0.9, 4)
        warm = [0.0] * 4
        for t in range(20):
            now = (b + t * drift).tolist()
            CountingContacts.solves = 0
            cold, _ = contact_impulses(CountingContacts(rows, compliance, now), limit.tolist(), 1)
            cold_solves += CountingContacts.solves
            CountingContacts.solves = 0
            p, sliding = contact_impulses(CountingContacts(rows, compliance, now),
                                          limit.tolist(), 1, warm)
            warm_solves += CountingContacts.solves
            want = box_minimum(a, np.array(now), limit)
            scale = float(np.abs(np.linalg.solve(a, np.array(now))).max())
            assert np.abs(np.array(p) - want).max() <= 1e-10 * scale
            assert np.abs(np.array(cold) - want).max() <= 1e-10 * scale
            assert warm == [math.copysign(1.0, x) if s else 0.0 for x, s in zip(p, sliding,
                                                                                 strict=True)]
            slid += any(sliding)
    assert slid > 500
    assert warm_solves < 0.7 * cold_solves


def test_warm_start_lets_go_when_the_contacts_stick_again():
    """A stale damping from sliding substeps does not keep contacts sliding: when every contact
    fits within its limit again the result is the exact sticking solve and the state clears."""
    rows, compliance, rhs = chassis_problem(np.random.default_rng(3), 4, 2)
    limit = (0.5 * magnitudes(np.linalg.solve(*dense(rows, compliance, rhs)), 2)).tolist()
    kappa = [0.0] * 4
    contact_impulses(ReducedContacts(rows, compliance, rhs), limit, 2, kappa)
    assert any(kappa)
    calm = [0.01 * x for x in rhs]
    p, sliding = contact_impulses(ReducedContacts(rows, compliance, calm), limit, 2, kappa)
    assert not any(sliding) and kappa == [0.0] * 4
    assert p == pytest.approx(ReducedContacts(rows, compliance, calm).solve(), rel=1e-12,
                              abs=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_a_wrong_warm_start_still_gives_a_valid_result(seed):
    """Damping values unrelated to the problem (as after an impact): every impulse within its
    limit, no energy gained, the sticking rows exact."""
    rng = np.random.default_rng(100 + seed)
    rows, compliance, rhs = chassis_problem(rng, 4, 2)
    a, b = dense(rows, compliance, rhs)
    free = np.linalg.solve(a, b)
    limit = (magnitudes(free, 2) * rng.uniform(0.3, 1.5, 4)).tolist()
    kappa = (10.0 ** rng.uniform(-3, 2, 4)).tolist()
    system = ReducedContacts(rows, compliance, rhs)
    p, sliding = contact_impulses(system, limit, 2, kappa)
    assert all(math.hypot(p[2 * i], p[2 * i + 1]) <= lim * (1 + 1e-12)
               for i, lim in enumerate(limit))
    assert phi(a, b, np.array(p)) <= 1e-12 * max(1.0, float(b @ b))
    slip = np.array(system.residual(p))
    sticking = np.repeat(~np.array(sliding), 2)
    assert np.abs(slip[sticking]).max(initial=0.0) < 1e-12 * residual_scale(a, np.array(p), b)
