"""`/simserver/pose` is published every tick, also while the robot stands still (before, ntcore
left out values equal to the last one: a parked robot's pose went silent for as long as it
stood). Measured with a real NT client of a real `simserver run --serve`, real time, 20 ms
ticks: before 0 updates a second while parked, after 50."""

from __future__ import annotations

import time

import ntcore
from wpimath.geometry import Pose2d

from simserver.config.loader import default_config_text
from simserver.contract import topics
from tests.ntutil import SimserverProcess, client, free_port, wait_for

EVERY_VALUE = ntcore.PubSubOptions(sendAll=True, pollStorage=1000, keepDuplicates=True,
                                   periodic=0.001)


def test_a_parked_robot_pose_is_published_every_tick(tmp_path):
    cfg = tmp_path / "robot.toml"
    cfg.write_text(default_config_text())
    inputs = tmp_path / "parked.csv"
    inputs.write_text("time,left,right\n0,0,0\n60,0,0\n")
    port = free_port()
    sim = SimserverProcess(str(cfg), "--serve", f"127.0.0.1:{port}", "--inputs", str(inputs),
                           "--duration", "60", log_dir=tmp_path)
    inst = client(port)
    try:
        pose = inst.getStructTopic(topics.POSE, Pose2d).subscribe(Pose2d(), EVERY_VALUE)
        clock = inst.getDoubleTopic(topics.TIME).subscribe(0.0, EVERY_VALUE)
        wait_for(lambda: clock.get() > 1.0, 20, "a second of simulated time")
        pose.readQueue()
        clock.readQueue()
        time.sleep(2.0)
        poses, ticks = pose.readQueue(), clock.readQueue()
        assert sim.alive(), sim.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        sim.interrupt()
        sim.close()
    assert len(ticks) > 50, "simserver ticked too little to judge"
    # One pose per tick (the time topic changes every tick, so it counts them).
    assert len(poses) >= len(ticks) - 1, (len(poses), len(ticks))
    assert len({(p.value.X(), p.value.Y(), p.value.rotation().radians()) for p in poses}) == 1, (
        "the robot moved: not parked")
