"""The H-drive plugin through simserver's real loader and World (TOML → loads → World, the path
`simserver run` takes), against closed forms; its config checks; its registration by entry
point. No mocks: the plugin is found the way an installed plugin is."""

from __future__ import annotations

import math
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from simserver_hdrive import HDRIVE, HDrive, HDriveConfig

from simserver.config.loader import ConfigError, loads
from simserver.config.registry import registry, validate_type
from simserver.models.battery import Source
from simserver.models.motor import motor_by_name
from simserver.world import World

ROBOT = Path(__file__).with_name("hdrive.toml").read_text()
CHECKOUT = Path(__file__).resolve().parents[3]
V_OPEN = 12.5  # V, the test robot's battery
R_WHEEL = 2 * 0.0254  # m, 4 in wheels
TRACK = 22 * 0.0254  # m
START = (3.0, 2.0)  # m
SIDE_G, CENTER_G = 8.45, 10.0
CIM, NEO = motor_by_name("CIM"), motor_by_name("NEO")
IDEAL = ('resistance = "0.015 ohm"', 'resistance = "0 ohm"')


def robot(*edits: tuple[str, str], extra: str = "") -> str:
    """The test robot with ``old -> new`` line edits and ``extra`` TOML appended."""
    text = ROBOT
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text + extra


def world_of(*edits: tuple[str, str], extra: str = "") -> World:
    return World(loads(robot(*edits, extra=extra), source="hdrive.toml"))


def drive(world: World, seconds: float, left: float = 0.0, right: float = 0.0,
          center: float = 0.0) -> None:
    for _ in range(round(seconds / 0.01)):
        world.set_motor("left", left)
        world.set_motor("right", right)
        world.set_motor("center", center)
        world.step(0.01)


def free_speed(duty: float, kv: float, gearing: float) -> float:
    """Rim speed, m/s, of a motor at ``duty`` of the ideal battery through ``gearing``."""
    return duty * V_OPEN * kv * R_WHEEL / gearing


# --- physics against closed forms ------------------------------------------------------------


def test_center_wheel_alone_strafes_at_its_free_speed_with_no_forward_motion_or_turn():
    world = world_of(IDEAL)
    drive(world, 3.0, center=0.3)  # 18 time constants, 3 m short of the wall
    vx, vy, omega = world.chassis_speeds
    assert vy == pytest.approx(free_speed(0.3, NEO.kv, CENTER_G), rel=1e-6)
    assert abs(vx) < 1e-12 and abs(omega) < 1e-12
    x, y, heading = world.pose
    assert (x, heading) == (pytest.approx(START[0], abs=1e-12), pytest.approx(0.0, abs=1e-12))
    assert y > START[1] + 2.0  # moved left, sideways
    snap = world.snapshot()
    assert snap.drive["drive/center_speed"] == vy
    assert snap.drive["drive/hdrive_speeds"] == pytest.approx([0.0, 0.0, vy], abs=1e-12)


def test_equal_sides_drive_straight_with_no_strafe():
    world = world_of(IDEAL)
    drive(world, 5.0, left=0.5, right=0.5)
    vx, vy, omega = world.chassis_speeds
    assert vx == pytest.approx(free_speed(0.5, CIM.kv, SIDE_G), rel=1e-6)
    assert abs(vy) < 1e-12 and abs(omega) < 1e-12
    x, y, heading = world.pose
    assert x > START[0] + 5.0
    assert (y, heading) == (pytest.approx(START[1], abs=1e-12), pytest.approx(0.0, abs=1e-12))


def test_opposite_sides_spin_in_place_at_twice_the_rim_speed_over_the_track():
    world = world_of(IDEAL)
    drive(world, 3.0, left=-0.4, right=0.4)
    vx, vy, omega = world.chassis_speeds
    v = free_speed(0.4, CIM.kv, SIDE_G)
    assert omega == pytest.approx(2.0 * v / TRACK, rel=1e-6)  # CCW: right side forward
    assert abs(vx) < 1e-9 and abs(vy) < 1e-9
    x, y, heading = world.pose
    assert (x, y) == (pytest.approx(START[0], abs=1e-9), pytest.approx(START[1], abs=1e-9))
    assert heading > 10.0


