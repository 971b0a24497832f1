"""Motor catalog and the DC motor electrical model.

References: wpimath's DCMotor catalog (the same data WPILib's simulation classes use) and the
datasheet figures of pyfrc.physics.motor_cfgs (copied below, since pyfrc is not a test
dependency).
"""

from __future__ import annotations

import math

import pytest
from wpilib.simulation import DifferentialDrivetrainSim
from wpimath.system.plant import DCMotor

from simserver.models.motor import MotorCatalogError, catalog_names, motor_by_name

# Catalog name -> single-motor wpimath factory, listed independently of simserver's own table.
WPIMATH_MOTORS = {
    "Kraken X60": DCMotor.krakenX60,
    "Kraken X60 FOC": DCMotor.krakenX60FOC,
    "Kraken X44": DCMotor.krakenX44,
    "Kraken X44 FOC": DCMotor.krakenX44FOC,
    "Falcon 500": DCMotor.falcon500,
    "Falcon 500 FOC": DCMotor.falcon500FOC,
    "NEO": DCMotor.NEO,
    "NEO Vortex": DCMotor.neoVortex,
    "NEO 550": DCMotor.NEO550,
    "Minion": DCMotor.minion,
    "CIM": DCMotor.CIM,
    "Mini CIM": DCMotor.miniCIM,
    "Bag": DCMotor.bag,
    "775pro": DCMotor.vex775Pro,
    "RS775-125": DCMotor.RS775_125,
    "BaneBots RS775": DCMotor.banebotsRS775,
    "BaneBots RS550": DCMotor.banebotsRS550,
    "AndyMark 9015": DCMotor.andymark9015,
    "Romi": DCMotor.romiBuiltIn,
}

# pyfrc.physics.motor_cfgs (pyfrc 2026.0.3): free speed rpm, free current A, stall torque N·m,
# stall current A, all at 12 V.
PYFRC_DATASHEET = {
    "pyfrc-CIM": (5310, 2.7, 2.42, 133),
    "pyfrc-MiniCIM": (5840, 3.0, 1.41, 89),
    "pyfrc-Bag": (13180, 1.8, 0.43, 53),
    "pyfrc-775Pro": (18730, 0.7, 0.71, 134),
    "pyfrc-RS775-125": (5800, 1.6, 0.28, 18),
    "pyfrc-RS550": (19000, 0.4, 0.38, 84),
    "pyfrc-RS775": (13050, 2.7, 0.72, 97),
    "pyfrc-AM-9015": (14270, 3.7, 0.36, 71),
}

# Derived constants are computed in a different order here than in wpimath (C++), so allow a
# few ulps: 1e-12 relative is far above rounding (~1e-16) and far below any real difference.
DERIVED_REL = 1e-12


@pytest.mark.parametrize("name", ["krakenx60", "Kraken X60", "kraken_x60", "KRAKEN-X60",
                                  " kraken  x60 "])
def test_lookup_ignores_case_spaces_and_punctuation(name):
    assert motor_by_name(name).name == "Kraken X60"


def test_lookup_distinguishes_foc_variant():
    assert motor_by_name("krakenx60foc").name == "Kraken X60 FOC"


def test_unknown_motor_error_suggests_closest_names():
    with pytest.raises(MotorCatalogError) as exc:
        motor_by_name("Krakn X60")
    msg = str(exc.value)
    assert "unknown motor type 'Krakn X60'" in msg
    assert "did you mean" in msg
    assert "'Kraken X60'" in msg


def test_unknown_motor_error_without_close_match_points_to_the_list():
    with pytest.raises(MotorCatalogError, match=r"unknown motor type 'zzzz'.*simserver motors"):
        motor_by_name("zzzz")


def test_catalog_contains_every_wpimath_and_pyfrc_entry():
    assert set(catalog_names()) == set(WPIMATH_MOTORS) | set(PYFRC_DATASHEET)


@pytest.mark.parametrize("name", sorted(WPIMATH_MOTORS))
def test_constants_equal_wpimath_single_motor(name):
    ref = WPIMATH_MOTORS[name](1)
    spec = motor_by_name(name)
    # Exact equality: the catalog copies wpimath's numbers, it must not recompute them.
    assert (spec.nominal_voltage, spec.stall_torque, spec.stall_current, spec.free_current,
            spec.free_speed, spec.R, spec.kv, spec.kt) == (
        ref.nominalVoltage, ref.stallTorque, ref.stallCurrent, ref.freeCurrent, ref.freeSpeed,
        ref.R, ref.Kv, ref.Kt)


