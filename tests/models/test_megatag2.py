"""MegaTag2 as a Limelight computes it (simserver.models.megatag2): exact without noise, the
given heading held fixed, standard deviations that match the spread they describe.

References: the true robot pose the frame was captured at; for a wrong heading, an
independent least-squares solve (scipy.optimize.least_squares on the reprojection error of
every corner, projected with wpimath transforms) of the same corners with the same fixed
orientation; for the standard deviations, the spread of many seeded frames.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import least_squares
from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.models.camera import Camera, CameraSpec, Fiducial, fiducial_corners
from simserver.models.megatag2 import TagLocalizer, rotation_matrix

TAGS = season_fiducials("2026")
MOUNT = Transform3d(Translation3d(0.2, 0.1, 0.4), Rotation3d(0.05, -0.2, 0.3))
# Robot poses on the 2026 field that see one tag, two, and four or more.
# 9, 2, 4, 6, 1 and 1 tags in view.
POSES = [(3.0, 2.5, 0.4), (2.5, 4.0, math.radians(185)), (12.0, 4.0, 0.1),
         (10.81, 0.93, 0.35), (7.58, 1.44, -0.58), (13.58, 4.92, 1.86)]


def spec(noise: float = 0.0, **kw) -> CameraSpec:
    return CameraSpec("front", kw.pop("mount", MOUNT), 1280, 960,
                      fov_diagonal=math.radians(75), pixel_noise=noise, latency_std=0.0, **kw)


def reference_xy(frame, s: CameraSpec, yaw: float, start: tuple[float, float]
                 ) -> np.ndarray:
    """Independent solve: (x, y) minimizing the pixel error of every corner of every tag
    (projected through wpimath's Pose3d/Transform3d and a pinhole camera) with the robot's
    yaw fixed, z = roll = pitch = 0, started at ``start``."""
    fx, fy, cx, cy = s.camera_matrix()
    corners = {t.id: fiducial_corners(t) for t in TAGS}
    obs = np.array([c for t in frame.tags for c in t.corners]).ravel()
    pts = np.concatenate([corners[t.id] for t in frame.tags])

    def pixels(xy: np.ndarray) -> np.ndarray:
        cam = Pose3d(xy[0], xy[1], 0.0, Rotation3d(0.0, 0.0, yaw)).transformBy(
            s.robot_to_camera)
        out = []
        for p in pts:
            q = Pose3d(*p, Rotation3d()).relativeTo(cam).translation()  # x fwd, y left, z up
            out += [fx * -q.Y() / q.X() + cx, fy * -q.Z() / q.X() + cy]
        return np.array(out)

    sol = least_squares(lambda xy: pixels(xy) - obs, np.array(start), xtol=1e-15,
                        ftol=1e-15, gtol=1e-15)
    return sol.x


def test_megatag2_is_exact_without_noise_with_one_tag_or_many_and_lens_distortion():
    """With the true orientation, noise-free corners give the true position within 1e-9 m,
    from one tag or many, with and without lens distortion, and with the robot tilted
    (roll and pitch given)."""
    checked = {1: 0, 2: 0}
    for s in (spec(), spec(distortion=(0.08, -0.05, 0.001, -0.002, 0.01))):
        cam, loc = Camera(s, TAGS), TagLocalizer(s, TAGS)
        for x, y, h in POSES:
            frame = cam.capture(0.0, (x, y, h))
            assert frame.tags, (x, y, h)
            est = loc.megatag2(frame, h)
            assert est is not None
            assert (est.x, est.y) == pytest.approx((x, y), abs=1e-9)
            assert est.ids == tuple(t.id for t in frame.tags)
            assert est.error < 1e-6 and est.std_x == est.std_y == 0.0  # no noise: exact
            checked[min(len(frame.tags), 2)] += 1
    assert checked[1] >= 2 and checked[2] >= 6
    # A tilted robot: the camera rig rolled and pitched; the tags seen through it, then the
    # same orientation given to MegaTag2.
    roll, pitch, (x, y, h) = 0.03, -0.05, POSES[2]
    tilted = Transform3d(Translation3d(), Rotation3d(roll, pitch, 0.0)) + MOUNT
    # Rz(h)·Ry·Rx applied to the mount is what Rotation3d(roll, pitch, h) does to the robot.
    assert np.allclose(rotation_matrix(roll, pitch, h),
                       Rotation3d(roll, pitch, h).toMatrix(), atol=1e-12)
    frame = Camera(spec(mount=tilted), TAGS).capture(0.0, (x, y, h))
    est = TagLocalizer(spec(), TAGS).megatag2(frame, h, pitch, roll)
    assert est is not None and (est.x, est.y) == pytest.approx((x, y), abs=1e-9)


def test_megatag2_holds_a_wrong_heading_and_solves_the_position_for_it():
    """Given a heading 5° off, MegaTag2 keeps it (as the device does) and reports the
    position that best fits the corners with that heading: the independent solve's, within
    1e-6 m; that position is off the truth by about the tags' distance × 5°."""
    s = spec()
    cam, loc = Camera(s, TAGS), TagLocalizer(s, TAGS)
    off = math.radians(5)
    for x, y, h in POSES[:4]:
        frame = cam.capture(0.0, (x, y, h))
        est = loc.megatag2(frame, h + off)
        assert est is not None
        ref = reference_xy(frame, s, h + off, (x, y))
        assert (est.x, est.y) == pytest.approx(tuple(ref), abs=1e-6)
        miss = math.hypot(est.x - x, est.y - y)
        near = min(t.distance for t in frame.tags)
        assert 0.3 * near * off < miss < 2.0 * max(t.distance for t in frame.tags) * off
        assert est.error > 1e-3  # the corners no longer fit exactly


def test_megatag2_without_a_usable_orientation_or_tags_gives_nothing():
    s = spec()
    frame = Camera(s, TAGS).capture(0.0, POSES[0])
    loc = TagLocalizer(s, TAGS)
    assert loc.megatag2(frame, math.nan) is None
    assert loc.megatag2(frame, 0.4, math.inf) is None
    assert TagLocalizer(s, [Fiducial(99, Pose3d())]).megatag2(frame, 0.4) is None  # unknown tags
    empty = Camera(s, TAGS).capture(0.0, (8.0, 4.0, math.nan))
    assert loc.megatag2(empty, 0.0) is None
    assert loc.megatag1_stddevs(empty, [0.0] * 6) == [0.0] * 6


@pytest.mark.parametrize("pose", [POSES[2], POSES[5]], ids=["four tags", "one tag"])
def test_standard_deviations_match_the_spread_of_many_frames(pose):
    """Over 400 seeded frames at one pose, the reported standard deviations of MegaTag2's
    x and y, and of MegaTag1's x, y and yaw, are within 25 % of the measured spread
    (MegaTag1 from the camera's own multi-tag or single-tag solution)."""
    s = spec(0.4)
    cam, loc = Camera(s, TAGS, rng=np.random.default_rng(4)), TagLocalizer(s, TAGS)
    mount_inverse = MOUNT.inverse()
    mt2, mt1, std2, std1 = [], [], [], []
    for _ in range(400):
        frame = cam.capture(0.0, pose)
        est = loc.megatag2(frame, pose[2])
        mt2.append((est.x, est.y))
        std2.append((est.std_x, est.std_y))
        if frame.multitag is not None:
            camera = Pose3d().transformBy(frame.multitag.field_to_camera)
        else:
            tag = frame.tags[0]
            camera = next(t.pose for t in TAGS if t.id == tag.id).transformBy(
                tag.best.inverse())
        robot = camera.transformBy(mount_inverse)
        r = robot.rotation()
        p1 = [robot.X(), robot.Y(), robot.Z(), *(math.degrees(a) for a in (r.X(), r.Y(),
                                                                            r.Z()))]
        mt1.append((p1[0], p1[1], p1[5]))
        ids = frame.multitag.ids if frame.multitag is not None else None
        s1 = loc.megatag1_stddevs(frame, p1, ids)
        std1.append((s1[0], s1[1], s1[5]))
    for measured, reported in ((np.std(mt2, axis=0), np.median(std2, axis=0)),
                               (np.std(mt1, axis=0), np.median(std1, axis=0))):
        assert reported == pytest.approx(measured, rel=0.25)


def test_same_seed_same_estimates():
    runs = []
    for _ in range(2):
        cam = Camera(spec(0.3), TAGS, rng=np.random.default_rng(9))
        loc = TagLocalizer(spec(0.3), TAGS)
        runs.append([tuple(loc.megatag2(cam.capture(0.0, p), p[2])) for p in POSES])
    assert runs[0] == runs[1]
