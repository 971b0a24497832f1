"""The field's pieces in the world: robots push them, mechanisms take and release them, the
snapshot carries them, scores are counted; without [pieces] nothing changes."""

from __future__ import annotations

from importlib import resources
from typing import NamedTuple

import numpy as np
import pytest

from simserver.config.loader import default_config_text, loads
from simserver.field.gamepieces import Exit, Placement, season_piece_types, starting_layout
from simserver.io.scripted import load_script
from simserver.models.pieces.floor import circle_polygon
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import FLIGHT, GONE, HELD, LOOSE, PieceType
from simserver.runs.session import RunOptions, Session
from simserver.world import World
from simserver.world.arena import Arena
from simserver.world.pieces import FieldPieces, field_pieces

BALL_TYPE = """
[pieces.types.ball]
shape = "sphere"
radius = "7.5 cm"
height = "15 cm"
mass = "0.215 kg"
restitution = 0.6
friction = 0.7
rolling = 0.03
drag_coefficient = 0.47
drag_area = "0.0177 m^2"
class_id = 0
"""


def with_pieces(positions: list[tuple[float, float]], extra: str = "") -> str:
    """The kitbot config with [pieces] (no season layout) and balls at ``positions``."""
    text = default_config_text() + '\n[pieces]\nlayout = "none"\n' + extra + BALL_TYPE
    for i, (x, y) in enumerate(positions):
        text += f'\n[pieces.extra.b{i}]\ntype = "ball"\nx = "{x} m"\ny = "{y} m"\n'
    return text


def world_with_pieces(positions: list[tuple[float, float]]) -> tuple[World, FieldPieces]:
    cfg = loads(with_pieces(positions))
    world = World(cfg)
    pieces = field_pieces(cfg, {"": world})
    assert pieces is not None
    return world, pieces


def drive(world: World, duty: float, seconds: float) -> None:
    world.set_motor("left", duty)
    world.set_motor("right", duty)
    for _ in range(round(seconds / 0.02)):
        world.step(0.02)


def test_without_pieces_the_world_is_unchanged() -> None:
    """No [pieces]: no pieces object, no robot.pieces, no snapshot pieces."""
    cfg = loads(default_config_text())
    world = World(cfg)
    assert field_pieces(cfg, {"": world}) is None
    assert world.pieces is None and world.field_pieces is None
    drive(world, 0.5, 0.2)
    assert world.snapshot().pieces is None
    off = loads(with_pieces([(3.0, 4.0)]).replace("[pieces]\n", "[pieces]\nenabled = false\n"))
    assert field_pieces(off, {"": World(off)}) is None


def test_robot_drives_through_pieces_pushing_them() -> None:
    """A kitbot driving at a row of balls pushes them ahead; none stays inside its outline,
    and the robot is slowed (it pays the momentum) compared with an empty field."""
    balls = [(3.5, 4.0 + dy) for dy in (-0.3, -0.15, 0.0, 0.15, 0.3)]
    world, pieces = world_with_pieces(balls)
    empty = World(loads(default_config_text()))
    start = pieces.field.pos.copy()
    for w in (world, empty):
        drive(w, 0.6, 1.5)
    moved = pieces.field.pos[:, 0] - start[:, 0]
    assert (moved > 0.2).sum() >= 3
    assert world.pose[0] < empty.pose[0]
    x, y, heading = world.pose
    c, s = np.cos(heading), np.sin(heading)
    poly = np.array([(x + px * c - py * s, y + px * s + py * c) for px, py in world.polygon])
    depth, _, _ = circle_polygon(pieces.field.pos[:, 0], pieces.field.pos[:, 1],
                                 pieces.field.radius, poly)
    assert depth.max() < 0.02
    snap = world.snapshot().pieces
    assert snap is not None
    assert "ball" in snap.types and snap.pose.shape == (5, 6)
    assert np.array_equal(snap.pose[:, :3], pieces.field.pos)


