"""Static field elements as obstacles: convex polygons in field coordinates.

Shared by the collision model (robots bump into them) and the camera model (they hide the tags
behind them). Field frame: origin at the blue alliance wall's right corner, x toward red, y left,
metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Obstacle:
    """One convex field element.

    name: shown in errors and docs. points: the outline's corners (x m, y m) in field
    coordinates, counter-clockwise, convex. height: top of the element above the carpet, m
    (a camera's line of sight passes over lower elements).
    """

    name: str
    points: tuple[tuple[float, float], ...]
    height: float = 2.0

    def __post_init__(self) -> None:
        if len(self.points) < 3:
            raise ValueError(f"obstacle {self.name!r} needs at least 3 points")
        if not self.height > 0:
            raise ValueError(f"obstacle {self.name!r} needs height > 0")


def convex_ccw(points: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...] | None:
    """``points`` counter-clockwise (reversed if given clockwise), or None if they do not form a
    strictly convex polygon (collinear corners, self-intersection or a dent)."""
    n = len(points)
    if n < 3:
        return None
    crosses = []
    for i in range(n):
        (ax, ay), (bx, by), (cx, cy) = points[i], points[(i + 1) % n], points[(i + 2) % n]
        crosses.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    if all(c > 0.0 for c in crosses):
        ccw = points
    elif all(c < 0.0 for c in crosses):
        ccw = tuple(reversed(points))
    else:
        return None
    turning = 0.0  # a star polygon turns more than once around
    for i in range(n):
        (ax, ay), (bx, by), (cx, cy) = ccw[i], ccw[(i + 1) % n], ccw[(i + 2) % n]
        turning += math.atan2((bx - ax) * (cy - by) - (by - ay) * (cx - bx),
                              (bx - ax) * (cx - bx) + (by - ay) * (cy - by))
    return ccw if abs(turning - 2.0 * math.pi) < 1e-6 else None
