"""Cameras: what each frame sees, when it is delivered, and how good its pose solutions are.

References: closed-form pinhole geometry, wpimath's own transforms (Transform3d(camera pose,
tag pose) is the exact camera-to-tag transform), OpenCV (projectPoints for distortion, IPPE
and SQPNP for the pose solutions on the same noisy corners) and photonlibpy's PhotonCameraSim
(which tags are visible). OpenCV and PhotonCameraSim are test-only references: simserver
itself never imports cv2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from wpimath.geometry import Pose2d, Pose3d, Rotation2d, Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.models.camera import (
    LINE_OF_SIGHT_MARGIN,
    MAX_CATCHUP,
    TAG36H11_SIZE,
    BearingTarget,
    Camera,
    CameraSpec,
    Fiducial,
    VisionSystem,
    min_area_rect,
)
from simserver.models.obstacles import Obstacle
from tests.io.photon_process import NO_PHOTONLIBPY

K = (600.0, 600.0, 479.5, 359.5)  # fx, fy, cx, cy (px) of a 960×720 camera
W, H = 960, 720
CAM_Z = 0.5  # m
HALF = TAG36H11_SIZE / 2
# Noise-free geometry is exact up to float rounding through a few 3×3 products.
EXACT_M = 1e-9  # m
EXACT_RAD = 1e-9
EXACT_PX = 1e-7


def level_camera(**kw) -> CameraSpec:
    """A camera at the robot centre, CAM_Z up, looking along the robot's heading."""
    args = dict(robot_to_camera=Transform3d(Translation3d(0, 0, CAM_Z), Rotation3d()),
                width=W, height=H, intrinsics=K, latency=0.0, latency_std=0.0)
    args.update(kw)
    return CameraSpec("cam", **args)


def facing_tag(tag_id: int, x: float, y: float = 0.0, z: float = CAM_Z,
               turn: float = 0.0) -> Fiducial:
    """A tag at (x, y, z) facing the -x direction (toward a camera at the origin), turned by
    ``turn`` rad about the vertical."""
    return Fiducial(tag_id, Pose3d(Translation3d(x, y, z), Rotation3d(0, 0, math.pi + turn)))


def seen(cam: Camera, pose=(0.0, 0.0, 0.0)) -> list[int]:
    return [t.id for t in cam.capture(0.0, pose).tags]


def rotation_angle(a: Rotation3d, b: Rotation3d) -> float:
    """Angle of the rotation taking a to b, rad."""
    m = np.asarray(a.toMatrix()).T @ np.asarray(b.toMatrix())
    # atan2 of sin and cos of the angle stays accurate near 0, unlike acos of the trace.
    return math.atan2(np.linalg.norm(m - m.T) / (2 * math.sqrt(2)), (np.trace(m) - 1) / 2)


def camera_pose(robot: tuple[float, float, float], mount: Transform3d) -> Pose3d:
    return Pose3d(Pose2d(robot[0], robot[1], Rotation2d(robot[2]))).transformBy(mount)


# --- closed-form geometry ---------------------------------------------------------------


def test_tag_straight_ahead_projects_as_a_centred_square_of_closed_form_size():
    d = 3.0
    cam = Camera(level_camera(), [facing_tag(7, d)])
    (tag,) = cam.capture(0.0, (0.0, 0.0, 0.0)).tags
    fx, _, cx, cy = K
    half_px = fx * HALF / d
    expected = [(cx - half_px, cy + half_px), (cx + half_px, cy + half_px),
                (cx + half_px, cy - half_px), (cx - half_px, cy - half_px)]
    for got, want in zip(tag.corners, expected, strict=True):
        assert got == pytest.approx(want, abs=EXACT_PX)
    assert tag.yaw == pytest.approx(0.0, abs=1e-9) and tag.pitch == pytest.approx(0.0, abs=1e-9)
    assert tag.area == pytest.approx((2 * half_px) ** 2 / (W * H) * 100, rel=1e-9)
    t = tag.best.translation()
    assert (t.X(), t.Y(), t.Z()) == pytest.approx((d, 0.0, 0.0), abs=EXACT_M)
    assert rotation_angle(tag.best.rotation(), Rotation3d(0, 0, math.pi)) < EXACT_RAD
    assert tag.best_error < 1e-9 and tag.ambiguity == 0.0