def test_mechanism_takes_carries_and_releases() -> None:
    """Through robot.pieces: find a ball in an intake zone, take it (counted), it rides with
    the robot in the snapshot, carry moves it, release into the air is a shot, on the carpet
    it rolls away."""
    world, pieces = world_with_pieces([(2.6, 4.0), (2.6, 4.5), (6.0, 6.0)])
    access = world.pieces
    assert access is not None
    zone = [(0.35, -0.3), (0.8, -0.3), (0.8, 0.3), (0.35, 0.3)]  # ahead of the bumper
    assert access.loose_in(zone, 0.3) == [0]
    assert access.take(0, (0.0, 0.0, 0.3)) == "ball"
    assert access.kind(1) == "ball"
    with pytest.raises(ValueError):
        access.take(0, (0.0, 0.0, 0.3))
    with pytest.raises(ValueError):
        access.release(1, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    with pytest.raises(ValueError):
        access.kind(99)
    world.set_motor("left", -0.4)
    world.set_motor("right", 0.4)
    for _ in range(25):
        world.step(0.02)
    snap = world.snapshot().pieces
    assert snap is not None
    x, y, heading = world.pose
    assert snap.state[0] == HELD and snap.holder[0] == "" and snap.holder[1] == "-"
    assert snap.pose[0, :3] == pytest.approx((x, y, 0.3))
    access.carry(0, (0.2, 0.1, 0.5))
    snap = world.snapshot().pieces
    assert snap is not None
    c, s = np.cos(heading), np.sin(heading)
    assert snap.pose[0, :3] == pytest.approx((x + 0.2 * c - 0.1 * s, y + 0.2 * s + 0.1 * c,
                                              0.5))
    assert snap.pose[0, 5] == pytest.approx(heading)
    access.release(0, (x, y, 0.6), (3.0, 0.0, 4.0))
    assert pieces.field.state[0] == FLIGHT
    assert access.take(1, (0.0, 0.0, 0.2)) == "ball"
    access.release(1, (4.0, 2.0, 0.075), (1.0, 0.0, 0.0))
    assert pieces.field.state[1] == LOOSE
    snap = world.snapshot().pieces
    assert snap is not None
    assert snap.picked_up == {"": 2} and snap.shots == {"": 1}
    world.zero_inputs()
    for _ in range(200):  # it bounces off the hub and then on the carpet before it rolls
        world.step(0.02)
    assert pieces.field.state[0] == LOOSE
    world.reset()
    snap = world.snapshot().pieces
    assert snap is not None
    assert snap.picked_up == {"": 0} and np.all(snap.state == LOOSE)
    assert snap.pose[0, :2] == pytest.approx((2.6, 4.0))


def test_arena_robots_share_the_pieces() -> None:
    """Two robots in an arena push the same pieces; the main robot's snapshot carries them,
    the other's does not; holders are named."""
    cfg = loads(with_pieces([(3.5, 4.0), (12.0, 4.0)]))
    other_cfg = loads(default_config_text().replace('start = { x = "2 m", y = "4 m"',
                                                    'start = { x = "13.5 m", y = "4 m"'))
    main, other = World(cfg), World(other_cfg)
    assert other.pose[0] == pytest.approx(13.5)
    pieces = field_pieces(cfg, {"": main, "opponent": other})
    assert pieces is not None
    arena = Arena({"": main, "opponent": other}, 0.2, 0.3)
    for w, duty in ((main, 0.6), (other, -0.6)):
        w.set_motor("left", duty)
        w.set_motor("right", duty)
    start = pieces.field.pos.copy()
    for _ in range(75):
        arena.step(0.02)
    assert pieces.field.pos[0, 0] > start[0, 0] + 0.2
    assert pieces.field.pos[1, 0] < start[1, 0] - 0.2
    assert other.snapshot().pieces is None
    opp = other.pieces
    assert opp is not None
    opp.take(1, (0.0, 0.0, 0.3))
    snap = main.snapshot().pieces
    assert snap is not None
    assert snap.holder == ("-", "opponent") and snap.picked_up == {"": 0, "opponent": 1}
    arena.reset()
    assert np.all(pieces.field.state == LOOSE)


class FakeFlightEvents(NamedTuple):
    landed: np.ndarray
    scored: np.ndarray
    out: np.ndarray


class GoalEverything:
    """A stand-in for part 2's Flight (not built yet): every flying piece enters goal 0 at
    once."""

    def step(self, kind: np.ndarray, pos: np.ndarray, vel: np.ndarray, spin: np.ndarray,
             dt: float) -> FakeFlightEvents:
        n = len(kind)
        return FakeFlightEvents(np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, bool))



BALL = PieceType("ball", "sphere", radius=0.075, height=0.15, mass=0.215, restitution=0.6,
                 friction=0.7, rolling=0.03, drag_coefficient=0.47, drag_area=0.0177,
                 class_id=0)


@pytest.mark.parametrize("returned", [False, True])
def test_scored_pieces_are_counted_and_removed_or_returned(returned: bool) -> None:
    """A shot that enters a goal counts for the goal's alliance and the goal; the piece is
    gone, or comes back at the goal's exit (several exits used in turn)."""
    world = World(loads(default_config_text()))
    exits = {"hub": [Exit(8.0, 1.0, 0.075, 1.0, 0.0, 0.0),
                     Exit(8.0, 7.0, 0.075, -1.0, 0.0, 0.0)]}
    FieldPieces({"": world}, {"ball": BALL},
                [Placement("ball", 2.6, 4.0), Placement("ball", 2.6, 4.4)],
                goals=[Goal("hub", "red", ((8.0, 3.0), (9.0, 3.0), (9.0, 4.0), (8.0, 4.0)),
                            bottom=1.5, top=1.8)], exits=exits if returned else None,
                flight=GoalEverything())
    access = world.pieces
    assert access is not None
    for piece in (0, 1):
        access.take(piece, (0.0, 0.0, 0.5))
        access.release(piece, (2.0, 4.0, 0.5), (5.0, 0.0, 5.0))
    world.step(0.02)
    snap = world.snapshot().pieces
    assert snap is not None
    assert snap.scores == {"blue": 0, "red": 2} and snap.goals == {"hub": 2}
    assert snap.shots == {"": 2}
    if returned:
        assert np.all(snap.state == LOOSE)
        assert sorted(snap.pose[:, 1].round(1).tolist()) != [4.0, 4.4]
        assert {round(float(y)) for y in snap.pose[:, 1]} == {1, 7}
    else:
        assert np.all(snap.state == GONE)


