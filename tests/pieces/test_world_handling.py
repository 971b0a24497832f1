"""The intake and shooter on the field's real pieces (FieldPieces, not the in-memory stand-in of
the unit tests): preloaded pieces, pick-up from the carpet, shots that fly and are counted."""

from __future__ import annotations

import numpy as np
import pytest

from simserver.config.issues import ConfigError
from simserver.config.loader import default_config_text, loads
from simserver.models.pieces.types import FLIGHT, HELD
from simserver.world import World
from simserver.world.pieces import FieldPieces, field_pieces

HANDLING = """
[motors.roller]
type = "775pro"

[motors.indexer]
type = "775pro"

[mechanisms.intake]
type = "intake"
motor = "roller"
capacity = 4
preload = PRELOAD
reach = "0.2 m"

[mechanisms.shooter]
type = "shooter"
motor = "indexer"
feed = "intake"
speed = "6 m/s"
pitch = "50 deg"
z = "0.5 m"
feed_interval = "0.2 s"

[pieces]
layout = "none"

[pieces.extra.ahead]
type = "fuel"
x = "2.6 m"
y = "4 m"
"""


def world(preload: int = 3) -> tuple[World, FieldPieces]:
    cfg = loads(default_config_text() + HANDLING.replace("PRELOAD", str(preload)))
    w = World(cfg)
    pieces = field_pieces(cfg, {"": w})
    assert pieces is not None
    return w, pieces


def run(w: World, seconds: float) -> None:
    for _ in range(round(seconds / 0.02)):
        w.step(0.02)


def test_preloaded_pieces_are_held_from_the_start_and_shot() -> None:
    w, pieces = world()
    w.step(0.02)
    assert w.snapshot().mechanisms["intake"] == {"held": 3, "beam_break": True}
    preloaded = np.flatnonzero(pieces.field.state == HELD)
    assert len(preloaded) == 3
    w.set_motor("indexer", 1.0)
    run(w, 0.7)
    snap = w.snapshot()
    assert snap.mechanisms["shooter"]["shots"] == 3
    assert snap.pieces is not None and snap.pieces.shots == {"": 3}
    assert snap.pieces.picked_up == {"": 0}  # preloads are not picked up
    assert np.all(pieces.field.state[preloaded] != HELD)
    assert np.any(pieces.field.state[preloaded] == FLIGHT)
    w.reset()
    w.step(0.02)
    assert w.snapshot().mechanisms["intake"]["held"] == 3


def test_the_intake_takes_a_piece_off_the_carpet_and_the_shooter_shoots_it() -> None:
    w, pieces = world(preload=0)
    w.set_motor("roller", 1.0)
    w.set_motor("left", 0.3)
    w.set_motor("right", 0.3)
    run(w, 1.0)
    snap = w.snapshot()
    assert snap.mechanisms["intake"]["held"] == 1
    assert snap.pieces is not None and snap.pieces.picked_up == {"": 1}
    w.set_motor("indexer", 1.0)
    run(w, 0.3)
    assert w.snapshot().mechanisms["shooter"]["shots"] == 1
    assert pieces.field.state[0] == FLIGHT


def test_a_preload_beyond_the_capacity_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        loads(default_config_text() + HANDLING.replace("PRELOAD", "5"))
    assert any(i.path == "mechanisms.intake.preload" for i in err.value.issues), \
        err.value.issues