@pytest.mark.parametrize("dy, dz", [(0.8, 0.0), (-0.8, 0.0), (0.0, 0.6), (0.5, -0.4)])
def test_yaw_is_positive_right_and_pitch_positive_up_in_closed_form(dy, dz):
    d = 4.0
    cam = Camera(level_camera(), [facing_tag(3, d, dy, CAM_Z + dz)])
    (tag,) = cam.capture(0.0, (0.0, 0.0, 0.0)).tags
    # Pinhole: the centre's pixel offset is -f·dy/d (right of centre when the tag is right).
    assert tag.yaw == pytest.approx(math.degrees(math.atan(-dy / d)), abs=1e-9)
    assert tag.pitch == pytest.approx(math.degrees(math.atan(dz / d)), abs=1e-9)
    assert tag.center == pytest.approx((K[2] - K[0] * dy / d, K[3] - K[1] * dz / d),
                                       abs=EXACT_PX)


def test_noise_free_poses_equal_wpimath_transforms_on_the_2026_field():
    """Best camera-to-tag = Transform3d(camera pose, tag pose); multi-tag = camera pose;
    yaw and pitch from that transform's direction; tag ids from the layout."""
    mount = Transform3d(Translation3d(0.25, -0.1, 0.6), Rotation3d(0.03, -0.2, 0.4))
    tags = season_fiducials("2026")
    poses = {t.id: t.pose for t in tags}
    cam = Camera(level_camera(robot_to_camera=mount), tags)
    rng = np.random.default_rng(11)
    checked = multi = 0
    for _ in range(150):
        robot = (rng.uniform(1, 15.5), rng.uniform(0.5, 7.5), rng.uniform(-math.pi, math.pi))
        frame = cam.capture(0.0, robot)
        cpose = camera_pose(robot, mount)
        for tag in frame.tags:
            truth = Transform3d(cpose, poses[tag.id])
            assert (tag.best.translation() - truth.translation()).norm() < EXACT_M
            assert rotation_angle(tag.best.rotation(), truth.rotation()) < EXACT_RAD
            assert tag.yaw == pytest.approx(math.degrees(math.atan(-truth.Y() / truth.X())),
                                            abs=1e-7)
            assert tag.pitch == pytest.approx(math.degrees(math.atan(truth.Z() / truth.X())),
                                              abs=1e-7)
            checked += 1
        if len(frame.tags) >= 2:
            f2c = frame.multitag.field_to_camera
            assert (f2c.translation() - cpose.translation()).norm() < EXACT_M
            assert rotation_angle(f2c.rotation(), cpose.rotation()) < EXACT_RAD
            assert list(frame.multitag.ids) == sorted(t.id for t in frame.tags)
            multi += 1
        else:
            assert frame.multitag is None
        assert [t.area for t in frame.tags] == sorted((t.area for t in frame.tags),
                                                      reverse=True)
    assert checked > 300 and multi > 50  # the poses really exercise the geometry


def test_visible_tags_match_photonlibpy_camera_sim(monkeypatch):
    """Same intrinsics, same poses: the same tags, except at grazing angles (> 80° from the
    tag's normal), where PhotonCameraSim's facing test (hypot of two angles) is approximate.
    Areas agree to 0.1 % (PhotonVision's convex-hull area), best poses to 1 mm."""
    pytest.importorskip("cv2")
    pytest.importorskip("photonlibpy", reason=NO_PHOTONLIBPY)
    from photonlibpy.timesync import timeSyncServer

    monkeypatch.setattr(timeSyncServer.inst, "start", lambda: None)  # no UDP 5810
    from photonlibpy import PhotonCamera
    from photonlibpy.estimation import TargetModel
    from photonlibpy.simulation import PhotonCameraSim, SimCameraProperties, VisionTargetSim
    from robotpy_apriltag import AprilTagField, AprilTagFieldLayout

    layout = AprilTagFieldLayout.loadField(AprilTagField.k2026RebuiltWelded)
    props = SimCameraProperties()
    fx, fy, cx, cy = K
    props.setCalibrationFromIntrinsics(W, H, np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]]),
                                       np.zeros((8, 1)))
    sim = PhotonCameraSim(PhotonCamera("reference"), props, layout, minTargetAreaPercent=0.0,
                          maxSightRange=1e9)
    targets = [VisionTargetSim(t.pose, TargetModel.AprilTag36h11(), t.ID)
               for t in layout.getTags()]
    mount = Transform3d(Translation3d(0.3, 0.1, 0.5), Rotation3d(0.05, -0.26, 0.2))
    cam = Camera(level_camera(robot_to_camera=mount), season_fiducials("2026"))
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(200):
        robot = (rng.uniform(1, 15.5), rng.uniform(0.5, 7.5), rng.uniform(-math.pi, math.pi))
        cpose = camera_pose(robot, mount)
        ref = {t.fiducialId: t for t in sim.process(0.0, cpose, targets).targets}
        ours = {t.id: t for t in cam.capture(0.0, robot).tags}
        for tag_id in set(ref) ^ set(ours):
            to_cam = Transform3d(layout.getTagPose(tag_id), cpose).translation()
            incidence = math.degrees(math.acos(to_cam.X() / to_cam.norm()))
            assert incidence > 80, (tag_id, incidence)
        for tag_id in set(ref) & set(ours):
            assert ours[tag_id].area == pytest.approx(ref[tag_id].area, rel=1e-3)
            diff = ours[tag_id].best.translation() - ref[tag_id].bestCameraToTarget.translation()
            assert diff.norm() < 1e-3
            compared += 1
    assert compared > 300


