"""The physical tank on tires with losses (models/tank_traction.py) against closed forms.

Constants from wpimath's DCMotor.CIM; the kitbot's figures (2 CIM per side, 10.71:1, 6 in
wheels, 60 lb, 26 in track). Joint terms as in models/losses.py's docstring: per side
k = η·n·(G/r)·Kt/R (N per V), back-EMF damping k·(G/r)/Kv, free-current damping
k·(G/r)·R·I_free/ω_free (N·s/m); the side moves half the robot plus its wheels' inertia seen at
the rim, M = m/2 + J_wheel/r², when the robot drives straight.
"""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from wpimath.system.plant import DCMotor

from simserver.cli import main
from simserver.config.loader import default_config_text, loads
from simserver.models.battery import Source
from simserver.models.differential import (
    GRAVITY,
    DifferentialDrive,
    DifferentialParams,
    PhysicalLongitudinal,
)
from simserver.models.losses import Losses
from simserver.models.motor import motor_by_name
from simserver.models.tank_traction import Traction, TractionDrive
from simserver.world import World
from simserver.world.drivetrains.differential import traction

LB, INCH = 0.45359237, 0.0254
MASS, TRACK, LENGTH, RADIUS, GEARING, N = 60 * LB, 26 * INCH, 32 * INCH, 3 * INCH, 10.71, 2
MOI = MASS / 12 * ((0.9 * LENGTH) ** 2 + TRACK**2)
WHEEL_J = 0.025  # kg·m², the config default
CIM = DCMotor.CIM(1)
RATIO = GEARING / RADIUS  # motor rad per m of rim travel


def force_per_volt(efficiency: float) -> float:
    return efficiency * N * RATIO * CIM.Kt / CIM.R


def damping(efficiency: float, free_current: bool) -> float:
    """Back-EMF plus free-current damping of a powered side, N·s/m."""
    k = force_per_volt(efficiency)
    free = k * RATIO * CIM.R * CIM.freeCurrent / CIM.freeSpeed if free_current else 0.0
    return k * RATIO / CIM.Kv + free


def side_mass(wheel_inertia: float = WHEEL_J) -> float:
    return MASS / 2 + wheel_inertia / RADIUS**2


def tank(friction: float, losses: Losses, wheel_inertia: float = WHEEL_J) -> TractionDrive:
    p = DifferentialParams(MASS, MOI, TRACK, RADIUS, GEARING, motor_by_name("CIM"), N)
    return TractionDrive(p, Traction(friction, (wheel_inertia,) * 2, (losses, losses)))


ROLLING = 0.02 * MASS * GRAVITY / 2  # N: the default rolling resistance on one side
DEFAULT = Losses(0.9, ROLLING, 0.0, True)


# --- traction --------------------------------------------------------------------------------


@pytest.mark.parametrize("friction", [0.5, 1.1, 2.0, 5.0])
@pytest.mark.parametrize("volts", [6.0, 12.0])
def test_launch_acceleration_is_the_lesser_of_mu_g_and_what_the_motors_give(friction, volts):
    h = 0.005
    drive = tank(friction, DEFAULT)
    drive.step(h, 1.0, 1.0, Source(volts, 0.0))
    # Motor-limited, from rest: M·dv/dt = k·V − F_c − B·v, exactly over the substep.
    b, mass = damping(0.9, True), side_mass()
    v_end = (force_per_volt(0.9) * volts - ROLLING) / b * -math.expm1(-b * h / mass)
    expected = min(friction * GRAVITY, v_end / h)
    assert drive.v_forward / h == pytest.approx(expected, rel=1e-9)
    assert drive.slipping == ((friction * GRAVITY < v_end / h),) * 2


def test_the_default_kitbot_launches_at_its_traction_limit_not_3_g():
    world = World(loads(default_config_text()))
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    world.step(0.005)
    # The ideal model (rigid traction) launched at 3.1 g; the tires hold 1.1 g (μ = 1.1).
    assert world.chassis_speeds[0] / 0.005 == pytest.approx(1.1 * GRAVITY, rel=1e-12)
    assert world.drivetrain.drive.slipping == (True, True)


def test_pushing_a_wall_spins_the_wheels_and_the_encoders_run_ahead():
    text = default_config_text().replace('resistance = "0.015 ohm"',
                                         'resistance = "0.015 ohm"\nbreaker = false', 1)
    world = World(loads(text))
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    world.step(5.0)  # against the red wall from about 3.5 s on
    drive = world.drivetrain.drive
    x, s, distance = drive.state.x, drive.state.s_left, world.distance
    world.step(1.0)
    assert drive.state.x == pytest.approx(x, abs=1e-9)  # pressed against the wall
    assert world.distance == pytest.approx(distance, abs=1e-6)  # the robot's, not the wheels'

    assert drive.slipping == (True, True)
    assert drive.state.s_left - s > 2.0  # the encoders count 2.5 m a second meanwhile
    # The wheels turn where the motors' force balances traction and rolling resistance:
    # k·V_bus − B·u = μ·N + F_c.
    u = ((force_per_volt(0.9) * world.bus_voltage - 1.1 * MASS * GRAVITY / 2 - ROLLING)
         / damping(0.9, True))
    assert drive.state.v_left == pytest.approx(u, rel=1e-9)
    assert drive.state.v_right == pytest.approx(u, rel=1e-9)
    print(f"against the wall: wheels {u:.3f} m/s, {world.motor_currents['left']:.1f} A a side")


