"""A detector camera's frames on the wire, read by a robot program in its own process:
photonlibpy's ``PhotonCamera`` (PhotonVision object detection) and the Limelight table
(neural detector: tv/tx/ty/ta, tclass, rawdetections, t2d), as LimelightHelpers reads them.

The robot side is tests/pieces/detect_robot.py; this process drives a camera with a detector
past game pieces in real time and publishes every frame with both publishers, as the session
does for ``protocol = "both"``. References: the frames published (exact, through the wire),
the same camera without noise at the same poses (what noise may change), and the photonlibpy
simulation's conventions for object-detection targets (no fiducial id, identity pose,
ambiguity -1).
"""

from __future__ import annotations

import json
import math
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import ntcore
import numpy as np
import pytest
from wpimath.geometry import Rotation3d, Transform3d, Translation3d

from simserver.io.limelight import LimelightPublisher
from simserver.models.camera import Camera, CameraSpec
from simserver.models.detection import Detectables, DetectorSpec
from simserver.models.pieces.types import PieceType
from tests.io.photon_process import free_udp_port, needs_photonlibpy
from tests.ntutil import REPO, client, free_port, wait_for

pytestmark = pytest.mark.network

ROBOT = Path(__file__).with_name("detect_robot.py")
NOISE = 0.5  # px on each box edge
FUEL = PieceType("fuel", "sphere", radius=0.075, height=0.15, mass=0.215, restitution=0.6,
                 friction=0.7, rolling=0.03, drag_coefficient=0.47, drag_area=0.0177,
                 class_id=0)
NOTE = PieceType("note", "ring", radius=0.18, height=0.05, mass=0.235, restitution=0.2,
                 friction=0.7, rolling=0.1, drag_coefficient=1.0, drag_area=0.01, class_id=1)
TYPES = [FUEL, NOTE]
PIECES = Detectables.of(TYPES, np.array([0, 0, 1, 0, 1]), np.array(
    [(3.0, 4.0, 0.075), (3.6, 4.5, 0.075), (4.0, 3.3, 0.025), (2.6, 3.7, 0.075),
     (9.0, 4.0, 0.025)]))  # the last one out of range


def spec(noise: float) -> CameraSpec:
    labels = tuple((t.class_id, t.name) for t in TYPES)
    return CameraSpec("intake", Transform3d(Translation3d(0.3, 0.0, 0.6),
                                            Rotation3d(0.0, math.radians(20), 0.0)),
                      960, 720, intrinsics=(600.0, 600.0, 479.5, 359.5), fps=30.0,
                      latency=0.03, latency_std=0.004, pixel_noise=noise, max_range=5.0,
                      detector=DetectorSpec(labels=labels))


def drive(t: float) -> tuple[float, float, float]:
    return 1.2 + 0.15 * t, 4.0 + 0.2 * math.sin(t), 0.3 * math.sin(0.8 * t)


