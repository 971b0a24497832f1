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
