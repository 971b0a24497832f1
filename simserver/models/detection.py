"""Game pieces as a camera's object detector sees them: what there is to see, how the detector
is set up, what it reports, and the bounding box of a piece in the image.

The world hands the cameras the pieces on the field each tick as :class:`Detectables` (arrays,
one row per loose or flying piece). A camera whose ``CameraSpec.detector`` is set runs an
object-detection pipeline (PhotonVision's object detection, a Limelight neural detector): it
reports :class:`PieceObservation` boxes instead of AprilTags. :mod:`simserver.models.camera`
does the culling, occlusion, noise and timing; this module holds the data types and the pure
geometry of a piece's silhouette.

    >>> import numpy as np
    >>> pieces = Detectables(np.array([[3.0, 0.0, 0.075]]), np.array([0.075]),
    ...                      np.array([0.15]), np.array([0]))
    >>> len(pieces), bool(pieces.sphere[0])
    (1, True)

Silhouettes, in normalized image coordinates (u = x / z, v = y / z in the optical frame: x
right, y down, z forward): a sphere (``sphere`` true: a ball) is bounded exactly by the planes
through the lens tangent to it; any other piece is an upright cylinder of its ``radius`` and
``height`` (a ring lying flat, a cylinder standing, or one lying on its side, bounded by the
circle of its footprint), bounded by 16 points on each of its two rims (the box is at most
2 % of the radius short of the exact one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from simserver.models.pieces.types import PieceType

RIM_POINTS = 16  # points on each rim of a cylinder's silhouette
MAX_DETECTIONS = 50  # per frame, largest first (photonlibpy's PhotonCameraSim keeps 50)
_ANGLES = np.linspace(0.0, 2.0 * math.pi, RIM_POINTS, endpoint=False)
# Unit offsets of the rim points in the field frame: radius part (cos, sin, 0) and height part
# (0, 0, ±1/2), bottom rim then top rim: (2·RIM_POINTS, 3) each.
_RIM_RADIAL = np.tile(np.stack((np.cos(_ANGLES), np.sin(_ANGLES), np.zeros(RIM_POINTS)), 1),
                      (2, 1))
_RIM_AXIAL = np.zeros((2 * RIM_POINTS, 3))
_RIM_AXIAL[:RIM_POINTS, 2], _RIM_AXIAL[RIM_POINTS:, 2] = -0.5, 0.5


def _empty(dtype: type) -> np.ndarray:
    return np.zeros(0, dtype=dtype)


@dataclass(frozen=True)
class Detectables:
    """The pieces a camera could see this tick (loose and in flight; not held, not gone).

    positions: (n, 3) field positions of the piece centres, m. radius: (n,) m (a ball's
    radius; the footprint radius of a ring or cylinder). height: (n,) m (a ball: its
    diameter). class_id: (n,) int, the detector's class of each piece (``PieceType.class_id``).
    sphere: (n,) bool, a ball (an exact silhouette); by default, pieces whose height is
    their diameter.
    """

    positions: np.ndarray
    radius: np.ndarray
    height: np.ndarray
    class_id: np.ndarray
    sphere: np.ndarray = field(default_factory=lambda: _empty(bool))

    def __post_init__(self) -> None:
        n = len(self.positions)
        object.__setattr__(self, "positions", np.asarray(self.positions, float).reshape(n, 3))
        for name, dtype in (("radius", float), ("height", float), ("class_id", np.int64)):
            value = np.asarray(getattr(self, name), dtype)
            if value.shape != (n,):
                raise ValueError(f"Detectables.{name} must have shape ({n},), got {value.shape}")
            object.__setattr__(self, name, value)
        sphere = np.asarray(self.sphere, bool)
        if len(sphere) == 0 and n:
            sphere = np.abs(self.height - 2.0 * self.radius) <= 1e-9 * self.height
        if sphere.shape != (n,):
            raise ValueError(f"Detectables.sphere must have shape ({n},), got {sphere.shape}")
        object.__setattr__(self, "sphere", sphere)

    def __len__(self) -> int:
        return len(self.positions)

    @staticmethod
    def of(types: Sequence[PieceType], kind: np.ndarray, positions: np.ndarray) -> Detectables:
        """The pieces of type ``types[kind[i]]`` ((n,) int) at ``positions`` (n, 3) m."""
        kind = np.asarray(kind, dtype=np.int64)
        radius = np.array([t.radius for t in types], dtype=float)
        height = np.array([t.height for t in types], dtype=float)
        class_id = np.array([t.class_id for t in types], dtype=np.int64)
        sphere = np.array([t.shape == "sphere" for t in types], dtype=bool)
        return Detectables(positions, radius.take(kind), height.take(kind),
                           class_id.take(kind), sphere.take(kind))


@dataclass(frozen=True)
class DetectorSpec:
    """A camera's object-detection pipeline (PhotonVision object detection, Limelight neural
    detector): with one, the camera reports game pieces and no AprilTags.

    classes: the class ids it detects (None: every class). labels: (class id, name) pairs,
    the model's label of each class (Limelight's ``tclass``). confidence_gain: the reported
    confidence is ``confidence_gain``·sqrt(area % / 100) (photonlibpy's simulation uses 2),
    plus Gaussian noise of standard deviation ``confidence_noise``, clipped to 0..1; a
    detection below ``min_confidence`` is dropped (PhotonVision's confidence threshold).
    The camera's ``pixel_noise`` (on each box edge, px), ``min_area`` (% of the image) and
    ``max_range`` (m, to the piece centre) apply to the boxes.
    """

    classes: tuple[int, ...] | None = None
    labels: tuple[tuple[int, str], ...] = ()
    confidence_gain: float = 2.0
    confidence_noise: float = 0.0
    min_confidence: float = 0.0

    def __post_init__(self) -> None:
        for label, value in (("confidence_gain", self.confidence_gain),
                             ("confidence_noise", self.confidence_noise)):
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"detector: {label} must be finite and ≥ 0")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError("detector: min_confidence must be in 0..1")

    def label(self, class_id: int) -> str:
        """The model's label of ``class_id`` (its number when it has none)."""
        return dict(self.labels).get(class_id, str(class_id))


class PieceObservation(NamedTuple):
    """One detected piece in one frame.

    piece: the piece's row in the :class:`Detectables` the camera was given. class_id,
    confidence (0..1). yaw, pitch: angle from the principal point to the box centre, deg
    (yaw positive right, pitch positive up, as for tags). area: box area, % of the image.
    center: box centre, px. corners: the box's corners ((x, y) px × 4) in PhotonVision's
    order: bottom-left, bottom-right, top-right, top-left (image y grows down). distance:
    camera to piece centre, m. position: the piece centre in the field, m.
    """

    piece: int
    class_id: int
    confidence: float
    yaw: float
    pitch: float
    area: float
    center: tuple[float, float]
    corners: tuple[tuple[float, float], ...]
    distance: float
    position: tuple[float, float, float]


def sphere_boxes(centre: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Normalized-image boxes (4, n) [u_min, u_max, v_min, v_max] of balls at ``centre``
    (3, n) optical frame, m, of ``radius`` (n,) m, each wholly in front of the lens
    (z > radius). A plane x = u·z is tangent where (x - u·z)² = r²(1 + u²): the two roots of
    u²(z² - r²) - 2u·x·z + x² - r² = 0 (and likewise for v with y)."""
    x, y, z = centre
    r2 = radius * radius
    den = z * z - r2
    out = np.empty((4, len(radius)))
    for row, w in ((0, x), (2, y)):
        half = radius * np.sqrt(np.maximum(w * w + den, 0.0))
        out[row] = (w * z - half) / den
        out[row + 1] = (w * z + half) / den
    return out


def cylinder_boxes(centre: np.ndarray, radius: np.ndarray, height: np.ndarray,
                   rotation: np.ndarray) -> np.ndarray:
    """Normalized-image boxes (4, n) [u_min, u_max, v_min, v_max] of upright cylinders at
    ``centre`` (3, n) optical frame, m, of ``radius`` and ``height`` (n,) m, each wholly in
    front of the lens, from their rim points; ``rotation`` (3, 3) takes field-frame vectors
    to the optical frame."""
    radial = _RIM_RADIAL @ rotation.T  # (2·RIM_POINTS, 3) optical
    axial = _RIM_AXIAL @ rotation.T
    pts = (centre.T[:, None, :] + radius[:, None, None] * radial[None]
           + height[:, None, None] * axial[None])  # (n, points, 3)
    u, v = pts[..., 0] / pts[..., 2], pts[..., 1] / pts[..., 2]
    return np.stack((u.min(1), u.max(1), v.min(1), v.max(1)))
