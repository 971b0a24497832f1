"""Pneumatics: ideal-gas bookkeeping, compressor table, pressure switch, cylinders.

Expected values are computed here from first principles and the test's own copy of the Viair
90C table (imperial units, converted with the test's own factors), not from the module.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from simserver.models.pneumatics import (
    COMPRESSOR_VIAIR_90C,
    CompressorTable,
    PneumaticSystem,
)

# Expected values are a few float operations away from the model's: rounding only.
REL = 1e-12

R = 8.314462618  # J/(mol·K)
P_ATM = 101_325.0  # Pa
PSI = 4.4482216152605 / 0.0254**2  # Pa: lbf / in²
CFM = 0.028316846592 / 60.0  # m³/s: ft³ / min
T_70F = 294.26111111111111  # K
HALF_LITER = 0.5e-3  # m³

# Viair 90C at 12 V as RoboSim uses it (AndyMark's data): psi gauge, CFM free air, A.
TABLE_PSI = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 150]
TABLE_CFM = [0.88, 0.71, 0.67, 0.64, 0.60, 0.57, 0.53, 0.48, 0.45, 0.43, 0.39, 0.36, 0.34, 0.0]
TABLE_AMPS = [7, 8, 8, 9, 9, 9, 10, 10, 10, 10, 9, 9, 9, 9]


def flow(p_pa: float) -> float:
    """Free-air flow, m³/s, at p Pa gauge: the test's own linear interpolation."""
    return float(np.interp(p_pa / PSI, TABLE_PSI, TABLE_CFM)) * CFM


def amps(p_pa: float) -> float:
    return float(np.interp(p_pa / PSI, TABLE_PSI, TABLE_AMPS))


def system(**kw) -> PneumaticSystem:
    kw.setdefault("tanks", 2)
    kw.setdefault("extra_volume", 0.0)
    return PneumaticSystem(**kw)


def test_table_is_robosims_viair_90c_in_si():
    t = COMPRESSOR_VIAIR_90C
    assert t.voltage == 12.0
    assert t.pressure == pytest.approx([p * PSI for p in TABLE_PSI], rel=REL)
    assert t.flow == pytest.approx([q * CFM for q in TABLE_CFM], rel=REL, abs=1e-18)
    assert t.current == tuple(float(i) for i in TABLE_AMPS)
    # Spot values quoted in the docs: 0 psi → 0.88 CFM (0.4153 L/s), 7 A; 120 psi → 0.34 CFM.
    assert t.flow_at(0.0) * 1000 == pytest.approx(0.415314, abs=1e-6)
    assert t.flow_at(120 * PSI) == pytest.approx(0.34 * CFM, rel=REL)


def test_table_interpolates_linearly_and_holds_the_end_rows():
    t = COMPRESSOR_VIAIR_90C
    assert t.flow_at(55 * PSI) == pytest.approx((0.57 + 0.53) / 2 * CFM, rel=REL)
    assert t.current_at(95 * PSI) == pytest.approx(9.5, rel=REL)
    assert t.flow_at(-5 * PSI) == pytest.approx(0.88 * CFM, rel=REL)
    assert t.flow_at(200 * PSI) == 0.0
    assert t.current_at(200 * PSI) == 9.0


def test_reset_holds_one_atmosphere_of_air():
    pn = system(tanks=2, extra_volume=50e-6)
    v = 2 * HALF_LITER + 50e-6
    assert pn.volume == pytest.approx(v, rel=REL)
    assert pn.temperature == pytest.approx(T_70F, rel=REL)
    assert pn.moles == pytest.approx(P_ATM * v / (R * T_70F), rel=REL)
    assert pn.absolute_pressure == pytest.approx(P_ATM, rel=REL)
    assert abs(pn.pressure) < 1e-9  # Pa: P_atm recomputed from n, a rounding away from 0
    assert pn.compressor_running and pn.switch_closed


