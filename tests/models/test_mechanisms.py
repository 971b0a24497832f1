"""Elevator, Arm, Rotary, LinearMotion and MotorDrive.

References, all written here independently of the model:
- closed forms of the inductance-free elevator and rotary load (first-order speed, integrated
  position) from wpimath's DCMotor constants;
- the inductance case (3 states: position, speed, current) by eigendecomposition of the 2×2
  (speed, current) block with numpy, integrated analytically;
- for the arm (nonlinear gravity torque) an adaptive Dormand–Prince 5(4) integrator written
  below with rtol = atol = 1e-12 (scipy is not a dependency), plus a hybrid version with
  stop events located by bisection on single DP steps;
- WPILib 2026's ElevatorSim for the side-by-side comparison.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wpilib.simulation import ElevatorSim
from wpimath.system.plant import DCMotor

from simserver.models.mechanisms import (
    GRAVITY,
    Arm,
    Elevator,
    LinearMotion,
    MotorDrive,
    Rotary,
)
from simserver.models.motor import MotorSpec

REL = 1e-9
SUBSTEPS = (0.001, 0.005, 0.01, 0.02)


def spec(name: str, factory) -> MotorSpec:
    return MotorSpec.from_dcmotor(name, factory(1))


KRAKEN = DCMotor.krakenX60(1)
NEO = DCMotor.NEO(1)
KRAKEN_SPEC = spec("Kraken X60", DCMotor.krakenX60)
NEO_SPEC = spec("NEO", DCMotor.NEO)


def rel_err(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# --- closed forms ---------------------------------------------------------------------------------


def first_order(accel_gain: float, rate: float, t: float, x0: float, v0: float
                ) -> tuple[float, float]:
    """x, v of dv/dt = accel_gain − rate·v from (x0, v0): v∞ + (v0 − v∞)·e^{−rate·t}."""
    v_inf = accel_gain / rate
    decay = -math.expm1(-rate * t)  # 1 − e^{−rate·t}
    v = v_inf + (v0 - v_inf) * (1.0 - decay)
    x = x0 + v_inf * t + (v0 - v_inf) * decay / rate
    return x, v


def elevator_closed_form(motor: DCMotor, n: int, gearing: float, mass: float, r: float,
                         volts: float, g: float, t: float, x0: float, v0: float = 0.0
                         ) -> tuple[float, float]:
    """m·dv/dt = n·G·Kt/(r·R)·(V − G·v/(r·Kv)) − m·g."""
    force_per_volt = n * gearing * motor.Kt / (r * motor.R)
    rate = force_per_volt * gearing / (r * motor.Kv) / mass
    return first_order((force_per_volt * volts) / mass - g, rate, t, x0, v0)


def rotary_closed_form(motor: DCMotor, n: int, gearing: float, j: float, volts: float,
                       t: float, x0: float, v0: float) -> tuple[float, float]:
    """J·dω/dt = n·G·Kt/R·(V − G·ω/Kv)."""
    torque_per_volt = n * gearing * motor.Kt / motor.R
    rate = torque_per_volt * gearing / motor.Kv / j
    return first_order(torque_per_volt * volts / j, rate, t, x0, v0)


def inductive_reference(motor: DCMotor, n: int, ratio: float, inertia: float, inductance: float,
                        force: float, volts: float, t: float, q0: float, w0: float, i0: float
                        ) -> tuple[float, float, float]:
    """(q, w, I) of J·w' = n·c·Kt·I + F, L·I' = V − R·I − c·w/Kv by eigendecomposition.

    z = (w, I) obeys z' = A z + b; z(t) = z∞ + P·diag(e^{λt})·P⁻¹·(z0 − z∞) and
    q(t) = q0 + w∞·t + [P·diag((e^{λt} − 1)/λ)·P⁻¹·(z0 − z∞)]₀.
    """
    a = np.array([[0.0, n * ratio * motor.Kt / inertia],
                  [-ratio / (motor.Kv * inductance), -motor.R / inductance]])
    b = np.array([force / inertia, volts / inductance])
    z_inf = np.linalg.solve(a, -b)
    lam, p = np.linalg.eig(a)
    d0 = np.linalg.solve(p, np.array([w0, i0]) - z_inf)
    z = z_inf + (p @ (np.exp(lam * t) * d0)).real
    q = q0 + z_inf[0] * t + (p @ (np.expm1(lam * t) / lam * d0)).real[0]
    return float(q), float(z[0]), float(z[1])


# --- Dormand–Prince 5(4) reference --------------------------------------------------------------

_A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
      [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_B5 = [*_A[6], 0.0]
_B4 = [5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def dp_step(f, y: list[float], h: float) -> tuple[list[float], list[float]]:
    """One Dormand–Prince step: (5th-order, 4th-order) solutions."""
    k = [f(y)]
    n = len(y)
    for i in range(1, 7):
        k.append(f([y[j] + h * sum(_A[i][m] * k[m][j] for m in range(i)) for j in range(n)]))
    y5 = [y[j] + h * sum(_B5[m] * k[m][j] for m in range(7)) for j in range(n)]
    y4 = [y[j] + h * sum(_B4[m] * k[m][j] for m in range(7)) for j in range(n)]
    return y5, y4


class DormandPrince:
    """Adaptive DP5(4), rtol = atol = tol, carrying its step size between calls."""

    def __init__(self, tol: float = 1e-12, max_step: float = 1e-3):
        self.tol, self.max_step, self.h = tol, max_step, 1e-5

    def advance(self, f, y: list[float], duration: float, event=None):
        """Integrate ``duration`` s. ``event(y)`` > 0 inside; at a sign change the crossing is
        located by bisection on the step length. Returns (time used, state, event fired)."""
        t = 0.0
        while t < duration:
            h = min(self.h, self.max_step, duration - t)
            y5, y4 = dp_step(f, y, h)
            err = max(abs(a - b) / (self.tol * (1.0 + max(abs(a), abs(c))))
                      for a, b, c in zip(y5, y4, y, strict=True))
            self.h = h * min(5.0, max(0.2, 0.9 * err**-0.2 if err > 0 else 5.0))
            if err > 1.0:
                continue
            if event is not None and event(y5) < 0.0:
                lo, hi = 0.0, h
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    if event(dp_step(f, y, mid)[0]) < 0.0:
                        hi = mid
                    else:
                        lo = mid
                return t + hi, dp_step(f, y, hi)[0], True
            t += h
            y = y5
        return duration, y, False


def arm_rhs(motor: DCMotor, n: int, gearing: float, inductance: float, j: float, mgd: float,
            volts: float):
    k_i = n * gearing * motor.Kt
    if inductance > 0:
        return lambda y: [y[1], (k_i * y[2] - mgd * math.cos(y[0])) / j,
                          (volts - motor.R * y[2] - gearing * y[1] / motor.Kv) / inductance]
    return lambda y: [y[1], (k_i * (volts - gearing * y[1] / motor.Kv) / motor.R
                             - mgd * math.cos(y[0])) / j]


# --- MotorDrive -----------------------------------------------------------------------------------


def test_motor_drive_helpers():
    d = MotorDrive(KRAKEN_SPEC, count=2, gearing=10.0)
    assert d.motor_speed(3.0) == 30.0
    assert d.torque(5.0) == pytest.approx(2 * 10 * KRAKEN.Kt * 5.0, rel=1e-15)
    assert d.current(3.0, 12.0) == pytest.approx((12.0 - 30.0 / KRAKEN.Kv) / KRAKEN.R)
    assert d.stall_torque(12.0) == pytest.approx(2 * 10 * KRAKEN.stallTorque, rel=1e-12)
    assert d.free_speed(12.0) == pytest.approx(12.0 * KRAKEN.Kv / 10.0)
    assert MotorDrive(KRAKEN_SPEC, inductance=1e-4).electrical_time_constant == \
        pytest.approx(1e-4 / KRAKEN.R)
    for bad in ({"count": 0}, {"gearing": 0.0}, {"gearing": math.inf}, {"inductance": -1.0}):
        with pytest.raises(ValueError):
            MotorDrive(KRAKEN_SPEC, **bad)


# --- Elevator: exact free motion ---------------------------------------------------------------


ELEV = {"n": 2, "gearing": 10.0, "mass": 8.0, "r": 0.025}


def kraken_elevator(**kw) -> Elevator:
    drive = MotorDrive(KRAKEN_SPEC, ELEV["n"], ELEV["gearing"], kw.pop("inductance", 0.0))
    kw.setdefault("min_height", -1000.0)
    kw.setdefault("max_height", 1000.0)
    return Elevator(drive, ELEV["mass"], ELEV["r"], **kw)


@pytest.mark.parametrize("h", SUBSTEPS)
@pytest.mark.parametrize("volts", [6.0, 12.0, 0.0, -7.5])
def test_elevator_matches_closed_form(h, volts):
    e = kraken_elevator(start_height=0.5)
    n = round(1.0 / h)
    for k in range(1, n + 1):
        e.step(h, volts)
        x, v = elevator_closed_form(KRAKEN, ELEV["n"], ELEV["gearing"], ELEV["mass"], ELEV["r"],
                                    volts, GRAVITY, k * h, 0.5)
        assert rel_err(e.position, x) < REL
        assert rel_err(e.position - 0.5, x - 0.5) < REL
        assert rel_err(e.velocity, v) < REL
    assert not e.at_lower and not e.at_upper
    i_ref = (volts - ELEV["gearing"] * v / ELEV["r"] / KRAKEN.Kv) / KRAKEN.R
    assert e.current == pytest.approx(i_ref, rel=1e-9, abs=1e-9)
    assert e.motor_speed == pytest.approx(ELEV["gearing"] * v / ELEV["r"], rel=1e-12)


def test_elevator_from_moving_start_and_voltage_changes():
    """Voltage changes at step boundaries: the closed form is restarted from each boundary."""
    e = kraken_elevator(start_height=0.3)
    e.reset(velocity=-0.4)
    x, v = 0.3, -0.4
    for volts, h in [(3.0, 0.02), (-2.0, 0.005), (11.0, 0.013), (0.0, 0.001)]:
        for _ in range(7):
            e.step(h, volts)
            x, v = elevator_closed_form(KRAKEN, 2, 10.0, 8.0, 0.025, volts, GRAVITY, h, x, v)
            assert rel_err(e.position, x) < REL and rel_err(e.velocity, v) < REL


def test_elevator_side_by_side_with_wpilib(capsys):
    """WPILib's ElevatorSim lags the exact solution (RKDP advances time by the next proposed
    step instead of the step taken); ours is exact. Gravity 9.8 as in ElevatorSim."""
    rows = []
    cases = [("2×Kraken X60, 10:1, 8 kg, r 25 mm, 6 V", DCMotor.krakenX60, 2, 10.0, 8.0, 0.025,
              6.0),
             ("4×775pro, 10:1, 4 kg, r 25.4 mm, 6 V", DCMotor.vex775Pro, 4, 10.0, 4.0, 0.0254,
              6.0)]
    for label, factory, n, gearing, mass, r, volts in cases:
        sim = ElevatorSim(factory(n), gearing, mass, r, 0.0, 100.0, True, 0.5)
        ours = Elevator(MotorDrive(spec(label, factory), n, gearing), mass, r, 0.0, 100.0,
                        gravity=9.8, start_height=0.5)
        for _ in range(50):
            sim.setInputVoltage(volts)
            sim.update(0.020)
            ours.step(0.020, volts)
        x, v = elevator_closed_form(factory(1), n, gearing, mass, r, volts, 9.8, 1.0, 0.5)
        ours_err = rel_err(ours.position, x)
        wpi_err = rel_err(sim.getPosition(), x)
        rows.append((label, x, ours_err, wpi_err, rel_err(sim.getPosition() - 0.5, x - 0.5)))
        assert ours_err < REL
        assert rel_err(ours.velocity, v) < REL
        assert wpi_err > 1e-3
    with capsys.disabled():
        for label, x, ours_err, wpi_err, wpi_disp in rows:
            print(f"\n  elevator after 1 s at 20 ms [{label}]: exact {x:.6f} m; "
                  f"ours rel err {ours_err:.1e}; WPILib rel err {wpi_err:.2%} "
                  f"({wpi_disp:.2%} of the displacement)")


# --- Elevator: hard stops -------------------------------------------------------------------------


def test_elevator_rises_into_upper_stop_rests_then_leaves():
    h, volts, top = 0.005, 6.0, 1.0
    e = kraken_elevator(min_height=0.0, max_height=top, start_height=0.5)
    t, hit_at = 0.0, None
    for _ in range(200):  # 1 s
        e.step(h, volts)
        t += h
        assert e.position <= top
        x, v = elevator_closed_form(KRAKEN, 2, 10.0, 8.0, 0.025, volts, GRAVITY, t, 0.5)
        if x <= top:
            assert hit_at is None and not e.at_upper
            assert rel_err(e.position, x) < REL
        else:
            hit_at = hit_at or t
            assert e.at_upper and e.position == top and e.velocity == 0.0
            assert e.current == pytest.approx(volts / KRAKEN.R)  # stalled
    assert hit_at is not None
    # Voltage reversed: it leaves at once; the motion is the closed form from rest at the top.
    for k in range(1, 41):
        e.step(h, -6.0)
        x, v = elevator_closed_form(KRAKEN, 2, 10.0, 8.0, 0.025, -6.0, GRAVITY, k * h, top)
        assert not e.at_upper
        assert rel_err(e.position, x) < REL and rel_err(e.velocity, v) < REL


def _bisect(f, a: float, b: float) -> float:
    fa = f(a)
    for _ in range(200):
        m = 0.5 * (a + b)
        if (f(m) > 0) == (fa > 0):
            a = m
        else:
            b = m
    return 0.5 * (a + b)


def test_elevator_excursion_inside_a_substep_is_caught():
    """Moving up at 1 m/s with full reverse voltage: the peak is above the stop but the end
    of the 20 ms substep is below it. The carriage must stop at the crossing, then fall from
    rest for the remainder (net force down)."""
    h, volts, v0, top = 0.020, -12.0, 1.0, 1.0

    def traj(t, x0=0.0, vv=v0):
        return elevator_closed_form(KRAKEN, 2, 10.0, 8.0, 0.025, volts, GRAVITY, t, x0, vv)

    t_peak = _bisect(lambda t: traj(t)[1], 0.0, h)
    rise = traj(t_peak)[0]
    x0 = top - rise + 1e-4  # peak 0.1 mm above the stop
    assert traj(h, x0)[0] < top  # the end of the substep is back below the stop
    t_hit = _bisect(lambda t: traj(t, x0)[0] - top, 0.0, t_peak)
    e = kraken_elevator(min_height=0.0, max_height=top, start_height=x0)
    e.reset(velocity=v0)
    e.step(h, volts)
    x, v = traj(h - t_hit, top, 0.0)
    assert not e.at_upper
    assert rel_err(e.position, x) < REL and rel_err(e.velocity, v) < REL


def test_elevator_falls_onto_lower_stop_and_rests():
    e = kraken_elevator(min_height=0.0, max_height=1.0, start_height=0.2)
    for _ in range(100):
        e.step(0.005, -3.0)
        assert e.position >= 0.0
    assert e.at_lower and e.position == 0.0 and e.velocity == 0.0
    for _ in range(50):
        e.step(0.02, 0.0)  # gravity holds it down
    assert e.at_lower and e.position == 0.0 and e.current == 0.0
    e.step(0.02, 0.1)  # too weak to lift 8 kg (needs m·g·r·R/(n·G·Kt) ≈ 0.17 V)
    assert e.at_lower
    e.step(0.02, 3.0)
    assert not e.at_lower and e.position > 0.0


def test_elevator_starting_on_a_stop():
    e = kraken_elevator(min_height=0.0, max_height=1.0)  # default start: min_height
    assert e.at_lower and not e.at_upper
    e.reset(position=1.0)
    assert e.at_upper
    with pytest.raises(ValueError):
        e.reset(position=1.5)
    with pytest.raises(ValueError):
        e.step(0.005, math.nan)
    with pytest.raises(ValueError):
        e.step(-0.005, 1.0)


# --- Inductance: exact 3-state solution --------------------------------------------------------


@pytest.mark.parametrize("h", SUBSTEPS)
@pytest.mark.parametrize("inductance", [1e-4, 1e-5, 3e-6])
def test_elevator_with_inductance_matches_eigen_reference(h, inductance):
    e = kraken_elevator(start_height=0.5, inductance=inductance)
    c = ELEV["gearing"] / ELEV["r"]
    q, w, i = 0.5, 0.0, 0.0
    t = 0.0
    for volts in (6.0, -4.0, 12.0):  # 0.2 s each
        for _ in range(round(0.2 / h)):
            e.step(h, volts)
            t += h
            q, w, i = inductive_reference(KRAKEN, 2, c, 8.0, inductance, -8.0 * GRAVITY, volts,
                                          h, q, w, i)
            assert rel_err(e.position, q) < REL
            assert abs(e.velocity - w) < REL * max(abs(w), 1e-3)
            assert abs(e.current - i) < REL * max(abs(i), 1.0)


@pytest.mark.parametrize("h", SUBSTEPS)
@pytest.mark.parametrize("inductance", [1e-4, 2e-2])  # 2e-2 H: oscillatory (complex poles)
def test_rotary_with_inductance_matches_eigen_reference(h, inductance):
    j = 0.002
    r = Rotary(MotorDrive(NEO_SPEC, 1, 1.5, inductance), j)
    r.reset(velocity=30.0)
    q, w, i = 0.0, 30.0, 0.0
    for volts in (10.0, 0.0, -5.0):
        for _ in range(round(0.1 / h)):
            r.step(h, volts)
            q, w, i = inductive_reference(NEO, 1, 1.5, j, inductance, 0.0, volts, h, q, w, i)
            assert rel_err(r.position, q) < REL
            assert abs(r.velocity - w) < REL * max(abs(w), 1.0)
            assert abs(r.current - i) < REL * max(abs(i), 1.0)


def test_elevator_with_inductance_stop_rest_and_leave():
    """Into the upper stop with L/R ≈ 3 ms: never passes; at rest the current follows
    V/R + (I0 − V/R)·e^{−R·t/L}; after the voltage reverses it leaves when the motor force
    drops below gravity's pull (kI·I < m·g), mid-substep, then moves on the exact solution."""
    L = 1e-4
    e = kraken_elevator(min_height=0.0, max_height=0.6, start_height=0.5, inductance=L)
    for _ in range(100):
        e.step(0.005, 6.0)
        assert e.position <= 0.6
    assert e.at_upper and e.velocity == 0.0
    i0 = e.current
    for k in range(1, 4):
        e.step(0.005, 6.0)
        i_ref = 6.0 / KRAKEN.R + (i0 - 6.0 / KRAKEN.R) * math.exp(-KRAKEN.R / L * 0.005 * k)
        assert e.at_upper and e.current == pytest.approx(i_ref, rel=1e-12)
    # Reverse: the current decays from ~183 A toward −183 A; gravity pulls 8·g ≈ 78 N down,
    # the motors push 2·(10/0.025)·Kt·I; the force turns when I = 78.5/15.5 ≈ 5.1 A, after
    # L/R·ln((I0 + V/R)/(I_turn + V/R)) ≈ 2 ms: within the first 5 ms substep.
    k_i = 2 * 10.0 / 0.025 * KRAKEN.Kt
    i_turn = 8.0 * GRAVITY / k_i
    i1 = e.current
    t_turn = L / KRAKEN.R * math.log((i1 + 6.0 / KRAKEN.R) / (i_turn + 6.0 / KRAKEN.R))
    assert 0.0 < t_turn < 0.005
    e.step(0.005, -6.0)
    assert not e.at_upper and e.position < 0.6
    q, w, i = inductive_reference(KRAKEN, 2, 400.0, 8.0, L, -8.0 * GRAVITY, -6.0,
                                  0.005 - t_turn, 0.6, 0.0, i_turn)
    assert rel_err(0.6 - e.position, 0.6 - q) < REL
    assert rel_err(e.velocity, w) < REL and rel_err(e.current, i) < REL


