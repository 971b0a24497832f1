"""The PhotonVision wire format, read by photonlibpy itself.

The end-to-end test runs a robot-side process (tests/io/photon_robot.py) that hosts the NT
server as a robot program does and reads our camera with photonlibpy's ``PhotonCamera`` and
``PhotonPoseEstimator``; this process publishes frames of a camera driven along a path in real
time, as the session would. References: the frames we published (ids, order, yaw), the true
robot pose at capture (pose estimates), the robot time of the capture (timestamps), and the
robot process's own clock (that the timestamps are in its time base).
"""

from __future__ import annotations

import json
import math
import time

import ntcore
import numpy as np
import pytest

from tests.io.photon_process import MOUNT, NO_PHOTONLIBPY, RobotProcess

pytest.importorskip("photonlibpy", reason=NO_PHOTONLIBPY)

from photonlibpy.packet import Packet
from photonlibpy.targeting import PhotonPipelineResult
from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.io.photonresult import MESSAGE_UUID, pipeline_result
from simserver.io.photonvision import PhotonVisionPublisher
from simserver.models.camera import (
    Camera,
    CameraSpec,
    Fiducial,
)
from tests.ntutil import client, free_port, wait_for

pytestmark = pytest.mark.network

TYPE_STRING = f"photonstruct:PhotonPipelineResult:{MESSAGE_UUID}"  # as PhotonVision types it

K = (600.0, 600.0, 479.5, 359.5)
# Stated tolerances (see the test docstrings for why).
TIMESTAMP_TOL = 1e-3  # s: result timestamp vs robot time of the capture
MULTITAG_POS_TOL = 0.15  # m: coprocessor multi-tag estimate vs the true robot position
MULTITAG_HEADING_TOL = math.radians(3)
SINGLE_POS_TOL = 0.25  # m: lowest-ambiguity single-tag estimate (ambiguity < 0.2)


def mount() -> Transform3d:
    x, y, z, roll, pitch, yaw = MOUNT
    return Transform3d(Translation3d(x, y, z), Rotation3d(roll, pitch, yaw))


def drive(t: float) -> tuple[float, float, float]:
    """A slow arc in front of the blue hub's tags (x from 1.8 m to 3.2 m), turning."""
    return 1.8 + 0.3 * t, 4.0 + 0.4 * math.sin(0.8 * t), 0.25 * math.sin(0.6 * t)


