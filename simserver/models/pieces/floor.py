"""Game pieces on the carpet: every piece of a field as arrays, stepped together.

A :class:`PieceField` holds N pieces as a struct of arrays (``kind``, ``state``, ``pos`` (N,3),
``vel`` (N,3), ``spin`` (N,3), ``yaw``, ``awake``, ``holder``). One :meth:`PieceField.step`
does, for the pieces that can move:

1. Flight: pieces in state FLIGHT are handed to the flight model (``FlightModel.step``,
   :mod:`simserver.models.pieces.flight`): landed ones become LOOSE, those that left the field
   GONE; goal entries are returned to the caller, which removes or returns the piece.
2. Carpet: a loose piece decelerates at ``rolling·g`` if its type rolls, else at
   ``friction·g``, integrated exactly over the substep (speed falls linearly, the distance is
   the trapezoid, a piece that stops within the substep stops where v²/(2a) puts it), so it
   comes to rest exactly and never reverses.
3. Robots: each robot's outline (a convex polygon, bumpers included) against the circles of
   the pieces near it. The piece is pushed out (split by inverse mass) and an impulse
   ``j = -(1+e)·u_n / (1/m + 1/M + (r×n)²/J)`` at the contact acts on both, so linear and
   angular momentum are conserved; no friction between bumper and piece.
4. Piece–piece: circles of the types' radii, found with a uniform grid (sorted cell keys),
   frictionless impulses with restitution √(e_a·e_b) between masses (momentum conserved),
   then a few Jacobi passes of positional correction (split by inverse mass) so no two pieces
   stay interpenetrating.
5. Walls (the field box) and field elements (convex polygons): pushed out, the normal
   velocity reflected with the piece's restitution.

Sleeping: a loose piece at rest that nothing touched this step falls asleep and costs nothing
until a robot or a moving piece touches it. Approach speeds below ``RESTING_SPEED`` do not
bounce. Pieces in flight do not touch robots.

    field = PieceField([fuel], kind=[0, 0], positions=[(2.0, 4.0), (2.5, 4.0)],
                       field_size=(16.54, 8.07))
    field.vel[0, :2] = (1.0, 0.0); field.wake([0])
    field.step(0.005)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from simserver.models.collision import Body, Polygon
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.types import FLIGHT, GONE, HELD, LOOSE, PieceType

GRAVITY = 9.80665  # m/s²
RESTING_SPEED = 0.05  # m/s: slower approaches (piece-piece, robot, wall) do not bounce
CORRECTION_PASSES = 4  # Jacobi passes of piece-piece positional correction per step
IMPULSE_PASSES = 4  # Jacobi passes of piece-piece impulses per step
_RELAX = 1.0
_MARGIN = 0.25  # of the radius: piece pairs this close are corrected together
_ON_CARPET = 1e-6  # m: a released piece this close to its resting height lands at once
SLOP = 1e-6  # m: overlaps up to this (rounding of pieces placed touching) are left alone


class FlightModel(Protocol):
    """What :class:`PieceField` needs of the flight model (:class:`~.flight.Flight`)."""

    def step(self, kind: np.ndarray, pos: np.ndarray, vel: np.ndarray, spin: np.ndarray,
             dt: float) -> FlightStep:
        """Advance the flying pieces given by dt s (arrays updated in place)."""
        ...


class FlightStep(Protocol):
    """The flight model's events of one step (``FlightEvents``)."""

    @property
    def landed(self) -> np.ndarray: ...  # (n,) bool: on the carpet now, to roll or slide
    @property
    def scored(self) -> np.ndarray: ...  # (n,) int: goal entered this step, -1 for none
    @property
    def out(self) -> np.ndarray: ...  # (n,) bool: left the field over a wall


@dataclass
class RobotBody:
    """A robot as the pieces meet it: its rigid body (field frame, updated in place by
    :meth:`PieceField.step`), outline (body frame, CCW, m), mass kg, yaw inertia kg·m² and
    reach (centre to farthest outline corner, m)."""

    body: Body
    polygon: Polygon
    mass: float
    inertia: float
    reach: float