def test_distorted_corners_match_opencv_project_points():
    cv2 = pytest.importorskip("cv2")
    dist = (0.12, -0.3, 0.002, -0.001, 0.1)
    mount = Transform3d(Translation3d(0, 0, CAM_Z), Rotation3d(0.0, 0.0, 0.0))
    cam = Camera(level_camera(robot_to_camera=mount, distortion=dist),
                 [facing_tag(1, 2.5, 0.6, 0.8, turn=0.4), facing_tag(2, 3.0, -0.9, 0.3)])
    frame = cam.capture(0.0, (0.0, 0.0, 0.0))
    assert sorted(t.id for t in frame.tags) == [1, 2]
    cpose = camera_pose((0.0, 0.0, 0.0), mount)
    fx, fy, cx, cy = K
    kmat = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    for tag in frame.tags:
        fid = {1: facing_tag(1, 2.5, 0.6, 0.8, turn=0.4), 2: facing_tag(2, 3.0, -0.9, 0.3)}
        tpose = fid[tag.id].pose
        corners = [tpose.transformBy(Transform3d(Translation3d(0, y, z), Rotation3d()))
                   for y, z in ((-HALF, -HALF), (HALF, -HALF), (HALF, HALF), (-HALF, HALF))]
        rel = [Transform3d(cpose, c).translation() for c in corners]
        obj = np.array([[-p.Y(), -p.Z(), p.X()] for p in rel])  # optical axes
        img, _ = cv2.projectPoints(obj, np.zeros(3), np.zeros(3), kmat, np.array(dist))
        assert np.allclose(np.array(tag.corners), img.reshape(4, 2), atol=1e-6)
        # Pose solutions still recover the true transform (noise-free).
        truth = Transform3d(cpose, tpose)
        assert (tag.best.translation() - truth.translation()).norm() < 1e-9


# --- pose solutions with noise ---------------------------------------------------------


def _ippe_reference(corners):
    """OpenCV's IPPE_SQUARE on PhotonVision's corner order, as photonlibpy calls it."""
    cv2 = pytest.importorskip("cv2")
    # IPPE_SQUARE wants (-s,s),(s,s),(s,-s),(-s,-s) in the tag plane (x right, y down).
    obj = np.array([[-HALF, HALF, 0], [HALF, HALF, 0], [HALF, -HALF, 0], [-HALF, -HALF, 0]])
    # photonlibpy reorders both lists (backwards, shifted by one): corners 1, 0, 3, 2.
    img = np.array([corners[1], corners[0], corners[3], corners[2]], dtype=np.float64)
    fx, fy, cx, cy = K
    kmat = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    _, _, tvecs, errs = cv2.solvePnPGeneric(obj, img, kmat, None,
                                            flags=cv2.SOLVEPNP_IPPE_SQUARE)
    t = tvecs[0].ravel()
    return np.array([t[2], -t[0], -t[1]]), errs[0, 0] / errs[1, 0]


@pytest.mark.parametrize("distance, sigma", [(2.0, 0.5), (4.0, 0.5), (3.0, 1.0)])
def test_noisy_single_tag_pose_errors_match_opencv_ippe_statistics(distance, sigma):
    """On the very same noisy corners, our best-pose translation error has the same median
    and 90th percentile as OpenCV IPPE's (within 15 %), and the mean ambiguity agrees
    within 0.1."""
    tag = facing_tag(5, distance * math.cos(0.2), distance * math.sin(0.2), CAM_Z + 0.2,
                     turn=0.2 + math.radians(30))
    cam = Camera(level_camera(pixel_noise=sigma), [tag], rng=np.random.default_rng(7))
    truth = Transform3d(camera_pose((0.0, 0.0, 0.0), level_camera().robot_to_camera),
                        tag.pose).translation()
    t_true = np.array([truth.X(), truth.Y(), truth.Z()])
    ours, ref, amb_ours, amb_ref = [], [], [], []
    for _ in range(400):
        (obs,) = cam.capture(0.0, (0.0, 0.0, 0.0)).tags
        bt = obs.best.translation()
        ours.append(np.linalg.norm(np.array([bt.X(), bt.Y(), bt.Z()]) - t_true))
        t_ref, amb = _ippe_reference(obs.corners)
        ref.append(np.linalg.norm(t_ref - t_true))
        amb_ours.append(obs.ambiguity)
        amb_ref.append(amb)
    for q in (50, 90):
        assert np.percentile(ours, q) == pytest.approx(np.percentile(ref, q), rel=0.15)
    assert abs(np.mean(amb_ours) - np.mean(amb_ref)) < 0.1


