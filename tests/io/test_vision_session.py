"""Cameras through `simserver run`: the config's `[cameras]` reach photonlibpy's PhotonCamera
and PhotonPoseEstimator in a separate robot-side process, and a Limelight-style reader.

The publishers and the camera model have their own tests (test_photonvision.py,
test_limelight.py, tests/models/test_camera.py); these check the wiring from a config file to
the wire, with a robot standing still in front of the 2026 blue hub so the truth is known.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import ntcore
import pytest

from simserver.config.loader import default_config_text
from tests.io.photon_process import MOUNT, RobotProcess, needs_photonlibpy
from tests.ntutil import FAST, REPO, SimserverProcess, client, free_port, wait_for

pytestmark = [pytest.mark.network, pytest.mark.slow]

LIMELIGHT_ROBOT = Path(__file__).with_name("limelight_robot.py")
START = 'start = { x = "2 m", y = "4 m", heading = "0 deg" }'
X, Y, HEADING = 2.5, 4.0, math.radians(5.0)  # standing still, facing the blue hub's tags


def camera_config(tmp_path, protocol: str) -> tuple[str, str]:
    """(config path, inputs path): the kitbot standing at (X, Y, HEADING) with a front
    camera mounted as test_photonvision's robot expects."""
    x, y, z, roll, pitch, yaw = MOUNT
    text = default_config_text().replace(
        START, f'start = {{ x = "{X} m", y = "{Y} m", heading = "{math.degrees(HEADING)} deg" }}')
    assert START not in text
    text += f"""
[cameras.front]
x = "{x} m"
y = "{y} m"
z = "{z} m"
roll = "{roll} rad"
pitch = "{pitch} rad"
yaw = "{yaw} rad"
width = 960
height = 720
intrinsics = {{ fx = 600.0, fy = 600.0, cx = 479.5, cy = 359.5 }}
fps = 30
latency = "30 ms"
noise = 0.25
protocol = "{protocol}"
"""
    cfg = tmp_path / "camera.toml"
    cfg.write_text(text)
    inputs = tmp_path / "still.csv"
    inputs.write_text("time,left,right\n0,0,0\n60,0,0\n")
    return str(cfg), str(inputs)


@needs_photonlibpy
def test_photonlibpy_robot_reads_the_configured_camera(tmp_path):
    """Every frame arrives once and in order; every result sees tags; the multi-tag estimate
    from PhotonPoseEstimator is within 0.15 m and 3° of where the robot stands."""
    cfg, inputs = camera_config(tmp_path, "photonvision")
    port = free_port()
    robot = RobotProcess(port, seconds=6.0)
    sim = None
    try:
        robot.wait_line("READY", 20)
        sim = SimserverProcess(cfg, "--server", f"127.0.0.1:{port}", "--inputs", inputs,
                               "--duration", "60", log_dir=tmp_path)
        lines = robot.finish(timeout=30)
    finally:
        robot.close()
        if sim is not None:
            sim.interrupt()
            sim.close()
    assert robot.proc.returncode == 0, robot.stderr()
    results = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(results) > 60, sim.stderr() if sim else ""
    seqs = [r["seq"] for r in results]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "lost or repeated frames"
    estimates = [r["multitag"] for r in results if r["multitag"] is not None]
    assert len(estimates) > 0.9 * len(results)
    for r in results:
        assert r["ids"], "a result without tags while facing the hub"
    for mx, my, _, mh in estimates:
        assert math.hypot(mx - X, my - Y) < 0.15
        assert abs(math.remainder(mh - HEADING, math.tau)) < math.radians(3)