# --- losses ----------------------------------------------------------------------------------


@pytest.mark.parametrize("efficiency", [1.0, 0.8])
def test_steady_speed_is_the_catalog_free_speed_whatever_the_efficiency(efficiency):
    drive = tank(5.0, Losses(efficiency, 0.0, 0.0, True))
    for _ in range(4000):  # 20 s: about 170 time constants
        drive.step(0.005, 1.0, 1.0, Source(CIM.nominalVoltage, 0.0))
    # With the free-current load an unloaded motor turns at the catalog free speed.
    assert drive.state.v_left == pytest.approx(CIM.freeSpeed / RATIO, rel=1e-9)
    assert drive.v_forward == pytest.approx(CIM.freeSpeed / RATIO, rel=1e-9)


def test_efficiency_scales_the_launch_force():
    h = 1e-6
    accel = []
    for efficiency in (1.0, 0.8):
        drive = tank(5.0, Losses(efficiency, 0.0, 0.0, False))
        drive.step(h, 1.0, 1.0, Source(12.0, 0.0))
        accel.append(drive.v_forward / h)
    assert accel[1] / accel[0] == pytest.approx(0.8, rel=1e-5)  # O(h·B/M) from the start


def test_coast_down_under_coulomb_and_viscous_friction_matches_the_closed_form():
    coulomb, viscous, v0, h = 20.0, 30.0, 3.0, 0.005
    drive = tank(1.1, Losses(1.0, coulomb, viscous, False))
    st = drive.state
    st.v_left = st.v_right = drive.vx = v0
    drive.coast = (True, True)  # windings open: only the losses slow it
    mass = side_mass()
    rate = viscous / mass
    t_stop = math.log(1.0 + viscous * v0 / coulomb) / rate
    for i in range(1, round(t_stop / h)):
        drive.step(h, 0.0, 0.0, Source(12.0, 0.0))
        t = i * h
        v = (v0 + coulomb / viscous) * math.exp(-rate * t) - coulomb / viscous
        assert drive.v_forward == pytest.approx(v, rel=1e-9)
    for _ in range(200):  # stopped, and stiction holds it
        drive.step(h, 0.0, 0.0, Source(12.0, 0.0))
        assert drive.v_forward == 0.0
        assert st.v_left == st.v_right == 0.0
    travel = ((v0 + coulomb / viscous) * -math.expm1(-rate * t_stop) / rate
              - coulomb / viscous * t_stop)
    assert st.x == pytest.approx(travel, abs=1e-4)  # the stopping substep is first order


def test_a_voltage_below_the_static_friction_does_not_move_the_robot():
    drive = tank(1.1, DEFAULT)
    volts = 0.9 * ROLLING / force_per_volt(0.9)
    for _ in range(100):
        drive.step(0.005, 1.0, 1.0, Source(volts, 0.0))
    assert drive.state.x == 0.0 and drive.state.v_left == 0.0


# --- SysId in --------------------------------------------------------------------------------

KS, KV, KA = 0.3, 3.3, 0.35  # V, V·s/m, V·s²/m


def characterized(ks: str = f"{KS} V", kv: str = f"{KV} V*s/m", ka: str = f"{KA} V*s^2/m",
                  more: str = "") -> str:
    return default_config_text().replace(
        "gearing = 10.71",
        f"gearing = 10.71\nfriction = 3.0\n\n[drivetrain.characterization]\nks = \"{ks}\"\n"
        f"kv = \"{kv}\"\nka = \"{ka}\"\n{more}", 1)


def characterized_tank() -> TractionDrive:
    cfg = loads(characterized())
    world = World(cfg)
    drive = world.drivetrain.drive
    assert isinstance(drive, TractionDrive)
    tr = traction(cfg.drivetrain, drive.params)
    return TractionDrive(drive.params, tr)


def steady_speed(volts: float) -> float:
    drive = characterized_tank()
    for _ in range(6000):
        drive.step(0.005, 1.0, 1.0, Source(volts, 0.0))
    return drive.v_forward


def speed_after(volts: float, h: float) -> float:
    drive = characterized_tank()
    drive.step(h, 1.0, 1.0, Source(volts, 0.0))
    return drive.v_forward


def test_sysid_constants_given_come_back_from_the_model():
    v1, v2 = steady_speed(4.0), steady_speed(8.0)
    kv = 4.0 / (v2 - v1)
    ks = 4.0 - kv * v1
    h = 1e-5  # initial acceleration, Richardson: error O(h²)
    a0 = 2.0 * speed_after(6.0, h) / h - speed_after(6.0, 2 * h) / (2 * h)
    ka = (6.0 - ks) / a0
    assert (ks, kv, ka) == pytest.approx((KS, KV, KA), rel=1e-6)
    # The launch did not slip (traction 3 g > (6 V − kS)/kA = 1.6 g).
    assert (6.0 - KS) / KA < 3.0 * GRAVITY


