"""The other robots of an arena (`[robots.<name>]`) are in the `--record` data log (issue 21):
their pose, truth and state under /simserver/robots/<name>/, read back with wpiutil's
DataLogReader, matching an in-process arena run."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from wpimath.geometry import Pose2d
from wpiutil import wpistruct
from wpiutil.log import DataLogReader

from simserver.cli import main
from simserver.config.loader import default_config_text, load
from simserver.contract import topics
from simserver.io.wpilog import TRUTH_X, under
from simserver.world import World
from simserver.world.arena import Arena

OTHER = default_config_text().replace('start = { x = "2 m", y = "4 m"',
                                      'start = { x = "6 m", y = "2 m"')


def _write(tmp_path: Path) -> Path:
    (tmp_path / "other.toml").write_text(OTHER)
    (tmp_path / "other.csv").write_text("time,left,right\n0,0.6,0.4\n")
    (tmp_path / "main.csv").write_text("time,left,right\n0,0.5,0.5\n")
    cfg = tmp_path / "robot.toml"
    cfg.write_text(default_config_text()
                   + '\n[robots.blue2]\nconfig = "other.toml"\ninputs = "other.csv"\n')
    return cfg


def _entries(log: Path) -> dict[str, list]:
    """Entry name -> its values (doubles, booleans, raw bytes by type)."""
    starts, out = {}, {}
    for rec in DataLogReader(str(log)):
        if rec.isStart():
            start = rec.getStartData()
            starts[start.entry] = start
            out[start.name] = []
        elif not rec.isControl():
            start = starts[rec.getEntry()]
            value = {"double": rec.getDouble, "boolean": rec.getBoolean}.get(
                start.type, rec.getRaw)()
            out[start.name].append(value)
    return out


def test_other_robots_state_is_recorded_under_their_prefix(tmp_path):
    cfg = _write(tmp_path)
    log = tmp_path / "run.wpilog"
    result = CliRunner().invoke(main, ["run", str(cfg), "--inputs", str(tmp_path / "main.csv"),
                                       "--fast", "--duration", "1", "--record", str(log)])
    assert result.exit_code == 0, result.output
    entries = _entries(log)
    prefix = topics.robot_prefix("blue2")
    for name in (topics.POSE, TRUTH_X, topics.BATTERY_MIN_VOLTAGE, topics.GYRO_YAW,
                 topics.encoder_position("left"), topics.current("left"), topics.motor("left")):
        assert entries.get(under("blue2", name)), f"{prefix}: {name} not recorded"
    # the same motion as the arena stepped in-process with the same inputs
    loaded = load(cfg)
    main_world = World(loaded)
    others = {n: World(c) for n, c in (loaded.others or {}).items()}
    arena = Arena({"": main_world, **others}, loaded.field.restitution,
                  loaded.field.wall_friction)
    main_world.set_motor("left", 0.5)
    main_world.set_motor("right", 0.5)
    others["blue2"].set_motor("left", 0.6)
    others["blue2"].set_motor("right", 0.4)
    xs = []
    for _ in range(len(entries[TRUTH_X])):
        arena.step(loaded.sim.tick)
        xs.append(others["blue2"].snapshot().x)
    assert entries[under("blue2", TRUTH_X)] == xs
    last = wpistruct.unpack(Pose2d, entries[under("blue2", topics.POSE)][-1])
    assert last.X() == xs[-1] and last.X() > 6.0
    assert entries[under("blue2", topics.motor("left"))][-1] == 0.6
    # and the main robot's entries are its own
    assert entries[TRUTH_X] != entries[under("blue2", TRUTH_X)]
