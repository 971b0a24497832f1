"""The feedforward fit against data generated from known constants by the exact discrete-time
solution, and the trimming of WPILib's SysId analysis."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simserver.sysid.fit import FitError, Run, fit_runs, kept

T = 0.02


def synthetic(ks: float, kv: float, ka: float, kg: float = 0.0, gravity: str = "none",
              offset: float = 0.0) -> list[Run]:
    """The four tests of a mechanism with these constants, each interval solved exactly with
    the voltage and the friction sign held over it and, for an arm, the gravity torque the
    trapezoid of its two end angles (what the fit assumes; found by fixed-point iteration)."""
    alpha = math.exp(-kv * T / ka)
    beta = (1.0 - alpha) / kv
    runs = []
    for state, sign in (("quasistatic-forward", 1), ("quasistatic-reverse", -1),
                        ("dynamic-forward", 1), ("dynamic-reverse", -1)):
        n = 300 if state.startswith("quasistatic") else 80
        t = 1.0 + T * np.arange(n) + 100.0 * len(runs)
        u = sign * (1.0 * T * np.arange(n) + 1.5 if state.startswith("quasistatic")
                    else np.full(n, 7.0))
        x, v = np.zeros(n), np.zeros(n)
        x[0], v[0] = -0.5 * sign, 0.05 * sign
        for k in range(n - 1):
            x[k + 1] = x[k]
            for _ in range(60 if gravity == "cosine" else 1):
                load = ks * math.copysign(1.0, v[k])
                if gravity == "constant":
                    load += kg
                elif gravity == "cosine":
                    load += kg * 0.5 * (math.cos(x[k] + offset) + math.cos(x[k + 1] + offset))
                v[k + 1] = alpha * v[k] + beta * (u[k] - load)
                x[k + 1] = x[k] + T * 0.5 * (v[k] + v[k + 1])
        runs.append(Run(state, t, u, x, v))
    return runs


def close(fit_value: float, true: float) -> bool:
    return abs(fit_value - true) <= 1e-6 * max(1.0, abs(true))


def test_fit_recovers_simple_motor_constants_exactly():
    fit = fit_runs(synthetic(0.3, 2.5, 0.4))
    assert close(fit.ks, 0.3) and close(fit.kv, 2.5) and close(fit.ka, 0.4)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-12) and fit.rmse < 1e-9
    assert fit.period == pytest.approx(T)


def test_fit_recovers_elevator_gravity_term():
    fit = fit_runs(synthetic(0.15, 7.5, 0.05, kg=0.6, gravity="constant"), "constant")
    assert close(fit.ks, 0.15) and close(fit.kv, 7.5) and close(fit.ka, 0.05)
    assert close(fit.kg, 0.6)


def test_fit_recovers_arm_cosine_term_and_encoder_offset():
    fit = fit_runs(synthetic(0.1, 1.2, 0.03, kg=0.7, gravity="cosine", offset=0.2), "cosine")
    assert close(fit.ks, 0.1) and close(fit.kv, 1.2) and close(fit.ka, 0.03)
    assert close(fit.kg, 0.7) and close(fit.offset, 0.2)


def test_quasistatic_samples_without_voltage_or_below_the_threshold_are_dropped():
    run = Run("quasistatic-forward", np.arange(5) * T, np.array([0.0, 0.1, 0.2, 0.3, 0.4]),
              np.zeros(5), np.array([0.0, 0.0, 0.001, 0.5, 1.0]))
    assert kept(run, 0.01).tolist() == [False, False, False, True, True]


def test_dynamic_test_starts_at_peak_acceleration_and_ends_near_top_speed():
    v = np.array([0.0, 0.0, 1.0, 3.0, 4.0, 4.5, 4.8, 4.9, 4.95, 5.0, 5.0])
    run = Run("dynamic-forward", np.arange(len(v)) * T, np.full(len(v), 7.0), np.zeros(len(v)),
              v)
    keep = kept(run, 0.0)
    # the largest step is 1 -> 3 (sample 2); 90 % of 5 m/s is first passed at sample 6
    # (4.8 m/s), 4 samples later, plus the 2 samples of delay before the peak
    assert keep.tolist() == [False, False] + [True] * 7 + [False, False]


def test_a_mechanism_that_does_not_move_gives_a_clear_error():
    still = [Run(s, np.arange(50) * T, np.full(50, 1.0), np.zeros(50), np.zeros(50))
             for s in ("quasistatic-forward", "dynamic-forward")]
    with pytest.raises(FitError, match="usable samples"):
        fit_runs(still, threshold=0.01)