class Scored(NamedTuple):
    """Pieces that entered a goal in a step: piece ids and the index of the goal each entered."""

    pieces: np.ndarray
    goals: np.ndarray


def circle_polygon(px: np.ndarray, py: np.ndarray, radius: np.ndarray, polygon: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlap of circles (centres ``px``, ``py`` m, radii m; shape (n,)) with one convex CCW
    polygon ((k,2), m): (depth m, > 0 where they overlap; normal x, y: unit vector from the
    polygon toward each circle's centre, along which moving the circle by depth separates)."""
    vx, vy = polygon[:, 0], polygon[:, 1]
    ex, ey = np.roll(vx, -1) - vx, np.roll(vy, -1) - vy
    length = np.hypot(ex, ey)
    fx, fy = ey / length, -ex / length  # outward face normals
    rx, ry = px[:, None] - vx, py[:, None] - vy
    sep = rx * fx + ry * fy
    face = sep.argmax(axis=1)
    rows = np.arange(len(px))
    smax = sep[rows, face]
    t = np.clip((rx * ex + ry * ey) / (length * length), 0.0, 1.0)
    qx, qy = rx - t * ex, ry - t * ey  # from the nearest boundary point to the centre
    d2 = qx * qx + qy * qy
    edge = d2.argmin(axis=1)
    dist = np.sqrt(d2[rows, edge])
    use_point = (smax > 0.0) & (dist > 0.0)
    safe = np.where(use_point, dist, 1.0)
    nx = np.where(use_point, qx[rows, edge] / safe, fx[face])
    ny = np.where(use_point, qy[rows, edge] / safe, fy[face])
    depth = radius - np.where(smax > 0.0, dist, smax)
    return depth, nx, ny


class _Element:
    """A field element for pieces: its polygon and bounding box (m)."""

    def __init__(self, obstacle: Obstacle):
        self.polygon = np.array(obstacle.points, dtype=float)
        self.lo = self.polygon.min(axis=0)
        self.hi = self.polygon.max(axis=0)


class PieceField:
    """Every game piece of a field; pure physics (no robots by name, no I/O).

    types: the piece types (``kind`` indexes them); kind (N,): each piece's type; positions:
    (N,2) or (N,3) field positions at reset, m (z defaults to resting on the carpet, height/2);
    yaw (N,) rad; field_size: (length, width) of the wall box, m; obstacles: field elements;
    flight: the model of pieces in flight (None: gravity only, no drag, no goals).

    Arrays (read them; change them only through the methods, or call :meth:`wake`):
    state (N,) int8 LOOSE/FLIGHT/HELD/GONE; pos, vel, spin (N,3) field frame, m, m/s, rad/s;
    yaw (N,) rad; awake (N,) bool (loose pieces that move or were touched); holder (N,) int
    (index of the robot holding it, -1); at (N,3): where its robot carries it, robot frame, m.
    """

    def __init__(self, types: Sequence[PieceType], kind: Sequence[int] | np.ndarray,
                 positions: Sequence[Sequence[float]] | np.ndarray,
                 field_size: tuple[float, float], obstacles: Sequence[Obstacle] = (),
                 yaw: Sequence[float] | np.ndarray | None = None,
                 flight: FlightModel | None = None, gravity: float = GRAVITY):
        self.types = tuple(types)
        self.kind = np.array(kind, dtype=np.int64).reshape(-1)
        n = len(self.kind)
        if n and (self.kind.min() < 0 or self.kind.max() >= len(self.types)):
            raise ValueError("piece kind out of range of the types")
        self.size = n
        self.length, self.width = field_size
        self.gravity = gravity
        self.flight = flight
        self.elements = [_Element(o) for o in obstacles]

        def per_piece(values: list[float]) -> np.ndarray:
            return np.array(values, dtype=float)[self.kind] if n else np.zeros(0)

        t = self.types
        self.radius = per_piece([p.radius for p in t])
        self.height = per_piece([p.height for p in t])
        self.mass = per_piece([p.mass for p in t])
        self.inv_mass = 1.0 / self.mass
        self.restitution = per_piece([p.restitution for p in t])
        self.decel = per_piece([(p.rolling if p.rolls else p.friction) * gravity for p in t])
        self.rolls = per_piece([float(p.rolls) for p in t]) > 0.5
        self.rest_z = self.height / 2.0
        self._cell = 2.0 * float(self.radius.max()) if n else 1.0
        self._rows = int(np.ceil(self.width / self._cell)) + 4
        start = np.zeros((n, 3))
        given = np.asarray(positions, dtype=float).reshape(n, -1)
        start[:, :given.shape[1]] = given[:, :3]
        if given.shape[1] < 3:
            start[:, 2] = self.rest_z
        self._start = start
        self._start_yaw = np.zeros(n) if yaw is None else np.array(yaw, dtype=float)
        self.reset()

    def reset(self) -> None:
        """Every piece loose at its start, at rest (awake for one step, so that pieces placed
        overlapping separate)."""
        n = self.size
        self.state = np.full(n, LOOSE, dtype=np.int8)
        self.pos = self._start.copy()
        self.vel = np.zeros((n, 3))
        self.spin = np.zeros((n, 3))
        self.yaw = self._start_yaw.copy()
        self.awake = np.ones(n, dtype=bool)
        self.holder = np.full(n, -1, dtype=np.int64)
        self.at = np.zeros((n, 3))
        self._touched = np.zeros(n, dtype=bool)
        self._flying = 0

    # --- what handling mechanisms do -------------------------------------------------------

    def wake(self, pieces: Sequence[int] | np.ndarray) -> None:
        """Let loose ``pieces`` move again (after their velocity was changed from outside)."""
        idx = np.asarray(pieces, dtype=np.int64)
        self.awake[idx] = self.state[idx] == LOOSE

    def take(self, piece: int, holder: int, at: tuple[float, float, float]) -> None:
        """Loose or flying ``piece`` is held by robot ``holder`` at robot-frame ``at`` (m)."""
        state = int(self.state[piece])
        if state not in (LOOSE, FLIGHT):
            raise ValueError(f"piece {piece} is {('held', 'gone')[state == GONE]}, "
                             f"not loose")
        if state == FLIGHT:
            self._flying -= 1
        self.state[piece] = HELD
        self.holder[piece] = holder
        self.at[piece] = at
        self.vel[piece] = 0.0
        self.spin[piece] = 0.0
        self.awake[piece] = False

    def release(self, piece: int, position: Sequence[float], velocity: Sequence[float],
                spin: Sequence[float] = (0.0, 0.0, 0.0)) -> bool:
        """Held ``piece`` leaves its robot at field ``position`` (m) with ``velocity`` (m/s)
        and ``spin`` (rad/s), as :meth:`launch`. Returns whether it flies."""
        if self.state[piece] != HELD:
            raise ValueError(f"piece {piece} is not held")
        self.holder[piece] = -1
        return self.launch(piece, position, velocity, spin)

    def launch(self, piece: int, position: Sequence[float], velocity: Sequence[float],
               spin: Sequence[float] = (0.0, 0.0, 0.0)) -> bool:
        """Put ``piece`` (not held) at field ``position`` (m) with ``velocity`` (m/s) and
        ``spin`` (rad/s): it lies on the carpet (LOOSE) when its centre is at most at its
        resting height and it does not move up, else it flies. Returns whether it flies."""
        was_flying = self.state[piece] == FLIGHT
        self.pos[piece] = position
        self.vel[piece] = velocity
        self.spin[piece] = spin
        rest = self.rest_z[piece]
        if self.pos[piece, 2] <= rest + _ON_CARPET and self.vel[piece, 2] <= 0.0:
            self.pos[piece, 2] = rest
            self.vel[piece, 2] = 0.0
            self.state[piece] = LOOSE
            self.awake[piece] = True
            self._flying -= int(was_flying)
            return False
        self.state[piece] = FLIGHT
        self.awake[piece] = False
        self._flying += int(not was_flying)
        return True

    def remove(self, piece: int) -> None:
        """``piece`` is gone (scored and removed), where it is."""
        if self.state[piece] == FLIGHT:
            self._flying -= 1
        self.state[piece] = GONE
        self.holder[piece] = -1
        self.vel[piece] = 0.0
        self.awake[piece] = False

    def loose_in(self, zone: np.ndarray, height: float) -> np.ndarray:
        """Ids of loose pieces (and flying ones with their centre below ``height`` m) whose
        footprint overlaps the convex CCW polygon ``zone`` ((k,2), field frame, m), nearest
        the zone's first edge first."""
        lo, hi = zone.min(axis=0), zone.max(axis=0)
        x, y, r = self.pos[:, 0], self.pos[:, 1], self.radius
        near = ((x + r > lo[0]) & (x - r < hi[0]) & (y + r > lo[1]) & (y - r < hi[1])
                & ((self.state == LOOSE) | ((self.state == FLIGHT) & (self.pos[:, 2] < height))))
        idx = np.flatnonzero(near)
        if not len(idx):
            return idx
        depth, _, _ = circle_polygon(x[idx], y[idx], r[idx], zone)
        idx = idx[depth > 0.0]
        (ax, ay), (bx, by) = zone[0], zone[1]
        ex, ey = bx - ax, by - ay
        inward = ((x[idx] - ax) * -ey + (y[idx] - ay) * ex) / np.hypot(ex, ey)
        return idx[np.argsort(inward, kind="stable")]

    # --- one step --------------------------------------------------------------------------

    def step(self, dt: float, robots: Sequence[RobotBody] = ()) -> tuple[Scored, np.ndarray]:
        """Advance every piece ``dt`` s and resolve their contacts with ``robots`` (whose
        bodies are updated in place). Returns the pieces that entered a goal (still in
        FLIGHT: the caller removes or returns them) and (R,) bool: which robots touched a
        piece."""
        scored = self._fly(dt) if self._flying else Scored(np.zeros(0, np.int64),
                                                           np.zeros(0, np.int64))
        self._touched[:] = False
        idx = np.flatnonzero(self.awake)
        if len(idx):
            self._roll(idx, dt)
        touched = self._robots(robots)
        idx = np.flatnonzero(self.awake)
        if len(idx):
            self._pairs(idx)
            idx = np.flatnonzero(self.awake)
            self._bounds(idx)
            moving = (self.vel[idx, 0] != 0.0) | (self.vel[idx, 1] != 0.0) | self._touched[idx]
            self.awake[idx] = moving
        return scored, touched

    def _fly(self, dt: float) -> Scored:
        """Pieces in flight; landed ones become loose, those out of the field gone."""
        idx = np.flatnonzero(self.state == FLIGHT)
        pos, vel, spin = self.pos[idx], self.vel[idx], self.spin[idx]
        if self.flight is None:
            pos += vel * dt
            pos[:, 2] -= 0.5 * self.gravity * dt * dt
            vel[:, 2] -= self.gravity * dt
            landed = pos[:, 2] <= self.rest_z[idx]
            goals = np.full(len(idx), -1, dtype=np.int64)
            out = np.zeros(len(idx), dtype=bool)
        else:
            events = self.flight.step(self.kind[idx], pos, vel, spin, dt)
            landed, goals, out = events.landed, np.asarray(events.scored), events.out
        self.pos[idx], self.vel[idx], self.spin[idx] = pos, vel, spin
        down = idx[landed & ~out]
        self.pos[down, 2] = self.rest_z[down]
        self.vel[down, 2] = 0.0
        self.state[down] = LOOSE
        self.awake[down] = True
        for piece in idx[out]:
            self.remove(int(piece))
        self._flying -= len(down)
        hit = goals >= 0
        return Scored(idx[hit], goals[hit])

    def _roll(self, idx: np.ndarray, dt: float) -> None:
        """Loose pieces ``idx`` decelerate on the carpet, exactly over ``dt`` (never reverse)."""
        v = self.vel[idx, :2]
        speed = np.hypot(v[:, 0], v[:, 1])
        a = self.decel[idx]
        after = np.maximum(speed - a * dt, 0.0)
        stops = after == 0.0
        dist = np.where(stops, speed * speed / (2.0 * np.where(a > 0.0, a, 1.0)),
                        0.5 * (speed + after) * dt)
        moving = speed > 0.0
        unit = v / np.where(moving, speed, 1.0)[:, None]
        self.pos[idx, :2] += unit * dist[:, None]
        self.vel[idx, :2] = unit * after[:, None]
        r = self.radius[idx]
        rolls = self.rolls[idx]
        spin = np.zeros((len(idx), 3))
        spin[:, 0] = np.where(rolls, -self.vel[idx, 1] / r, 0.0)
        spin[:, 1] = np.where(rolls, self.vel[idx, 0] / r, 0.0)
        self.spin[idx] = spin

    def _robots(self, robots: Sequence[RobotBody]) -> np.ndarray:
        """Contacts of each robot's outline with the loose pieces near it."""
        touched = np.zeros(len(robots), dtype=bool)
        if not robots or not self.size:
            return touched
        cx = np.array([rb.body.x for rb in robots])
        cy = np.array([rb.body.y for rb in robots])
        reach = np.array([rb.reach for rb in robots]) + float(self.radius.max())
        dx = self.pos[:, 0][None, :] - cx[:, None]
        dy = self.pos[:, 1][None, :] - cy[:, None]
        near = (dx * dx + dy * dy < (reach * reach)[:, None]) & (self.state == LOOSE)[None, :]
        if not near.any():
            return touched
        for k in np.flatnonzero(near.any(axis=1)).tolist():
            touched[k] = self._robot(robots[k], np.flatnonzero(near[k]))
        return touched

    def _robot(self, rb: RobotBody, idx: np.ndarray) -> bool:
        """Resolve robot ``rb`` against loose pieces ``idx``; whether any touched it."""
        b = rb.body
        c, s = np.cos(b.heading), np.sin(b.heading)
        local = np.array(rb.polygon, dtype=float)
        poly = np.empty_like(local)
        poly[:, 0] = b.x + local[:, 0] * c - local[:, 1] * s
        poly[:, 1] = b.y + local[:, 0] * s + local[:, 1] * c
        px, py, r = self.pos[idx, 0], self.pos[idx, 1], self.radius[idx]
        depth, nx, ny = circle_polygon(px, py, r, poly)
        hit = depth > 0.0
        if not hit.any():
            return False
        idx, depth, nx, ny, r = idx[hit], depth[hit], nx[hit], ny[hit], r[hit]
        inv_m, inv_big, inv_j = self.inv_mass[idx], 1.0 / rb.mass, 1.0 / rb.inertia
        # Push apart first, so that the impulses act where the bodies end the step.
        share = inv_m / (inv_m + inv_big)
        self.pos[idx, 0] += depth * share * nx
        self.pos[idx, 1] += depth * share * ny
        b.x -= float(np.sum(depth * (1.0 - share) * nx))
        b.y -= float(np.sum(depth * (1.0 - share) * ny))
        # Lever arm of the contact (any point on the line through the centre along n).
        ax, ay = self.pos[idx, 0] - r * nx - b.x, self.pos[idx, 1] - r * ny - b.y
        arm = ax * ny - ay * nx
        ux = self.vel[idx, 0] - (b.vx - b.omega * ay)
        uy = self.vel[idx, 1] - (b.vy + b.omega * ax)
        un = ux * nx + uy * ny
        e = np.where(un < -RESTING_SPEED, self.restitution[idx], 0.0)
        j = np.where(un < 0.0, -(1.0 + e) * un / (inv_m + inv_big + arm * arm * inv_j), 0.0)
        self.vel[idx, 0] += j * nx * inv_m
        self.vel[idx, 1] += j * ny * inv_m
        b.vx -= float(np.sum(j * nx)) * inv_big
        b.vy -= float(np.sum(j * ny)) * inv_big
        b.omega -= float(np.sum(j * arm)) * inv_j
        self.awake[idx] = True
        self._touched[idx] = True
        return True

    def _pairs(self, active: np.ndarray) -> None:
        """Piece-piece contacts of the awake pieces ``active`` with every loose piece, and of
        the sleeping pieces they touch with theirs (a push passes through two layers)."""
        loose = np.flatnonzero(self.state == LOOSE)
        cell, rows = self._cell, self._rows
        keys = ((self.pos[loose, 0] // cell).astype(np.int64) + 2) * rows + \
            (self.pos[loose, 1] // cell).astype(np.int64) + 2
        order = np.argsort(keys, kind="stable")
        grid = (keys[order], loose[order])
        a, b = self._near(active, grid, self.awake)
        ring = np.unique(b[~self.awake[b]])
        if len(ring):
            ringed = np.zeros(self.size, dtype=bool)
            ringed[ring] = True
            a2, b2 = self._near(ring, grid, ringed, skip=self.awake)
            a, b = np.concatenate((a, a2)), np.concatenate((b, b2))
        if not len(a):
            return
        reach = self.radius[a] + self.radius[b]
        self._impulses(a, b, reach)
        self._separate(a, b, reach)

    def _near(self, active: np.ndarray, grid: tuple[np.ndarray, np.ndarray],
              mask: np.ndarray, skip: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (a in ``active``, b loose) closer than their radii plus a margin, from the
        grid (sorted cell keys, their pieces); each pair once (``mask``: ``active`` as a mask;
        b in ``skip`` left out)."""
        skeys, members = grid
        cell, rows = self._cell, self._rows
        ax = (self.pos[active, 0] // cell).astype(np.int64) + 2
        ay = (self.pos[active, 1] // cell).astype(np.int64) + 2
        base = (ax[:, None] + np.array([-1, 0, 1])[None, :]) * rows + ay[:, None]
        start = np.searchsorted(skeys, base - 1, side="left")
        stop = np.searchsorted(skeys, base + 1, side="right")
        counts = (stop - start).ravel()
        total = int(counts.sum())
        ends = np.cumsum(counts)
        offsets = np.repeat(start.ravel() - (ends - counts), counts)
        b = members[offsets + np.arange(total)]
        a = np.repeat(np.repeat(active, 3), counts)
        keep = (a != b) & (~mask[b] | (a < b))
        if skip is not None:
            keep &= ~skip[b]
        a, b = a[keep], b[keep]
        dx, dy = self.pos[b, 0] - self.pos[a, 0], self.pos[b, 1] - self.pos[a, 1]
        reach = (self.radius[a] + self.radius[b]) * (1.0 + _MARGIN)
        close = dx * dx + dy * dy < reach * reach
        return a[close], b[close]

    def _impulses(self, a: np.ndarray, b: np.ndarray, reach: np.ndarray) -> None:
        """Frictionless impulses between touching, approaching pairs (a, b): a Jacobi pass
        with restitution, then passes that stop what still approaches (a push travels
        through a row of pieces)."""
        dx, dy = self.pos[b, 0] - self.pos[a, 0], self.pos[b, 1] - self.pos[a, 1]
        dist = np.hypot(dx, dy)
        touching = (dist < reach + SLOP) & (dist > 0.0)
        if not touching.any():
            return
        a, b, dx, dy, dist = a[touching], b[touching], dx[touching], dy[touching], dist[touching]
        nx, ny = dx / dist, dy / dist
        k = 1.0 / (self.inv_mass[a] + self.inv_mass[b])
        elastic = np.sqrt(self.restitution[a] * self.restitution[b])
        n, inv_mass, vel = self.size, self.inv_mass, self.vel
        for first in (True,) + (False,) * (IMPULSE_PASSES - 1):
            un = (vel[b, 0] - vel[a, 0]) * nx + (vel[b, 1] - vel[a, 1]) * ny
            approach = un < 0.0
            if not approach.any():
                return
            e = np.where(un < -RESTING_SPEED, elastic, 0.0) if first else 0.0
            j = np.where(approach, -(1.0 + e) * un * k, 0.0)
            jx, jy = j * nx, j * ny
            vel[:, 0] += (np.bincount(b, jx, n) - np.bincount(a, jx, n)) * inv_mass
            vel[:, 1] += (np.bincount(b, jy, n) - np.bincount(a, jy, n)) * inv_mass
            both = np.concatenate((a[approach], b[approach]))
            self.awake[both] = True
            self._touched[both] = True

    def _separate(self, a: np.ndarray, b: np.ndarray, reach: np.ndarray) -> None:
        """Move overlapping pairs (a, b) apart, split by inverse mass; Jacobi passes, each
        piece moved by the mean of its pairs' pushes (stable for a piece squeezed from
        several sides; an isolated pair separates in one pass)."""
        n = self.size
        wa = self.inv_mass[a] / (self.inv_mass[a] + self.inv_mass[b])
        for _ in range(CORRECTION_PASSES):
            dx, dy = self.pos[b, 0] - self.pos[a, 0], self.pos[b, 1] - self.pos[a, 1]
            dist = np.hypot(dx, dy)
            over = reach - dist
            hit = over > SLOP
            if not hit.any():
                return
            apart = dist > 0.0  # coincident centres part along x
            nx = np.where(apart, dx / np.where(apart, dist, 1.0), 1.0)
            ny = np.where(apart, dy / np.where(apart, dist, 1.0), 0.0)
            push = np.where(hit, over, 0.0)
            px, py = push * nx, push * ny
            share = _RELAX * np.maximum(np.bincount(a[hit], minlength=n)
                               + np.bincount(b[hit], minlength=n), 1)
            self.pos[:, 0] += (np.bincount(b, px * (1.0 - wa), n)
                               - np.bincount(a, px * wa, n)) / share
            self.pos[:, 1] += (np.bincount(b, py * (1.0 - wa), n)
                               - np.bincount(a, py * wa, n)) / share
            moved = np.concatenate((a[hit], b[hit]))
            self.awake[moved] = True
            self._touched[moved] = True

    def _bounds(self, idx: np.ndarray) -> None:
        """Walls and field elements against pieces ``idx``: pushed out, bounced."""
        r, e = self.radius[idx], self.restitution[idx]
        pos, vel = self.pos[idx], self.vel[idx]
        for axis, top in ((0, self.length), (1, self.width)):
            low, high = pos[:, axis] < r, pos[:, axis] > top - r
            out = low | high
            if out.any():
                pos[:, axis] = np.clip(pos[:, axis], r, top - r)
                v = vel[:, axis]
                back = (low & (v < 0.0)) | (high & (v > 0.0))
                vel[:, axis] = np.where(back, -np.where(np.abs(v) > RESTING_SPEED, e, 0.0) * v,
                                        v)
                self._touched[idx[out]] = True
        rmax = float(r.max())
        for el in self.elements:
            near = ((pos[:, 0] > el.lo[0] - rmax) & (pos[:, 0] < el.hi[0] + rmax)
                    & (pos[:, 1] > el.lo[1] - rmax) & (pos[:, 1] < el.hi[1] + rmax))
            if not near.any():
                continue
            k = np.flatnonzero(near)
            depth, nx, ny = circle_polygon(pos[k, 0], pos[k, 1], r[k], el.polygon)
            hit = depth > 0.0
            if not hit.any():
                continue
            k, depth, nx, ny = k[hit], depth[hit], nx[hit], ny[hit]
            pos[k, 0] += depth * nx
            pos[k, 1] += depth * ny
            un = vel[k, 0] * nx + vel[k, 1] * ny
            bounce = np.where(un < 0.0, (1.0 + np.where(un < -RESTING_SPEED, e[k], 0.0)) * un,
                              0.0)
            vel[k, 0] -= bounce * nx
            vel[k, 1] -= bounce * ny
            self._touched[idx[k]] = True
        self.pos[idx], self.vel[idx] = pos, vel

    # --- what is seen ----------------------------------------------------------------------

    def visible(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Loose and flying pieces, as cameras may see them: (ids (n,), field positions of
        their centres (n,3) m, radius (n,) m, height (n,) m, class_id (n,) int)."""
        idx = np.flatnonzero((self.state == LOOSE) | (self.state == FLIGHT))
        class_ids = np.array([t.class_id for t in self.types], dtype=np.int64)
        return (idx, self.pos[idx], self.radius[idx], self.height[idx],
                class_ids[self.kind[idx]])

    def momentum(self) -> np.ndarray:
        """Total linear momentum of the loose and flying pieces, (3,) kg·m/s."""
        moving = (self.state == LOOSE) | (self.state == FLIGHT)
        return (self.mass[moving, None] * self.vel[moving]).sum(axis=0)
