"""Exact discretization of dv/dt = A v + c, ds/dt = v (AffineStep).

Two independent references:
- the exponential of the augmented 5×5 matrix [[0, I, 0], [0, A, c], [0, 0, 0]]·h computed in
  50-digit decimal arithmetic (numpy has no expm and scipy is not installed; 50 digits make the
  reference exact at float precision), whose blocks are E = exp(Ah), P1 = ∫exp, q = P1 c and
  r = P2 c;
- scalar closed forms for diagonal, scalar, singular and rotation matrices.

Tolerance: 1e-12 relative, norm-wise per block (max |error| / max |reference|). Rounding in a
correct implementation is ~1e-15 (measured); a wrong formula or a badly conditioned branch
(divided differences of nearly equal eigenvalues lose ~eps/(Δλ·h)) shows up far above 1e-12.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simserver.models.linear import AffineStep, phis

REL = 1e-12


def _decimal_expm(m: list[list[Decimal]]) -> list[list[Decimal]]:
    """exp(m) by scaling to norm < 1e-3, 40 Taylor terms, and squaring, at 50 digits."""
    n = len(m)
    norm = max(sum(abs(x) for x in row) for row in m)
    k = 0
    while norm > Decimal("0.001"):
        norm /= 2
        k += 1
    scale = Decimal(2) ** k
    a = [[x / scale for x in row] for row in m]
    out = [[Decimal(int(i == j)) for j in range(n)] for i in range(n)]
    term = [row[:] for row in out]
    for i in range(1, 40):
        term = [[sum(term[r][q] * a[q][c] for q in range(n)) / i for c in range(n)]
                for r in range(n)]
        out = [[out[r][c] + term[r][c] for c in range(n)] for r in range(n)]
    for _ in range(k):
        out = [[sum(out[r][q] * out[q][c] for q in range(n)) for c in range(n)] for r in range(n)]
    return out


def reference(a, b, c_, d, c0, c1, h):
    """E, P1, q, r blocks of the augmented-matrix exponential, as float numpy arrays."""
    with localcontext() as ctx:
        ctx.prec = 50
        m = [[Decimal(0)] * 5 for _ in range(5)]
        m[0][2] = m[1][3] = Decimal(1)
        m[2][2], m[2][3], m[3][2], m[3][3] = Decimal(a), Decimal(b), Decimal(c_), Decimal(d)
        m[2][4], m[3][4] = Decimal(c0), Decimal(c1)
        dh = Decimal(h)
        x = _decimal_expm([[v * dh for v in row] for row in m])
        f = [[float(v) for v in row] for row in x]
    f = np.array(f)
    return f[2:4, 2:4], f[0:2, 2:4], f[2:4, 4], f[0:2, 4]


def blocks(s: AffineStep):
    return (np.array([[s.e00, s.e01], [s.e10, s.e11]]),
            np.array([[s.p00, s.p01], [s.p10, s.p11]]),
            np.array([s.q0, s.q1]), np.array([s.r0, s.r1]))


def rel_err(x, ref) -> float:
    return float(np.abs(np.asarray(x) - np.asarray(ref)).max() / np.abs(ref).max())


def assert_blocks_close(step: AffineStep, expected) -> None:
    for name, got, ref in zip(("E", "P1", "q", "r"), blocks(step), expected, strict=True):
        err = rel_err(got, ref)
        assert err <= REL, f"{name}: relative error {err:.3g} > {REL:g}"


def diagonal_closed_form(l1, l2, c0, c1, h):
    """Blocks for A = diag(l1, l2): each component is a scalar ODE v' = l v + c."""
    def e(lam):
        return math.exp(lam * h)

    def p1(lam):  # ∫0^h e^{λt} dt
        return h if lam == 0 else math.expm1(lam * h) / lam

    def p2(lam):  # ∫0^h ∫0^t e^{λu} du dt
        return h * h / 2 if lam == 0 else (math.expm1(lam * h) - lam * h) / (lam * lam)

    return (np.diag([e(l1), e(l2)]), np.diag([p1(l1), p1(l2)]),
            np.array([p1(l1) * c0, p1(l2) * c1]), np.array([p2(l1) * c0, p2(l2) * c1]))


