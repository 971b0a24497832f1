"""Game pieces in flight: 3-D projectiles with gravity, air drag and spin lift that bounce off
the carpet, the field's walls and its elements, land, leave the field or enter goals.

    flight = Flight([fuel], goals, obstacles, field_size=(16.541, 8.069))
    events = flight.step(kind, pos, vel, spin, 0.005)   # rows of the flying pieces, in place
    events.landed        # now resting on the carpet (z = height / 2, vz = 0): LOOSE again
    events.scored        # goal index entered this step, -1 for none
    events.out           # left the field over a wall

Cost: benchmarks/flight.py (about 13 µs per 5 ms step for one piece in free flight: up to
``SCALAR_PIECES`` pieces are stepped in plain floats while nothing is within reach of them;
about 90 µs for 10-50 pieces on the array path, 0.2 ms for 200; a step with a contact costs
about 0.3 ms more).

The model, per piece (field frame, SI units):

- Forces: gravity; quadratic drag F = -½·ρ·Cd·A·|v|·v; Magnus lift
  F = ½·ρ·A·CL·|v|²·(ω̂ × v̂) with the lift coefficient proportional to the spin ratio,
  CL = k·r·|ω|/|v| (k: ``PieceType.lift_coefficient``, r: ``radius``), which makes the lift
  F = ½·ρ·A·k·r·(ω × v): linear in spin and velocity, and zero without spin. The spin ω
  (rad/s, field frame) is constant in the air (no spin decay); bounces change it.
- Integration: classic RK4 on (position, velocity) in steps of at most ``max_step`` (5 ms by
  default). RK4 is exact for constant acceleration, so without drag and lift the trajectory
  is the closed form to rounding. The carpet contact is located inside the step: the root of
  the cubic Hermite interpolant of the step's end states (exact for constant acceleration;
  Newton's method inside a bracket), then RK4 from the step's start to that instant. Walls,
  elements and goals are found along the step's chord (its straight segment; the path's sag
  from it is at most g·h²/8, 31 µm at 5 ms), so a fast piece never tunnels through a thin
  element or goal.
- Contacts: a piece is a disc of ``radius`` in plan and ``height`` tall (a sphere for
  spheres); against a face it bounces with an impulse: the normal velocity reverses, times the
  type's ``restitution`` e (so the normal kinetic energy keeps e²), and Coulomb friction with
  ``friction`` μ acts along the contact-point slip, at most until the slip stops. A sphere's
  contact point moves with its spin (v + ω × (−r·n)), and the friction impulse changes its
  spin as for a solid ball (I = ⅖·m·r²: a full stop of slip takes 2/7 of the slip speed).
  Other shapes slide without spin coupling.
- Landing: when a carpet bounce would rise less than ``LAND_HEIGHT`` (1 cm, a rebound
  below √(2·g·1 cm) ≈ 0.44 m/s) the piece lands: z = height / 2, vz = 0, keeping its
  horizontal velocity and spin for the floor model to roll or slide on.
- Walls: the field's rectangle; the alliance walls (x = 0 and x = length) are
  ``ALLIANCE_WALL_HEIGHT`` tall, the guardrails (y = 0 and y = width) ``GUARDRAIL_HEIGHT``.
  Each wall is an element (below) reaching from its line outward: a piece bounces off its
  face or off its top. A piece whose bottom is above a wall's top when its centre crosses
  the wall's line leaves the field (``out``).
- Elements: each ``Obstacle`` is a vertical prism from the carpet to its height; a piece hits a
  side face (the outline offset by the piece's radius; corners are not rounded) or the top
  (offset by half its height). A goal whose footprint lies on an element's top and reaches up
  to it is an opening in that top: pieces fall through it instead of bouncing. A piece that
  would come to rest on an element's or wall's top leaves it toward the nearest side (for a
  wall: back into the field) at least at ``SLIDE_OFF_SPEED`` (tops are not shelves in this
  model): it hops over that side (not one along the field's edge), in the air 1.2 times as
  long as it needs to pass it, and fast enough to pass it within 0.25 s. A piece leaves a
  side face at least at √(2·g·LAND_HEIGHT) (spin lift can press a piece against a wall;
  without this it would stay there). A piece found inside an element or wall (released
  there, or pushed in by another face at a corner) is put out through the nearest face and
  bounces, unless it is already moving out through it.
- Goals: a piece whose centre's path crosses into a goal's region scores (the goal's index in
  ``scored``); that piece's flight ends there. On a tie with a contact, the goal wins.
- A step handles at most ``MAX_EVENTS`` contacts per piece per RK4 step; the rest of that
  step is dropped for that piece (a piece wedged between faces). A piece whose state is not
  finite is reported ``out``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from simserver.models.obstacles import Obstacle
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import PieceType

GUARDRAIL_HEIGHT = 0.508
"""m: the guardrails along the field's long edges are 20.0 in tall (2026 manual §5.2)."""
ALLIANCE_WALL_HEIGHT = 1.98
"""m: the driver stations' top, 36.8 in of diamond plate under 42 in of transparent sheet
(78.8 in, 2.0 m; 2026 manual §5.9.1), taken as 1.98 m like simserver.field.elements."""
LAND_HEIGHT = 0.01
"""m: a carpet bounce that would rise less than this lands the piece."""
SLIDE_OFF_SPEED = 0.5
"""m/s: the least horizontal speed of a piece leaving an element's top it came to rest on."""
HOP_MARGIN, HOP_TIME, MAX_HOP_TIME = 1.2, 0.01, 0.25
"""A piece hopping off a top stays in the air HOP_MARGIN times the time its centre needs to
pass the nearest side, plus HOP_TIME s; it moves fast enough to pass it in MAX_HOP_TIME s."""
MAX_EVENTS = 8
"""Contacts handled per piece per RK4 step."""
SCALAR_PIECES = 12
"""Up to this many pieces in the air, each is stepped in plain floats while nothing is near
it (measured crossover with the array path: benchmarks/flight.py)."""