def test_season_layout_from_the_season_data() -> None:
    """layout = "season" places the 2026 season's starting FUEL (the season data), then the
    extra pieces; [pieces.types] overrides a season type's mass."""
    layout = starting_layout("2026")
    cfg = loads(default_config_text() + '\n[pieces]\nlayout = "season"\n[pieces.types.fuel]\n'
                'mass = "0.5 kg"\n[pieces.extra.spare]\ntype = "fuel"\nx = "1 m"\ny = "1 m"\n')
    world = World(cfg)
    pieces = field_pieces(cfg, {"": world})
    assert pieces is not None
    placed = len(layout) + 1
    pos = pieces.field.pos[:placed, :2].tolist()
    assert pos == [[p.x, p.y] for p in layout] + [[1.0, 1.0]]
    staged = pieces.field.state[placed:]  # the two outposts' 24 FUEL, off the field
    assert len(staged) == 48 and np.all(staged == GONE)
    assert np.all(pieces.field.state[:placed] == LOOSE)
    assert set(pieces.field.mass.tolist()) == {0.5}
    assert pieces.field.radius[0] == season_piece_types("2026")["fuel"].radius


def test_same_config_and_inputs_same_pieces() -> None:
    """Determinism through the world: identical runs give identical piece arrays."""
    balls = [(3.0 + 0.2 * i, 3.5 + 0.17 * j) for i in range(8) for j in range(6)]

    def run() -> np.ndarray:
        world, _ = world_with_pieces(balls)
        world.set_motor("left", 0.7)
        world.set_motor("right", 0.5)
        for _ in range(150):
            world.step(0.02)
        snap = world.snapshot().pieces
        assert snap is not None
        return snap.pose

    assert np.array_equal(run(), run())


def test_detectables_are_loose_and_flying_pieces() -> None:
    """What cameras may see: loose and flying pieces, not held ones."""
    world, pieces = world_with_pieces([(3.0, 3.0), (4.0, 4.0), (5.0, 5.0)])
    access = world.pieces
    assert access is not None
    access.take(1, (0.0, 0.0, 0.3))
    seen = pieces.detectables()
    assert seen.positions[:, :2].tolist() == [[3.0, 3.0], [5.0, 5.0]]
    assert seen.radius.tolist() == [0.075, 0.075] and seen.height.tolist() == [0.15, 0.15]
    assert seen.class_id.tolist() == [0, 0] and seen.sphere.tolist() == [True, True]


def test_scripted_run_drives_through_pieces_and_records() -> None:
    """A scripted session with [pieces]: the robot pushes the balls on its way (its final pose
    differs from the same run without them), the main snapshot carries them, and the same run
    twice ends the same."""
    def run(text: str) -> Session:
        cfg = loads(text)
        with resources.as_file(resources.files("simserver.data") / "s_curve.csv") as path:
            script = load_script(path, list(cfg.motors), [])
        session = Session(cfg, RunOptions(fast=True, duration=6.0, script=script))
        session.run()
        return session

    balls = [(3.0 + 0.2 * i, 3.6 + 0.2 * j) for i in range(5) for j in range(5)]
    with_balls, again = run(with_pieces(balls)), run(with_pieces(balls))
    without = run(default_config_text())
    assert with_balls.world.pose != without.world.pose
    assert with_balls.world.pose == again.world.pose
    snap = with_balls.world.snapshot().pieces
    assert snap is not None and snap.state.shape == (25,)
    moved = np.hypot(*(snap.pose[:, :2] - np.array(balls)).T)
    assert (moved > 0.1).sum() >= 5


def test_detectables_take_the_shape_from_the_type() -> None:
    """A cylinder as tall as it is wide is still boxed as a cylinder, not a ball: the
    silhouette comes from the piece type's shape, not from its proportions."""
    can = PieceType("can", "cylinder", radius=0.05, height=0.1, mass=0.2, restitution=0.3,
                    friction=0.5, rolling=0.05, drag_coefficient=0.8, drag_area=0.01,
                    class_id=3)
    world = World(loads(default_config_text()))
    pieces = FieldPieces({"": world}, {"ball": BALL, "can": can},
                         [Placement("ball", 3.0, 3.0), Placement("can", 4.0, 4.0)])
    seen = pieces.detectables()
    assert seen.sphere.tolist() == [True, False]
    assert seen.class_id.tolist() == [0, 3]