def test_drivetrain_matrix_matches_high_precision_expm():
    # The kitbot's wheel-speed matrix (symmetric, eigenvalues ≈ -12.2 and -12.5 1/s) at 5 ms.
    args = (-12.35399314, -0.1241576, -0.1241576, -12.35399314, 49.89, 49.89, 0.005)
    assert_blocks_close(AffineStep(*args), reference(*args))


@pytest.mark.parametrize("h", [0.001, 0.005, 0.02, 0.5])
def test_distinct_real_eigenvalues_match_high_precision_expm(h):
    args = (-8.0, 3.0, 1.5, -20.0, 4.0, -7.0, h)
    assert_blocks_close(AffineStep(*args), reference(*args))


def test_diagonal_matrix_matches_scalar_closed_form():
    assert_blocks_close(AffineStep(-3.0, 0.0, 0.0, -40.0, 2.0, -5.0, 0.02),
                        diagonal_closed_form(-3.0, -40.0, 2.0, -5.0, 0.02))


@pytest.mark.parametrize("delta", [1e-2, 1e-3, 1e-4, 3e-5, 2.1e-5, 1.9e-5, 1e-6, 1e-9, 1e-13])
def test_nearly_equal_eigenvalues_diagonal_matches_scalar_closed_form(delta):
    # Eigenvalue gaps on both sides of the switch to the matrix-exponential branch
    # (2·sqrt(disc)·h < 1e-5 at h = 1 s).
    assert_blocks_close(AffineStep(-5.0, 0.0, 0.0, -5.0 + delta, 3.0, 2.0, 1.0),
                        diagonal_closed_form(-5.0, -5.0 + delta, 3.0, 2.0, 1.0))


@pytest.mark.parametrize("delta", [1e-2, 1e-4, 2.1e-5, 1.9e-5, 1e-7, 1e-11])
@pytest.mark.parametrize("h", [0.005, 1.0])
def test_nearly_equal_eigenvalues_non_normal_matches_high_precision_expm(delta, h):
    # Upper-triangular: eigenvalues -5 and -5 + delta, eigenvectors nearly parallel.
    args = (-5.0, 1.0, 0.0, -5.0 + delta, 3.0, 2.0, h)
    assert_blocks_close(AffineStep(*args), reference(*args))


def test_symmetric_nearly_equal_eigenvalues_matches_high_precision_expm():
    # Drivetrain-like coupling so weak that the two modes almost coincide.
    args = (-12.0, -1e-7, -1e-7, -12.0, 50.0, 49.0, 0.005)
    assert_blocks_close(AffineStep(*args), reference(*args))


@pytest.mark.parametrize("lam", [-7.0, 0.5])
def test_scalar_times_identity_matches_scalar_closed_form(lam):
    assert_blocks_close(AffineStep(lam, 0.0, 0.0, lam, 1.0, -2.0, 0.02),
                        diagonal_closed_form(lam, lam, 1.0, -2.0, 0.02))


def test_zero_eigenvalue_diagonal_matches_scalar_closed_form():
    assert_blocks_close(AffineStep(0.0, 0.0, 0.0, -3.0, 1.0, 2.0, 0.02),
                        diagonal_closed_form(0.0, -3.0, 1.0, 2.0, 0.02))


def test_zero_matrix_is_constant_acceleration():
    # A = 0: v = v0 + c h, s = s0 + v0 h + c h²/2.
    s0, s1, v0, v1 = AffineStep(0.0, 0.0, 0.0, 0.0, 2.0, -4.0, 0.5).apply(1.0, 2.0, 3.0, -1.0)
    # 1e-12: rounding of a handful of operations.
    assert (s0, s1, v0, v1) == pytest.approx(
        (1.0 + 3.0 * 0.5 + 2.0 * 0.125, 2.0 - 0.5 - 4.0 * 0.125, 3.0 + 1.0, -1.0 - 2.0), rel=REL)


