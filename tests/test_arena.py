"""Several robots on one field: the Arena, `[robots]` config, and other robots over real NT.

Robot-robot impulses are tested for conservation in tests/models/test_collision.py; here the
arena wiring: contacts happen and are counted, robots never end up overlapping, bumping changes
both robots' motion, two arenas in one process do not share state, and a robot on its own NT
prefix is driven and drawn.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import ntcore
import pytest
from wpimath.geometry import Pose2d

from simserver.config.loader import ConfigError, default_config_text, load, loads
from simserver.models.collision import collide, to_field
from simserver.world import World
from simserver.world.arena import Arena
from tests.ntutil import FAST, SimserverProcess, client, free_port, wait_for

KITBOT = default_config_text()
START = 'start = { x = "2 m", y = "4 m", heading = "0 deg" }'


def kitbot_at(x: float, y: float, heading_deg: float) -> World:
    text = KITBOT.replace(START, f'start = {{ x = "{x} m", y = "{y} m", '
                                 f'heading = "{heading_deg} deg" }}')
    assert text != KITBOT
    return World(loads(text))


def head_on() -> tuple[Arena, World, World]:
    a, b = kitbot_at(4.0, 4.0, 0.0), kitbot_at(7.0, 4.0, 180.0)
    return Arena({"a": a, "b": b}, restitution=0.2, friction=0.3), a, b


def overlapping(a: World, b: World) -> bool:
    pa = to_field(a.polygon, *a.pose)
    pb = to_field(b.polygon, *b.pose)
    contact = collide(pa, pb)
    return contact is not None and contact.depth > 1e-6


def test_head_on_robots_collide_push_and_never_overlap():
    arena, a, b = head_on()
    for w in (a, b):
        w.set_motor("left", 0.8)
        w.set_motor("right", 0.8)
    closest = math.inf
    for _ in range(150):
        arena.step(0.02)
        assert not overlapping(a, b)
        closest = min(closest, b.pose[0] - a.pose[0])
    assert a.snapshot().robot_hits >= 1 and b.snapshot().robot_hits >= 1
    length = a.outline[0]
    assert closest == pytest.approx(length, abs=0.01)  # they met bumper to bumper
    # Equal robots at equal power push to a standstill near the middle.
    assert (a.pose[0] + b.pose[0]) / 2 == pytest.approx(5.5, abs=0.05)


def test_a_stronger_push_moves_the_other_robot_back():
    arena, a, b = head_on()
    a.set_motor("left", 1.0)
    a.set_motor("right", 1.0)
    b.set_motor("left", 0.3)
    b.set_motor("right", 0.3)
    for _ in range(250):
        arena.step(0.02)
    assert b.pose[0] > 7.0 - 0.01 or b.snapshot().vx > 0.0  # b is being pushed back
    assert a.pose[0] > 5.5


def test_two_arenas_in_one_process_share_nothing():
    def drive(arena: Arena, worlds: tuple[World, World], steps: int) -> None:
        for w in worlds:
            w.set_motor("left", 0.9)
            w.set_motor("right", 0.7)
        for _ in range(steps):
            arena.step(0.02)

    alone, a1, b1 = head_on()
    drive(alone, (a1, b1), 200)
    first, a2, b2 = head_on()
    second, a3, b3 = head_on()
    for _ in range(200):  # interleaved, tick by tick
        drive(first, (a2, b2), 1)
        drive(second, (a3, b3), 1)
    assert a2.pose == a1.pose == a3.pose
    assert b2.pose == b1.pose == b3.pose


def test_robot_far_away_is_not_disturbed_by_an_arena():
    """A robot alone and the same robot in an arena with a distant second robot move
    bit-identically."""
    alone = kitbot_at(2.0, 2.0, 0.0)
    paired = kitbot_at(2.0, 2.0, 0.0)
    arena = Arena({"main": paired, "far": kitbot_at(14.0, 6.0, 90.0)}, 0.2, 0.3)
    for w in (alone, paired):
        w.set_motor("left", 0.5)
        w.set_motor("right", 0.6)
    for _ in range(100):
        alone.step(0.02)
        arena.step(0.02)
    assert alone.pose == paired.pose


def write_pair(tmp_path: Path, inputs: bool = True) -> Path:
    (tmp_path / "opponent.toml").write_text(KITBOT.replace(
        START, 'start = { x = "10 m", y = "4 m", heading = "180 deg" }'))
    (tmp_path / "opponent.csv").write_text("time,left,right\n0,0.5,0.5\n3,0.5,0.5\n")
    main = tmp_path / "main.toml"
    line = 'inputs = "opponent.csv"\n' if inputs else ""
    main.write_text(KITBOT + f'\n[robots.opponent]\nconfig = "opponent.toml"\n{line}')
    return main


def test_robots_table_loads_other_configs_relative_to_the_file(tmp_path):
    cfg = load(write_pair(tmp_path))
    assert cfg.others is not None and set(cfg.others) == {"opponent"}
    other = cfg.others["opponent"]
    assert other.robot.start.x == pytest.approx(10.0)
    assert other.field == cfg.field and other.sim == cfg.sim
    assert cfg.robots["opponent"].inputs == str(tmp_path / "opponent.csv")


def test_missing_other_robot_file_is_an_error_naming_the_key(tmp_path):
    main = tmp_path / "main.toml"
    main.write_text(KITBOT + '\n[robots.ghost]\nconfig = "nowhere.toml"\n')
    with pytest.raises(ConfigError) as exc:
        load(main)
    assert "robots.ghost.config" in str(exc.value) and "nowhere.toml" in str(exc.value)


def test_bad_key_in_other_robot_file_names_that_file(tmp_path):
    (tmp_path / "bad.toml").write_text(KITBOT.replace('mass = "60 lb"', 'mass = "60 V"'))
    main = tmp_path / "main.toml"
    main.write_text(KITBOT + '\n[robots.bad]\nconfig = "bad.toml"\n')
    with pytest.raises(ConfigError) as exc:
        load(main)
    assert "bad.toml" in str(exc.value) and "robot.mass" in str(exc.value)


def test_scripted_opponent_drives_in_a_run(tmp_path):
    """`simserver run` with a scripted opponent: the main robot (also scripted) and the
    opponent drive at each other and the summary shows the main robot stopped short."""
    main = write_pair(tmp_path)
    (tmp_path / "main.csv").write_text("time,left,right\n0,0.5,0.5\n3,0.5,0.5\n")
    proc = SimserverProcess(str(main), "--inputs", str(tmp_path / "main.csv"),
                            "--fast", "--summary", log_dir=tmp_path)
    try:
        assert proc.proc.wait(60) == 0, proc.stderr()
    finally:
        proc.close()
    out = proc.stdout()
    found = re.search(r"final pose\s+x (-?[\d.]+) m", out)
    assert found, out
    final_x = float(found.group(1))
    # Alone it would reach about 2 + 3 s × 2 m/s; the opponent stops it near mid-way (6 m).
    assert 4.5 < final_x < 6.5, out


def test_other_robot_on_its_own_nt_prefix_is_driven_and_drawn(tmp_path):
    main = write_pair(tmp_path, inputs=False)
    port = free_port()
    proc = SimserverProcess(str(main), "--serve", f"127.0.0.1:{port}",
                            log_dir=tmp_path)
    inst = client(port)
    try:
        left = inst.getDoubleTopic("/simserver/robots/opponent/motors/left").publish(FAST)
        right = inst.getDoubleTopic("/simserver/robots/opponent/motors/right").publish(FAST)
        pose = inst.getStructTopic("/simserver/robots/opponent/pose", Pose2d).subscribe(
            Pose2d(), FAST)
        drawn = inst.getDoubleArrayTopic("/SmartDashboard/SimField/opponent").subscribe(
            [], FAST)
        main_pose = inst.getStructTopic("/simserver/pose", Pose2d).subscribe(Pose2d(), FAST)
        wait_for(lambda: pose.get().X() > 9.0, 15, "the opponent's pose")
        for _ in range(100):
            left.set(0.5)
            right.set(0.5)
            inst.flush()
            if pose.get().X() < 9.5:
                break
            time.sleep(0.05)
        wait_for(lambda: pose.get().X() < 9.5, 10, "the opponent to drive toward blue")
        x, _, deg = drawn.get()
        assert x == pytest.approx(pose.get().X(), abs=0.2) and deg == pytest.approx(180, abs=1)
        assert main_pose.get().X() == pytest.approx(2.0, abs=1e-6)  # the main robot idles
        assert proc.alive(), proc.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        proc.close()


def test_check_lists_cameras_and_other_robots(tmp_path):
    main = write_pair(tmp_path)
    main.write_text(main.read_text() + '\n[cameras.front]\nz = "0.5 m"\n')
    out = subprocess.run([sys.executable, "-m", "simserver", "check", str(main)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "cameras: front; other robots: opponent" in out.stdout