@pytest.mark.parametrize("inductance", [1e-4, 1e-5])
def test_elevator_with_inductance_excursion_inside_a_substep(inductance):
    """Driven up (current still high) when the voltage reverses: the acceleration changes sign
    inside the 20 ms substep, the peak pokes 0.1 mm above the stop, the end is below it. The
    carriage must stop at the crossing and (decelerating there, so the net force already
    points down) leave at once and fall for the remainder, on the exact solution."""
    h, volts, top, c, mass = 0.020, -12.0, 1.0, 400.0, 8.0
    w0 = 0.5
    i0 = (6.0 - c * w0 / KRAKEN.Kv) / KRAKEN.R  # the 6 V steady current at 0.5 m/s

    def traj(t, q=0.0, w=w0, i=i0):
        return inductive_reference(KRAKEN, 2, c, mass, inductance, -mass * GRAVITY, volts, t,
                                   q, w, i)

    assert 2 * c * KRAKEN.Kt * i0 > mass * GRAVITY  # accelerating up at the start
    t_peak = _bisect(lambda t: traj(t)[1], 1e-4, h)
    q0 = top - traj(t_peak)[0] + 1e-4
    assert traj(h, q0)[0] < top
    t_hit = _bisect(lambda t: traj(t, q0)[0] - top, 0.0, t_peak)
    i_hit = traj(t_hit, q0)[2]
    assert 2 * c * KRAKEN.Kt * i_hit < mass * GRAVITY  # net force down at the stop
    q, w, i = traj(h - t_hit, top, 0.0, i_hit)

    e = kraken_elevator(min_height=0.0, max_height=top, start_height=q0, inductance=inductance)
    e.reset(velocity=w0, current=i0)  # mid-motion, with the current of the previous voltage
    e.step(h, volts)
    assert not e.at_upper and e.position < top
    assert rel_err(top - e.position, top - q) < REL
    assert rel_err(e.velocity, w) < REL and rel_err(e.current, i) < REL


