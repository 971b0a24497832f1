"""Cameras that see AprilTags and bearing targets, as PhotonVision and Limelight report them.

A :class:`Camera` is mounted on the robot by a 3D transform from the robot centre. At its frame
rate it captures what it would see from the robot's pose at that instant: every fiducial whose
face points at it, whose four corners fall inside the image after pixel noise, whose area is at
least ``min_area`` % of the image, within ``max_range`` and with a clear line of sight to its
corners and centre (field elements are opaque prisms, unlike in PhotonVision's simulation; an
element never hides a target inside its own outline, such as a tag mounted in a recess of it,
and a sight line ends ``LINE_OF_SIGHT_MARGIN`` short of its target, so a tag on an element's
face is not hidden by that face); and every bearing target (pyfrc
VisionSim semantics) inside its horizontal field of view, distance window and view-angle
window. Each frame is delivered after a latency drawn per frame (mean and jitter), in capture
order. The projection of all tags runs as a handful of numpy operations per frame.

    >>> import numpy as np
    >>> from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d
    >>> spec = CameraSpec("front", Transform3d(Translation3d(0.3, 0.0, 0.5), Rotation3d()),
    ...                   fps=50.0, latency=0.02, latency_std=0.0)
    >>> tag = Fiducial(7, Pose3d(Translation3d(4.0, 0.0, 0.5), Rotation3d(0.0, 0.0, np.pi)))
    >>> cam = Camera(spec, [tag], rng=np.random.default_rng(0))
    >>> cam.update(0.0, (0.0, 0.0, 0.0))  # captured at t = 0, delivered at 0.02 s
    []
    >>> frame, = cam.update(0.02, (0.0, 0.0, 0.0))
    >>> frame.capture_time, [t.id for t in frame.tags], round(frame.tags[0].yaw, 6)
    (0.0, [7], 0.0)

Conventions (WPILib): field frame x toward red, y left, z up; the camera frame is x forward,
y left, z up (``robot_to_camera`` rotation: positive pitch tilts the camera *down*).
Fiducial poses have x pointing out of the tag face. Reported yaw is positive to the right and
pitch positive up, in degrees, as PhotonVision and Limelight report them; ``best``/``alt`` are
camera-to-target transforms in the camera frame; the multi-tag estimate is the camera's pose in
the field (PhotonVision's field-to-camera).

Pose solutions (no OpenCV). Each single-tag pose and the multi-tag camera pose is the
least-squares PnP solution for the *noisy* corners, found by Gauss-Newton on the reprojection
error started where the minimum is known to be near: at the true pose, where the residual is
the noise itself. So the error a reported pose carries is the error a real solver gets from
the same corners, with no separate pose-noise model, and without noise the poses are exact.
Two steps are taken, because for a small or distant tag (or two of them close together) the
minimum can lie degrees away along a nearly flat valley. The alternate single-tag pose starts at the
planar ambiguity as IPPE (the solver PhotonVision uses) finds it, the pose reflected through
the plane normal to the line of sight (the same image to first order), and is refined the
same way; ``ambiguity`` = best / alternate RMS reprojection error, as PhotonVision reports it,
and the two swap when the alternate fits better (a tag "flip"). Checked against OpenCV's IPPE
on the very same noisy corners (tests/models/test_camera.py): translation and rotation error
percentiles, flip rates and mean ambiguity agree, and the reported fit is at the
least-squares minimum (median within 0.5 %; IPPE's is about 0.5-3 % above it). Lens
distortion is handled by solving in undistorted (pinhole) pixel coordinates, with the noise
mapped through the distortion's local Jacobian.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from wpimath.geometry import Pose2d, Pose3d, Rotation3d, Transform3d

if TYPE_CHECKING:
    from simserver.models.obstacles import Obstacle

TAG36H11_SIZE = 6.5 * 0.0254  # m: edge of the black square of an FRC 36h11 AprilTag
# A line of sight ends this far short of the target, so a tag mounted on the face of a field
# element is not hidden by that element itself (m).
LINE_OF_SIGHT_MARGIN = 0.05
MAX_CATCHUP = 50  # frames captured in one update after a time jump; older ones are skipped
MIN_DEPTH = 1e-3  # m: points nearer to the image plane than this are not projected
MAX_POSITION = 1e6  # m: a robot farther than this from the origin sees nothing (bad input)
# Rotation taking camera-frame vectors (x forward, y left, z up) to the optical frame OpenCV
# and pixel coordinates use (x right, y down, z forward).
_NWU_TO_OPTICAL = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
_OPTICAL_TO_NWU = _NWU_TO_OPTICAL.T.copy()
_EYE3 = np.eye(3)
# Linear and constant parts of the projection Jacobian's building blocks (see _jacobian).
_JAC_LINEAR = np.zeros((3, 18))
_JAC_LINEAR[2, 1], _JAC_LINEAR[1, 2] = 1.0, -1.0  # u: [0, a_z, -a_y, ...]
_JAC_LINEAR[2, 6], _JAC_LINEAR[0, 8] = -1.0, 1.0  # v: [-a_z, 0, a_x, ...]
_JAC_LINEAR[1, 12], _JAC_LINEAR[0, 13] = -1.0, 1.0  # g: [-a_y, a_x, 0, ...]
_JAC_CONSTANT = np.zeros(18)
_JAC_CONSTANT[3], _JAC_CONSTANT[10], _JAC_CONSTANT[17] = 1.0, 1.0, -1.0
# Maps a vector w (as a row) to its flattened cross-product matrix [w/2]×.
_HALF_SKEW = 0.5 * np.array([[0, 0, 0, 0, 0, -1, 0, 1, 0], [0, 0, 1, 0, 0, 0, -1, 0, 0],
                             [0, -1, 0, 1, 0, 0, 0, 0, 0]], dtype=float)
_DAMPING = 1e-9 * np.eye(6)  # keeps the normal equations solvable for degenerate views
# Corners of a unit tag in its own frame, PhotonVision's order: bottom-left, bottom-right,
# top-right, top-left as seen facing the tag (the tag's +y is the viewer's right).
_UNIT_CORNERS = np.array([[0.0, -0.5, -0.5], [0.0, 0.5, -0.5], [0.0, 0.5, 0.5], [0.0, -0.5, 0.5]])


@dataclass(frozen=True)
class CameraSpec:
    """One camera: mount, optics, timing and detection limits.

    name: the camera's name (PhotonVision camera name; Limelight table suffix).
    robot_to_camera: pose of the camera in the robot frame (robot centre on the carpet).
    width, height: resolution, px.
    fov_diagonal / fov_horizontal: field of view, rad (horizontal wins if both are given);
    used when ``intrinsics`` is None. Square pixels, principal point at the image centre.
    intrinsics: (fx, fy, cx, cy), px. distortion: OpenCV (k1, k2, p1, p2, k3).
    fps: frame rate, Hz. latency, latency_std: capture-to-publish delay mean and standard
    deviation, s (clamped at 0). pixel_noise: standard deviation of Gaussian noise on each
    corner coordinate, px. min_area: smallest detected tag, % of the image area (PhotonVision's
    unit). max_range: farthest detected target, m.
    """

    name: str
    robot_to_camera: Transform3d = field(default_factory=Transform3d)
    width: int = 960
    height: int = 720
    fov_diagonal: float | None = math.radians(90.0)
    fov_horizontal: float | None = None
    intrinsics: tuple[float, float, float, float] | None = None
    distortion: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    fps: float = 30.0
    latency: float = 0.035
    latency_std: float = 0.005
    pixel_noise: float = 0.0
    min_area: float = 0.0
    max_range: float = math.inf

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"camera {self.name!r}: resolution must be at least 1×1 px")
        if not (self.fps > 0 and math.isfinite(self.fps)):
            raise ValueError(f"camera {self.name!r}: fps must be > 0")
        for label, value in (("latency", self.latency), ("latency_std", self.latency_std),
                             ("pixel_noise", self.pixel_noise), ("min_area", self.min_area)):
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"camera {self.name!r}: {label} must be finite and ≥ 0")
        if not self.max_range > 0:
            raise ValueError(f"camera {self.name!r}: max_range must be > 0")
        if self.intrinsics is None:
            fov = self.fov_horizontal if self.fov_horizontal is not None else self.fov_diagonal
            if fov is None or not 0 < fov < math.pi:
                raise ValueError(f"camera {self.name!r}: field of view must be in (0°, 180°)")
        elif not all(math.isfinite(v) for v in self.intrinsics) or min(self.intrinsics[:2]) <= 0:
            raise ValueError(f"camera {self.name!r}: intrinsics need finite fx, fy > 0")
        if not all(math.isfinite(v) for v in self.distortion):
            raise ValueError(f"camera {self.name!r}: distortion coefficients must be finite")

    def camera_matrix(self) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in px: ``intrinsics``, or derived from the field of view with the
        principal point at the image centre ((w - 1) / 2, (h - 1) / 2) and square pixels."""
        if self.intrinsics is not None:
            return self.intrinsics
        cx, cy = (self.width - 1) / 2.0, (self.height - 1) / 2.0
        if self.fov_horizontal is not None:
            f = (self.width / 2.0) / math.tan(self.fov_horizontal / 2.0)
        else:
            assert self.fov_diagonal is not None
            f = (math.hypot(self.width, self.height) / 2.0) / math.tan(self.fov_diagonal / 2.0)
        return f, f, cx, cy

    def horizontal_fov(self) -> float:
        """Horizontal field of view, rad (between the left and right image edges)."""
        fx, _, cx, _ = self.camera_matrix()
        return math.atan((cx + 0.5) / fx) + math.atan((self.width - 0.5 - cx) / fx)