_GOAL, _CARPET, _OUT, _ELEMENT = range(4)
_INF = math.inf


class FlightEvents(NamedTuple):
    """What happened to each flying piece during one ``Flight.step`` (rows as given)."""

    landed: np.ndarray
    """(n,) bool: now on the carpet (z = height / 2, vz = 0), to roll or slide on as LOOSE."""
    scored: np.ndarray
    """(n,) int: index of the goal entered this step, -1 for none."""
    out: np.ndarray
    """(n,) bool: left the field over a wall (GONE)."""


class Flight:
    """Steps flying pieces; holds only the field and the piece types, no piece state.

    types: the piece types, indexed by ``kind``. goals: the regions pieces score in (index =
    ``FlightEvents.scored``). obstacles: the field elements pieces bounce off. field_size:
    (length, width) of the field, m. air_density: kg/m³ (1.204: dry air at 20 °C, sea level).
    gravity: m/s². wall_heights: (alliance walls at x = 0 and x = length, guardrails at y = 0
    and y = width), m. max_step: the longest RK4 step, s; a longer ``dt`` is split evenly.
    """

    def __init__(self, types: Sequence[PieceType], goals: Sequence[Goal],
                 obstacles: Sequence[Obstacle], field_size: tuple[float, float],
                 air_density: float = 1.204, gravity: float = 9.80665, *,
                 wall_heights: tuple[float, float] = (ALLIANCE_WALL_HEIGHT, GUARDRAIL_HEIGHT),
                 max_step: float = 0.005):
        if not types:
            raise ValueError("Flight needs at least one piece type")
        if not (air_density >= 0.0 and gravity > 0.0 and max_step > 0.0):
            raise ValueError("air_density must be >= 0, gravity and max_step > 0")
        self.types = tuple(types)
        self.goals = tuple(goals)
        self.obstacles = tuple(obstacles)
        self.length, self.width = (float(v) for v in field_size)
        self.gravity = float(gravity)
        self.max_step = float(max_step)
        self.wall_heights = np.array([wall_heights[0], wall_heights[0],
                                      wall_heights[1], wall_heights[1]], dtype=float)
        t = self.types
        self.radius = np.array([p.radius for p in t])
        self.half_height = np.array([p.height / 2.0 for p in t])
        self.restitution = np.array([p.restitution for p in t])
        self.friction = np.array([p.friction for p in t])
        self.sphere = np.array([p.shape == "sphere" for p in t])
        mass = np.array([p.mass for p in t])
        area = np.array([p.drag_area for p in t])
        self.drag = 0.5 * air_density * np.array([p.drag_coefficient for p in t]) * area / mass
        self.lift = (0.5 * air_density * area * np.array([p.lift_coefficient for p in t])
                     * self.radius / mass)
        self.land_speed = math.sqrt(2.0 * self.gravity * LAND_HEIGHT)
        self._build_elements()
        # The same as plain floats, for _glide.
        self._drag, self._lift = self.drag.tolist(), self.lift.tolist()
        self._radius, self._half_height = self.radius.tolist(), self.half_height.tolist()
        self._goal_boxes = [tuple(map(tuple, b)) for b in self._goal_box.tolist()]
        self._element_boxes = [tuple(map(tuple, b)) for b in self._element_box.tolist()]

    def _build_elements(self) -> None:
        """Face planes of every element and of the four walls (each wall: the half-space
        beyond its line, up to its height), padded to one face count: outward normals
        (J, K, 3), offsets (J, K); the last face of each is its top. Side faces grow with the
        piece's radius, tops with its half-height."""
        length, width = self.length, self.width
        walls = [(((1.0, 0.0),), (0.0,)), (((-1.0, 0.0),), (-length,)),
                 (((0.0, 1.0),), (0.0,)), (((0.0, -1.0),), (-width,))]
        sides: list[tuple[np.ndarray, np.ndarray]] = []
        for ob in self.obstacles:
            pts = np.asarray(ob.points, dtype=float)
            edges = np.roll(pts, -1, axis=0) - pts
            n = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
            n /= np.linalg.norm(n, axis=1, keepdims=True)
            sides.append((n, np.einsum("ij,ij->i", n, pts)))
        sides += [(np.array(n), np.array(d)) for n, d in walls]
        heights = [ob.height for ob in self.obstacles] + list(self.wall_heights)
        faces = max(len(d) for _, d in sides) + 1
        normals = np.zeros((len(sides), faces, 3))
        offsets = np.full((len(sides), faces), 1e18)
        for j, ((n, d), height) in enumerate(zip(sides, heights, strict=True)):
            normals[j, :len(d), :2] = n
            offsets[j, :len(d)] = d
            normals[j, -1] = (0.0, 0.0, 1.0)
            offsets[j, -1] = height
        self._openings = [[g for g, goal in enumerate(self.goals)
                           if goal.top >= height - 1e-6 and goal.bottom < height
                           and _inside_2d(n, d, goal.centre[:2])]
                          for (n, d), height in zip(sides, heights, strict=True)]
        is_top = np.zeros(faces, dtype=bool)
        is_top[-1] = True
        self._normals, self._offsets, self._is_top = normals, offsets, is_top
        # Bounding boxes (lowest, highest corner) of elements, walls and goals, for a quick
        # test of which ones a step's chord can reach.
        inf = _INF
        boxes = [((*np.min(ob.points, axis=0), -inf), (*np.max(ob.points, axis=0), ob.height))
                 for ob in self.obstacles]
        tall, low = self.wall_heights[0], self.wall_heights[2]
        boxes += [((-inf, -inf, -inf), (0.0, inf, tall)), ((length, -inf, -inf), (inf, inf, tall)),
                  ((-inf, -inf, -inf), (inf, 0.0, low)), ((-inf, width, -inf), (inf, inf, low))]
        self._element_box = np.array(boxes, dtype=float)  # (J, 2, 3)
        self._goal_box = np.array(
            [((*np.min(g.footprint, axis=0), g.bottom), (*np.max(g.footprint, axis=0), g.top))
             for g in self.goals], dtype=float).reshape(-1, 2, 3)
        # Sides a piece may hop off a top over: real sides, not those along the field's edge
        # (an element built against a wall).
        self._hop_sides = offsets[:, :-1] < 1e17
        for j, ob in enumerate(self.obstacles):
            pts = np.asarray(ob.points, dtype=float)
            ends = np.stack([pts, np.roll(pts, -1, axis=0)], axis=1)  # (K, 2 ends, 2)
            on_edge = np.zeros(len(pts), dtype=bool)
            for axis, line in ((0, 0.0), (0, length), (1, 0.0), (1, width)):
                on_edge |= np.all(np.abs(ends[:, :, axis] - line) < 0.01, axis=1)
            if not on_edge.all():
                self._hop_sides[j, :len(pts)] &= ~on_edge

    def step(self, kind: np.ndarray, pos: np.ndarray, vel: np.ndarray, spin: np.ndarray,
             dt: float) -> FlightEvents:
        """Advance the flying pieces given (rows of (n,3) float arrays, updated in place;
        kind: (n,) int index into types) by dt s."""
        kind = np.asarray(kind, dtype=np.intp)
        n = len(kind)
        landed = np.zeros(n, dtype=bool)
        scored = np.full(n, -1, dtype=np.intp)
        out = ~(np.isfinite(pos).all(axis=1) & np.isfinite(vel).all(axis=1)
                & np.isfinite(spin).all(axis=1))
        if n == 0 or not dt > 0.0:
            return FlightEvents(landed, scored, out)
        steps = max(1, math.ceil(dt / self.max_step - 1e-9))
        h = dt / steps
        flying = ~out
        if n <= SCALAR_PIECES:
            # Each piece in plain floats while nothing is within reach of it; from its first
            # step that may meet something, the array path below takes it over.
            left = np.zeros(n, dtype=np.intp)
            for i in np.flatnonzero(flying).tolist():
                left[i] = steps - self._glide(int(kind[i]), pos[i], vel[i], spin[i], h, steps)
            for remaining in np.unique(left[left > 0]).tolist():
                self._steps(left == remaining, remaining, kind, pos, vel, spin, h, landed,
                            scored, out)
        else:
            self._steps(flying, steps, kind, pos, vel, spin, h, landed, scored, out)
        return FlightEvents(landed, scored, out)

    def _steps(self, flying: np.ndarray, steps: int, kind: np.ndarray, pos: np.ndarray,
               vel: np.ndarray, spin: np.ndarray, h: float, landed: np.ndarray,
               scored: np.ndarray, out: np.ndarray) -> None:
        """``steps`` RK4 steps of h s of the pieces ``flying`` ((n,) bool) that still fly."""
        for _ in range(steps):
            rows = np.flatnonzero(flying)
            if rows.size == 0:
                break
            self._advance(rows, kind, pos, vel, spin, h, landed, scored, out)
            flying &= ~(landed | out | (scored >= 0))

    # --- one piece far from everything, in plain floats ------------------------------------------

    def _glide(self, k: int, pos: np.ndarray, vel: np.ndarray, spin: np.ndarray, h: float,
               steps: int) -> int:
        """Up to ``steps`` RK4 steps of h s of one piece of type k ((3,) rows, updated in
        place) as long as no contact can happen in them: the same arithmetic as
        :meth:`_rk4` and the same tests :meth:`_first_event` starts with (goal, element and
        wall boxes; carpet; field edges). Returns how many steps it took."""
        p0 = pos.tolist()
        v0 = vel.tolist()
        wx, wy, wz = spin.tolist()
        drag, lift = self._drag[k], self._lift[k]
        rad, hh = self._radius[k], self._half_height[k]
        turn = lift != 0.0 and (wx != 0.0 or wy != 0.0 or wz != 0.0)
        lx, ly, lz = lift * wx, lift * wy, lift * wz
        g = self.gravity
        sqrt = math.sqrt
        length, width = self.length, self.width
        goal_boxes, element_boxes = self._goal_boxes, self._element_boxes

        def accel(x: float, y: float, z: float) -> tuple[float, float, float]:
            d = drag * sqrt(x * x + y * y + z * z)
            ax, ay, az = 0.0 - d * x, 0.0 - d * y, -g - d * z
            if turn:
                ax += -lz * y + ly * z
                ay += lz * x - lx * z
                az += -ly * x + lx * y
            return ax, ay, az

        done = 0
        while done < steps:
            px, py, pz = p0
            vx, vy, vz = v0
            if pz - hh <= (abs(vz) + g * h) * h:
                break  # about to reach the carpet: the array path finds when
            a1x, a1y, a1z = accel(vx, vy, vz)
            half = 0.5 * h
            v2x, v2y, v2z = vx + half * a1x, vy + half * a1y, vz + half * a1z
            a2x, a2y, a2z = accel(v2x, v2y, v2z)
            v3x, v3y, v3z = vx + half * a2x, vy + half * a2y, vz + half * a2z
            a3x, a3y, a3z = accel(v3x, v3y, v3z)
            v4x, v4y, v4z = vx + h * a3x, vy + h * a3y, vz + h * a3z
            a4x, a4y, a4z = accel(v4x, v4y, v4z)
            sixth = h / 6.0
            qx = px + sixth * (vx + 2.0 * v2x + 2.0 * v3x + v4x)
            qy = py + sixth * (vy + 2.0 * v2y + 2.0 * v3y + v4y)
            qz = pz + sixth * (vz + 2.0 * v2z + 2.0 * v3z + v4z)
            if not (qx >= 0.0 and qx <= length and qy >= 0.0 and qy <= width):
                break  # leaving the field (or not finite)
            if (pz - hh <= 0.0 and vz <= 0.0) or (pz - hh > 0.0 and qz - hh <= 0.0):
                break  # on or reaching the carpet
            lo = (min(px, qx), min(py, qy), min(pz, qz))
            hi = (max(px, qx), max(py, qy), max(pz, qz))
            if any(_boxes_meet(lo, hi, box, 0.0, 0.0) for box in goal_boxes) \
                    or any(_boxes_meet(lo, hi, box, rad, hh) for box in element_boxes):
                break
            p0 = [qx, qy, qz]
            v0 = [vx + sixth * (a1x + 2.0 * a2x + 2.0 * a3x + a4x),
                  vy + sixth * (a1y + 2.0 * a2y + 2.0 * a3y + a4y),
                  vz + sixth * (a1z + 2.0 * a2z + 2.0 * a3z + a4z)]
            done += 1
        if done:
            pos[:] = p0
            vel[:] = v0
        return done

    # --- integration -------------------------------------------------------------------------

    def _rk4(self, p: np.ndarray, v: np.ndarray, w: np.ndarray, k: np.ndarray,
             h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One RK4 step of length h ((m, 1) s) from (p, v); returns the new (p, v)."""
        drag = self.drag[k][:, None]
        lift = self.lift[k]
        g = np.array([0.0, 0.0, -self.gravity])
        turn = None  # lift·(ω ×), as a matrix per row
        if lift.any() and w.any():
            turn = np.zeros((len(k), 3, 3))
            lw = lift[:, None] * w
            turn[:, 0, 1], turn[:, 0, 2] = -lw[:, 2], lw[:, 1]
            turn[:, 1, 0], turn[:, 1, 2] = lw[:, 2], -lw[:, 0]
            turn[:, 2, 0], turn[:, 2, 1] = -lw[:, 1], lw[:, 0]

        def accel(u: np.ndarray) -> np.ndarray:
            a = g - drag * np.sqrt(np.einsum("ij,ij->i", u, u))[:, None] * u
            return a if turn is None else a + np.einsum("mij,mj->mi", turn, u)

        a1 = accel(v)
        v2 = v + 0.5 * h * a1
        a2 = accel(v2)
        v3 = v + 0.5 * h * a2
        a3 = accel(v3)
        v4 = v + h * a3
        a4 = accel(v4)
        p_new = p + h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v_new = v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        return p_new, v_new

    def _advance(self, rows: np.ndarray, kind: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                 spin: np.ndarray, h: float, landed: np.ndarray, scored: np.ndarray,
                 out: np.ndarray) -> None:
        """Advance ``rows`` by h s, stopping at each contact within it to respond."""
        idx = rows
        rem = np.full(rows.size, h)
        for _ in range(MAX_EVENTS):
            k = kind[idx]
            p0, v0, w = pos[idx], vel[idx], spin[idx]
            p1, v1 = self._rk4(p0, v0, w, k, rem[:, None])
            times, what, which = self._first_event(k, p0, v0, p1, v1, rem)
            free = ~np.isfinite(times)
            pos[idx[free]] = p1[free]
            vel[idx[free]] = v1[free]
            hit = ~free
            if not hit.any():
                return
            sub, te = idx[hit], times[hit]
            pe, ve = self._rk4(p0[hit], v0[hit], w[hit], k[hit], te[:, None])
            pos[sub], vel[sub] = pe, ve
            ended = self._respond(sub, what[hit], which[hit], kind, pos, vel, spin,
                                  landed, scored, out)
            rem = rem[hit] - te
            keep = ~ended & (rem > 0.0)
            idx, rem = sub[keep], rem[keep]
            if idx.size == 0:
                return

    # --- finding the first contact -----------------------------------------------------------

    def _first_event(self, k: np.ndarray, p0: np.ndarray, v0: np.ndarray, p1: np.ndarray,
                     v1: np.ndarray, h: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Time into the step of each row's first contact (inf: none), its kind (_GOAL,
        _CARPET, _OUT, _ELEMENT) and (index, detail): the goal; the wall left over; the element
        (walls follow the field's elements) and its face."""
        m = len(k)
        times = np.full((m, 4), _INF)
        which = np.zeros((m, 4, 2), dtype=np.intp)
        low, high = np.minimum(p0, p1), np.maximum(p0, p1)
        if self.goals:
            near = np.flatnonzero(_overlap(low, high, self._goal_box).any(axis=1))
            if near.size:
                a, b = p0[near], p1[near]
                s = np.stack([g.entry_fraction(a, b) for g in self.goals], axis=1)
                goal = np.argmin(s, axis=1)
                which[near, _GOAL, 0] = goal
                times[near, _GOAL] = s[np.arange(near.size), goal] * h[near]
        times[:, _CARPET] = self._carpet_time(k, p0, v0, p1, v1, h)
        leaving = np.flatnonzero((p1[:, 0] < 0.0) | (p1[:, 0] > self.length)
                                 | (p1[:, 1] < 0.0) | (p1[:, 1] > self.width))
        if leaving.size:
            s_out, wall = self._out_fraction(k[leaving], p0[leaving], p1[leaving])
            times[leaving, _OUT] = s_out * h[leaving]
            which[leaving, _OUT, 0] = wall
        grow = np.column_stack([self.radius[k], self.radius[k], self.half_height[k]])
        near = np.flatnonzero(_overlap(low - grow, high + grow, self._element_box).any(axis=1))
        if near.size:
            s_el, element, face = self._element_fraction(k[near], p0[near], p1[near])
            times[near, _ELEMENT] = s_el * h[near]
            which[near, _ELEMENT, 0], which[near, _ELEMENT, 1] = element, face
        what = np.argmin(times, axis=1)
        rows = np.arange(m)
        return times[rows, what], what, which[rows, what]

    def _carpet_time(self, k: np.ndarray, p0: np.ndarray, v0: np.ndarray, p1: np.ndarray,
                     v1: np.ndarray, h: np.ndarray) -> np.ndarray:
        """When the piece's bottom reaches the carpet within the step, s (inf: not)."""
        hh = self.half_height[k]
        g0, g1 = p0[:, 2] - hh, p1[:, 2] - hh
        t = np.full(len(k), _INF)
        t[(g0 <= 0.0) & (v0[:, 2] <= 0.0)] = 0.0
        cross = (g0 > 0.0) & (g1 <= 0.0)
        if cross.any():
            t[cross] = _first_root(g0[cross], h[cross] * v0[cross, 2], g1[cross],
                                   h[cross] * v1[cross, 2]) * h[cross]
        return t

    def _out_fraction(self, k: np.ndarray, p0: np.ndarray, p1: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """Along the chord: fraction where the piece's centre crosses a wall's line with its
        bottom above the wall's top (inf: none), and which wall (0: x = 0, 1: x = length,
        2: y = 0, 3: y = width)."""
        c0 = np.stack([p0[:, 0], self.length - p0[:, 0], p0[:, 1], self.width - p0[:, 1]], 1)
        c1 = np.stack([p1[:, 0], self.length - p1[:, 0], p1[:, 1], self.width - p1[:, 1]], 1)
        s = _plane_fraction(c0, c1, np.zeros_like(c0))
        bottom = (p0[:, 2:3] + np.where(np.isfinite(s), s, 0.0) * (p1 - p0)[:, 2:3]
                  - self.half_height[k][:, None])
        s = np.where(bottom > self.wall_heights[None, :], s, _INF)
        wall = np.argmin(s, axis=1)
        return s[np.arange(len(k)), wall], wall

    def _element_fraction(self, k: np.ndarray, p0: np.ndarray, p1: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Along the chord: fraction of the first element or wall contact (inf: none), which
        one and which of its faces (the last: its top)."""
        grow = np.where(self._is_top[None, :], self.half_height[k][:, None],
                        self.radius[k][:, None])  # (m, K)
        offsets = self._offsets[None, :, :] + grow[:, None, :]  # (m, J, K)
        start = np.einsum("mc,jkc->mjk", p0, self._normals) - offsets
        rate = np.einsum("mc,jkc->mjk", p1 - p0, self._normals)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = -start / rate
        lower = np.where(rate < 0.0, s, -_INF)
        upper = np.where(rate > 0.0, s, _INF)
        face = np.argmax(lower, axis=2)  # (m, J)
        enter = np.take_along_axis(lower, face[:, :, None], axis=2)[:, :, 0]
        leave = np.minimum(np.min(upper, axis=2), 1.0)
        blocked = np.any((rate == 0.0) & (start > 0.0), axis=2)
        outside = np.any(start > 0.0, axis=2)
        hit = outside & ~blocked & (enter >= 0.0) & (enter <= leave)
        frac = np.where(hit, enter, _INF)
        # Inside (released there, or pushed in by another face): out through the nearest face,
        # unless already moving out through it.
        nearest = np.argmax(start, axis=2)
        inward = np.take_along_axis(rate, nearest[:, :, None], axis=2)[:, :, 0] <= 0.0
        inside = ~outside & inward
        frac = np.where(inside, 0.0, frac)
        face = np.where(inside, nearest, face)
        self._drop_openings(frac, face, p0, p1)
        element = np.argmin(frac, axis=1)
        rows = np.arange(len(k))
        return frac[rows, element], element, face[rows, element]

    def _drop_openings(self, frac: np.ndarray, face: np.ndarray, p0: np.ndarray,
                       p1: np.ndarray) -> None:
        """Forget top contacts that fall inside a goal opening in that top (in place)."""
        top = self._normals.shape[1] - 1
        for j, goals in enumerate(self._openings):
            if not goals:
                continue
            rows = np.flatnonzero(np.isfinite(frac[:, j]) & (face[:, j] == top))
            if rows.size == 0:
                continue
            at = p0[rows] + frac[rows, j][:, None] * (p1[rows] - p0[rows])
            for g in goals:
                goal = self.goals[g]
                flat = np.column_stack([at[:, :2], np.full(rows.size, goal.bottom)])
                frac[rows[goal.contains(flat)], j] = _INF

    # --- responses ---------------------------------------------------------------------------

    def _respond(self, sub: np.ndarray, what: np.ndarray, which: np.ndarray, kind: np.ndarray,
                 pos: np.ndarray, vel: np.ndarray, spin: np.ndarray, landed: np.ndarray,
                 scored: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Apply each contact; returns which of ``sub`` ended their flight."""
        ended = np.zeros(sub.size, dtype=bool)
        goal = what == _GOAL
        scored[sub[goal]] = which[goal, 0]
        ended |= goal
        leaves = what == _OUT
        out[sub[leaves]] = True
        ended |= leaves
        normal = np.zeros((sub.size, 3))
        k = kind[sub]
        carpet = what == _CARPET
        normal[carpet] = (0.0, 0.0, 1.0)
        pos[sub[carpet], 2] = self.half_height[k[carpet]]
        element = what == _ELEMENT
        if element.any():
            normal[element] = self._element_contact(sub[element], which[element], k[element],
                                                    pos)
        bounce = carpet | element
        if bounce.any():
            rows = sub[bounce]
            v, w = _bounce(vel[rows], spin[rows], normal[bounce], self.restitution[k[bounce]],
                           self.friction[k[bounce]], self.radius[k[bounce]],
                           self.sphere[k[bounce]])
            vel[rows], spin[rows] = v, w
        if carpet.any():
            rows = sub[carpet]
            rest = vel[rows, 2] < self.land_speed
            vel[rows[rest], 2] = 0.0
            landed[rows[rest]] = True
            ended[np.flatnonzero(carpet)[rest]] = True
        if element.any():
            side = np.flatnonzero(element)[which[element, 1] < self._normals.shape[1] - 1]
            rows = sub[side]
            rebound = np.einsum("ij,ij->i", vel[rows], normal[side])
            vel[rows] += np.maximum(self.land_speed - rebound, 0.0)[:, None] * normal[side]
            self._slide_off(sub[element], which[element], k[element], pos, vel)
        return ended

    def _element_contact(self, rows: np.ndarray, which: np.ndarray, k: np.ndarray,
                         pos: np.ndarray) -> np.ndarray:
        """Outward normals of the element faces hit; puts the pieces on those faces."""
        n = self._normals[which[:, 0], which[:, 1]]
        top = which[:, 1] == self._normals.shape[1] - 1
        grow = np.where(top, self.half_height[k], self.radius[k])
        d = self._offsets[which[:, 0], which[:, 1]] + grow
        pos[rows] += n * (d - np.einsum("ij,ij->i", pos[rows], n))[:, None]
        return n

    def _slide_off(self, rows: np.ndarray, which: np.ndarray, k: np.ndarray, pos: np.ndarray,
                   vel: np.ndarray) -> None:
        """Pieces come to rest on a top hop off it over its nearest side."""
        top = which[:, 1] == self._normals.shape[1] - 1
        resting = top & (vel[rows, 2] < self.land_speed)
        if not resting.any():
            return
        r, j = rows[resting], which[resting, 0]
        sides = self._normals[j, :-1]  # (m, K-1, 3)
        margin = np.einsum("mc,mkc->mk", pos[r], sides) - self._offsets[j, :-1]
        nearest = np.argmax(np.where(self._hop_sides[j], margin, -np.inf), axis=1)
        normal = sides[np.arange(r.size), nearest]
        # How far the centre is from leaving the top (its side face grown by the radius).
        distance = np.maximum(self.radius[k[resting]] - margin[np.arange(r.size), nearest], 0.0)
        speed = np.maximum.reduce([np.linalg.norm(vel[r, :2], axis=1),
                                   np.full(r.size, SLIDE_OFF_SPEED),
                                   HOP_MARGIN * distance / MAX_HOP_TIME])
        airborne = HOP_MARGIN * distance / speed + HOP_TIME
        vel[r, :2] = normal[:, :2] * speed[:, None]
        vel[r, 2] = 0.5 * self.gravity * airborne


def _boxes_meet(lo: tuple[float, ...], hi: tuple[float, ...],
                box: tuple[tuple[float, ...], ...], grow: float, grow_z: float) -> bool:
    """Whether the box lo..hi grown by ``grow`` in x, y and ``grow_z`` in z meets ``box``
    (lowest, highest corner): one row of :func:`_overlap`."""
    (bx0, by0, bz0), (bx1, by1, bz1) = box
    return (lo[0] - grow <= bx1 and hi[0] + grow >= bx0 and lo[1] - grow <= by1
            and hi[1] + grow >= by0 and lo[2] - grow_z <= bz1 and hi[2] + grow_z >= bz0)


def _first_root(a: np.ndarray, da: np.ndarray, b: np.ndarray, db: np.ndarray) -> np.ndarray:
    """Where in (0, 1] the cubic Hermite interpolant from value a, slope da (at 0) to b, db (at
    1) reaches zero, for a > 0 >= b: Newton's method from the secant's root, kept inside the
    bracket, to rounding (exact for a quadratic); bisection for any that do not settle."""
    def value(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s2 = s * s
        s3 = s2 * s
        f = (2 * s3 - 3 * s2 + 1) * a + (s3 - 2 * s2 + s) * da + (3 * s2 - 2 * s3) * b \
            + (s3 - s2) * db
        df = (6 * s2 - 6 * s) * (a - b) + (3 * s2 - 4 * s + 1) * da + (3 * s2 - 2 * s) * db
        return f, df

    lo, hi = np.zeros(a.size), np.ones(a.size)
    s = a / (a - b)
    moved = np.ones(a.size)
    for _ in range(8):
        f, df = value(s)
        lo = np.where(f > 0.0, s, lo)
        hi = np.where(f > 0.0, hi, s)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = s - f / df
        new = np.where((step >= lo) & (step <= hi), step, 0.5 * (lo + hi))
        moved, s = np.abs(new - s), new
        if (moved <= 1e-14).all():
            break
    loose = ~(moved <= 1e-14)
    if loose.any():  # Newton has not settled: finish inside its bracket by bisection
        a, da, b, db = a[loose], da[loose], b[loose], db[loose]
        low, high = lo[loose], hi[loose]
        for _ in range(60):
            mid = 0.5 * (low + high)
            above = value(mid)[0] > 0.0
            low = np.where(above, mid, low)
            high = np.where(above, high, mid)
        s[loose] = high
    return s


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (m, 3) arrays (np.cross costs several times more here)."""
    return a[:, [1, 2, 0]] * b[:, [2, 0, 1]] - a[:, [2, 0, 1]] * b[:, [1, 2, 0]]


def _overlap(low: np.ndarray, high: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(m, J) bool: which of the (m, 3) boxes low..high overlap which of the (J, 2, 3) boxes."""
    return np.all((low[:, None, :] <= boxes[None, :, 1, :])
                  & (high[:, None, :] >= boxes[None, :, 0, :]), axis=2)


def _plane_fraction(c0: np.ndarray, c1: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Fraction along each chord where the inside distance c goes from above ``at`` to at or
    below it (0 if it starts at or below and keeps falling); inf where it does not."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (c0 - at) / (c0 - c1)
    crossing = (c0 > at) & (c1 <= at)
    already = (c0 <= at) & (c1 < c0)
    return np.where(crossing, s, np.where(already, 0.0, _INF))


def _inside_2d(normals: np.ndarray, offsets: np.ndarray, point: Sequence[float]) -> bool:
    return bool(np.all(normals @ np.asarray(point, dtype=float) <= offsets))


def _bounce(v: np.ndarray, w: np.ndarray, n: np.ndarray, e: np.ndarray, mu: np.ndarray,
            r: np.ndarray, sphere: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Velocities and spins after an impulsive contact on faces with unit normals n (pointing
    away from the face), per unit mass; see the module docstring."""
    vn = np.einsum("ij,ij->i", v, n)
    jn = np.where(vn < 0.0, -(1.0 + e) * vn, 0.0)
    lever = -r[:, None] * n  # centre to contact point
    slip = v - vn[:, None] * n + np.where(sphere[:, None], _cross(w, lever), 0.0)
    slip_speed = np.linalg.norm(slip, axis=1)
    jt = np.minimum(mu * jn, np.where(sphere, 2.0 / 7.0, 1.0) * slip_speed)
    with np.errstate(divide="ignore", invalid="ignore"):
        along = np.where(slip_speed[:, None] > 0.0, slip / slip_speed[:, None], 0.0)
    impulse = jn[:, None] * n - jt[:, None] * along
    spin_change = np.where(sphere[:, None],
                           2.5 / (r * r)[:, None] * _cross(lever, -jt[:, None] * along), 0.0)
    return v + impulse, w + spin_change
