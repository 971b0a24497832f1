"""The `shooter` and `rotary` (turret) mechanism types: exit velocity from the flywheel's
speed, the hood and the turret (closed form), the flywheel's speed drop per shot (angular
momentum), the feed interval and threshold, config checks; through the real loader and World,
pieces through the PieceAccess protocol (tests/pieces/handling_pieces.py)."""

from __future__ import annotations

import itertools
import math

import pytest
from wpimath.geometry import Pose3d, Rotation3d

from simserver.config.loader import ConfigError, loads
from simserver.models.handling.shooter import Wheel
from simserver.models.mechanisms import MotorDrive, Rotary
from simserver.models.motor import motor_by_name
from simserver.world import World
from tests.pieces.handling_pieces import MemoryPieces

TOL = 1e-9
INCH = 0.0254
J = 0.004  # kg·m², the flywheel
M = 0.215  # kg, a piece
WHEEL_R = 2 * INCH

BASE = """
[robot]
length = "0.8 m"
width = "0.7 m"
start = { x = "4 m", y = "3 m", heading = "HEADING" }

[motors.roller]
type = "775pro"

[motors.indexer]
type = "775pro"

[motors.flymotor]
type = "Kraken X60"

[mechanisms.intake]
type = "intake"
motor = "roller"
capacity = 5
reach = "0.5 m"

[mechanisms.fly]
type = "flywheel"
motor = "flymotor"
moment_of_inertia = "0.004 kg*m^2"

[mechanisms.shooter]
type = "shooter"
motor = "indexer"
feed = "intake"
piece_mass = "0.215 kg"
feed_interval = "0.25 s"
"""

HOOD = """
[motors.hoodmotor]
type = "NEO"

[mechanisms.hood]
type = "arm"
motor = "hoodmotor"
gearing = 100
length = "0.2 m"
mass = "1 kg"
min_angle = "20 deg"
max_angle = "60 deg"
start_angle = "20 deg"
"""

TURRET = """
[motors.turn]
type = "NEO"

[mechanisms.turret]
type = "rotary"
motor = "turn"
gearing = 50
moment_of_inertia = "0.5 kg*m^2"
start_angle = "30 deg"
x = "-0.1 m"
y = "0.05 m"
"""


def loaded(shooter_keys: str, extra: str = "", heading: str = "0 deg", pieces: int = 3
           ) -> tuple[World, MemoryPieces]:
    """A robot at (4 m, 3 m) whose intake holds ``pieces`` pieces."""
    w = World(loads(BASE.replace("HEADING", heading) + shooter_keys + extra))
    access = MemoryPieces(lambda: w.pose)
    w.attach_pieces(access)
    h = math.radians(float(heading.split()[0]))
    for k in range(pieces):
        bx, by = 0.5, -0.2 + 0.1 * k
        access.add(4.0 + bx * math.cos(h) - by * math.sin(h), 3.0 + bx * math.sin(h)
                   + by * math.cos(h))
    w.set_motor("roller", 1.0)
    w.step(0.02)
    w.set_motor("roller", 0.0)
    assert w.snapshot().mechanisms["intake"]["held"] == pieces
    return w, access


def shoot_once(w: World) -> None:
    """One shot, the shooter stepped alone (no other mechanism acts in between)."""
    w.set_motor("indexer", 1.0)
    w.mechanisms["shooter"].step(0.25, w)


def spin(w: World, omega: float) -> None:
    """The flywheel turning at ``omega`` rad/s."""
    w.mechanisms["fly"].model.reset(velocity=omega)


def after_shot(omega: float, efficiency: float, ratio: float = 1.0) -> float:
    """The flywheel's speed after a shot, from conservation of angular momentum."""
    lever = WHEEL_R * ratio
    return omega * J / (J + efficiency * M * lever * lever)


# --- exit velocity ---------------------------------------------------------------------------


def test_exit_velocity_is_the_slowed_wheel_surface_speed_at_the_pitch_and_yaw():
    w, pieces = loaded('flywheel = "fly"\nwheel_radius = "2 in"\nefficiency = 0.6\n'
                       'pitch = "40 deg"\nyaw = "10 deg"\nx = "0.2 m"\ny = "0.1 m"\n'
                       'z = "0.6 m"\n', heading="30 deg")
    spin(w, 400.0)
    shoot_once(w)
    (shot,) = pieces.releases
    v = 0.6 * WHEEL_R * after_shot(400.0, 0.6)
    p, yaw = math.radians(40), math.radians(30 + 10)
    assert shot.velocity == pytest.approx(
        (v * math.cos(p) * math.cos(yaw), v * math.cos(p) * math.sin(yaw), v * math.sin(p)),
        abs=TOL)
    h = math.radians(30)
    assert shot.position == pytest.approx(
        (4 + 0.2 * math.cos(h) - 0.1 * math.sin(h), 3 + 0.2 * math.sin(h) + 0.1 * math.cos(h),
         0.6), abs=TOL)
    assert w.snapshot().mechanisms["shooter"] == {"shots": 1, "exit_speed": pytest.approx(v)}


