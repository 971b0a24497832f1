"""The camera model's runtime settings (what robot code may change): pipelines, tag filter,
throttle, driver mode; called directly, no server.

References: the frames of a camera without the setting (the same seed, the same poses), the
frame rate arithmetic of a fixed capture schedule, and the config's pipeline table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from wpimath.geometry import Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.models.camera import (
    Camera,
    CameraRequest,
    CameraSpec,
    DetectionFrame,
    PipelineSpec,
    VisionSystem,
)
from simserver.models.detection import Detectables, DetectorSpec

TAGS = season_fiducials("2026")
MOUNT = Transform3d(Translation3d(0.3, 0.0, 0.5), Rotation3d(0.0, math.radians(-15), 0.0))
POSE = (2.5, 4.0, math.radians(5.0))  # facing the blue hub: tags 26, 25, 4, 6, 3 in view
K = (600.0, 600.0, 479.5, 359.5)


def spec(**kw) -> CameraSpec:
    base = dict(name="front", robot_to_camera=MOUNT, width=960, height=720, intrinsics=K,
                fps=30.0, latency=0.03, latency_std=0.004, pixel_noise=0.25, min_area=0.02)
    base.update(kw)
    return CameraSpec(**base)


def run(cam: Camera, start: float, end: float, step: float = 0.01) -> list:
    frames = []
    for k in range(round((end - start) / step) + 1):
        frames += cam.update(start + k * step, POSE)
    return frames


def test_without_pipelines_the_camera_has_one_pipeline_made_of_its_fields():
    s = spec()
    assert s.pipeline_count == 1 and s.pipeline(0) is s
    with pytest.raises(IndexError):
        s.pipeline(1)
    cam = Camera(s, TAGS, rng=np.random.default_rng(1))
    with pytest.raises(IndexError):
        cam.set_pipeline(1)
    frames = run(cam, 0.0, 0.5)
    assert frames and all(f.pipeline == 0 and not f.driver_mode for f in frames)


def test_a_pipeline_switch_changes_the_tags_the_rate_and_the_resolution():
    """Pipeline 0 reports tag 26 only at 30 fps; pipeline 1 every tag at 60 fps and 640×480
    (calibration scaled by 2/3: a tag's yaw, an angle, stays within the noise); from the
    next capture on, and the schedule continues from there."""
    s = spec(pipelines=(PipelineSpec(960, 720, 30.0, tag_ids=frozenset({26})),
                        PipelineSpec(640, 480, 60.0)))
    assert s.pipeline(1).intrinsics == pytest.approx((400.0, 400.0, 319.5, 239.5))
    cam = Camera(s, TAGS, rng=np.random.default_rng(2))
    before = run(cam, 0.0, 1.0)
    assert {t.id for f in before for t in f.tags} == {26}
    cam.set_pipeline(1)
    after = [f for f in run(cam, 1.01, 3.0) if f.capture_time > 1.0]
    assert all(f.pipeline == 1 for f in after)
    assert {25, 26} <= {t.id for f in after for t in f.tags}
    gaps = np.diff([f.capture_time for f in after])
    assert gaps == pytest.approx(1 / 60.0, abs=1e-9)
    yaw26 = [next(t.yaw for t in f.tags if t.id == 26) for f in (before[-1], after[-1])]
    assert yaw26[0] == pytest.approx(yaw26[1], abs=0.1)


def test_a_detector_pipeline_reports_pieces_and_no_tags():
    det = DetectorSpec(labels=((0, "fuel"),))
    s = spec(pipelines=(PipelineSpec(960, 720, 30.0), PipelineSpec(960, 720, 30.0, det)))
    assert s.detects_pieces() and s.detector is None
    cam = Camera(s, TAGS, rng=np.random.default_rng(3))
    ball = Detectables(np.array([[4.5, 4.2, 0.6]]), np.array([0.075]), np.array([0.15]),
                       np.array([0]), np.array([True]))
    assert not isinstance(cam.capture(0.0, POSE, ball), DetectionFrame)
    cam.set_pipeline(1)
    frame = cam.capture(0.1, POSE, ball)
    assert isinstance(frame, DetectionFrame) and frame.tags == () and frame.pipeline == 1
    assert [p.class_id for p in frame.pieces] == [0]


def test_robot_codes_tag_filter_overrides_the_pipelines_and_can_be_cleared():
    s = spec(tag_ids=frozenset({26}))
    cam = Camera(s, TAGS, rng=np.random.default_rng(4))
    assert [t.id for t in cam.capture(0.0, POSE).tags] == [26]
    cam.set_tag_filter([25, 3])
    assert sorted(t.id for t in cam.capture(0.1, POSE).tags) == [3, 25]
    cam.set_tag_filter([])
    assert cam.capture(0.2, POSE).tags == ()
    cam.set_tag_filter(None)
    assert [t.id for t in cam.capture(0.3, POSE).tags] == [26]


def test_throttle_processes_one_capture_in_throttle_plus_one():
    """throttle_set 2 at 30 fps: a frame every 0.1 s (30 / 3 fps), on the original schedule;
    0 gives the full rate back."""
    cam = Camera(spec(latency_std=0.0), TAGS, rng=np.random.default_rng(5))
    full = run(cam, 0.0, 1.0)
    cam.set_throttle(2)
    throttled = [f for f in run(cam, 1.01, 4.0) if f.capture_time > 1.0 + 1e-9]
    assert len(full) == pytest.approx(30, abs=1)
    assert np.diff([f.capture_time for f in throttled]) == pytest.approx(0.1, abs=1e-9)
    assert len(throttled) == pytest.approx(30, abs=1)  # 3 s at 10 fps
    cam.set_throttle(0)
    again = [f for f in run(cam, 4.01, 5.0) if f.capture_time > 4.1]
    assert np.diff([f.capture_time for f in again]) == pytest.approx(1 / 30.0, abs=1e-9)
    with pytest.raises(ValueError):
        cam.set_throttle(-1)


def test_driver_mode_delivers_frames_without_targets():
    cam = Camera(spec(), TAGS, rng=np.random.default_rng(6))
    cam.set_driver_mode(True)
    frames = run(cam, 0.0, 1.0)
    assert len(frames) >= 28 and all(f.tags == () and f.multitag is None and f.driver_mode
                                     for f in frames)
    cam.set_driver_mode(False)
    assert cam.capture(1.5, POSE).tags


def test_same_seed_and_same_settings_give_the_same_frames():
    """Determinism: two vision systems with one seed, driven alike and sent the same
    settings at the same times, deliver identical frames."""
    s = spec(pipelines=(PipelineSpec(960, 720, 30.0), PipelineSpec(640, 480, 45.0)))

    def drive() -> list:
        vision = VisionSystem([s], TAGS, rng=np.random.default_rng(7))
        out = []
        for k in range(300):
            t = k * 0.01
            if k == 50:
                vision.apply(CameraRequest("front", "pipeline", 1))
            if k == 120:
                vision.apply(CameraRequest("front", "throttle", 1))
            if k == 200:
                vision.apply(CameraRequest("front", "tag_filter", [25]))
            out += vision.update(t, (POSE[0] + 0.002 * k, POSE[1], POSE[2]))
        return out

    first, second = drive(), drive()
    assert len(first) > 50
    assert first == second
