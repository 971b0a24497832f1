"""Feedforward constants from SysId test data: ordinary least squares on the discrete-time
model, after the data trimming WPILib's SysId analysis applies.

Between two samples ``T`` seconds apart, with the voltage ``u`` held, the mechanism obeys
``kA·dv/dt = u − kS·sgn(v) − kV·v − g(θ)`` (``g`` = kG for an elevator, kG·cos θ for an arm,
0 otherwise), whose exact solution over the interval is

    v[k+1] = α·v[k] + β·u[k] + γ·sgn(v[k]) (+ δ | + δ·c[k] + ε·s[k])

(for an arm ``c[k]``, ``s[k]``: the means of cos θ and sin θ at the interval's two ends, the
gravity torque by the trapezoid rule),

with ``α = e^(−kV·T/kA)``, ``β = (1 − α)/kV``, ``γ = −β·kS``, ``δ = −β·kG``. The fit solves
that linear model for (α, β, γ, δ, ε) with :func:`numpy.linalg.lstsq` and returns

    kV = (1 − α)/β        kA = (α − 1)·T/(β·ln α)        kS = −γ/β
    kG = −δ/β (elevator)  kG = hypot(δ, ε)/β, offset = atan2(ε, −δ) (arm)

The arm's sine term takes an encoder whose zero is not horizontal (``offset`` rad), as
WPILib's analysis does. Units follow the data: m and m/s give V·s/m, V·s²/m; rad and rad/s
give V·s/rad, V·s²/rad.

Trimming (WPILib's SysId analysis does the same before its fit):

- quasistatic tests: samples with no voltage or a speed below the velocity threshold are
  dropped (by default the threshold is the data's noise floor: the RMS deviation of the
  quasistatic speeds from their 9-sample moving average);
- dynamic tests: samples before the peak acceleration are dropped, and the test ends once it
  first passed 90 % of its top speed (plus the delay before that peak);
- a pair (k, k+1) is used only when both samples survive, so a gap never looks like a step.

    result = fit_runs(runs, "elevator")
    result.kv, result.ka, result.kg, result.r_squared
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Gravity = Literal["none", "constant", "cosine"]
"""The gravity term a mechanism has: none, a constant (elevator) or cos θ (arm)."""

NOISE_WINDOW = 9  # samples of the moving average the noise floor is measured against
PEAK_FRACTION = 0.9  # a dynamic test ends once its speed first passes this share of its top

Array = NDArray[np.float64]


class FitError(ValueError):
    """Data that cannot give constants (too few samples, a mechanism that did not move)."""


@dataclass(frozen=True)
class Run:
    """One test of one motor: sample times s, applied voltage V held until the next sample,
    position (m or rad) and velocity (m/s or rad/s) at each sample. ``state`` is the
    SysIdRoutineLog state string ("quasistatic-forward", "dynamic-reverse", ...). ``slip``:
    the share of samples in which a drivetrain's wheels slipped on the carpet (not in the log;
    0 for mechanisms and read-back runs)."""

    state: str
    time: Array
    voltage: Array
    position: Array
    velocity: Array
    slip: float = 0.0

    @property
    def quasistatic(self) -> bool:
        return self.state.startswith("quasistatic")


@dataclass(frozen=True)
class Fit:
    """Fitted feedforward constants and how well the model explains the data.

    ks: V. kv: V per unit/s. ka: V per unit/s². kg: V (elevator, arm; 0 otherwise). offset:
    rad the encoder reads at horizontal, negated (arm). r_squared: of the predicted next
    velocities. rmse: of the next velocity, units/s. samples: pairs used. period: mean sample
    period T, s. threshold: velocity threshold used, units/s.
    """

    ks: float
    kv: float
    ka: float
    kg: float = 0.0
    offset: float = 0.0
    r_squared: float = 0.0
    rmse: float = 0.0
    samples: int = 0
    period: float = 0.0
    threshold: float = 0.0
    coefficients: tuple[float, ...] = field(default=(), repr=False)


def noise_floor(velocity: Array, window: int = NOISE_WINDOW) -> float:
    """RMS deviation of ``velocity`` from its centred ``window``-sample moving average."""
    if len(velocity) <= window:
        return 0.0
    mean = np.convolve(velocity, np.ones(window) / window, mode="valid")
    half = window // 2
    return float(np.sqrt(np.mean((velocity[half:half + len(mean)] - mean) ** 2)))


def velocity_threshold(runs: Sequence[Run]) -> float:
    """The smallest noise floor of the quasistatic runs (0 without any)."""
    floors = [noise_floor(r.velocity) for r in runs if r.quasistatic]
    return min(floors) if floors else 0.0


def kept(run: Run, threshold: float) -> NDArray[np.bool_]:
    """Which samples of ``run`` the trimming keeps (see the module docstring)."""
    n = len(run.time)
    keep = (np.abs(run.voltage) > 0.0) & (np.abs(run.velocity) >= threshold)
    if run.quasistatic or n < 3:
        return keep
    dt = np.diff(run.time)
    accel = np.diff(run.velocity) / np.where(dt > 0.0, dt, np.inf)
    direction = np.sign(run.velocity[:-1])
    start = int(np.argmax(direction * accel))
    moving = np.flatnonzero(np.abs(run.voltage) > 0.0)
    delay = run.time[start] - run.time[moving[0]] if len(moving) else 0.0
    speed = np.abs(run.velocity[start:])
    fast = np.flatnonzero(speed > PEAK_FRACTION * speed.max())
    end_time = (run.time[start + fast[0]] - run.time[start] if len(fast) else math.inf) + delay
    window = (np.arange(n) >= start) & (run.time - run.time[start] <= end_time)
    return keep & window


def rows(run: Run, threshold: float, gravity: Gravity
         ) -> tuple[Array, Array, Array]:
    """Regressors, next velocities and intervals of the pairs ``run`` contributes."""
    keep = kept(run, threshold)
    pair = keep[:-1] & keep[1:]
    v, u, x = run.velocity[:-1][pair], run.voltage[:-1][pair], run.position[:-1][pair]
    columns = [v, u, np.sign(v)]
    if gravity == "constant":
        columns.append(np.ones_like(v))
    elif gravity == "cosine":
        # The gravity torque averaged over the interval (trapezoid on the two samples'
        # angles), not held at its start: a second-order term instead of a first-order one.
        x1 = run.position[1:][pair]
        columns += [0.5 * (np.cos(x) + np.cos(x1)), 0.5 * (np.sin(x) + np.sin(x1))]
    return (np.column_stack(columns), run.velocity[1:][pair],
            np.diff(run.time)[pair])


def fit_runs(runs: Sequence[Run], gravity: Gravity = "none",
             threshold: float | None = None) -> Fit:
    """Fit kS, kV, kA (and kG) to the tests in ``runs`` (any number of each kind).

    threshold: velocity threshold of the trimming, units/s; default: the noise floor.
    """
    if threshold is None:
        threshold = velocity_threshold(runs)
    parts = [rows(r, threshold, gravity) for r in runs]
    x = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, 3))
    y = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
    dts = np.concatenate([p[2] for p in parts]) if parts else np.empty(0)
    width = 3 + {"none": 0, "constant": 1, "cosine": 2}[gravity]
    if len(y) < 2 * width:
        raise FitError(f"{len(y)} usable samples after trimming; at least {2 * width} are "
                       "needed (did the mechanism move?)")
    coeffs, *_ = np.linalg.lstsq(x, y, rcond=None)
    alpha, beta, gamma = (float(c) for c in coeffs[:3])
    if not beta > 0.0:
        raise FitError(f"the fit found no response to voltage (β = {beta:.3g}): did the "
                       "mechanism move?")
    if not alpha < 1.0:
        raise FitError(f"the fit found speeds that grow without voltage (α = {alpha:.6g}); "
                       "the data is not from a stable mechanism")
    period = float(np.mean(dts))
    kv = (1.0 - alpha) / beta
    # α ≤ 0: the speed settles within one sample (no measurable inertia).
    ka = (alpha - 1.0) * period / (beta * math.log(alpha)) if alpha > 0.0 else 0.0
    kg = offset = 0.0
    if gravity == "constant":
        kg = -float(coeffs[3]) / beta
    elif gravity == "cosine":
        delta, eps = float(coeffs[3]), float(coeffs[4])
        kg = math.hypot(delta, eps) / beta
        offset = math.atan2(eps, -delta)
    residual = y - x @ coeffs
    total = float(np.sum((y - y.mean()) ** 2))
    ss = float(np.sum(residual ** 2))
    return Fit(ks=-gamma / beta, kv=kv, ka=ka, kg=kg, offset=offset,
               r_squared=1.0 - ss / total if total > 0.0 else 1.0,
               rmse=math.sqrt(ss / len(y)), samples=len(y), period=period,
               threshold=threshold, coefficients=tuple(float(c) for c in coeffs))