@pytest.mark.parametrize("distance, sigma", [(1.5, 0.5), (2.5, 0.8), (4.0, 0.5)])
def test_reported_best_pose_is_the_least_squares_fit_to_the_reported_corners(distance, sigma):
    """Reprojecting the reported pose onto the reported (noisy) corners gives best_error,
    and that error is at the least-squares minimum, found here by iterating
    Gauss-Newton (finite differences on wpimath transforms) to convergence from the reported
    pose: median within 0.5 %, every frame within 10 %."""
    tag = facing_tag(9, distance, 0.3, 0.7, turn=0.5)
    cam = Camera(level_camera(pixel_noise=sigma), [tag], rng=np.random.default_rng(2))
    fx, fy, cx, cy = K
    model = [(0, -HALF, -HALF), (0, HALF, -HALF), (0, HALF, HALF), (0, -HALF, HALF)]

    def residuals(pose: Transform3d, corners) -> np.ndarray:
        out = []
        for (x, y, z), (u, v) in zip(model, corners, strict=True):
            p = pose.translation() + Translation3d(x, y, z).rotateBy(pose.rotation())
            out += [cx - fx * p.Y() / p.X() - u, cy - fy * p.Z() / p.X() - v]
        return np.array(out)

    def moved(pose: Transform3d, v: np.ndarray) -> Transform3d:
        return pose + Transform3d(Translation3d(*v[3:]), Rotation3d(*v[:3]))

    ratios = []
    for _ in range(30):
        (obs,) = cam.capture(0.0, (0.0, 0.0, 0.0)).tags
        e_reported = math.sqrt(np.mean(residuals(obs.best, obs.corners) ** 2))
        assert e_reported == pytest.approx(obs.best_error, rel=1e-9)
        pose = obs.best
        for _ in range(30):
            r0 = residuals(pose, obs.corners)
            jac = np.column_stack([(residuals(moved(pose, step), obs.corners) - r0) / 1e-7
                                   for step in np.eye(6) * 1e-7])
            pose = moved(pose, -np.linalg.lstsq(jac, r0, rcond=None)[0])
        e_min = math.sqrt(np.mean(residuals(pose, obs.corners) ** 2))
        ratios.append(e_reported / e_min)
    assert np.median(ratios) < 1.005
    assert min(ratios) > 1 - 1e-9 and max(ratios) < 1.10


def test_noisy_multitag_estimate_matches_opencv_sqpnp_on_the_same_corners():
    cv2 = pytest.importorskip("cv2")
    tags = [facing_tag(1, 3.0, -0.8, 0.6), facing_tag(2, 3.2, 0.5, 0.9, turn=0.3),
            facing_tag(3, 2.6, 0.1, 0.3, turn=-0.4)]
    mount = level_camera().robot_to_camera
    cam = Camera(level_camera(pixel_noise=0.5), tags, rng=np.random.default_rng(4))
    cpose = camera_pose((0.0, 0.0, 0.0), mount)
    fx, fy, cx, cy = K
    kmat = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    by_id = {t.id: t for t in tags}
    diffs, errs = [], []
    for _ in range(100):
        frame = cam.capture(0.0, (0.0, 0.0, 0.0))
        obj, img = [], []
        for obs in sorted(frame.tags, key=lambda t: t.id):
            for (y, z), uv in zip(((-HALF, -HALF), (HALF, -HALF), (HALF, HALF),
                                   (-HALF, HALF)), obs.corners, strict=True):
                p = by_id[obs.id].pose.transformBy(Transform3d(Translation3d(0, y, z),
                                                               Rotation3d()))
                obj.append([-p.Y(), -p.Z(), p.X()])  # field NWU -> an EDN-like object frame
                img.append(uv)
        _, rvecs, tvecs, _ = cv2.solvePnPGeneric(np.array(obj), np.array(img), kmat, None,
                                                 flags=cv2.SOLVEPNP_SQPNP)
        rot, _ = cv2.Rodrigues(rvecs[0])
        cam_obj = -rot.T @ tvecs[0].ravel()  # camera position in the object frame
        ref = np.array([cam_obj[2], -cam_obj[0], -cam_obj[1]])
        got = frame.multitag.field_to_camera.translation()
        ours = np.array([got.X(), got.Y(), got.Z()])
        truth = np.array([cpose.X(), cpose.Y(), cpose.Z()])
        diffs.append(np.linalg.norm(ours - ref))
        errs.append(np.linalg.norm(ref - truth))
    # Both solve the same least-squares problem: they differ far less than either's error.
    assert np.percentile(diffs, 90) < 0.1 * np.percentile(errs, 50) + 1e-4