class RobotProcess:
    """tests/pieces/detect_robot.py as a subprocess, its stdout lines in a queue."""

    def __init__(self, port: int, seconds: float, photon: bool):
        self.proc = subprocess.Popen(
            [sys.executable, str(ROBOT), "--port", str(port), "--timesync-port",
             str(free_udp_port()), "--seconds", str(seconds), *(["--photon"] if photon else [])],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_ready(self, timeout: float) -> None:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            line = ""
        assert line == "READY", f"robot process did not start: {line!r}"

    def finish(self, timeout: float) -> list[dict]:
        self.proc.wait(timeout)
        time.sleep(0.2)
        out = []
        while not self.lines.empty():
            line = self.lines.get()
            if line.startswith("{"):
                out.append(json.loads(line))
        assert self.proc.returncode == 0, self.proc.stderr.read() if self.proc.stderr else ""
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def run(photon: bool, seconds: float = 3.0) -> tuple[list[dict], dict, dict, list]:
    """Publish a detector camera's frames for ``seconds`` s in real time; returns what the
    robot process read, the frames by sequence id and by robot publish time (µs), and the
    noise-free frames at the same capture poses."""
    if photon:  # before any clock is read: importing photonlibpy starts the HAL, whose
        # FPGA clock then becomes ntcore's time base
        import simserver.io.photonresult  # noqa: F401
        from simserver.io.photonvision import PhotonVisionPublisher
    port = free_port()
    robot = RobotProcess(port, seconds + 1.5, photon)
    inst = None
    try:
        robot.wait_ready(20)
        inst = client(port, "simserver")
        wait_for(lambda: inst.isConnected() and inst.getServerTimeOffset() is not None, 10,
                 "the robot's NT server")
        offset, t0 = inst.getServerTimeOffset(), ntcore._now()

        def robot_time(t: float) -> float:
            return (t0 + t * 1e6 + offset) / 1e6

        cam = Camera(spec(NOISE), rng=np.random.default_rng(11))
        truth = Camera(spec(0.0))
        pubs: list = [LimelightPublisher(inst, cam.spec, [], robot_time)]
        if photon:
            pubs.append(PhotonVisionPublisher(inst, cam.spec, robot_time))
        by_seq, by_time, clean = {}, {}, {}
        next_tick = time.monotonic()
        while (t := (ntcore._now() - t0) / 1e6) < seconds:
            for frame in cam.update(t, drive(t), PIECES):
                for pub in pubs:
                    pub.publish(frame)
                by_seq[frame.sequence] = frame
                by_time[round(robot_time(frame.delivery_time) * 1e6)] = frame
                clean[frame.sequence] = truth.capture(frame.capture_time, frame.robot_pose,
                                                      PIECES)
            inst.flush()
            next_tick += 0.01
            time.sleep(max(0.0, next_tick - time.monotonic()))
        lines = robot.finish(timeout=30)
        for pub in pubs:
            pub.close()
    finally:
        if inst is not None:
            ntcore.NetworkTableInstance.destroy(inst)
        robot.close()
    return lines, by_seq, by_time, clean


def close_to_truth(seen, clean) -> None:
    """A noisy detection agrees with the noise-free one within the noise: the box centre
    moves σ/√2 px per axis (5σ allowed), the area by the edges' noise."""
    assert seen.class_id == clean.class_id
    tol = math.degrees(5 * NOISE / math.sqrt(2) / 600.0)
    assert abs(seen.yaw - clean.yaw) < tol and abs(seen.pitch - clean.pitch) < tol
    (x0, y1), _, (x1, y0), _ = clean.corners
    edge = 5 * NOISE * 2 * ((x1 - x0) + (y1 - y0)) / (960 * 720) * 100
    assert abs(seen.area - clean.area) < edge + 1e-9


@needs_photonlibpy
@pytest.mark.slow
def test_photonlibpy_reads_detected_pieces():
    """photonlibpy's PhotonCamera decodes each frame's pieces as PhotonVision reports
    object-detection targets: fiducialId -1, objDetectId the class, objDetectConf the
    confidence (float32 on the wire), yaw/pitch/area exactly as published (which are within
    the pixel noise of the noise-free detection), skew 0, identity camera-to-target, ambiguity
    -1, the box as both corner lists, no multi-tag result; frames arrive once, in order."""
    lines, by_seq, _, clean = run(photon=True)
    results = [line["photon"] for line in lines if "photon" in line]
    assert len(results) > 50
    seqs = [r["seq"] for r in results]
    assert seqs == sorted(set(seqs))
    seen_classes = set()
    for r in results:
        frame = by_seq[r["seq"]]
        assert not r["multitag"] and r["has_targets"] == bool(frame.pieces)
        assert len(r["targets"]) == len(frame.pieces) == len(clean[r["seq"]].pieces)
        truths = {p.piece: p for p in clean[r["seq"]].pieces}
        for got, piece in zip(r["targets"], frame.pieces, strict=True):
            assert got["fiducial"] == -1 and got["class"] == piece.class_id
            assert got["conf"] == pytest.approx(piece.confidence, abs=1e-6)
            assert (got["yaw"], got["pitch"], got["area"]) == pytest.approx(
                (piece.yaw, piece.pitch, piece.area), abs=1e-12)
            assert got["skew"] == 0.0 and got["ambiguity"] == -1.0
            assert got["pose"] == [0.0, 0.0, 0.0]
            assert got["corners"] == got["rect"] == [list(c) for c in piece.corners]
            close_to_truth(piece, truths[piece.piece])
            seen_classes.add(piece.class_id)
    assert seen_classes == {0, 1}


@pytest.mark.slow
def test_limelight_detector_table():
    """A detector Limelight publishes, per frame: tv 1, tx/ty from the crosshair, txnc/tync/
    ta of the largest piece, tid -1, tclass its class label, t2d with its class id, and
    rawdetections with 12 values per piece in Limelight's layout [class id, txnc, tync, ta,
    corners x, y: top-left, top-right, bottom-right, bottom-left], no tags; the values agree
    with the noise-free detection within the pixel noise."""
    lines, _, by_time, clean = run(photon=False)
    records = [line["limelight"] for line in lines if "limelight" in line]
    checked, classes = 0, set()
    for rec in records:
        frame = by_time.get(rec["time"])
        if frame is None or "rawdetections" not in rec:
            continue
        raw = rec["rawdetections"]
        assert len(raw) == 12 * len(frame.pieces)
        assert rec["rawfiducials"] == [] and rec["botpose_wpiblue"][7] == 0.0
        truths = {p.piece: p for p in clean[frame.sequence].pieces}
        for i, piece in enumerate(frame.pieces):
            row = raw[12 * i: 12 * i + 12]
            (x0, y1), (x1, _), (_, y0), _ = piece.corners
            assert row == pytest.approx([piece.class_id, piece.yaw, piece.pitch, piece.area,
                                         x0, y0, x1, y0, x1, y1, x0, y1], abs=1e-12)
            close_to_truth(piece, truths[piece.piece])
            classes.add(piece.class_id)
        if frame.pieces:
            best = frame.pieces[0]
            assert rec["tv"] == 1.0 and rec["tid"] == -1.0
            assert rec["tclass"] == ("fuel", "note")[best.class_id]
            assert (rec["txnc"], rec["tync"], rec["ta"]) == pytest.approx(
                (best.yaw, best.pitch, best.area), abs=1e-12)
            px, py = best.center
            assert rec["tx"] == pytest.approx(math.degrees(math.atan((px - 479.5) / 600.0)))
            assert rec["ty"] == pytest.approx(math.degrees(math.atan((359.5 - py) / 600.0)))
            t2d = rec["t2d"]
            assert t2d[0] == 1.0 and t2d[1] == len(frame.pieces) and t2d[9] == -1.0
            assert t2d[10] == best.class_id
        else:
            assert rec["tv"] == 0.0 and rec["tclass"] == ""
        checked += 1
    assert checked > 50 and classes == {0, 1}