# --- Rotary ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", SUBSTEPS)
def test_rotary_matches_closed_form(h):
    j = 0.004  # flywheel
    r = Rotary(MotorDrive(KRAKEN_SPEC, 2, 1.5), j, start_angle=0.25)
    r.reset(velocity=-20.0)
    q, w = 0.25, -20.0
    for volts in (12.0, 0.0, -3.0):
        for _ in range(round(0.5 / h)):
            r.step(h, volts)
            q, w = rotary_closed_form(KRAKEN, 2, 1.5, j, volts, h, q, w)
            assert rel_err(r.position, q) < REL and rel_err(r.velocity, w) < REL
            assert not r.at_lower and not r.at_upper
    assert r.motor_speed == pytest.approx(1.5 * w)


def test_rotary_coasting_current_is_braking_current():
    """WPILib reports 0 A at 0 V; the motor model gives the braking current."""
    r = Rotary(MotorDrive(NEO_SPEC, 1, 1.0), 0.01)
    r.reset(velocity=100.0)
    r.step(0.005, 0.0)
    assert r.current == pytest.approx(-r.velocity / NEO.Kv / NEO.R, rel=1e-12)
    assert r.current < -10.0
    assert r.voltage == 0.0


# --- Arm ------------------------------------------------------------------------------------------

