"""Beam breaks: a switch with `trigger = "holding"` is pressed while its mechanism holds a game
piece. In the world and its snapshot, on the switch topic, through the loader's checks, and end
to end: a real RobotPy program reads it on a DIO through the bridge, in lock-step."""

from __future__ import annotations

import json

import pytest

from simserver.config.loader import ConfigError, load, loads
from simserver.contract import topics
from simserver.io.nt import Endpoint
from simserver.runs.session import RunOptions, Session
from simserver.world import World
from tests.e2e.robots import REPO, ROBOT_PORT, RobotProgram, config_with
from tests.pieces.handling_pieces import MemoryPieces

HANDLERBOT = REPO / "tests" / "e2e" / "handlerbot"

ROBOT = """
[robot]
length = "0.8 m"
width = "0.7 m"
start = { x = "4 m", y = "3 m" }

[motors.roller]
type = "775pro"

[motors.lift]
type = "NEO"

[mechanisms.intake]
type = "intake"
motor = "roller"

[mechanisms.lift]
type = "elevator"
motor = "lift"
gearing = 10
drum_radius = "1 in"
carriage_mass = "5 kg"
max_height = "1 m"
"""

BEAM = '\n[switches.beam]\nmechanism = "intake"\ntrigger = "holding"\n'


def test_a_holding_switch_is_pressed_while_the_intake_holds_a_piece():
    w = World(loads(ROBOT + BEAM))
    pieces = MemoryPieces(lambda: w.pose)
    w.attach_pieces(pieces)
    pieces.add(4.0 + 0.45, 3.0)
    w.step(0.02)
    assert w.snapshot().switches == {"beam": False}
    w.set_motor("roller", 1.0)
    w.step(0.02)
    snap = w.snapshot()
    assert snap.switches == {"beam": True}
    assert topics.sensor_values(snap)[topics.switch("beam")] is True  # the bridge's input
    assert topics.extra_values(snap)["/simserver/switches/beam"] is True  # NT
    w.set_motor("roller", -1.0)
    w.step(0.02)
    assert w.snapshot().switches == {"beam": False}


@pytest.mark.parametrize(("switch", "key", "words"), [
    ('mechanism = "lift"\ntrigger = "holding"\n', "mechanism", "holds no game pieces"),
    ('mechanism = "intake"\ntrigger = "holding"\nposition = "0.1 m"\n', "position",
     "has no position"),
    ('mechanism = "lift"\n', "position", "missing required key"),
    ('mechanism = "intake"\nposition = "0.1 m"\n', "mechanism", "no position to sense"),
])
def test_switch_triggers_are_checked(switch, key, words):
    with pytest.raises(ConfigError) as info:
        loads(ROBOT + "\n[switches.s]\n" + switch)
    assert f"switches.s.{key}" in str(info.value)
    assert words in str(info.value)


def test_a_limit_switch_still_senses_a_position():
    w = World(loads(ROBOT + '\n[switches.low]\nmechanism = "lift"\nposition = "0 m"\n'))
    assert w.snapshot().switches == {"low": True}


# --- end to end: a real robot program reads the beam break on a DIO ------------------------


@pytest.mark.robot
@pytest.mark.network
@pytest.mark.slow
def test_a_robot_program_reads_the_beam_break_on_its_dio_in_lockstep(tmp_path):
    cfg_path, _ = config_with(tmp_path, HANDLERBOT / "simserver.toml")
    log = tmp_path / "handlerbot.jsonl"
    robot = RobotProgram(HANDLERBOT, cfg_path, tmp_path, env={"HANDLERBOT_LOG": str(log)})
    try:
        robot.wait_ready()
        session = Session(load(cfg_path), RunOptions(
            fast=True, duration=2.0, endpoint=Endpoint("client", "localhost", ROBOT_PORT),
            enable="autonomous", lockstep=True, record=False, wait=30.0))
        pieces = MemoryPieces(lambda: session.world.pose)
        piece = pieces.add(4.0 + 0.45, 3.0)  # in the intake's zone, in front of the bumper
        session.world.attach_pieces(pieces)
        session.run()
        assert robot.wait_exit(15) == 0, robot.output()
    finally:
        robot.close()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows and not rows[0]["beam"] and rows[0]["beam_nc"]
    seen = next(i for i, r in enumerate(rows) if r["beam"])
    # The roller ran from the first period; the intake took the piece in that period's
    # substeps, and the robot program read the DIO the next period (lock-step: one period).
    assert rows[seen - 1]["duty"] == 0.8 and seen == 1, rows[:4]
    assert not rows[seen]["beam_nc"]  # the normally closed wiring reads false when broken
    out = next(i for i, r in enumerate(rows) if r["duty"] < 0)
    assert all(r["beam"] for r in rows[seen:out + 1])  # held while the roller stopped
    assert not rows[out + 1]["beam"] and rows[out + 1]["beam_nc"], rows[out:out + 3]
    (release,) = pieces.releases
    assert release.piece == piece
    assert release.velocity[0] == pytest.approx(2.0)  # eject_speed, straight ahead


@pytest.mark.robot
@pytest.mark.network
@pytest.mark.slow
def test_a_robot_program_reads_the_beam_break_over_halsim_ws(tmp_path):
    # robotpy-halsim-ws's server, as a Java or C++ program has it: no bridge, real time.
    cfg_path, _ = config_with(tmp_path, HANDLERBOT / "simserver.toml")
    log = tmp_path / "handlerbot.jsonl"
    robot = RobotProgram(HANDLERBOT, cfg_path, tmp_path, env={"HANDLERBOT_LOG": str(log)},
                         extension="ws-server")
    try:
        robot.wait_ready(60)
        session = Session(load(cfg_path), RunOptions(
            duration=2.5, endpoint=Endpoint("client", "localhost", ROBOT_PORT),
            enable="autonomous", halsim_ws=("localhost", 3300), record=False, wait=30.0))
        pieces = MemoryPieces(lambda: session.world.pose)
        pieces.add(4.0 + 0.45, 3.0)
        session.world.attach_pieces(pieces)
        session.run()
    finally:
        robot.close()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows and not rows[0]["beam"] and rows[0]["beam_nc"]
    seen = next(i for i, r in enumerate(rows) if r["beam"])
    assert all(r["duty"] == 0.8 for r in rows[:seen])
    out = next(i for i, r in enumerate(rows) if r["duty"] < 0)
    assert all(r["beam"] and not r["beam_nc"] for r in rows[seen + 2:out + 1])
    cleared = next(i for i, r in enumerate(rows[out:]) if not r["beam"])
    assert cleared <= 5, rows[out:out + 6]  # within a few real-time periods
    assert rows[-1]["beam_nc"] and len(pieces.releases) == 1
