"""The H-drive plugin as a user meets it, through `python -m simserver` subprocesses: `check`
and `models` see it, and `run --serve --record` runs it, publishes its outputs to a real ntcore
client and records them, with no change to simserver."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import ntcore
import pytest
from wpimath.geometry import Pose2d
from wpiutil.log import DataLogReader

ROBOT = Path(__file__).with_name("hdrive.toml")
START_Y = 2.0  # m, the test robot's start


def simserver(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "simserver", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (never 5810, which robot programs use)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 5810:
            return port


def test_check_accepts_the_hdrive_robot():
    result = simserver("check", str(ROBOT))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (f"{ROBOT}: OK (hdrive drivetrain, 3 motors, 1 encoders; "
                                     "mechanisms: none)")


def test_check_names_the_key_of_an_unknown_motor_and_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(ROBOT.read_text().replace('center = "center"', 'center = "centre"'))
    result = simserver("check", str(bad))
    assert result.returncode == 2
    assert (f"{bad}: drivetrain.center: no motor named 'centre' in [motors]; did you mean "
            "'center'?") in result.stderr


def test_check_warns_of_a_centre_wheel_outside_the_outline(tmp_path):
    odd = tmp_path / "odd.toml"
    odd.write_text(ROBOT.read_text().replace('center_gearing = 10.0',
                                             'center_gearing = 10.0\ncenter_x = "-20 in"'))
    result = simserver("check", str(odd))
    assert result.returncode == 0, result.stderr
    assert (f"{odd}: drivetrain.center_x: warning: -0.508 m puts the centre wheel outside "
            "the robot's outline (length 0.762 m)") in result.stderr


def test_models_lists_the_hdrive_type_from_its_distribution():
    result = simserver("models")
    assert result.returncode == 0, result.stderr
    assert "hdrive  (drivetrain, [drivetrain], from simserver-hdrive)" in result.stdout
    assert "center_x " in result.stdout


def entries(path: Path) -> dict[str, list[object]]:
    """Entry name -> its values, in order, of a WPILib data log (doubles and double arrays)."""
    reader = DataLogReader(str(path))
    assert reader.isValid()
    types: dict[int, tuple[str, str]] = {}
    out: dict[str, list[object]] = {}
    for rec in reader:
        if rec.isStart():
            start = rec.getStartData()
            types[start.entry] = (start.name, start.type)
            out[start.name] = []
        elif not rec.isControl() and rec.getEntry() in types:
            name, kind = types[rec.getEntry()]
            if kind == "double":
                out[name].append(rec.getDouble())
            elif kind == "double[]":
                out[name].append(list(rec.getDoubleArray()))
    return out


def test_run_publishes_and_records_the_hdrive(tmp_path):
    inputs = tmp_path / "strafe.csv"
    inputs.write_text("time,center\n0,0.3\n3,0.3\n")
    log = tmp_path / "run.wpilog"
    port = free_port()
    # Real time rather than --fast: a --fast run of 2 s is over before a client can connect.
    proc = subprocess.Popen(
        [sys.executable, "-m", "simserver", "run", str(ROBOT), "--inputs", str(inputs),
         "--duration", "2", "--serve", str(port), "--record", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    inst = ntcore.NetworkTableInstance.create()
    try:
        inst.startClient4("hdrive-test")
        inst.setServer("127.0.0.1", port)
        opts = ntcore.PubSubOptions(periodic=0.01, sendAll=True)
        center = inst.getDoubleTopic("/simserver/drive/center_speed").subscribe(0.0, opts)
        speeds = inst.getDoubleArrayTopic("/simserver/drive/hdrive_speeds").subscribe([], opts)
        pose = inst.getStructTopic("/simserver/pose", Pose2d).subscribe(Pose2d(), opts)
        listing = ntcore.MultiSubscriber(inst, ["/simserver/drive/"],
                                         ntcore.PubSubOptions(topicsOnly=True))
        published: set[str] = set()
        centers: list[float] = []
        poses: list[Pose2d] = []
        arrays: list[list[float]] = []
        deadline = time.monotonic() + 30.0
        while proc.poll() is None and time.monotonic() < deadline:
            centers += [v.value for v in center.readQueue()]
            arrays += [list(v.value) for v in speeds.readQueue()]
            poses += [v.value for v in pose.readQueue()]
            published |= {t.getName() for t in inst.getTopics("/simserver/drive/")}
            time.sleep(0.01)
        listing.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
        ntcore.NetworkTableInstance.destroy(inst)
    assert proc.returncode == 0, err
    # What a dashboard sees: the centre wheel's speed, the pose moving sideways (left).
    assert centers and max(centers) > 0.5
    assert arrays and all(a[0] == a[1] == 0.0 for a in arrays)
    moving = [p for p in poses if p.Y() > START_Y + 0.01]
    assert len(moving) > 10
    assert all(abs(p.X() - 3.0) < 1e-9 and abs(p.rotation().radians()) < 1e-9 for p in poses)
    assert [p.Y() for p in moving] == sorted(p.Y() for p in moving)
    assert {"/simserver/drive/center_speed", "/simserver/drive/hdrive_speeds"} <= published
    assert "/simserver/drive/hdrive_distances" not in published  # recorded only
    # What the recording holds: the plugin's outputs, published and recorded-only, and the
    # encoder on the centre wheel, which agree with the true pose.
    values = entries(log)
    for name in ("/simserver/drive/center_speed", "/simserver/drive/hdrive_speeds",
                 "/simserver/drive/hdrive_distances", "/simserver/encoders/center/position"):
        assert len(values[name]) >= 150, name
    travel = values["/simserver/encoders/center/position"][-1]
    assert isinstance(travel, float) and travel > 0.5
    assert values["/simserver/drive/hdrive_distances"][-1] == pytest.approx([0.0, 0.0, travel])
    assert values["/simserver/truth/y"][-1] == pytest.approx(START_Y + travel)
    assert values["/simserver/drive/center_speed"][-1] == pytest.approx(
        values["/simserver/encoders/center/velocity"][-1])
