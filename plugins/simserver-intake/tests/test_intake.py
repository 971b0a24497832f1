"""Tests of the intake plugin: geometry with a small plain RobotView, then the real path
(TOML → simserver.config.loader.loads → simserver.world.World), config errors and the entry
point. No mocks."""

from __future__ import annotations

import math
from importlib.metadata import entry_points

import numpy as np
import pytest
from simserver_intake import INTAKE, Intake, IntakeConfig, PieceStart
from simserver_intake.model import (
    G,
    box_distance,
    in_zone,
    push_out_candidates,
    to_field,
    to_robot,
)

from simserver.config.loader import ConfigError, default_config_text, loads
from simserver.config.registry import registry, validate_type
from simserver.world import World

TOL = 1e-6


# --- a plain RobotView ---------------------------------------------------------------------


class FakeRobot:
    """A RobotView with a pose moved at constant velocity: enough for the geometry."""

    def __init__(self, pose=(2.0, 4.0, 0.0), velocity=(0.0, 0.0, 0.0), outline=(0.8, 0.6),
                 field=(16.0, 8.0), duty=0.0):
        self.time = 0.0
        self.pose = pose
        self.velocity = velocity
        self.outline = outline
        self.field_size = field
        self.rng = np.random.default_rng(0)
        self.duty = duty

    def motor(self, name: str) -> float:
        assert name == "roller"
        return self.duty

    def solenoid(self, name: str) -> bool:
        return False

    def advance(self, dt: float) -> None:
        x, y, h = self.pose
        vx, vy, w = self.velocity
        self.pose = (x + vx * dt, y + vy * dt, h + w * dt)
        self.time += dt


def make_config(pieces=(), **kw) -> IntakeConfig:
    """An IntakeConfig in SI (the dataclass defaults are not the loader's: pass every value)."""
    values = dict(motor="roller", piece_radius=0.15, capacity=1, width=0.5, reach=0.2,
                  min_duty=0.3, eject_speed=2.0, friction=0.5)
    values.update(kw)
    return IntakeConfig(pieces={f"p{i}": PieceStart(x, y) for i, (x, y) in enumerate(pieces)},
                        **values)


def run(intake: Intake, robot: FakeRobot, seconds: float, dt: float = 0.005) -> None:
    for _ in range(round(seconds / dt)):
        robot.advance(dt)
        intake.step(dt, robot)


# --- geometry ------------------------------------------------------------------------------


def test_frames_round_trip():
    pose = (3.0, 2.0, 0.7)
    bx, by = to_robot(4.0, 2.5, pose)
    assert to_field(bx, by, pose) == pytest.approx((4.0, 2.5))
    assert to_robot(*to_field(1.0, 0.0, (0.0, 0.0, math.pi / 2)), (0.0, 0.0, math.pi / 2)) == \
        pytest.approx((1.0, 0.0))
    assert to_field(1.0, 0.0, (0.0, 0.0, math.pi / 2)) == pytest.approx((0.0, 1.0))


def test_zone_is_in_front_of_the_bumper_within_the_mouth():
    hl, width, reach = 0.4, 0.5, 0.2
    assert in_zone(0.4, 0.0, hl, width, reach)
    assert in_zone(0.6, 0.25, hl, width, reach)
    assert not in_zone(0.61, 0.0, hl, width, reach)      # beyond reach
    assert not in_zone(0.5, 0.26, hl, width, reach)      # beside the mouth
    assert not in_zone(0.39, 0.0, hl, width, reach)      # inside the robot
    assert not in_zone(-0.5, 0.0, hl, width, reach)      # behind


def test_box_distance():
    assert box_distance(0.5, 0.0, 0.4, 0.3) == pytest.approx(0.1)
    assert box_distance(0.7, 0.7, 0.4, 0.3) == pytest.approx(0.5)   # from the corner (0.3, 0.4)
    assert box_distance(0.0, 0.0, 0.4, 0.3) == pytest.approx(-0.3)  # inside: depth
    assert box_distance(0.35, 0.0, 0.4, 0.3) == pytest.approx(-0.05)