SWING = {"spec": NEO_SPEC, "motor": NEO, "n": 1, "gearing": 5.0, "length": 0.6, "mass": 2.0}
GEARED = {"spec": KRAKEN_SPEC, "motor": KRAKEN, "n": 2, "gearing": 100.0, "length": 0.7,
          "mass": 4.0}


def make_arm(p: dict, inductance: float = 0.0, **kw) -> Arm:
    return Arm(MotorDrive(p["spec"], p["n"], p["gearing"], inductance), p["length"], p["mass"],
               **kw)


def test_arm_default_moment_of_inertia_and_cg():
    d = MotorDrive(NEO_SPEC)
    rod = Arm(d, 0.6, 2.0)
    assert rod.cg_distance == 0.3
    assert rod.moment_of_inertia == pytest.approx(2.0 * 0.6**2 / 3)  # uniform rod about its end
    heavy_end = Arm(d, 0.6, 2.0, cg_distance=0.5)
    assert heavy_end.moment_of_inertia == pytest.approx(2.0 * 0.25 + 2.0 * 0.36 / 12)
    given = Arm(d, 0.6, 2.0, cg_distance=0.5, moment_of_inertia=0.7)
    assert given.moment_of_inertia == 0.7
    assert Arm(d, 0.6, 2.0, min_angle=0.2, max_angle=1.0).position == 0.2
    assert Arm(d, 0.6, 2.0, min_angle=0.2, max_angle=1.0).at_lower


