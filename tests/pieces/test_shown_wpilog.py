"""Game pieces, mechanism components and Mechanism2d in the WPILib data log of `--record`
(issue 22, part 5), read back with wpiutil's DataLogReader: the pose arrays decode with
wpimath's Pose3d struct and are written only when they change, the counts are integers,
every drawn mechanism's Mechanism2d table is there as WPILib publishes it, and
`read_recording` gives `simserver plot` the scores and the pieces' last positions."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from wpimath.geometry import Pose3d
from wpiutil import wpistruct

from simserver.contract import topics
from simserver.io import mechanism2d
from simserver.io.wpilog import WpilogRecorder
from simserver.models.pieces.types import FLIGHT, LOOSE
from simserver.runs.recording import read_recording
from simserver.world import World
from tests.io.test_wpilog import read_log
from tests.pieces.shown_fixtures import field_of, scored, with_pieces
from tests.pieces.test_shown_nt import SHOWN
from tests.worlds import make_world

TICKS = 10


def record(path: Path, world: World, pieces_at) -> list:
    """Record TICKS ticks of ``world`` (the lift driven up) with the pieces ``pieces_at(k)``;
    the snapshots recorded."""
    rec = WpilogRecorder(path, world.cfg, world.field_size)
    snaps = []
    if "lift" in world.mechanisms:
        world.set_motor("lift", 0.5)
    for k in range(TICKS):
        world.step(world.cfg.sim.tick)
        snap = with_pieces(world.snapshot(), pieces_at(k))
        rec.record(snap)
        snaps.append(snap)
    rec.close()
    return snaps


def test_piece_arrays_are_recorded_when_they_change_and_decode_as_pose3d(tmp_path):
    path = tmp_path / "pieces.wpilog"
    rest = field_of(40)

    def pieces_at(k: int):
        if k < 6:
            return rest  # at rest for 6 ticks
        moving = dataclasses.replace(rest, pose=rest.pose.copy())
        moving.pose[rest.state == FLIGHT, 2] += 0.01 * k  # the flying ones rise
        return moving

    snaps = record(path, make_world(), pieces_at)
    log = read_log(path)
    floor = log[topics.pieces_in("floor", "fuel")]
    flight = log[topics.pieces_in("flight", "fuel")]
    assert floor.type == flight.type == "struct:Pose3d[]"
    assert len(floor.records) == 1  # at rest the whole run: one record
    assert len(flight.records) == 1 + (TICKS - 6)  # once at rest, then every tick moving
    assert "/.schema/struct:Pose3d" in log and "/.schema/struct:Quaternion" in log
    last = snaps[-1].pieces
    chosen = (last.state == FLIGHT) & (last.kind == 0)
    got = wpistruct.unpackArray(Pose3d, flight.records[-1][1])
    assert len(got) == chosen.sum() > 0
    for pose, row in zip(got, last.pose[chosen], strict=True):
        assert (pose.X(), pose.Y(), pose.Z()) == tuple(row[:3])
        r = pose.rotation()
        assert (r.X(), r.Y(), r.Z()) == pytest.approx(tuple(row[3:]), abs=1e-9)
    assert floor.stamps[0] == flight.stamps[0] == round(snaps[0].time * 1e6)


def test_scores_and_counts_are_integer_entries(tmp_path):
    path = tmp_path / "scores.wpilog"
    record(path, make_world(), lambda k: scored(field_of(8), blue=k // 3, red=1,
                                                picked_up=k, shots=k // 2))
    log = read_log(path)
    blue = log[topics.pieces_scored("blue")]
    assert blue.type == "int64"
    assert blue.values == [0, 1, 2, 3]  # written when it changes
    assert log[topics.goal_scored("blue_hub")].values == [0, 1, 2, 3]
    assert log[topics.pieces_scored("red")].values == [1]
    assert log[topics.PICKED_UP].values == list(range(TICKS))
    assert log[topics.SHOTS].values[-1] == (TICKS - 1) // 2
    assert log[topics.robot_prefix("partner") + "/pieces/picked_up"].values[-1] == TICKS


def test_components_and_mechanism2d_are_recorded(tmp_path):
    path = tmp_path / "mech.wpilog"
    snaps = record(path, make_world(SHOWN), lambda k: None)
    log = read_log(path)
    comp = log[topics.COMPONENTS]
    assert comp.type == "struct:Pose3d[]"
    final = wpistruct.unpackArray(Pose3d, comp.records[-1][1])
    assert [p.Z() for p in final] == list(snaps[-1].components[i].Z() for i in range(4))
    assert len(comp.records) == TICKS  # the lift rises every tick
    # Mechanism2d as WPILib's Mechanism2d publishes it (and DataLogManager captures it)
    assert log["/SmartDashboard/arm/.type"].values == ["Mechanism2d"]
    assert log["/SmartDashboard/arm/.name"].values == ["arm"]
    assert log["/SmartDashboard/lift/dims"].type == "double[]"
    angle = log["/SmartDashboard/arm/pivot/arm/angle"]
    assert angle.type == "double" and len(angle.records) == TICKS
    assert angle.values[-1] == snaps[-1].drawings["arm"].ligaments[0].angle
    assert math.radians(angle.values[-1]) == pytest.approx(
        math.radians(snaps[-1].mechanisms["arm"]["angle"]))
    height = log["/SmartDashboard/lift/base/carriage/length"]
    assert height.values == [s.drawings["lift"].ligaments[0].length for s in snaps]
    assert log["/SmartDashboard/lift/base/carriage/.type"].values == ["line"]
    want = mechanism2d.entries("lift", snaps[-1].drawings["lift"])
    assert {n for n in log if n.startswith("/SmartDashboard/lift/")} == set(want)


def test_a_recording_without_pieces_has_no_piece_or_component_entries(tmp_path):
    path = tmp_path / "kitbot.wpilog"
    record(path, make_world(), lambda k: None)
    names = set(read_log(path))
    assert not [n for n in names if n.startswith(topics.PIECES) or "Pose3d" in n
                or n.startswith("/SmartDashboard/") or n == topics.COMPONENTS]


def test_read_recording_gives_the_plot_scores_and_last_positions(tmp_path):
    path = tmp_path / "plot.wpilog"
    snaps = record(path, make_world(), lambda k: scored(field_of(20), blue=k, red=k // 4))
    trace = read_recording(path).trace
    assert list(trace.scores["blue"]) == list(range(TICKS))
    assert list(trace.scores["red"]) == [k // 4 for k in range(TICKS)]
    last = snaps[-1].pieces
    for state, code in (("floor", LOOSE), ("flight", FLIGHT)):
        want = last.pose[last.state == code][:, :2]
        got = trace.pieces[state]
        assert sorted(map(tuple, got)) == sorted(map(tuple, want))
    assert len(trace.pieces["held"]) == 5


def test_read_recording_without_pieces_has_none(tmp_path):
    path = tmp_path / "none.wpilog"
    record(path, make_world(), lambda k: None)
    trace = read_recording(path).trace
    assert trace.scores == {} and trace.pieces == {}
    assert np.isfinite(list(trace.data["x"])).all()


def test_another_robots_components_are_recorded_under_its_prefix(tmp_path):
    main, other = make_world(), make_world(SHOWN)
    path = tmp_path / "others.wpilog"
    rec = WpilogRecorder(path, main.cfg, main.field_size, others={"partner": other.cfg})
    for _ in range(3):
        main.step(main.cfg.sim.tick)
        other.step(other.cfg.sim.tick)
        rec.record(main.snapshot(), others={"partner": other.snapshot()})
    rec.close()
    log = read_log(path)
    entry = log[topics.robot_prefix("partner") + "/robot/components"]
    assert entry.type == "struct:Pose3d[]"
    assert len(wpistruct.unpackArray(Pose3d, entry.records[-1][1])) == 4
    assert topics.COMPONENTS not in log  # the main robot has no mechanisms
    assert not [n for n in log if n.startswith("/SmartDashboard/")]  # drawn: the main's only