@dataclass(frozen=True)
class Fiducial:
    """An AprilTag: ``id``, field pose (x out of the tag face), black-square edge ``size`` m."""

    id: int
    pose: Pose3d
    size: float = TAG36H11_SIZE


@dataclass(frozen=True)
class BearingTarget:
    """A point target seen as a bearing and a distance (pyfrc VisionSim semantics).

    x, y, z: field position, m. Visible when the camera is between ``min_distance`` and
    ``max_distance`` m away (horizontally), the target is inside the camera's horizontal field
    of view, the line of sight is clear, and the direction from the target to the camera lies
    in the window from ``view_start`` counter-clockwise to ``view_end`` (rad, field frame,
    0 = toward the red wall; a window of 2π or more is all around). pyfrc's clockwise window
    (start, end) in its degrees is (-end, -start) here.
    """

    name: str
    x: float
    y: float
    z: float = 0.0
    view_start: float = 0.0
    view_end: float = 2.0 * math.pi
    min_distance: float = 0.0
    max_distance: float = math.inf


def layout_fiducials(layout: Any) -> list[Fiducial]:
    """The tags of a ``robotpy_apriltag.AprilTagFieldLayout`` (36h11, 6.5 in)."""
    return [Fiducial(int(t.ID), t.pose) for t in layout.getTags()]