def test_moles_and_pressure_follow_the_ideal_gas_law():
    pn = system(tanks=3, extra_volume=1e-4, temperature=300.0)
    v = 3 * HALF_LITER + 1e-4
    for n in (0.01, 0.1, 0.3879):
        pn.moles = n
        assert pn.absolute_pressure == pytest.approx(n * R * 300.0 / v, rel=REL)
        assert pn.pressure == pytest.approx(n * R * 300.0 / v - P_ATM, rel=REL)
        assert pn.pressure_psi == pytest.approx((n * R * 300.0 / v - P_ATM) / PSI, rel=REL)
    for psi in (0.0, 60.0, 120.0):
        pn.reset(pressure=psi * PSI)
        assert pn.moles == pytest.approx((P_ATM + psi * PSI) * v / (R * 300.0), rel=REL)
        assert pn.pressure_psi == pytest.approx(psi, rel=REL, abs=1e-12)


def test_compressor_adds_free_air_flow_at_atmospheric_pressure_each_step():
    pn = system()
    h = 0.005
    for _ in range(200):
        p, n = pn.pressure, pn.moles
        pn.step(h, bus_voltage=12.0)
        assert pn.moles - n == pytest.approx(P_ATM * flow(p) * h / (R * T_70F), rel=1e-9)


def test_mole_conservation_compressor_in_minus_cylinders_out():
    pn = system()
    pn.add_cylinder("a", bore=0.0381, stroke=0.3048, rod_diameter=0.0095)
    pn.add_cylinder("b", bore=0.0254, stroke=0.1, double_acting=False, extend_time=0.05)
    rng = random.Random(1736)
    n0 = pn.moles
    compressed = consumed = 0.0
    for i in range(4000):
        if i % 7 == 0:
            name = rng.choice("ab")
            consumed += pn.set_solenoid(name, rng.random() < 0.5)
        if i % 500 == 0:
            pn.enabled = rng.random() < 0.8
        before = pn.moles
        pn.step(0.005, bus_voltage=rng.uniform(9.0, 13.0))
        compressed += pn.moles - before  # cylinders take air only in set_solenoid
        assert pn.moles == pytest.approx(n0 + pn.moles_compressed - pn.moles_consumed, rel=REL)
    assert pn.moles_consumed == pytest.approx(consumed, rel=REL)
    assert pn.moles_compressed == pytest.approx(compressed, rel=1e-9)
    assert consumed > 0 and compressed > 0


def test_pressure_switch_hysteresis():
    h = 0.005
    off, on = 120 * PSI, 95 * PSI
    pn = system()
    pn.add_cylinder("c", bore=0.01905, stroke=0.1016)  # 3/4 in bore, 4 in stroke
    # Fill: the compressor stops on the first step that reaches 120 psi, overshooting by less
    # than that one step's flow.
    while pn.compressor_running:
        p_before = pn.pressure
        pn.step(h)
    assert p_before < off <= pn.pressure
    step_rise = P_ATM * flow(p_before) * h / pn.volume
    assert pn.pressure - p_before == pytest.approx(step_rise, rel=1e-9)
    # Bleed with cylinder strokes: the compressor stays off until the pressure is below 95 psi,
    # then runs again until 120 psi; over a long run never above 120 psi + one step of flow.
    expect_running = False
    highest = pn.pressure
    ons = offs = 0
    for i in range(40000):  # 200 s, a stroke every 2 s: about 2 psi/s of demand
        if i % 400 == 0:
            pn.set_solenoid("c", not pn.solenoid("c"))
        pn.step(h)
        p = pn.pressure
        highest = max(highest, p)
        if p >= off:
            offs += expect_running
            expect_running = False
        elif p < on:
            ons += not expect_running
            expect_running = True
        assert pn.compressor_running == expect_running
        expected_current = amps(p) if expect_running else 0.0
        assert pn.compressor_current == pytest.approx(expected_current, rel=REL)
    assert ons >= 2 and offs >= 2  # went round the loop several times
    assert highest < off + P_ATM * flow(0.0) * h / pn.volume


def segment_fill_time(volume: float, p_end: float) -> float:
    """∫ V / (P_atm·Q(p)) dp from 0 to p_end, Q piecewise linear: closed form per segment."""
    total = 0.0
    for i in range(len(TABLE_PSI) - 1):
        p0, p1 = TABLE_PSI[i] * PSI, TABLE_PSI[i + 1] * PSI
        if p0 >= p_end:
            break
        p1c = min(p1, p_end)
        q0 = TABLE_CFM[i] * CFM
        slope = (TABLE_CFM[i + 1] - TABLE_CFM[i]) * CFM / (p1 - p0)
        q1c = q0 + slope * (p1c - p0)
        total += (math.log(q1c / q0) / slope) if slope else (p1c - p0) / q0
    return volume / P_ATM * total


