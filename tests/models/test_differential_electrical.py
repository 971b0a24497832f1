"""The physical drivetrain's electrical options: winding inductance (against an independent
fine-step reference of the same linear ODE, and the inductance-free model as L → 0) and
coasting (open windings)."""

from __future__ import annotations

import numpy as np
import pytest
from wpimath.system.plant import DCMotor

from simserver.contract.snapshot import SIDE_SPEEDS
from simserver.models.battery import Source
from simserver.models.differential import (
    DifferentialDrive,
    DifferentialParams,
    InductiveLongitudinal,
    PhysicalLongitudinal,
)
from simserver.models.motor import MotorSpec

CIM = MotorSpec.from_dcmotor("CIM", DCMotor.CIM(1))
SOURCE = Source(12.5, 0.015)


def params(inductance: float) -> DifferentialParams:
    return DifferentialParams(mass=27.0, moment_of_inertia=2.2, track_width=0.66,
                              wheel_radius=0.0762, gearing=10.71, motor=CIM, motors_per_side=2,
                              inductance=inductance)


def reference(p: DifferentialParams, duties: tuple[float, float], t_end: float,
              dt: float = 1e-5) -> np.ndarray:
    """RK4 at 10 µs of dv/dt = M·F(i), L·di/dt = d·V_bus − R·i − k·v with the bus solved from the
    supply current: an independent statement of the model (state v_l, v_r, i_l, i_r)."""
    m, n, big_l = p.motor, p.motors_per_side, p.inductance
    w = p.track_width / 2
    pp, qq = 1 / p.mass + w * w / p.moment_of_inertia, 1 / p.mass - w * w / p.moment_of_inertia
    force = n * p.gearing * m.kt / p.wheel_radius
    k = p.gearing / (p.wheel_radius * m.kv)
    d = np.array(duties)

    def f(x):
        v, i = x[:2], x[2:]
        bus = SOURCE.open_voltage - SOURCE.resistance * n * float(d @ i)
        fl, fr = force * i
        acc = np.array([pp * fl + qq * fr, qq * fl + pp * fr])
        di = (d * bus - m.R * i - k * v) / big_l
        return np.concatenate([acc, di])

    x = np.zeros(4)
    for _ in range(round(t_end / dt)):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


@pytest.mark.parametrize("duties", [(0.8, 0.8), (0.3, 0.9)])
def test_inductive_drivetrain_matches_a_fine_reference(duties):
    p = params(5e-4)  # L/R ≈ 5.5 ms: slower than a 5 ms substep, a demanding case
    drive = DifferentialDrive(p, InductiveLongitudinal(p))
    for _ in range(40):  # 0.2 s at 5 ms
        drive.step(0.005, *duties, SOURCE)
    ref = reference(p, duties, 0.2)
    st = drive.state
    got = np.array([st.v_left, st.v_right, st.i_left, st.i_right])
    # RK4 at 10 µs (local error ~(h/τ)^5, τ ≥ 5 ms) is accurate to ~1e-11 here; the exact step
    # must agree to 1e-8 relative.
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-9)


def test_small_inductance_approaches_the_inductance_free_model():
    lossless = DifferentialDrive(params(1.0), PhysicalLongitudinal(params(1.0)))
    inductive = DifferentialDrive(params(1e-7), InductiveLongitudinal(params(1e-7)))
    for _ in range(200):
        lossless.step(0.005, 0.6, 0.4, SOURCE)
        inductive.step(0.005, 0.6, 0.4, SOURCE)
    # L/R = 1 µs: the current lags the voltage by ~1 µs out of a 1 s run.
    assert inductive.state.v_left == pytest.approx(lossless.state.v_left, rel=1e-4)
    assert inductive.state.x == pytest.approx(lossless.state.x, rel=1e-4)


def test_current_rises_with_the_electrical_time_constant():
    p = params(1e-3)
    drive = DifferentialDrive(p, InductiveLongitudinal(p))
    elec = drive.step(0.001, 1.0, 1.0, Source(12.0, 0.0))  # 1 ms, τ = L/R ≈ 11 ms
    tau = p.inductance / CIM.R
    # At stall the first millisecond is pure L-R: I = V/R·(1 − e^{−t/τ}) per motor (to ~1e-3:
    # the robot has barely moved, so back-EMF is tiny).
    expected = 12.0 / CIM.R * (1 - np.exp(-0.001 / tau))
    assert elec.current_left / 2 == pytest.approx(expected, rel=2e-3)


def test_coasting_sides_keep_their_speed_and_braking_sides_slow_down():
    """Open windings exert no force at all (no friction is modelled), so a coasting robot keeps
    its speed exactly; shorted windings (brake) decay it."""
    p = params(0.0)
    coasting = DifferentialDrive(p, PhysicalLongitudinal(p))
    braking = DifferentialDrive(p, PhysicalLongitudinal(p))
    for drive in (coasting, braking):
        for _ in range(200):
            drive.step(0.005, 0.5, 0.5, SOURCE)
    v0 = coasting.state.v_left
    coasting.coast = (True, True)
    for _ in range(100):
        elec = coasting.step(0.005, 0.0, 0.0, SOURCE)
        braking.step(0.005, 0.0, 0.0, SOURCE)
    assert coasting.state.v_left == v0 and coasting.state.v_right == v0
    assert elec.current_left == 0.0 and elec.supply_current == 0.0
    assert braking.state.v_left < 0.1 * v0


def test_neutral_coast_in_config_reaches_the_drivetrain():
    from simserver.config.loader import default_config_text, loads
    from simserver.world import World
    from tests.worlds import IDEAL_DRIVE

    text = default_config_text()
    for side in ("left", "right"):
        text = text.replace(f'[motors.{side}]\ntype = "CIM"\ncount = 2',
                            f'[motors.{side}]\ntype = "CIM"\ncount = 2\nneutral = "coast"')
    world = World(loads(text + IDEAL_DRIVE))  # no rolling resistance
    world.set_motor("left", 0.5)
    world.set_motor("right", 0.5)
    world.step(1.0)
    v0 = world.snapshot().drive_log[SIDE_SPEEDS[0]]
    world.zero_inputs()
    world.step(0.5)
    assert world.snapshot().drive_log[SIDE_SPEEDS[0]] == v0  # rolls on, as a coasting robot does
