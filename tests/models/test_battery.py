"""The battery: open-circuit voltage behind an internal resistance, charge in amp-hours."""

from __future__ import annotations

import pytest

from simserver.models.battery import Battery, Source

# Every expected value is one or two float operations away from the model's: 1e-12 relative
# allows rounding and nothing else.
REL = 1e-12


def test_fresh_battery_sags_by_background_current():
    b = Battery(nominal_voltage=12.7, resistance=0.015, background_current=0.5)
    assert b.voltage == pytest.approx(12.7 - 0.015 * 0.5, rel=REL)
    assert b.current == 0.5
    assert b.charge_used == 0.0


def test_bus_voltage_is_nominal_minus_resistance_times_total_current():
    b = Battery(12.7, 0.015, 0.5)
    b.update(load_current=100.0, dt=0.005)
    assert b.current == pytest.approx(100.5, rel=REL)
    assert b.voltage == pytest.approx(12.7 - 0.015 * 100.5, rel=REL)


def test_bus_voltage_never_below_zero_under_huge_draw():
    b = Battery(12.7, 0.015, 0.5)
    b.update(load_current=1e6, dt=0.005)
    assert b.voltage == 0.0


def test_regenerative_current_raises_bus_voltage_above_nominal():
    b = Battery(12.0, 0.02, 0.0)
    b.update(load_current=-50.0, dt=0.005)
    assert b.voltage == pytest.approx(13.0, rel=REL)


def test_charge_integrates_current_times_dt_over_3600():
    b = Battery(12.7, 0.015, 0.5)
    draws = [(10.0, 0.005), (200.0, 0.02), (-30.0, 0.01), (0.0, 1.0)]
    for amps, dt in draws:
        b.update(amps, dt)
    expected = sum((amps + 0.5) * dt for amps, dt in draws) / 3600.0
    assert b.charge_used == pytest.approx(expected, rel=REL)


def test_one_amp_for_one_hour_is_one_amp_hour():
    b = Battery(12.0, 0.0, 0.0)
    for _ in range(3600):
        b.update(1.0, 1.0)
    # 1e-12 relative: 3600 additions of 1/3600 accumulate < 1e-13 rounding.
    assert b.charge_used == pytest.approx(1.0, rel=REL)


def test_reset_restores_a_fresh_battery():
    b = Battery(12.7, 0.015, 0.5)
    b.update(300.0, 1.0)
    b.reset()
    assert b.charge_used == 0.0
    assert b.current == 0.5
    assert b.voltage == pytest.approx(12.7 - 0.015 * 0.5, rel=REL)


def test_source_open_voltage_includes_background_and_other_current():
    b = Battery(nominal_voltage=12.0, resistance=0.02, background_current=0.5)
    src = b.source(other_current=10.0)
    assert src.open_voltage == pytest.approx(12.0 - 0.02 * 10.5, rel=REL)
    assert src.resistance == 0.02


def test_source_voltage_is_open_voltage_minus_drop():
    src = Source(open_voltage=12.5, resistance=0.015)
    assert src.voltage(100.0) == pytest.approx(12.5 - 1.5, rel=REL)


def test_source_voltage_never_below_zero():
    assert Source(open_voltage=12.5, resistance=0.015).voltage(1e5) == 0.0


@pytest.mark.parametrize(("nominal", "resistance", "background"),
                         [(0.0, 0.01, 0.0), (12.0, -0.01, 0.0), (12.0, 0.01, -1.0)])
def test_battery_rejects_non_physical_parameters(nominal, resistance, background):
    with pytest.raises(ValueError, match="battery needs"):
        Battery(nominal, resistance, background)


# --- state of charge, brownout, main breaker ---------------------------------------------------

import math  # noqa: E402

from simserver.models.battery import breaker_trip_time  # noqa: E402