def test_limelight_table_gives_botpose_and_targeting(tmp_path):
    """A Limelight reader of `limelight-front`: tv = 1, tid among the hub's tags, and
    botpose_wpiblue (MegaTag1) within 0.15 m and 3° of where the robot stands."""
    cfg, inputs = camera_config(tmp_path, "limelight")
    port = free_port()
    sim = SimserverProcess(cfg, "--serve", f"127.0.0.1:{port}", "--inputs", inputs,
                           "--duration", "60", log_dir=tmp_path)
    inst = client(port)
    try:
        table = "/limelight-front"
        tv = inst.getDoubleTopic(f"{table}/tv").subscribe(-1.0, FAST)
        tid = inst.getDoubleTopic(f"{table}/tid").subscribe(-1.0, FAST)
        botpose = inst.getDoubleArrayTopic(f"{table}/botpose_wpiblue").subscribe([], FAST)
        wait_for(lambda: tv.get() == 1.0 and len(botpose.get()) >= 11, 20,
                 "a Limelight target and pose")
        pose = botpose.get()
        assert math.hypot(pose[0] - X, pose[1] - Y) < 0.15
        assert abs(math.remainder(math.radians(pose[5]) - HEADING, math.tau)) < math.radians(3)
        tag_count = int(pose[7])
        assert tag_count >= 1 and len(pose) == 11 + 7 * tag_count
        assert int(tid.get()) in {int(pose[11 + 7 * k]) for k in range(tag_count)}
        assert sim.alive(), sim.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        sim.interrupt()
        sim.close()


def test_limelight_megatag2_follows_the_heading_sent_and_the_internal_imu(tmp_path):
    """`simserver run` beside a robot program (its own process) that calls
    SetRobotOrientation every 20 ms and reads getBotPoseEstimate_wpiBlue_MegaTag2 and
    `stddevs`: with the true heading sent, MegaTag2 is within 3 cm of where the robot stands
    and its yaw is the one sent; with a heading 10° off it keeps that heading (as the device
    does) and its position moves away; after SetIMUMode(2) the camera's own IMU gives the
    true heading again (within 0.3°) and the position within 3 cm. Every estimate counts
    tags and lists their raw fiducials; `stddevs` has 12 values, MegaTag2's x and y
    positive."""
    cfg, inputs = camera_config(tmp_path, "limelight")
    port = free_port()
    true_yaw = math.degrees(HEADING)
    robot = subprocess.Popen(
        [sys.executable, str(LIMELIGHT_ROBOT), "--port", str(port), "--yaw", str(true_yaw),
         "--wrong-yaw", str(true_yaw + 10.0), "--wrong-after", "4", "--internal-after", "6",
         "--seconds", "8"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    sim = None
    try:
        assert robot.stdout is not None and robot.stdout.readline().strip() == "READY"
        sim = SimserverProcess(cfg, "--server", f"127.0.0.1:{port}", "--inputs", inputs,
                               "--duration", "60", log_dir=tmp_path)
        out, err = robot.communicate(timeout=40)
    finally:
        if robot.poll() is None:
            robot.kill()
            robot.wait(10)
        if sim is not None:
            sim.interrupt()
            sim.close()
    assert robot.returncode == 0, err
    estimates = [json.loads(line)["mt2"] for line in out.splitlines() if line.startswith("{")]
    by_phase: dict[str, list[dict]] = {}
    for e in estimates:
        assert e["tag_count"] >= 1 and len(e["raw_ids"]) == e["tag_count"], e
        assert len(e["stddevs"]) == 12 and e["stddevs"][6] > 0 and e["stddevs"][7] > 0, e
        by_phase.setdefault(e["phase"], []).append(e)
    assert all(len(by_phase.get(p, [])) > 10 for p in ("true", "wrong", "internal")), \
        {p: len(v) for p, v in by_phase.items()}
    for e in by_phase["true"]:
        assert e["yaw"] == pytest.approx(true_yaw, abs=1e-9)
        assert math.hypot(e["x"] - X, e["y"] - Y) < 0.03
    for e in by_phase["wrong"]:
        assert e["yaw"] == pytest.approx(true_yaw + 10.0, abs=1e-9)
        assert math.hypot(e["x"] - X, e["y"] - Y) > 0.1
    for e in by_phase["internal"]:
        assert abs(e["yaw"] - true_yaw) < 0.3
        assert math.hypot(e["x"] - X, e["y"] - Y) < 0.03