def test_fill_time_of_two_tanks_matches_the_integral_of_the_table():
    # dp/dt = P_atm·Q(p)/V for a closed volume, so t = ∫ V/(P_atm·Q(p)) dp.
    h = 0.005
    pn = system(tanks=2, extra_volume=0.0)
    expected = segment_fill_time(2 * HALF_LITER, 120 * PSI)
    assert expected == pytest.approx(34.25, abs=0.01)  # s: 1 L from 0 to 120 psi
    t = 0.0
    while pn.compressor_running:
        pn.step(h)
        t += h
    # Tolerance: the switch sees the pressure at step ends (up to +h), and explicit Euler uses
    # the flow at the start of each step, which (flow falling with pressure) fills a little
    # early, O(h) relative: ≈ 0.01 % at h = 5 ms. 0.1 % + h covers both.
    assert t == pytest.approx(expected, rel=1e-3, abs=h)


def test_fill_time_scales_with_bus_voltage():
    h = 0.005
    pn = system(tanks=1)
    t = 0.0
    while pn.compressor_running:
        pn.step(h, bus_voltage=9.0)
        t += h
    assert t == pytest.approx(segment_fill_time(HALF_LITER, 120 * PSI) * 12.0 / 9.0,
                              rel=1e-3, abs=h)


def test_cylinder_extend_consumes_absolute_pressure_times_bore_volume():
    pn = system()
    pn.add_cylinder("c", bore=0.0381, stroke=0.3048, rod_diameter=0.0095)
    pn.reset(pressure=100 * PSI)
    n0 = pn.moles
    taken = pn.set_solenoid("c", True)
    v_cap = math.pi * 0.0381**2 / 4 * 0.3048
    assert taken == pytest.approx((P_ATM + 100 * PSI) * v_cap / (R * T_70F), rel=REL)
    assert n0 - pn.moles == pytest.approx(taken, rel=1e-9)
    assert pn.set_solenoid("c", True) == 0.0  # no change, no air
    for _ in range(40):
        pn.step(0.005)
    p = pn.pressure
    taken = pn.set_solenoid("c", False)
    v_rod = math.pi * (0.0381**2 - 0.0095**2) / 4 * 0.3048
    assert taken == pytest.approx((P_ATM + p) * v_rod / (R * T_70F), rel=REL)


def test_single_acting_retract_is_free_and_regulator_caps_feed_pressure():
    pn = system(working_pressure=60 * PSI)
    pn.add_cylinder("s", bore=0.02, stroke=0.05, double_acting=False)
    pn.reset(pressure=110 * PSI)
    taken = pn.set_solenoid("s", True)
    v = math.pi * 0.02**2 / 4 * 0.05
    assert taken == pytest.approx((P_ATM + 60 * PSI) * v / (R * T_70F), rel=REL)
    pn.step(1.0)
    assert pn.set_solenoid("s", False) == 0.0


def test_reversal_mid_stroke_charges_only_the_travel_still_to_go():
    pn = system(tanks=4)
    pn.add_cylinder("c", bore=0.05, stroke=0.2, rod_diameter=0.01, extend_time=0.2)
    pn.reset(pressure=80 * PSI)
    pn.enabled = False
    pn.set_solenoid("c", True)
    for _ in range(6):
        pn.step(0.01)
    x = pn.extension("c")
    assert x == pytest.approx(0.3, rel=REL)
    p = pn.pressure
    taken = pn.set_solenoid("c", False)
    v = math.pi * (0.05**2 - 0.01**2) / 4 * 0.2 * x
    assert taken == pytest.approx((P_ATM + p) * v / (R * T_70F), rel=REL)


def test_cylinder_with_too_little_air_still_moves_and_takes_what_is_there():
    pn = system(tanks=1)
    pn.add_cylinder("big", bore=0.08, stroke=0.5, extend_time=0.1)
    pn.reset(pressure=5 * PSI)
    above_atm = pn.moles - P_ATM * pn.volume / (R * T_70F)
    pn.enabled = False
    taken = pn.set_solenoid("big", True)
    assert taken == pytest.approx(above_atm, rel=1e-9)
    assert abs(pn.pressure) < 1e-6  # Pa: down to atmospheric, never below
    assert pn.set_solenoid("big", False) == 0.0  # nothing left above atmospheric
    pn.set_solenoid("big", True)
    for _ in range(20):
        pn.step(0.005)
    assert pn.extension("big") == 1.0
    assert abs(pn.pressure) < 1e-6


