"""Cameras with an object detector see game pieces (simserver/models/detection.py and the
detector path of simserver/models/camera.py).

References, all independent of the model's formulas: the tangent planes of a ball through the
lens written as angles (atan2 of the centre ± asin of the angular radius, where the model
solves a quadratic in image coordinates); dense point samples of each piece's surface
projected by an explicit pinhole (for visibility, range and the boxes); hand-placed field
elements and robots on the sight line (occlusion).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from wpimath.geometry import Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.models.camera import Camera, CameraSpec, DetectionFrame, VisionSystem
from simserver.models.detection import MAX_DETECTIONS, Detectables, DetectorSpec
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.types import PieceType

W, H = 960, 720
K = (600.0, 600.0, 479.5, 359.5)
EYE_Z = 0.5
BALL = 0.075  # m, radius
FUEL = PieceType("fuel", "sphere", radius=BALL, height=2 * BALL, mass=0.215,
                 restitution=0.6, friction=0.7, rolling=0.03, drag_coefficient=0.47,
                 drag_area=0.0177, class_id=0)
NOTE = PieceType("note", "ring", radius=0.18, height=0.05, mass=0.235, restitution=0.2,
                 friction=0.7, rolling=0.1, drag_coefficient=1.0, drag_area=0.01, class_id=1)


def camera(detector: DetectorSpec | None = None, seed: int = 0, **kw) -> Camera:
    """A level camera 0.5 m up at the robot centre, looking forward."""
    obstacles = kw.pop("obstacles", ())
    spec = CameraSpec("det", Transform3d(Translation3d(0.0, 0.0, EYE_Z), Rotation3d()),
                      W, H, intrinsics=K, latency=0.02, latency_std=0.0,
                      detector=DetectorSpec() if detector is None else detector, **kw)
    return Camera(spec, rng=np.random.default_rng(seed), obstacles=obstacles)


def balls(*xyz: tuple[float, float, float]) -> Detectables:
    return Detectables.of([FUEL], np.zeros(len(xyz), dtype=int), np.array(xyz, dtype=float))


def ball_edges(forward: float, across: float, radius: float) -> tuple[float, float]:
    """The two tangent directions (rad, counter-clockwise from the optical axis) of a ball
    whose centre is ``forward`` m ahead and ``across`` m to the side in one plane that holds
    the lens and one image axis."""
    centre = math.atan2(across, forward)
    half = math.asin(radius / math.hypot(forward, across))
    return centre - half, centre + half


def expected_angles(x: float, y: float, z: float, radius: float) -> tuple[float, ...]:
    """(yaw deg, pitch deg, width px, height px) of the box of a ball at field (x, y, z) seen
    by the level camera at the origin: the vertical tangent planes bound it left and right,
    the horizontal-axis ones up and down; the box centre is the mean of their image
    coordinates (tan of each angle)."""
    fx, fy = K[0], K[1]
    left = [math.tan(a) for a in ball_edges(x, y, radius)]  # image u = -tan (right positive)
    up = [math.tan(a) for a in ball_edges(x, z - EYE_Z, radius)]  # image v = -tan (down)
    yaw = -math.degrees(math.atan(sum(left) / 2.0))
    pitch = math.degrees(math.atan(sum(up) / 2.0))
    return yaw, pitch, fx * abs(left[1] - left[0]), fy * abs(up[1] - up[0])


@pytest.mark.parametrize("at", [(3.0, 0.0, BALL), (3.0, 0.8, BALL), (2.0, -0.6, 0.9),
                                (6.0, 1.5, 1.2)])
def test_ball_yaw_pitch_and_area_match_the_tangent_planes(at):
    """A ball straight ahead has yaw 0; offset ones (left, right, above the lens) have the
    yaw and pitch of the centre of the box between their tangent planes, and the box's area,
    to 1e-9 (no noise)."""
    frame = camera().capture(0.0, (0.0, 0.0, 0.0), balls(at))
    (seen,) = frame.pieces
    yaw, pitch, width, height = expected_angles(*at, BALL)
    assert seen.yaw == pytest.approx(yaw, abs=1e-9)
    assert seen.pitch == pytest.approx(pitch, abs=1e-9)
    assert seen.area == pytest.approx(width * height / (W * H) * 100.0, rel=1e-9)
    assert seen.distance == pytest.approx(math.dist(at, (0.0, 0.0, EYE_Z)), rel=1e-12)
    if at[1] == 0.0:
        assert seen.yaw == 0.0
    assert math.copysign(1.0, -seen.yaw) == math.copysign(1.0, at[1]) or at[1] == 0.0
    (x0, y1), (x1, y1b), (x1b, y0), (x0b, y0b) = seen.corners
    assert (x0, x1, y0, y1) == (x0b, x1b, y0b, y1b) and x0 < x1 and y0 < y1  # BL BR TR TL


def test_ring_box_spans_its_rims():
    """A ring lying flat straight ahead: its box reaches from the far top rim to the near
    bottom rim (exact: those rim points are sampled) and across its footprint's tangent
    planes to within 2 % of its radius."""
    at = (3.0, 0.0, 0.025)
    pieces = Detectables.of([FUEL, NOTE], np.array([1]), np.array([at]))
    (seen,) = camera().capture(0.0, (0.0, 0.0, 0.0), pieces).pieces
    assert seen.class_id == 1 and seen.yaw == 0.0
    fy = K[1]
    top = -math.tan(math.atan2(0.05 - EYE_Z, 3.0 + 0.18)) * fy + K[3]  # far top rim
    bottom = -math.tan(math.atan2(0.0 - EYE_Z, 3.0 - 0.18)) * fy + K[3]  # near bottom rim
    (_, y1), _, (_, y0), _ = seen.corners
    assert (y0, y1) == pytest.approx((top, bottom), abs=1e-9)
    half = math.tan(math.asin(0.18 / 3.0)) * K[0]  # the widest rim, from its tangent planes
    width = seen.corners[1][0] - seen.corners[0][0]
    assert 0.98 * 2 * half < width <= 2 * half + 1e-9


def sample_box(centre_cam: np.ndarray, radius: float, n: int = 4000
               ) -> tuple[float, float, float, float] | None:
    """Pixel box of a ball from ``n`` points of its surface (camera frame x forward, y left,
    z up), projected by a pinhole; None if any point is behind the lens."""
    rng = np.random.default_rng(7)
    d = rng.normal(size=(n, 3))
    pts = centre_cam + radius * d / np.linalg.norm(d, axis=1, keepdims=True)
    if (pts[:, 0] <= 1e-3).any():
        return None
    u = K[2] - K[0] * pts[:, 1] / pts[:, 0]
    v = K[3] - K[1] * pts[:, 2] / pts[:, 0]
    return u.min(), u.max(), v.min(), v.max()


def test_visibility_matches_projected_samples_in_view_and_in_range():
    """400 balls scattered around a turned robot, a 6 m range: the detector reports exactly
    those whose sampled outline is in range and at least half inside the image (the ones
    within 1 % of either edge of that rule are left out of the comparison), with boxes
    within 0.5 px of the sampled ones."""
    rng = np.random.default_rng(3)
    xyz = np.column_stack((rng.uniform(-8, 8, 400), rng.uniform(-8, 8, 400),
                           rng.uniform(0.0, 2.0, 400)))
    pose = (0.5, -0.3, 0.7)
    cam = camera(max_range=6.0)
    seen = {p.piece: p for p in cam.capture(0.0, pose, balls(*map(tuple, xyz))).pieces}
    c, s = math.cos(pose[2]), math.sin(pose[2])
    checked = 0
    for i, (x, y, z) in enumerate(xyz):
        dx, dy = x - pose[0], y - pose[1]
        centre = np.array([c * dx + s * dy, -s * dx + c * dy, z - EYE_Z])
        dist = float(np.linalg.norm(centre))
        box = sample_box(centre, BALL)
        if abs(dist - 6.0) < 0.01:
            continue
        if box is None or dist > 6.0:
            assert i not in seen
            checked += 1
            continue
        x0, x1, y0, y1 = box
        inside = (np.clip(x1, 0, W) - np.clip(x0, 0, W)) * (np.clip(y1, 0, H) - np.clip(y0, 0, H))
        frac = inside / ((x1 - x0) * (y1 - y0))
        if abs(frac - 0.5) < 0.01:
            continue
        assert (i in seen) == (frac >= 0.5), (i, frac, dist)
        if i in seen and frac == 1.0:
            (bx0, by1), _, (bx1, by0), _ = seen[i].corners
            assert (bx0, bx1, by0, by1) == pytest.approx((x0, x1, y0, y1), abs=0.5)
        checked += 1
    assert checked > 380 and 25 < len(seen) < MAX_DETECTIONS


def test_field_elements_and_robots_hide_pieces_behind_them():
    """A tall element, and a robot given as an outline prism, hide a ball on the sight line;
    the same prisms beside the line, or lower than the line to the ball's top (the top
    showing is enough), do not."""
    at = (4.0, 0.0, BALL)
    wall = Obstacle("wall", ((2.0, -0.3), (2.3, -0.3), (2.3, 0.3), (2.0, 0.3)), 1.0)
    aside = Obstacle("aside", ((2.0, 1.0), (2.3, 1.0), (2.3, 1.6), (2.0, 1.6)), 1.0)
    # The sight line to the ball's centre passes 0.2875 m up at x = 2 m, the one to its top
    # 0.299 m at x = 2.3 m: a box 0.29 m high hides the centre only, one 0.33 m high both.
    low = Obstacle("low", ((2.0, -0.3), (2.3, -0.3), (2.3, 0.3), (2.0, 0.3)), 0.29)
    mid = Obstacle("mid", ((2.0, -0.3), (2.3, -0.3), (2.3, 0.3), (2.0, 0.3)), 0.33)
    for obstacles, visible in (((wall,), False), ((aside,), True), ((low,), True),
                               ((mid,), False), ((), True)):
        cam = camera(obstacles=obstacles)
        assert bool(cam.capture(0.0, (0.0, 0.0, 0.0), balls(at)).pieces) == visible
    robot = Obstacle("robot 2", ((1.5, -0.4), (2.3, -0.4), (2.3, 0.4), (1.5, 0.4)), 0.6)
    robot_aside = Obstacle("robot 3", ((1.5, 1.0), (2.3, 1.0), (2.3, 1.8), (1.5, 1.8)), 0.6)
    vision = VisionSystem([camera().spec], rng=np.random.default_rng(0))
    for robots, visible in (([robot], False), ([robot_aside], True), (None, True)):
        vision.reset()
        vision.update(0.0, (0.0, 0.0, 0.0), balls(at), robots)
        (frame,) = vision.update(0.02, (0.0, 0.0, 0.0), balls(at), robots)
        assert bool(frame.pieces) == visible


def test_classes_confidence_and_the_pipeline_choice():
    """A detector reports only its classes, with confidence gain·sqrt(area/100) and none
    below min_confidence, and never tags; an AprilTag camera ignores the pieces it is given
    (the same frame, bit for bit, as without them)."""
    pieces = Detectables.of([FUEL, NOTE], np.array([0, 1]),
                            np.array([(3.0, 0.3, BALL), (3.0, -0.5, 0.025)]))
    only_notes = camera(DetectorSpec(classes=(1,))).capture(0.0, (0, 0, 0), pieces)
    assert [p.class_id for p in only_notes.pieces] == [1]
    frame = camera(DetectorSpec(confidence_gain=3.0)).capture(0.0, (0, 0, 0), pieces)
    assert [p.class_id for p in frame.pieces] == [1, 0]  # largest first
    for p in frame.pieces:
        assert p.confidence == pytest.approx(3.0 * math.sqrt(p.area / 100.0), rel=1e-12)
    threshold = (frame.pieces[0].confidence + frame.pieces[1].confidence) / 2
    strict = camera(DetectorSpec(confidence_gain=3.0, min_confidence=threshold))
    assert [p.class_id for p in strict.capture(0.0, (0, 0, 0), pieces).pieces] == [1]

    tags = season_fiducials("2026")
    at = (1.0, 4.0, math.pi)  # facing the blue alliance wall's tags
    det = Camera(camera().spec, tags)
    assert det.capture(0.0, at, pieces).tags == ()
    plain = CameraSpec("tags", Transform3d(Translation3d(0, 0, EYE_Z), Rotation3d()), W, H,
                       intrinsics=K, pixel_noise=0.3)
    with_pieces = Camera(plain, tags, rng=np.random.default_rng(4)).capture(0.0, at, pieces)
    without = Camera(plain, tags, rng=np.random.default_rng(4)).capture(0.0, at)
    assert with_pieces.tags and with_pieces == without
    assert type(without) is not DetectionFrame and without.pieces == ()


def test_noise_is_seeded_and_of_the_configured_size():
    """Box edges carry Gaussian noise of the camera's pixel noise: the box centre's spread is
    σ/√2 px (two edges averaged; within 10 % over 3000 frames); the same seed gives the same
    frames, another seed others; confidence noise likewise from the same generator."""
    sigma = 2.0
    spec = DetectorSpec(confidence_noise=0.05)
    pieces = balls((3.0, 0.2, BALL))

    def run(seed: int) -> list:
        cam = camera(spec, seed, pixel_noise=sigma)
        return [cam.capture(i * 0.02, (0.0, 0.0, 0.0), pieces).pieces[0] for i in range(3000)]

    a, b, c = run(1), run(1), run(2)
    assert a == b and a != c
    truth = camera().capture(0.0, (0.0, 0.0, 0.0), pieces).pieces[0]
    px = np.array([p.center[0] for p in a])
    assert abs(px.mean() - truth.center[0]) < 0.05
    assert px.std() == pytest.approx(sigma / math.sqrt(2), rel=0.1)
    conf = np.array([p.confidence for p in a])
    assert np.std(conf - 2.0 * np.sqrt(np.array([p.area for p in a]) / 100)) == \
        pytest.approx(0.05, rel=0.1)


def test_distorted_boxes_hold_the_distorted_outline():
    """With lens distortion, a ball's box (around its distorted corners and edge midpoints)
    matches the box of its densely sampled outline pushed through the same distortion to
    within 1 px, for balls across the image."""
    dist = (-0.05, 0.01, 0.001, -0.001, 0.0)
    cam = camera(distortion=dist)
    k1, k2, p1, p2, k3 = dist
    rng = np.random.default_rng(9)
    for at in ((3.0, 0.0, BALL), (2.0, 1.2, 0.3), (2.5, -1.4, 1.6), (1.5, 0.5, 0.2)):
        (seen,) = cam.capture(0.0, (0.0, 0.0, 0.0), balls(at)).pieces
        d = rng.normal(size=(4000, 3))
        pts = np.array([at[0], at[1], at[2] - EYE_Z]) + BALL * d / np.linalg.norm(
            d, axis=1, keepdims=True)
        u, v = -pts[:, 1] / pts[:, 0], -pts[:, 2] / pts[:, 0]
        r2 = u * u + v * v
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        ud = u * radial + 2 * p1 * u * v + p2 * (r2 + 2 * u * u)
        vd = v * radial + p1 * (r2 + 2 * v * v) + 2 * p2 * u * v
        xs, ys = K[0] * ud + K[2], K[1] * vd + K[3]
        (x0, y1), _, (x1, y0), _ = seen.corners
        assert (x0, x1, y0, y1) == pytest.approx((xs.min(), xs.max(), ys.min(), ys.max()),
                                                 abs=1.0)


def test_frames_keep_the_cameras_timing():
    """Pieces come in the camera's frames: captured at its frame rate, delivered after its
    latency, counted in the same sequence as any frame."""
    cam = camera()
    pieces = balls((3.0, 0.0, BALL))
    assert cam.update(0.0, (0.0, 0.0, 0.0), pieces) == []
    (frame,) = cam.update(0.02, (0.0, 0.0, 0.0), pieces)
    assert isinstance(frame, DetectionFrame)
    assert (frame.capture_time, frame.delivery_time, frame.sequence) == (0.0, 0.02, 1)
    assert len(frame.pieces) == 1 and frame.pieces[0].position == (3.0, 0.0, BALL)


def test_bad_detectables_are_refused():
    with pytest.raises(ValueError, match="radius"):
        Detectables(np.zeros((2, 3)), np.ones(3), np.ones(2), np.zeros(2))
    with pytest.raises(ValueError, match="min_confidence"):
        DetectorSpec(min_confidence=2.0)


def test_at_most_fifty_detections_the_largest():
    """A frame reports at most MAX_DETECTIONS pieces (photonlibpy's simulation keeps 50),
    largest first: a grid of 100 balls in view gives 50."""
    xs, ys = np.meshgrid(np.linspace(2.0, 6.0, 10), np.linspace(-1.5, 1.5, 10))
    pieces = balls(*[(float(x), float(y), BALL) for x, y in zip(xs.ravel(), ys.ravel(),
                                                                   strict=True)])
    every = camera(max_range=100.0).capture(0.0, (0.0, 0.0, 0.0), pieces)
    assert len(every.pieces) == MAX_DETECTIONS
    areas = [p.area for p in every.pieces]
    assert areas == sorted(areas, reverse=True)


def test_bad_piece_data_is_not_seen_and_does_not_raise():
    """Non-finite positions and sizes that are not positive are skipped (no warning turned
    error, no detection), the good pieces beside them still seen."""
    pieces = Detectables(
        np.array([(math.nan, 0.0, 0.1), (math.inf, 0.0, 0.1), (3.0, 1e308, 0.1),
                  (3.0, 0.0, BALL), (3.0, 0.5, BALL), (3.0, -0.5, BALL)]),
        np.array([BALL, BALL, BALL, BALL, -0.1, 0.0]),
        np.array([0.15, 0.15, 0.15, 0.15, 0.15, 0.0]), np.zeros(6, dtype=int))
    with np.errstate(all="raise"):
        frame = camera().capture(0.0, (0.0, 0.0, 0.0), pieces)
    assert [p.piece for p in frame.pieces] == [3]