@pytest.mark.parametrize("inductance", [0.0, 1e-4, 1e-5])
@pytest.mark.parametrize("case", ["swing", "geared"])
def test_arm_matches_dormand_prince(case, inductance, capsys):
    """2 s at the default 5 ms substep, no stops, against DP5(4) at 1e-12."""
    p, volts, th0 = (SWING, 2.0, 0.0) if case == "swing" else (GEARED, 3.0, -math.pi / 2)
    arm = make_arm(p, inductance, start_angle=th0)
    f = arm_rhs(p["motor"], p["n"], p["gearing"], inductance, arm.moment_of_inertia,
                p["mass"] * GRAVITY * p["length"] / 2, volts)
    y = [th0, 0.0] + ([0.0] if inductance else [])
    dp = DormandPrince()
    worst = 0.0
    for _ in range(400):
        _, y, _ = dp.advance(f, y, 0.005)
        arm.step(0.005, volts)
        worst = max(worst, abs(arm.position - y[0]))
    assert abs(y[0] - th0) > 1.0  # it did swing
    assert worst < 1e-6
    assert abs(arm.velocity - y[1]) < 1e-6 * max(1.0, abs(y[1]))
    if inductance:
        assert abs(arm.current - y[2]) < 1e-6 * max(1.0, abs(y[2]))
    with capsys.disabled():
        print(f"\n  arm {case} L={inductance:g}: max |θ − θ_DP45| over 2 s = {worst:.1e} rad")


