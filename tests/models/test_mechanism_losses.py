"""Losses in the mechanisms (Elevator, Arm, Rotary) against closed forms, and SysId's constants
coming back from a mechanism built with :func:`from_feedforward`.

Closed forms, written here from the joint equation of simserver.models.losses
(J·dw/dt = k·V − B·w − F_c·sgn(w) + F): between events the speed is first order, w(t) =
w∞ + (w0 − w∞)·e^{−t·B/J}; the arm (nonlinear gravity) and the inductive drive are checked
against the adaptive Dormand–Prince reference of test_mechanisms.py with the friction's events
located by bisection.
"""

from __future__ import annotations

import math

import pytest

from simserver.models.losses import Feedforward, JointMotors, Losses, feedforward, from_feedforward
from simserver.models.mechanisms import Arm, Elevator, MotorDrive, Rotary
from simserver.models.motor import motor_by_name
from tests.models.test_mechanisms import DormandPrince

NEO = motor_by_name("NEO")
KRAKEN = motor_by_name("Kraken X60")
LOSSY = Losses(efficiency=0.85, coulomb=0.04, viscous=0.002, free_current=True)  # N·m


def first_order(beta: float, alpha: float, t: float, w0: float) -> tuple[float, float]:
    """Travel and speed after t of dw/dt = β − α·w from w0 (α > 0)."""
    w_inf = beta / alpha
    decay = -math.expm1(-alpha * t) / alpha
    return w_inf * t + (w0 - w_inf) * decay, w_inf + (w0 - w_inf) * math.exp(-alpha * t)


# --- flywheel ---------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [0.001, 0.02])
def test_flywheel_coast_down_under_coulomb_and_viscous_friction(h):
    """At 0 V (windings shorted through the controller) from 300 rad/s: the closed form's time
    to stop and angle turned, then at rest for good."""
    fly = Rotary(MotorDrive(NEO, 1, 2.0), 0.004, losses=LOSSY)
    j, b, fc, w0 = 0.004, fly.joint.damping, LOSSY.coulomb, 300.0
    t_stop = j / b * math.log1p(b * w0 / fc)
    angle = (w0 + fc / b) * j / b * -math.expm1(-b * t_stop / j) - fc / b * t_stop
    fly.reset(velocity=w0)
    t = 0.0
    while fly.velocity != 0.0:
        t_before, q_before, w_before = t, fly.position, fly.velocity
        fly.step(h, 0.0)
        t += h
    assert t_before < t_stop <= t
    q_mid, w_mid = first_order(-fc / j, b / j, t_before, w0)
    assert w_before == pytest.approx(w_mid, rel=1e-9, abs=1e-12)
    assert q_before == pytest.approx(q_mid, rel=1e-12)
    assert fly.position == pytest.approx(angle, rel=1e-12)
    for _ in range(100):
        fly.step(h, 0.0)
    assert fly.velocity == 0.0 and fly.position == pytest.approx(angle, rel=1e-12)
    assert fly.held


def test_flywheel_steady_speed_is_the_catalog_free_speed_through_the_gearing():
    """Efficiency costs torque, not speed; the free-current load slows the motors to the
    catalog free speed, drawing the catalog free current."""
    for losses in (Losses(efficiency=0.7, free_current=True),
                   Losses(efficiency=1.0, free_current=True)):
        fly = Rotary(MotorDrive(NEO, 2, 3.0), 0.01, losses=losses)
        fly.step(5.0, NEO.nominal_voltage)
        assert fly.velocity == pytest.approx(NEO.free_speed / 3.0, rel=1e-11)
        assert fly.current == pytest.approx(NEO.free_current, rel=1e-9)
    ideal = Rotary(MotorDrive(NEO, 2, 3.0), 0.01)
    ideal.step(5.0, NEO.nominal_voltage)
    assert ideal.velocity == pytest.approx(NEO.nominal_voltage * NEO.kv / 3.0, rel=1e-12)
    assert ideal.velocity > 1.01 * NEO.free_speed / 3.0


def test_flywheel_with_friction_steady_speed_and_spin_up():
    fly = Rotary(MotorDrive(NEO, 1, 2.0), 0.004, losses=LOSSY)
    k, b = fly.joint.force_per_volt, fly.joint.damping
    for h in (0.005, 0.02):
        fly.reset()
        fly.step(h, 6.0)
        q, w = first_order((6.0 * k - LOSSY.coulomb) / 0.004, b / 0.004, h, 0.0)
        assert fly.velocity == pytest.approx(w, rel=1e-12)
        assert fly.position == pytest.approx(q, rel=1e-12)
    fly.step(20.0, 6.0)
    assert fly.velocity == pytest.approx((6.0 * k - LOSSY.coulomb) / b, rel=1e-12)