def test_pose_update_table_is_the_cayley_transform_of_the_rotation_step():
    """The table the Gauss-Newton steps turn their rotations with gives
    (I - [w/2]×)⁻¹(I + [w/2]×) in homogeneous coordinates: a rotation by 2·atan(|w|/2)."""
    from simserver.models.camera import _CAYLEY

    for w in np.random.default_rng(3).normal(0.0, 0.3, (20, 3)):
        wh = np.concatenate(([1.0], w))
        out = np.outer(wh, wh).ravel() @ _CAYLEY
        rot = (out[:16] / out[16]).reshape(4, 4)
        half = 0.5 * np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        expected = np.linalg.solve(np.eye(3) - half, np.eye(3) + half)
        np.testing.assert_allclose(rot[:3, :3], expected, rtol=0, atol=1e-14)
        assert rot[3].tolist() == [0, 0, 0, 1] and rot[:3, 3].tolist() == [0, 0, 0]
        angle = math.acos((np.trace(rot[:3, :3]) - 1) / 2)
        assert angle == pytest.approx(2 * math.atan(np.linalg.norm(w) / 2), abs=1e-12)


# --- visibility edge cases ---------------------------------------------------------------


def test_tag_behind_a_field_element_is_hidden_and_seen_over_a_low_one():
    tag = facing_tag(4, 5.0, 0.0, 1.0)
    wall = [(2.0, -0.5), (2.5, -0.5), (2.5, 0.5), (2.0, 0.5)]
    assert seen(Camera(level_camera(), [tag])) == [4]
    assert seen(Camera(level_camera(), [tag], obstacles=[Obstacle("tall", tuple(wall), 2.0)])) \
        == []
    # The sight line climbs from 0.5 m to 1 m: at x = 2..2.5 m it is above 0.7 m.
    assert seen(Camera(level_camera(), [tag], obstacles=[Obstacle("low", tuple(wall), 0.6)])) \
        == [4]
    # A camera 0.9 m up looking down at a tag 0.2 m up sees it past a 0.8 m-high block in
    # between only if the sight line clears the block's top: at x = 2..2.5 m it is 0.6 m up.
    low_tag = facing_tag(8, 5.0, 0.0, 0.2)
    high = level_camera(robot_to_camera=Transform3d(Translation3d(0, 0, 0.9),
                                                    Rotation3d(0, 0.2, 0)))
    assert seen(Camera(high, [low_tag])) == [8]
    assert seen(Camera(high, [low_tag], obstacles=[Obstacle("block", tuple(wall), 0.8)])) == []
    # Clockwise outlines are accepted too.
    assert seen(Camera(level_camera(), [tag],
                       obstacles=[Obstacle("cw", tuple(reversed(wall)), 2.0)])) == []


def test_one_hidden_corner_hides_the_tag_and_a_tag_on_an_element_face_is_seen():
    tag = facing_tag(4, 5.0, 0.0, CAM_Z)
    # A post hiding only the tag's left edge (y from HALF - 0.02 to HALF + 0.5, near x = 4.5).
    post = ((4.4, HALF - 0.02), (4.5, HALF - 0.02), (4.5, 0.6), (4.4, 0.6))
    assert seen(Camera(level_camera(), [tag], obstacles=[Obstacle("post", post, 2.0)])) == []
    # The tag on the front face of a box (the box spans x = 5.0 .. 6.0).
    box = ((5.0, -1.0), (6.0, -1.0), (6.0, 1.0), (5.0, 1.0))
    assert seen(Camera(level_camera(), [tag], obstacles=[Obstacle("box", box, 2.0)])) == [4]
    # A tag recessed 0.3 m into a box is not hidden by that box, but a tag behind the box is.
    deep = ((4.7, -1.0), (6.0, -1.0), (6.0, 1.0), (4.7, 1.0))
    behind = facing_tag(5, 6.5, 0.0, CAM_Z)
    cam = Camera(level_camera(), [tag, behind], obstacles=[Obstacle("deep", deep, 2.0)])
    assert seen(cam) == [4]