def test_an_off_centre_strafe_wheel_yaws_the_robot_while_it_accelerates():
    # A push along +y ahead of the centre turns the robot CCW; once every wheel runs at its
    # free speed (sides at 0, braked) the turn has stopped.
    world = world_of(IDEAL, ('center_gearing = 10.0', 'center_gearing = 10.0\n'
                                                      'center_x = "10 in"'))
    drive(world, 0.05, center=0.3)
    assert world.chassis_speeds[2] > 0.05
    drive(world, 3.0, center=0.3)
    assert abs(world.chassis_speeds[2]) < 1e-4


def test_bus_voltage_is_solved_with_the_motor_load_through_the_battery_resistance():
    # One substep from rest, the centre motor at duty d, no other load: the bus is the
    # Thevenin source loaded by d·V/R, V = V_oc/(1 + R_bat·d²/R_motor).
    world = world_of(('[battery]', '[battery]\nbackground_current = "0 A"'),
                     ('tick = "10 ms"', 'tick = "5 ms"'))
    d, r_bat = 0.8, 0.015
    world.set_motor("center", d)
    world.step(0.005)
    bus = V_OPEN / (1.0 + r_bat * d * d / NEO.R)
    assert world.bus_voltage == pytest.approx(bus, rel=1e-12)
    assert world.applied_voltage["center"] == pytest.approx(d * bus, rel=1e-12)
    motor_speed = world.chassis_speeds[1] * CENTER_G / R_WHEEL
    stator = (d * bus - motor_speed / NEO.kv) / NEO.R
    assert world.motor_currents["center"] == pytest.approx(stator, rel=1e-12)
    assert world.battery.current == pytest.approx(stator * d, rel=1e-12)  # I·V/V_bus


def test_a_disabled_drivetrain_brakes_and_draws_nothing():
    # What the world passes during a brownout: every controller at neutral, whatever the duty.
    world = world_of()
    drive(world, 0.5, left=0.5, right=0.5, center=0.5)
    speeds = world.chassis_speeds
    world.begin_tick()
    bus, supply = world.drivetrain.substep(0.005, Source(V_OPEN, 0.015), False)
    assert (bus, supply) == (V_OPEN, 0.0)
    # Braked (the default neutral mode): the shorted motors carry braking current only, which
    # slows the robot and takes nothing from the battery.
    states = world.drivetrain.motor_states()
    assert all(volts == 0.0 and amps < 0.0 for amps, volts in states.values())
    assert all(0.0 < after < before for after, before in zip(world.chassis_speeds[:2],
                                                             speeds[:2], strict=True))


def test_each_motor_output_runs_through_its_controller():
    # Ramp: the output follows the command as a first-order lag (2 substeps of 5 ms, τ 0.2 s).
    world = world_of(('[motors.center]\ntype = "NEO"', '[motors.center]\ntype = "NEO"\n'
                                                       'ramp = "0.2 s"'))
    world.set_motor("center", 1.0)
    world.step(0.01)
    ramped = -math.expm1(-0.01 / 0.2)
    assert world.applied_voltage["center"] == pytest.approx(world.bus_voltage * ramped,
                                                            rel=1e-9)
    # Stator limit: the current stays at the limit from standstill (109 A without it).
    world = world_of(('[motors.center]\ntype = "NEO"', '[motors.center]\ntype = "NEO"\n'
                                                       'stator_limit = "20 A"'))
    world.set_motor("center", 1.0)
    world.step(0.01)
    assert 19.0 < world.motor_currents["center"] <= 20.0 + 1e-9
    # Inverted: positive duty strafes right.
    world = world_of(('[motors.center]\ntype = "NEO"', '[motors.center]\ntype = "NEO"\n'
                                                       'inverted = true'))
    drive(world, 0.5, center=0.5)
    assert world.chassis_speeds[1] < -0.5