def test_sysid_maps_ka_to_wheel_inertia_keeping_the_robot_mass():
    cfg = loads(characterized())
    drive = World(cfg).drivetrain.drive
    tr = traction(cfg.drivetrain, drive.params)
    k = force_per_volt(0.9)
    assert drive.params.mass == pytest.approx(MASS)
    assert tr.wheel_inertia[0] == pytest.approx((KA * k - MASS / 2) * RADIUS**2, rel=1e-9)
    assert tr.losses[0].coulomb == pytest.approx(KS * k, rel=1e-9)  # replaces rolling resistance


REFUSED = [
    pytest.param({"kv": "2.5 V*s/m"}, "drivetrain.characterization.kv", "is below",
                 id="kv-faster-than-the-motors"),
    pytest.param({"ka": "0.2 V*s^2/m"}, "drivetrain.characterization.ka",
                 "half the robot's mass", id="ka-lighter-than-the-robot"),
    pytest.param({"more": "kg = \"1 V\"\n"}, "drivetrain.characterization.kg",
                 "no gravity load", id="kg-on-a-drivetrain"),
    pytest.param({"more": "\n[drivetrain.losses]\nideal = true\n"}, "drivetrain.losses.ideal",
                 "no losses to derive", id="with-ideal-losses"),
]


@pytest.mark.parametrize(("change", "key", "says"), REFUSED)
def test_check_refuses_a_characterization_no_tank_can_have(tmp_path, change, key, says):
    path = tmp_path / "robot.toml"
    path.write_text(characterized(**change))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2, result.stderr
    assert f"{path}: {key}: " in result.stderr and says in result.stderr, result.stderr


# --- ideal --------------------------------------------------------------------------------------


def test_ideal_losses_give_todays_rigid_model():
    text = default_config_text().replace(
        "gearing = 10.71", "gearing = 10.71\n\n[drivetrain.losses]\nideal = true", 1)
    drive = World(loads(text)).drivetrain.drive
    assert not isinstance(drive, TractionDrive)
    assert isinstance(drive.longitudinal, PhysicalLongitudinal)


def test_with_traction_to_spare_and_no_losses_the_tires_roll_like_the_rigid_model():
    # Same robot, huge μ (no skid either), tiny wheels' inertia, no losses: the rolling map
    # tends to today's exact one.
    p = DifferentialParams(MASS, MOI, TRACK, RADIUS, GEARING, motor_by_name("CIM"), N,
                           lateral_friction=3.0)
    tires = TractionDrive(p, Traction(100.0, (1e-9, 1e-9)))
    rigid = DifferentialDrive(p, PhysicalLongitudinal(p))
    source = Source(12.7, 0.015)
    for duties in [(1.0, 1.0)] * 100 + [(0.3, 0.9)] * 100 + [(-0.5, 0.6)] * 100:
        tires.step(0.005, *duties, source)
        rigid.step(0.005, *duties, source)
    for a, b in ((tires.state.x, rigid.state.x), (tires.state.y, rigid.state.y),
                 (tires.state.heading, rigid.state.heading)):
        assert a == pytest.approx(b, abs=1e-6)


# --- the box solve -------------------------------------------------------------------------------


def test_box_impulses_meet_coulombs_conditions_on_random_systems():
    import numpy as np

    from simserver.models.tank_traction import box_impulses

    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = 4
        m = rng.normal(size=(n, n))
        a = m @ m.T + 0.1 * np.eye(n)
        rhs = rng.normal(size=n) * 3.0
        limit = np.abs(rng.normal(size=n))
        limit[rng.random(n) < 0.2] = 0.0
        held = [float(x) for x in rng.integers(-1, 2, size=n)]  # any warm start
        p = np.array(box_impulses(tuple(map(tuple, a.tolist())), tuple(rhs.tolist()),
                                  tuple(limit.tolist()), held))
        slip = a @ p - rhs
        for j in range(n):
            assert abs(p[j]) <= limit[j] * (1 + 1e-12)
            if limit[j] == 0.0:
                continue
            if abs(p[j]) < limit[j] * (1 - 1e-9):  # sticking: no slip
                assert slip[j] == pytest.approx(0.0, abs=1e-9)
            else:  # sliding: the slip runs against the impulse
                assert p[j] * slip[j] <= 1e-9


def test_winding_inductance_keeps_the_ideal_inductive_model_and_check_says_so(tmp_path):
    from simserver.models.differential import InductiveLongitudinal

    text = default_config_text()
    for side in ("left", "right"):
        text = text.replace(f'[motors.{side}]\ntype = "CIM"\ncount = 2',
                            f'[motors.{side}]\ntype = "CIM"\ncount = 2\ninductance = "0.1 mH"')
    drive = World(loads(text)).drivetrain.drive
    assert isinstance(drive.longitudinal, InductiveLongitudinal)
    path = tmp_path / "robot.toml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "drivetrain.fidelity" in result.output + result.stderr
    assert "rigid traction" in result.output + result.stderr
