"""The routine on the simulator: fitted constants against first principles computed here from
the config's numbers and wpimath's DCMotor, with the default losses (gearbox efficiency η,
the motors' free-current load, static friction): kV = V_nominal / free speed at the joint,
kA = inertia · R / (η · n · ratio · Kt), kS = the static friction voltage; where the subject
stops, and the errors."""

from __future__ import annotations

import dataclasses
import math

import pytest
from wpimath.system.plant import DCMotor

from simserver.config.loader import load, load_default, loads
from simserver.sysid import Settings, SysIdError, characterize
from simserver.sysid.report import warnings
from simserver.sysid.routine import STOP_MARGIN, subject_of
from tests.worlds import ARM, ARM_BENCH, LIFT, SHOULDER_NEO, TWO_KRAKENS

G = 9.80665
FLYWHEEL = """
[motors.shooter]
type = "NEO"
count = 2

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.004 kg*m^2"
"""


def within(fitted: float, expected: float, share: float = 0.02) -> bool:
    return abs(fitted - expected) <= share * abs(expected)


def free_speed_kv(one: DCMotor, ratio: float) -> float:
    """V per unit/s: the nominal voltage over the catalog free speed at the joint."""
    return one.nominalVoltage * ratio / one.freeSpeed


def volts_per_force(one: DCMotor, count: int, ratio: float, efficiency: float) -> float:
    """V per N (or N·m) of joint force at rest: R / (η · n · ratio · Kt)."""
    return one.R / (efficiency * count * ratio * one.Kt)


def test_kitbot_drivetrain_kv_ka_ks_match_first_principles():
    cfg = load_default()
    dt, motor = cfg.drivetrain, cfg.motors["left"]
    one = DCMotor.CIM(1)
    r, n = dt.wheel_diameter / 2, motor.count
    ratio = dt.gearing / r
    per_force = volts_per_force(one, n, ratio, dt.losses.gearbox_efficiency)
    # Per side: half the robot plus the side's wheels and rotors seen at the rim.
    half = cfg.robot.mass / 2
    ka = (half + dt.wheel_inertia / r ** 2) * per_force
    ks = dt.losses.static_friction + dt.losses.rolling_resistance * half * G * per_force
    # The default 7 V step spins the kitbot's wheels: step to half the traction limit.
    result = characterize(cfg, settings=Settings(step_voltage=0.5 * dt.friction * G * ka))
    assert not warnings(result)
    for fit in (result.fit, *result.fits.values()):
        assert within(fit.kv, free_speed_kv(one, ratio)), fit
        assert within(fit.ka, ka) and within(fit.ks, ks), (fit, ka, ks)
        assert fit.r_squared > 0.999
    assert set(result.fits) == {"left", "right"}


def test_the_default_kitbot_slips_at_the_7_volt_step_and_is_told_so():
    assert any("slipped" in w for w in warnings(characterize(load_default())))


def test_elevator_kv_ka_kg_match_first_principles_and_stop_short_of_the_top():
    cfg = loads(LIFT + TWO_KRAKENS)
    # A 20 ms sample is ten times the time constant of this elevator (2 ms): sample at 5 ms.
    result = characterize(cfg, "lift", Settings(period=0.005))
    c = cfg.mechanisms["lift"].config
    one = DCMotor.krakenX60(1)
    ratio = c.gearing / c.drum_radius
    per_force = volts_per_force(one, 2, ratio, c.losses.gearbox_efficiency)
    fit = result.fit
    assert within(fit.kv, free_speed_kv(one, ratio)), fit
    assert within(fit.ka, c.carriage_mass * per_force), fit
    assert within(fit.kg, c.carriage_mass * G * per_force), fit
    assert within(fit.ks, c.losses.static_friction), fit
    top = c.max_height - STOP_MARGIN * (c.max_height - c.min_height)
    highest = max(run.position.max() for run in result.runs["lift"])
    assert top - 0.05 < highest < c.max_height - 0.05  # stopped near the margin, not the stop


def test_arm_kv_ka_kg_match_first_principles():
    cfg = loads(ARM + SHOULDER_NEO)
    result = characterize(cfg, "arm")
    c = cfg.mechanisms["arm"].config
    one = DCMotor.NEO(1)
    inertia = c.mass * (c.length / 2) ** 2 + c.mass * c.length ** 2 / 12  # uniform rod
    per_torque = volts_per_force(one, 1, c.gearing, c.losses.gearbox_efficiency)
    fit = result.fit
    assert within(fit.kv, free_speed_kv(one, c.gearing)), fit
    # The fit holds cos θ over each 20 ms sample, as SysId does: kS, the smallest term, is
    # measured to about 5 % here.
    assert within(fit.ks, c.losses.static_friction, 0.1), fit
    assert within(fit.ka, inertia * per_torque), fit
    assert within(fit.kg, c.mass * G * c.length / 2 * per_torque), fit
    assert abs(fit.offset) < 0.01


