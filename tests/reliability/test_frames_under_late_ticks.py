"""Camera frames when simserver's ticks come late: every frame arrives, stamped with its
capture time on the simulation's schedule, however late it was published.

Ticks are made late for real: the simserver process is stopped (SIGSTOP) for 60-180 ms and
continued (SIGCONT) every 0.4-0.9 s while a 30 fps camera with a fixed 30 ms latency publishes
both PhotonVision's and Limelight's topics. Frame *k* is captured at t0 + (k-1)/30 s of
simulated time, so on the robot's clock capture time - (k-1)/30 s must be one constant.

- NetworkTables ticks (simserver a client of a robot-side process that reads every result with
  photonlibpy's ``PhotonCamera.getAllUnreadResults()``; the schedule may only shift where
  simserver said it fell behind real time by more than its 0.25 s catch-up);
- a real robot program in real time through the bridge (``robotpy sim --simserver``, port 5810),
  whose loops go on while simserver is stopped and which then skipped periods.

Before the fix a late tick shifted the stamps of its frames by the delay (up to 160 ms), frames
of the robot's skipped periods were never published, and a frame stamped earlier than the one
before was dropped by ntcore: 21 of 340 (NT ticks) and 55 of 300 (bridge) PhotonVision frames
were lost, and Limelight ``hb`` values were merged away.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import ntcore
import pytest

from tests.e2e.robots import REPO, RobotProgram, config_with, robot_nt
from tests.io.photon_process import RobotProcess, needs_photonlibpy
from tests.io.test_vision_session import camera_config
from tests.ntutil import SimserverProcess, client, free_port, posix_signals

pytestmark = [pytest.mark.network, pytest.mark.slow, needs_photonlibpy, posix_signals]

FPS = 30
STAMP_TOL = 0.001  # s: capture stamps are exact to the µs; the offset estimate may wobble
# s, with the bridge: the robot loops' schedule starts from the earliest-in-its-period loop
# stamp seen so far, so it may move earlier by the spread of robot code's time per loop
# (measured 0.003 ms here); a late tick's shift was a whole number of 20 ms periods.
LOOP_TOL = 0.005
VISIONBOT = REPO / "tests" / "e2e" / "visionbot"
QUEUE = ntcore.PubSubOptions(sendAll=True, pollStorage=100, keepDuplicates=True,
                             periodic=0.001)


class LimelightReader:
    """A LimelightHelpers-style reader that reads the queues of ``hb`` and ``botpose_wpiblue``
    (every value, with its NT server time)."""

    def __init__(self, inst: ntcore.NetworkTableInstance, table: str = "/limelight-front"):
        self.hb_sub = inst.getDoubleTopic(f"{table}/hb").subscribe(-1.0, QUEUE)
        self.pose_sub = inst.getDoubleArrayTopic(f"{table}/botpose_wpiblue").subscribe([], QUEUE)
        self.beats: list[int] = []
        self.captures: list[float] = []  # s of robot time: NT time - latency (LimelightHelpers)

    def read(self) -> None:
        self.beats += [int(v.value) for v in self.hb_sub.readQueue()]
        self.captures += [v.serverTime * 1e-6 - v.value[6] * 1e-3
                          for v in self.pose_sub.readQueue() if len(v.value) >= 11]


def stall_while(pid: int, running: Callable[[], bool], first: float) -> int:
    """SIGSTOP/SIGCONT ``pid`` (60-180 ms stopped, every 0.4-0.9 s, from ``first`` s on)
    while ``running()``; returns how many times it was stopped."""
    rng = random.Random(23)
    stalls = 0
    next_stall = time.monotonic() + first
    while running():
        if time.monotonic() >= next_stall:
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(rng.uniform(0.06, 0.18))
            finally:
                os.kill(pid, signal.SIGCONT)
            stalls += 1
            next_stall = time.monotonic() + rng.uniform(0.4, 0.9)
        time.sleep(0.01)
    return stalls


def missing(sequence: list[int]) -> int:
    """How many values a counting sequence skipped (it must never go back)."""
    assert all(b > a for a, b in pairwise(sequence)), "repeated frames"
    return sum(b - a - 1 for a, b in pairwise(sequence))


def schedule_shifts(offsets: list[float]) -> int:
    """How many times (capture time - frame index / fps) changed by more than STAMP_TOL."""
    return sum(abs(b - a) > STAMP_TOL for a, b in pairwise(offsets))


def test_nt_ticks_stopped_on_purpose_lose_no_frame_and_keep_capture_times(tmp_path):
    cfg, inputs = camera_config(tmp_path, "both")
    text = Path(cfg).read_text().replace('latency = "30 ms"', 'latency = "30 ms"\njitter = "0 ms"')
    Path(cfg).write_text(text)
    port = free_port()
    seconds = 12.0
    robot = RobotProcess(port, seconds=seconds)
    sim = inst = None
    try:
        robot.wait_line("READY", 20)
        inst = client(port, "limelight-reader")
        reader = LimelightReader(inst)
        sim = SimserverProcess(cfg, "--server", f"127.0.0.1:{port}", "--inputs", inputs,
                               "--duration", "60", log_dir=tmp_path)
        end = time.monotonic() + seconds - 1.5

        def running() -> bool:
            reader.read()
            return time.monotonic() < end

        stalls = stall_while(sim.proc.pid, running, first=2.0)
        lines = robot.finish(timeout=30)
        assert sim.interrupt() == 0, sim.stderr()
    finally:
        robot.close()
        if inst is not None:
            ntcore.NetworkTableInstance.destroy(inst)
        if sim is not None:
            sim.close()
    assert stalls >= 10
    fell_behind = re.search(r"fell behind real time (\d+) times", sim.stderr())
    overruns = int(fell_behind.group(1)) if fell_behind else 0
    results = [json.loads(line) for line in lines if line.startswith("{")]
    seqs = [r["seq"] for r in results]
    assert len(seqs) > 250, sim.stderr()
    assert missing(seqs) == 0
    # PhotonVision: the capture stamp, and what getTimestampSeconds() gives robot code.
    for key in ("capture", "timestamp"):
        offsets = [(r["capture_us"] * 1e-6 if key == "capture" else r["timestamp"])
                   - (r["seq"] - 1) / FPS for r in results]
        assert schedule_shifts(offsets) <= overruns, (key, overruns, offsets)
    # Limelight: every hb; NT time - tl on the same schedule (hb counts the frames too).
    assert len(reader.beats) > 250 and missing(reader.beats) == 0
    assert abs(len(reader.captures) - len(reader.beats)) <= 1  # read a moment apart
    offsets = [c - beat / FPS for beat, c in zip(reader.beats, reader.captures, strict=False)]
    assert schedule_shifts(offsets) <= overruns, (overruns, offsets)


@pytest.mark.robot
def test_robot_program_in_real_time_gets_every_frame_at_its_capture_time_when_simserver_stalls(
        tmp_path):
    cfg, _ = config_with(tmp_path, VISIONBOT / "simserver.toml",
                         replace=("lockstep = true", "lockstep = false"))
    cfg.write_text(cfg.read_text().replace("noise = 0.25", 'noise = 0.25\nprotocol = "both"'))
    log = tmp_path / "vision.jsonl"
    robot = RobotProgram(VISIONBOT, cfg, tmp_path, env={"VISIONBOT_LOG": str(log)})
    err = tmp_path / "simserver.stderr"
    try:
        robot.wait_ready()
        with err.open("w") as err_file:
            sim = subprocess.Popen([sys.executable, "-m", "simserver", "run", str(cfg),
                                    "--duration", "10"], cwd=REPO, stdout=subprocess.DEVNULL,
                                   stderr=err_file)
            inst = robot_nt()
            try:
                reader = LimelightReader(inst)

                def running() -> bool:
                    reader.read()
                    return sim.poll() is None

                stalls = stall_while(sim.pid, running, first=3.0)
                reader.read()
            finally:
                ntcore.NetworkTableInstance.destroy(inst)
                if sim.poll() is None:
                    sim.kill()
                sim.wait(10)
    finally:
        robot.close()
    assert sim.returncode == 0, err.read_text()
    assert stalls >= 8
    assert "stale sensors" in err.read_text(), "the stalls made no robot period late"
    results = [json.loads(line) for line in log.read_text().splitlines()]
    seqs = [r["seq"] for r in results]
    assert len(seqs) > 250, err.read_text()
    assert missing(seqs) == 0
    # The world follows the robot's loops: one schedule for the whole run.
    offsets = [r["timestamp"] - (r["seq"] - 1) / FPS for r in results]
    assert max(offsets) - min(offsets) < LOOP_TOL, offsets
    assert len(reader.beats) > 250 and missing(reader.beats) == 0
    gaps = [b - a for a, b in pairwise(reader.captures)]
    assert gaps and max(abs(g - 1 / FPS) for g in gaps) < LOOP_TOL, gaps
