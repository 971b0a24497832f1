"""Plain-float kernels of :mod:`simserver.models.pieces.floor` for the few contacts of a step.

A robot driving through pieces touches one or two of them in a substep and the pieces touch
each other in one or two pairs: numpy's fixed cost per call (about a µs) then outweighs the
arithmetic many times. These functions do the same arithmetic as the array kernels of
:class:`~simserver.models.pieces.floor.PieceField` (same formulas, same order of the sums,
Jacobi passes alike) on Python floats and lists; ``PieceField`` picks them when a step has few
contacts (tests/pieces/test_floor.py checks both give the same result).

    outline = float_outline(edges(polygon))
    depth, nx, ny = circle_outline(0.4, 0.1, 0.075, outline)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FloatEdge = tuple[float, float, float, float, float, float, float]
"""One edge of a convex CCW polygon: start corner x, y; edge vector x, y; 1/|edge|²; outward
unit normal x, y (m, 1/m²)."""
FloatOutline = tuple[tuple[float, float, float, float], tuple[FloatEdge, ...]]
"""A convex CCW polygon as floats: its bounding box (x min, y min, x max, y max, m) and edges."""


def float_outline(vx: Sequence[float], vy: Sequence[float], ex: Sequence[float],
                  ey: Sequence[float], inv_len2: Sequence[float], fx: Sequence[float],
                  fy: Sequence[float]) -> FloatOutline:
    """The :data:`FloatOutline` of a polygon given as ``floor.Edges`` arrays."""
    corners = list(zip(vx, vy, strict=True))
    xs, ys = [float(x) for x, _ in corners], [float(y) for _, y in corners]
    rows = zip(vx, vy, ex, ey, inv_len2, fx, fy, strict=True)
    return ((min(xs), min(ys), max(xs), max(ys)),
            tuple(tuple(float(v) for v in row) for row in rows))  # type: ignore[misc]


def circle_outline(px: float, py: float, radius: float, outline: FloatOutline
                   ) -> tuple[float, float, float] | None:
    """One circle (centre m, radius m) against a convex polygon, as ``floor.circle_polygon``:
    (depth m, > 0 where they overlap; unit normal x, y from the polygon toward the centre);
    None when the circle clears the polygon's bounding box (no overlap)."""
    (x0, y0, x1, y1), edges = outline
    if px + radius < x0 or px - radius > x1 or py + radius < y0 or py - radius > y1:
        return None
    smax = -math.inf
    best = math.inf
    fx = fy = qx = qy = 0.0
    for vx, vy, ex, ey, inv_len2, nx, ny in edges:
        rx, ry = px - vx, py - vy
        sep = rx * nx + ry * ny
        if sep > smax:
            smax, fx, fy = sep, nx, ny
        t = (rx * ex + ry * ey) * inv_len2
        t = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
        dx, dy = rx - t * ex, ry - t * ey
        d2 = dx * dx + dy * dy
        if d2 < best:
            best, qx, qy = d2, dx, dy
    dist = math.sqrt(best)
    if smax > 0.0 and dist > 0.0:
        return radius - dist, qx / dist, qy / dist
    return radius - (dist if smax > 0.0 else smax), fx, fy


def pair_impulses(a: Sequence[int], b: Sequence[int], reach: Sequence[float],
                  pos: list[list[float]], vel: list[list[float]], inv_mass: Sequence[float],
                  restitution: Sequence[float], passes: int, slop: float,
                  resting_speed: float) -> set[int]:
    """``PieceField._impulses`` on lists: pairs (a, b) index ``pos`` and ``vel`` ((x, y) rows,
    m, m/s; ``vel`` updated in place). Returns which rows took an impulse."""
    m = len(pos)
    pairs = []
    for i, j, r in zip(a, b, reach, strict=True):
        dx, dy = pos[j][0] - pos[i][0], pos[j][1] - pos[i][1]
        dist = math.sqrt(dx * dx + dy * dy)
        if dist < r + slop and dist > 0.0:
            pairs.append((i, j, dx / dist, dy / dist, 1.0 / (inv_mass[i] + inv_mass[j]),
                          math.sqrt(restitution[i] * restitution[j])))
    hit: set[int] = set()
    active = pairs
    for n in range(passes):
        if not active:
            break
        gain_x, gain_y = [0.0] * m, [0.0] * m
        loss_x, loss_y = [0.0] * m, [0.0] * m
        changed: set[int] = set()
        for i, j, nx, ny, k, elastic in active:
            un = (vel[j][0] - vel[i][0]) * nx + (vel[j][1] - vel[i][1]) * ny
            if un < 0.0:
                e = elastic if n == 0 and un < -resting_speed else 0.0
                impulse = -(1.0 + e) * un * k
                jx, jy = impulse * nx, impulse * ny
                gain_x[j] += jx
                gain_y[j] += jy
                loss_x[i] += jx
                loss_y[i] += jy
                changed.add(i)
                changed.add(j)
        for q in changed:
            vel[q][0] += (gain_x[q] - loss_x[q]) * inv_mass[q]
            vel[q][1] += (gain_y[q] - loss_y[q]) * inv_mass[q]
        hit |= changed
        # Only pairs with a piece whose velocity changed can approach in the next pass.
        active = [pair for pair in pairs if pair[0] in changed or pair[1] in changed]
    return hit


def pair_separate(a: Sequence[int], b: Sequence[int], reach: Sequence[float],
                  pos: list[list[float]], inv_mass: Sequence[float], passes: int,
                  slop: float) -> set[int]:
    """``PieceField._separate`` on lists (``pos`` updated in place). Returns which rows
    moved."""
    m = len(pos)
    pairs = [(i, j, r, inv_mass[i] / (inv_mass[i] + inv_mass[j]))
             for i, j, r in zip(a, b, reach, strict=True)]
    moved: set[int] = set()
    active = pairs
    for _ in range(passes):
        if not active:
            break
        gain_x, gain_y = [0.0] * m, [0.0] * m
        loss_x, loss_y = [0.0] * m, [0.0] * m
        share = [0] * m
        changed: set[int] = set()
        for i, j, r, wa in active:
            dx, dy = pos[j][0] - pos[i][0], pos[j][1] - pos[i][1]
            dist = math.sqrt(dx * dx + dy * dy)
            over = r - dist
            if not over > slop:
                continue
            wb = 1.0 - wa
            if dist > 0.0:
                scale = over / dist
                px, py = dx * scale, dy * scale
            else:  # coincident centres part along x
                px, py = over, dy * over
            gain_x[j] += px * wb
            gain_y[j] += py * wb
            loss_x[i] += px * wa
            loss_y[i] += py * wa
            share[i] += 1
            share[j] += 1
            changed.add(i)
            changed.add(j)
        for q in changed:
            pos[q][0] += (gain_x[q] - loss_x[q]) / share[q]
            pos[q][1] += (gain_y[q] - loss_y[q]) / share[q]
        moved |= changed
        # Only pairs with a piece that moved can overlap in the next pass.
        active = [pair for pair in pairs if pair[0] in changed or pair[1] in changed]
    return moved