def season_fiducials(season: str) -> list[Fiducial]:
    """The official AprilTags of a season ("2022" … "2026") from robotpy-apriltag."""
    from robotpy_apriltag import AprilTagField, AprilTagFieldLayout

    from simserver.fieldinfo import _FIELDS

    if season not in _FIELDS:
        raise ValueError(f"no AprilTag layout for season {season!r} "
                         f"(known: {', '.join(sorted(_FIELDS))})")
    return layout_fiducials(AprilTagFieldLayout.loadField(getattr(AprilTagField,
                                                                  _FIELDS[season])))


class TagObservation(NamedTuple):
    """One detected fiducial in one frame.

    yaw, pitch: angle from the principal point to the tag centre, deg (yaw positive right,
    pitch positive up; PhotonVision's and Limelight's txnc/tync). area: % of the image.
    skew: deg (0, as PhotonVision reports for AprilTags). center: tag centre, px (x right,
    y down). corners: ((x, y) px × 4) with noise, PhotonVision's order. best, alt:
    camera-to-target transforms (camera frame, m), best fitting first. ambiguity: best / alt
    RMS reprojection error. best_error, alt_error: RMS reprojection errors, px.
    distance: camera to tag centre along ``best``, m.
    """

    id: int
    yaw: float
    pitch: float
    area: float
    skew: float
    center: tuple[float, float]
    corners: tuple[tuple[float, float], ...]
    best: Transform3d
    alt: Transform3d
    ambiguity: float
    best_error: float
    alt_error: float
    distance: float


class MultiTagEstimate(NamedTuple):
    """Camera pose from all corners of two or more fiducials (PhotonVision's multi-tag result).

    field_to_camera: the camera's pose in the field as a transform from the origin. ids: the
    fiducials used, ascending. error: RMS reprojection error, px.
    """

    field_to_camera: Transform3d
    ids: tuple[int, ...]
    error: float


class BearingObservation(NamedTuple):
    """A visible bearing target: ``offset`` deg from the camera's forward axis, in the
    horizontal plane (WPILib convention: counter-clockwise, i.e. left, positive), and the
    horizontal ``distance`` m from the camera. pyfrc's VisionSim tuple for it is
    (1, capture time, offset, distance)."""

    name: str
    offset: float
    distance: float


@dataclass(frozen=True)
class Frame:
    """One camera frame, delivered ``latency`` s after capture.

    capture_time, delivery_time: simulated time, s. sequence: frame counter of this camera,
    from 1 (PhotonVision's sequence ID and heartbeat). robot_pose: (x m, y m, heading rad)
    at capture (NaN when the pose given was not finite). tags: detections, largest first.
    multitag: the multi-tag estimate when two or more fiducials are seen. bearings: visible
    bearing targets, smallest |offset| first. tag_poses: field poses of ``tags``.
    """

    camera: str
    sequence: int
    capture_time: float
    delivery_time: float
    robot_pose: tuple[float, float, float]
    tags: tuple[TagObservation, ...]
    multitag: MultiTagEstimate | None
    bearings: tuple[BearingObservation, ...]
    tag_poses: tuple[tuple[float, float, float], ...] = ()

    @property
    def latency(self) -> float:
        """Capture to delivery, s."""
        return self.delivery_time - self.capture_time

    @property
    def best(self) -> TagObservation | None:
        """The largest tag (PhotonVision's best target, Limelight's primary), or None."""
        return self.tags[0] if self.tags else None

    def visible_tag_poses(self) -> list[tuple[float, float, float]]:
        """Field poses (x m, y m, facing rad) of the detected tags, for a Field2d object."""
        return list(self.tag_poses)


# --- geometry helpers --------------------------------------------------------------------


def _pose_tuple(pose: Pose2d | Sequence[float]) -> tuple[float, float, float]:
    """(x, y, heading) floats from a Pose2d or a 3-sequence; NaNs when unusable."""
    try:
        if isinstance(pose, Pose2d):
            return float(pose.X()), float(pose.Y()), float(pose.rotation().radians())
        x, y, h = pose
        return float(x), float(y), float(h)
    except (TypeError, ValueError):
        return math.nan, math.nan, math.nan


@functools.cache
def _pose_rows(m: int) -> tuple[np.ndarray, np.ndarray]:
    """For m tags: the pose of each of the 3m Gauss-Newton row blocks (best poses 0..m-1,
    alternates m..2m-1, then the multi-tag pose 2m once per tag), and the (2m+1, 3m) matrix
    that sums each pose's blocks of normal equations."""
    rows = np.concatenate((np.arange(2 * m), np.full(m, 2 * m)))
    summing = np.zeros((2 * m + 1, 3 * m))
    summing[rows, np.arange(3 * m)] = 1.0
    return rows, summing