@pytest.mark.slow
def test_photonlibpy_reads_every_frame_with_ids_poses_and_timestamps():
    """photonlibpy's PhotonCamera decodes every frame we publish, once, in order, with the
    ids we published; PhotonPoseEstimator's multi-tag estimate is within 0.15 m / 3° of the
    true robot pose (0.25 px corner noise, tags 2-3 m away) and its lowest-ambiguity
    estimate within 0.25 m when the ambiguity is below 0.2; getTimestampSeconds() is the
    robot time of the capture within 1 ms (it is exact to the µs by construction; the slack
    covers nothing but float rounding), and when read by the robot it is between the frame's
    latency and that plus 0.1 s old on the robot's own clock."""
    port = free_port()
    robot = RobotProcess(port, seconds=7.0)
    inst = None
    try:
        robot.wait_line("READY", 20)
        inst = client(port, "simserver")
        wait_for(lambda: inst.isConnected() and inst.getServerTimeOffset() is not None, 10,
                 "the robot's NT server")
        offset_us = inst.getServerTimeOffset()
        t0_us = ntcore._now()

        def robot_time(t: float) -> float:  # simulated s (our clock since t0) -> robot s
            return (t0_us + t * 1e6 + offset_us) / 1e6

        spec = CameraSpec("front", mount(), 960, 720, intrinsics=K, fps=30.0, latency=0.03,
                          latency_std=0.005, pixel_noise=0.25, min_area=0.02, max_range=5.0)
        cam = Camera(spec, season_fiducials("2026"), rng=np.random.default_rng(5))
        pub = PhotonVisionPublisher(inst, spec, robot_time)
        published = {}
        tick = 0.01
        next_tick = time.monotonic()
        while True:
            t = (ntcore._now() - t0_us) / 1e6
            if t > 4.5:
                break
            for frame in cam.update(t, drive(t)):
                pub.publish(frame)
                published[frame.sequence] = frame
            inst.flush()
            next_tick += tick
            time.sleep(max(0.0, next_tick - time.monotonic()))
        lines = robot.finish(timeout=20)
    finally:
        if inst is not None:
            ntcore.NetworkTableInstance.destroy(inst)
        robot.close()
    assert robot.proc.returncode == 0, robot.stderr()
    results = [json.loads(line) for line in lines if line.startswith("{")]
    summary = json.loads(next(line for line in lines if line.startswith("SUMMARY"))[8:])
    assert summary["message_uuid"] == MESSAGE_UUID and summary["type"] == TYPE_STRING
    assert summary["connected_seen"]

    # Every frame, once, in order: the first frames of a new publisher can be merged by
    # ntcore before the server's subscription reaches it, so counting starts at the first
    # one received, which must be among the first three.
    seqs = [r["seq"] for r in results]
    assert seqs == sorted(set(seqs)), "duplicated or out of order"
    assert seqs[0] <= min(published) + 2
    assert seqs == [s for s in sorted(published) if s >= seqs[0]], "lost frames"
    assert len(seqs) > 100

    multi_checked = single_checked = 0
    for r in results:
        frame = published[r["seq"]]
        assert r["ids"] == [t.id for t in frame.tags]
        assert r["yaws"] == pytest.approx([t.yaw for t in frame.tags], abs=1e-9)
        assert all(n == 4 for n in r["corners"])
        capture = robot_time(frame.capture_time)
        assert r["capture_us"] == round(capture * 1e6)
        assert r["timestamp"] == pytest.approx(capture, abs=TIMESTAMP_TOL)
        age = r["read_at"] - r["timestamp"]
        assert frame.latency - 0.002 <= age <= frame.latency + 0.1, age
        x, y, heading = frame.robot_pose
        if frame.multitag is not None:
            assert r["multitag_ids"] == sorted(r["ids"])
            mx, my, _, mh = r["multitag"]
            assert math.hypot(mx - x, my - y) < MULTITAG_POS_TOL
            assert abs(math.remainder(mh - heading, math.tau)) < MULTITAG_HEADING_TOL
            multi_checked += 1
        else:
            assert r["multitag"] is None
        if r["ids"] and min(r["ambiguities"]) < 0.2:
            sx, sy, _, _ = r["single"]
            assert math.hypot(sx - x, sy - y) < SINGLE_POS_TOL
            single_checked += 1
    assert multi_checked > 50 and single_checked > 50


def test_packed_result_unpacks_to_the_same_frame():
    """photonlibpy's own serde round-trips what we pack: metadata, targets (ids, angles,
    area, both transforms, corners), and the multi-tag result."""
    tags = [Fiducial(1, Pose3d(Translation3d(3.0, 0.3, 0.5), Rotation3d(0, 0, math.pi))),
            Fiducial(2, Pose3d(Translation3d(3.2, -0.4, 0.7), Rotation3d(0, 0, math.pi - 0.3)))]
    spec = CameraSpec("c", Transform3d(Translation3d(0, 0, 0.5), Rotation3d()), intrinsics=K,
                      pixel_noise=0.5)
    frame = Camera(spec, tags, rng=np.random.default_rng(1)).capture(0.0, (0.0, 0.0, 0.0))
    assert len(frame.tags) == 2 and frame.multitag is not None
    packed = PhotonPipelineResult.photonStruct.pack(
        pipeline_result(frame, 1_000_000, 1_030_000)).getData()
    back = PhotonPipelineResult.photonStruct.unpack(Packet(packed))
    assert back.metadata.captureTimestampMicros == 1_000_000
    assert back.metadata.publishTimestampMicros == 1_030_000
    assert back.metadata.sequenceID == frame.sequence
    assert back.getLatencyMillis() == pytest.approx(30.0)
    for got, tag in zip(back.targets, frame.tags, strict=True):
        assert got.fiducialId == tag.id
        assert (got.yaw, got.pitch, got.area, got.poseAmbiguity) == pytest.approx(
            (tag.yaw, tag.pitch, tag.area, tag.ambiguity), rel=1e-12)
        for a, b in ((got.bestCameraToTarget, tag.best), (got.altCameraToTarget, tag.alt)):
            assert (a.translation() - b.translation()).norm() < 1e-12
            assert np.allclose(a.rotation().toMatrix(), b.rotation().toMatrix(), atol=1e-12)
        assert np.allclose([(c.x, c.y) for c in got.detectedCorners], tag.corners, atol=1e-12)
        assert len(got.minAreaRectCorners) == 4
    assert back.multitagResult.fiducialIDsUsed == [1, 2]
    est = back.multitagResult.estimatedPose
    assert (est.best.translation() - frame.multitag.field_to_camera.translation()).norm() \
        < 1e-12