def test_singular_coupled_matrix_matches_high_precision_expm():
    # Eigenvalues 0 and -2 with both states coupled (a singular, non-diagonal A).
    args = (-1.0, 1.0, 1.0, -1.0, 1.0, 2.0, 0.02)
    assert_blocks_close(AffineStep(*args), reference(*args))


def test_complex_eigenvalues_match_rotation_closed_form():
    # A = [[0, w], [-w, 0]]: E is a rotation; P1 and P2 follow by integrating it.
    w, h, c0, c1 = 2.0, 0.5, 1.0, 2.0
    sn, cs = math.sin(w * h), math.cos(w * h)
    p1 = np.array([[sn / w, (1 - cs) / w], [-(1 - cs) / w, sn / w]])
    p2 = np.array([[(1 - cs) / w**2, (w * h - sn) / w**2], [-(w * h - sn) / w**2, (1 - cs) / w**2]])
    c = np.array([c0, c1])
    assert_blocks_close(AffineStep(0.0, w, -w, 0.0, c0, c1, h),
                        (np.array([[cs, sn], [-sn, cs]]), p1, p1 @ c, p2 @ c))


def test_stiff_matrix_matches_high_precision_expm():
    # |A h| ≈ 8: exp(Ah) ≈ 3e-4, where cancellation would show.
    args = (-400.0, -5.0, -5.0, -400.0, 1000.0, 1000.0, 0.02)
    assert_blocks_close(AffineStep(*args), reference(*args))


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    a=st.floats(-60, 10), b=st.floats(-20, 20), c_=st.floats(-20, 20), d=st.floats(-60, 10),
    c0=st.floats(-100, 100).filter(lambda x: abs(x) > 1e-3),
    c1=st.floats(-100, 100).filter(lambda x: abs(x) > 1e-3),
    h=st.sampled_from([1e-4, 0.005, 0.02, 0.1]),
)
def test_any_matrix_matches_high_precision_expm(a, b, c_, d, c0, c1, h):
    assert_blocks_close(AffineStep(a, b, c_, d, c0, c1, h), reference(a, b, c_, d, c0, c1, h))


@pytest.mark.parametrize("matrix", [(-12.35, -0.12, -0.12, -12.35), (-5.0, 1.0, 0.0, -5.0),
                                    (0.0, 2.0, -2.0, 0.0), (-1.0, 1.0, 1.0, -1.0)])
def test_two_half_steps_equal_one_full_step(matrix):
    # The exact flow is a semigroup: map(h/2) ∘ map(h/2) = map(h).
    half = AffineStep(*matrix, 3.0, -1.0, 0.01)
    full = AffineStep(*matrix, 3.0, -1.0, 0.02)
    start = (0.5, -0.25, 2.0, 1.0)
    twice = half.apply(*half.apply(*start))
    once = full.apply(*start)
    # 1e-12 relative to the largest component: rounding of two 4×4 affine maps.
    scale = max(abs(x) for x in once)
    assert max(abs(x - y) for x, y in zip(twice, once, strict=True)) <= REL * scale


def _phi_reference(k: int, x: float) -> Decimal:
    """φ_k(x) = Σ_j x^j/(j+k)! at 60 digits (enough terms for |x| ≤ 40)."""
    with localcontext() as ctx:
        ctx.prec = 60
        dx, term, total = Decimal(x), Decimal(1) / math.factorial(k), Decimal(0)
        for j in range(400):
            total += term
            term = term * dx / (j + k + 1)
        return total


@pytest.mark.parametrize("x", [0.0, 1e-12, -1e-12, 3e-6, -3e-6, -0.03, 0.2, -0.5, -0.999999,
                               -1.0, -1.000001, 0.999999, 1.000001, -2.0, 2.5, -7.3, -19.0,
                               -40.0])
def test_phi_functions_match_their_series_at_60_digits(x):
    """phis(x) = (eˣ, φ1..φ4) to 4e-15 relative on both sides of the switch at |x| = 1."""
    for k, got in enumerate(phis(x)):
        want = _phi_reference(k, x)
        err = abs((Decimal(got) - want) / want)
        assert err < Decimal("4e-15"), f"φ{k}({x}) relative error {err:.3g}"
