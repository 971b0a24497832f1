"""The loss terms and the SysId constants of a joint, against closed forms."""

import math

import pytest

from simserver.models.losses import (
    CharacterizationError,
    Feedforward,
    JointMotors,
    Losses,
    coulomb_step,
    feedforward,
    from_feedforward,
)
from simserver.models.motor import motor_by_name

NEO = motor_by_name("NEO")


def test_free_current_load_gives_the_catalog_free_speed_and_current():
    joint = JointMotors(NEO, 2, 1.0, Losses(free_current=True))
    speed = joint.force_per_volt * NEO.nominal_voltage / joint.damping
    assert speed == pytest.approx(NEO.free_speed, rel=1e-12)
    assert NEO.current(speed, NEO.nominal_voltage) == pytest.approx(NEO.free_current, rel=1e-9)
    ideal = JointMotors(NEO, 2, 1.0)
    assert ideal.force_per_volt * NEO.nominal_voltage / ideal.damping == pytest.approx(
        NEO.nominal_voltage * NEO.kv, rel=1e-12)


def test_efficiency_costs_force_not_free_speed():
    lossy = JointMotors(NEO, 1, 5.0, Losses(efficiency=0.8, free_current=True))
    ideal = JointMotors(NEO, 1, 5.0, Losses(free_current=True))
    assert lossy.force_per_volt == pytest.approx(0.8 * ideal.force_per_volt, rel=1e-12)
    assert lossy.force_per_volt / lossy.damping == pytest.approx(
        ideal.force_per_volt / ideal.damping, rel=1e-12)


def test_coast_down_under_coulomb_and_viscous_friction_matches_the_closed_form():
    j, b, fc, v0 = 3.0, 1.5, 2.0, 4.0
    t_stop = j / b * math.log(1.0 + b * v0 / fc)
    x_stop = (v0 + fc / b) * j / b * (1.0 - math.exp(-b * t_stop / j)) - fc / b * t_stop
    v, x, h = v0, 0.0, 0.02
    for _ in range(int(2 * t_stop / h)):
        v, dx = coulomb_step(v, 0.0, b, fc, j, h)
        x += dx
    assert v == 0.0
    assert x == pytest.approx(x_stop, rel=1e-12)
    t_mid = 0.999 * t_stop
    x_mid_closed = (v0 + fc / b) * j / b * (1.0 - math.exp(-b * t_mid / j)) - fc / b * t_mid
    v_mid, x_mid = v0, 0.0
    for _ in range(10):
        v_mid, dx = coulomb_step(v_mid, 0.0, b, fc, j, t_mid / 10)
        x_mid += dx
    assert x_mid == pytest.approx(x_mid_closed, rel=1e-12)
    assert v_mid == pytest.approx((v0 + fc / b) * math.exp(-b * t_mid / j) - fc / b, abs=1e-12)

def test_stiction_holds_until_the_force_exceeds_the_friction():
    assert coulomb_step(0.0, 1.99, 1.0, 2.0, 1.0, 0.1) == (0.0, 0.0)
    v, _ = coulomb_step(0.0, 2.5, 1.0, 2.0, 1.0, 0.1)
    assert v == pytest.approx(0.5 * -math.expm1(-0.1), rel=1e-12)


def test_feedforward_round_trips_through_the_loss_terms():
    joint = JointMotors(NEO, 2, 8.0 / 0.0254, Losses(efficiency=0.9, free_current=True))
    target = Feedforward(ks=0.2, kv=1.1 * joint.kv_bound(), ka=0.35, kg=0.6)
    derived = from_feedforward(joint, target)
    back = feedforward(JointMotors(NEO, 2, joint.ratio, derived.losses), derived.inertia,
                       derived.gravity)
    for name in ("ks", "kv", "ka", "kg"):
        assert getattr(back, name) == pytest.approx(getattr(target, name), rel=1e-12)


def test_a_kv_faster_than_the_motors_is_refused():
    joint = JointMotors(NEO, 2, 8.0 / 0.0254, Losses(free_current=True))
    bound = joint.kv_bound()
    assert bound == pytest.approx(joint.ratio * NEO.nominal_voltage / NEO.free_speed, rel=1e-12)
    with pytest.raises(CharacterizationError, match="below"):
        from_feedforward(joint, Feedforward(ks=0.1, kv=0.98 * bound, ka=0.2))
