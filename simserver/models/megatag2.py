"""Robot poses from a camera frame's tag corners as a Limelight computes them: MegaTag2 (the
position with the robot's orientation given) and the standard deviations of both MegaTags.

MegaTag2 (Limelight's docs, "Robot Localization with MegaTag2"): the robot's heading is known
(robot code sends it on ``robot_orientation_set``, or the Limelight 4's own IMU gives it), so
only its position is solved, from the corners of every tag in view at once. Here: the robot
stands on the carpet (z = 0) with the given roll, pitch and yaw; its (x, y) minimizes the
reprojection error of all corners of all tags in view, in undistorted pixels. With the
orientation fixed a pixel's ray direction is known, so the position is first found in closed
form (linear least squares on the rays: each corner's known field point must lie on its ray),
then refined by Gauss-Newton on the reprojection error (2 unknowns; exact without noise).

Standard deviations (Limelight's ``stddevs``): the covariance of a least-squares solve with
independent Gaussian corner noise of σ px per coordinate, σ²·(JᵀJ)⁻¹, J the Jacobian of the
corner pixels with respect to the unknowns, at the solution. MegaTag2's unknowns are x and y
(z, roll, pitch and yaw are given, not estimated: 0); MegaTag1's are all six of the robot's
pose (the multi-tag solution's tags, or the single tag). Angles in degrees. With lens
distortion σ is taken as is in undistorted pixels (the distortion's local magnification,
a few % near the image edge, is left out).

    >>> import math
    >>> from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d
    >>> from simserver.models.camera import Camera, CameraSpec, Fiducial
    >>> spec = CameraSpec("front", Transform3d(Translation3d(0.3, 0.0, 0.5), Rotation3d()),
    ...                   pixel_noise=0.0)
    >>> tags = [Fiducial(i, Pose3d(Translation3d(4.0, y, 0.5), Rotation3d(0.0, 0.0, math.pi)))
    ...         for i, y in ((1, -0.5), (2, 0.6))]
    >>> frame = Camera(spec, tags).capture(0.0, (0.5, 0.2, 0.1))
    >>> est = TagLocalizer(spec, tags).megatag2(frame, 0.1)
    >>> round(est.x, 9), round(est.y, 9), est.ids
    (0.5, 0.2, (1, 2))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from simserver.models.camera import (
    _NWU_TO_OPTICAL,
    CameraSpec,
    Fiducial,
    Frame,
    distort,
    distortion_jacobian,
    fiducial_corners,
)

GAUSS_NEWTON_STEPS = 20  # at most; stops once a step is below STEP_TOLERANCE (2-3 with
# the true heading; a wrong one leaves residuals large and the convergence linear)
STEP_TOLERANCE = 1e-7  # m: far below any noise; without noise the first step is ~1e-15
UNDISTORT_STEPS = 20  # Newton steps inverting the lens distortion, at most
MIN_DEPTH = 1e-3  # m: a solution with a corner nearer the image plane than this is rejected


class MegaTag2Estimate(NamedTuple):
    """MegaTag2's robot position: ``x``, ``y`` m (blue origin), their standard deviations
    ``std_x``, ``std_y`` m, the tags used (``ids``, as in the frame) and the RMS reprojection
    ``error`` px."""

    x: float
    y: float
    std_x: float
    std_y: float
    ids: tuple[int, ...]
    error: float


def rotation_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """WPILib's Rotation3d(roll, pitch, yaw) as a matrix: Rz(yaw)·Ry(pitch)·Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def undistort(uv: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """Normalized image points (2, n) with lens distortion -> without (Newton's method on
    :func:`simserver.models.camera.distort`, to rounding)."""
    out = uv.copy()
    for _ in range(UNDISTORT_STEPS):
        err = distort(out, coefficients) - uv
        a11, a12, a22 = distortion_jacobian(out, coefficients)
        det = a11 * a22 - a12 * a12
        det = np.where(np.abs(det) > 1e-12, det, 1e-12)
        out[0] -= (a22 * err[0] - a12 * err[1]) / det
        out[1] -= (a11 * err[1] - a12 * err[0]) / det
        if not np.abs(err).max() > 1e-15:  # also stops on NaN
            break
    return out


def _solve2(jac: np.ndarray, resid: np.ndarray) -> tuple[float, float, list[float], float]:
    """Least-squares solution (s0, s1) of jac (n, 2) · s = resid (n,) by the normal
    equations in closed form (NaN when singular), with JᵀJ (flattened) and its determinant."""
    a = (jac.T @ jac).ravel().tolist()
    r0, r1 = (resid @ jac).tolist()
    det = a[0] * a[3] - a[1] * a[2]
    if not det > 0.0:
        return math.nan, math.nan, a, det
    return (a[3] * r0 - a[1] * r1) / det, (a[0] * r1 - a[2] * r0) / det, a, det


class TagLocalizer:
    """Robot poses from one camera's frames: what a Limelight's ``botpose_orb`` (MegaTag2)
    and ``stddevs`` hold.

    spec: the camera (mount, intrinsics, distortion, ``pixel_noise`` for the standard
    deviations). fiducials: the tag layout the camera knows (a later entry replaces an earlier
    one with the same id); tags not in it are ignored.
    """

    def __init__(self, spec: CameraSpec, fiducials: Sequence[Fiducial]):
        self.spec = spec
        self._corners = {f.id: fiducial_corners(f) for f in fiducials}
        fx, fy, cx, cy = spec.camera_matrix()
        self._focal = np.array((fx, fy))
        self._focal_column = self._focal.reshape(2, 1)
        self._principal = np.array((cx, cy))
        self._dist = tuple(float(c) for c in spec.distortion)
        self._distorted = any(c != 0.0 for c in self._dist)
        mount = spec.robot_to_camera
        self._mount_rot = np.asarray(mount.rotation().toMatrix(), dtype=float)
        self._mount_xyz = np.array((mount.X(), mount.Y(), mount.Z()))
        # The last frame's observations: (frame, ids, result).
        self._last: tuple[Frame, tuple[int, ...] | None, tuple[
            tuple[int, ...], np.ndarray, np.ndarray]] | None = None

    def _observations(self, frame: Frame, ids: Sequence[int] | None = None
                      ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
        """(ids, field corners (n, 3) m, undistorted normalized image points (n, 2)) of the
        frame's tags in the layout (``ids``: only those)."""
        key = None if ids is None or all(t.id in ids for t in frame.tags) else tuple(ids)
        if self._last is not None and self._last[0] is frame and self._last[1] == key:
            return self._last[2]  # MegaTag2 and MegaTag1's stddevs of one frame: the same
        tags = [t for t in frame.tags if t.id in self._corners and (key is None or t.id in key)]
        if not tags:
            return (), np.empty((0, 3)), np.empty((0, 2))
        points = np.concatenate([self._corners[t.id] for t in tags])
        pix = np.array([t.corners for t in tags], dtype=float).reshape(-1, 2)
        uv = (pix - self._principal) / self._focal
        if self._distorted:
            uv = undistort(uv.T.copy(), self._dist).T
        out = tuple(t.id for t in tags), points, uv
        self._last = frame, key, out
        return out

    def _optical(self, robot_rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(W, mount offset): W (3, 3) takes field vectors to the optical frame for a robot
        turned by ``robot_rot``; the camera is at the robot's position + the offset (3,)."""
        return _NWU_TO_OPTICAL @ (robot_rot @ self._mount_rot).T, robot_rot @ self._mount_xyz

    def megatag2(self, frame: Frame, yaw: float, pitch: float = 0.0, roll: float = 0.0
                 ) -> MegaTag2Estimate | None:
        """The robot's (x, y) from every tag of ``frame`` in the layout, the robot on the
        carpet with orientation ``roll``, ``pitch``, ``yaw`` (rad, WPILib's Rotation3d). None
        without such tags, with a non-finite orientation, or when the solution puts a
        corner behind the camera."""
        if not all(map(math.isfinite, (yaw, pitch, roll))):
            return None
        ids, points, uv = self._observations(frame)
        if not ids:
            return None
        w, offset = self._optical(rotation_matrix(roll, pitch, yaw))
        b = (points - offset) @ w.T  # (n, 3): optical-frame points for the robot at (0, 0)
        gx, gy = w[:, 0], w[:, 1]  # d(optical point) / d(-x), d(-y)
        g2 = w[2, :2]
        f = self._focal_column  # (2, 1): fx, fy
        uv_t = uv.T  # (2, n)
        # Closed form: the point seen must lie on its ray, o_x - u·o_z = 0 and
        # o_y - v·o_z = 0 with o = b - g·(x, y): linear in (x, y), rows scaled to pixels.
        rows = (f[:, :, None] * (w[:2, None, :2] - uv_t[:, :, None] * g2)).reshape(-1, 2)
        rhs = (f * (b[:, :2].T - uv_t * b[:, 2])).ravel()
        x, y, _, _ = _solve2(rows, rhs)
        obs = (uv_t * f).ravel()  # u rows, then v rows, px
        for _ in range(GAUSS_NEWTON_STEPS):
            o = b - (gx * x + gy * y)
            z = o[:, 2]
            if not z.min() > MIN_DEPTH:  # also NaN
                return None
            pix = o[:, :2].T / z  # (2, n) normalized
            jac = (f[:, :, None] * (pix[:, :, None] * g2 - w[:2, None, :2])
                   / z[:, None]).reshape(-1, 2)
            resid = obs - (pix * f).ravel()
            dx, dy, a, det = _solve2(jac, resid)
            x, y = x + dx, y + dy
            if not max(abs(dx), abs(dy)) > STEP_TOLERANCE:  # also stops on NaN
                break
        if not (math.isfinite(x) and math.isfinite(y)
                and (b - (gx * x + gy * y))[:, 2].min() > MIN_DEPTH):
            return None
        # The last step was below STEP_TOLERANCE: its Jacobian and its linear prediction
        # of the residual hold at the solution (to far below the noise).
        resid = resid - jac @ np.array((dx, dy))
        sigma = self.spec.pixel_noise
        std_x = sigma * math.sqrt(a[3] / det)  # σ·sqrt of the diagonal of (JᵀJ)⁻¹
        std_y = sigma * math.sqrt(a[0] / det)
        return MegaTag2Estimate(x, y, std_x, std_y, ids,
                                math.sqrt(float(resid @ resid) / len(points)))

    def megatag1_stddevs(self, frame: Frame, pose: Sequence[float],
                         ids: Sequence[int] | None = None) -> list[float]:
        """Standard deviations of MegaTag1's robot pose ``pose`` [x, y, z m, roll, pitch,
        yaw deg] (the same order and units), solved from the corners of the tags ``ids``
        (all the frame's tags in the layout when None): m, m, m, deg, deg, deg."""
        _, points, _ = self._observations(frame, ids)
        if len(points) == 0 or not all(map(math.isfinite, pose)):
            return [0.0] * 6
        roll, pitch, yaw = (math.radians(a) for a in pose[3:6])
        rot = rotation_matrix(roll, pitch, yaw)
        w, offset = self._optical(rot)
        rel = points - np.asarray(pose[:3], dtype=float)  # (n, 3): P - t
        o = (rel - offset) @ w.T  # optical frame
        z = o[:, 2]
        if not z.min() > MIN_DEPTH:
            return [math.inf] * 6
        # d(optical point) for a robot moved by dt and turned by a small field-frame rotation
        # ω: do = -W·dt + W·((P - t) × ω), ω = droll·Rz·Ry·x + dpitch·Rz·y + dyaw·z (the
        # axes of WPILib's extrinsic x-y-z angles). d: (n, optical xyz, unknown).
        cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
        axes = np.array(((cy * cp, sy * cp, -sp), (-sy, cy, 0.0), (0.0, 0.0, 1.0)))
        d = np.empty((len(points), 3, 6))
        d[:, :, :3] = -w
        # W·((P - t) × a) = W·[a]×ᵀ·(P - t): for the three axes a, one product (as rows:
        # (P - t)·[a]×·Wᵀ).
        ax = axes.T  # (xyz, axis)
        zero = np.zeros(3)
        skew = np.array(((zero, -ax[2], ax[1]), (ax[2], zero, -ax[0]),
                         (-ax[1], ax[0], zero))).transpose(2, 0, 1)  # (axis, 3, 3): [a]×
        rows = (skew @ w.T).transpose(1, 0, 2).reshape(3, 9)  # (xyz, axis·optical)
        d[:, :, 3:] = (rel @ rows).reshape(-1, 3, 3).transpose(0, 2, 1)
        jac = np.concatenate((self._focal[0] * (d[:, 0] - (o[:, 0] / z)[:, None] * d[:, 2]),
                              self._focal[1] * (d[:, 1] - (o[:, 1] / z)[:, None] * d[:, 2])))
        jac /= np.concatenate((z, z))[:, None]
        sigma = self.spec.pixel_noise
        if sigma == 0.0:
            return [0.0] * 6
        try:
            var = np.diag(np.linalg.inv(jac.T @ jac)).tolist()
        except np.linalg.LinAlgError:
            return [math.inf] * 6
        std = [sigma * math.sqrt(v) if v >= 0.0 else math.inf for v in var]
        return [*std[:3], *(math.degrees(s) for s in std[3:])]
