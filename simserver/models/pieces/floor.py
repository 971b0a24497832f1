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
4. Piece–piece: circles of the types' radii, from a Verlet list of every pair of loose
   pieces closer than their radii plus ``SKIN`` (built with a uniform grid, kept until a piece
   moved ``SKIN``/2); frictionless impulses with restitution √(e_a·e_b) between masses
   (momentum conserved), then a few Jacobi passes of positional correction (split by inverse
   mass) so no two pieces stay interpenetrating.
5. Walls (the field box) and field elements (convex polygons): pushed out, the normal
   velocity reflected with the piece's restitution; a raster of where a piece can touch one
   spares the others the test.

Sleeping: a loose piece at rest that nothing touched this step falls asleep and costs nothing
until a robot or a moving piece touches it. Approach speeds below ``RESTING_SPEED`` do not
bounce. Pieces in flight do not touch robots.

A lagging carpet (``max_lag`` > 0, :class:`~simserver.world.pieces.FieldPieces` uses the tick):
steps 2, 4 and 5 may wait up to ``max_lag`` while no awake piece would move more than
``TRAVEL`` of the smallest radius in the wait; step 3 still runs every step, against each
piece where it is then (p + v·t), and moves the stored position of a piece it hits by −Δv·t,
so that the waiting roll starts from the contact. :meth:`PieceField.sync` (called by every
method that reads or changes pieces) catches up.

Speed: a step's few contacts (robot–piece, piece–piece, walls and elements) are solved in
plain floats (:mod:`~simserver.models.pieces.few`, same arithmetic), numpy only above
``FEW_CONTACTS``, ``FEW_PAIRS`` and ``FEW_BOUNDS``; the plain-float pair kernels get only the
pairs that can act (:func:`_movable`: the same result without the others); positions and
velocities are also seen as x + iy (``_p``, ``_v``: views of ``pos`` and ``vel``); with every
piece of one type, a per-piece constant is one float (:meth:`PieceField._each`: the same
arithmetic, a numpy call fewer).
benchmarks/bench_pieces.py.

    field = PieceField([fuel], kind=[0, 0], positions=[(2.0, 4.0), (2.5, 4.0)],
                       field_size=(16.54, 8.07))
    field.vel[0, :2] = (1.0, 0.0); field.wake([0])
    field.step(0.005)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Protocol

import numpy as np

from simserver.models.collision import Body, Polygon
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.few import (
    FloatOutline,
    circle_outline,
    float_outline,
    pair_impulses,
    pair_separate,
)
from simserver.models.pieces.types import FLIGHT, GONE, HELD, LOOSE, PieceType

GRAVITY = 9.80665  # m/s²
RESTING_SPEED = 0.05  # m/s: slower approaches (piece-piece, robot, wall) do not bounce
CORRECTION_PASSES = 4  # Jacobi passes of piece-piece positional correction per step
IMPULSE_PASSES = 4  # Jacobi passes of piece-piece impulses per step
SKIN = 0.3  # m: pairs this much farther apart than touching are watched together
_ON_CARPET = 1e-6  # m: a released piece this close to its resting height lands at once
_BRUTE_FORCE = 2048  # awake × loose pieces up to which pairs are found all against all
_NEIGHBOUR_ROWS = np.array([[-1, 0, 1]])
SLOP = 1e-6  # m: overlaps up to this (rounding of pieces placed touching) are left alone
TRAVEL = 0.5  # of the smallest radius: the farthest a piece moves in a step that waited
FEW_CONTACTS = 24  # robot-piece candidates up to which they are solved in plain floats
FEW_PAIRS = 64  # piece-piece pairs up to which they are solved in plain floats
FEW_BOUNDS = 8  # pieces near walls or elements up to which they are solved in plain floats
_TOUCHING = -(SLOP + 1e-9)  # m: least overlap of pairs that may touch (kernels' test + margin)


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


class Robot(Protocol):
    """A robot as the pieces meet it (a :class:`~simserver.world.World` is one): pose (x m,
    y m, heading rad), reach (centre to farthest outline corner, m), outline (body frame, CCW,
    m), mass kg, yaw inertia kg·m², and its rigid body to read and, after an impact, write."""

    @property
    def pose(self) -> tuple[float, float, float]: ...
    @property
    def reach(self) -> float: ...
    @property
    def polygon(self) -> Polygon: ...
    @property
    def mass(self) -> float: ...
    @property
    def inertia(self) -> float: ...
    def body(self) -> Body: ...
    def set_body(self, body: Body) -> None: ...


@dataclass
class RobotBody:
    """A bare rigid robot (a :class:`Robot`): its body ``rigid`` (field frame, updated in
    place), outline, mass, inertia and reach as in :class:`Robot`."""

    rigid: Body
    polygon: Polygon
    mass: float
    inertia: float
    reach: float

    @property
    def pose(self) -> tuple[float, float, float]:
        return self.rigid.x, self.rigid.y, self.rigid.heading

    def body(self) -> Body:
        return self.rigid

    def set_body(self, body: Body) -> None:
        self.rigid = body


class Scored(NamedTuple):
    """Pieces that entered a goal in a step: piece ids and the index of the goal each entered."""

    pieces: np.ndarray
    goals: np.ndarray


class Edges(NamedTuple):
    """A convex CCW polygon's edges, for :func:`circle_polygon`: start corners x, y (k,),
    edge vectors x, y (k,), 1/|edge|² (k,) and outward unit normals x, y (k,), m."""

    vx: np.ndarray
    vy: np.ndarray
    ex: np.ndarray
    ey: np.ndarray
    inv_len2: np.ndarray
    fx: np.ndarray
    fy: np.ndarray


def edges(polygon: np.ndarray | Sequence[Sequence[float]]) -> Edges:
    """The :class:`Edges` of a convex CCW polygon ((k,2), m)."""
    p = np.asarray(polygon, dtype=float)
    vx, vy = p[:, 0].copy(), p[:, 1].copy()
    ex, ey = np.roll(vx, -1) - vx, np.roll(vy, -1) - vy
    length = np.hypot(ex, ey)
    return Edges(vx, vy, ex, ey, 1.0 / (length * length), ey / length, -ex / length)


