"""`simserver run` against a real NT server on loopback that plays the robot program: its own
topics recorded by ``--record`` (``NT:<topic>`` at the simulated time they were published), and
runs in which no robot program ever connected failing instead of passing.

Tolerances: real-time runs map NT server time to simulated time with ntcore's time offset and
the real-time loop's pacing; two values published together but stamped 0.4 s apart must land
0.4 s apart in the recording to 1 ms (same offset), and every stamp must fall inside the run.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from pathlib import Path

import ntcore
import pytest
from click.testing import CliRunner
from wpimath.geometry import Pose2d

from simserver.cli import main
from simserver.runs.scenario import NO_ROBOT
from tests.io.test_wpilog import read_log
from tests.ntutil import REPO, client, free_port, wait_for

pytestmark = pytest.mark.network

S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
PERIOD = 0.02  # s between the fake robot program's publishes
LATE = 0.4  # s: how far in the past /robot/late is stamped


def run(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "simserver", "run", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


class FakeRobot:
    """An NT server on loopback publishing what a robot program would, every PERIOD, from a
    thread: a Field2d pose, a struct:Pose2d, a number stamped now and one stamped LATE s ago,
    a string, and simserver's motor input (which must not be recorded twice)."""

    def __init__(self, tmp_path: Path):
        self.port = free_port()
        self.inst = ntcore.NetworkTableInstance.create()
        self.inst.startServer(str(tmp_path / "robot-nt.json"), "127.0.0.1", 0, self.port)
        inst = self.inst
        self.field = inst.getDoubleArrayTopic("/SmartDashboard/Field/Robot").publish()
        self.pose = inst.getStructTopic("/robot/pose", Pose2d).publish()
        self.now = inst.getDoubleTopic("/robot/now").publish()
        self.late = inst.getDoubleTopic("/robot/late").publish()
        self.name = inst.getStringTopic("/robot/name").publish()
        self.motor = inst.getDoubleTopic("/simserver/motors/left").publish()
        self.published = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> FakeRobot:
        self.name.set("fake")
        self._thread.start()
        return self

    def _loop(self) -> None:
        i = 0
        while not self._stop.wait(PERIOD):
            i += 1
            now = ntcore._now()
            self.field.set([1.0 + 0.01 * i, 2.0, float(i)], now)
            self.pose.set(Pose2d(1.0 + 0.01 * i, 2.0, 0.0), now)
            self.now.set(float(i), now)
            self.late.set(float(i), now - round(LATE * 1e6))
            self.motor.set(0.0, now)
            self.published = i

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        ntcore.NetworkTableInstance.destroy(self.inst)


def robot_entries(log: dict) -> set[str]:
    return {name for name in log if name.startswith("NT:")}


