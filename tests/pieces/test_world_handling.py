"""The intake and shooter on the field's real pieces (FieldPieces, not the in-memory stand-in of
the unit tests): preloaded pieces, pick-up from the carpet, shots that fly and are counted."""

from __future__ import annotations

import numpy as np
import pytest

from simserver.config.issues import ConfigError
from simserver.config.loader import default_config_text, loads
from simserver.models.motor import motor_by_name
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


KITBOT = """
[motors.launcher]
type = "CIM"

[motors.feeder]
type = "CIM"

[mechanisms.intake]
type = "intake"
motor = "launcher"
capacity = 10
preload = 3

[mechanisms.shooter]
type = "shooter"
motor = "feeder"
feed = "intake"
roller = "intake"
wheel_radius = "2 in"
efficiency = 0.5
pitch = "70 deg"
z = "0.5 m"

[pieces]
layout = "none"
"""


def test_a_kitbot_roller_takes_pieces_in_and_launches_them() -> None:
    """The 2026 KitBot: one roller (the intake's) launches what the feeder pushes into it, at
    efficiency × its surface speed, the roller running free at (V − I_free·R)·Kv; with the
    roller stopped a fed piece just drops."""
    cfg = loads(default_config_text() + KITBOT)
    w = World(cfg)
    assert field_pieces(cfg, {"": w}) is not None
    w.set_motor("launcher", 0.9)
    w.set_motor("feeder", 0.9)
    run(w, 0.3)
    snap = w.snapshot()
    assert snap.mechanisms["shooter"]["shots"] == 1
    spec = motor_by_name("CIM")
    volts = w.applied_voltage["launcher"]
    omega = (volts - spec.free_current * spec.R) * spec.kv
    expected = 0.5 * 0.0508 * omega
    assert snap.mechanisms["shooter"]["exit_speed"] == pytest.approx(expected, rel=1e-9)
    assert expected > 3.0
    w.set_motor("launcher", 0.0)
    run(w, 0.3)
    snap = w.snapshot()
    assert snap.mechanisms["shooter"]["shots"] == 2
    assert snap.mechanisms["shooter"]["exit_speed"] == 0.0


@pytest.mark.parametrize(("change", "key", "words"), [
    ('roller = "intake"\n', 'roller = "intake"\nspeed = "5 m/s"\n', "not used with a roller"),
    ('roller = "intake"\n', 'roller = "shooter"\n', "not an intake"),
])
def test_a_roller_shooter_is_checked(change: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        loads(default_config_text() + KITBOT.replace(change, key))
    assert any(i.path.startswith("mechanisms.shooter.") and words in i.message
               for i in err.value.issues), err.value.issues


def test_an_encoder_on_a_roller_reads_its_motor_shaft() -> None:
    """An encoder on the intake's roller motor (a SPARK's, so REV's simulation sees the roller
    turn) reads the free-running shaft: (V − I_free·R)·Kv, and its angle grows with it."""
    cfg = loads(default_config_text() + KITBOT + '\n[encoders.launcher]\nmotor = "launcher"\n'
                'unit = "rad"\nmount = "motor"\n')
    w = World(cfg)
    field_pieces(cfg, {"": w})
    w.set_motor("launcher", 0.6)
    run(w, 0.2)
    position, velocity = w.snapshot().encoders["launcher"]
    spec = motor_by_name("CIM")
    omega = (w.applied_voltage["launcher"] - spec.free_current * spec.R) * spec.kv
    assert velocity == pytest.approx(omega, rel=1e-9)
    assert position == pytest.approx(0.2 * omega, rel=0.1)  # it sped up as the battery sagged


def test_a_roller_is_no_hood() -> None:
    text = KITBOT.replace('pitch = "70 deg"', 'pitch = "70 deg"\nhood = "intake"')
    with pytest.raises(ConfigError) as err:
        loads(default_config_text() + text)
    assert any(i.path == "mechanisms.shooter.hood" for i in err.value.issues), err.value.issues