def test_flywheel_with_inductance_coasts_down_like_the_reference():
    """The inductive drive: speed zero found on the exact (w, I) solution; compared with
    Dormand–Prince on J·w' = η·n·c·Kt·I − D·w − F_c, L·I' = −R·I − c·w/Kv."""
    inductance = 2e-4
    fly = Rotary(MotorDrive(NEO, 1, 2.0, inductance), 0.004, losses=LOSSY)
    kI, d = fly.joint.force_per_volt * NEO.R, fly.joint.loss_damping
    fly.reset(velocity=50.0, current=-10.0)

    def rhs(y):
        return [(kI * y[1] - d * y[0] - LOSSY.coulomb) / 0.004,
                (-NEO.R * y[1] - 2.0 * y[0] / NEO.kv) / inductance]

    t_stop, _, fired = DormandPrince(1e-12).advance(rhs, [50.0, -10.0], 5.0,
                                                   event=lambda y: y[0])
    assert fired
    t = 0.0
    while fly.velocity != 0.0:
        fly.step(0.005, 0.0)
        t += 0.005
    assert t - 0.005 < t_stop <= t
    fly.reset(velocity=50.0, current=-10.0)
    fly.step(t_stop * 0.999, 0.0)
    _, y_mid, _ = DormandPrince(1e-12).advance(rhs, [50.0, -10.0], t_stop * 0.999)
    assert fly.velocity == pytest.approx(y_mid[0], rel=1e-8)
    assert fly.current == pytest.approx(y_mid[1], rel=1e-8, abs=1e-9)


# --- elevator ---------------------------------------------------------------------------------


def lossy_elevator(**kw) -> Elevator:
    losses = Losses(efficiency=0.9, coulomb=30.0, viscous=20.0, free_current=True)  # N, N·s/m
    return Elevator(MotorDrive(KRAKEN, 2, 10.0), 8.0, 0.0254, 0.0, 1.2,
                    start_height=kw.pop("start", 0.5), losses=losses, **kw)