def test_record_has_the_robot_programs_topics_at_simulated_time(tmp_path):
    out = tmp_path / "run.wpilog"
    with FakeRobot(tmp_path) as robot:
        result = run("--server", f"127.0.0.1:{robot.port}", "--duration", "2", "--record",
                     str(out), "--json", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    log = read_log(out)
    assert robot_entries(log) == {"NT:/SmartDashboard/Field/Robot", "NT:/robot/pose",
                                  "NT:/robot/now", "NT:/robot/late", "NT:/robot/name"}
    assert log["NT:/SmartDashboard/Field/Robot"].type == "double[]"
    assert log["NT:/robot/pose"].type == "struct:Pose2d"
    assert log["NT:/robot/name"].type == "string"
    assert "/.schema/struct:Pose2d" in log  # AdvantageScope can decode the pose
    pose = log["NT:/robot/pose"].records[-1][1]
    assert len(pose) == 24
    # About 2 s of 20 ms periods, every one of them (NT sends all values with sendAll), plus
    # those from connecting to the world's reset (stamped at the start) and the 0.25 s
    # simserver waits at the end for values on their way; the fake robot's sleep-paced loop
    # is slower than 50 Hz, never faster.
    field = log["NT:/SmartDashboard/Field/Robot"].records
    assert 50 <= len(field) <= (2.0 + 0.25 + 0.5) / PERIOD
    # Every stamp lies inside the simulated run (2 s; the first values come after connecting).
    end = max(ts for e in log.values() for ts, _ in e.records)
    assert all(0 < ts <= end for ts, _ in field)
    assert field[-1][0] > 1.5e6
    # /robot/late is published with /robot/now but stamped 0.4 s earlier: so is its record
    # (once both are inside the run: earlier ones are stamped at its start, 1 µs).
    now = {v: ts for ts, v in log["NT:/robot/now"].records}
    late = {v: ts for ts, v in log["NT:/robot/late"].records}
    common = sorted(i for i in set(now) & set(late) if late[i] > 1)
    assert len(common) >= 40
    for i in common:
        assert (now[i] - late[i]) * 1e-6 == pytest.approx(LATE, abs=0.001)
    # A record is stamped when its value was published, not when it arrived: values of one
    # topic are PERIOD apart (± the fake robot's sleep jitter), increasing.
    stamps = [ts for ts, _ in log["NT:/robot/now"].records]
    assert stamps == sorted(stamps)


def test_record_robot_topics_selects_prefixes_or_none(tmp_path):
    with FakeRobot(tmp_path) as robot:
        some = tmp_path / "some.wpilog"
        result = run("--server", f"127.0.0.1:{robot.port}", "--duration", "1", "--record",
                     str(some), "--record-robot-topics", "/robot/p",
                     "--record-robot-topics", "/SmartDashboard/")
        assert result.returncode == 0, result.stderr
        nothing = tmp_path / "none.wpilog"
        result = run("--server", f"127.0.0.1:{robot.port}", "--duration", "1", "--record",
                     str(nothing), "--record-robot-topics", "none")
        assert result.returncode == 0, result.stderr
    assert robot_entries(read_log(some)) == {"NT:/robot/pose", "NT:/SmartDashboard/Field/Robot"}
    assert robot_entries(read_log(nothing)) == set()


def test_a_record_robot_topics_prefix_without_a_slash_is_a_usage_error():
    result = CliRunner().invoke(main, ["run", "--duration", "1", "--record", "x.wpilog",
                                       "--record-robot-topics", "SmartDashboard"])
    assert result.exit_code == 2
    assert "--record-robot-topics" in result.output and "starts with '/'" in result.output


# --- a robot program that never connected ------------------------------------------------------


def write_check(tmp_path: Path, body: str = 'min_battery_voltage = "5 V"\n',
                duration: str = "0.5 s") -> Path:
    path = tmp_path / "check.toml"
    path.write_text(f'duration = "{duration}"\n[expect]\n{body}')
    return path


def test_a_check_without_enable_fails_when_no_robot_program_connects(tmp_path):
    out = tmp_path / "r.json"
    nobody = free_port()  # nothing listens here
    result = run("--server", f"127.0.0.1:{nobody}", "--check", str(write_check(tmp_path)),
                 "--json", str(out))
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is False and doc["reason"] == NO_ROBOT
    assert "no robot program connected" in doc["error"]
    assert all(c["passed"] for c in doc["checks"])  # the battery held: only the robot is missing
    assert f"overall: FAIL ({NO_ROBOT})" in result.stdout
    assert "no robot program connected during the run" in result.stderr


def test_an_nt_run_with_a_duration_fails_when_no_robot_program_connects(tmp_path):
    out = tmp_path / "r.json"
    result = run("--server", f"127.0.0.1:{free_port()}", "--duration", "0.5", "--json",
                 str(out))
    assert result.returncode == 1
    doc = json.loads(out.read_text())
    assert doc["passed"] is False and "no robot program connected" in doc["error"]


def test_a_scripted_check_needs_no_robot_program(tmp_path):
    out = tmp_path / "r.json"
    result = run("--inputs", str(S_CURVE), "--fast", "--check", str(write_check(tmp_path)),
                 "--json", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is True and doc["reason"] is None and doc["error"] is None


def test_a_robot_program_driving_a_served_run_makes_it_pass(tmp_path):
    # --serve: the robot program is the NT client and drives simserver's motor topics.
    port = free_port()
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "simserver", "run", "--serve",
                             f"127.0.0.1:{port}", "--check",
                             str(write_check(tmp_path, duration="3 s")),
                             "--json", str(out)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    inst = client(port, "fake-robot")
    try:
        pub = inst.getDoubleTopic("/simserver/motors/left").publish(
            ntcore.PubSubOptions(periodic=0.005, keepDuplicates=True))

        def sent() -> bool:
            pub.set(0.2)
            inst.flush()
            return proc.poll() is not None

        wait_for(sent, 30, "simserver to finish")
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stdout + stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is True and doc["reason"] is None
    assert math.isfinite(doc["sim_time"])