def circle_polygon(px: np.ndarray, py: np.ndarray, radius: np.ndarray,
                   polygon: Edges | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlap of circles (centres ``px``, ``py`` m, radii m; shape (n,)) with one convex CCW
    polygon ((k,2) m, or its :class:`Edges`; or one polygon per circle: Edges of (n,k)
    arrays): (depth m, > 0 where they overlap; normal x, y:
    unit vector from the polygon toward each circle's centre, along which moving the circle
    by depth separates them)."""
    e = polygon if isinstance(polygon, Edges) else edges(polygon)
    rx, ry = px[:, None] - e.vx, py[:, None] - e.vy
    sep = rx * e.fx + ry * e.fy
    face = sep.argmax(axis=1)
    rows = np.arange(len(px))
    smax = sep[rows, face]
    t = np.clip((rx * e.ex + ry * e.ey) * e.inv_len2, 0.0, 1.0)
    qx, qy = rx - t * e.ex, ry - t * e.ey  # from the nearest boundary point to the centre
    d2 = qx * qx + qy * qy
    edge = d2.argmin(axis=1)
    dist = np.sqrt(d2[rows, edge])
    use_point = (smax > 0.0) & (dist > 0.0)
    safe = np.where(use_point, dist, 1.0)
    if e.fx.ndim == 1:
        fx, fy = e.fx[face], e.fy[face]
    else:  # one polygon per circle
        fx, fy = e.fx[rows, face], e.fy[rows, face]
    nx = np.where(use_point, qx[rows, edge] / safe, fx)
    ny = np.where(use_point, qy[rows, edge] / safe, fy)
    depth = radius - np.where(smax > 0.0, dist, smax)
    return depth, nx, ny


@lru_cache(maxsize=256)
def _bits(mask: int, count: int) -> tuple[int, ...]:
    """Elements a raster code's mask (bit e: element e; bit 30: every element from the 30th
    on, of ``count``) names, ascending."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        e = low.bit_length() - 1
        if e >= 30:
            out.extend(range(30, count))
            break
        out.append(e)
        mask ^= low
    return tuple(out)


def _movable(a: list[int], b: list[int], over: list[float]) -> tuple[list[int], list[int]]:
    """Of pairs (a, b) overlapping by ``over`` (m, < 0: apart), those whose pieces a step's
    impulses and corrections can move, in their order: the touching ones, and in turn those
    with a piece of a pair kept. The others cannot act (neither piece moves and they do not
    touch), so solving without them gives the same result."""
    keep = [o > _TOUCHING for o in over]
    if all(keep):
        return a, b
    moving = {p for k, t in enumerate(keep) if t for p in (a[k], b[k])}
    grown = True
    while grown:
        grown = False
        for k, t in enumerate(keep):
            if not t and (a[k] in moving or b[k] in moving):
                keep[k] = grown = True
                moving.add(a[k])
                moving.add(b[k])
    return ([p for p, t in zip(a, keep, strict=True) if t],
            [p for p, t in zip(b, keep, strict=True) if t])


def _wall(p: float, v: float, low: float, high: float, e: float) -> tuple[float, float]:
    """One coordinate p (m) and velocity v (m/s) of a piece kept within [low, high], bounced
    with restitution e as in ``PieceField._walls``."""
    back = (p < low and v < 0.0) or (p > high and v > 0.0)
    p = min(max(p, low), high)
    return p, -(e if abs(v) > RESTING_SPEED else 0.0) * v if back else v


@lru_cache(maxsize=64)
def _robot_edges(polygons: tuple[Polygon, ...]) -> Edges | None:
    """The edges of robots' outlines (body frame) stacked, arrays (R,k); None when their
    corner counts differ. Computed once per set of outlines."""
    shapes = [edges(p) for p in polygons]
    if len({len(e.vx) for e in shapes}) != 1:
        return None
    return Edges(*(np.stack(arrays) for arrays in zip(*shapes, strict=True)))


@lru_cache(maxsize=64)
def _float_outline(polygon: Polygon) -> FloatOutline:
    """A robot's outline (body frame) for :func:`~.few.circle_outline`."""
    return float_outline(*(a.tolist() for a in edges(polygon)))


_NO_PIECES = np.zeros(0, np.int64)
_NONE_SCORED = Scored(_NO_PIECES, _NO_PIECES)
_OCCUPANCY_CELL = 0.5  # m: least cell of the occupancy grid robots look pieces up in
_EDGE_CELL = 0.02  # m: cell of the raster of where pieces may touch walls and elements