def test_occlusion_agrees_with_dense_sampling_of_the_sight_lines():
    """Random convex prisms and segments: blocked exactly when a dense sample of points along
    the segment (excluding the margin at its end) falls inside a prism that does not contain
    the segment's end point."""
    rng = np.random.default_rng(5)
    obstacles = []
    for i in range(5):
        c, r = rng.uniform((3, 1), (13, 7)), rng.uniform(0.3, 1.2)
        angles = np.sort(rng.uniform(0, 2 * np.pi, rng.integers(3, 8)))
        obstacles.append(Obstacle(f"o{i}", tuple((c[0] + r * math.cos(a), c[1] + r * math.sin(a))
                                                 for a in angles), rng.uniform(0.3, 2.0)))
    cam = Camera(level_camera(), [], obstacles=obstacles)
    occ = cam._occluders
    mismatches = total = 0
    for _ in range(100):
        eye = np.array([rng.uniform(0, 16), rng.uniform(0, 8), rng.uniform(0.2, 1.5)])
        pts = np.column_stack((rng.uniform(0, 16, 30), rng.uniform(0, 8, 30),
                               rng.uniform(0, 2.5, 30)))
        got = occ.blocked(eye, pts)
        for p, g in zip(pts, got, strict=True):
            d = p - eye
            s = np.linspace(0, 1 - LINE_OF_SIGHT_MARGIN / np.linalg.norm(d), 2000)[1:-1]
            samples = eye + s[:, None] * d
            hit = any(_inside(ob, samples).any() for ob in obstacles
                      if not _inside(ob, p[None])[0])
            total += 1
            mismatches += hit != g
    assert total == 3000
    assert mismatches <= 3  # sampling can miss a sliver shorter than its 1/2000 step


def _inside(ob: Obstacle, pts: np.ndarray) -> np.ndarray:
    poly = np.array(ob.points)
    ok = (pts[:, 2] > 0) & (pts[:, 2] < ob.height)
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        ok &= (b[0] - a[0]) * (pts[:, 1] - a[1]) - (b[1] - a[1]) * (pts[:, 0] - a[0]) > 0
    return ok


def test_tag_seen_from_behind_is_not_detected():
    tag = Fiducial(2, Pose3d(Translation3d(3.0, 0.0, CAM_Z), Rotation3d()))  # faces +x
    assert seen(Camera(level_camera(), [tag])) == []
    assert seen(Camera(level_camera(), [facing_tag(2, 3.0)])) == [2]


def test_field_of_view_edge_is_the_image_border():
    """A tag whose right corners are 0.5 px inside the image is seen, 0.5 px outside not."""
    fx, _, cx, _ = K
    d = 3.0
    for margin, expected in ((0.5, [6]), (-0.5, [])):
        right_edge_px = W - margin  # pixel of the right corners
        y = -(right_edge_px - cx) * d / fx + HALF  # tag centre y giving that pixel
        assert seen(Camera(level_camera(), [facing_tag(6, d, y)])) == expected


def test_range_edge_is_max_range():
    d = 4.0
    assert seen(Camera(level_camera(max_range=d + 1e-6), [facing_tag(1, d)])) == [1]
    assert seen(Camera(level_camera(max_range=d - 1e-6), [facing_tag(1, d)])) == []


def test_min_area_edge_is_the_tag_area_in_percent():
    d = 5.0
    area = (K[0] * TAG36H11_SIZE / d) ** 2 / (W * H) * 100  # closed form, % of the image
    assert seen(Camera(level_camera(min_area=area * 0.999), [facing_tag(1, d)])) == [1]
    assert seen(Camera(level_camera(min_area=area * 1.001), [facing_tag(1, d)])) == []


def test_field_of_view_from_diagonal_and_horizontal_angles():
    diag = CameraSpec("d", width=800, height=600, fov_diagonal=math.radians(90))
    fx, fy, cx, cy = diag.camera_matrix()
    assert fx == fy == pytest.approx(500.0)  # half-diagonal 500 px at 45°
    assert (cx, cy) == (399.5, 299.5)
    horiz = CameraSpec("h", width=800, height=600, fov_horizontal=math.radians(60))
    assert horiz.camera_matrix()[0] == pytest.approx(400 / math.tan(math.radians(30)))
    assert horiz.horizontal_fov() == pytest.approx(math.radians(60))


# --- timing --------------------------------------------------------------------------------


def test_frames_are_captured_at_the_frame_rate_and_delivered_after_the_latency():
    spec = level_camera(fps=25.0, latency=0.03, latency_std=0.0)
    cam = Camera(spec, [facing_tag(1, 3.0)])
    delivered = []
    for k in range(101):  # 1 s in 10 ms ticks
        t = k * 0.01
        for f in cam.update(t, (0.0, 0.0, 0.0)):
            assert f.delivery_time <= t + 1e-12
            assert f.delivery_time == pytest.approx(f.capture_time + 0.03)
            assert t - f.delivery_time < 0.01  # delivered at the first tick after
            delivered.append(f)
    captures = [f.capture_time for f in delivered]
    assert captures == pytest.approx([k * 0.04 for k in range(len(captures))])
    assert len(captures) == 25  # 0.00 .. 0.96 captured; the one at 0.96 arrives at 0.99
    assert [f.sequence for f in delivered] == list(range(1, 26))


