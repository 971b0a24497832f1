"""Cameras on a robot see the field's pieces through the world: a detector camera reports the
loose pieces in front of it (not held ones), another robot hides them, and a detector
naming a piece type the field does not have is refused before anything runs."""

from __future__ import annotations

import math

import pytest

from simserver.config.issues import ConfigError
from simserver.config.loader import default_config_text, loads
from simserver.models.camera import DetectionFrame
from simserver.world import World
from simserver.world.arena import Arena
from simserver.world.pieces import field_pieces

CAMERA = """
[cameras.front]
protocol = "photonvision"
pipeline = "pieces"
x = "0.3 m"
z = "0.5 m"
"""


def pieces_text(positions: list[tuple[float, float]], extra: str = "") -> str:
    """The kitbot (at 2 m, 4 m, facing +x) with a detector camera and FUEL at ``positions``."""
    text = default_config_text() + '\n[pieces]\nlayout = "none"\n' + CAMERA + extra
    for i, (x, y) in enumerate(positions):
        text += f'\n[pieces.extra.f{i}]\ntype = "fuel"\nx = "{x} m"\ny = "{y} m"\n'
    return text


def last_frame(world: World, seconds: float = 0.5) -> DetectionFrame:
    frames = []
    for _ in range(round(seconds / 0.02)):
        world.step(0.02)
        frames += world.frames
    assert frames, "the camera delivered no frame"
    frame = frames[-1]
    assert isinstance(frame, DetectionFrame)
    return frame


def test_a_detector_camera_sees_the_loose_pieces_ahead_and_not_held_ones() -> None:
    cfg = loads(pieces_text([(4.0, 4.0), (4.0, 4.6), (0.8, 4.0)]))
    world = World(cfg)
    pieces = field_pieces(cfg, {"": world})
    assert pieces is not None
    frame = last_frame(world)
    seen = sorted(o.piece for o in frame.pieces)
    assert seen == [0, 1]  # the one behind the robot is not in view
    ahead = next(o for o in frame.pieces if o.piece == 0)
    # Straight ahead of the camera: yaw ≈ 0; the FUEL's centre is below the lens: pitch < 0.
    distance = 4.0 - (world.pose[0] + 0.3)
    assert ahead.class_id == 0 and abs(ahead.yaw) < 1.0
    expected_pitch = math.degrees(math.atan2(0.075 - 0.5, distance))
    assert ahead.pitch == pytest.approx(expected_pitch, abs=1.5)
    access = world.pieces
    assert access is not None
    access.take(1, (0.0, 0.0, 0.3))
    assert sorted(o.piece for o in last_frame(world).pieces) == [0]


def test_another_robot_hides_the_pieces_behind_it() -> None:
    cfg = loads(pieces_text([(5.0, 4.0)]))
    other = loads(default_config_text().replace('start = { x = "2 m", y = "4 m"',
                                                'start = { x = "3.5 m", y = "4 m"'))
    world, blocker = World(cfg), World(other)
    pieces = field_pieces(cfg, {"": world, "other": blocker})
    assert pieces is not None
    arena = Arena({"": world, "other": blocker}, 0.2, 0.3)
    frames = []
    for _ in range(25):
        arena.step(0.02)
        frames += world.frames
    assert frames and not frames[-1].pieces  # type: ignore[attr-defined]
    alone = World(cfg)
    field_pieces(cfg, {"": alone})
    assert [o.piece for o in last_frame(alone).pieces] == [0]


def test_a_detector_class_the_field_does_not_have_is_refused() -> None:
    text = pieces_text([]).replace('pipeline = "pieces"', 'pipeline = "pieces"\nclasses = "note"')
    with pytest.raises(ConfigError) as err:
        loads(text)
    assert any(i.path == "cameras.front.classes" and "note" in i.message
               for i in err.value.issues)
