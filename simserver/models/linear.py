"""Exact discretization of a two-state affine system and its integral.

For velocities ``v`` (2-vector) obeying ``dv/dt = A v + c`` with A and c constant over a step
``h``, and positions ``s`` with ``ds/dt = v``, the exact solution after ``h`` is::

    v(h) = E v0 + P1 c                 E  = exp(A h)
    s(h) = s0 + P1 v0 + P2 c           P1 = ∫0^h exp(A t) dt,  P2 = ∫0^h ∫0^t exp(A u) du dt

The 2×2 matrix functions are evaluated in closed form (Sylvester's formula with divided
differences, a few microseconds in pure Python) and, when the eigenvalues are complex or nearly
equal, by scaling-and-squaring of the augmented 5×5 matrix exponential with numpy.
"""

from __future__ import annotations

import math

import numpy as np


def e1(x: float) -> float:
    """(e^x - 1) / x, accurate near 0."""
    if abs(x) < 1e-5:
        return 1.0 + x * (0.5 + x / 6.0)
    return math.expm1(x) / x


def e2(x: float) -> float:
    """(e^x - 1 - x) / x², accurate near 0."""
    if abs(x) < 0.1:
        # Horner form of 1/2 + x/6 + x²/24 + ... + x^7/362880 (truncation < 1e-13 here).
        return 0.5 + x * (1 / 6 + x * (1 / 24 + x * (1 / 120 + x * (
            1 / 720 + x * (1 / 5040 + x * (1 / 40320 + x / 362880))))))
    return (math.expm1(x) - x) / (x * x)


_PHI4_SERIES = tuple(1.0 / math.factorial(j + 4) for j in range(18))[::-1]


def phis(x: float) -> tuple[float, float, float, float, float]:
    """(φ0, φ1, φ2, φ3, φ4)(x), φ0 = eˣ and φ_{k+1}(x) = (φ_k(x) − 1/k!) / x: the functions
    of exponential integrators, accurate for every real x. Below |x| = 1, φ4 from its series
    (Σ xʲ/(j+4)!, truncation < 1e-21) and φ_k = 1/k! + x·φ_{k+1} downward (stable there);
    above, φ1 from expm1 and the recurrence upward (stable there)."""
    if abs(x) < 1.0:
        p4 = 0.0
        for c in _PHI4_SERIES:
            p4 = p4 * x + c
        p3 = 1.0 / 6.0 + x * p4
        p2 = 0.5 + x * p3
        p1 = 1.0 + x * p2
        return 1.0 + x * p1, p1, p2, p3, p4
    p1 = math.expm1(x) / x
    p2 = (p1 - 1.0) / x
    p3 = (p2 - 0.5) / x
    return math.exp(x), p1, p2, p3, (p3 - 1.0 / 6.0) / x


class AffineStep:
    """Exact one-step map of ``dv/dt = A v + c``, ``ds/dt = v`` over ``h`` seconds.

    A = [[a, b], [c_, d]] (1/s), c = (c0, c1) (m/s²).
    """

    __slots__ = ("e00", "e01", "e10", "e11", "p00", "p01", "p10", "p11", "q0", "q1", "r0", "r1")

    def __init__(self, a: float, b: float, c_: float, d: float, c0: float, c1: float, h: float):
        half = 0.5 * (a + d)
        disc = half * half - (a * d - b * c_)
        sq = math.sqrt(disc) if disc > 0.0 else 0.0
        if disc <= 0.0 or 2.0 * sq * h < 1e-5 * max(1.0, abs(half) * h):
            self._from_expm(a, b, c_, d, c0, c1, h)
            return
        l1, l2 = half + sq, half - sq
        delta = l1 - l2
        x1, x2 = l1 * h, l2 * h
        # f(A) = f(l2) I + f[l1, l2] (A - l2 I) for each function f.
        fe2, fe = math.exp(x2), (math.exp(x1) - math.exp(x2)) / delta
        f12 = h * e1(x2)
        f1 = h * (e1(x1) - e1(x2)) / delta
        f22 = h * h * e2(x2)
        f2 = h * h * (e2(x1) - e2(x2)) / delta
        am, dm = a - l2, d - l2
        self.e00, self.e01, self.e10, self.e11 = fe2 + fe * am, fe * b, fe * c_, fe2 + fe * dm
        p00, p01, p10, p11 = f12 + f1 * am, f1 * b, f1 * c_, f12 + f1 * dm
        self.p00, self.p01, self.p10, self.p11 = p00, p01, p10, p11
        self.q0, self.q1 = p00 * c0 + p01 * c1, p10 * c0 + p11 * c1
        self.r0 = (f22 + f2 * am) * c0 + f2 * b * c1
        self.r1 = f2 * c_ * c0 + (f22 + f2 * dm) * c1

    def _from_expm(self, a: float, b: float, c_: float, d: float, c0: float, c1: float,
                   h: float) -> None:
        m = np.zeros((5, 5))
        m[0, 2] = m[1, 3] = 1.0
        m[2:4, 2:4] = [[a, b], [c_, d]]
        m[2:4, 4] = [c0, c1]
        x = expm(m * h)
        self.e00, self.e01, self.e10, self.e11 = x[2, 2], x[2, 3], x[3, 2], x[3, 3]
        self.p00, self.p01, self.p10, self.p11 = x[0, 2], x[0, 3], x[1, 2], x[1, 3]
        self.q0, self.q1 = x[2, 4], x[3, 4]
        self.r0, self.r1 = x[0, 4], x[1, 4]

    def apply(self, s0: float, s1: float, v0: float, v1: float
              ) -> tuple[float, float, float, float]:
        """Positions and velocities after the step: (s0, s1, v0, v1)."""
        return (
            s0 + self.p00 * v0 + self.p01 * v1 + self.r0,
            s1 + self.p10 * v0 + self.p11 * v1 + self.r1,
            self.e00 * v0 + self.e01 * v1 + self.q0,
            self.e10 * v0 + self.e11 * v1 + self.q1,
        )


def expm(m: np.ndarray) -> np.ndarray:
    """Matrix exponential by scaling and squaring of a degree-20 Taylor series (≈1e-15 rel)."""
    norm = float(np.abs(m).sum(axis=1).max())
    k = max(0, math.ceil(math.log2(norm / 0.25))) if norm > 0.25 else 0
    a = m / (2.0**k)
    term = np.eye(m.shape[0])
    out = term.copy()
    for i in range(1, 21):
        term = term @ a / i
        out = out + term
    for _ in range(k):
        out = out @ out
    return out