def hybrid_reference(p: dict, inductance: float, j: float, schedule, lo: float, hi: float,
                     th0: float, period: float):
    """θ at the end of each period of the arm with inelastic stops, by DP5(4) with events."""
    motor = p["motor"]
    mgd = p["mass"] * GRAVITY * p["length"] / 2
    k_i = p["n"] * p["gearing"] * motor.Kt
    y = [th0, 0.0] + ([0.0] if inductance else [])
    side = 0
    dp = DormandPrince()
    out = []
    for volts in schedule:
        f = arm_rhs(motor, p["n"], p["gearing"], inductance, j, mgd, volts)
        t = 0.0
        while period - t > 1e-15:
            if side:
                stop = lo if side < 0 else hi
                grav = -mgd * math.cos(stop)
                if not inductance:
                    if (grav + k_i * volts / motor.R) * side >= 0:
                        break
                    side = 0
                    continue
                i_inf, rate = volts / motor.R, motor.R / inductance

                def cur(s, i0=y[2], i_inf=i_inf, rate=rate):
                    return i_inf + (i0 - i_inf) * math.exp(-rate * s)

                rem = period - t
                if (grav + k_i * cur(rem)) * side >= 0:
                    y[2] = cur(rem)
                    break
                s = 0.0 if (grav + k_i * y[2]) * side < 0 else \
                    _bisect(lambda s, grav=grav, cur=cur: grav + k_i * cur(s), 0.0, rem)
                y[2] = cur(s)
                t += s
                side = 0
            else:
                def event(yy):
                    return min(yy[0] - lo, hi - yy[0])

                used, y, fired = dp.advance(f, y, period - t, event)
                t += used
                if fired:
                    side = -1 if y[0] - lo < hi - y[0] else 1
                    y[0], y[1] = (lo if side < 0 else hi), 0.0
        out.append((y[0], side))
    return out