def test_push_out_from_outside_is_along_the_nearest_point_normal():
    # Overlapping the front face: straight out through it.
    (x, y, nx, ny), *_ = push_out_candidates(0.5, 0.1, 0.15, 0.4, 0.3)
    assert (x, y, nx, ny) == pytest.approx((0.55, 0.1, 1.0, 0.0))
    # Near the corner: along the diagonal from the corner, to exactly r from it.
    (x, y, nx, ny), *_ = push_out_candidates(0.45, 0.35, 0.15, 0.4, 0.3)
    assert math.hypot(x - 0.4, y - 0.3) == pytest.approx(0.15)
    assert (nx, ny) == pytest.approx((math.sqrt(0.5), math.sqrt(0.5)))
    # Not touching: nothing to do.
    assert push_out_candidates(0.56, 0.0, 0.15, 0.4, 0.3) == []


def test_push_out_from_inside_goes_through_the_nearest_face_and_lists_the_others():
    cands = push_out_candidates(0.0, 0.25, 0.15, 0.4, 0.3)
    assert cands[0] == pytest.approx((0.0, 0.45, 0.0, 1.0))  # left face is nearest
    assert len(cands) == 4
    for x, y, _, _ in cands:
        assert box_distance(x, y, 0.4, 0.3) == pytest.approx(0.15)
    moves = [math.hypot(x - 0.0, y - 0.25) for x, y, _, _ in cands]
    assert moves == sorted(moves)


# --- behaviour with a plain RobotView -------------------------------------------------------


def test_collects_a_piece_in_the_zone_when_the_roller_runs():
    intake = Intake("intake", make_config([(3.0, 4.0)]))
    robot = FakeRobot(velocity=(1.0, 0.0, 0.0), duty=1.0)
    run(intake, robot, 1.0)
    out = intake.outputs()
    assert out == {"held": 1, "beam_break": True, "pieces": []}


def test_rotated_robot_collects_along_its_own_heading():
    # Facing +y: the mouth points up the field's y axis.
    intake = Intake("intake", make_config([(5.0, 4.0 + 0.4 + 0.1), (5.6, 4.0)]))
    robot = FakeRobot(pose=(5.0, 4.0, math.pi / 2), duty=0.5)
    intake.step(0.005, robot)
    out = intake.outputs()
    assert out["held"] == 1
    assert out["pieces"] == [(5.6, 4.0, 0.0)]  # the one to the robot's right stays


def test_below_min_duty_nothing_is_collected_and_the_bumper_pushes():
    intake = Intake("intake", make_config([(3.0, 4.0)]))
    robot = FakeRobot(velocity=(1.0, 0.0, 0.0), duty=0.29)
    for _ in range(200):
        robot.advance(0.005)
        intake.step(0.005, robot)
        (px, py, _), = intake.outputs()["pieces"]
        assert box_distance(*to_robot(px, py, robot.pose), 0.4, 0.3) >= 0.15 - TOL
    assert intake.held == 0
    (px, py, _), = intake.outputs()["pieces"]
    assert px == pytest.approx(robot.pose[0] + 0.4 + 0.15, abs=0.01)  # bulldozed ahead
    assert py == pytest.approx(4.0)


def test_bumper_contact_is_inelastic():
    # A piece sliding into a robot at rest stops against the bumper ...
    intake = Intake("intake", make_config([(3.0, 4.0)]))
    intake.pieces[0].vx = -3.0
    robot = FakeRobot()
    run(intake, robot, 0.3)
    assert (intake.pieces[0].x, intake.pieces[0].vx) == pytest.approx((2.0 + 0.4 + 0.15, 0.0))
    # ... and a robot shoving a resting piece gives it the bumper's speed along the normal,
    # so it slides on when the robot stops.
    robot.velocity = (1.0, 0.0, 0.0)
    run(intake, robot, 0.1)
    assert intake.pieces[0].vx == pytest.approx(1.0, abs=0.03)  # friction, one substep
    robot.velocity = (0.0, 0.0, 0.0)
    x0 = intake.pieces[0].x
    run(intake, robot, 1.0)
    assert intake.pieces[0].x - x0 == pytest.approx(1.0 / (2 * 0.5 * G), abs=0.01)