def test_latency_jitter_has_the_configured_spread_and_keeps_frame_order():
    spec = level_camera(fps=30.0, latency=0.05, latency_std=0.02)
    cam = Camera(spec, [], rng=np.random.default_rng(3))
    frames = []
    for k in range(20001):
        frames += cam.update(k * 0.005, (0.0, 0.0, 0.0))
    lat = np.array([f.latency for f in frames])
    deliveries = [f.delivery_time for f in frames]
    assert deliveries == sorted(deliveries)
    assert [f.sequence for f in frames] == sorted(f.sequence for f in frames)
    # Order keeping only ever lengthens a latency; the drawn N(50 ms, 20 ms) shows in the
    # median and spread (about 3000 frames: statistical tolerance several standard errors).
    assert np.median(lat) == pytest.approx(0.05, abs=0.003)
    assert np.percentile(lat, 84) - np.percentile(lat, 16) == pytest.approx(0.04, abs=0.006)
    assert lat.min() >= 0.0


def test_pose_at_a_capture_between_updates_is_interpolated():
    spec = level_camera(fps=50.0)
    cam = Camera(spec, [])
    cam.update(0.0, (0.0, 0.0, math.pi - 0.1))
    frames = cam.update(0.05, (1.0, 2.0, -math.pi + 0.1))  # heading crosses ±π
    poses = [f.robot_pose for f in frames]
    assert [f.capture_time for f in frames] == pytest.approx([0.02, 0.04])
    assert poses[0][:2] == pytest.approx((0.4, 0.8))
    assert math.remainder(poses[0][2] - (math.pi - 0.1 + 0.4 * 0.2), math.tau) \
        == pytest.approx(0.0, abs=1e-12)


def test_same_seed_same_frames_and_another_seed_differs():
    tags = season_fiducials("2026")
    spec = level_camera(pixel_noise=0.4, latency=0.03, latency_std=0.01)

    def run(seed: int) -> list:
        cam = Camera(spec, tags, rng=np.random.default_rng(seed))
        out = []
        for k in range(300):
            t = k * 0.01
            for f in cam.update(t, (2.0 + 0.02 * k, 4.0, 0.01 * k)):
                out.append((f.capture_time, f.delivery_time, f.sequence,
                            [(o.id, o.corners, o.yaw, o.ambiguity,
                              o.best.translation().X()) for o in f.tags],
                            f.multitag.field_to_camera.X() if f.multitag else None))
        return out

    first = run(1)
    assert any(entry[3] for entry in first)
    assert run(1) == first
    assert run(2) != first


def test_vision_system_cameras_have_independent_noise_streams():
    tags = season_fiducials("2026")
    a = level_camera(pixel_noise=0.5)
    b = CameraSpec("other", pixel_noise=0.5)

    def frames_of_a(specs):
        vision = VisionSystem(specs, tags, rng=np.random.default_rng(9))
        out = []
        for k in range(100):
            out += [(f.capture_time, [o.corners for o in f.tags])
                    for f in vision.update(k * 0.01, (2.0, 4.0, 0.0)) if f.camera == "cam"]
        return out

    assert frames_of_a([a]) == frames_of_a([a, b])
    with pytest.raises(ValueError):
        VisionSystem([a, a])


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("pose", [(math.nan, 0.0, 0.0), (0.0, math.inf, 0.0),
                                  (0.0, 0.0, math.nan), (1e300, -1e300, 1e300)])
def test_non_finite_or_absurd_poses_give_empty_frames(pose):
    cam = Camera(level_camera(pixel_noise=0.3), season_fiducials("2026"),
                 bearing_targets=[BearingTarget("t", 3.0, 0.0)])
    frame = cam.capture(0.0, pose)
    assert frame.tags == () and frame.multitag is None and frame.bearings == ()


def test_nan_time_is_ignored_and_time_going_back_restarts_the_schedule():
    cam = Camera(level_camera(fps=10.0), [facing_tag(1, 3.0)])
    assert cam.update(math.nan, (0.0, 0.0, 0.0)) == []
    assert [f.capture_time for f in cam.update(0.0, (0.0, 0.0, 0.0))] == [0.0]
    cam.update(0.35, (0.0, 0.0, 0.0))
    frames = cam.update(0.1, (0.0, 0.0, 0.0))  # back in time: a new schedule from 0.1
    assert [f.capture_time for f in frames] == [0.1]
    assert frames[0].sequence == 5  # the frame counter keeps counting