def test_the_hood_angle_adds_to_the_pitch():
    w, pieces = loaded('flywheel = "fly"\nefficiency = 0.5\nhood = "hood"\n'
                       'pitch = "15 deg"\n', HOOD)
    spin(w, 300.0)
    shoot_once(w)
    v = 0.5 * WHEEL_R * after_shot(300.0, 0.5)
    p = math.radians(15 + 20)  # the hood rests on its lower stop at 20°
    assert pieces.releases[0].velocity == pytest.approx(
        (v * math.cos(p), 0.0, v * math.sin(p)), abs=TOL)


def test_the_turret_turns_the_direction_and_the_exit_point_about_its_axis():
    w, pieces = loaded('speed = "8 m/s"\nturret = "turret"\nyaw = "5 deg"\npitch = "50 deg"\n'
                       'x = "0.1 m"\ny = "0.05 m"\nz = "0.7 m"\n', TURRET)
    shoot_once(w)
    shot = pieces.releases[0]
    t, p = math.radians(30), math.radians(50)
    yaw = t + math.radians(5)
    assert shot.velocity == pytest.approx(
        (8 * math.cos(p) * math.cos(yaw), 8 * math.cos(p) * math.sin(yaw), 8 * math.sin(p)),
        abs=TOL)
    # Exit (0.1, 0.05) at turret angle 0, turned 30° about the axis (-0.1, 0.05).
    ex, ey = -0.1 + 0.2 * math.cos(t), 0.05 + 0.2 * math.sin(t)
    assert shot.position == pytest.approx((4 + ex, 3 + ey, 0.7), abs=TOL)


def test_a_moving_robot_adds_its_velocity_at_the_exit_point():
    drive = """
[motors.left]
type = "CIM"
count = 2

[motors.right]
type = "CIM"
count = 2
inverted = true

[drivetrain]
left = "left"
right = "right"
track_width = "0.6 m"
wheel_diameter = "6 in"
gearing = 10.71
"""
    w, pieces = loaded('speed = "5 m/s"\npitch = "0 deg"\nx = "0.3 m"\ny = "0.1 m"\n', drive)
    w.set_motor("left", 0.5)
    w.set_motor("right", -0.2)  # inverted: both forward, turning
    for _ in range(20):
        w.step(0.02)
    shoot_once(w)
    _, _, h = w.pose
    vx, vy, omega = w.velocity
    rx = 0.3 * math.cos(h) - 0.1 * math.sin(h)
    ry = 0.3 * math.sin(h) + 0.1 * math.cos(h)
    assert abs(omega) > 0.1 and math.hypot(vx, vy) > 0.5
    assert pieces.releases[0].velocity == pytest.approx(
        (5 * math.cos(h) + vx - omega * ry, 5 * math.sin(h) + vy + omega * rx, 0.0), abs=TOL)


# --- the flywheel's load ---------------------------------------------------------------------


@pytest.mark.parametrize(("efficiency", "ratio"), [(0.5, 1.0), (1.0, 1.0), (0.8, 1.5)])
def test_each_shot_takes_the_pieces_angular_momentum_out_of_the_flywheel(efficiency, ratio):
    w, pieces = loaded(f'flywheel = "fly"\nefficiency = {efficiency}\nwheel_ratio = {ratio}\n')
    omega = 450.0
    spin(w, omega)
    shoot_once(w)
    after = w.mechanisms["fly"].model.velocity
    v = math.hypot(*pieces.releases[0].velocity)
    # ΔL of the flywheel = the angular impulse the piece took through the wheel.
    assert J * (omega - after) == pytest.approx(M * v * WHEEL_R * ratio, rel=1e-12)
    assert after == pytest.approx(after_shot(omega, efficiency, ratio), rel=1e-12)
    assert v == pytest.approx(efficiency * WHEEL_R * ratio * after, rel=1e-12)


def test_the_flywheel_drops_by_the_same_factor_each_shot_and_recovers():
    w, _ = loaded('flywheel = "fly"\nefficiency = 0.5\n')
    spin(w, 400.0)
    speeds = [400.0]
    for _ in range(3):
        shoot_once(w)
        speeds.append(w.mechanisms["fly"].model.velocity)
    factor = after_shot(1.0, 0.5)
    assert [b / a for a, b in itertools.pairwise(speeds)] == pytest.approx(
        [factor] * 3, rel=1e-12)
    w.set_motor("flymotor", 1.0)
    w.set_motor("indexer", 0.0)
    for _ in range(50):
        w.step(0.02)
    assert w.mechanisms["fly"].model.velocity > speeds[-1]  # the motor makes it up