def test_a_spinning_robot_pushes_pieces_out_and_never_holds_them_inside():
    # A piece lying against the side of a robot that spins on the spot.
    pieces = [(2.0, 4.0 + 0.3 + 0.15), (2.0 - 0.55, 4.0)]
    intake = Intake("intake", make_config(pieces))
    robot = FakeRobot(velocity=(0.0, 0.0, 4.0))
    for _ in range(400):
        robot.advance(0.005)
        intake.step(0.005, robot)
        for px, py, _ in intake.outputs()["pieces"]:
            assert box_distance(*to_robot(px, py, robot.pose), 0.4, 0.3) >= 0.15 - TOL


def test_capacity_is_respected_and_the_nearest_piece_is_taken_first():
    # Two pieces in the zone at once, room for one: the one nearer the bumper goes in.
    intake = Intake("intake", make_config([(2.0 + 0.58, 4.0), (2.0 + 0.45, 4.0)]))
    robot = FakeRobot(duty=1.0)
    intake.step(0.005, robot)
    assert intake.held == 1
    assert intake.outputs()["pieces"] == [pytest.approx((2.0 + 0.58 + 0.0, 4.0, 0.0), abs=0.3)]
    run(intake, robot, 0.5)
    assert intake.held == 1
    assert len(intake.outputs()["pieces"]) == 1


def test_eject_places_the_piece_in_front_and_it_slides_to_a_stop():
    cfg = make_config([(2.5, 4.0)])
    intake = Intake("intake", cfg)
    robot = FakeRobot(duty=1.0)
    intake.step(0.005, robot)
    assert intake.held == 1
    robot.duty = -1.0
    intake.step(0.005, robot)
    assert intake.outputs()["held"] == 0
    assert intake.outputs()["beam_break"] is False
    (px, py, heading), = intake.outputs()["pieces"]
    assert (px, py, heading) == pytest.approx((2.0 + 0.4 + 0.15, 4.0, 0.0))
    assert intake.pieces[0].vx == pytest.approx(2.0)
    robot.duty = 0.0
    run(intake, robot, 2.0)
    stop = 2.0**2 / (2 * 0.5 * G)  # v² / (2 μ g)
    assert intake.pieces[0].x == pytest.approx(2.55 + stop, abs=0.01)
    assert (intake.pieces[0].vx, intake.pieces[0].vy) == (0.0, 0.0)


def test_eject_speed_is_relative_to_a_moving_robot():
    intake = Intake("intake", make_config([(2.5, 4.0)]))
    robot = FakeRobot(velocity=(1.0, 0.0, 0.0), duty=1.0)
    intake.step(0.005, robot)
    robot.duty = -1.0
    intake.step(0.005, robot)
    assert intake.pieces[0].vx == pytest.approx(3.0)


def test_holding_reverse_ejects_one_piece_at_a_time_without_overlap():
    intake = Intake("intake", make_config([(2.5, 4.0), (2.6, 4.0), (2.5, 4.1)], capacity=3))
    robot = FakeRobot(duty=1.0)
    intake.step(0.005, robot)
    assert intake.held == 3
    robot.duty = -1.0
    intake.step(0.005, robot)
    assert (intake.held, len(intake.pieces)) == (2, 1)
    intake.step(0.005, robot)
    assert intake.held == 2  # the first has not cleared the mouth
    run(intake, robot, 3.0)
    assert intake.held == 0
    pts = intake.outputs()["pieces"]
    assert len(pts) == 3
    for i in range(3):
        for j in range(i + 1, 3):
            assert math.dist(pts[i][:2], pts[j][:2]) >= 2 * 0.15 - 1e-3