def test_soc_curve_is_off_by_default():
    b = Battery(12.7, 0.015, 0.0)
    assert b.capacity == 17.0
    b.update(100.0, 306.0)  # 8.5 Ah: half the capacity
    assert b.open_voltage == 12.7
    assert b.state_of_charge == pytest.approx(0.5, rel=REL)


def test_soc_curve_falls_linearly_from_nominal_to_empty():
    b = Battery(12.7, 0.015, 0.0, soc_curve=True, capacity=17.0, empty_voltage=11.7)
    b.update(100.0, 306.0)  # 8.5 Ah
    assert b.charge_used == pytest.approx(8.5, rel=REL)
    assert b.open_voltage == pytest.approx(12.2, rel=REL)
    assert b.source(10.0).open_voltage == pytest.approx(12.2 - 0.015 * 10.0, rel=REL)
    # The bus voltage of a substep uses the open-circuit voltage at its start.
    b.update(50.0, 36.0)  # +0.5 Ah
    assert b.voltage == pytest.approx(12.2 - 0.015 * 50.0, rel=REL)
    assert b.open_voltage == pytest.approx(12.7 - 1.0 * 9.0 / 17.0, rel=REL)


def test_soc_curve_clamps_at_empty_and_at_full():
    b = Battery(12.7, 0.015, 0.0, soc_curve=True)
    b.update(34.0, 3600.0)  # 34 Ah: twice the capacity
    assert b.open_voltage == pytest.approx(11.7, rel=REL)
    assert b.state_of_charge == pytest.approx(-1.0, rel=REL)
    b.reset()
    b.update(-10.0, 3600.0)  # net charging
    assert b.open_voltage == 12.7


def test_soc_curve_rejects_an_empty_voltage_above_nominal():
    with pytest.raises(ValueError, match="empty_voltage"):
        Battery(11.0, 0.015, 0.0, soc_curve=True, empty_voltage=11.7)


# R = 0.5 Ω and 12 V make every bus voltage below exact: V = 12 - I/2.
def exact_battery(**kw):
    return Battery(12.0, 0.5, 0.0, **kw)


def test_brownout_threshold_defaults_to_roborio2_6_75_volts():
    b = exact_battery()
    assert not b.brownout
    b.update(10.5, 0.005)  # exactly 6.75 V: not below
    assert b.voltage == 6.75 and not b.brownout
    b.update(10.52, 0.005)  # 6.74 V
    assert b.brownout


def test_brownout_recovers_only_above_threshold_plus_hysteresis():
    b = exact_battery()
    b.update(11.0, 0.005)  # 6.5 V
    assert b.brownout
    b.update(10.0, 0.005)  # 7.0 V: inside the band, still out
    assert b.brownout
    b.update(9.0, 0.005)  # exactly 7.5 V: needs greater than
    assert b.voltage == 7.5 and b.brownout
    b.update(8.98, 0.005)  # 7.51 V
    assert not b.brownout
    b.update(10.0, 0.005)  # 7.0 V again: inside the band, stays in
    assert not b.brownout


def test_brownout_threshold_and_hysteresis_are_settable():
    b = exact_battery(brownout_voltage=7.0, brownout_hysteresis=1.0)
    b.update(10.5, 0.005)  # 6.75 V
    assert b.brownout
    b.update(8.5, 0.005)  # 7.75 V
    assert b.brownout
    b.update(7.9, 0.005)  # 8.05 V
    assert not b.brownout


def test_reset_clears_brownout():
    b = exact_battery()
    b.update(20.0, 0.005)
    assert b.brownout
    b.reset()
    assert not b.brownout


def run_until_trip(b, amps, dt, limit):
    t = 0.0
    while not b.breaker_tripped and t < limit:
        b.update(amps, dt)
        t += dt
    return t


