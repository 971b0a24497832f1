"""Robot-frame geometry of the mechanisms that handle game pieces: intake zones, frames, and a
shot's launch velocity.

Robot frame: x forward, y left, z up from the carpet, origin at the robot centre (m). Field
frame: WPILib's. Angles in rad, CCW positive.

    zone = face_zone("front", outline=(0.8, 0.7), width=0.5, reach=0.1, inset=0.0)
    launch_velocity(10.0, pitch=math.radians(40), yaw=0.0)   # (vx, vy, vz) robot frame, m/s
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Point2 = tuple[float, float]
Point3 = tuple[float, float, float]

FACE_ANGLE = {"front": 0.0, "left": math.pi / 2, "back": math.pi, "right": -math.pi / 2}
"""Direction each face of the outline looks, rad from robot forward."""


def face_zone(face: str, outline: tuple[float, float], width: float | None, reach: float,
              inset: float) -> tuple[Point2, ...]:
    """The intake zone at one face of a robot outline (length, width m, bumpers included):
    from ``inset`` m inside the bumper to ``reach`` m beyond it, ``width`` m wide (None: the
    whole face), centred on the face. Counter-clockwise; its first edge is the inner one (at
    the robot)."""
    angle = FACE_ANGLE[face]
    half_length, half_width = outline[0] / 2.0, outline[1] / 2.0
    depth, across = (half_length, half_width) if face in ("front", "back") else (
        half_width, half_length)
    half = across if width is None else width / 2.0
    inner, outer = depth - inset, depth + reach
    corners = ((inner, half), (inner, -half), (outer, -half), (outer, half))
    return tuple(rotate(x, y, angle) for x, y in corners)


def rotate(x: float, y: float, angle: float) -> Point2:
    """(x, y) turned by ``angle`` rad CCW."""
    c, s = math.cos(angle), math.sin(angle)
    return x * c - y * s, x * s + y * c


def centroid(polygon: Sequence[Point2]) -> Point2:
    """Area centroid of a simple polygon (m)."""
    area = cx = cy = 0.0
    n = len(polygon)
    for i in range(n):
        x0, y0 = polygon[i]
        x1, y1 = polygon[(i + 1) % n]
        cross = x0 * y1 - x1 * y0
        area += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if abs(area) < 1e-15:
        return (sum(p[0] for p in polygon) / n, sum(p[1] for p in polygon) / n)
    return cx / (3.0 * area), cy / (3.0 * area)


def away_from_first_edge(polygon: Sequence[Point2]) -> Point2:
    """Unit vector normal to the first edge of a counter-clockwise polygon, into it (for an
    intake zone: the way out of the mouth, away from the robot)."""
    (x0, y0), (x1, y1) = polygon[0], polygon[1]
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    return -dy / length, dx / length


def to_field(point: Point3, pose: tuple[float, float, float]) -> Point3:
    """Robot-frame point → field frame (z unchanged)."""
    x, y, heading = pose
    fx, fy = rotate(point[0], point[1], heading)
    return x + fx, y + fy, point[2]


def velocity_to_field(velocity: Point3, at: Point3, pose: tuple[float, float, float],
                      robot_velocity: tuple[float, float, float]) -> Point3:
    """Field velocity of something leaving robot-frame point ``at`` with robot-frame
    ``velocity`` (m/s) relative to the robot: turned to the field, plus the robot's velocity
    at that point (``robot_velocity``: field vx, vy m/s, omega rad/s)."""
    heading = pose[2]
    vx, vy = rotate(velocity[0], velocity[1], heading)
    rx, ry = rotate(at[0], at[1], heading)
    rvx, rvy, omega = robot_velocity
    return vx + rvx - omega * ry, vy + rvy + omega * rx, velocity[2]


def launch_velocity(speed: float, pitch: float, yaw: float) -> Point3:
    """Robot-frame velocity of a shot: ``speed`` m/s, ``pitch`` rad above horizontal, ``yaw``
    rad CCW from forward."""
    horizontal = speed * math.cos(pitch)
    return horizontal * math.cos(yaw), horizontal * math.sin(yaw), speed * math.sin(pitch)
