"""A small in-memory game-piece set for the handling tests: a real implementation of the
:class:`~simserver.models.api.PieceAccess` protocol (pieces with positions and states, held
pieces carried with the robot), without floor physics: loose pieces stay where they lie and
released ones where they were let go, their release recorded. The tests use only the protocol
through it, so they also run against the field's own PieceAccess."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from simserver.models.pieces.types import FLIGHT, HELD, LOOSE

Pose = tuple[float, float, float]


@dataclass
class Piece:
    """One piece: type name, footprint radius m, state, field position m (while not held),
    robot-frame point while held, velocity m/s, mass kg."""

    kind: str
    radius: float
    position: tuple[float, float, float]
    mass: float = 0.215
    state: int = LOOSE
    held_at: tuple[float, float, float] = (0.0, 0.0, 0.0)
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class Release:
    """A piece let go: id, field position m, field velocity m/s, spin rad/s."""

    piece: int
    position: tuple[float, float, float]
    velocity: tuple[float, float, float]
    spin: tuple[float, float, float]


@dataclass
class MemoryPieces:
    """The pieces one robot sees; ``pose`` gives that robot's (x, y, heading)."""

    pose: Callable[[], Pose]
    pieces: list[Piece] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)

    def add(self, x: float, y: float, z: float = 0.075, radius: float = 0.075,
            kind: str = "ball") -> int:
        """A loose piece at field (x, y, z); its id."""
        self.pieces.append(Piece(kind, radius, (x, y, z)))
        return len(self.pieces) - 1

    def where(self, piece: int) -> tuple[float, float, float]:
        """Field position of ``piece`` now (held ones move with the robot), m."""
        p = self.pieces[piece]
        if p.state != HELD:
            return p.position
        x, y, h = self.pose()
        bx, by, bz = p.held_at
        c, s = math.cos(h), math.sin(h)
        return x + bx * c - by * s, y + bx * s + by * c, bz

    # --- PieceAccess ------------------------------------------------------------------------

    def loose_in(self, zone: Sequence[tuple[float, float]], height: float) -> list[int]:
        x, y, h = self.pose()
        c, s = math.cos(h), math.sin(h)
        found = []
        for i, p in enumerate(self.pieces):
            if p.state not in (LOOSE, FLIGHT) or p.position[2] >= height:
                continue
            dx, dy = p.position[0] - x, p.position[1] - y
            point = (dx * c + dy * s, -dx * s + dy * c)  # robot frame
            if _distance_to_polygon(point, zone) <= p.radius:
                found.append((_distance_to_segment(point, zone[0], zone[1]), i))
        return [i for _, i in sorted(found)]

    def take(self, piece: int, at: tuple[float, float, float]) -> str:
        p = self.pieces[piece]
        assert p.state in (LOOSE, FLIGHT), f"piece {piece} is not loose"
        p.state, p.held_at, p.velocity = HELD, at, (0.0, 0.0, 0.0)
        return p.kind

    def carry(self, piece: int, at: tuple[float, float, float]) -> None:
        p = self.pieces[piece]
        assert p.state == HELD, f"piece {piece} is not held"
        p.held_at = at

    def release(self, piece: int, position: tuple[float, float, float],
                velocity: tuple[float, float, float],
                spin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        p = self.pieces[piece]
        assert p.state == HELD, f"piece {piece} is not held"
        p.state = FLIGHT if position[2] > p.radius or velocity[2] > 0.0 else LOOSE
        p.position, p.velocity = position, velocity
        self.releases.append(Release(piece, position, velocity, spin))

    def kind(self, piece: int) -> str:
        return self.pieces[piece].kind

    def mass(self, piece: int) -> float:
        return self.pieces[piece].mass

    def preloaded(self, mechanism: str) -> list[int]:
        return []


def _distance_to_segment(p: tuple[float, float], a: tuple[float, float],
                         b: tuple[float, float]) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)
    t = min(max(t, 0.0), 1.0)
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


def _distance_to_polygon(p: tuple[float, float], poly: Sequence[tuple[float, float]]) -> float:
    """0 inside the convex counter-clockwise polygon, else the distance to its outline."""
    n = len(poly)
    inside = all((poly[(i + 1) % n][0] - poly[i][0]) * (p[1] - poly[i][1])
                 - (poly[(i + 1) % n][1] - poly[i][1]) * (p[0] - poly[i][0]) >= 0.0
                 for i in range(n))
    if inside:
        return 0.0
    return min(_distance_to_segment(p, poly[i], poly[(i + 1) % n]) for i in range(n))
