"""End to end: a real `robotpy sim --simserver` robot program reading a simulated camera with
photonlibpy's PhotonCamera and PhotonPoseEstimator, in lock-step.

In lock-step the robot's clock is simserver's, so the timing checks are exact: every frame a
30 fps camera captures arrives once, in order, and robot code sees it exactly its 30 ms latency
after capture, rounded up to the next 20 ms robot loop.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.e2e.robots import REPO, RobotProgram, config_with, simserver
from tests.io.photon_process import needs_photonlibpy

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow, needs_photonlibpy]

VISIONBOT = REPO / "tests" / "e2e" / "visionbot"
X, Y, HEADING = 2.5, 4.0, math.radians(5.0)


def test_photonlibpy_robot_program_reads_frames_on_the_lockstep_clock(tmp_path):
    cfg, _ = config_with(tmp_path, VISIONBOT / "simserver.toml")
    log = tmp_path / "vision.jsonl"
    robot = RobotProgram(VISIONBOT, cfg, tmp_path, env={"VISIONBOT_LOG": str(log)})
    try:
        robot.wait_ready()
        run = simserver(str(cfg), "--lockstep", "--fast", "--duration", "4")
        assert run.returncode == 0, run.stdout + run.stderr
        assert robot.wait_exit(15) == 0, robot.output()
    finally:
        robot.close()
    results = [json.loads(line) for line in log.read_text().splitlines()]
    seqs = [r["seq"] for r in results]
    # 4 s at 30 fps, less the frames still in flight at the end.
    assert len(seqs) >= 115, len(seqs)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "lost or repeated frames"
    assert seqs[0] <= 2
    ages = []
    for r in results:
        ages.append(r["read_at"] - r["timestamp"])
        assert r["ids"], r
    # Published over NT, but the bridge holds each period until the frames have arrived.
    assert min(ages) >= 0.030 - 1e-6, min(ages)
    assert max(ages) <= 0.050 + 1e-6, max(ages)
    estimates = [r["multitag"] for r in results if r["multitag"] is not None]
    assert len(estimates) > 0.9 * len(results)
    for x, y, heading in estimates:
        assert math.hypot(x - X, y - Y) < 0.15
        assert abs(math.remainder(heading - HEADING, math.tau)) < math.radians(3)