def test_elevator_held_by_stiction_between_kg_minus_ks_and_kg_plus_ks():
    lift = lossy_elevator()
    ff = feedforward(lift.joint, 8.0, lift.weight)
    for volts in (ff.kg - 0.999 * ff.ks, ff.kg, ff.kg + 0.999 * ff.ks):
        lift.reset()
        for _ in range(50):
            lift.step(0.02, volts)
        assert (lift.position, lift.velocity) == (0.5, 0.0)
        assert lift.current == pytest.approx(volts / KRAKEN.R, rel=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_elevator_moves_outside_the_stiction_band(sign):
    lift = lossy_elevator()
    j = lift.joint
    ff = feedforward(j, 8.0, lift.weight)
    volts = ff.kg + sign * 1.2 * ff.ks
    lift.step(0.1, volts)
    beta = (j.force_per_volt * volts - lift.weight - sign * j.coulomb) / 8.0
    q, w = first_order(beta, j.damping / 8.0, 0.1, 0.0)
    assert lift.velocity * sign > 0.0
    assert lift.velocity == pytest.approx(w, rel=1e-12)
    assert lift.position == pytest.approx(0.5 + q, rel=1e-12)


def test_elevator_thrown_up_stops_at_the_apex_and_stays_when_friction_holds_the_weight():
    """At 0 V from 1 m/s: decelerates under weight, friction and damping to the apex of the
    closed form, then stays (the weight, 78 N, is less than the friction, 90 N)."""
    losses = Losses(efficiency=0.9, coulomb=90.0, free_current=True)
    lift = Elevator(MotorDrive(KRAKEN, 2, 10.0), 8.0, 0.0254, 0.0, 1.2, start_height=0.2,
                    losses=losses)
    alpha = lift.joint.damping / 8.0
    w_inf = (-lift.weight - 90.0) / 8.0 / alpha
    t_apex = math.log((1.0 - w_inf) / -w_inf) / alpha
    apex = 0.2 + 1.0 / alpha + w_inf * t_apex
    lift.reset(velocity=1.0)
    for _ in range(100):
        lift.step(0.02, 0.0)
    assert lift.velocity == 0.0 and lift.held and not lift.at_upper
    assert lift.position == pytest.approx(apex, rel=1e-12)


def test_elevator_with_friction_leaves_the_upper_stop_and_falls_onto_the_lower_one():
    """Hard stops and friction together: pushed into the upper stop; held there by friction
    at a voltage in the stiction band; below it, it leaves, and its fall follows the closed
    form with friction opposing it until the lower stop."""
    lift = lossy_elevator(start=1.0)
    j = lift.joint
    ff = feedforward(j, 8.0, lift.weight)
    for _ in range(100):
        lift.step(0.02, 12.0)
    assert lift.at_upper and lift.position == 1.2
    for _ in range(50):
        lift.step(0.02, ff.kg - 0.9 * ff.ks)
    assert lift.at_upper and lift.position == 1.2
    lift.step(0.5, ff.kg - 1.01 * ff.ks)
    assert not lift.at_upper and lift.velocity < 0.0
    volts = -6.0
    beta = (j.force_per_volt * volts - lift.weight + j.coulomb) / 8.0
    alpha = j.damping / 8.0
    lift.reset(position=1.2)
    lift.step(0.1, volts)
    q, w = first_order(beta, alpha, 0.1, 0.0)
    assert lift.position == pytest.approx(1.2 + q, rel=1e-12)
    assert lift.velocity == pytest.approx(w, rel=1e-12)
    lo, hi = 0.0, 10.0  # arrival at the lower stop, on the closed form
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if first_order(beta, alpha, mid, 0.0)[0] > -1.2 else (lo, mid)
    lift.reset(position=1.2)
    lift.step(0.999 * hi, volts)
    assert not lift.at_lower
    lift.step(0.002 * hi, volts)
    assert lift.at_lower and lift.velocity == 0.0 and lift.position == 0.0


def test_elevator_at_rest_on_a_stop_needs_the_friction_overcome_to_leave():
    """On the lower stop: the stop holds any downward net force, friction holds an upward one
    up to F_c (kg + ks); above it, it leaves at once."""
    lift = lossy_elevator(start=0.0)
    ff = feedforward(lift.joint, 8.0, lift.weight)
    lift.step(0.5, ff.kg + 0.99 * ff.ks)
    assert lift.at_lower
    lift.step(0.5, -12.0)
    assert lift.at_lower
    lift.step(0.02, ff.kg + 1.01 * ff.ks)
    assert not lift.at_lower and lift.velocity > 0.0


def test_elevator_with_inductance_breaks_away_when_the_current_has_risen():
    """On the lower stop with L > 0, the net force grows as the current rises: it breaks away
    when η·n·c·Kt·I − weight reaches F_c, I(t) = (V/R)·(1 − e^{−Rt/L})."""
    inductance = 1e-3
    losses = Losses(efficiency=0.9, coulomb=30.0, free_current=True)
    lift = Elevator(MotorDrive(KRAKEN, 2, 10.0, inductance), 8.0, 0.0254, 0.0, 1.2,
                    losses=losses)
    kI = lift.joint.force_per_volt * KRAKEN.R
    volts = 2.0
    i_turn = (30.0 + lift.weight) / kI
    t_turn = -math.log1p(-i_turn * KRAKEN.R / volts) * inductance / KRAKEN.R
    lift.step(0.999 * t_turn, volts)
    assert lift.position == 0.0 and lift.at_lower
    lift.reset(current=0.0)
    lift.step(1.001 * t_turn, volts)
    assert lift.position > 0.0 and lift.velocity > 0.0


# --- arm --------------------------------------------------------------------------------------


def test_arm_swung_up_stops_at_its_apex_and_is_held_by_friction():
    """An arm thrown up at 0 V stops where the speed reaches zero (Dormand–Prince with the
    event located by bisection) and stays there: gravity's torque at the apex is below F_c."""
    losses = Losses(efficiency=0.9, coulomb=9.0, viscous=0.05, free_current=True)
    arm = Arm(MotorDrive(NEO, 1, 60.0), 0.6, 3.0, start_angle=0.3, losses=losses,
              min_angle=-math.pi, max_angle=math.pi)
    k, b, mgd = arm.joint.force_per_volt, arm.joint.damping, 3.0 * 9.80665 * 0.3
    j = arm.moment_of_inertia

    def rhs(y):
        return [y[1], (-b * y[1] - 9.0 - mgd * math.cos(y[0])) / j]

    _, y, fired = DormandPrince(1e-12).advance(rhs, [0.3, 3.0], 2.0, event=lambda y: y[1])
    assert fired and mgd * math.cos(y[0]) < 9.0
    arm.reset(velocity=3.0)
    for _ in range(100):
        arm.step(0.005, 0.0)
    assert arm.velocity == 0.0 and arm.held
    assert arm.position == pytest.approx(y[0], abs=1e-8)
    assert k > 0.0


def test_arm_at_a_stop_with_friction_and_breakaway_at_horizontal():
    losses = Losses(efficiency=0.9, coulomb=1.5, free_current=True)
    arm = Arm(MotorDrive(NEO, 1, 60.0), 0.6, 3.0, start_angle=0.0, losses=losses,
              min_angle=-1.0, max_angle=1.0)
    ff = feedforward(arm.joint, arm.moment_of_inertia, 3.0 * 9.80665 * 0.3)
    for volts in (ff.kg - 0.99 * ff.ks, ff.kg + 0.99 * ff.ks):
        arm.reset()
        arm.step(0.1, volts)
        assert (arm.position, arm.velocity) == (0.0, 0.0)
    arm.reset()
    arm.step(0.1, ff.kg + 1.01 * ff.ks)
    assert arm.velocity > 0.0
    for _ in range(100):
        arm.step(0.02, 12.0)
    assert arm.at_upper and arm.position == 1.0


# --- SysId in: the constants come back --------------------------------------------------------

GIVEN = {"elevator": Feedforward(ks=0.25, kv=9.0, ka=0.3, kg=0.45),
         "flywheel": Feedforward(ks=0.15, kv=0.04, ka=0.003, kg=0.0),
         "arm": Feedforward(ks=0.2, kv=1.3, ka=0.05, kg=0.6)}


def built(kind: str) -> Elevator | Rotary | Arm:
    ff = GIVEN[kind]
    if kind == "elevator":
        drive = MotorDrive(KRAKEN, 2, 10.0)
        joint = JointMotors(KRAKEN, 2, 10.0 / 0.0254, Losses(0.9, free_current=True))
        d = from_feedforward(joint, ff)
        return Elevator(drive, d.inertia, 0.0254, -1e3, 1e3, start_height=0.0,
                        losses=d.losses, weight=d.gravity)
    if kind == "flywheel":
        joint = JointMotors(NEO, 1, 1.5, Losses(0.9, free_current=True))
        d = from_feedforward(joint, ff)
        return Rotary(MotorDrive(NEO, 1, 1.5), d.inertia, losses=d.losses)
    joint = JointMotors(NEO, 1, 60.0, Losses(0.9, free_current=True))
    d = from_feedforward(joint, ff)
    return Arm(MotorDrive(NEO, 1, 60.0), 0.6, 3.0, moment_of_inertia=d.inertia,
               losses=d.losses, gravity_torque=d.gravity, start_angle=0.0)


def accel(m: Elevator | Rotary | Arm, q: float, w: float, volts: float) -> float:
    """Acceleration at (q, w) under volts, from a 1e-9 s step (error ~ rate·1e-9)."""
    h = 1e-9
    m.reset(position=q, velocity=w)
    m.step(h, volts)
    return (m.velocity - w) / h


def steady(m: Elevator | Rotary, volts: float) -> float:
    m.reset()
    m.step(60.0, volts)
    return m.velocity


def holding_band(m: Elevator | Arm) -> tuple[float, float]:
    """The voltages above and below which it starts moving from rest at 0 (m or rad), by
    bisection."""
    def moves(volts: float, sign: float) -> bool:
        m.reset(position=0.0)
        m.step(1e-3, volts)
        return m.velocity * sign > 0.0

    out = []
    for sign in (1.0, -1.0):
        still, moving = -12.0 * sign, 12.0 * sign
        for _ in range(60):
            mid = 0.5 * (still + moving)
            still, moving = (still, mid) if moves(mid, sign) else (mid, moving)
        out.append(0.5 * (still + moving))
    return out[0], out[1]


@pytest.mark.parametrize("kind", ["elevator", "flywheel"])
def test_linear_mechanisms_have_the_characterized_constants(kind):
    ff = GIVEN[kind]
    m = built(kind)
    w1, w2 = steady(m, 4.0), steady(m, 9.0)
    kv = 5.0 / (w2 - w1)
    assert kv == pytest.approx(ff.kv, rel=1e-6)
    assert 4.0 - kv * w1 - ff.kg == pytest.approx(ff.ks, rel=1e-6)
    a0 = accel(m, 0.0, 0.0, 6.0)
    assert (6.0 - ff.ks - ff.kg) / a0 == pytest.approx(ff.ka, rel=1e-6)
    if kind == "elevator":
        up, down = holding_band(m)
        assert 0.5 * (up + down) == pytest.approx(ff.kg, rel=1e-6)
        assert 0.5 * (up - down) == pytest.approx(ff.ks, rel=1e-6)


def test_arm_has_the_characterized_constants():
    """Accelerations at vertical (no gravity torque) give ks, kv, ka; the holding band at
    horizontal gives kg and ks."""
    ff = GIVEN["arm"]
    arm = built("arm")
    up = math.pi / 2
    a1, a2 = accel(arm, up, 0.0, 3.0), accel(arm, up, 0.0, 6.0)
    ka = 3.0 / (a2 - a1)
    assert ka == pytest.approx(ff.ka, rel=1e-6)
    assert 3.0 - ka * a1 == pytest.approx(ff.ks, rel=1e-6)
    a3 = accel(arm, up, 2.0, 6.0)
    assert (6.0 - ff.ks - ka * a3) / 2.0 == pytest.approx(ff.kv, rel=1e-6)
    hi, lo = holding_band(arm)
    assert 0.5 * (hi + lo) == pytest.approx(ff.kg, rel=1e-6)
    assert 0.5 * (hi - lo) == pytest.approx(ff.ks, rel=1e-6)