def test_a_clump_of_pieces_spreads_until_none_overlap():
    # 30 pieces dropped almost on top of each other, some across grid cell boundaries
    # (multiples of one diameter, 0.3 m) and some in the field corner; the robot is far away.
    spots = [(6.0 + 0.01 * (i % 6), 3.0 + 0.013 * (i // 6)) for i in range(24)]
    spots += [(0.16, 0.16), (0.2, 0.18), (0.17, 0.25), (6.0, 6.0), (6.0, 6.0), (5.99, 6.01)]
    intake = Intake("intake", make_config(spots))
    robot = FakeRobot(pose=(12.0, 4.0, 0.0))
    run(intake, robot, 2.0)
    pts = [(p.x, p.y) for p in intake.pieces]
    assert len(pts) == 30
    for i in range(len(pts)):
        assert 0.15 - TOL <= pts[i][0] <= 16.0 - 0.15 + TOL
        assert 0.15 - TOL <= pts[i][1] <= 8.0 - 0.15 + TOL
        for j in range(i + 1, len(pts)):
            assert math.dist(pts[i], pts[j]) >= 2 * 0.15 - 1e-3, (i, j)


def test_no_eject_when_the_mouth_is_against_a_wall():
    # Facing the x = 0 wall with the bumper 0.2 m from it: no room for a 0.3 m piece.
    intake = Intake("intake", make_config([(0.15, 4.0)]))
    robot = FakeRobot(pose=(0.6, 4.0, math.pi), duty=1.0)
    intake.step(0.005, robot)
    assert intake.held == 1
    robot.duty = -1.0
    run(intake, robot, 0.5)
    assert intake.held == 1 and intake.pieces == []


def test_walls_stop_pieces_at_the_perimeter():
    intake = Intake("intake", make_config([(2.5, 4.0)]))
    robot = FakeRobot(pose=(14.9, 7.0, 0.3), duty=1.0)
    intake.pieces[0].x, intake.pieces[0].y = 15.5, 7.5
    intake.pieces[0].vx, intake.pieces[0].vy = 5.0, 5.0
    robot.duty = 0.0
    for _ in range(400):
        robot.advance(0.005)
        intake.step(0.005, robot)
        p = intake.pieces[0]
        assert 0.15 - TOL <= p.x <= 16.0 - 0.15 + TOL
        assert 0.15 - TOL <= p.y <= 8.0 - 0.15 + TOL
    assert (intake.pieces[0].x, intake.pieces[0].y) == pytest.approx((16.0 - 0.15, 8.0 - 0.15))


def test_reset_puts_the_pieces_back_and_empties_the_intake():
    intake = Intake("intake", make_config([(2.5, 4.0), (6.0, 2.0)]))
    robot = FakeRobot(duty=1.0)
    intake.step(0.005, robot)
    assert intake.held == 1
    intake.reset()
    assert intake.outputs() == {"held": 0, "beam_break": False,
                                "pieces": [(2.5, 4.0, 0.0), (6.0, 2.0, 0.0)]}


def test_outputs_match_the_declared_outputs():
    intake = Intake("intake", make_config([(6.0, 2.0)]))
    out = intake.outputs()
    assert set(out) == {o.name for o in INTAKE.outputs}
    types = {o.name: o.type for o in INTAKE.outputs}
    assert types == {"held": "int", "beam_break": "boolean", "pieces": "field2d"}
    assert isinstance(out["held"], int) and not isinstance(out["held"], bool)
    assert isinstance(out["beam_break"], bool)
    assert all(len(pose) == 3 for pose in out["pieces"])


# --- the real path: TOML → loader → World --------------------------------------------------

ROLLER = """
[motors.roller]
type = "775pro"
"""


def config_text(intake: str = 'pieces.a = { x = "3.5 m", y = "4 m" }', roller: str = ROLLER,
                mechanism: str = 'type = "roller_intake"\nmotor = "roller"') -> str:
    """The bundled kitbot (start (2 m, 4 m), facing +x, 32 × 28 in) plus a roller and an
    intake."""
    return default_config_text() + roller + f"\n[mechanisms.intake]\n{mechanism}\n{intake}\n"


def world_of(**kw) -> World:
    return World(loads(config_text(**kw)))


def drive(world: World, seconds: float, left: float, right: float, roller: float,
          every_tick=None) -> None:
    for _ in range(round(seconds / 0.01)):
        world.set_motor("left", left)
        world.set_motor("right", right)
        world.set_motor("roller", roller)
        world.step(0.01)
        if every_tick is not None:
            every_tick(world)


def intake_out(world: World) -> dict:
    return world.snapshot().mechanisms["intake"]


def assert_outside_robot(world: World) -> None:
    hl, hw = world.outline[0] / 2, world.outline[1] / 2
    r = world.cfg.mechanisms["intake"].config.piece_radius
    for px, py, _ in intake_out(world)["pieces"]:
        assert box_distance(*to_robot(px, py, world.pose), hl, hw) >= r - TOL


def assert_on_field(world: World) -> None:
    fl, fw = world.field_size
    r = world.cfg.mechanisms["intake"].config.piece_radius
    for px, py, _ in intake_out(world)["pieces"]:
        assert r - TOL <= px <= fl - r + TOL and r - TOL <= py <= fw - r + TOL


def test_world_drives_into_a_piece_and_collects_it():
    world = world_of()
    assert intake_out(world) == {"held": 0, "beam_break": False, "pieces": [(3.5, 4.0, 0.0)]}
    drive(world, 2.0, 0.5, 0.5, 1.0)
    assert world.pose[0] > 3.5  # drove over where the piece was
    assert intake_out(world) == {"held": 1, "beam_break": True, "pieces": []}


def test_world_roller_off_pushes_the_piece_ahead_never_inside_the_robot():
    world = world_of()
    drive(world, 2.0, 0.5, 0.5, 0.0, every_tick=assert_outside_robot)
    out = intake_out(world)
    assert (out["held"], out["beam_break"]) == (0, False)
    (px, py, _), = out["pieces"]
    hl = world.outline[0] / 2
    r = world.cfg.mechanisms["intake"].config.piece_radius
    assert px == pytest.approx(world.pose[0] + hl + r, abs=0.02)  # bulldozed, not collected
    assert py == pytest.approx(4.0, abs=1e-6)


def test_world_bumper_corner_pushes_a_piece_aside():
    # Centre just beyond the robot's side (14 in), well outside the 20 in mouth: the bumper
    # corner catches it, even with the roller on.
    world = world_of(intake='pieces.a = { x = "3.5 m", y = "4.45 m" }')
    drive(world, 3.0, 0.5, 0.5, 1.0, every_tick=assert_outside_robot)
    out = intake_out(world)
    assert out["held"] == 0
    (px, py, _), = out["pieces"]
    bx, by = to_robot(px, py, world.pose)
    hw = world.outline[1] / 2
    r = world.cfg.mechanisms["intake"].config.piece_radius
    assert bx < -world.outline[0] / 2  # the robot drove past it
    assert by >= hw + r - 1e-3          # ... beside its path
    assert px < 4.0 < world.pose[0]     # knocked aside and left behind, not carried along


def test_world_capacity_one_takes_the_first_and_pushes_the_second():
    world = world_of(intake='pieces.a = { x = "3.5 m", y = "4 m" }\n'
                            'pieces.b = { x = "4.5 m", y = "4 m" }')
    drive(world, 3.0, 0.5, 0.5, 1.0, every_tick=assert_outside_robot)
    out = intake_out(world)
    assert (out["held"], out["beam_break"]) == (1, True)
    (px, _, _), = out["pieces"]
    assert px > 4.5  # the second one is being pushed ahead


def test_world_capacity_two_takes_both():
    world = world_of(intake='capacity = 2\npieces.a = { x = "3.5 m", y = "4 m" }\n'
                            'pieces.b = { x = "4.5 m", y = "4 m" }')
    drive(world, 3.0, 0.5, 0.5, 1.0)
    assert intake_out(world) == {"held": 2, "beam_break": True, "pieces": []}


def test_world_eject_puts_the_piece_back_in_front():
    world = world_of()
    drive(world, 1.5, 0.5, 0.5, 1.0)
    drive(world, 2.0, 0.0, 0.0, 0.0)  # coast to a stop
    assert intake_out(world)["held"] == 1
    drive(world, 0.05, 0.0, 0.0, -1.0)
    out = intake_out(world)
    assert (out["held"], out["beam_break"]) == (0, False)
    drive(world, 2.0, 0.0, 0.0, 0.0)
    (px, py, _), = intake_out(world)["pieces"]
    bx, by = to_robot(px, py, world.pose)
    hl = world.outline[0] / 2
    r = world.cfg.mechanisms["intake"].config.piece_radius
    stop = 2.0**2 / (2 * 0.5 * G)  # eject_speed² / (2 friction g)
    assert bx == pytest.approx(hl + r + stop, abs=0.02)
    assert by == pytest.approx(0.0, abs=1e-6)


def test_world_pieces_never_leave_the_field():
    # Facing the blue wall with a piece between: bulldoze it into the wall, then pin it there.
    world = world_of(intake='pieces.a = { x = "1 m", y = "4 m" }\n'
                            'pieces.b = { x = "1.2 m", y = "1 m" }')
    world.drivetrain.reset(2.0, 4.0, math.pi)

    def check(w: World) -> None:
        assert_on_field(w)
        assert_outside_robot(w)

    drive(world, 3.0, 0.6, 0.6, 0.0, every_tick=check)
    assert world.pose[0] < 0.5  # the robot reached the wall
    # Then spin against the wall and drive along it, ejecting nothing, pushing the pieces.
    drive(world, 1.0, 0.6, -0.6, 0.0, every_tick=assert_on_field)
    drive(world, 3.0, 0.6, 0.6, 0.0, every_tick=assert_on_field)
    assert len(intake_out(world)["pieces"]) == 2


def test_world_eject_toward_a_near_wall_stops_at_the_wall():
    # Stop 0.5 m from the red wall, eject at full speed: the piece stops at the wall.
    world = world_of(intake='eject_speed = "5 m/s"\npieces.a = { x = "14 m", y = "4 m" }')
    fl = world.field_size[0]
    world.drivetrain.reset(13.0, 4.0, 0.0)
    drive(world, 1.5, 0.3, 0.3, 1.0)
    assert intake_out(world)["held"] == 1
    drive(world, 3.0, 0.0, 0.0, 0.0)
    hl = world.outline[0] / 2
    r = world.cfg.mechanisms["intake"].config.piece_radius
    assert fl - world.pose[0] - hl > 2 * r  # room to eject
    drive(world, 2.0, 0.0, 0.0, -1.0, every_tick=assert_on_field)
    (px, _, _), = intake_out(world)["pieces"]
    assert px == pytest.approx(fl - r)


def test_world_inverted_roller_motor_intakes_on_negative_duty():
    world = world_of(roller='\n[motors.roller]\ntype = "775pro"\ninverted = true\n')
    drive(world, 2.0, 0.5, 0.5, -1.0)
    assert intake_out(world)["held"] == 1


def test_world_reset_restores_the_pieces():
    world = world_of()
    drive(world, 2.0, 0.5, 0.5, 1.0)
    assert intake_out(world)["held"] == 1
    world.reset()
    assert intake_out(world) == {"held": 0, "beam_break": False, "pieces": [(3.5, 4.0, 0.0)]}


def test_world_is_deterministic():
    def script() -> list:
        world = world_of(intake='capacity = 2\npieces.a = { x = "3.5 m", y = "4 m" }\n'
                                'pieces.b = { x = "3.2 m", y = "4.6 m" }')
        trace = []
        for left, right, roller in ((0.5, 0.3, 1.0), (0.4, 0.6, 0.0), (0.0, 0.0, -1.0),
                                    (0.5, 0.5, 0.0)):
            drive(world, 1.0, left, right, roller,
                  every_tick=lambda w: trace.append(w.snapshot().mechanisms["intake"]))
        return trace

    assert script() == script()


# --- config validation through the real loader -----------------------------------------------


def errors_of(text: str) -> str:
    with pytest.raises(ConfigError) as exc:
        loads(text, source="robot.toml")
    return str(exc.value)


def test_config_values_are_si():
    cfg = loads(config_text(intake='piece_radius = "7 in"\nwidth = "50 cm"\nreach = "9 in"\n'
                                   'eject_speed = "10 ft/s"\ncapacity = 3\n'
                                   'pieces.a = { x = "3.5 m", y = "4 m" }'))
    section = cfg.mechanisms["intake"]
    assert section.type == "roller_intake"
    c = section.config
    assert isinstance(c, IntakeConfig)
    assert c.piece_radius == pytest.approx(7 * 0.0254)
    assert c.width == pytest.approx(0.5)
    assert c.eject_speed == pytest.approx(3.048)
    assert (c.capacity, c.min_duty, c.friction) == (3, 0.3, 0.5)
    assert c.pieces == {"a": PieceStart(3.5, 4.0)}


def test_unknown_key_gets_did_you_mean():
    msg = errors_of(config_text(intake='piece_radus = "6 in"'))
    assert "robot.toml: mechanisms.intake.piece_radus: unknown key; did you mean " \
           "'piece_radius'?" in msg


def test_motor_naming_a_missing_motor_names_the_key():
    msg = errors_of(config_text(mechanism='type = "roller_intake"\nmotor = "rolr"'))
    assert "mechanisms.intake.motor: no motor named 'rolr' in [motors]; did you mean " \
           "'roller'?" in msg


def test_motor_is_required():
    msg = errors_of(config_text(mechanism='type = "roller_intake"'))
    assert "mechanisms.intake.motor: missing required key" in msg


def test_motor_already_driving_the_drivetrain_is_refused():
    msg = errors_of(config_text(mechanism='type = "roller_intake"\nmotor = "left"'))
    assert "mechanisms.intake.motor: motor 'left' already drives drivetrain.left" in msg


def test_type_typo_gets_did_you_mean():
    msg = errors_of(config_text(mechanism='type = "intak"\nmotor = "roller"'))
    assert "mechanisms.intake.type: unknown mechanism model type 'intak'; did you mean " \
           "'intake'?" in msg


def test_values_are_checked_with_units_and_ranges():
    msg = errors_of(config_text(intake='piece_radius = 6\ncapacity = 0\nmin_duty = 1.5\n'
                                       'eject_speed = "2 m"\npieces.a = { x = "3.5 m" }'))
    assert "mechanisms.intake.piece_radius: expected a length with its unit, such as " \
           "\"6 m\"" in msg
    assert "mechanisms.intake.capacity: must be" in msg
    assert "mechanisms.intake.min_duty: must be" in msg
    assert "mechanisms.intake.eject_speed:" in msg and "expected a speed" in msg
    assert "mechanisms.intake.pieces.a.y: missing required key" in msg


def test_reach_shorter_than_the_piece_radius_is_an_error():
    msg = errors_of(config_text(intake='reach = "4 in"'))
    assert "mechanisms.intake.reach: must be at least piece_radius" in msg


def test_pieces_outside_the_field_or_under_the_robot_are_errors():
    msg = errors_of(config_text(intake='pieces.out = { x = "20 m", y = "4 m" }\n'
                                       'pieces.edge = { x = "0.1 m", y = "4 m" }\n'
                                       'pieces.under = { x = "2.2 m", y = "4 m" }\n'
                                       'pieces.ok = { x = "5 m", y = "4 m" }'))
    assert "mechanisms.intake.pieces.out: (20 m, 4 m) is outside the field" in msg
    assert "mechanisms.intake.pieces.edge: (0.1 m, 4 m) is outside the field" in msg
    assert "mechanisms.intake.pieces.under: (2.2 m, 4 m) is under the robot" in msg
    assert "pieces.ok" not in msg


def test_piece_names_follow_the_config_name_rules():
    msg = errors_of(config_text(intake='pieces."a b" = { x = "5 m", y = "4 m" }'))
    assert "mechanisms.intake.pieces.a b: names may use letters" in msg


# --- registration --------------------------------------------------------------------------


def test_entry_point_is_installed_and_registered():
    eps = [ep for ep in entry_points(group="simserver.models") if ep.name == "roller_intake"]
    assert len(eps) == 1
    assert eps[0].value == "simserver_intake:INTAKE"
    assert eps[0].dist is not None and eps[0].dist.name == "simserver-intake"
    reg = registry()
    mt = reg.get("mechanism", "roller_intake")
    assert mt is not None
    assert mt.config is IntakeConfig
    assert mt.source == "simserver-intake"
    assert reg.failure_for("roller_intake") is None
    assert validate_type(INTAKE) == ""


def test_models_listing_documents_the_keys_and_topics():
    from simserver.docgen import model_types_text

    text = model_types_text()
    assert "roller_intake  (mechanism, [mechanisms.<name>], from simserver-intake)" in text
    assert "pieces.<name>.x" in text
    assert "/simserver/mechanisms/<name>/held (int" in text
    assert "/simserver/mechanisms/<name>/beam_break (boolean" in text


# --- with the field's own pieces (robot.pieces) ----------------------------------------------


class FieldPieces:
    """The PieceAccess protocol over a few loose pieces: enough to show what the intake asks
    of the field when it has game pieces of its own. Footprint: a circle of radius 0.15 m."""

    def __init__(self, robot: FakeRobot, spots):
        self.robot = robot
        self.where = {i: (x, y) for i, (x, y) in enumerate(spots)}
        self.held: dict[int, tuple] = {}
        self.released: list[tuple] = []

    def loose_in(self, zone, height):
        found = []
        for i, (x, y) in self.where.items():
            bx, by = to_robot(x, y, self.robot.pose)
            xs, ys = [p[0] for p in zone], [p[1] for p in zone]  # the intake's zone: a box
            dx = max(min(xs) - bx, 0.0, bx - max(xs))
            dy = max(min(ys) - by, 0.0, by - max(ys))
            if math.hypot(dx, dy) <= 0.15:
                found.append((math.hypot(dx, dy), i))
        return [i for _, i in sorted(found)]

    def take(self, piece, at):
        self.held[piece] = at
        del self.where[piece]
        return "ball"

    def carry(self, piece, at):
        self.held[piece] = at

    def release(self, piece, position, velocity, spin=(0.0, 0.0, 0.0)):
        del self.held[piece]
        self.where[piece] = position[:2]
        self.released.append((piece, position, velocity))

    def kind(self, piece):
        return "ball"


def test_with_the_fields_pieces_it_takes_and_releases_those_and_not_its_own():
    robot = FakeRobot(duty=1.0)  # at (2, 4) facing +x; front bumper at x = 2.4
    field = FieldPieces(robot, [(2.4 + 0.2, 4.0), (2.4 + 0.2 + 0.15 + 0.01, 4.0)])
    robot.pieces = field
    intake = Intake("intake", make_config([(2.5, 4.0)], reach=0.2))  # its own: not used
    run(intake, robot, 0.02)
    assert intake.outputs() == {"held": 1, "beam_break": True, "pieces": []}
    assert list(field.held) == [0]  # the second lies just beyond the zone
    robot.duty = -1.0
    run(intake, robot, 0.02)
    assert intake.outputs()["held"] == 0
    ((piece, position, velocity),) = field.released
    # Out at the middle of the mouth, a radius ahead of the bumper, at eject_speed.
    assert piece == 0
    assert position == pytest.approx((2.4 + 0.15, 4.0, 0.15))
    assert velocity == pytest.approx((2.0, 0.0, 0.0))