@pytest.mark.parametrize("name", sorted(PYFRC_DATASHEET))
def test_pyfrc_entries_match_pyfrc_datasheet(name):
    free_rpm, free_a, stall_nm, stall_a = PYFRC_DATASHEET[name]
    spec = motor_by_name(name)
    free_speed = free_rpm * 2 * math.pi / 60
    assert spec.nominal_voltage == 12.0
    assert spec.free_speed == pytest.approx(free_speed, rel=DERIVED_REL)
    assert spec.free_current == pytest.approx(free_a, rel=DERIVED_REL)
    assert spec.stall_torque == pytest.approx(stall_nm, rel=DERIVED_REL)
    assert spec.stall_current == pytest.approx(stall_a, rel=DERIVED_REL)
    # The DC motor model's constants follow from the datasheet: R = V/I_stall,
    # Kv = ω_free/(V - R·I_free), Kt = τ_stall/I_stall.
    r = 12.0 / stall_a
    winding = spec.R
    assert winding == pytest.approx(r, rel=DERIVED_REL)
    assert spec.kv == pytest.approx(free_speed / (12.0 - r * free_a), rel=DERIVED_REL)
    assert spec.kt == pytest.approx(stall_nm / stall_a, rel=DERIVED_REL)


def test_pyfrc_cim_is_5310_rpm_2_7_a_free_2_42_nm_133_a_stall():
    cim = motor_by_name("pyfrc-CIM")
    # 1e-12 relative: rpm -> rad/s conversion rounding only.
    assert cim.free_speed * 60 / (2 * math.pi) == pytest.approx(5310, rel=DERIVED_REL)
    assert (cim.free_current, cim.stall_torque, cim.stall_current) == (2.7, 2.42, 133)


@pytest.mark.parametrize("name", ["CIM", "Kraken X60", "NEO", "pyfrc-775Pro"])
def test_current_at_zero_volts_with_shaft_turning_is_negative_braking_current(name):
    spec = motor_by_name(name)
    omega = 0.4 * spec.free_speed
    expected = -omega / (spec.kv * spec.R)
    # 1e-12 relative: same expression evaluated in a different order.
    assert spec.current(omega, 0.0) == pytest.approx(expected, rel=DERIVED_REL)
    assert spec.current(omega, 0.0) < 0.0


def test_braking_current_at_zero_volts_equals_wpimath_motor_equation():
    ref = DCMotor.CIM(1)
    # 1e-12 relative: wpimath evaluates the same model in C++.
    assert motor_by_name("CIM").current(300.0, 0.0) == pytest.approx(
        ref.current(300.0, 0.0), rel=DERIVED_REL)


def test_wpilib_drivetrain_sim_reports_zero_current_where_we_report_braking():
    # WPILib's sims multiply by sgn(input voltage); the known defect our model must not copy.
    sim = DifferentialDrivetrainSim(DCMotor.CIM(2), 10.71, 3.0, 27.0, 0.0762, 0.66)
    sim.setInputs(12.0, 12.0)
    sim.update(1.0)
    sim.setInputs(0.0, 0.0)
    sim.update(0.02)
    wheel_speed = sim.getLeftVelocity()
    assert wheel_speed > 1.0
    assert sim.getLeftCurrentDraw() == 0.0
    shaft_speed = wheel_speed * 10.71 / 0.0762
    ours = 2 * motor_by_name("CIM").current(shaft_speed, 0.0)
    assert ours < -10.0  # two CIMs braking from > 1 m/s: tens of amps, not 0


@pytest.mark.parametrize("name", sorted(WPIMATH_MOTORS))
def test_current_at_stall_is_voltage_over_resistance(name):
    spec = motor_by_name(name)
    for volts in (12.0, 6.0, -3.0):
        # 1e-12 relative: one division.
        assert spec.current(0.0, volts) == pytest.approx(volts / spec.R, rel=DERIVED_REL)


@pytest.mark.parametrize("name", ["CIM", "Falcon 500", "NEO 550"])
def test_current_at_nominal_stall_is_datasheet_stall_current(name):
    spec = motor_by_name(name)
    # 1e-12 relative: R was derived as V_nominal / I_stall.
    assert spec.current(0.0, spec.nominal_voltage) == pytest.approx(
        spec.stall_current, rel=DERIVED_REL)


@pytest.mark.parametrize("name", ["CIM", "Kraken X60", "pyfrc-Bag"])
def test_current_at_free_speed_is_free_current(name):
    spec = motor_by_name(name)
    # 1e-9 relative: Kv is derived from the datasheet free figures, so the motor equation must
    # reproduce them up to the rounding of that derivation.
    assert spec.current(spec.free_speed, spec.nominal_voltage) == pytest.approx(
        spec.free_current, rel=1e-9)


def test_torque_is_kt_times_current():
    cim = motor_by_name("CIM")
    # 1e-12 relative: at stall current the torque is the datasheet stall torque.
    assert cim.torque(cim.stall_current) == pytest.approx(cim.stall_torque, rel=DERIVED_REL)