def test_flywheel_kv_ka_match_first_principles():
    cfg = loads(ARM_BENCH + FLYWHEEL)
    fit = characterize(cfg, "shooter").fit
    one = DCMotor.NEO(1)
    c = cfg.mechanisms["shooter"].config
    per_torque = volts_per_force(one, 2, c.gearing, c.losses.gearbox_efficiency)
    assert within(fit.kv, free_speed_kv(one, c.gearing), 0.001), fit
    assert within(fit.ka, c.moment_of_inertia * per_torque, 0.001), fit
    assert within(fit.ks, c.losses.static_friction, 0.001), fit


def test_swerve_drive_motors_kv_ka_match_first_principles_below_the_traction_limit():
    cfg = load("examples/swerve/simserver.toml")
    sw = cfg.drivetrain
    module = next(iter(sw.modules.values()))
    spec = cfg.motors[module.drive]
    assert spec.type == "Kraken X60"
    one = DCMotor.krakenX60(1)
    r, gearing = sw.wheel_diameter / 2, sw.drive_gearing
    # Each module carries its share of the robot plus its wheel's inertia (rotor included).
    share = cfg.robot.mass / len(sw.modules)
    mass = share + sw.wheel_inertia / r ** 2
    per_force = volts_per_force(one, spec.count, gearing / r, sw.losses.gearbox_efficiency)
    ka = mass * per_force
    # Static friction: the tires' rolling resistance under each module's share of the weight.
    ks = sw.losses.static_friction + sw.losses.rolling_resistance * share * G * per_force
    # A 7 V step spins these wheels (7 V / kA is about 4 g): step to half the traction limit.
    step = 0.5 * sw.friction * G * ka
    result = characterize(cfg, settings=Settings(step_voltage=step))
    assert len(result.fits) == len(sw.modules)
    assert within(result.fit.kv, free_speed_kv(one, gearing / r)), result.fit
    assert within(result.fit.ka, ka), result.fit
    assert within(result.fit.ks, ks), (result.fit, ks)
    assert not any("slipped" in w for w in warnings(result))


def test_wheels_spinning_at_the_7_volt_step_are_reported():
    result = characterize(load("examples/swerve/simserver.toml"))
    slipped = {run.state for runs in result.runs.values() for run in runs if run.slip > 0.0}
    assert slipped == {"dynamic-forward", "dynamic-reverse"}
    assert any("slipped" in w and "--step-voltage" in w for w in warnings(result))


def test_settings_change_the_voltages_the_routine_applies():
    cfg = load_default()
    result = characterize(cfg, settings=Settings(ramp_rate=0.5, step_voltage=4.0, timeout=2.0))
    runs = result.runs["left"]
    assert [r.state for r in runs] == ["quasistatic-forward", "quasistatic-reverse",
                                       "dynamic-forward", "dynamic-reverse"]
    assert max(abs(runs[0].voltage)) == pytest.approx(0.5 * 2.0, abs=0.05)
    assert runs[3].voltage[-1] == pytest.approx(-4.0, abs=0.05)
    assert all(r.time[-1] - r.time[0] <= 2.0 for r in runs)


def test_unknown_mechanism_is_refused_naming_the_ones_there_are():
    with pytest.raises(SysIdError, match=r"no mechanism 'lfit'.*lift"):
        subject_of(loads(LIFT + TWO_KRAKENS), "lfit")


def test_a_mechanism_type_that_cannot_be_characterized_is_named():
    cfg = loads(LIFT + TWO_KRAKENS)
    section = dataclasses.replace(cfg.mechanisms["lift"], type="turret")
    cfg = dataclasses.replace(cfg, mechanisms={"lift": section})
    with pytest.raises(SysIdError, match="'turret', which cannot be characterized"):
        subject_of(cfg, "lift")


def test_no_drivetrain_without_mechanism_says_which_mechanisms_there_are():
    with pytest.raises(SysIdError, match=r"no \[drivetrain\].*--mechanism \(arm\)"):
        subject_of(loads(ARM_BENCH))


@pytest.mark.parametrize("field,value", [("ramp_rate", 0.0), ("step_voltage", -7.0),
                                         ("timeout", math.inf), ("period", 5.0)])
def test_settings_out_of_range_are_refused(field, value):
    with pytest.raises(SysIdError, match=field.replace("_", " ")):
        Settings(**{field: value}).check()