def test_a_long_time_jump_captures_at_most_max_catchup_frames():
    cam = Camera(level_camera(fps=100.0), [])
    cam.update(0.0, (0.0, 0.0, 0.0))
    frames = cam.update(3600.0, (0.0, 0.0, 0.0))
    assert 1 <= len(frames) <= MAX_CATCHUP + 1
    assert frames[-1].capture_time == pytest.approx(3600.0)


def test_pose2d_input_is_accepted():
    cam = Camera(level_camera(), [facing_tag(1, 3.0)])
    assert [t.id for t in cam.capture(0.0, Pose2d(0, 0, Rotation2d(0))).tags] == [1]


def test_spec_rejects_nonsense():
    for kw in (dict(fps=0.0), dict(width=0), dict(latency=-1.0), dict(pixel_noise=math.nan),
               dict(fov_diagonal=math.pi), dict(intrinsics=(0.0, 1.0, 0.0, 0.0)),
               dict(max_range=0.0)):
        with pytest.raises(ValueError):
            CameraSpec("bad", **kw)


# --- bearing targets (pyfrc VisionSim semantics) ---------------------------------------------


def test_bearing_target_offset_distance_and_windows():
    target = BearingTarget("goal", 4.0, 3.0, view_start=math.radians(180),
                           view_end=math.radians(270), min_distance=1.0, max_distance=6.0)
    cam = Camera(level_camera(), bearing_targets=[target])  # 90° diagonal FOV
    (b,) = cam.capture(0.0, (0.0, 0.0, math.radians(30))).bearings
    assert b.name == "goal"
    assert b.distance == pytest.approx(5.0)
    assert b.offset == pytest.approx(math.degrees(math.atan2(3, 4)) - 30)  # left of forward
    # Outside the horizontal field of view (±38.7° here):
    assert cam.capture(0.0, (0.0, 0.0, math.radians(80))).bearings == ()
    # Too far, too near:
    assert cam.capture(0.0, (-4.0, -3.0, math.atan2(6, 8))).bearings == ()
    assert cam.capture(0.0, (3.5, 2.5, math.atan2(0.5, 0.5))).bearings == ()
    # Seen only from its south-west quadrant (180° .. 270° from the target): not from the east.
    assert cam.capture(0.0, (7.0, 3.0, math.pi)).bearings == ()


def test_bearing_target_hidden_by_a_field_element():
    target = BearingTarget("goal", 4.0, 0.0, z=0.5)
    box = Obstacle("box", ((2.0, -0.3), (2.5, -0.3), (2.5, 0.3), (2.0, 0.3)), 1.0)
    assert Camera(level_camera(), bearing_targets=[target]).capture(0.0, (0, 0, 0)).bearings
    assert Camera(level_camera(), bearing_targets=[target], obstacles=[box]).capture(
        0.0, (0, 0, 0)).bearings == ()


def test_min_area_rect_of_rectangles_and_a_rotated_square():
    rect = ((10.0, 20.0), (50.0, 20.0), (50.0, 35.0), (10.0, 35.0))
    assert np.allclose(sorted(min_area_rect(rect)), sorted(rect), atol=1e-9)
    c, s = math.cos(0.3), math.sin(0.3)
    square = tuple((100 + 10 * (c * x - s * y), 100 + 10 * (s * x + c * y))
                   for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1)))
    assert np.allclose(sorted(min_area_rect(square)), sorted(square), atol=1e-9)
    # A kite: its smallest enclosing rectangle is 2 × 3 (area 6), not the 3.5-wide box.
    kite = ((0.0, 0.0), (1.0, 1.0), (0.0, 3.0), (-1.0, 1.0))
    pts = np.array(min_area_rect(kite))
    sides = sorted(np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1))
    assert sides[0] * sides[2] <= 6.0 + 1e-9


def test_a_tag_drowned_in_pixel_noise_is_dropped_not_reported_with_a_nan_ambiguity():
    # A 16.5 cm tag 6 m away is 16 px wide; 50 px of corner noise (the most the config allows
    # is 100) leaves no pose of it in front of the camera about half the time. Such a tag
    # used to be reported with ambiguity inf/inf = NaN (published to PhotonVision's
    # poseAmbiguity and the Limelight arrays); it is dropped, as a pipeline finds no fit.
    cam = Camera(level_camera(pixel_noise=50.0, min_area=0.0), [facing_tag(1, 6.0)],
                 rng=np.random.default_rng(0))
    tags = [t for _ in range(200) for t in cam.capture(0.0, (0.0, 0.0, 0.0)).tags]
    assert 0 < len(tags) < 200
    for t in tags:
        assert math.isfinite(t.ambiguity) and math.isfinite(t.best_error), t