def test_coasting_motors_leave_the_robot_rolling():
    coast = [(f'[motors.{m}]\ntype = "{t}"', f'[motors.{m}]\ntype = "{t}"\nneutral = "coast"')
             for m, t in (("left", "CIM"), ("right", "CIM"), ("center", "NEO"))]
    world = world_of(*coast)
    drive(world, 0.5, left=0.5, right=0.5, center=0.5)
    speeds = world.chassis_speeds
    drive(world, 0.5)
    assert world.chassis_speeds == speeds  # no force at all: it rolls on
    assert [amps for amps, _ in world.drivetrain.motor_states().values()] == [0.0, 0.0, 0.0]


def test_the_center_encoder_reads_the_strafe_wheel_travel():
    world = world_of(IDEAL, extra='\n[encoders.center_turns]\nmotor = "center"\n'
                                  'unit = "rotations"\nmount = "motor"\n')
    drive(world, 2.0, center=0.5)
    snap = world.snapshot()
    travel = world.pose[1] - START[1]
    assert snap.encoders["center"] == (pytest.approx(travel, rel=1e-12),
                                       pytest.approx(world.chassis_speeds[1], rel=1e-12))
    turns, _ = snap.encoders["center_turns"]
    assert turns == pytest.approx(travel / (2 * math.pi * R_WHEEL) * CENTER_G, rel=1e-12)
    assert snap.drive_log["drive/hdrive_distances"] == pytest.approx([0.0, 0.0, travel],
                                                                     abs=1e-12)


def test_strafing_into_the_wall_stops_there_and_the_wheel_travel_follows_the_push_back():
    world = world_of()
    drive(world, 4.0, center=-1.0)
    _, y, _ = world.pose
    assert y == pytest.approx(14 * 0.0254, abs=1e-3)  # half the 28 in width from the wall
    assert world.wall_hits >= 1
    travel = world.snapshot().encoders["center"][0]
    assert travel == pytest.approx(y - START[1], abs=1e-9)


def test_reset_puts_the_robot_back_at_rest_with_the_encoder_at_zero():
    world = world_of()
    drive(world, 1.0, left=0.3, right=0.5, center=0.4)
    world.reset()
    snap = world.snapshot()
    assert world.pose == (START[0], START[1], 0.0)
    assert world.chassis_speeds == (0.0, 0.0, 0.0)
    assert snap.encoders["center"] == (0.0, 0.0)
    assert snap.drive_log["drive/hdrive_distances"] == [0.0, 0.0, 0.0]


def test_the_world_is_deterministic():
    def trace() -> list:
        world, out = world_of(), []
        for left, right, center in ((0.5, 0.3, 0.2), (-0.4, 0.6, -0.8), (0.0, 0.0, 1.0)):
            for _ in range(50):
                drive(world, 0.01, left, right, center)
                out.append((world.pose, world.snapshot().drive))
        return out

    assert trace() == trace()


def test_outputs_are_the_declared_ones_split_into_published_and_recorded():
    world = world_of()
    assert isinstance(world.drivetrain, HDrive)
    snap = world.snapshot()
    assert set(snap.drive) == {o.name for o in HDRIVE.outputs if o.nt}
    assert set(snap.drive_log) == {o.name for o in HDRIVE.outputs if not o.nt} != set()


# --- config checks ---------------------------------------------------------------------------


def errors_of(text: str) -> str:
    with pytest.raises(ConfigError) as exc:
        loads(text, source="hdrive.toml")
    return str(exc.value)


def test_config_values_are_si():
    cfg = loads(robot(('center_gearing = 10.0', 'center_gearing = 10.0\ncenter_x = "2 in"')))
    c = cfg.drivetrain
    assert isinstance(c, HDriveConfig) and cfg.drivetrain_type == "hdrive"
    assert (c.track_width, c.wheel_diameter, c.center_x) == pytest.approx(
        (TRACK, 2 * R_WHEEL, 2 * 0.0254))
    assert (c.left, c.right, c.center, c.gearing, c.center_gearing) == (
        "left", "right", "center", SIDE_G, CENTER_G)


