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
window. A camera with an object detector (``CameraSpec.detector``) reports game pieces
instead of tags (:mod:`simserver.models.detection`; ``_observe_pieces``). Each frame is
delivered after a latency drawn per frame (mean and jitter), in capture order. A frame costs
about a hundred numpy operations on small arrays whatever the number of tags: the projection
of every tag that faces the camera at once, and all pose solutions of
the tags seen at once (see below).

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
mapped through the distortion's local Jacobian. All 2m + 1 pose solutions of a frame with m
tags (best, alternate, multi-tag) are refined together, as one batch of small normal equations
(see ``_refine``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from wpimath.geometry import Pose2d, Pose3d, Rotation3d, Transform3d

from simserver.models.detection import (
    MAX_DETECTIONS,
    Detectables,
    DetectorSpec,
    PieceObservation,
    cylinder_boxes,
    sphere_boxes,
)

if TYPE_CHECKING:
    from simserver.models.obstacles import Obstacle

try:  # numpy's batched LAPACK solve (private, in numpy 1.x and 2.x): NaNs where singular
    from numpy.linalg._umath_linalg import solve1 as _solve_vectors
except ImportError:  # a numpy that moved it: the public route to the same routine

    def _solve_vectors(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:  # type: ignore[misc]
        try:
            out[...] = np.linalg.solve(a, b[..., None])[..., 0]
        except np.linalg.LinAlgError:
            out[...] = np.nan

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
_GAUSS_NEWTON_STEPS = 2  # per pose solution (see the module docstring)
_DAMPING = 1e-9 * np.eye(6)  # keeps the normal equations solvable for degenerate views
_DAMPING_ROW = np.hstack((_DAMPING, np.zeros((6, 1)))).ravel()  # [damping | 0], flattened


@functools.cache
def _jacobian_parts(fx: float, fy: float) -> np.ndarray:
    """(4, 18) matrix taking a rotated object point in homogeneous coordinates
    (a_x, a_y, a_z, 1) to the three building blocks of its projection Jacobian (see
    _refine): fx·[0, a_z, -a_y, 1, 0, 0] and fy·[-a_z, 0, a_x, 0, 1, 0], the rates of the
    pixels u and v without the depth term, and g = [-a_y, a_x, 0, 0, 0, -1], the depth
    term's factor; fx, fy: focal lengths, px."""
    parts = np.zeros((4, 3, 6))  # a_x, a_y, a_z, 1 -> block, column
    parts[2, 0, 1] = parts[0, 1, 2] = parts[0, 2, 1] = parts[3, 0, 3] = parts[3, 1, 4] = 1.0
    parts[1, 0, 2] = parts[2, 1, 0] = parts[1, 2, 0] = parts[3, 2, 5] = -1.0
    parts[:, 0] *= fx
    parts[:, 1] *= fy
    return parts.reshape(4, 18)


def _cayley_table() -> np.ndarray:
    """(16, 17) matrix taking the outer product of (1, w) with itself, flattened, to the 16
    entries of the homogeneous [[(1 - s)·I + [w]× + w·wᵀ/2, 0], [0, 1 + s]] (row by row) and
    to 1 + s, s = |w|²/4: their ratio is the Cayley transform (I - [w/2]×)⁻¹(I + [w/2]×) of a
    rotation vector w, in homogeneous coordinates."""
    table = np.zeros((4, 4, 17))  # [1, w0, w1, w2] x [1, w0, w1, w2] -> outputs
    for out in (15, 16):  # 1 + s
        table[0, 0, out] = 1.0
        for k in range(3):
            table[k + 1, k + 1, out] = 0.25
    for i in range(3):
        table[0, 0, 5 * i] = 1.0
        for j in range(3):
            table[i + 1, j + 1, 4 * i + j] = 0.5
            table[j + 1, j + 1, 5 * i] -= 0.25
    for i, j, k, sign in ((0, 1, 2, -1.0), (0, 2, 1, 1.0), (1, 0, 2, 1.0), (1, 2, 0, -1.0),
                          (2, 0, 1, -1.0), (2, 1, 0, 1.0)):
        table[0, k + 1, 4 * i + j] = sign  # [w]×[i, j] = sign · w_k
    return table.reshape(16, 17)


_CAYLEY = _cayley_table()
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
    unit). max_range: farthest detected target, m. detector: an object-detection pipeline
    (game pieces instead of AprilTags; see :mod:`simserver.models.detection`), None for the
    AprilTag pipeline. tag_ids: the AprilTag ids reported (None: all; a Limelight's or
    PhotonVision's ID filter). pipelines: the pipelines robot code may select (index 0, 1, ...;
    empty: one, index 0, made of the fields above); see :meth:`pipeline`.
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
    detector: DetectorSpec | None = None
    tag_ids: frozenset[int] | None = None
    pipelines: tuple[PipelineSpec, ...] = ()

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

    @property
    def pipeline_count(self) -> int:
        """How many pipelines robot code may select (indexes 0 .. count - 1)."""
        return max(len(self.pipelines), 1)

    def pipeline(self, index: int) -> CameraSpec:
        """The camera running pipeline ``index``: this spec with the pipeline's resolution,
        frame rate, detector and tag filter (itself without ``pipelines``). Calibrated
        ``intrinsics`` are scaled to the pipeline's resolution, as the same sensor binned or
        cropped to it sees: pixel centres scale about the image corner, (c + 0.5)·s - 0.5.
        IndexError outside 0 .. pipeline_count - 1."""
        if not 0 <= index < self.pipeline_count:
            raise IndexError(f"camera {self.name!r}: no pipeline {index}")
        if not self.pipelines:
            return self
        p = self.pipelines[index]
        intrinsics = self.intrinsics
        if intrinsics is not None and (p.width, p.height) != (self.width, self.height):
            sx, sy = p.width / self.width, p.height / self.height
            fx, fy, cx, cy = intrinsics
            intrinsics = (fx * sx, fy * sy, (cx + 0.5) * sx - 0.5, (cy + 0.5) * sy - 0.5)
        return dataclasses.replace(self, width=p.width, height=p.height, fps=p.fps,
                                   detector=p.detector, tag_ids=p.tag_ids,
                                   intrinsics=intrinsics)

    def detects_pieces(self) -> bool:
        """Whether some pipeline of the camera is an object detector."""
        return self.detector is not None or any(p.detector is not None for p in self.pipelines)


@dataclass(frozen=True)
class PipelineSpec:
    """One pipeline of a camera (see :meth:`CameraSpec.pipeline`): resolution ``width`` ×
    ``height`` px, frame rate ``fps`` Hz, ``detector`` (an object detector; None: AprilTags)
    and ``tag_ids`` (the tag ids reported; None: all)."""

    width: int
    height: int
    fps: float
    detector: DetectorSpec | None = None
    tag_ids: frozenset[int] | None = None


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
    bearing targets, smallest |offset| first. tag_poses: field poses of ``tags``. pipeline:
    the index of the pipeline that captured it; driver_mode: captured in driver mode (no
    processing, no targets). A camera with an object detector delivers
    :class:`DetectionFrame`, with the pieces it saw.
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
    pipeline: int = 0
    driver_mode: bool = False

    @property
    def pieces(self) -> tuple[PieceObservation, ...]:
        """Game pieces detected, largest first: none for an AprilTag pipeline."""
        return ()

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


@dataclass(frozen=True)
class DetectionFrame(Frame):
    """A frame of an object-detection pipeline: no tags; ``pieces``: the game pieces
    detected, largest first. (A separate class so that AprilTag frames keep their fields.)"""

    pieces: tuple[PieceObservation, ...] = ()


# --- geometry helpers --------------------------------------------------------------------


def distort(uv: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """OpenCV's lens distortion (k1, k2, p1, p2, k3) of normalized image points (2, ...),
    u and v first."""
    k1, k2, p1, p2, k3 = coefficients
    u, v = uv[0], uv[1]
    r2 = u * u + v * v
    radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
    cross = u * v
    out = uv * radial
    out[0] += 2.0 * p1 * cross + p2 * (r2 + 2.0 * u * u)
    out[1] += p1 * (r2 + 2.0 * v * v) + 2.0 * p2 * cross
    return out


def distortion_jacobian(uv: np.ndarray, coefficients: Sequence[float]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Jacobian [[a11, a12], [a12, a22]] (symmetric) of :func:`distort` at normalized
    image points (2, ...): the three distinct entries, each shaped like ``uv[0]``."""
    k1, k2, p1, p2, k3 = coefficients
    u, v = uv[0], uv[1]
    r2 = u * u + v * v
    radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
    dradial = k1 + r2 * (2.0 * k2 + 3.0 * k3 * r2)  # d radial / d r2
    a11 = radial + 2.0 * u * u * dradial + 2.0 * p1 * v + 6.0 * p2 * u
    a12 = 2.0 * u * v * dradial + 2.0 * p1 * u + 2.0 * p2 * v  # = a21
    a22 = radial + 2.0 * v * v * dradial + 6.0 * p1 * v + 2.0 * p2 * u
    return a11, a12, a22


def fiducial_corners(fiducial: Fiducial) -> np.ndarray:
    """The four corners (4, 3) of a tag's black square in the field, m, in PhotonVision's
    order (the order of :attr:`TagObservation.corners`)."""
    rot = np.asarray(fiducial.pose.rotation().toMatrix(), dtype=float)
    centre = np.array((fiducial.pose.X(), fiducial.pose.Y(), fiducial.pose.Z()))
    return (_UNIT_CORNERS * fiducial.size) @ rot.T + centre


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
def _pose_layout(m: int) -> tuple[np.ndarray, np.ndarray]:
    """How the pose solutions for m tags are laid out: 2m + 1 poses (each tag's best pose,
    then each tag's alternate, then the multi-tag pose) fitted to 3m blocks of four points
    (one for each best and alternate pose, then one per tag for the multi-tag pose). Returns
    the pose of each block (3m,) and the (2m + 1, 3m + 1) matrix that adds up blocks by pose,
    plus a last column of ones (for a term every pose gets: the damping)."""
    rows = np.concatenate((np.arange(2 * m), np.full(m, 2 * m)))
    sums = np.zeros((2 * m + 1, 3 * m + 1))
    sums[rows, np.arange(3 * m)] = sums[:, -1] = 1.0
    return rows, sums


def _refine(objects: np.ndarray, rot: np.ndarray, trans: np.ndarray, obs: np.ndarray,
            focal: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_GAUSS_NEWTON_STEPS`` Gauss-Newton steps on the reprojection error, in undistorted
    pixels, for the 2m + 1 poses (rotations ``rot`` (P, 4, 4) in homogeneous coordinates,
    translations ``trans`` (P, 3); optical frame) of the 3m blocks of four object points
    ``objects`` (B, 4, 4) (homogeneous) seen at the undistorted pixels ``obs`` (B, 4, 2)
    (relative to the principal point), laid out as _pose_layout(m) says; focal: (fx, fy) px.

    A pose perturbation (rotation vector ω, translation δ) moves a point to
    p' = exp([ω]×)·a + t + δ, a = p - t; its pixel u = fx·x + cx, x = p_x / p_z (and v
    likewise) changes at the rate (fx·[0, a_z, -a_y, 1, 0, 0] + fx·x·g) / z (row u) and
    (fy·[-a_z, 0, a_x, 0, 1, 0] + fy·y·g) / z (row v), g = [-a_y, a_x, 0, 0, 0, -1]. The normal
    equations of each pose add up its blocks; they are lightly damped, and a pose whose
    system is singular does not move. The rotation is updated by the Cayley transform of ω,
    an exact rotation equal to exp([ω]×) to second order (all a first-order step needs).

    Returns the refined rot and trans, and each block's squared reprojection error (B,) px²
    and smallest depth (B,) m.
    """
    rows, sums = _pose_layout(len(objects) // 3)
    blocks, poses, points = len(objects), len(rot), objects.shape[0] * objects.shape[1]
    jacobian_parts = _jacobian_parts(*focal.tolist())
    normal = np.empty((blocks + 1, 42))  # each block's Jᵀ[J | r], then [damping | 0]
    normal[-1] = _DAMPING_ROW
    step = np.ones((poses, 7))  # 1, then the step: ω, δ
    flat = step.reshape(-1)
    with np.errstate(invalid="ignore"):  # a singular system: NaNs, handled below
        for _ in range(_GAUSS_NEWTON_STEPS):
            a = objects @ rot.take(rows, 0).transpose(0, 2, 1)  # (B, 4, 4): a_x, a_y, a_z, 1
            p = a[..., :3] + trans.take(rows, 0)[:, None, :]
            z = np.maximum(p[..., 2:], MIN_DEPTH)
            pix = p[..., :2] * (focal / z)  # (fx·x, fy·y)
            parts = (a.reshape(points, 4) @ jacobian_parts).reshape(points, 3, 6)
            jac = parts[:, :2] + pix.reshape(points, 2, 1) * parts[:, 2:]
            jac /= z.reshape(points, 1, 1)
            jac = jac.reshape(blocks, -1, 6)  # u and v rows interleaved, point by point
            resid = (obs - pix).reshape(blocks, -1, 1)
            np.matmul(jac.transpose(0, 2, 1), np.concatenate((jac, resid), 2),
                      out=normal[:-1].reshape(blocks, 6, 7))
            system = (sums @ normal).reshape(poses, 6, 7)
            # numpy's batched LAPACK solver without np.linalg.solve's checks and conversions
            # (several µs a call, a noticeable part of a frame): same routine, same results.
            _solve_vectors(system[:, :, :6], system[:, :, 6], out=step[:, 1:])
            if not math.isfinite(flat.dot(flat)):  # a NaN or inf anywhere (cheaper than sum)
                step[~np.isfinite(step).all(1), 1:] = 0.0
            cayley = (step[:, :4, None] * step[:, None, :4]).reshape(poses, 16) @ _CAYLEY
            rot = (cayley[:, :16] / cayley[:, 16:]).reshape(poses, 4, 4) @ rot
            trans = trans + step[:, 4:]
    p = (objects @ rot.take(rows, 0).transpose(0, 2, 1))[..., :3] + trans.take(rows, 0)[:, None]
    z = p[..., 2]
    res = (obs - p[..., :2] * (focal / np.maximum(z, MIN_DEPTH)[..., None])).reshape(blocks, -1)
    return rot, trans, np.vecdot(res, res), z.min(1)


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


def _camera_transform(t: list[float], r: list[list[float]]) -> Transform3d:
    """The Transform3d in the camera frame (x forward, y left, z up) of a translation ``t``
    and a rotation matrix ``r`` (nested lists) in the optical frame (x right, y down,
    z forward): Mᵀt and Mᵀr, M = _NWU_TO_OPTICAL, whose rows are (z, -x, -y)."""
    r0, r1, r2 = r
    # The rows of Mᵀr are (r2, -r0, -r1): _rotation's angles read from them directly.
    cos_pitch = math.hypot(r1[1], r1[2])
    if cos_pitch < 1e-9:
        return Transform3d(t[2], -t[0], -t[1], _rotation(
            [r2, [-r0[0], -r0[1], -r0[2]], [-r1[0], -r1[1], -r1[2]]]))
    return Transform3d(t[2], -t[0], -t[1], Rotation3d(
        math.atan2(-r1[1], -r1[2]), math.atan2(r1[0], cos_pitch), math.atan2(-r0[0], r2[0])))


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
        # Ufunc reductions rather than the array methods: the same loops without the
        # methods' Python wrappers (a frame makes a dozen of these calls).
        d = points - eye
        end = 1.0 - LINE_OF_SIGHT_MARGIN / np.maximum(np.sqrt(np.add.reduce(d * d, 1)), 1e-9)
        rate = self.normals @ d.T  # (C, S)
        slack = self.offsets - self.normals @ eye  # < 0: the eye is outside that half-space
        outside = slack < 0.0
        # Entered (outside) when the rate is negative, left (inside) when it is positive;
        # never crossed otherwise (parallel included).
        crosses = rate * np.where(outside, -1.0, 1.0)[:, None] > 0.0
        cross = np.divide(slack[:, None], rate, out=np.full(rate.shape, np.inf),
                          where=crosses)
        shape = (self.width, self.count, len(points))
        cross = cross.reshape(shape)
        outside = outside.reshape(self.width, self.count, 1)
        first = np.maximum.reduce(cross, 0, where=outside, initial=0.0)
        last = np.minimum.reduce(cross, 0, where=~outside, initial=np.inf)
        # An element containing the target itself (a tag in a recess of it, or element data
        # drawn a little too large) does not hide it.
        holds = np.logical_and.reduce((rate <= slack[:, None]).reshape(shape), 0)
        return np.logical_or.reduce((first < np.minimum(last, end)) > holds, 0)


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
        self.base_spec = spec
        self.rng = rng if rng is not None else np.random.default_rng(0)
        mount = spec.robot_to_camera
        self._mount_rot = np.asarray(mount.rotation().toMatrix(), dtype=float)
        # The mount rotation followed by the change to optical axes, row by row (see _eye).
        self._mount_optical = (self._mount_rot @ _NWU_TO_OPTICAL.T).tolist()
        self._mount_xyz = (float(mount.X()), float(mount.Y()), float(mount.Z()))
        self._occluders = _Occluders(obstacles)

        unique = {f.id: f for f in fiducials}
        tags = sorted(unique.values(), key=lambda f: f.id)
        self._ids = np.array([t.id for t in tags], dtype=np.int64)
        count = len(tags)
        tag_rot = np.zeros((count, 3, 3))
        centres = np.zeros((count, 3))
        sizes = np.zeros(count)
        for i, t in enumerate(tags):
            tag_rot[i] = np.asarray(t.pose.rotation().toMatrix(), dtype=float)
            centres[i] = (t.pose.X(), t.pose.Y(), t.pose.Z())
            sizes[i] = t.size
        model = _UNIT_CORNERS[None, :, :] * sizes[:, None, None]  # (T, 4, 3) tag frame
        corners = model @ tag_rot.transpose(0, 2, 1) + centres[:, None, :]
        self._points = np.concatenate((corners, centres[:, None, :]), axis=1)  # (T, 5, 3)
        # The same in homogeneous coordinates (x, y, z, 1), coordinate-major: (4, 5, T).
        self._points_h = np.ones((4, 5, count))
        self._points_h[:3] = self._points.transpose(2, 1, 0)
        # Each tag's face plane as (n, -n·c): positive at homogeneous points in front of it.
        normals = tag_rot[:, :, 0]
        self._planes = np.hstack((normals, -np.einsum("ti,ti->t", normals, centres)[:, None]))
        # Each tag's rotation in homogeneous coordinates, then the same times diag(-1, 1, 1, 1)
        # (the planar ambiguity, see _observe_tags): (T, 4, 8).
        self._tag_rot_h = np.zeros((count, 4, 8))
        self._tag_rot_h[:, :3, :3] = tag_rot
        self._tag_rot_h[:, :3, 4:7] = tag_rot * (-1.0, 1.0, 1.0)
        self._tag_rot_h[:, 3, 3] = self._tag_rot_h[:, 3, 7] = 1.0
        # The object points of the pose solutions: each tag's corners in its own frame, then
        # in the field.
        self._pose_objects = np.ones((2 * count, 4, 4))  # homogeneous: (x, y, z, 1)
        self._pose_objects[:, :, :3] = np.concatenate((model, corners))
        self._tag_poses = [(float(c[0]), float(c[1]), float(math.atan2(r[1, 0], r[0, 0])))
                           for c, r in zip(centres, tag_rot, strict=True)]

        self._bearings = list(bearing_targets)
        self._b_pos = np.array([(b.x, b.y, b.z) for b in self._bearings],
                               dtype=float).reshape(-1, 3)
        self._b_start = np.array([b.view_start for b in self._bearings], dtype=float)
        self._b_span = np.array([b.view_end - b.view_start for b in self._bearings], dtype=float)
        self._b_dist = np.array([(b.min_distance, b.max_distance) for b in self._bearings],
                                dtype=float).reshape(-1, 2)
        self._sequence = 1  # frame counter; keeps counting across resets, like a coprocessor
        # Runtime settings robot code may change (see the setters below).
        self.pipeline = 0
        self.tag_filter: frozenset[int] | None = None
        self.throttle = 0
        self._skip_left = 0
        self.driver_mode = False
        self._t0: float | None = None  # the capture schedule (see reset)
        self._next: int = 0
        self._configure(spec.pipeline(0))
        self.reset()

    def _configure(self, spec: CameraSpec) -> None:
        """Make ``spec`` (the configured camera running one of its pipelines) the active one:
        everything that depends on its resolution, frame rate and tag filter."""
        self.spec = spec
        self.period = 1.0 / spec.fps
        self._k = spec.camera_matrix()
        self._focal = np.array(self._k[:2])
        # Per image axis, shaped to broadcast over coordinate-major points (2, 5, tags).
        self._focal_c = self._focal.reshape(2, 1, 1)
        self._principal_c = np.array(self._k[2:]).reshape(2, 1, 1)
        self._half_c = np.array((spec.width / 2.0, spec.height / 2.0)).reshape(2, 1, 1)
        # Projections this far from the image centre may still be noised into the image.
        self._reach_c = self._half_c + 4.0 * spec.pixel_noise + 1.0
        self._area_scale = 50.0 / (spec.width * spec.height)  # half cross product -> % image
        self._dist = tuple(float(c) for c in spec.distortion)
        self._distorted = any(c != 0.0 for c in self._dist)
        self._hfov_half = spec.horizontal_fov() / 2.0
        # Object detection: the half-angle of a cone around the optical axis holding the
        # whole image (generous with distortion), to cull pieces before projecting them.
        fx, fy, cx, cy = self._k
        reach = max(math.hypot(u / fx, v / fy) for u in (-0.5 - cx, spec.width - 0.5 - cx)
                    for v in (-0.5 - cy, spec.height - 0.5 - cy))
        self._cone = math.atan(reach * (2.0 if self._distorted else 1.0)) + 1e-6
        self._filter_tags()

    def _filter_tags(self) -> None:
        """Which tags may be detected: robot code's filter when it set one (it overrides the
        pipeline's, as Limelight's ``fiducial_id_filters_set`` does), else the pipeline's."""
        ids = self.tag_filter if self.tag_filter is not None else self.spec.tag_ids
        self._allowed = None if ids is None else np.isin(self._ids, sorted(ids))

    # --- runtime settings (from robot code) -------------------------------------------------

    def set_pipeline(self, index: int) -> None:
        """Run pipeline ``index`` from the next capture on (resolution, frame rate, detector,
        tag filter: :meth:`CameraSpec.pipeline`); the capture schedule continues from the next
        capture at the new rate. IndexError outside the camera's pipelines."""
        spec = self.base_spec.pipeline(index)
        if index == self.pipeline:
            return
        if self._t0 is not None and spec.fps != self.spec.fps:
            self._t0 += self._next * self.period
            self._next = 0
        self.pipeline = index
        self._configure(spec)

    def set_tag_filter(self, ids: Sequence[int] | None) -> None:
        """Detect only the tags whose id is in ``ids`` (None: the pipeline's filter again)."""
        self.tag_filter = None if ids is None else frozenset(int(i) for i in ids)
        self._filter_tags()

    def set_throttle(self, skip: int) -> None:
        """Skip ``skip`` scheduled captures after each one processed (Limelight's
        ``throttle_set``): the frame rate becomes fps / (skip + 1). ValueError below 0."""
        if skip < 0:
            raise ValueError("throttle must be ≥ 0")
        self.throttle = int(skip)
        self._skip_left = min(self._skip_left, self.throttle)

    def set_driver_mode(self, on: bool) -> None:
        """Driver mode: frames keep coming at the frame rate, with no targets (nothing is
        processed)."""
        self.driver_mode = bool(on)

    # --- scheduling ---------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the schedule and every frame not yet delivered (the next update starts a
        new capture sequence at its time)."""
        self._t0 = None
        self._next = 0
        self._last_delivery = -math.inf
        self._last: tuple[float, tuple[float, float, float]] | None = None
        self._pending: deque[Frame] = deque()

    def update(self, time: float, robot_pose: Pose2d | Sequence[float],
               pieces: Detectables | None = None,
               robots: Sequence[Obstacle] | None = None) -> list[Frame]:
        """Advance to ``time`` (s) with the robot at ``robot_pose`` (Pose2d or (x m, y m,
        heading rad)); returns the frames delivered since the last call, oldest first.

        Captures fall every 1/fps s from the first update; the pose at a capture between two
        updates is interpolated linearly (heading along the shorter arc). Time going
        backwards resets the camera; a non-finite time is ignored. ``pieces``: the game
        pieces on the field now (seen by a camera with a detector; every capture of this call
        sees them where they are now). ``robots``: the other robots' outlines as prisms
        (outline and height), which hide pieces behind them.
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
        robot_occluders = _Occluders(robots) if robots and self.spec.detector else None
        while t0 + self._next * period <= time + 1e-9:
            tc = t0 + self._next * period
            self._next += 1
            if self._skip_left > 0:  # throttled: this capture is skipped
                self._skip_left -= 1
                continue
            self._skip_left = self.throttle
            self._pending.append(self.capture(tc, self._pose_at(tc, time, pose), pieces,
                                              robot_occluders))
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

    def capture(self, time: float, robot_pose: Pose2d | Sequence[float],
                pieces: Detectables | None = None,
                robots: _Occluders | Sequence[Obstacle] | None = None) -> Frame:
        """Capture one frame now, at simulated ``time`` s, with the robot at ``robot_pose``;
        draws its latency and noise. (``update`` calls this on the frame-rate schedule.)
        ``pieces``, ``robots``: as for :meth:`update`."""
        spec = self.spec
        latency = max(0.0, float(self.rng.normal(spec.latency, spec.latency_std))
                      if spec.latency_std > 0 else spec.latency)
        delivery = max(time + latency, self._last_delivery)
        self._last_delivery = delivery
        pose = _pose_tuple(robot_pose)
        seen: tuple[PieceObservation, ...] = ()
        if not self.driver_mode and all(map(math.isfinite, pose)) and max(
                abs(pose[0]), abs(pose[1])) < MAX_POSITION:  # driver mode: nothing processed
            if spec.detector is None:
                tags, multitag, poses = self._observe_tags(*pose)
            else:  # an object-detection pipeline: pieces, no tags
                tags, multitag, poses = (), None, ()
                if pieces is not None and len(pieces):
                    if robots is not None and not isinstance(robots, _Occluders):
                        robots = _Occluders(robots)
                    seen = self._observe_pieces(pose, spec.detector, pieces, robots)
            bearings = self._observe_bearings(*pose)
        else:
            tags, multitag, poses, bearings = (), None, (), ()
        if spec.detector is None:
            frame = Frame(spec.name, self._sequence, time, delivery, pose, tags, multitag,
                          bearings, poses, self.pipeline, self.driver_mode)
        else:
            frame = DetectionFrame(spec.name, self._sequence, time, delivery, pose, tags,
                                   multitag, bearings, poses, self.pipeline, self.driver_mode,
                                   seen)
        self._sequence += 1
        return frame

    # --- observation --------------------------------------------------------------------

    def _eye(self, x: float, y: float, heading: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the camera is for the robot at (x, y, heading): its position in the field,
        homogeneous (x, y, z, 1) m; the (6, 4) matrix taking homogeneous field points to
        (fx·x + cx·z, fy·y + cy·z, x, y, z, 0), (x, y, z) in the optical frame (so pixels
        and normalized image coordinates are its first four rows over z); and the rotation
        field -> optical in homogeneous coordinates (4, 4)."""
        c, s = math.cos(heading), math.sin(heading)
        mx, my, mz = self._mount_xyz
        ex, ey = x + c * mx - s * my, y + s * mx + c * my
        # Field -> optical is Aᵀ(p - eye), A = Rz(heading)·B (B: mount, then optical axes).
        (b0x, b0y, b0z), (b1x, b1y, b1z), (b2x, b2y, b2z) = self._mount_optical
        a0x, a0y, a0z = c * b0x - s * b1x, c * b0y - s * b1y, c * b0z - s * b1z
        a1x, a1y, a1z = s * b0x + c * b1x, s * b0y + c * b1y, s * b0z + c * b1z
        tx = -(a0x * ex + a1x * ey + b2x * mz)  # the field origin in the optical frame
        ty = -(a0y * ex + a1y * ey + b2y * mz)
        tz = -(a0z * ex + a1z * ey + b2z * mz)
        fx, fy, cx, cy = self._k
        out = np.array((
            ex, ey, mz, 1.0,
            fx * a0x + cx * a0z, fx * a1x + cx * a1z, fx * b2x + cx * b2z, fx * tx + cx * tz,
            fy * a0y + cy * a0z, fy * a1y + cy * a1z, fy * b2y + cy * b2z, fy * ty + cy * tz,
            a0x, a1x, b2x, tx, a0y, a1y, b2y, ty, a0z, a1z, b2z, tz, 0.0, 0.0, 0.0, 0.0,
            a0x, a1x, b2x, 0.0, a0y, a1y, b2y, 0.0, a0z, a1z, b2z, 0.0, 0.0, 0.0, 0.0, 1.0))
        return out[:4], out[4:28].reshape(6, 4), out[28:].reshape(4, 4)

    def _distort(self, uv: np.ndarray) -> np.ndarray:
        """OpenCV's lens distortion of normalized image points (2, ...), u and v first."""
        return distort(uv, self._dist)

    def _undistort_noise(self, uv: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """Map pixel noise (2, ...) at distorted points to undistorted pixels (first order:
        the inverse of the distortion's Jacobian at the true normalized points ``uv``)."""
        fx, fy, _, _ = self._k
        a11, a12, a22 = distortion_jacobian(uv, self._dist)
        det = a11 * a22 - a12 * a12
        det = np.where(np.abs(det) > 1e-9, det, 1e-9)
        nu, nv = noise[0] / fx, noise[1] / fy
        return np.stack(((a22 * nu - a12 * nv) / det * fx, (a11 * nv - a12 * nu) / det * fy))

    def _observe_tags(self, x: float, y: float, heading: float
                      ) -> tuple[tuple[TagObservation, ...], MultiTagEstimate | None,
                                 tuple[tuple[float, float, float], ...]]:
        if len(self._ids) == 0:
            return (), None, ()
        spec = self.spec
        focal, half = self._focal_c, self._half_c
        eye, to_image, rot_a = self._eye(x, y, heading)

        # Project the corners and centre of every tag whose face points at the camera, and
        # keep those that can be detected. Points are coordinate-major, (coordinate, 5, tags),
        # so that each coordinate is a contiguous row (numpy is quickest on those).
        facing = self._planes @ eye > 0.0
        if self._allowed is not None:
            facing &= self._allowed
        idx = facing.nonzero()[0]
        k = len(idx)
        if k == 0:
            return (), None, ()
        # (fx·x + cx·z, fy·y + cy·z), optical frame (x, y, z, 0), pixels, normalized image
        proj = np.empty((10, 5, k))
        pc, pix, uv = proj[2:6], proj[6:8], proj[8:]
        np.matmul(to_image, self._points_h.take(idx, 2).reshape(4, -1),
                  out=proj[:6].reshape(6, -1))
        z = pc[2]
        np.divide(proj[:4], np.maximum(z, MIN_DEPTH), out=proj[6:])  # behind: masked below
        cand = np.minimum.reduce(z, 0) > MIN_DEPTH
        if spec.max_range < math.inf:
            cand &= np.add.reduce(pc[:3, 4] * pc[:3, 4], 0) <= spec.max_range ** 2
        if self._distorted:
            # Beyond twice the image's pinhole extent the distortion polynomial folds over.
            cand &= np.logical_and.reduce((np.abs(uv * focal) <= 4.0 * half).reshape(10, k), 0)
            np.multiply(self._distort(uv), focal, out=pix)
            pix += self._principal_c
        cand &= np.logical_and.reduce((np.abs(pix[:, :4] - half) <= self._reach_c)
                                      .reshape(8, k), 0)
        visible = cand.nonzero()[0]
        if len(visible) and self._occluders.count:
            hidden = self._occluders.blocked(eye[:3], self._points.take(idx[visible], 0)
                                             .reshape(-1, 3))
            visible = visible[~np.logical_or.reduce(hidden.reshape(-1, 5), 1)]
        if len(visible) == 0:
            return (), None, ()
        if len(visible) < k:
            idx, proj = idx[visible], proj.take(visible, 2)
            pc, pix, uv = proj[2:6], proj[6:8], proj[8:]
        corners = pix[:, :4]
        noise = None
        if spec.pixel_noise > 0:
            # Drawn tag by tag, corner by corner, x then y; used coordinate-major.
            noise = self.rng.normal(0.0, spec.pixel_noise, (len(idx), 4, 2)).transpose(2, 1, 0)
            corners = corners + noise
        diag = corners[:, 2:] - corners[:, :2]  # a quadrilateral's area: half the diagonals'
        cross = diag[0] * diag[1, ::-1]  # (x₀·y₁, x₁·y₀) of the two diagonals
        area = np.abs(cross[0] - cross[1]) * self._area_scale
        keep = np.logical_and.reduce((np.abs(corners - half) <= half).reshape(8, -1), 0)
        if spec.min_area > 0:
            keep &= area >= spec.min_area
        if not keep.all():
            if not keep.any():
                return (), None, ()
            idx, pc, uv, pix = idx[keep], pc[:, :, keep], uv[:, :, keep], pix[:, :, keep]
            corners, area = corners[:, :, keep], area[keep]
            noise = None if noise is None else noise[:, :, keep]
        m = len(idx)

        # The pose solutions: Gauss-Newton on the reprojection error (see _refine), in
        # undistorted pixels, for 2m + 1 poses at once: each tag's best pose, each tag's
        # alternate, and the multi-tag pose (in m blocks, one per tag with its field corners).
        # The best and multi-tag poses start at the truth, where the residual is the noise
        # itself, and the alternates at the planar ambiguity: the truth reflected through the
        # plane normal to the line of sight (times diag(-1, 1, 1) in the tag frame so it stays
        # a rotation), the same image to first order. The second step matters: a small or
        # distant tag's minimum can lie degrees away from the truth along a nearly flat valley.
        if self._distorted:  # the undistorted pixels, relative to the principal point
            obs = uv[:, :4] * focal
            if noise is not None:
                obs += self._undistort_noise(uv[:, :4], noise)
        else:
            obs = corners - self._principal_c
        obs = obs.transpose(2, 1, 0)  # (m, 4, 2): tag, corner, (u, v)
        centre = pc[:, 4]  # (x, y, z, 0) per tag
        ray = (centre / np.sqrt(np.add.reduce(centre * centre, 0))).T
        tag_rot = rot_a @ self._tag_rot_h.take(idx, 0)  # tag -> optical; times diag(-1, 1, 1, 1)
        flip = tag_rot[:, :, 4:]
        rot, trans, sq, depth = _refine(
            self._pose_objects.take(np.concatenate((idx, idx, idx + len(self._ids))), 0),
            np.concatenate((tag_rot[:, :, :4],
                            flip - 2.0 * ray[:, :, None] * (ray[:, None, :] @ flip),
                            rot_a[None])),
            np.concatenate((centre[:3].T, centre[:3].T, to_image[None, 2:5, 3])),
            np.concatenate((obs, obs, obs)), self._focal)

        # The observations, largest first; the alternate is the best when it fits better
        # (a tag "flip"). Errors below 1e-9 px are rounding (a noise-free view): ambiguity 0.
        rot_l, t_l = rot[:, :3, :3].tolist(), trans.tolist()
        sq_l, depth_l = sq.tolist(), depth.tolist()
        err = [math.sqrt(e / 8.0) if d > MIN_DEPTH else math.inf  # inf: a corner behind
               for e, d in zip(sq_l[:2 * m], depth_l[:2 * m], strict=True)]
        # The tag centre: its true projection moved by the mean corner noise.
        cpx, cpy = (pix[:, 4] if noise is None else pix[:, 4] + noise.sum(1) * 0.25).tolist()
        ids, area_l = self._ids.take(idx).tolist(), area.tolist()
        corners_l = corners.transpose(2, 1, 0).tolist()
        fx, fy, cx, cy = self._k
        tags = []
        order = sorted(range(m), key=area_l.__getitem__, reverse=True)  # ties: by id (stable)
        # A tag neither of whose poses lies in front of the camera has no fit to report (an
        # extreme pixel noise on a tag a few pixels wide): the pipeline drops it.
        order = [i for i in order if min(err[i], err[m + i]) < math.inf]
        for i in order:
            best, alt = (m + i, i) if err[m + i] < err[i] else (i, m + i)
            e_best, e_alt = err[best], err[alt]
            px, py = cpx[i], cpy[i]
            c0, c1, c2, c3 = corners_l[i]
            tags.append(TagObservation(
                ids[i], math.degrees(math.atan((px - cx) / fx)),
                math.degrees(math.atan((cy - py) / fy)), area_l[i], 0.0, (px, py),
                (tuple(c0), tuple(c1), tuple(c2), tuple(c3)),
                _camera_transform(t_l[best], rot_l[best]),
                _camera_transform(t_l[alt], rot_l[alt]),
                e_best / e_alt if e_alt > 1e-9 else 0.0, e_best, e_alt,
                math.hypot(*t_l[best])))
        idx_l = idx.tolist()
        poses = tuple([self._tag_poses[idx_l[i]] for i in order])

        multitag = None
        if m >= 2:
            # Field -> optical is p = R·o + t: the camera is at -Rᵀt, turned by Rᵀ·M.
            (r0, r1, r2), (tx, ty, tz) = rot_l[2 * m], t_l[2 * m]
            multitag = MultiTagEstimate(
                Transform3d(-(r0[0] * tx + r1[0] * ty + r2[0] * tz),
                            -(r0[1] * tx + r1[1] * ty + r2[1] * tz),
                            -(r0[2] * tx + r1[2] * ty + r2[2] * tz),
                            _rotation([[r2[i], -r0[i], -r1[i]] for i in range(3)])),
                tuple(sorted(ids)), math.sqrt(math.fsum(sq_l[2 * m:]) / (8 * m)))
        return tuple(tags), multitag, poses

    def _observe_pieces(self, pose: tuple[float, float, float], det: DetectorSpec,
                        pieces: Detectables, robots: _Occluders | None
                        ) -> tuple[PieceObservation, ...]:
        """The pieces the detector reports: culled by range, class and a cone around the
        optical axis first (numpy on every piece), then boxed (see
        :mod:`simserver.models.detection`), kept when at least half of the box is in the
        image, and when a sight line to the piece's centre or top passes no field element
        and no robot; then the box edges get pixel noise, and the box its area and
        confidence."""
        spec = self.spec
        eye, to_image, _ = self._eye(*pose)
        rot, trans = to_image[2:5, :3], to_image[2:5, 3]
        sphere = pieces.sphere
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            # Bad data (non-finite positions, sizes not > 0) is simply not seen.
            centre = rot @ pieces.positions.T + trans[:, None]  # (3, n) optical frame
            bound = np.where(sphere, pieces.radius,
                             np.hypot(pieces.radius, 0.5 * pieces.height))
            dist = np.sqrt((centre * centre).sum(0))
            cand = ((centre[2] - bound > MIN_DEPTH) & (pieces.radius > 0.0)
                    & (pieces.height > 0.0) & (dist < MAX_POSITION))
            if spec.max_range < math.inf:
                cand &= dist <= spec.max_range
            if det.classes is not None:
                cand &= np.isin(pieces.class_id, det.classes)
            off_axis = np.arccos(np.clip(centre[2] / dist, -1.0, 1.0))
            cand &= off_axis - np.arcsin(np.clip(bound / dist, 0.0, 1.0)) <= self._cone
        idx = cand.nonzero()[0]
        if len(idx) == 0:
            return ()
        c, radius = centre[:, idx], pieces.radius[idx]
        box = np.empty((4, len(idx)))
        balls = sphere[idx]
        if balls.any():
            box[:, balls] = sphere_boxes(c[:, balls], radius[balls])
        if not balls.all():
            rest = ~balls
            box[:, rest] = cylinder_boxes(c[:, rest], radius[rest], pieces.height[idx][rest],
                                          rot)
        pix, ok = self._box_pixels(box)
        w, h = float(spec.width), float(spec.height)
        clipped = (np.clip(pix[1], 0.0, w) - np.clip(pix[0], 0.0, w)) * (
            np.clip(pix[3], 0.0, h) - np.clip(pix[2], 0.0, h))
        full = (pix[1] - pix[0]) * (pix[3] - pix[2])
        keep = (ok & (clipped > 0.0) & (clipped >= 0.5 * full)).nonzero()[0]
        idx, pix = idx[keep], pix[:, keep]
        if len(idx) and (self._occluders.count or (robots is not None and robots.count)):
            at = pieces.positions[idx]
            top = at.copy()
            top[:, 2] += 0.5 * pieces.height[idx]
            points = np.concatenate((at, top))
            hidden = np.zeros(len(points), dtype=bool)
            for occ in (self._occluders, robots):
                if occ is not None and occ.count:
                    hidden |= occ.blocked(eye[:3], points)
            clear = ~hidden.reshape(2, -1).all(0)
            idx, pix = idx[clear], pix[:, clear]
        m = len(idx)
        if m == 0:
            return ()
        if spec.pixel_noise > 0:  # drawn piece by piece: x min, x max, y min, y max
            pix = pix + self.rng.normal(0.0, spec.pixel_noise, (m, 4)).T
            pix = np.stack((np.minimum(pix[0], pix[1]), np.maximum(pix[0], pix[1]),
                            np.minimum(pix[2], pix[3]), np.maximum(pix[2], pix[3])))
        x0, x1 = np.clip(pix[0], 0.0, w), np.clip(pix[1], 0.0, w)
        y0, y1 = np.clip(pix[2], 0.0, h), np.clip(pix[3], 0.0, h)
        area = (x1 - x0) * (y1 - y0) * (100.0 / (w * h))
        conf = det.confidence_gain * np.sqrt(area / 100.0)
        if det.confidence_noise > 0:
            conf = conf + self.rng.normal(0.0, det.confidence_noise, m)
        conf = np.clip(conf, 0.0, 1.0)
        good = (area >= spec.min_area) & (area > 0.0) & (conf >= det.min_confidence)
        order = [i for i in np.argsort(-area, kind="stable").tolist() if good[i]]
        fx, fy, cx, cy = self._k
        px, py = ((x0 + x1) * 0.5).tolist(), ((y0 + y1) * 0.5).tolist()
        x0l, x1l, y0l, y1l = x0.tolist(), x1.tolist(), y0.tolist(), y1.tolist()
        out = []
        for i in order[:MAX_DETECTIONS]:
            j = int(idx[i])
            out.append(PieceObservation(
                j, int(pieces.class_id[j]), float(conf[i]),
                math.degrees(math.atan((px[i] - cx) / fx)),
                math.degrees(math.atan((cy - py[i]) / fy)), float(area[i]), (px[i], py[i]),
                ((x0l[i], y1l[i]), (x1l[i], y1l[i]), (x1l[i], y0l[i]), (x0l[i], y0l[i])),
                float(dist[j]), tuple(pieces.positions[j].tolist())))
        return tuple(out)

    def _box_pixels(self, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel boxes (4, n) [x min, x max, y min, y max] of normalized-image boxes (4, n);
        with distortion, the box around the distorted corners and edge midpoints. Also (n,)
        bool: usable (with distortion, inside the range where its polynomial does not fold
        over, twice the image's pinhole extent)."""
        fx, fy, cx, cy = self._k
        if not self._distorted:
            return box * np.array([[fx], [fx], [fy], [fy]]) + np.array(
                [[cx], [cx], [cy], [cy]]), np.ones(box.shape[1], dtype=bool)
        u = np.stack((box[0], 0.5 * (box[0] + box[1]), box[1]))  # (3, n)
        v = np.stack((box[2], 0.5 * (box[2] + box[3]), box[3]))
        uv = np.stack((np.repeat(u, 3, 0), np.tile(v, (3, 1))))  # (2, 9, n)
        ok = (np.abs(uv * self._focal_c) <= 4.0 * self._half_c).all((0, 1))
        d = self._distort(uv)
        xs, ys = d[0] * fx + cx, d[1] * fy + cy
        return np.stack((xs.min(0), xs.max(0), ys.min(0), ys.max(0))), ok

    def _observe_bearings(self, x: float, y: float, heading: float
                          ) -> tuple[BearingObservation, ...]:
        if not self._bearings:
            return ()
        eye = self._eye(x, y, heading)[0][:3]
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


class CameraRequest(NamedTuple):
    """A runtime setting robot code sent to camera ``camera``: ``setting`` is "pipeline"
    (an index), "tag_filter" (tag ids, None: the pipeline's filter), "throttle" (captures
    skipped per one processed) or "driver_mode" (bool); see the Camera setters."""

    camera: str
    setting: str
    value: Any


class VisionSystem:
    """Every camera of a robot, sharing the targets and the field elements; ``fiducials``: the
    tags they can detect (what a Limelight's own layout holds).

    Each camera draws from its own child of ``rng`` (spawned in the order of ``specs``), so
    adding a camera does not change the noise another one sees.

        >>> import numpy as np
        >>> from simserver.field.seasons import season_fiducials
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
        self.fiducials = tuple(fiducials)
        self.cameras: dict[str, Camera] = {
            s.name: Camera(s, fiducials, bearing_targets, obstacles, child)
            for s, child in zip(specs, children, strict=True)}

    def reset(self) -> None:
        """Reset every camera (see :meth:`Camera.reset`)."""
        for cam in self.cameras.values():
            cam.reset()

    def apply(self, request: CameraRequest) -> None:
        """Apply a setting robot code sent (from the next capture on). IndexError, ValueError
        or KeyError (no such camera or setting) for one that cannot apply; nothing changes
        then."""
        cam = self.cameras[request.camera]
        setters: dict[str, Callable[[Any], None]] = {
            "pipeline": cam.set_pipeline, "tag_filter": cam.set_tag_filter,
            "throttle": cam.set_throttle, "driver_mode": cam.set_driver_mode}
        setters[request.setting](request.value)

    def update(self, time: float, robot_pose: Pose2d | Sequence[float],
               pieces: Detectables | None = None,
               robots: Sequence[Obstacle] | None = None) -> list[Frame]:
        """Advance every camera to ``time`` s; the frames delivered, by delivery time.
        ``pieces``: the game pieces on the field (for cameras with a detector); ``robots``:
        the other robots' outlines, which hide pieces (see :meth:`Camera.update`)."""
        frames = [f for cam in self.cameras.values()
                  for f in cam.update(time, robot_pose, pieces, robots)]
        frames.sort(key=lambda f: f.delivery_time)
        return frames


def min_area_rect(corners: tuple[tuple[float, float], ...]) -> list[tuple[float, float]]:
    """Corners of the smallest rectangle around ``corners`` (px): for a convex outline one of
    its sides lies along an edge of the outline, so each edge direction is tried."""
    pts = np.array(corners, dtype=float)
    edges = np.roll(pts, -1, axis=0) - pts
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    ok = lengths > 1e-12
    if not ok.any():
        return [(float(x), float(y)) for x, y in pts]
    dirs = edges[ok] / lengths[ok, None]
    normals = np.stack((-dirs[:, 1], dirs[:, 0]), axis=1)
    along, across = pts @ dirs.T, pts @ normals.T  # (points, directions)
    spans = (along.max(0) - along.min(0)) * (across.max(0) - across.min(0))
    k = int(np.argmin(spans))
    d, n = dirs[k], normals[k]
    a0, a1 = along[:, k].min(), along[:, k].max()
    b0, b1 = across[:, k].min(), across[:, k].max()
    return [(float(a * d[0] + b * n[0]), float(a * d[1] + b * n[1]))
            for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))]
