"""Scoring goals as 3-D regions: a convex footprint on the field extruded between two heights.

A piece scores when its centre's path during a step crosses into the region, so a fast piece
that would skip a thin region between two steps still counts:

    >>> import numpy as np
    >>> hub = Goal("blue_hub", "blue", ((0, 0), (1, 0), (1, 1), (0, 1)), bottom=1.5, top=1.8)
    >>> hub.entered(np.array([[0.5, 0.5, 3.0]]), np.array([[0.5, 0.5, 0.0]]))
    array([ True])

Field frame (x toward red, y left, z up), metres.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from simserver.models.obstacles import convex_ccw

ALLIANCES = ("blue", "red")


@dataclass(frozen=True)
class Goal:
    """One scoring opening.

    name: shown in snapshots and scenario checks. alliance: "blue" or "red", whose score a
    piece entering it counts for. footprint: the region's outline (x m, y m), convex and
    counter-clockwise, field frame. bottom, top: the region's height range above the carpet, m.
    """

    name: str
    alliance: str
    footprint: tuple[tuple[float, float], ...]
    bottom: float
    top: float

    def __post_init__(self) -> None:
        if self.alliance not in ALLIANCES:
            raise ValueError(f"goal {self.name!r}: alliance must be 'blue' or 'red', "
                             f"got {self.alliance!r}")
        if convex_ccw(self.footprint) != self.footprint:
            raise ValueError(f"goal {self.name!r}: footprint must be convex and "
                             "counter-clockwise")
        if not (np.isfinite(self.bottom) and np.isfinite(self.top) and self.top > self.bottom):
            raise ValueError(f"goal {self.name!r}: needs finite bottom < top, got "
                             f"{self.bottom}..{self.top}")

    @cached_property
    def _planes(self) -> tuple[np.ndarray, np.ndarray]:
        """Outward unit normals (k, 3) and offsets (k,) of the faces: inside is n·p <= d."""
        pts = np.asarray(self.footprint, dtype=float)
        edges = np.roll(pts, -1, axis=0) - pts
        normals = np.stack([edges[:, 1], -edges[:, 0], np.zeros(len(pts))], axis=1)
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        offsets = np.einsum("ij,ij->i", normals[:, :2], pts)
        normals = np.vstack([normals, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]])
        offsets = np.concatenate([offsets, [self.top, -self.bottom]])
        return normals, offsets

    @property
    def centre(self) -> tuple[float, float, float]:
        """The footprint's vertex mean and the middle of the height range, m."""
        pts = np.asarray(self.footprint, dtype=float)
        x, y = pts.mean(axis=0)
        return float(x), float(y), 0.5 * (self.bottom + self.top)

    def contains(self, points: np.ndarray) -> np.ndarray:
        """(n,) bool: which of the (n, 3) points lie inside the region (faces included)."""
        normals, offsets = self._planes
        return np.all(np.asarray(points, dtype=float) @ normals.T <= offsets, axis=-1)

    def entry_fraction(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """(n,) float: where along each segment from ``before`` to ``after`` ((n, 3) points)
        it first enters the region, 0 < s <= 1; inf where it does not enter (it misses, or it
        starts inside)."""
        a = np.asarray(before, dtype=float)
        b = np.asarray(after, dtype=float)
        normals, offsets = self._planes
        start = a @ normals.T - offsets  # (n, k): > 0 outside that face
        rate = (b - a) @ normals.T  # change of the same over the segment
        with np.errstate(divide="ignore", invalid="ignore"):
            s = -start / rate
        entering = rate < 0.0
        leaving = rate > 0.0
        parallel_out = (rate == 0.0) & (start > 0.0)
        enter = np.max(np.where(entering, s, -np.inf), axis=1)
        leave = np.min(np.where(leaving, s, np.inf), axis=1)
        enter = np.maximum(enter, 0.0)
        hit = (enter <= leave) & (enter <= 1.0) & ~np.any(parallel_out, axis=1)
        outside = np.any(start > 0.0, axis=1)
        return np.where(hit & outside & (enter > 0.0), enter, np.inf)

    def entered(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """(n,) bool: which segments from ``before`` to ``after`` ((n, 3) points, m) cross
        into the region from outside it."""
        return np.isfinite(self.entry_fraction(before, after))
