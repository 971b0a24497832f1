"""The WPILog recorder (`simserver.io.wpilog`): what a recording holds, read back with wpiutil's
own DataLogReader, and `read_recording` turning it back into the run's Trace."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from wpimath.geometry import Pose2d
from wpiutil import DataLogWriter, wpistruct
from wpiutil.log import DataLogReader

from simserver.config.loader import default_config_text, load, loads
from simserver.contract import topics
from simserver.io import field2d, wpilog
from simserver.io.scripted import load_script
from simserver.io.stepwire import VERSION, Link
from simserver.io.wpilog import RecordError, WpilogRecorder
from simserver.runs.recording import read_recording
from simserver.runs.session import RunOptions, Session
from simserver.world import World
from tests.ntutil import REPO

S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
TICK_US = 10_000  # the kitbot's 10 ms tick


@dataclasses.dataclass
class Entry:
    """One entry of a data log as read back: type, metadata and (timestamp µs, value) records."""

    type: str
    metadata: str
    records: list[tuple[int, Any]]

    @property
    def stamps(self) -> list[int]:
        return [t for t, _ in self.records]

    @property
    def values(self) -> list[Any]:
        return [v for _, v in self.records]


_DECODE = {
    "double": lambda r: r.getDouble(), "boolean": lambda r: r.getBoolean(),
    "int64": lambda r: r.getInteger(), "string": lambda r: r.getString(),
    "double[]": lambda r: list(r.getDoubleArray()),
    "boolean[]": lambda r: list(r.getBooleanArray()),
}


def read_log(path: Path) -> dict[str, Entry]:
    """Every entry of a data log by name, values decoded by type (raw bytes otherwise)."""
    reader = DataLogReader(str(path))
    assert reader.isValid(), f"{path} is not a valid data log"
    by_id: dict[int, Entry] = {}
    out: dict[str, Entry] = {}
    for rec in reader:
        if rec.isStart():
            d = rec.getStartData()
            by_id[d.entry] = out[d.name] = Entry(d.type, d.metadata, [])
        elif not rec.isControl():
            entry = by_id[rec.getEntry()]
            decode = _DECODE.get(entry.type, lambda r: bytes(r.getRaw()))
            entry.records.append((rec.getTimestamp(), decode(rec)))
    return out


def run_kitbot(tmp_path: Path, duration: float = 10.0, text: str | None = None,
               csv: Path = S_CURVE) -> tuple[Session, Path]:
    """A fast scripted run recorded to tmp_path/run.wpilog."""
    cfg = loads(text) if text is not None else load(REPO / "simserver/config/kitbot.toml")
    path = tmp_path / "run.wpilog"
    script = load_script(csv, list(cfg.motors), list(cfg.solenoids))
    session = Session(cfg, RunOptions(fast=True, duration=duration, script=script,
                                      wpilog=path))
    session.run()
    return session, path


# --- what is recorded ----------------------------------------------------------------------------


def test_kitbot_recording_has_every_topic_of_the_contract_with_its_type(tmp_path):
    session, path = run_kitbot(tmp_path)
    entries = read_log(path)
    assert DataLogReader(str(path)).getExtraHeader().startswith("simserver")
    expected = {
        topics.POSE: "struct:Pose2d",
        "/simserver/motors/left": "double", "/simserver/motors/right": "double",
        "/simserver/currents/left": "double", "/simserver/currents/right": "double",
        "/simserver/encoders/left/position": "double",
        "/simserver/encoders/left/velocity": "double",
        "/simserver/encoders/right/position": "double",
        "/simserver/encoders/right/velocity": "double",
        "/simserver/gyro/yaw": "double", "/simserver/gyro/rate": "double",
        "/simserver/battery/voltage": "double", "/simserver/battery/current": "double",
        "/simserver/battery/charge_used": "double", "/simserver/battery/brownout": "boolean",
        "/simserver/battery/breaker_tripped": "boolean", "/simserver/time": "double",
        "/simserver/battery/min_voltage": "double", "/simserver/battery/max_current": "double",
        "/simserver/battery/brownout_in_tick": "boolean",
        "/simserver/truth/x": "double", "/simserver/truth/y": "double",
        "/simserver/truth/heading": "double", "/simserver/truth/vx": "double",
        "/simserver/truth/vy": "double", "/simserver/truth/omega": "double",
        "/simserver/truth/wheel_speed/left": "double",
        "/simserver/truth/wheel_speed/right": "double",
        "/simserver/truth/touching_wall": "boolean", "/simserver/truth/wall_hits": "int64",
        "/simserver/field/length": "double", "/simserver/field/width": "double",
        "/.schema/struct:Pose2d": "structschema",
        "/.schema/struct:Translation2d": "structschema",
        "/.schema/struct:Rotation2d": "structschema",
        "/simserver/drive/chassis_speeds": "struct:ChassisSpeeds",
        "/.schema/struct:ChassisSpeeds": "structschema",
    }
    assert {name: e.type for name, e in entries.items()} == expected
    contract = {s.name: s for s in topics.contract_for(session.cfg)}
    for name in expected:
        if name in contract:
            assert json.loads(entries[name].metadata)["unit"] == contract[name].unit, name
    assert session.recorder is not None and session.recorder.closed
    schemas = sum(1 for name in entries if name.startswith("/.schema/"))  # not values
    assert schemas == 4
    assert session.recorder.records == sum(len(e.records) for e in entries.values()) - schemas


def test_every_tick_is_one_record_per_number_at_its_simulated_microsecond(tmp_path):
    session, path = run_kitbot(tmp_path)
    entries = read_log(path)
    ticks = session.ticks
    assert ticks == 1000
    per_tick = [TICK_US * k for k in range(1, ticks + 1)]
    for name, entry in entries.items():
        if entry.type in ("double", "struct:Pose2d") and not name.startswith(
                "/simserver/field/"):
            assert entry.stamps == per_tick, name
    assert entries["/simserver/field/length"].records == [(1, session.world.walls.length)]
    assert entries["/simserver/field/width"].records == [(1, session.world.walls.width)]
    assert entries["/simserver/time"].values == pytest.approx([t * 1e-6 for t in per_tick])


def test_values_are_the_snapshots_and_the_pose_struct_decodes(tmp_path):
    session, path = run_kitbot(tmp_path)
    entries = read_log(path)
    trace = session.trace
    assert trace is not None
    assert entries["/simserver/truth/x"].values == list(trace.data["x"])
    assert entries["/simserver/truth/heading"].values == list(trace.data["heading"])
    assert entries["/simserver/battery/voltage"].values == list(trace.data["voltage"])
    assert entries["/simserver/currents/left"].values == list(trace.motor_currents["left"])
    poses = [wpistruct.unpack(Pose2d, raw) for raw in entries[topics.POSE].values]
    assert [p.X() for p in poses] == list(trace.data["x"])
    assert [p.Y() for p in poses] == list(trace.data["y"])
    assert [p.rotation().radians() for p in poses] == pytest.approx(
        [math.atan2(math.sin(h), math.cos(h)) for h in trace.data["heading"]], abs=1e-12)
    # Inputs: the script's duty cycles, read at the start of each tick.
    script = load_script(S_CURVE, ["left", "right"], [])
    starts = [t - 0.01 for t in trace.data["time"]]
    assert entries["/simserver/motors/right"].values == pytest.approx(
        [script.at(t)[0]["right"] for t in starts], abs=1e-9)
    # Gyro in degrees, as on NT.
    final = session.world.snapshot()
    assert entries["/simserver/gyro/yaw"].values[-1] == math.degrees(final.gyro_yaw)


def test_booleans_integers_and_arrays_are_written_when_they_change(tmp_path):
    pytest.importorskip("simserver_intake")
    text = (default_config_text() + '\n[motors.roller]\ntype = "775pro"\n'
            '[mechanisms.intake]\ntype = "roller_intake"\nmotor = "roller"\n'
            'pieces.a = { x = "3.5 m", y = "4 m" }\n'
            '[solenoids.claw]\n[pneumatics]\n')
    csv = tmp_path / "drive.csv"
    # Solenoid changes between ticks: read at the ticks starting at 1.00 s and 2.00 s.
    csv.write_text("time,left,right,roller,claw\n0,0.5,0.5,0.6,0\n0.995,0.5,0.5,0.6,1\n"
                   "1.995,0,0,0.6,0\n3,0,0,0,0\n")
    _, path = run_kitbot(tmp_path, duration=3.0, text=text, csv=csv)
    entries = read_log(path)
    claw = entries["/simserver/solenoids/claw"]
    assert claw.type == "boolean"
    assert claw.records == [(TICK_US, False), (101 * TICK_US, True), (201 * TICK_US, False)]
    held = entries["/simserver/mechanisms/intake/held"]
    assert held.type == "int64" and held.values == [0, 1]
    beam = entries["/simserver/mechanisms/intake/beam_break"]
    assert beam.type == "boolean" and beam.values == [False, True]
    assert beam.stamps[1] == held.stamps[1]
    pieces = entries[field2d.PIECES.at(mechanism="intake")]
    assert pieces.type == "double[]"
    assert pieces.values == [[3.5, 4.0, 0.0], []], "Field2d triplets, then picked up"
    pressure = entries["/simserver/pneumatics/pressure"]
    assert pressure.type == "double" and len(pressure.records) == 300
    assert entries["/simserver/pneumatics/compressor_running"].type == "boolean"


def test_a_world_reset_keeps_the_log_clock_going(tmp_path):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    world = World(cfg)
    path = tmp_path / "reset.wpilog"
    rec = WpilogRecorder(path, cfg, (16.5, 8.1))
    for _ in range(3):
        world.step(0.01)
        rec.record(world.snapshot())
    world.reset()  # a robot program reconnected
    for _ in range(2):
        world.step(0.01)
        rec.record(world.snapshot(), enabled_at=0.01)
    rec.close()
    rec.close()  # idempotent
    entries = read_log(path)
    assert entries["/simserver/truth/x"].stamps == [10_000, 20_000, 30_000, 40_000, 50_000]
    assert entries["/simserver/time"].values == pytest.approx([0.01, 0.02, 0.03, 0.01, 0.02])
    assert entries[wpilog.ENABLED_AT].records == [(40_000, pytest.approx(0.04))]


def test_the_writer_is_flushed_before_wpiutil_would_block(tmp_path, monkeypatch):
    # DataLogWriter blocks for good with about 1 MiB unflushed: a long fast run must flush.
    flushes = []
    monkeypatch.setattr(WpilogRecorder, "flush",
                        lambda self: (flushes.append(self._pending), self._log.flush(),
                                      setattr(self, "_pending", 0)))
    run_kitbot(tmp_path, duration=60.0)
    assert flushes and max(flushes) < wpilog.FLUSH_BYTES + 4096


# --- Session integration: stops, failures, lock-step, robot mode, enable time --------------------


def test_ctrl_c_mid_run_leaves_a_complete_file_when_run_returns(tmp_path):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    path = tmp_path / "stopped.wpilog"
    script = load_script(S_CURVE, ["left", "right"], [])
    session = Session(cfg, RunOptions(fast=True, duration=10.0, script=script, wpilog=path))

    def interrupt(t: float) -> None:
        if t >= 2.0 and not session.stop_requested:
            signal.raise_signal(signal.SIGINT)  # the session's handler: stop after this tick

    session.run(interrupt)
    assert session.stop_requested and session.recorder is not None and session.recorder.closed
    stamps = read_log(path)["/simserver/battery/voltage"].stamps  # before any GC of the writer
    assert stamps == [TICK_US * k for k in range(1, session.ticks + 1)]
    assert stamps[-1] == round(session.world.time * 1e6)


def test_a_run_that_fails_still_closes_its_recording(tmp_path):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    with socket.create_server(("127.0.0.1", 0)) as probe:  # a port nobody listens on
        port = probe.getsockname()[1]
    cfg = dataclasses.replace(cfg, bridge=dataclasses.replace(cfg.bridge, port=port))
    path = tmp_path / "failed.wpilog"
    session = Session(cfg, RunOptions(lockstep=True, wait=0.3, wpilog=path))
    session.run()
    assert session.failure is not None and "no robot program's bridge answered" in \
        session.failure
    assert session.recorder is not None and session.recorder.closed
    assert read_log(path)["/simserver/field/length"].values == [session.world.walls.length]


def fake_bridge(server: socket.socket, periods: int, mode_from: int) -> threading.Thread:
    """A robot-side bridge on ``server``: greets with a 20 ms period, then each period sends
    full-forward motors and mode "disabled", "autonomous" from period ``mode_from`` on."""

    def serve() -> None:
        conn, _ = server.accept()
        link = Link(conn)
        link.receive(5)
        link.send({"hello": "bridge", "version": VERSION, "mode": "lockstep", "period": 0.02})
        for k in range(periods):
            mode = "autonomous" if k >= mode_from else "disabled"
            link.send({"time": 0.02 * k, "values": {
                topics.motor("left"): 1.0, topics.motor("right"): 1.0,
                topics.ROBOT_MODE: mode}})
            if "bye" in link.receive(5):
                break
        link.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def bridge_server() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


@pytest.mark.network
def test_lockstep_run_records_robot_mode_enable_time_and_commands(tmp_path, bridge_server):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    port = bridge_server.getsockname()[1]
    cfg = dataclasses.replace(cfg, bridge=dataclasses.replace(cfg.bridge, port=port))
    thread = fake_bridge(bridge_server, periods=200, mode_from=5)
    path = tmp_path / "lockstep.wpilog"
    session = Session(cfg, RunOptions(fast=True, lockstep=True, enable="autonomous",
                                      duration=1.0, wait=5.0, wpilog=path))
    session.run()
    thread.join(10)
    assert session.failure is None
    entries = read_log(path)
    assert entries[topics.ROBOT_MODE].records == [(20_000, "disabled"),
                                                  (120_000, "autonomous")]
    # sim.enable_delay (0.5 s) of disabled commands first (this fake bridge reports
    # autonomous from its 5th period whatever it is told).
    assert entries[topics.DS_MODE].records == [(20_000, "disabled"), (500_000, "autonomous")]
    assert entries[wpilog.ENABLED_AT].records == [(120_000, pytest.approx(0.10))]
    stamps = entries["/simserver/truth/x"].stamps
    assert stamps == [20_000 * k for k in range(1, len(stamps) + 1)]
    assert len(stamps) == 5 + 50, "disabled periods, then 1 s after enabling"
    assert entries["/simserver/motors/left"].values[-1] == 1.0


# --- reading back --------------------------------------------------------------------------------


def test_read_recording_gives_back_the_runs_trace_and_field(tmp_path):
    session, path = run_kitbot(tmp_path)
    rec = read_recording(path)
    assert session.trace is not None
    for channel in ("x", "y", "heading", "v_left", "v_right", "omega", "voltage", "current"):
        assert rec.trace.data[channel] == session.trace.data[channel], channel
    assert list(rec.trace.data["time"]) == pytest.approx(list(session.trace.data["time"]),
                                                         abs=1e-9)
    assert rec.trace.motor_currents == session.trace.motor_currents
    walls = session.world.walls
    assert rec.field_size == (walls.length, walls.width)


def test_read_recording_of_an_interrupted_file_keeps_the_whole_records(tmp_path):
    _, path = run_kitbot(tmp_path)
    data = path.read_bytes()
    cut = tmp_path / "cut.wpilog"
    cut.write_bytes(data[: len(data) // 2 + 3])
    trace = read_recording(cut).trace
    assert 400 < len(trace) < 600
    times = list(trace.data["time"])
    assert times == sorted(times)


def test_read_recording_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.wpilog"
    with pytest.raises(RecordError, match=f"{missing}: file not found"):
        read_recording(missing)
    junk = tmp_path / "junk.wpilog"
    junk.write_bytes(b"not a log at all" * 10)
    with pytest.raises(RecordError, match=f"{junk}: not a WPILib data log"):
        read_recording(junk)
    other = tmp_path / "robot.wpilog"
    writer = DataLogWriter(str(other))
    entry = writer.start("/RealOutputs/Drive/LeftVelocity", "double", "", 1)
    writer.appendDouble(entry, 1.0, 20_000)
    writer.flush()
    writer.stop()
    with pytest.raises(RecordError, match="not a recording of `simserver run --record`"):
        read_recording(other)


# --- paths ---------------------------------------------------------------------------------------


def test_missing_parent_directories_are_created(tmp_path):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    path = tmp_path / "a" / "b" / "run.wpilog"
    WpilogRecorder(path, cfg, (16.5, 8.1)).close()
    assert read_log(path)["/simserver/field/length"].values == [16.5]


def test_unwritable_paths_are_a_record_error_naming_the_file(tmp_path):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    under_file = blocker / "run.wpilog"
    with pytest.raises(RecordError, match=f"{under_file}: cannot create its directory"):
        WpilogRecorder(under_file, cfg, (16.5, 8.1))
    with pytest.raises(RecordError, match=f"{tmp_path}: cannot write"):
        WpilogRecorder(tmp_path, cfg, (16.5, 8.1))


def test_a_swerve_recording_is_the_same_bytes_whatever_the_hash_seed(tmp_path):
    """The examples/swerve robot (eight encoders on drive and steer motors) recorded under three
    PYTHONHASHSEEDs gives byte-identical logs: entries start in config order (they started in
    the iteration order of a set of encoder names, which the hash seed shuffles)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    config = repo / "examples" / "swerve" / "simserver.toml"
    motors = list(load(config).motors)
    script = tmp_path / "drive.csv"
    script.write_text("time," + ",".join(motors) + "\n"
                      + "0," + ",".join("0.3" for _ in motors) + "\n")
    logs = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"run{seed}.wpilog"
        subprocess.run([sys.executable, "-m", "simserver", "run", str(config), "--inputs",
                        str(script), "--fast", "--duration", "0.5", "--record", str(out),
                        "--no-summary"], check=True, capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONHASHSEED": seed})
        logs.append(out.read_bytes())
    assert len(logs[0]) > 10_000
    assert logs[1] == logs[0] and logs[2] == logs[0]
