"""Motor controller firmware: ramp, noise, neutral mode, current limits, power balance.

Expected values are closed forms: the ramp's step response ``u + (y0 - u)·e^(-t/τ)``, the motor
equation ``I = (V - ω/Kv)/R``, the bridge's ``I_supply = I_stator·V/V_bus``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simserver.models.controller import ControllerOutput, MotorController
from simserver.models.motor import motor_by_name

NEO = motor_by_name("NEO")
KRAKEN = motor_by_name("Kraken X60")


def stator_per_motor(motor, v, speed):
    return (v - speed / motor.kv) / motor.R


# --- ramp -------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [1e-4, 1e-3, 0.005, 0.02])
def test_ramp_step_response_is_exact_exponential(h):
    tau = 0.1
    ctl = MotorController(NEO, ramp=tau)
    for n in range(1, round(0.5 / h) + 1):
        out = ctl.apply(1.0, 12.0, 0.0, h)
        expected = 1.0 - math.exp(-n * h / tau)
        # 1e-12 absolute: each substep adds a few ulps of rounding to a value ≤ 1, over at most
        # 5000 substeps, and the update is the exact solution, not an approximation of it.
        assert ctl.ramped == pytest.approx(expected, abs=1e-12)
        assert out.duty == pytest.approx(expected, abs=1e-12)
        assert out.voltage == pytest.approx(12.0 * expected, abs=12e-12)


def test_ramp_from_any_start_toward_a_new_command_and_with_changing_substeps():
    tau = 0.25
    ctl = MotorController(KRAKEN, ramp=tau)
    for _ in range(40):
        ctl.apply(0.8, 12.0, 0.0, 0.01)
    y0 = ctl.ramped
    t = 0.0
    for h in [0.001, 0.02, 0.005, 0.005, 0.0125, 0.03, 0.001]:
        ctl.apply(-0.5, 12.0, 0.0, h)
        t += h
        assert ctl.ramped == pytest.approx(-0.5 + (y0 + 0.5) * math.exp(-t / tau), abs=1e-12)


def test_no_ramp_follows_the_command_at_once_and_clamps_it():
    ctl = MotorController(NEO)
    assert ctl.apply(0.3, 12.0, 0.0, 0.005).voltage == pytest.approx(3.6, rel=1e-15)
    assert ctl.apply(1.7, 12.0, 0.0, 0.005).voltage == 12.0
    assert ctl.apply(-3.0, 11.0, 0.0, 0.005).voltage == -11.0


def test_disable_goes_neutral_at_once_and_clears_the_ramp():
    ctl = MotorController(NEO, ramp=0.1, neutral="coast")
    for _ in range(50):
        ctl.apply(1.0, 12.0, 100.0, 0.005)
    out = ctl.apply(1.0, 12.0, 100.0, 0.005, enabled=False)
    assert out.coasting and out.duty == 0.0 and ctl.ramped == 0.0
    ctl.apply(1.0, 12.0, 100.0, 0.005)
    assert ctl.ramped == pytest.approx(1.0 - math.exp(-0.05), abs=1e-15)


def test_reset_returns_to_neutral():
    ctl = MotorController(NEO, ramp=0.1)
    ctl.apply(1.0, 12.0, 0.0, 0.05)
    ctl.reset()
    assert ctl.ramped == 0.0
    assert ctl.output == ControllerOutput(0.0, 0.0, False)


# --- noise ------------------------------------------------------------------------------------


def run_noisy(seed, n, duty=0.5, sigma=0.1):
    ctl = MotorController(NEO, noise=sigma, rng=np.random.default_rng(seed))
    return np.array([ctl.apply(duty, 12.0, 0.0, 0.005).duty for _ in range(n)])


def test_noise_is_reproducible_with_the_same_seed():
    a, b, c = run_noisy(7, 500), run_noisy(7, 500), run_noisy(8, 500)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noise_is_multiplicative_with_the_stated_relative_std():
    n, sigma = 40_000, 0.1
    ratio = run_noisy(2024, n, duty=0.5, sigma=sigma) / 0.5
    # Mean of 1 + σz: standard error σ/√n = 5e-4; allow 4 standard errors.
    assert abs(ratio.mean() - 1.0) < 4 * sigma / math.sqrt(n)
    # Sample std: standard error ≈ σ/√(2n) = 3.5e-4; allow 4 standard errors.
    assert abs(ratio.std(ddof=1) - sigma) < 4 * sigma / math.sqrt(2 * n)


def test_noise_matches_the_generators_draws_exactly():
    ctl = MotorController(NEO, noise=0.05, rng=np.random.default_rng(3))
    z = np.random.default_rng(3).standard_normal(5)
    for zi in z:
        assert ctl.apply(-0.4, 10.0, 0.0, 0.01).duty == pytest.approx(-0.4 * (1 + 0.05 * zi),
                                                                       rel=1e-14)


def test_no_noise_draws_nothing():
    rng = np.random.default_rng(11)
    ctl = MotorController(NEO, rng=rng)
    ctl.apply(0.5, 12.0, 0.0, 0.005)
    assert rng.standard_normal() == np.random.default_rng(11).standard_normal()


def test_noise_needs_a_generator():
    with pytest.raises(ValueError, match="Generator"):
        MotorController(NEO, noise=0.1)


# --- neutral ----------------------------------------------------------------------------------


@pytest.mark.parametrize("speed", [0.0, 250.0, -400.0])
def test_brake_at_zero_duty_shorts_the_terminals(speed):
    ctl = MotorController(KRAKEN, count=2, neutral="brake")
    out = ctl.apply(0.0, 12.0, speed, 0.005)
    assert out == ControllerOutput(0.0, 0.0, False)
    stator, supply = ctl.currents(out.voltage, 12.0, speed)
    assert stator == pytest.approx(-2 * speed / (KRAKEN.kv * KRAKEN.R), rel=1e-15)
    assert supply == 0.0


@pytest.mark.parametrize("speed", [0.0, 250.0, -400.0])
def test_coast_at_zero_duty_opens_the_bridge(speed):
    ctl = MotorController(KRAKEN, count=2, neutral="coast")
    out = ctl.apply(0.0, 12.0, speed, 0.005)
    assert out.coasting and out.duty == 0.0
    assert ctl.currents(out.voltage, 12.0, speed) == (0.0, 0.0)
    # The reported voltage is the back-EMF, so the bare motor equation gives no current either.
    assert KRAKEN.current(speed, out.voltage) == 0.0


def test_neutral_deadband():
    ctl = MotorController(NEO, neutral="coast", neutral_deadband=0.04)
    assert ctl.apply(0.04, 12.0, 50.0, 0.005).coasting
    assert not ctl.apply(0.0401, 12.0, 50.0, 0.005).coasting


def test_currents_coasting_argument_overrides_last_state():
    ctl = MotorController(NEO, neutral="coast")
    ctl.apply(0.0, 12.0, 10.0, 0.005)
    stator, _ = ctl.currents(6.0, 12.0, 10.0, coasting=False)
    assert stator == pytest.approx(stator_per_motor(NEO, 6.0, 10.0), rel=1e-15)


# --- current limits ---------------------------------------------------------------------------


def test_stator_limit_holds_exactly_at_stall():
    ctl = MotorController(NEO, count=3, stator_limit=40.0)
    out = ctl.apply(1.0, 12.0, 0.0, 0.005)
    assert out.stator_limited and not out.supply_limited
    stator, _ = ctl.currents(out.voltage, 12.0, 0.0)
    assert stator == pytest.approx(3 * 40.0, rel=1e-12)
    assert 0.0 < out.voltage < 12.0


def test_stator_limit_also_limits_braking_current_while_driving():
    speed = 0.9 * NEO.free_speed
    ctl = MotorController(NEO, stator_limit=30.0)
    out = ctl.apply(0.05, 12.0, speed, 0.005)
    assert out.stator_limited
    assert ctl.currents(out.voltage, 12.0, speed)[0] == pytest.approx(-30.0, rel=1e-12)


def test_stator_limit_inactive_below_the_limit():
    ctl = MotorController(NEO, stator_limit=40.0)
    speed = 400.0  # near free speed: a few amps
    out = ctl.apply(1.0, 12.0, speed, 0.005)
    assert not out.stator_limited
    assert out.voltage == 12.0


def test_supply_limit_holds_exactly():
    ctl = MotorController(KRAKEN, supply_limit=30.0)
    speed = 100.0
    out = ctl.apply(1.0, 12.0, speed, 0.005)
    assert out.supply_limited
    stator, supply = ctl.currents(out.voltage, 12.0, speed)
    assert supply == pytest.approx(30.0, rel=1e-12)
    assert stator > supply  # the bridge steps voltage down and current up
    assert 0.0 < out.voltage < 12.0


def test_supply_limit_in_reverse_and_with_negative_back_emf():
    ctl = MotorController(KRAKEN, supply_limit=25.0)
    for duty, speed in [(-1.0, -50.0), (-1.0, 200.0), (1.0, -200.0)]:
        ctl.reset()  # separate cases, not consecutive substeps (whose speed it extrapolates)
        out = ctl.apply(duty, 12.0, speed, 0.005)
        assert out.supply_limited
        assert math.copysign(1.0, out.voltage) == math.copysign(1.0, duty)
        assert ctl.currents(out.voltage, 12.0, speed)[1] == pytest.approx(25.0, rel=1e-12)


def test_supply_limit_inactive_below_the_limit():
    ctl = MotorController(KRAKEN, supply_limit=60.0, stator_limit=200.0)
    out = ctl.apply(0.3, 12.0, 150.0, 0.005)
    assert not out.supply_limited and not out.stator_limited
    assert out.voltage == pytest.approx(3.6, rel=1e-15)


duties = st.floats(-1.2, 1.2, allow_subnormal=False)
buses = st.floats(0.5, 14.0)
speeds = st.floats(-700.0, 700.0)
limits = st.one_of(st.just(0.0), st.floats(1.0, 200.0))


@settings(max_examples=400, deadline=None)
@given(duty=duties, bus=buses, speed=speeds, stator=limits, supply=limits,
       coast=st.booleans(), count=st.integers(1, 4))
def test_limits_hold_over_random_inputs(duty, bus, speed, stator, supply, coast, count):
    motor = KRAKEN
    ctl = MotorController(motor, count=count, stator_limit=stator, supply_limit=supply,
                          neutral="coast" if coast else "brake")
    out = ctl.apply(duty, bus, speed, 0.005)
    i_stator, i_supply = ctl.currents(out.voltage, bus, speed)
    assert abs(out.voltage) <= bus or out.coasting
    if out.duty == 0.0:  # neutral: never limited
        return
    free = max(-1.0, min(1.0, duty)) * bus
    emf = speed / motor.kv
    # Beyond |ω/Kv| > V_bus + limit·R no bridge voltage within ±V_bus holds the current.
    reachable = abs(emf) <= bus + stator * motor.R
    if stator and reachable:
        assert abs(i_stator) <= count * stator * (1 + 1e-12)
    if supply:
        assert i_supply <= count * supply * (1 + 1e-12)
        if out.supply_limited:
            assert i_supply == pytest.approx(count * supply, rel=1e-12)
            assert abs(out.voltage) < abs(free) and out.voltage * free > 0
    if not out.stator_limited and not out.supply_limited:
        assert out.voltage == free


# --- power balance ----------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(duty=duties, bus=buses, speed=speeds, stator=limits, supply=limits,
       coast=st.booleans(), count=st.integers(1, 4), motor=st.sampled_from([NEO, KRAKEN]))
def test_power_balance_bus_equals_terminals(duty, bus, speed, stator, supply, coast, count,
                                            motor):
    ctl = MotorController(motor, count=count, stator_limit=stator, supply_limit=supply,
                          neutral="coast" if coast else "brake")
    out = ctl.apply(duty, bus, speed, 0.005)
    i_stator, i_supply = ctl.currents(out.voltage, bus, speed)
    # Three roundings separate the two sides: 1e-12 relative leaves room for rounding only
    # (the 1e-300 W floor covers products in the subnormal range, where precision thins out).
    assert bus * i_supply == pytest.approx(out.voltage * i_stator, rel=1e-12, abs=1e-300)


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError, match="brake"):
        MotorController(NEO, neutral="hold")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="≥ 0"):
        MotorController(NEO, ramp=-1.0)
    with pytest.raises(ValueError, match="count"):
        MotorController(NEO, count=0)