def test_scalar_topics_heartbeat_and_properties_over_nt():
    """A plain NT reader (a dashboard) sees the documented topics: hasTarget, target angles,
    targetPose (struct Transform3d), latencyMillis, a heartbeat that changes every frame, and
    rawBytes with the type string and message_uuid property photonlibpy checks."""
    port = free_port()
    server = ntcore.NetworkTableInstance.create()
    server.startServer("", "127.0.0.1", 0, port)
    inst = client(port, "simserver")
    try:
        wait_for(lambda: inst.isConnected() and inst.getServerTimeOffset() is not None, 10,
                 "connection")
        spec = CameraSpec("cam", Transform3d(Translation3d(0, 0, 0.5), Rotation3d()),
                          intrinsics=K, latency=0.02, latency_std=0.0)
        tag = Fiducial(7, Pose3d(Translation3d(3.0, 0.5, 0.5), Rotation3d(0, 0, math.pi)))
        cam = Camera(spec, [tag])
        opts = ntcore.PubSubOptions(sendAll=True, keepDuplicates=True)
        table = "/photonvision/cam"
        # As PhotonCamera does: announce every topic of the table to this instance.
        announced = ntcore.MultiSubscriber(server, ["/photonvision/"],
                                           ntcore.PubSubOptions(topicsOnly=True))
        heartbeat = server.getIntegerTopic(f"{table}/heartbeat").subscribe(-1, opts)
        has_target = server.getBooleanTopic(f"{table}/hasTarget").subscribe(False)
        yaw = server.getDoubleTopic(f"{table}/targetYaw").subscribe(math.nan)
        latency = server.getDoubleTopic(f"{table}/latencyMillis").subscribe(math.nan)
        pose = server.getStructTopic(f"{table}/targetPose", Transform3d).subscribe(Transform3d())
        pub = PhotonVisionPublisher(inst, spec, lambda t: t + 100.0)
        frames = []
        for k in range(30):
            for frame in cam.update(k * 0.01, (0.0, 0.0, 0.0)):
                pub.publish(frame)
                frames.append(frame)
            inst.flush()
            time.sleep(0.012)
        wait_for(lambda: yaw.get() == pytest.approx(frames[-1].tags[0].yaw), 5, "target yaw")
        raw = server.getTopic(f"{table}/rawBytes")
        assert raw.getTypeString() == TYPE_STRING
        assert str(raw.getProperty("message_uuid")).strip('"') == MESSAGE_UUID
        assert has_target.get() is True
        assert latency.get() == pytest.approx(20.0, abs=1e-6)
        assert (pose.get().translation() - frames[-1].tags[0].best.translation()).norm() \
            < 1e-9
        beats = [v.value for v in heartbeat.readQueue()]
        assert beats and beats == sorted(set(beats)) and beats[-1] == frames[-1].sequence
        announced.close()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        ntcore.NetworkTableInstance.destroy(server)