def test_a_flywheel_at_rest_or_backwards_launches_nothing():
    assert Wheel(M, "fly", WHEEL_R).shot(0.0, J, M) == (0.0, 0.0)
    assert Wheel(M, "fly", WHEEL_R).shot(-100.0, J, M) == (0.0, 0.0)


def test_rotary_impulse_changes_only_the_speed_and_a_stop_holds_against_it():
    neo = MotorDrive(motor_by_name("NEO"), gearing=10.0)
    r = Rotary(neo, 0.01)
    r.reset(position=1.0, velocity=50.0)
    r.apply_impulse(-0.1)
    assert (r.position, r.velocity) == (1.0, pytest.approx(40.0, rel=1e-15))
    stopped = Rotary(neo, 0.01, start_angle=0.5, min_angle=-0.5, max_angle=0.5)
    stopped.step(0.005, 0.0)
    assert stopped.at_upper
    stopped.apply_impulse(+0.1)  # into the stop: nothing
    assert stopped.velocity == 0.0 and stopped.at_upper
    stopped.apply_impulse(-0.1)  # away from it: moves off
    assert stopped.velocity == pytest.approx(-10.0) and not stopped.at_upper


# --- feeding ---------------------------------------------------------------------------------


def test_the_indexer_feeds_one_piece_per_interval_first_taken_first():
    w, pieces = loaded('speed = "6 m/s"\n', pieces=3)
    first = [i for i, p in enumerate(pieces.pieces)]
    w.set_motor("indexer", 1.0)
    for _ in range(12):  # 0.24 s: not yet
        w.step(0.02)
    assert pieces.releases == []
    w.step(0.02)  # 0.26 s
    assert len(pieces.releases) == 1
    for _ in range(25):  # to 0.76 s: two more, at 0.5 and 0.75 s
        w.step(0.02)
    assert [r.piece for r in pieces.releases] == first
    snap = w.snapshot()
    assert snap.mechanisms["shooter"]["shots"] == 3
    assert snap.mechanisms["intake"]["held"] == 0


@pytest.mark.parametrize("duty", [0.29, -1.0, 0.0])
def test_below_min_duty_the_indexer_feeds_nothing(duty):
    w, pieces = loaded('speed = "6 m/s"\nmin_duty = 0.3\n')
    w.set_motor("indexer", duty)
    for _ in range(50):
        w.step(0.02)
    assert pieces.releases == []
    assert w.snapshot().mechanisms["intake"]["held"] == 3


def test_the_indexer_draws_its_free_current():
    w, _ = loaded('speed = "6 m/s"\n')
    w.set_motor("indexer", 1.0)
    w.step(0.02)
    assert w.motor_currents["indexer"] == pytest.approx(motor_by_name("775pro").free_current)


# --- the turret ------------------------------------------------------------------------------


def test_the_turret_turns_to_its_stop_and_reports_its_component_pose():
    w = World(loads(BASE.replace("HEADING", "0 deg") + 'speed = "6 m/s"\n'
                    + TURRET + 'max_angle = "90 deg"\n'))
    turret = w.mechanisms["turret"]
    assert turret.components() == (Pose3d(-0.1, 0.05, 0.4, Rotation3d(0, 0, math.radians(30))),)
    w.set_motor("turn", 0.5)
    for _ in range(100):
        w.step(0.02)
    out = w.snapshot().mechanisms["turret"]
    assert out["at_upper"] and out["angle"] == pytest.approx(90.0)
    assert turret.components()[0].rotation().Z() == pytest.approx(math.pi / 2)


# --- config checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(("keys", "key", "words"), [
    ('speed = "6 m/s"\nfeed = "fly"\n', "feed", "holds game pieces"),
    ('flywheel = "intake"\n', "flywheel", "not a flywheel"),
    ('flywheel = "fly"\nspeed = "5 m/s"\n', "speed", "not used with a flywheel"),
    ('pitch = "30 deg"\n', "speed", "give the exit speed"),
    ('speed = "6 m/s"\nhood = "nothere"\n', "hood", "no mechanism named"),
    ('speed = "6 m/s"\nturret = "intake"\n', "turret", "not a rotary mechanism"),
])
def test_shooter_references_are_checked(keys, key, words):
    text = BASE.replace("HEADING", "0 deg").replace('feed = "intake"\n', "")
    if "feed =" not in keys:
        keys += 'feed = "intake"\n'
    with pytest.raises(ConfigError) as info:
        loads(text + keys)
    assert f"mechanisms.shooter.{key}" in str(info.value)
    assert words in str(info.value)