@pytest.mark.parametrize("inductance", [0.0, 1e-4])
def test_arm_with_hard_stops_matches_hybrid_reference(inductance):
    """Falls from horizontal onto −60°, rests; lifted at 12 V into +60°, rests; pushed down
    at −2 V, leaves and falls back onto −60°. Every 20 ms against the DP5(4) reference with
    stop events."""
    lo, hi, period, h = -math.pi / 3, math.pi / 3, 0.02, 0.005
    schedule = [0.0] * 50 + [12.0] * 50 + [-2.0] * 25
    arm = make_arm(SWING, inductance, min_angle=lo, max_angle=hi, start_angle=0.0)
    ref = hybrid_reference(SWING, inductance, arm.moment_of_inertia, schedule, lo, hi, 0.0,
                           period)
    flags = []
    for volts, (th_ref, side_ref) in zip(schedule, ref, strict=True):
        for _ in range(4):
            arm.step(h, volts)
            assert lo <= arm.position <= hi
        flags.append("L" if arm.at_lower else "U" if arm.at_upper else ".")
        assert abs(arm.position - th_ref) < 1e-6
        assert (arm.at_lower, arm.at_upper) == (side_ref < 0, side_ref > 0)
    assert re.fullmatch(r"\.+L+\.+U+\.+L+", "".join(flags))
    assert flags[49] == "L" and flags[99] == "U"


@pytest.mark.parametrize("inductance", [0.0, 1e-4])
def test_arm_braked_swing_never_gains_energy(inductance):
    """0 V: the motor only brakes. E = ½Jω² + m·g·d·sin θ + ½·n·Kt·Kv·L·I² (a Lyapunov
    function of the model even when Kt·Kv ≠ 1) must never increase."""
    arm = make_arm(SWING, inductance, start_angle=0.3)
    j = arm.moment_of_inertia
    mgd = SWING["mass"] * GRAVITY * SWING["length"] / 2

    def energy() -> float:
        mag = 0.5 * SWING["n"] * NEO.Kt * NEO.Kv * inductance * arm.current**2
        return 0.5 * j * arm.velocity**2 + mgd * math.sin(arm.position) + mag

    e0 = prev = energy()
    for _ in range(2000):  # 10 s
        arm.step(0.005, 0.0)
        e = energy()
        assert e <= prev + 1e-12 * abs(e0)
        prev = e
    assert e < e0 - 1.0  # most of the swing was dissipated


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["elevator", "arm"]),
       inductance=st.sampled_from([0.0, 1e-4, 1e-5]),
       h=st.sampled_from(SUBSTEPS),
       volts=st.lists(st.floats(-12.0, 12.0), min_size=1, max_size=30))