class PieceField:
    """Every game piece of a field; pure physics (no robots by name, no I/O).

    types: the piece types (``kind`` indexes them); kind (N,): each piece's type; positions:
    (N,2) or (N,3) field positions at reset, m (z defaults to resting on the carpet, height/2);
    yaw (N,) rad; field_size: (length, width) of the wall box, m; obstacles: field elements;
    flight: the model of pieces in flight (None: gravity only, no drag, no goals).

    Arrays (read them; change them only through the methods, or call :meth:`wake`):
    state (N,) int8 LOOSE/FLIGHT/HELD/GONE; pos, vel, spin (N,3) field frame, m, m/s, rad/s;
    (spin: of pieces in flight; a loose piece's is not tracked and reads 0);
    yaw (N,) rad; awake (N,) bool (loose pieces that move or were touched); holder (N,) int
    (index of the robot holding it, -1); at (N,3): where its robot carries it, robot frame, m.
    """

    def __init__(self, types: Sequence[PieceType], kind: Sequence[int] | np.ndarray,
                 positions: Sequence[Sequence[float]] | np.ndarray,
                 field_size: tuple[float, float], obstacles: Sequence[Obstacle] = (),
                 yaw: Sequence[float] | np.ndarray | None = None,
                 flight: FlightModel | None = None, gravity: float = GRAVITY,
                 max_lag: float = 0.0):
        self.types = tuple(types)
        self.max_lag = float(max_lag)
        self.kind = np.array(kind, dtype=np.int64).reshape(-1)
        n = len(self.kind)
        if n and (self.kind.min() < 0 or self.kind.max() >= len(self.types)):
            raise ValueError("piece kind out of range of the types")
        self.size = n
        self.length, self.width = field_size
        self.gravity = gravity
        self.flight = flight
        self.elements = [edges(o.points) for o in obstacles]
        self._element_outlines = [float_outline(*(a.tolist() for a in el))
                                  for el in self.elements]
        boxes = np.array([[min(p[0] for p in o.points), min(p[1] for p in o.points),
                           max(p[0] for p in o.points), max(p[1] for p in o.points)]
                          for o in obstacles]).reshape(-1, 4)
        self._element_box = (boxes[:, :2].T, boxes[:, 2:].T)  # (2,E) lower, upper corners

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
        self._half_inv_decel = 0.5 / np.maximum(self.decel, 1e-300)
        # The same per piece as Python floats, for the plain-float paths.
        self._inv_mass_f, self._radius_f = self.inv_mass.tolist(), self.radius.tolist()
        self._restitution_f = self.restitution.tolist()
        # Every piece of one type: its per-piece values are one float (see _each).
        self._one_type = bool(n) and bool((self.kind == self.kind[0]).all())
        self.rest_z = self.height / 2.0
        self._rmax = float(self.radius.max()) if n else 0.0
        self._travel = TRAVEL * float(self.radius.min()) if n else 0.0
        self._cell = 2.0 * self._rmax + SKIN
        self._occupancy_cell = max(_OCCUPANCY_CELL, 2.0 * self._rmax)
        self._rows = int(np.ceil(self.width / self._cell)) + 4
        self._edge_cells = self._raster_of_edges(boxes)
        start = np.zeros((n, 3))
        given = np.asarray(positions, dtype=float).reshape(n, -1)
        start[:, :given.shape[1]] = given[:, :3]
        if given.shape[1] < 3:
            start[:, 2] = self.rest_z
        self._start = start
        self._start_yaw = np.zeros(n) if yaw is None else np.array(yaw, dtype=float)
        self._start_awake: np.ndarray | None = None
        self._everyone = np.ones(n, dtype=bool)
        self.reset()
        self._start_awake = self._overlapping()
        self.awake[:] = self._start_awake
        self._stirred = bool(self._start_awake.any())

    def _raster_of_edges(self, boxes: np.ndarray) -> np.ndarray:
        """(cols, rows) int: cells of ``_EDGE_CELL`` m where a piece may touch a wall (bit 0)
        or field element e (bit e + 1; bit 31 for all from the 31st on), from the elements'
        bounding ``boxes`` (E,4): x, y lower, x, y upper, m. Pieces in cells of 0 skip those
        tests."""
        cell = _EDGE_CELL
        cols, rows = int(self.length / cell) + 1, int(self.width / cell) + 1
        grow = self._rmax + 1e-6
        x0 = np.arange(cols)[:, None] * cell - grow  # every cell grown by the largest radius
        y0 = np.arange(rows)[None, :] * cell - grow
        x1, y1 = x0 + cell + 2.0 * grow, y0 + cell + 2.0 * grow
        codes = ((x0 < 0.0) | (x1 > self.length) | (y0 < 0.0) | (y1 > self.width)) \
            .astype(np.int64)
        for e, (lx, ly, hx, hy) in enumerate(boxes.tolist()):
            near = (x1 >= lx) & (x0 <= hx) & (y1 >= ly) & (y0 <= hy)
            codes |= near.astype(np.int64) << min(e + 1, 31)
        return codes

    def reset(self) -> None:
        """Every piece loose at its start, at rest; asleep but those placed overlapping another
        piece, a wall or an element (awake, so that they separate)."""
        n = self.size
        self.state = np.full(n, LOOSE, dtype=np.int8)
        self.pos = self._start.copy()
        self.vel = np.zeros((n, 3))
        # x + iy of every piece's position and velocity: views of pos and vel (one complex
        # array op does the work of two on columns, and 1-D indexing costs a tenth of 2-D).
        self._p = self.pos[:, :2].view(np.complex128)[:, 0]
        self._v = self.vel[:, :2].view(np.complex128)[:, 0]
        self.spin = np.zeros((n, 3))
        self.yaw = self._start_yaw.copy()
        self.awake = np.ones(n, dtype=bool) if self._start_awake is None \
            else self._start_awake.copy()
        self.holder = np.full(n, -1, dtype=np.int64)
        self.at = np.zeros((n, 3))
        self._touched = np.zeros(n, dtype=bool)
        self._slot = np.zeros(n, dtype=np.int64)  # scratch: compact index of a piece
        self._stirred = True  # some piece may be awake (else step skips looking)
        self._lag = 0.0  # s: how far the loose pieces lag behind the steps taken
        self._fastest = math.inf  # m/s: the fastest awake piece after the last settle
        self._occupancy: np.ndarray | None = None  # see _occupied
        # The Verlet list: pairs (a, b), their reach, the loose pieces, where they were then.
        self._list: tuple[np.ndarray, np.ndarray, np.ndarray | float, np.ndarray,
                          np.ndarray] | None = None
        self._every_loose: bool | None = None  # see _all_loose
        self._flying = 0

    def _overlapping(self) -> np.ndarray:
        """(N,) bool: loose pieces overlapping another piece, a wall or an element."""
        out = np.zeros(self.size, dtype=bool)
        loose = np.flatnonzero(self.state == LOOSE)
        if not len(loose):
            return out
        grid = None if len(loose) ** 2 <= _BRUTE_FORCE else self._grid(loose)
        a, b = self._near(loose, loose, grid, np.ones(self.size, dtype=bool))
        gap = np.hypot(self.pos[b, 0] - self.pos[a, 0], self.pos[b, 1] - self.pos[a, 1])
        over = gap < self.radius[a] + self.radius[b] - SLOP
        out[a[over]] = True
        out[b[over]] = True
        x, y, r = self.pos[loose, 0], self.pos[loose, 1], self.radius[loose]
        out[loose] |= (x < r) | (x > self.length - r) | (y < r) | (y > self.width - r)
        for el in self.elements:
            depth, _, _ = circle_polygon(x, y, r, el)
            out[loose] |= depth > SLOP
        return out

    # --- what handling mechanisms do -------------------------------------------------------

    def wake(self, pieces: Sequence[int] | np.ndarray) -> None:
        """Let loose ``pieces`` move again (after their velocity was changed from outside)."""
        self.sync()
        idx = np.asarray(pieces, dtype=np.int64)
        self.awake[idx] = self.state[idx] == LOOSE
        self._stirred = True
        self._fastest = math.inf

    def take(self, piece: int, holder: int, at: tuple[float, float, float]) -> None:
        """Loose or flying ``piece`` is held by robot ``holder`` at robot-frame ``at`` (m)."""
        self.sync()
        state = int(self.state[piece])
        if state not in (LOOSE, FLIGHT):
            raise ValueError(f"piece {piece} is {('held', 'gone')[state == GONE]}, "
                             f"not loose")
        if state == FLIGHT:
            self._flying -= 1
        self._list = self._occupancy = self._every_loose = None
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
        self.sync()
        was_flying = self.state[piece] == FLIGHT
        self._list = self._occupancy = self._every_loose = None
        self.pos[piece] = position
        self.vel[piece] = velocity
        self.spin[piece] = spin
        rest = self.rest_z[piece]
        if self.pos[piece, 2] <= rest + _ON_CARPET and self.vel[piece, 2] <= 0.0:
            self.pos[piece, 2] = rest
            self.vel[piece, 2] = 0.0
            self.spin[piece] = 0.0
            self.state[piece] = LOOSE
            self.awake[piece] = True
            self._stirred = True
            self._fastest = math.inf
            self._flying -= int(was_flying)
            return False
        self.state[piece] = FLIGHT
        self.awake[piece] = False
        self._flying += int(not was_flying)
        return True

    def remove(self, piece: int) -> None:
        """``piece`` is gone (scored and removed), where it is."""
        self.sync()
        if self.state[piece] == FLIGHT:
            self._flying -= 1
        self._list = self._occupancy = self._every_loose = None
        self.state[piece] = GONE
        self.holder[piece] = -1
        self.vel[piece] = 0.0
        self.awake[piece] = False

    def loose_in(self, zone: np.ndarray, height: float) -> np.ndarray:
        """Ids of loose pieces (and flying ones with their centre below ``height`` m) whose
        footprint overlaps the convex CCW polygon ``zone`` ((k,2), field frame, m), nearest
        the zone's first edge first."""
        self.sync()
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

    def step(self, dt: float, robots: Sequence[Robot] = ()) -> tuple[Scored, np.ndarray]:
        """Advance every piece ``dt`` s and resolve their contacts with ``robots`` (whose
        bodies take the impulses). Returns the pieces that entered a goal (still in FLIGHT:
        the caller removes or returns them) and (R,) bool: which robots touched a piece."""
        scored = self._fly(dt) if self._flying else _NONE_SCORED
        if not self._stirred:
            self._lag = 0.0  # nothing moves: nothing is owed
        lag = self._lag + dt
        if self._stirred and lag < self.max_lag - 1e-12:
            # The carpet may wait: the robots meet the pieces where they are now.
            touched = self._robots_later(robots, lag)
            if touched is not None:
                if self._fastest * (lag + dt) <= self._travel:
                    self._lag = lag
                    return scored, touched
                self._catch_up(lag)
                return scored, touched
        if self._stirred:
            idx = self.awake.nonzero()[0]
            if len(idx):
                self._roll(idx, lag)
        self._lag = 0.0
        touched = self._robots(robots)
        self._settle()
        return scored, touched

    def sync(self) -> None:
        """Bring the loose pieces up to now (they may lag up to ``max_lag`` behind
        :meth:`step`); every method that reads or changes pieces calls it first."""
        if self._lag > 0.0:
            self._catch_up(self._lag)

    def _catch_up(self, lag: float) -> None:
        """The carpet's part of the steps the loose pieces owe: ``lag`` s of rolling, then
        piece-piece, wall and element contacts."""
        idx = self.awake.nonzero()[0]
        if len(idx):
            self._roll(idx, lag)
        self._lag = 0.0
        self._settle()

    def _settle(self) -> None:
        """Piece-piece, wall and element contacts of the awake pieces; those that neither
        move nor were touched fall asleep."""
        if self._stirred and np.count_nonzero(self.awake):
            self._pairs()
            idx = self.awake.nonzero()[0]
            self._bounds(idx)
            speed = np.abs(self._v[idx])
            moving = (speed > 0.0) | self._touched[idx]
            self.awake[idx] = moving
            self._stirred = bool(np.count_nonzero(moving))
            self._fastest = float(np.maximum.reduce(speed, initial=0.0))
            self._touched.fill(False)
            self._occupancy = None
        else:
            self._stirred = False
            self._fastest = 0.0

    def _each(self, values: np.ndarray, idx: np.ndarray) -> np.ndarray | float:
        """``values[idx]`` of a per-piece array (N,), or its one value when every piece is of
        one type: the same arithmetic where it broadcasts, one numpy call fewer."""
        return values.item(0) if self._one_type else values[idx]

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
        if len(down):
            self.sync()
            self._fastest = math.inf
        self.pos[down, 2] = self.rest_z[down]
        self.vel[down, 2] = 0.0
        self.spin[down] = 0.0
        self.state[down] = LOOSE
        self.awake[down] = True
        self._stirred = True
        self._occupancy = None
        if len(down):
            self._list = self._every_loose = None
        for piece in idx[out]:
            self.remove(int(piece))
        self._flying -= len(down)
        hit = goals >= 0
        return Scored(idx[hit], goals[hit])

    def _roll(self, idx: np.ndarray, dt: float) -> None:
        """Loose pieces ``idx`` decelerate on the carpet, exactly over ``dt`` (never reverse)."""
        v = self._v[idx]
        speed = np.abs(v)
        after = speed - self._each(self.decel, idx) * dt
        np.maximum(after, 0.0, out=after)
        ratio = np.maximum(speed, 1e-300)
        np.divide(1.0, ratio, out=ratio)
        ratio *= after  # the speed's ratio over the step
        travel = 1.0 + ratio
        travel *= 0.5 * dt  # travel over speed: the trapezoid's, or v/2a when it stops
        if np.count_nonzero(after) < len(after):
            travel = np.where(after > 0.0, travel,
                              speed * self._each(self._half_inv_decel, idx))
        self._p[idx] += v * travel
        v *= ratio
        self._v[idx] = v

    def _robots(self, robots: Sequence[Robot]) -> np.ndarray:
        """Contacts of each robot's outline with the loose pieces near it."""
        if not robots or not self.size:
            return np.zeros(len(robots), dtype=bool)
        poses = [robot.pose for robot in robots]
        if self._stirred:  # pieces move: every robot against every loose piece
            ks, idx = self._within(poses, self._rmax, robots)
        else:  # all asleep: the occupancy grid first, a robot away from them costs a few µs
            ks, idx = self._near_robots(
                poses, np.array([robot.reach for robot in robots]) + self._rmax)
        if not len(ks):
            return np.zeros(len(robots), dtype=bool)
        if len(ks) <= FEW_CONTACTS:
            return self._contacts_few(robots, poses, ks, idx)
        return self._contacts(robots, poses, ks, idx)

    def _robots_later(self, robots: Sequence[Robot], lag: float) -> np.ndarray | None:
        """Contacts of the robots with the loose pieces while those lag ``lag`` s behind: each
        piece is met where it is now (p + v·lag), and its stored position moved so that the
        lagging carpet step puts it where the contact sends it. None (nothing done) when more
        than ``FEW_CONTACTS`` pieces are near a robot."""
        if not robots or not self.size:
            return np.zeros(len(robots), dtype=bool)
        poses = [robot.pose for robot in robots]
        ks, idx = self._within(poses, self._rmax + self._fastest * lag, robots)
        if not len(ks):
            return np.zeros(len(robots), dtype=bool)
        if len(ks) > FEW_CONTACTS:
            return None
        return self._contacts_few(robots, poses, ks, idx, lag)

    def _within(self, poses: list[tuple[float, float, float]], extra: float,
                robots: Sequence[Robot]) -> tuple[np.ndarray, np.ndarray]:
        """(robot, piece) index pairs of loose pieces closer to the robots at ``poses`` than
        their reach plus ``extra`` (m), every piece looked at."""
        if len(robots) == 1:
            x, y, _ = poses[0]
            idx = (np.abs(self._p - complex(x, y)) < robots[0].reach + extra).nonzero()[0]
            if len(idx) and not self._all_loose():
                idx = idx[self.state[idx] == LOOSE]
            return np.zeros(len(idx), dtype=np.int64), idx
        reach = np.array([robot.reach for robot in robots]) + extra
        centres = np.array([complex(x, y) for x, y, _ in poses])
        # Row-major, as nonzero() of the (R, N) mask, at a third of its cost.
        ks, idx = np.divmod(np.flatnonzero(np.abs(self._p - centres[:, None]) < reach[:, None]),
                            self.size)
        if len(idx) and not self._all_loose():
            loose = (self.state[idx] == LOOSE).nonzero()[0]
            ks, idx = ks[loose], idx[loose]
        return ks, idx

    def _all_loose(self) -> bool:
        """Whether every piece is loose (kept until a piece changes state)."""
        if self._every_loose is None:
            self._every_loose = bool((self.state == LOOSE).all())
        return self._every_loose

    def _near_robots(self, poses: list[tuple[float, float, float]], reach: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(robot, piece) index pairs of loose pieces within ``reach`` of the robots at
        ``poses`` (all pieces asleep: looked up in the occupancy grid first)."""
        occupied = self._occupied()
        cell, (cols, rows) = self._occupancy_cell, occupied.shape
        found: list[tuple[int, np.ndarray]] = []
        loose: np.ndarray | None = None
        for k, ((x, y, _), reach_k) in enumerate(zip(poses, reach.tolist(),
                                                     strict=True)):
            i0, i1 = max(int((x - reach_k) / cell), 0), min(int((x + reach_k) / cell), cols - 1)
            j0, j1 = max(int((y - reach_k) / cell), 0), min(int((y + reach_k) / cell), rows - 1)
            if i0 > i1 or j0 > j1 or not occupied[i0:i1 + 1, j0:j1 + 1].any():
                continue
            if loose is None:
                loose = self.state == LOOSE
            ox, oy = self.pos[:, 0] - x, self.pos[:, 1] - y
            idx = np.flatnonzero((ox * ox + oy * oy < reach_k * reach_k) & loose)
            if len(idx):
                found.append((k, idx))
        if not found:
            return _NO_PIECES, _NO_PIECES
        return (np.concatenate([np.full(len(idx), k) for k, idx in found]),
                np.concatenate([idx for _, idx in found]))

    def _occupied(self) -> np.ndarray:
        """Cells (at least ``_OCCUPANCY_CELL`` m, a footprint's width) that a loose piece's
        footprint reaches, (cols, rows) bool; rebuilt after pieces moved."""
        if self._occupancy is not None:
            return self._occupancy
        cell = self._occupancy_cell
        cols, rows = int(self.length / cell) + 1, int(self.width / cell) + 1
        occupied = np.zeros((cols, rows), dtype=bool)
        loose = self.state == LOOSE
        x, y, r = self.pos[loose, 0], self.pos[loose, 1], self.radius[loose]
        for sx, sy in ((-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)):
            occupied[np.clip(((x + sx * r) / cell).astype(np.int64), 0, cols - 1),
                     np.clip(((y + sy * r) / cell).astype(np.int64), 0, rows - 1)] = True
        self._occupancy = occupied
        return occupied

    def _contacts(self, robots: Sequence[Robot], poses: list[tuple[float, float, float]],
                  ks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Resolve the (robot ``ks``, piece ``idx``) pairs near each other, all at once; the
        robots' bodies take their impulses. Returns (R,) bool: which robots touched."""
        n_robots = len(robots)
        touched = np.zeros(n_robots, dtype=bool)
        outlines = _robot_edges(tuple(robot.polygon for robot in robots))
        if outlines is None:  # outlines of different corner counts: one robot at a time
            for k in np.unique(ks).tolist():
                mine = ks == k
                touched[k] = self._contacts([robots[k]], poses[k:k + 1],
                                            np.zeros(int(mine.sum()), np.int64), idx[mine])[0]
            return touched
        at = np.array(poses).reshape(-1, 3)
        c, s = np.cos(at[:, 2])[ks], np.sin(at[:, 2])[ks]
        dx, dy = self.pos[idx, 0] - at[ks, 0], self.pos[idx, 1] - at[ks, 1]
        r = self.radius[idx]
        # In each robot's frame, against its outline.
        depth, lx, ly = circle_polygon(dx * c + dy * s, dy * c - dx * s, r,
                                       Edges(*(a[ks] for a in outlines)))
        hit = depth > SLOP
        if not hit.any():
            return touched
        ks, idx, depth, r, c, s = ks[hit], idx[hit], depth[hit], r[hit], c[hit], s[hit]
        nx, ny = lx[hit] * c - ly[hit] * s, lx[hit] * s + ly[hit] * c
        dx, dy = dx[hit], dy[hit]
        used = np.unique(ks).tolist()
        bodies = {k: robots[k].body() for k in used}
        state = np.zeros((5, n_robots))  # x, y, vx, vy, omega of the robots touched
        inv_big, inv_j = np.ones(n_robots), np.ones(n_robots)
        for k, b in bodies.items():
            state[:, k] = (b.x, b.y, b.vx, b.vy, b.omega)
            inv_big[k], inv_j[k] = 1.0 / robots[k].mass, 1.0 / robots[k].inertia
        n = self.size
        inv_m = self.inv_mass[idx]
        # Push apart first, so that the impulses act where the bodies end the step.
        share = inv_m / (inv_m + inv_big[ks])
        push_x, push_y = depth * share * nx, depth * share * ny
        back_x = np.bincount(ks, depth * nx - push_x, n_robots)  # the robots' part
        back_y = np.bincount(ks, depth * ny - push_y, n_robots)
        state[0] -= back_x
        state[1] -= back_y
        alone = len(used) == 1  # one robot: each piece once (else a piece may meet two)
        if alone:
            self.pos[idx, 0] += push_x
            self.pos[idx, 1] += push_y
        else:
            self.pos[:, 0] += np.bincount(idx, push_x, n)
            self.pos[:, 1] += np.bincount(idx, push_y, n)
        # Lever arm of the contact from the robot's new centre (any point on the line
        # through the piece's centre along n).
        ax = dx + push_x + back_x[ks] - r * nx
        ay = dy + push_y + back_y[ks] - r * ny
        arm = ax * ny - ay * nx
        omega = state[4, ks]
        un = ((self.vel[idx, 0] - (state[2, ks] - omega * ay)) * nx
              + (self.vel[idx, 1] - (state[3, ks] + omega * ax)) * ny)
        e = np.where(un < -RESTING_SPEED, self.restitution[idx], 0.0)
        j = np.where(un < 0.0, -(1.0 + e) * un / (inv_m + inv_big[ks] + arm * arm * inv_j[ks]),
                     0.0)
        jx, jy = j * nx, j * ny
        if alone:
            self.vel[idx, 0] += jx * inv_m
            self.vel[idx, 1] += jy * inv_m
        else:
            self.vel[:, 0] += np.bincount(idx, jx * inv_m, n)
            self.vel[:, 1] += np.bincount(idx, jy * inv_m, n)
        state[2] -= np.bincount(ks, jx, n_robots) * inv_big
        state[3] -= np.bincount(ks, jy, n_robots) * inv_big
        state[4] -= np.bincount(ks, j * arm, n_robots) * inv_j
        for k, b in bodies.items():
            b.x, b.y, b.vx, b.vy, b.omega = state[:, k].tolist()
            robots[k].set_body(b)
            touched[k] = True
        self.awake[idx] = True
        self._stirred = True
        self._touched[idx] = True
        return touched

    def _contacts_few(self, robots: Sequence[Robot], poses: list[tuple[float, float, float]],
                      ks: np.ndarray, idx: np.ndarray, lag: float = 0.0) -> np.ndarray:
        """:meth:`_contacts` in plain floats, for a few (robot, piece) pairs; with the pieces
        ``lag`` s behind (see :meth:`_robots_later`)."""
        touched = np.zeros(len(robots), dtype=bool)
        # Per robot: x, y, cos, sin of its heading, its outline and the outline's box.
        frames: dict[int, tuple[float, float, float, float, FloatOutline,
                                tuple[float, float, float, float]]] = {}
        hits = []
        at, radius, speed = self._p.item, self._radius_f, self._v.item
        for k, i in zip(ks.tolist(), idx.tolist(), strict=True):
            frame = frames.get(k)
            if frame is None:
                x, y, heading = poses[k]
                outline = _float_outline(robots[k].polygon)
                frame = frames[k] = (x, y, math.cos(heading), math.sin(heading), outline,
                                     outline[0])
            x, y, c, s, outline, (x0, y0, x1, y1) = frame
            z, r = at(i), radius[i]
            if lag:
                z += lag * speed(i)
            dx, dy = z.real - x, z.imag - y
            lx, ly = dx * c + dy * s, dy * c - dx * s
            if lx + r < x0 or lx - r > x1 or ly + r < y0 or ly - r > y1:
                continue  # clear of the outline's box: circle_outline's first test, inline
            found = circle_outline(lx, ly, r, outline)
            if found is not None and found[0] > SLOP:
                depth, lx, ly = found
                hits.append((k, i, depth, lx * c - ly * s, lx * s + ly * c, dx, dy, r))
        if not hits:
            return touched
        used = sorted({hit[0] for hit in hits})
        bodies = {k: robots[k].body() for k in used}
        state = {k: [b.x, b.y, b.vx, b.vy, b.omega] for k, b in bodies.items()}
        inv_big = {k: 1.0 / robots[k].mass for k in used}
        inv_j = {k: 1.0 / robots[k].inertia for k in used}
        ids = [hit[1] for hit in hits]
        inv_mass = [self._inv_mass_f[i] for i in ids]
        restitution = [self._restitution_f[i] for i in ids]
        vel = [(z.real, z.imag) for z in map(self._v.item, ids)]
        # Push apart first, so that the impulses act where the bodies end the step.
        back = {k: [0.0, 0.0] for k in used}
        pushes = []
        for (k, _, depth, nx, ny, _, _, _), inv_m in zip(hits, inv_mass, strict=True):
            share = inv_m / (inv_m + inv_big[k])
            push_x, push_y = depth * share * nx, depth * share * ny
            back[k][0] += depth * nx - push_x
            back[k][1] += depth * ny - push_y
            pushes.append((push_x, push_y))
        for k in used:
            state[k][0] -= back[k][0]
            state[k][1] -= back[k][1]
        moves: dict[int, list[float]] = {}
        gains: dict[int, list[float]] = {}
        spent = {k: [0.0, 0.0, 0.0] for k in used}  # the robots' jx, jy, j·arm
        for (k, i, _, nx, ny, dx, dy, r), (push_x, push_y), inv_m, e_piece, (vx, vy) in zip(
                hits, pushes, inv_mass, restitution, vel, strict=True):
            move = moves.setdefault(i, [0.0, 0.0])
            move[0] += push_x
            move[1] += push_y
            ax = dx + push_x + back[k][0] - r * nx
            ay = dy + push_y + back[k][1] - r * ny
            arm = ax * ny - ay * nx
            _, _, rvx, rvy, omega = state[k]
            un = (vx - (rvx - omega * ay)) * nx + (vy - (rvy + omega * ax)) * ny
            e = e_piece if un < -RESTING_SPEED else 0.0
            j = -(1.0 + e) * un / (inv_m + inv_big[k] + arm * arm * inv_j[k]) \
                if un < 0.0 else 0.0
            jx, jy = j * nx, j * ny
            gain = gains.setdefault(i, [0.0, 0.0])
            gain[0] += jx * inv_m
            gain[1] += jy * inv_m
            spent[k][0] += jx
            spent[k][1] += jy
            spent[k][2] += j * arm
        awake, pieces_touched = self.awake, self._touched
        for i, move in moves.items():
            dv = complex(*gains[i])
            self._p[i] += complex(*move) - lag * dv if lag else complex(*move)
            self._v[i] += dv
            awake[i] = pieces_touched[i] = True
            if lag:
                self._fastest = max(self._fastest, abs(self._v.item(i)))
        for k, b in bodies.items():
            x, y, vx, vy, omega = state[k]
            b.x, b.y = x, y
            b.vx = vx - spent[k][0] * inv_big[k]
            b.vy = vy - spent[k][1] * inv_big[k]
            b.omega = omega - spent[k][2] * inv_j[k]
            robots[k].set_body(b)
            touched[k] = True
        self._stirred = True
        return touched

    def _pairs(self) -> None:
        """Piece-piece contacts of the awake pieces with every loose piece, and of the
        sleeping pieces they touch with theirs (a push passes through two layers)."""
        a, b, reach = self._candidates()
        awake = self.awake
        awake_a, awake_b = awake[a], awake[b]
        act = (awake_a | awake_b).nonzero()[0]
        if not len(act):
            return
        pa, pb = a[act], b[act]
        reach_act = reach if isinstance(reach, float) else reach[act]
        gap = np.abs(self._p[pb] - self._p[pa])
        touching = gap < reach_act + SLOP
        if not np.count_nonzero(touching):
            return
        # Sleeping pieces an awake one touches may be pushed into their own neighbours.
        pressed = act[touching & (awake_a[act] != awake_b[act])]
        if len(pressed):
            ring = np.zeros(self.size, dtype=bool)
            ring[np.where(awake_a[pressed], b[pressed], a[pressed])] = True
            more = ((ring[a] & ~awake_b) | (ring[b] & ~awake_a)).nonzero()[0]
            pa, pb = np.concatenate((pa, a[more])), np.concatenate((pb, b[more]))
            if not isinstance(reach, float):
                reach_act = np.concatenate((reach_act, reach[more]))
            gap = np.concatenate((gap, np.abs(self._p[b[more]] - self._p[a[more]])))
        a, b, reach = pa, pb, reach_act
        # The pairs this step acts on: those touching, and those the corrections may push
        # together (a piece moves about as far as the deepest overlap).
        over = reach - gap
        near = (over > -(SLOP + 2.0 * max(float(np.maximum.reduce(over)), 0.0))).nonzero()[0]
        if len(near) <= FEW_PAIRS:
            self._pairs_few(*_movable(a[near].tolist(), b[near].tolist(),
                                      over[near].tolist()))
            return
        # Solve on compact copies of the pieces involved.
        involved = np.zeros(self.size, dtype=bool)
        involved[a] = True
        involved[b] = True
        ids = np.flatnonzero(involved)
        slot = self._slot
        slot[ids] = np.arange(len(ids))
        ia, ib = slot[a], slot[b]
        pos, vel = self.pos[ids, :2], self.vel[ids, :2]
        inv_mass, radius = self.inv_mass[ids], self.radius[ids]
        reach = radius[ia] + radius[ib]
        hit = self._impulses(ia, ib, reach, pos, vel, inv_mass, self.restitution[ids])
        hit |= self._separate(ia, ib, reach, pos, inv_mass)
        self.pos[ids, :2] = pos
        self.vel[ids, :2] = vel
        moved = ids[hit]
        self.awake[moved] = True
        self._touched[moved] = True

    def _pairs_few(self, a: list[int], b: list[int]) -> None:
        """Piece-piece pairs (a, b) solved as in :meth:`_pairs`, in plain floats."""
        ids = sorted({*a, *b})
        slot = {piece: i for i, piece in enumerate(ids)}
        ia, ib = [slot[p] for p in a], [slot[p] for p in b]
        pos = [[z.real, z.imag] for z in map(self._p.item, ids)]
        vel = [[z.real, z.imag] for z in map(self._v.item, ids)]
        inv_mass = [self._inv_mass_f[i] for i in ids]
        restitution = [self._restitution_f[i] for i in ids]
        radius = [self._radius_f[i] for i in ids]
        reach = [radius[i] + radius[j] for i, j in zip(ia, ib, strict=True)]
        hit = pair_impulses(ia, ib, reach, pos, vel, inv_mass, restitution, IMPULSE_PASSES,
                            SLOP, RESTING_SPEED)
        hit |= pair_separate(ia, ib, reach, pos, inv_mass, CORRECTION_PASSES, SLOP)
        awake, touched = self.awake, self._touched
        for i in sorted(hit):
            piece = ids[i]
            self._p[piece] = complex(*pos[i])
            self._v[piece] = complex(*vel[i])
            awake[piece] = touched[piece] = True

    def _candidates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
        """Pairs (a, b) of loose pieces closer than their radii plus ``SKIN`` and their
        radii's sum (m; one float when every piece is of one type), kept (a Verlet list)
        until a loose piece has moved ``SKIN``/2 since, or pieces came or left the carpet."""
        built = self._list
        if built is not None:
            a, b, reach, members, at = built
            now = self._p if len(members) == self.size else self._p[members]
            if float(np.maximum.reduce(np.abs(now - at), initial=0.0)) * 2.0 < SKIN:
                return a, b, reach
        loose = (self.state == LOOSE).nonzero()[0]
        a, b = self._all_pairs(loose)
        reach = 2.0 * self.radius.item(0) if self._one_type \
            else self.radius[a] + self.radius[b]
        self._list = (a, b, reach, loose, self._p[loose])
        return a, b, reach

    def _cells(self, pieces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column and row of ``pieces`` in the grid of cells ``_cell`` m wide (offset by 2)."""
        z = self._p[pieces] * (1.0 / self._cell)
        return np.floor(z.real).astype(np.int64) + 2, np.floor(z.imag).astype(np.int64) + 2

    def _grid(self, loose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The uniform grid of the loose pieces: sorted cell keys and their pieces."""
        ix, iy = self._cells(loose)
        keys = ix * self._rows + iy
        order = np.argsort(keys, kind="stable")
        return keys[order], loose[order]

    def _all_pairs(self, loose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every pair (a, b) of the ``loose`` pieces closer than their radii plus ``SKIN``,
        once. From the grid, each piece against the later ones of its own cell and of the
        next cell up (y), and the three cells of the next column (x): half the stencil."""
        if len(loose) ** 2 <= _BRUTE_FORCE:
            return self._near(loose, loose, None, self._everyone)
        skeys, members = self._grid(loose)
        rows = self._rows
        starts = np.concatenate((np.arange(1, len(skeys) + 1),
                                 np.searchsorted(skeys, skeys + (rows - 1), side="left")))
        stops = np.concatenate((np.searchsorted(skeys, skeys + 1, side="right"),
                                np.searchsorted(skeys, skeys + (rows + 1), side="right")))
        counts = stops - starts
        ends = np.cumsum(counts)
        b = members[np.repeat(starts - (ends - counts), counts) + np.arange(int(ends[-1]))]
        a = np.repeat(np.concatenate((members, members)), counts)
        reach = 2.0 * self.radius.item(0) if self._one_type \
            else self.radius[a] + self.radius[b]
        close = (np.abs(self._p[b] - self._p[a]) < reach + SKIN).nonzero()[0]
        return a[close], b[close]

    def _near(self, active: np.ndarray, loose: np.ndarray,
              grid: tuple[np.ndarray, np.ndarray] | None, mask: np.ndarray,
              skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (a in ``active``, b loose) closer than their radii plus ``SKIN``, from the
        grid (sorted cell keys, their pieces) or, without one, all against all; each pair
        once (``mask``: ``active`` as a mask; b in ``skip`` left out)."""
        if grid is None:
            a = np.repeat(active, len(loose))
            b = np.tile(loose, len(active))
        else:
            skeys, members = grid
            ax, ay = self._cells(active)
            base = (ax[:, None] + _NEIGHBOUR_ROWS) * self._rows + ay[:, None]
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
        reach = self.radius[a] + self.radius[b] + SKIN
        close = dx * dx + dy * dy < reach * reach
        return a[close], b[close]

    @staticmethod
    def _impulses(a: np.ndarray, b: np.ndarray, reach: np.ndarray, pos: np.ndarray,
                  vel: np.ndarray, inv_mass: np.ndarray, restitution: np.ndarray
                  ) -> np.ndarray:
        """Frictionless impulses between touching, approaching pairs (a, b) of the compact
        arrays: a Jacobi pass with restitution, then passes that stop what still approaches
        (a push travels through a row of pieces). Returns which pieces took an impulse."""
        m = len(pos)
        hit = np.zeros(m, dtype=bool)
        dx, dy = pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1]
        dist = np.sqrt(dx * dx + dy * dy)
        touching = (dist < reach + SLOP) & (dist > 0.0)
        if not touching.any():
            return hit
        a, b, dist = a[touching], b[touching], dist[touching]
        nx, ny = dx[touching] / dist, dy[touching] / dist
        k = 1.0 / (inv_mass[a] + inv_mass[b])
        elastic = np.sqrt(restitution[a] * restitution[b])
        for first in (True,) + (False,) * (IMPULSE_PASSES - 1):
            un = (vel[b, 0] - vel[a, 0]) * nx + (vel[b, 1] - vel[a, 1]) * ny
            approach = un < 0.0
            if not approach.any():
                break
            e = np.where(un < -RESTING_SPEED, elastic, 0.0) if first else 0.0
            j = np.where(approach, -(1.0 + e) * un * k, 0.0)
            jx, jy = j * nx, j * ny
            vel[:, 0] += (np.bincount(b, jx, m) - np.bincount(a, jx, m)) * inv_mass
            vel[:, 1] += (np.bincount(b, jy, m) - np.bincount(a, jy, m)) * inv_mass
            hit[a[approach]] = True
            hit[b[approach]] = True
        return hit

    @staticmethod
    def _separate(a: np.ndarray, b: np.ndarray, reach: np.ndarray, pos: np.ndarray,
                  inv_mass: np.ndarray) -> np.ndarray:
        """Move overlapping pairs (a, b) of the compact arrays apart, split by inverse mass;
        Jacobi passes, each piece moved by the mean of its pairs' pushes (stable for a piece
        squeezed from several sides; an isolated pair separates in one pass). Returns which
        pieces moved."""
        m = len(pos)
        moved = np.zeros(m, dtype=bool)
        wa = inv_mass[a] / (inv_mass[a] + inv_mass[b])
        wb = 1.0 - wa
        for _ in range(CORRECTION_PASSES):
            dx, dy = pos[b, 0] - pos[a, 0], pos[b, 1] - pos[a, 1]
            dist = np.sqrt(dx * dx + dy * dy)
            over = reach - dist
            hit = over > SLOP
            if not hit.any():
                break
            apart = dist > 0.0  # coincident centres part along x
            scale = np.where(hit, over / np.where(apart, dist, 1.0), 0.0)
            px = np.where(apart, dx * scale, over * hit)
            py = dy * scale
            share = np.maximum(np.bincount(a, hit, m) + np.bincount(b, hit, m), 1.0)
            pos[:, 0] += (np.bincount(b, px * wb, m) - np.bincount(a, px * wa, m)) / share
            pos[:, 1] += (np.bincount(b, py * wb, m) - np.bincount(a, py * wa, m)) / share
            moved[a[hit]] = True
            moved[b[hit]] = True
        return moved

    def _bounds(self, idx: np.ndarray) -> None:
        """Walls and field elements against pieces ``idx``: pushed out, bounced."""
        raster = self._edge_cells
        z = self._p[idx] * (1.0 / _EDGE_CELL)
        cells = np.ravel_multi_index((z.real.astype(np.intp), z.imag.astype(np.intp)),
                                     raster.shape, mode="clip")  # outside: the edge's cell
        codes = raster.ravel().take(cells)
        near = codes.nonzero()[0]
        if not len(near):
            return
        idx = idx[near]
        if len(idx) <= FEW_BOUNDS:
            self._bounds_few(idx.tolist(), codes[near].tolist())
            return
        pos, r = self.pos[idx, :2], self.radius[idx]
        x, y = pos[:, 0], pos[:, 1]
        out = (x < r) | (x > self.length - r) | (y < r) | (y > self.width - r)
        if out.any():
            self._walls(idx[out])
        if not self.elements:
            return
        lo, hi = self._element_box
        near = ((x[:, None] > lo[0] - r[:, None]) & (x[:, None] < hi[0] + r[:, None])
                & (y[:, None] > lo[1] - r[:, None]) & (y[:, None] < hi[1] + r[:, None]))
        if not near.any():
            return
        for el in np.flatnonzero(near.any(axis=0)).tolist():
            self._element(idx[near[:, el]], self.elements[el])

    def _bounds_few(self, ids: list[int], codes: list[int]) -> None:
        """:meth:`_bounds` in plain floats for pieces ``ids`` near the walls (bit 0 of their
        ``codes``) or elements (the other bits, as in :meth:`_raster_of_edges`)."""
        length, width = self.length, self.width
        for i, code in zip(ids, codes, strict=True):
            z, v, r, e = self._p.item(i), self._v.item(i), self._radius_f[i], \
                self._restitution_f[i]
            x, y, vx, vy = z.real, z.imag, v.real, v.imag
            hit = False
            if code & 1 and (x < r or x > length - r or y < r or y > width - r):
                hit = True
                x, vx = _wall(x, vx, r, length - r, e)
                y, vy = _wall(y, vy, r, width - r, e)
            for el in _bits(code >> 1, len(self.elements)):
                found = circle_outline(x, y, r, self._element_outlines[el])
                if found is None or not found[0] > SLOP:
                    continue
                hit = True
                depth, nx, ny = found
                x += depth * nx
                y += depth * ny
                un = vx * nx + vy * ny
                bounce = (1.0 + (e if un < -RESTING_SPEED else 0.0)) * un if un < 0.0 else 0.0
                vx -= bounce * nx
                vy -= bounce * ny
            if hit:
                self._p[i] = complex(x, y)
                self._v[i] = complex(vx, vy)
                self._touched[i] = True

    def _walls(self, idx: np.ndarray) -> None:
        """Pieces ``idx`` at or beyond a wall: back inside, bounced."""
        r, e = self.radius[idx], self.restitution[idx]
        for axis, top in ((0, self.length), (1, self.width)):
            p, v = self.pos[idx, axis], self.vel[idx, axis]
            low, high = p < r, p > top - r
            back = (low & (v < 0.0)) | (high & (v > 0.0))
            self.pos[idx, axis] = np.clip(p, r, top - r)
            self.vel[idx, axis] = np.where(
                back, -np.where(np.abs(v) > RESTING_SPEED, e, 0.0) * v, v)
        self._touched[idx] = True

    def _element(self, idx: np.ndarray, el: Edges) -> None:
        """Pieces ``idx`` near element ``el``: pushed out, bounced."""
        depth, nx, ny = circle_polygon(self.pos[idx, 0], self.pos[idx, 1], self.radius[idx],
                                       el)
        hit = depth > SLOP
        if not hit.any():
            return
        idx, depth, nx, ny = idx[hit], depth[hit], nx[hit], ny[hit]
        self.pos[idx, 0] += depth * nx
        self.pos[idx, 1] += depth * ny
        vel = self.vel[idx, :2]
        un = vel[:, 0] * nx + vel[:, 1] * ny
        e = np.where(un < -RESTING_SPEED, self.restitution[idx], 0.0)
        bounce = np.where(un < 0.0, (1.0 + e) * un, 0.0)
        vel[:, 0] -= bounce * nx
        vel[:, 1] -= bounce * ny
        self.vel[idx, :2] = vel
        self._touched[idx] = True

    # --- what is seen ----------------------------------------------------------------------

    def visible(self) -> tuple[np.ndarray, np.ndarray]:
        """Loose and flying pieces, as cameras may see them: (ids (n,), field positions of
        their centres (n,3) m, a copy)."""
        self.sync()
        idx = np.flatnonzero((self.state == LOOSE) | (self.state == FLIGHT))
        return idx, self.pos[idx]

    def momentum(self) -> np.ndarray:
        """Total linear momentum of the loose and flying pieces, (3,) kg·m/s."""
        self.sync()
        moving = (self.state == LOOSE) | (self.state == FLIGHT)
        return (self.mass[moving, None] * self.vel[moving]).sum(axis=0)