@pytest.mark.parametrize(("extend_time", "h", "steps"), [(0.2, 0.02, 10), (0.2, 0.005, 40),
                                                         (0.5, 0.01, 50), (0.0, 0.005, 1)])
def test_extension_travels_linearly_over_extend_time(extend_time, h, steps):
    pn = system()
    pn.add_cylinder("c", bore=0.02, stroke=0.1, extend_time=extend_time)
    assert pn.extension("c") == 0.0
    pn.set_solenoid("c", True)
    for k in range(1, steps + 1):
        pn.step(h)
        if k < steps:
            assert pn.extension("c") == pytest.approx(k * h / extend_time, rel=1e-9)
    assert pn.extension("c") == 1.0  # exactly at the end stop after extend_time
    pn.step(h)
    assert pn.extension("c") == 1.0
    pn.set_solenoid("c", False)
    for k in range(1, steps + 1):
        pn.step(h)
        if k < steps:
            assert pn.extension("c") == pytest.approx(1 - k * h / extend_time, rel=1e-9)
    assert pn.extension("c") == 0.0


def test_compressor_current_follows_the_table():
    pn = system()
    for psi in [*range(0, 120, 5), 119.5]:
        pn.reset(pressure=psi * PSI)
        assert pn.compressor_running
        assert pn.compressor_current == pytest.approx(amps(psi * PSI), rel=REL)
        assert pn.step(0.001) == pytest.approx(amps(psi * PSI), rel=REL)
    assert amps(95 * PSI) == 9.5


def test_bus_voltage_scales_flow_not_current():
    a, b = system(), system()
    a.reset(pressure=40 * PSI)
    b.reset(pressure=40 * PSI)
    na, nb = a.moles, b.moles
    ia = a.step(0.01, bus_voltage=12.0)
    ib = b.step(0.01, bus_voltage=6.0)
    assert ia == ib == pytest.approx(9.0, rel=REL)
    assert b.moles - nb == pytest.approx((a.moles - na) / 2, rel=1e-9)
    n = b.moles
    assert b.step(0.01, bus_voltage=0.0) == 0.0
    assert b.moles == n and b.compressor_current == 0.0


def test_disabled_compressor_does_not_fill():
    pn = system()
    pn.enabled = False
    n = pn.moles
    for _ in range(2000):
        assert pn.step(0.005) == 0.0
    assert pn.moles == n and pn.moles_compressed == 0.0
    assert not pn.compressor_running and pn.compressor_current == 0.0
    assert pn.switch_closed  # the switch still asks for air
    pn.enabled = True
    assert pn.compressor_running and pn.compressor_current == 7.0


def test_reset_retracts_cylinders_and_clears_counters():
    pn = system()
    pn.add_cylinder("c", bore=0.02, stroke=0.1)
    pn.set_solenoid("c", True)
    pn.step(1.0)
    pn.reset()
    assert pn.extension("c") == 0.0 and not pn.solenoid("c")
    assert pn.moles_compressed == pn.moles_consumed == 0.0
    assert abs(pn.pressure) < 1e-9


def test_invalid_parameters_raise():
    with pytest.raises(ValueError):
        PneumaticSystem(tanks=0, extra_volume=0.0)
    with pytest.raises(ValueError):
        PneumaticSystem(switch_on_pressure=120 * PSI, switch_off_pressure=95 * PSI)
    with pytest.raises(ValueError):
        CompressorTable(pressure=(0.0, 0.0), flow=(1.0, 0.5), current=(1.0, 1.0))
    pn = system()
    pn.add_cylinder("c", bore=0.02, stroke=0.1)
    with pytest.raises(ValueError):
        pn.add_cylinder("c", bore=0.02, stroke=0.1)
    with pytest.raises(ValueError):
        pn.add_cylinder("d", bore=0.02, stroke=0.1, rod_diameter=0.03)