def test_breaker_never_trips_at_rated_current_for_an_hour():
    b = Battery(12.7, 0.015, 0.0)
    t = run_until_trip(b, 120.0, 0.01, 3600.0)
    assert not b.breaker_tripped and t == pytest.approx(3600.0, rel=1e-9)
    # Heat settles at the rated-current steady state, well short of the trip level 1.15².
    assert b.breaker_heat == pytest.approx(1.0, rel=1e-12)
    assert b.voltage == pytest.approx(12.7 - 0.015 * 120.0, rel=REL)


def test_breaker_never_trips_just_below_the_ultimate_trip_current():
    b = Battery(12.7, 0.015, 0.0)
    run_until_trip(b, 0.995 * 1.15 * 120.0, 0.05, 3600.0)
    assert not b.breaker_tripped
    assert breaker_trip_time(0.995 * 1.15 * 120.0) == math.inf
    assert breaker_trip_time(120.0) == math.inf


def test_breaker_trips_at_twice_rated_in_the_documented_band():
    dt = 0.005
    b = Battery(12.7, 0.015, 0.0)
    t = run_until_trip(b, 240.0, dt, 60.0)
    assert b.breaker_tripped
    assert 10.0 <= t <= 20.0
    closed = 37.5 * math.log(4.0 / (4.0 - 1.15**2))
    assert breaker_trip_time(240.0) == pytest.approx(closed, rel=REL)
    assert closed == pytest.approx(15.05, abs=0.01)
    # Heat is advanced exactly, so the trip lands in the substep holding the closed-form time.
    assert closed <= t + 1e-9 and t < closed + dt + 1e-9


@pytest.mark.parametrize("multiple", [1.35, 1.5, 3.0, 5.0, 10.0])
def test_breaker_trip_time_follows_the_curve(multiple):
    dt = 0.001
    b = Battery(12.7, 0.0, 0.0)
    t = run_until_trip(b, multiple * 120.0, dt, 120.0)
    closed = breaker_trip_time(multiple * 120.0)
    assert closed <= t + 1e-9 and t < closed + dt + 1e-9


def test_tripped_breaker_gives_zero_volts_until_reset():
    b = Battery(12.7, 0.015, 0.5)
    run_until_trip(b, 400.0, 0.005, 60.0)
    assert b.breaker_tripped
    assert b.voltage == 0.0 and b.current == 0.0
    assert b.brownout
    assert b.source() == Source(0.0, 0.0)
    assert b.source(50.0).voltage(50.0) == 0.0
    charge = b.charge_used
    for _ in range(100):
        b.update(100.0, 0.005)
        assert b.voltage == 0.0 and b.current == 0.0
    assert b.charge_used == charge
    b.reset_breaker()
    assert not b.breaker_tripped
    assert b.voltage == pytest.approx(12.7 - 0.015 * 0.5, rel=REL)
    assert not b.brownout


def test_breaker_cools_while_open_and_a_hot_breaker_retrips_sooner():
    b = Battery(12.7, 0.015, 0.0)
    run_until_trip(b, 240.0, 0.005, 60.0)
    heat = b.breaker_heat
    b.update(0.0, 10.0)
    assert b.breaker_heat == pytest.approx(heat * math.exp(-10.0 / 37.5), rel=REL)
    b.reset_breaker()
    assert run_until_trip(b, 240.0, 0.005, 60.0) < 10.0
    b.reset()
    assert b.breaker_heat == 0.0 and not b.breaker_tripped
    assert run_until_trip(b, 240.0, 0.005, 60.0) > 15.0


def test_breaker_rating_zero_disables_the_breaker():
    b = Battery(12.7, 0.015, 0.0, breaker_rating=0.0)
    run_until_trip(b, 1000.0, 0.1, 600.0)
    assert not b.breaker_tripped and b.breaker_heat == 0.0


def test_breaker_heat_is_symmetric_in_current_direction():
    a, b = Battery(12.0, 0.01, 0.0), Battery(12.0, 0.01, 0.0)
    a.update(300.0, 2.0)
    b.update(-300.0, 2.0)
    assert a.breaker_heat == b.breaker_heat > 0.0