def _step(jac: np.ndarray, resid: np.ndarray, summing: np.ndarray) -> np.ndarray:
    """One Gauss-Newton step per pose (P, 6) from row blocks ``jac`` (B, k, 6) and residuals
    ``resid`` (B, k), the blocks of each pose summed by ``summing`` (P, B); lightly damped,
    and no step at all if a system is still singular."""
    b = len(jac)
    jt = jac.transpose(0, 2, 1)
    hess = (summing @ (jt @ jac).reshape(b, 36)).reshape(-1, 6, 6) + _DAMPING
    grad = summing @ (jt @ resid[..., None]).reshape(b, 6)
    try:
        delta: np.ndarray = np.linalg.solve(hess, grad[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.zeros(grad.shape)
    return delta


def _retract(w: np.ndarray) -> np.ndarray:
    """Rotation matrices (B, 3, 3) for small rotation vectors ``w`` (B, 3), by the Cayley
    transform: an exact rotation by 2·atan(|w|/2) about w, equal to exp([w]×) to second order
    (all a first-order pose update needs)."""
    k = (w @ _HALF_SKEW).reshape(-1, 3, 3)
    c = (2.0 / (1.0 + 0.25 * (w * w).sum(1)))[:, None, None]
    return _EYE3 + c * (k + k @ k)


def _rotation(m: list[list[float]]) -> Rotation3d:
    """A Rotation3d of a rotation matrix given as nested lists, built from its roll, pitch
    and yaw (WPILib's extrinsic x-y-z angles; the matrix constructor is several times
    slower)."""
    cos_pitch = math.hypot(m[2][1], m[2][2])
    if cos_pitch < 1e-9:  # gimbal lock: roll and yaw are not separable
        try:
            return Rotation3d(np.array(m))
        except ValueError:
            return Rotation3d()
    return Rotation3d(math.atan2(m[2][1], m[2][2]), math.atan2(-m[2][0], cos_pitch),
                      math.atan2(m[1][0], m[0][0]))


def _jacobian(uv: np.ndarray, iz: np.ndarray, a: np.ndarray, focal: np.ndarray) -> np.ndarray:
    """Jacobian (B, 2n, 6) of pinhole pixels (u and v interleaved, point by point) with
    respect to a pose perturbation (rotation vector ω, translation δ) applied as
    p' = exp([ω]×) a + t + δ.

    uv: normalized image coordinates (B, n, 2); iz: 1 / depth (B, n); a: the rotated object
    points (B, n, 3), i.e. p - t; focal: (fx, fy) px. Row u is fx/z·([0, a_z, -a_y, 1, 0, 0]
    + x·g) and row v is fy/z·([-a_z, 0, a_x, 0, 1, 0] + y·g), g = [-a_y, a_x, 0, 0, 0, -1].
    """
    parts = (a @ _JAC_LINEAR + _JAC_CONSTANT).reshape(*a.shape[:2], 3, 6)  # u, v bases; g
    rows = parts[..., :2, :] + uv[..., None] * parts[..., 2:, :]
    rows *= (focal * iz[..., None])[..., None]
    return rows.reshape(a.shape[0], -1, 6)


class _Occluders:
    """Field elements as convex prisms, tested against many line-of-sight segments at once.

    Each prism is the intersection of half-spaces n·p ≤ c (side faces, floor, top), padded
    to a common count with constraints that always hold. Along a segment p(s) = eye + s·d,
    a half-space the eye is outside of is entered at s = (c - n·eye) / (n·d) if n·d < 0
    (never otherwise), and one the eye is inside of is left there if n·d > 0 (never
    otherwise): the segment is inside the prism between the last entry and the first exit,
    so it is blocked when the last entry comes before both the first exit and the end. An
    element whose prism contains the target point does not count.
    """

    def __init__(self, obstacles: Sequence[Obstacle]):
        faces: list[list[tuple[float, float, float, float]]] = []
        for ob in obstacles:
            pts = [(float(px), float(py)) for px, py in ob.points]
            area2 = sum(x0 * y1 - x1 * y0
                        for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))
            if area2 < 0:  # clockwise outline: make it counter-clockwise
                pts.reverse()
            prism = [(0.0, 0.0, -1.0, 0.0), (0.0, 0.0, 1.0, float(ob.height))]
            for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True):
                nx, ny = y1 - y0, x0 - x1  # outward normal of a CCW edge
                length = math.hypot(nx, ny)
                if length > 0:
                    prism.append((nx / length, ny / length, 0.0,
                                  (nx * x0 + ny * y0) / length))
            faces.append(prism)
        self.count = len(faces)
        self.width = max((len(f) for f in faces), default=0)
        # Constraint-major layout (width, count): reductions over the leading axis are fast.
        table = np.zeros((self.width, self.count, 4))
        table[..., 3] = 1.0  # padding: 0·p ≤ 1 always holds
        for i, prism in enumerate(faces):
            table[:len(prism), i] = prism
        self.normals = table[..., :3].reshape(-1, 3)
        self.offsets = table[..., 3].reshape(-1)

    def blocked(self, eye: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Whether the segment from ``eye`` (3,) to each of ``points`` (S, 3), stopped
        ``LINE_OF_SIGHT_MARGIN`` short, passes through the inside of any prism. (S,) bool."""
        if self.count == 0 or len(points) == 0:
            return np.zeros(len(points), dtype=bool)
        d = points - eye
        end = 1.0 - LINE_OF_SIGHT_MARGIN / np.maximum(np.sqrt((d * d).sum(1)), 1e-9)
        rate = self.normals @ d.T  # (C, S)
        slack = self.offsets - self.normals @ eye  # < 0: the eye is outside that half-space
        outside = (slack < 0.0)[:, None]
        # Entered (outside) when the rate is negative, left (inside) when it is positive;
        # never crossed otherwise (parallel included).
        crosses = rate * np.where(outside, -1.0, 1.0) > 0.0
        cross = np.divide(slack[:, None], rate, out=np.full(rate.shape, np.inf),
                          where=crosses)
        shape = (self.width, self.count, len(points))
        first = np.where(outside, cross, 0.0).reshape(shape).max(0)
        last = np.where(outside, np.inf, cross).reshape(shape).min(0)
        # An element containing the target itself (a tag in a recess of it, or element data
        # drawn a little too large) does not hide it.
        holds = (rate <= slack[:, None]).reshape(shape).all(0)
        return ((first < np.minimum(last, end)) & ~holds).any(0)


# --- the camera ------------------------------------------------------------------------------


class Camera:
    """One camera on the robot: captures at its frame rate, delivers after its latency.

    fiducials: the tags it can detect (a season's layout plus any custom ones; a later entry
    replaces an earlier one with the same id). bearing_targets: point targets.
    obstacles: field elements that hide what is behind them. rng: the seeded generator every
    random number (latency jitter, pixel noise) comes from.
    """

    def __init__(self, spec: CameraSpec, fiducials: Sequence[Fiducial] = (),
                 bearing_targets: Sequence[BearingTarget] = (),
                 obstacles: Sequence[Obstacle] = (),
                 rng: np.random.Generator | None = None):
        self.spec = spec
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.period = 1.0 / spec.fps
        self._k = spec.camera_matrix()
        self._focal = np.array(self._k[:2])
        self._principal = np.array(self._k[2:])
        self._half_image = np.array((spec.width / 2.0, spec.height / 2.0))
        self._area_scale = 50.0 / (spec.width * spec.height)  # half cross product -> % image
        self._dist = tuple(float(c) for c in spec.distortion)
        self._distorted = any(c != 0.0 for c in self._dist)
        mount = spec.robot_to_camera
        self._mount_rot = np.asarray(mount.rotation().toMatrix(), dtype=float)
        # (p_field - eye) @ (Rz(heading) @ B) = optical-frame coordinates, B the mount rotation
        # followed by the change to optical axes; Rz(h) @ B = cos h · B_c + sin h · B_s + B_z.
        b = self._mount_rot @ _NWU_TO_OPTICAL.T
        self._b_c = np.array([b[0], b[1], np.zeros(3)])
        self._b_s = np.array([-b[1], b[0], np.zeros(3)])
        self._b_z = np.array([np.zeros(3), np.zeros(3), b[2]])
        self._mount_xyz = (float(mount.X()), float(mount.Y()), float(mount.Z()))
        self._hfov_half = spec.horizontal_fov() / 2.0
        self._occluders = _Occluders(obstacles)

        unique = {f.id: f for f in fiducials}
        tags = sorted(unique.values(), key=lambda f: f.id)
        self._ids = np.array([t.id for t in tags], dtype=np.int64)
        count = len(tags)
        self._tag_rot = np.zeros((count, 3, 3))
        centres = np.zeros((count, 3))
        sizes = np.zeros(count)
        for i, t in enumerate(tags):
            self._tag_rot[i] = np.asarray(t.pose.rotation().toMatrix(), dtype=float)
            centres[i] = (t.pose.X(), t.pose.Y(), t.pose.Z())
            sizes[i] = t.size
        self._model = _UNIT_CORNERS[None, :, :] * sizes[:, None, None]  # (T, 4, 3) tag frame
        corners = self._model @ self._tag_rot.transpose(0, 2, 1) + centres[:, None, :]
        self._points = np.concatenate((corners, centres[:, None, :]), axis=1)  # (T, 5, 3)
        self._normals = self._tag_rot[:, :, 0]
        self._normal_offsets = np.einsum("ti,ti->t", self._normals, centres)
        self._tag_poses = [(float(c[0]), float(c[1]), float(math.atan2(r[1, 0], r[0, 0])))
                           for c, r in zip(centres, self._tag_rot, strict=True)]

        self._bearings = list(bearing_targets)
        self._b_pos = np.array([(b.x, b.y, b.z) for b in self._bearings],
                               dtype=float).reshape(-1, 3)
        self._b_start = np.array([b.view_start for b in self._bearings], dtype=float)
        self._b_span = np.array([b.view_end - b.view_start for b in self._bearings], dtype=float)
        self._b_dist = np.array([(b.min_distance, b.max_distance) for b in self._bearings],
                                dtype=float).reshape(-1, 2)
        self._sequence = 1  # frame counter; keeps counting across resets, like a coprocessor
        self.reset()

    # --- scheduling ---------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the schedule and every frame not yet delivered (the next update starts a
        new capture sequence at its time)."""
        self._t0: float | None = None
        self._next = 0
        self._last_delivery = -math.inf
        self._last: tuple[float, tuple[float, float, float]] | None = None
        self._pending: deque[Frame] = deque()

    def update(self, time: float, robot_pose: Pose2d | Sequence[float]) -> list[Frame]:
        """Advance to ``time`` (s) with the robot at ``robot_pose`` (Pose2d or (x m, y m,
        heading rad)); returns the frames delivered since the last call, oldest first.

        Captures fall every 1/fps s from the first update; the pose at a capture between two
        updates is interpolated linearly (heading along the shorter arc). Time going
        backwards resets the camera; a non-finite time is ignored.
        """
        time = float(time)
        if not math.isfinite(time):
            return []
        pose = _pose_tuple(robot_pose)
        if self._last is not None and time < self._last[0]:
            self.reset()
        if self._t0 is None:
            self._t0, self._next = time, 0
        t0, period = self._t0, self.period
        behind = (time - (t0 + self._next * period)) / period
        if behind > MAX_CATCHUP:
            self._next = math.floor((time - t0) / period + 1e-9)
        while t0 + self._next * period <= time + 1e-9:
            tc = t0 + self._next * period
            self._pending.append(self.capture(tc, self._pose_at(tc, time, pose)))
            self._next += 1
        self._last = (time, pose)
        out = []
        while self._pending and self._pending[0].delivery_time <= time + 1e-9:
            out.append(self._pending.popleft())
        return out

    def _pose_at(self, tc: float, time: float, pose: tuple[float, float, float]
                 ) -> tuple[float, float, float]:
        last = self._last
        if last is None or time <= last[0] or not all(map(math.isfinite, last[1])):
            return pose
        t_prev, (x0, y0, h0) = last
        s = min(max((tc - t_prev) / (time - t_prev), 0.0), 1.0)
        dh = math.remainder(pose[2] - h0, math.tau)
        return x0 + s * (pose[0] - x0), y0 + s * (pose[1] - y0), h0 + s * dh

    def capture(self, time: float, robot_pose: Pose2d | Sequence[float]) -> Frame:
        """Capture one frame now, at simulated ``time`` s, with the robot at ``robot_pose``;
        draws its latency and noise. (``update`` calls this on the frame-rate schedule.)"""
        spec = self.spec
        latency = max(0.0, float(self.rng.normal(spec.latency, spec.latency_std))
                      if spec.latency_std > 0 else spec.latency)
        delivery = max(time + latency, self._last_delivery)
        self._last_delivery = delivery
        pose = _pose_tuple(robot_pose)
        if all(map(math.isfinite, pose)) and max(abs(pose[0]), abs(pose[1])) < MAX_POSITION:
            tags, multitag, poses = self._observe_tags(*pose)
            bearings = self._observe_bearings(*pose)
        else:
            tags, multitag, poses, bearings = (), None, (), ()
        frame = Frame(spec.name, self._sequence, time, delivery, pose, tags, multitag,
                      bearings, poses)
        self._sequence += 1
        return frame

    # --- observation --------------------------------------------------------------------

    def _eye(self, x: float, y: float, heading: float) -> tuple[np.ndarray, np.ndarray]:
        """Camera position in the field (3,) and the field-to-optical matrix A (3, 3) such
        that optical coordinates = (p - eye) @ A."""
        c, s = math.cos(heading), math.sin(heading)
        mx, my, mz = self._mount_xyz
        eye = np.array((x + c * mx - s * my, y + s * mx + c * my, mz))
        return eye, c * self._b_c + s * self._b_s + self._b_z

    def _distort(self, uv: np.ndarray) -> np.ndarray:
        """OpenCV's lens distortion of normalized image points (..., 2)."""
        k1, k2, p1, p2, k3 = self._dist
        u, v = uv[..., 0], uv[..., 1]
        r2 = u * u + v * v
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        cross = u * v
        out = uv * radial[..., None]
        out[..., 0] += 2.0 * p1 * cross + p2 * (r2 + 2.0 * u * u)
        out[..., 1] += p1 * (r2 + 2.0 * v * v) + 2.0 * p2 * cross
        return out

    def _undistort_noise(self, uv: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """Map pixel noise (..., 2) at distorted points to undistorted pixels (first order:
        the inverse of the distortion's Jacobian at the true normalized points ``uv``)."""
        k1, k2, p1, p2, k3 = self._dist
        fx, fy, _, _ = self._k
        u, v = uv[..., 0], uv[..., 1]
        r2 = u * u + v * v
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        dradial = k1 + r2 * (2.0 * k2 + 3.0 * k3 * r2)  # d radial / d r2
        a11 = radial + 2.0 * u * u * dradial + 2.0 * p1 * v + 6.0 * p2 * u
        a12 = 2.0 * u * v * dradial + 2.0 * p1 * u + 2.0 * p2 * v  # = a21
        a22 = radial + 2.0 * v * v * dradial + 6.0 * p1 * v + 2.0 * p2 * u
        det = a11 * a22 - a12 * a12
        det = np.where(np.abs(det) > 1e-9, det, 1e-9)
        nu, nv = noise[..., 0] / fx, noise[..., 1] / fy
        return np.stack(((a22 * nu - a12 * nv) / det * fx, (a11 * nv - a12 * nu) / det * fy),
                        axis=-1)

    def _observe_tags(self, x: float, y: float, heading: float
                      ) -> tuple[tuple[TagObservation, ...], MultiTagEstimate | None,
                                 tuple[tuple[float, float, float], ...]]:
        if len(self._ids) == 0:
            return (), None, ()
        spec = self.spec
        focal, centre_px, half = self._focal, self._principal, self._half_image
        eye, rot_a = self._eye(x, y, heading)

        # Project every tag's corners and centre; keep those that can be detected.
        pc = (self._points - eye) @ rot_a  # (T, 5, 3) optical frame
        z = pc[..., 2]
        iz = 1.0 / np.maximum(z, MIN_DEPTH)  # behind the camera: masked out below
        uv = pc[..., :2] * iz[..., None]  # normalized image coordinates (T, 5, 2)
        centre = pc[:, 4]
        cand = (z.min(1) > MIN_DEPTH) & (self._normals @ eye > self._normal_offsets)
        cand &= (centre * centre).sum(1) <= spec.max_range ** 2
        if self._distorted:
            # Beyond twice the image's pinhole extent the distortion polynomial folds over.
            cand &= (np.abs(uv * focal) <= 4.0 * half).all((1, 2))
            pix = self._distort(uv) * focal + centre_px
        else:
            pix = uv * focal + centre_px
        margin = 4.0 * spec.pixel_noise + 1.0
        cand &= (np.abs(pix[:, :4] - half) <= half + margin).all((1, 2))
        idx = cand.nonzero()[0]
        if len(idx) and self._occluders.count:
            hidden = self._occluders.blocked(eye, self._points.take(idx, 0).reshape(-1, 3))
            idx = idx[~hidden.reshape(-1, 5).any(1)]
        if len(idx) == 0:
            return (), None, ()
        pix = pix.take(idx, 0)
        corners = pix[:, :4]
        noise = None
        if spec.pixel_noise > 0:
            noise = self.rng.normal(0.0, spec.pixel_noise, corners.shape)
            corners = corners + noise
        diag = corners[:, 2:] - corners[:, :2]  # a quadrilateral's area: half the diagonals'
        area = np.abs(diag[:, 0, 0] * diag[:, 1, 1] - diag[:, 1, 0] * diag[:, 0, 1]) \
            * self._area_scale
        keep = (np.abs(corners - half) <= half).all((1, 2)) & (area >= spec.min_area)
        if not keep.all():
            if not keep.any():
                return (), None, ()
            idx, pix, corners, area = idx[keep], pix[keep], corners[keep], area[keep]
            noise = None if noise is None else noise[keep]
        m = len(idx)

        # Gauss-Newton on the reprojection error, in undistorted pixels with u and v
        # interleaved, for 2m + 1 poses at once: each tag's best pose, each tag's alternate,
        # and the multi-tag pose (which appears once per tag, with that tag's field corners;
        # its normal equations are summed). Step 1 starts the best and multi-tag poses at the
        # truth (their residual is the noise itself) and the alternates at the planar
        # ambiguity: the truth reflected through the plane normal to the line of sight (times
        # diag(-1, 1, 1) in the tag frame so it stays a rotation), the same image to first
        # order. Step 2 refines them all: a small or distant tag's minimum can lie degrees away
        # from the truth along a nearly flat valley.
        uvt = uv.take(idx, 0)[:, :4]
        if noise is None:
            res, obs_t = np.zeros((m, 8)), uvt
        else:
            dn = self._undistort_noise(uvt, noise) if self._distorted else noise
            res, obs_t = dn.reshape(m, 8), uvt + dn / focal
        pts = pc.take(idx, 0)[:, :4]
        t_true = centre.take(idx, 0)
        t_multi = -(eye @ rot_a)
        rot_true = rot_a.T @ self._tag_rot.take(idx, 0)  # tag frame -> optical
        ray = t_true / np.sqrt((t_true * t_true).sum(1))[:, None]
        rot_flip = rot_true - 2.0 * ray[:, :, None] * (ray[:, None, :] @ rot_true)
        rot_flip[:, :, 0] *= -1.0
        model = self._model.take(idx, 0)
        a_flip = model @ rot_flip.transpose(0, 2, 1)
        p_flip = a_flip + t_true[:, None, :]
        iz_flip = 1.0 / np.maximum(p_flip[..., 2], MIN_DEPTH)
        uv_flip = p_flip[..., :2] * iz_flip[..., None]
        izt = iz.take(idx, 0)[:, :4]
        rows, summing = _pose_rows(m)
        jac = _jacobian(np.concatenate((uvt, uv_flip, uvt)), np.concatenate((izt, iz_flip, izt)),
                        np.concatenate((pts - t_true[:, None, :], a_flip, pts - t_multi)),
                        focal)
        resid = np.concatenate((res, ((obs_t - uv_flip) * focal).reshape(m, 8), res))
        delta = _step(jac, resid, summing)
        rot = _retract(delta[:, :3]) @ np.concatenate((rot_true, rot_flip, rot_a.T[None]))
        trans = np.concatenate((t_true, t_true, t_multi[None])) + delta[:, 3:]

        objects = np.concatenate((model, model, self._points.take(idx, 0)[:, :4]))
        obs3 = np.concatenate((obs_t, obs_t, obs_t))
        a2 = objects @ rot.take(rows, 0).transpose(0, 2, 1)
        p2 = a2 + trans.take(rows, 0)[:, None, :]
        iz2 = 1.0 / np.maximum(p2[..., 2], MIN_DEPTH)
        uv2 = p2[..., :2] * iz2[..., None]
        delta = _step(_jacobian(uv2, iz2, a2, focal), ((obs3 - uv2) * focal).reshape(3 * m, 8),
                      summing)
        rot = _retract(delta[:, :3]) @ rot
        trans = trans + delta[:, 3:]

        # The errors: reprojection of the final poses.
        p3 = objects @ rot.take(rows, 0).transpose(0, 2, 1) + trans.take(rows, 0)[:, None, :]
        z3 = p3[..., 2]
        res3 = (obs3 - p3[..., :2] / np.maximum(z3, MIN_DEPTH)[..., None]) * focal
        sq = (res3 * res3).sum((1, 2))
        err = np.sqrt(sq[:2 * m] / 8.0)
        err[z3[:2 * m].min(1) <= MIN_DEPTH] = np.inf  # a pose with a corner behind the camera
        rot_m, trans_m = rot[2 * m], trans[2 * m]
        rot, trans = rot[:2 * m], trans[:2 * m]
        swap = err[m:] < err[:m]  # the alternate fits better: it is the best (a "flip")
        if swap.any():
            perm = np.concatenate((swap, ~swap)) * m + np.tile(np.arange(m), 2)
            rot, trans, err = rot.take(perm, 0), trans.take(perm, 0), err.take(perm)

        # Optical -> camera frame (x forward, y left, z up): R' = Mᵀ R, t' = Mᵀ t.
        rot_l = (_OPTICAL_TO_NWU @ rot).tolist()
        t_l = (trans @ _NWU_TO_OPTICAL).tolist()
        err_l = err.tolist()
        # The tag centre: its true projection moved by the mean corner noise.
        cpix_l = (pix[:, 4] if noise is None else pix[:, 4] + noise.mean(1)).tolist()
        ids, area_l, corners_l = self._ids.take(idx).tolist(), area.tolist(), corners.tolist()
        fx, fy, cx, cy = self._k
        tags = []
        order = sorted(range(m), key=lambda i: (-area_l[i], ids[i]))  # largest first
        for i in order:
            bx, by, bz = t_l[i]
            ax, ay, az = t_l[m + i]
            e_best, e_alt = err_l[i], err_l[m + i]
            px, py = cpix_l[i]
            c0, c1, c2, c3 = corners_l[i]
            tags.append(TagObservation(
                ids[i], math.degrees(math.atan((px - cx) / fx)),
                math.degrees(math.atan((cy - py) / fy)), area_l[i], 0.0, (px, py),
                (tuple(c0), tuple(c1), tuple(c2), tuple(c3)),
                Transform3d(bx, by, bz, _rotation(rot_l[i])),
                Transform3d(ax, ay, az, _rotation(rot_l[m + i])),
                # Errors below 1e-9 px are rounding (a noise-free view): ambiguity 0 then.
                e_best / e_alt if e_alt > 1e-9 else 0.0, e_best, e_alt,
                math.sqrt(bx * bx + by * by + bz * bz)))
        poses = tuple(self._tag_poses[idx[i]] for i in order)

        multitag = None
        if m >= 2:
            cam_x, cam_y, cam_z = (-(trans_m @ rot_m)).tolist()
            e_m = math.sqrt(float(sq[2 * m:].sum()) / (8 * m))
            multitag = MultiTagEstimate(
                Transform3d(cam_x, cam_y, cam_z,
                            _rotation((rot_m.T @ _NWU_TO_OPTICAL).tolist())),
                tuple(sorted(ids)), e_m)
        return tuple(tags), multitag, poses

    def _observe_bearings(self, x: float, y: float, heading: float
                          ) -> tuple[BearingObservation, ...]:
        if not self._bearings:
            return ()
        eye, _ = self._eye(x, y, heading)
        fwd = math.cos(heading), math.sin(heading)
        axis = self._mount_rot[:, 0]
        cam_dir = math.atan2(fwd[1] * axis[0] + fwd[0] * axis[1],
                             fwd[0] * axis[0] - fwd[1] * axis[1])
        d = self._b_pos - eye
        dist = np.hypot(d[:, 0], d[:, 1])
        offset = np.remainder(np.arctan2(d[:, 1], d[:, 0]) - cam_dir + np.pi, 2 * np.pi) - np.pi
        back = np.arctan2(-d[:, 1], -d[:, 0])
        window = (self._b_span >= 2 * np.pi) | (
            np.remainder(back - self._b_start, 2 * np.pi) <= np.remainder(self._b_span,
                                                                          2 * np.pi))
        seen = ((np.abs(offset) <= self._hfov_half) & (dist >= self._b_dist[:, 0])
                & (dist <= self._b_dist[:, 1]) & window)
        idx = np.flatnonzero(seen)
        if len(idx) and self._occluders.count:
            idx = idx[~self._occluders.blocked(eye, self._b_pos[idx])]
        out = [BearingObservation(self._bearings[i].name, math.degrees(offset[i]),
                                  float(dist[i])) for i in idx]
        out.sort(key=lambda b: abs(b.offset))
        return tuple(out)


class VisionSystem:
    """Every camera of a robot, sharing the targets and the field elements.

    Each camera draws from its own child of ``rng`` (spawned in the order of ``specs``), so
    adding a camera does not change the noise another one sees.

        >>> import numpy as np
        >>> vision = VisionSystem([CameraSpec("a"), CameraSpec("b")], season_fiducials("2026"),
        ...                       rng=np.random.default_rng(1))
        >>> sorted(vision.cameras)
        ['a', 'b']
    """

    def __init__(self, specs: Sequence[CameraSpec], fiducials: Sequence[Fiducial] = (),
                 bearing_targets: Sequence[BearingTarget] = (),
                 obstacles: Sequence[Obstacle] = (),
                 rng: np.random.Generator | None = None):
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"camera names must be unique, got {names}")
        rng = rng if rng is not None else np.random.default_rng(0)
        children = rng.spawn(len(specs)) if specs else []
        self.cameras: dict[str, Camera] = {
            s.name: Camera(s, fiducials, bearing_targets, obstacles, child)
            for s, child in zip(specs, children, strict=True)}

    def reset(self) -> None:
        """Reset every camera (see :meth:`Camera.reset`)."""
        for cam in self.cameras.values():
            cam.reset()

    def update(self, time: float, robot_pose: Pose2d | Sequence[float]) -> list[Frame]:
        """Advance every camera to ``time`` s; the frames delivered, by delivery time."""
        frames = [f for cam in self.cameras.values() for f in cam.update(time, robot_pose)]
        frames.sort(key=lambda f: f.delivery_time)
        return frames


def megatag2_position(frame: Frame, yaw: float, robot_to_camera: Transform3d,
                      tag_positions: dict[int, tuple[float, float, float]]
                      ) -> tuple[float, float] | None:
    """Robot (x, y) m from a frame's tags given the robot's yaw (rad), MegaTag2-style.

    Each tag's measured camera-to-tag translation is rotated into the field by the given yaw
    (and the mount), the camera position follows from the tag's known position, and the
    estimates of all tags are averaged. None without tags or with a non-finite yaw.
    """
    if not frame.tags or not math.isfinite(yaw):
        return None
    c, s = math.cos(yaw), math.sin(yaw)
    mount = np.asarray(robot_to_camera.rotation().toMatrix(), dtype=float)
    mt = robot_to_camera.translation()
    xs, ys = [], []
    for tag in frame.tags:
        pos = tag_positions.get(tag.id)
        if pos is None:
            continue
        bt = tag.best.translation()
        vec = mount @ np.array([bt.X(), bt.Y(), bt.Z()]) + np.array([mt.X(), mt.Y(), mt.Z()])
        xs.append(pos[0] - (c * vec[0] - s * vec[1]))
        ys.append(pos[1] - (s * vec[0] + c * vec[1]))
    if not xs:
        return None
    return float(np.mean(xs)), float(np.mean(ys))