def test_an_unknown_motor_names_the_key():
    msg = errors_of(robot(('center = "center"', 'center = "centre"')))
    assert "hdrive.toml: drivetrain.center: no motor named 'centre' in [motors]; did you " \
           "mean 'center'?" in msg


def test_one_motor_for_two_wheel_groups_is_refused():
    msg = errors_of(robot(('right = "right"', 'right = "left"')))
    assert "hdrive.toml: drivetrain.right: motor 'left' already drives drivetrain.left" in msg


def test_an_absolute_encoder_on_a_wheel_is_refused():
    msg = errors_of(robot(extra='absolute = true\n'))
    assert "encoders.center.absolute: absolute encoders measure rotating mechanisms" in msg
    assert "not the centre wheel of an H-drive ('center')" in msg


def test_a_mechanism_cannot_take_a_drivetrain_motor():
    msg = errors_of(robot(extra='\n[mechanisms.arm]\ntype = "flywheel"\nmotor = "center"\n'
                                  'moment_of_inertia = "0.01 kg*m^2"\n'))
    assert "mechanisms.arm.motor: motor 'center' already drives drivetrain.center" in msg


def test_unusual_geometry_loads_with_warnings():
    cfg = loads(robot(('center_gearing = 10.0', 'center_gearing = 10.0\ncenter_x = "20 in"'),
                      ('track_width = "22 in"', 'track_width = "30 in"')), source="hdrive.toml")
    assert "hdrive.toml: drivetrain.center_x: warning: 0.508 m puts the centre wheel outside " \
           "the robot's outline (length 0.762 m)" in cfg.warnings
    assert "hdrive.toml: drivetrain.track_width: warning: 0.762 m is wider than the robot " \
           "(0.7112 m)" in cfg.warnings


def test_a_side_gearing_far_from_usual_warns_once():
    cfg = loads(robot(('gearing = 8.45', 'gearing = 1.0')), source="hdrive.toml")
    assert cfg.warnings == ("hdrive.toml: drivetrain.gearing: warning: 1:1 gives the wheels a "
                            "free speed of 28 m/s, outside the usual 0.3 .. 8 m/s",)


# --- registration ----------------------------------------------------------------------------


def test_entry_point_is_installed_and_registered():
    eps = [ep for ep in entry_points(group="simserver.models") if ep.name == "hdrive"]
    assert len(eps) == 1
    assert eps[0].value == "simserver_hdrive:HDRIVE"
    assert eps[0].dist is not None and eps[0].dist.name == "simserver-hdrive"
    reg = registry()
    mt = reg.get("drivetrain", "hdrive")
    assert mt is not None, reg.failures
    assert mt.source == "simserver-hdrive" and mt.config is HDriveConfig
    assert reg.failure_for("hdrive") is None
    assert validate_type(HDRIVE) == ""


def test_motors_declares_three_wheel_joints():
    c = loads(ROBOT).drivetrain
    assert HDRIVE.motors is not None
    assert {m.motor: (m.key, m.joint) for m in HDRIVE.motors(c)} == {
        "left": ("left", "length"), "right": ("right", "length"),
        "center": ("center", "length")}


# --- docs/plugins.md quotes this plugin ------------------------------------------------------

EXCERPT = re.compile(r"^<!-- from: (?P<path>\S+) -->\n```[\w-]*\n(?P<body>.*?)^```[ \t]*$",
                     re.M | re.S)


def test_the_excerpts_in_the_drivetrain_plugin_docs_are_the_plugin_s_code():
    doc = CHECKOUT / "docs" / "plugins.md"
    if not doc.exists():
        pytest.skip("not inside the simserver checkout")
    excerpts = EXCERPT.findall(doc.read_text(encoding="utf-8"))
    assert len(excerpts) >= 4
    for path, body in excerpts:
        assert body in (CHECKOUT / path).read_text(encoding="utf-8"), f"{path}:\n{body}"