def test_stops_are_never_passed(kind, inductance, h, volts):
    """Random voltage sequences (each held 60 ms): always within the stops, and a mechanism
    flagged on a stop is exactly there at rest."""
    if kind == "elevator":
        m = kraken_elevator(min_height=0.0, max_height=0.3, start_height=0.15,
                            inductance=inductance)
    else:
        m = make_arm(GEARED, inductance, min_angle=-1.2, max_angle=0.4, start_angle=0.0)
    lo, hi = (0.0, 0.3) if kind == "elevator" else (-1.2, 0.4)
    for v in volts:
        for _ in range(round(0.06 / h)):
            m.step(h, v)
            assert lo <= m.position <= hi
            assert math.isfinite(m.velocity) and math.isfinite(m.current)
            if m.at_lower or m.at_upper:
                assert m.position == (lo if m.at_lower else hi) and m.velocity == 0.0


# --- LinearMotion ---------------------------------------------------------------------------------


def test_linear_motion_pyfrc_semantics():
    m = LinearMotion(2.0, min_position=0.0, max_position=6.0)
    m.step(0.5, 1.0)
    assert m.position == 1.0 and m.velocity == 2.0
    m.step(0.5, -0.5)
    assert m.position == 0.5
    m.step(1.0, -1.0)
    assert m.position == 0.0 and m.at_lower and m.velocity == -0.5
    for _ in range(10):
        m.step(1.0, 1.0)
    assert m.position == 6.0 and m.at_upper
    free = LinearMotion(3.0)
    free.step(2.0, -1.0)
    assert free.position == -6.0 and not free.at_lower
    free.reset()
    assert free.position == 0.0 and free.velocity == 0.0


@pytest.mark.parametrize("alpha", [0.0, 1e-9, 0.4, 37.0, 450.0, 1e5])
@pytest.mark.parametrize("h", [2.4e-4, 0.0031, 0.005])
def test_arm_etd_coefficients_in_closed_form_match_the_augmented_exponential(alpha, h):
    """An arm without inductance takes its ETDRK4 coefficients from closed forms of the φ
    functions; they equal the definition (blocks of exp(W·h), W the augmented 6 × 6 matrix)
    evaluated at 50 digits, to 1e-13 relative."""
    from decimal import Decimal, localcontext

    from simserver.models.mechanisms import _EtdCoeffs
    from tests.models.test_linear import _decimal_expm

    bf, bv = 1.0 / 0.37, 2.3 / 0.37
    w = [[Decimal(0)] * 6 for _ in range(6)]
    w[0][1], w[1][1], w[1][2], w[2][3], w[3][4], w[1][5] = (
        Decimal(1), Decimal(-alpha), Decimal(bf), Decimal(1), Decimal(1), Decimal(bv))

    def blocks(t: Decimal) -> np.ndarray:  # of Decimals: the combinations below cancel
        return np.array(_decimal_expm([[v * t for v in r] for r in w]), dtype=object)

    with localcontext() as ctx:
        ctx.prec = 50
        dh = Decimal(h)
        x, x2 = blocks(dh), blocks(dh / 2)
        p1, p2, p3 = x[:2, 2], x[:2, 3] / dh, x[:2, 4] / (dh * dh)
        want = {"E": x[:2, :2], "E2": x2[:2, :2], "qF": x2[:2, 2], "qV": x2[:2, 5],
                "a1": p1 - 3 * p2 + 4 * p3, "a2": 2 * (p2 - 2 * p3), "a3": 4 * p3 - p2,
                "aV": x[:2, 5]}
        want = {name: ref.astype(float) for name, ref in want.items()}
    got = _EtdCoeffs.damped(alpha, bf, bv, h)
    for name, ref in want.items():
        value = np.array(getattr(got, name), dtype=float)
        err = np.abs(value - ref).max() / np.abs(ref).max()
        assert err < 1e-13, f"{name}: relative error {err:.3g}"
