"""Rigid-body collisions between convex polygons: robot–field element and robot–robot.

Each robot is a planar rigid body (``walls.Body``: field-frame position m, heading rad,
velocity m/s, yaw rate rad/s) with mass m and yaw inertia J, whose outline (bumpers included) is
a convex polygon in its body frame. A step of the collision model does, for every overlapping
pair of polygons:

1. Narrow phase (separating axis theorem): the face normal of either polygon along which they
   overlap least gives the contact normal n and the penetration depth d. The edge of the other
   polygon most opposed to n (the incident edge) is clipped to the reference face's extent;
   its clipped ends that lie inside are the contact points (1 or 2).
2. Push-out: the bodies are moved apart along n by d in total, split by inverse mass
   (a static element does not move; two robots move in inverse proportion to their masses,
   so their centre of mass stays put).
3. Impulses at the contact points, as for the perimeter walls (``walls.py``):

       j_n = -(1 + e) u_n / K_n                normal, restitution e, K_n = 1/m_a + 1/m_b
                                               + (r_a × n)²/J_a + (r_b × n)²/J_b
       |j_t| ≤ μ j_n                           tangential (Coulomb friction)

   with u the relative velocity of the bodies at the contact point and r_a, r_b the contact
   point's offsets from the two centres. All contacts of an impact are solved together: first
   an inelastic, frictional compression. For one contact manifold (1 or 2 points sharing a
   normal, the usual case) it is solved exactly by trying the contact modes (each point pushing
   or separating; sticking, or sliding either way on the friction cone, with the friction
   impulse at the manifold's centre); several manifolds at once (a robot in a corner) use
   projected Gauss-Seidel. Then a restitution impulse e·P_n at each contact (Poisson's
   hypothesis), none below ``RESTING_SPEED`` so a robot pushing another or a field element
   rests without chatter.
   A restitution impulse that would return more kinetic energy than came in is scaled back,
   so no impact ever adds energy. Every impulse acts equally and oppositely on the two bodies
   at one point, so linear momentum and angular momentum about any fixed point are conserved.

Broad phase: each body's bounding circle (about its centre) against the other's circle or a
field element's bounding box, so a robot far from everything costs well under a microsecond per
pair or element.

    >>> from simserver.models.obstacles import Obstacle
    >>> box = Obstacle("box", ((3.0, 3.0), (4.0, 3.0), (4.0, 4.0), (3.0, 4.0)), 1.0)
    >>> field = Obstacles([box], restitution=0.0, friction=0.3)
    >>> robot = Body(x=2.56, y=3.5, heading=0.0, vx=2.0, vy=0.0, omega=0.0)
    >>> field.resolve(robot, outline(0.9, 0.8), mass=50.0, inertia=4.0)
    True
    >>> round(robot.x, 9), round(abs(robot.vx), 9)  # flush against the box, stopped
    (2.55, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from simserver.models.obstacles import Obstacle, convex_ccw

# Below this approach speed (m/s) an impact is treated as resting contact (no bounce), so a
# robot pushed against a wall by its motors does not chatter. A kitbot at full power gains about
# 0.25 m/s per 5 ms substep; bumper rebounds from slower impacts are negligible in practice.
RESTING_SPEED = 0.3


@dataclass
class Body:
    """Planar rigid body in the field frame: position m, heading rad, velocity m/s, rad/s."""

    x: float
    y: float
    heading: float
    vx: float
    vy: float
    omega: float

Point = tuple[float, float]
Polygon = tuple[Point, ...]

# Projected Gauss-Seidel (contacts of several manifolds at once, e.g. a robot in a corner):
# sweeps at most, and the sweeps stop once no impulse changes by more than CONVERGED of the
# total. One manifold is solved exactly and does not iterate.
MAX_SWEEPS = 32
CONVERGED = 1e-6
# A face of polygon b is preferred as the reference face only if it overlaps less than a's
# best face by more than this (m): keeps the choice stable for parallel faces under rounding.
_FACE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Contact:
    """Where two convex polygons overlap.

    normal: unit vector from the first polygon toward the second. depth: overlap along it, m
    (> 0); moving the second polygon by depth·normal makes them just touch. points: 1 or 2 field
    points (m) on the boundary of one polygon (the incident one), within the other's
    reference face's extent and behind it (inside the other polygon for shallow overlaps).
    """

    normal: Point
    depth: float
    points: tuple[Point, ...]


def outline(length: float, width: float) -> Polygon:
    """A robot's rectangular outline with bumpers, body frame (x forward, y left), CCW, m."""
    if not (length > 0 and width > 0):
        raise ValueError("robot outline length and width must be > 0")
    hl, hw = length / 2, width / 2
    return ((hl, -hw), (hl, hw), (-hl, hw), (-hl, -hw))


def to_field(polygon: Sequence[Point], x: float, y: float, heading: float) -> Polygon:
    """Body-frame ``polygon`` (m) placed at pose (x m, y m, heading rad) in the field frame."""
    c, s = math.cos(heading), math.sin(heading)
    return tuple((x + px * c - py * s, y + px * s + py * c) for px, py in polygon)


def check_convex(points: Sequence[Point], name: str = "polygon") -> None:
    """Raise ValueError unless ``points`` is a simple, strictly convex, CCW polygon."""
    pts = tuple((float(x), float(y)) for x, y in points)
    ccw = convex_ccw(pts)
    if ccw is None:
        raise ValueError(f"{name} must be a strictly convex polygon (no dents, collinear "
                         f"corners or self-intersections)")
    if ccw != pts:
        raise ValueError(f"{name} must list its corners counter-clockwise")


def _normals(points: Polygon) -> Polygon:
    """Outward unit normals of a CCW polygon's edges, edge i from points[i] to points[i+1]."""
    out = []
    for i, (x1, y1) in enumerate(points):
        x2, y2 = points[(i + 1) % len(points)]
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy)
        out.append((dy / length, -dx / length))
    return tuple(out)


@dataclass(frozen=True)
class _Shape:
    """A body-frame polygon with its edge normals and its radius about the body origin, m."""

    points: Polygon
    normals: Polygon
    radius: float


@lru_cache(maxsize=256)
def _cached_shape(polygon: Polygon) -> _Shape:
    points = tuple((float(x), float(y)) for x, y in polygon)
    check_convex(points, "polygon")
    return _Shape(points, _normals(points), max(math.hypot(x, y) for x, y in points))


def _shape(polygon: Sequence[Point]) -> _Shape:
    key = polygon if type(polygon) is tuple else tuple(polygon)
    try:
        return _cached_shape(key)
    except TypeError:  # unhashable points (lists)
        return _cached_shape(tuple((p[0], p[1]) for p in polygon))


def _place(shape: _Shape, x: float, y: float, c: float, s: float
           ) -> tuple[list[Point], list[Point]]:
    """Field-frame vertices and edge normals of ``shape`` at (x, y) with heading (cos, sin)."""
    pts = [(x + px * c - py * s, y + px * s + py * c) for px, py in shape.points]
    nrm = [(nx * c - ny * s, nx * s + ny * c) for nx, ny in shape.normals]
    return pts, nrm


def _max_separation(p1: Sequence[Point], n1: Sequence[Point], p2: Sequence[Point],
                    floor: float = -math.inf) -> tuple[float, int]:
    """Largest over p1's faces of the signed distance of p2's deepest vertex (m) and that face.

    Returns at the first face with a distance ≥ 0: that face separates the polygons. Only
    distances above ``floor`` (m, < 0) count: (floor, 0) if there are none.
    """
    best, face = floor, 0
    for i, (nx, ny) in enumerate(n1):
        vx, vy = p1[i]
        off = vx * nx + vy * ny
        sep = math.inf
        for qx, qy in p2:
            d = qx * nx + qy * ny - off
            if d <= best:
                break  # this face's distance is at most d ≤ best: it cannot be the largest
            if d < sep:
                sep = d
        else:  # every vertex is farther than best: sep is this face's distance
            best, face = sep, i
            if sep >= 0.0:
                break
    return best, face


# Complexity 16 (C901 allows 15): the incident edge's clip stays inline, since as a function
# of its own it cost 2 % of the six-robot scrum benchmark (a call per overlapping pair).
def _manifold(pa: Sequence[Point], na: Sequence[Point], pb: Sequence[Point],  # noqa: C901
              nb: Sequence[Point]) -> tuple[float, float, float, list[Point], bool] | None:
    """Contact of two field-frame convex CCW polygons, or None if they do not overlap.

    Returns (nx, ny, depth, points, points_on_b): the unit normal from a toward b, the depth
    (m), the contact points, and whether those lie on b's boundary (else on a's).
    """
    sep_a, face_a = _max_separation(pa, na, pb)
    if sep_a >= 0.0:
        return None
    # b's faces that separate less than a's best cannot be chosen: they need not be measured.
    sep_b, face_b = _max_separation(pb, nb, pa, sep_a)
    if sep_b >= 0.0:
        return None
    if sep_b > sep_a + _FACE_TOLERANCE:
        ref_p, ref_n, face, inc_p, inc_n, sep, flip = pb, nb, face_b, pa, na, sep_b, True
    else:
        ref_p, ref_n, face, inc_p, inc_n, sep, flip = pa, na, face_a, pb, nb, sep_a, False
    nx, ny = ref_n[face]
    # Incident edge: the (first) one whose normal is most opposed to the reference normal.
    inc, most = 0, math.inf
    for k, (mx, my) in enumerate(inc_n):
        d = mx * nx + my * ny
        if d < most:
            inc, most = k, d
    (x1, y1), (x2, y2) = inc_p[inc], inc_p[(inc + 1) % len(inc_p)]
    (rx1, ry1), (rx2, ry2) = ref_p[face], ref_p[(face + 1) % len(ref_p)]
    tx, ty = -ny, nx  # along the reference edge, from its first point to its second
    length = (rx2 - rx1) * tx + (ry2 - ry1) * ty
    # Clip the incident edge to the slab 0 ≤ (p − r1)·t ≤ length.
    kept = True
    for lo in (True, False):
        d1 = (x1 - rx1) * tx + (y1 - ry1) * ty
        d2 = (x2 - rx1) * tx + (y2 - ry1) * ty
        if not lo:
            d1, d2 = length - d1, length - d2
        if d1 < 0.0 and d2 < 0.0:
            kept = False
            break
        if d1 < 0.0:
            f = d1 / (d1 - d2)
            x1, y1 = x1 + (x2 - x1) * f, y1 + (y2 - y1) * f
        elif d2 < 0.0:
            f = d2 / (d2 - d1)
            x2, y2 = x2 + (x1 - x2) * f, y2 + (y1 - y2) * f
    points = []
    if kept:
        for px, py in ((x1, y1), (x2, y2)):
            if (px - rx1) * nx + (py - ry1) * ny < 0.0:
                points.append((px, py))
    if not points:  # rounding at a vertex–vertex touch: use the deepest incident vertex
        points = [min(inc_p, key=lambda q: q[0] * nx + q[1] * ny)]
    if flip:
        return -nx, -ny, -sep, points, False
    return nx, ny, -sep, points, True


def collide(a: Sequence[Point], b: Sequence[Point]) -> Contact | None:
    """Contact between two convex CCW polygons in field coordinates (m); None if they do not
    overlap (polygons that only touch do not overlap)."""
    sa, sb = _shape(a), _shape(b)
    found = _manifold(sa.points, sa.normals, sb.points, sb.normals)
    if found is None:
        return None
    nx, ny, depth, points, _ = found
    return Contact((nx, ny), depth, tuple(points))


Velocities = tuple[float, float, float, float, float, float]
"""(a.vx, a.vy, a.omega, b.vx, b.vy, b.omega) of a colliding pair, m/s and rad/s (b's 0 when
it is static)."""


@dataclass(frozen=True, slots=True)
class _Masses:
    """A colliding pair's masses (kg) and yaw inertias (kg·m²), b's 0 when it is static, with
    their inverses (b's inverses 0 too: a static body takes no impulse)."""

    ma: float
    ja: float
    mb: float
    jb: float
    inv_ma: float
    inv_ja: float
    inv_mb: float
    inv_jb: float
    inv_m: float  # inv_ma + inv_mb


@dataclass(slots=True)
class _Row:
    """One contact of ``solve_contacts``, field frame; t is n turned +90°. (A dataclass with
    slots: a NamedTuple's fields are slower to read, which showed in the contact benchmarks.)"""

    rx: float  # the point's offset from a's centre, m
    ry: float
    qx: float  # its offset from b's centre (r itself when b is static), m
    qy: float
    nx: float  # the unit normal into a
    ny: float
    rn: float  # r × n, m: the arm of the normal impulse about a's centre
    qn: float  # q × n, m: about b's
    rt: float  # r × t, m: the arm of the tangential impulse about a's centre
    qt: float  # q × t, m: about b's
    restitution: float  # e at this point: 0 when it approaches slower than RESTING_SPEED


def solve_contacts(a: Body, a_mass: float, a_inertia: float, b: Body | None, b_mass: float,
                   b_inertia: float, contacts: Sequence[tuple[float, float, float, float]],
                   restitution: float, friction: float) -> None:
    """Apply the impact impulses of simultaneous contacts between ``a`` and ``b``, in place.

    contacts: (rx, ry, nx, ny) per contact: the contact point's offset from a's centre (m,
    field frame) and the unit normal pointing into a (the direction a is pushed). ``b`` None is
    a static body (wall, field element); b_mass and b_inertia are then ignored. Masses kg,
    inertias kg·m², restitution e in [0, 1], friction μ ≥ 0.
    """
    if b is None:
        masses = _masses(a_mass, a_inertia, 0.0, 0.0, True)
        before = (a.vx, a.vy, a.omega, 0.0, 0.0, 0.0)
        rows = _rows(contacts, before, 0.0, 0.0, restitution)
    else:
        masses = _masses(a_mass, a_inertia, b_mass, b_inertia, False)
        before = (a.vx, a.vy, a.omega, b.vx, b.vy, b.omega)
        rows = _rows(contacts, before, a.x - b.x, a.y - b.y, restitution)
    first, last = rows[0], rows[-1]  # the same row when there is one contact
    modes = None
    if len(rows) == 1 or (len(rows) == 2 and first.nx == last.nx and first.ny == last.ny):
        modes = _manifold_impulses(rows, before, masses, friction)
    if modes is not None:  # one contact manifold, solved exactly
        pn = list(modes[:len(rows)])  # normal impulses, N·s
        after = _apply_manifold(rows, before, pn, modes[2], masses)
    else:  # several manifolds (a field corner)
        after, pn = _gauss_seidel(rows, before, masses, friction)
    after = _restitute(rows, pn, after, before, masses)
    a.vx, a.vy, a.omega = after[0], after[1], after[2]
    if b is not None:
        b.vx, b.vy, b.omega = after[3], after[4], after[5]


@lru_cache(maxsize=64)
def _masses(a_mass: float, a_inertia: float, b_mass: float, b_inertia: float, static: bool
            ) -> _Masses:
    """A pair's masses (kg), inertias (kg·m²) and inverses (b's 0 if it is ``static``);
    worked out once per pair of bodies (a field has few)."""
    inv_ma = 1.0 / a_mass
    inv_mb, inv_jb = (0.0, 0.0) if static else (1.0 / b_mass, 1.0 / b_inertia)
    return _Masses(a_mass, a_inertia, b_mass, b_inertia, inv_ma, 1.0 / a_inertia, inv_mb,
                   inv_jb, inv_ma + inv_mb)


def _rows(contacts: Sequence[tuple[float, float, float, float]], v: Velocities, dx: float,
          dy: float, restitution: float) -> list[_Row]:
    """The rows of ``contacts`` (as in solve_contacts) before the impact (velocities ``v``);
    (dx, dy) is a's centre from b's, m."""
    avx, avy, aw, bvx, bvy, bw = v
    rows = []
    for rx, ry, nx, ny in contacts:
        qx, qy = rx + dx, ry + dy
        ux = avx - aw * ry - (bvx - bw * qy)
        uy = avy + aw * rx - (bvy + bw * qx)
        rows.append(_Row(rx, ry, qx, qy, nx, ny, rx * ny - ry * nx, qx * ny - qy * nx,
                         rx * nx + ry * ny, qx * nx + qy * ny,
                         restitution if -(ux * nx + uy * ny) > RESTING_SPEED else 0.0))
    return rows


def _push(v: Velocities, impulses: Iterable[tuple[float, float, float, float, float]],
          m: _Masses) -> Velocities:
    """``v`` after ``impulses`` in turn, each (p, ux, uy, arm_a, arm_b): p (N·s) along the unit
    vector u on a and -p on b, at a point where u's arms are arm_a about a's centre and arm_b
    about b's (m)."""
    avx, avy, aw, bvx, bvy, bw = v
    inv_ma, inv_ja, inv_mb, inv_jb = m.inv_ma, m.inv_ja, m.inv_mb, m.inv_jb
    for p, ux, uy, arm_a, arm_b in impulses:
        jx, jy = p * ux, p * uy
        avx += jx * inv_ma
        avy += jy * inv_ma
        aw += p * arm_a * inv_ja
        bvx -= jx * inv_mb
        bvy -= jy * inv_mb
        bw -= p * arm_b * inv_jb
    return avx, avy, aw, bvx, bvy, bw


def _normal_speed(v: Velocities, row: _Row) -> float:
    """Speed of a's point from b's along the row's normal, m/s (> 0 separating)."""
    avx, avy, aw, bvx, bvy, bw = v
    return ((avx - aw * row.ry - bvx + bw * row.qy) * row.nx
            + (avy + aw * row.rx - bvy - bw * row.qx) * row.ny)


def _tangent_speed(v: Velocities, row: _Row) -> float:
    """Speed of a's point from b's along the row's tangent t (n turned +90°), m/s."""
    avx, avy, aw, bvx, bvy, bw = v
    return ((avy + aw * row.rx - bvy - bw * row.qx) * row.nx
            - (avx - aw * row.ry - bvx + bw * row.qy) * row.ny)


def _apply_manifold(rows: Sequence[_Row], v: Velocities, pn: Sequence[float],
                    tangential: float, m: _Masses) -> Velocities:
    """``v`` after one manifold's normal impulses ``pn`` (N·s, one per row) and its tangential
    impulse (N·s), which acts at the manifold's centre."""
    first, last = rows[0], rows[-1]
    impulses = [(pn[0], first.nx, first.ny, first.rn, first.qn)]
    if len(rows) == 2:
        impulses.append((pn[1], last.nx, last.ny, last.rn, last.qn))
    if tangential != 0.0:
        impulses.append((tangential, -first.ny, first.nx, (first.rt + last.rt) / 2,
                         (first.qt + last.qt) / 2))
    return _push(v, impulses, m)


def _gauss_seidel(rows: Sequence[_Row], v: Velocities, m: _Masses, friction: float
                  ) -> tuple[Velocities, list[float]]:
    """Projected Gauss-Seidel over the contacts of several manifolds: the velocities after
    the compression and the normal impulses (N·s, one per row)."""
    count = len(rows)
    pn = [0.0] * count  # accumulated normal impulses, N·s
    pt = [0.0] * count  # accumulated tangential impulses, N·s
    kn = [_effective_mass(r.rn, r.qn, m.inv_m, m.inv_ja, m.inv_jb) for r in rows]
    kt = [_effective_mass(r.rt, r.qt, m.inv_m, m.inv_ja, m.inv_jb) for r in rows]
    pair = _two_point_matrix(rows, kn, m) if count == 2 else None
    exact = count <= 2 and friction == 0.0  # one sweep solves it
    for _ in range(MAX_SWEEPS):
        change = 0.0  # N·s, summed over the sweep
        if friction > 0.0:
            v, change = _friction_sweep(rows, v, pn, pt, kt, m, friction, change)
        v, change = _normal_sweep(rows, v, pn, kn, pair, m, change)
        if exact or change <= CONVERGED * (sum(pn, 0.0) + sum(map(abs, pt), 0.0)):
            break
    return v, pn


def _two_point_matrix(rows: Sequence[_Row], kn: Sequence[float], m: _Masses
                      ) -> tuple[float, float, float, float]:
    """(k11, k12, k22, det) of two contacts' normal impulses for ``_two_point_lcp``; det 0
    when the contacts coincide (no unique split)."""
    r1, r2 = rows
    k11, k22 = 1.0 / kn[0], 1.0 / kn[1]
    k12 = ((r1.nx * r2.nx + r1.ny * r2.ny) * m.inv_m
           + r1.rn * r2.rn * m.inv_ja + r1.qn * r2.qn * m.inv_jb)
    det = k11 * k22 - k12 * k12
    if det <= 1e-12 * k11 * k22:
        det = 0.0
    return k11, k12, k22, det


def _friction_sweep(rows: Sequence[_Row], v: Velocities, pn: Sequence[float], pt: list[float],
                    kt: Sequence[float], m: _Masses, friction: float, change: float
                    ) -> tuple[Velocities, float]:
    """One sweep of tangential impulses, each clamped to its cone |p_t| ≤ μ p_n; updates
    ``pt`` (N·s) and adds each impulse's change to ``change`` (N·s)."""
    for i, row in enumerate(rows):
        limit = friction * pn[i]
        new = min(limit, max(-limit, pt[i] - _tangent_speed(v, row) * kt[i]))
        d = new - pt[i]
        if d != 0.0:
            pt[i] = new
            change += abs(d)
            v = _push(v, ((d, -row.ny, row.nx, row.rt, row.qt),), m)
    return v, change


def _normal_sweep(rows: Sequence[_Row], v: Velocities, pn: list[float], kn: Sequence[float],
                  pair: tuple[float, float, float, float] | None, m: _Masses, change: float
                  ) -> tuple[Velocities, float]:
    """One sweep of normal impulses (≥ 0; two contacts solved together, exactly, with
    ``pair`` from _two_point_matrix); updates ``pn`` (N·s) and adds each impulse's change to
    ``change`` (N·s)."""
    news = None
    if pair is not None:
        news = _two_point_lcp(*pair, pn[0], pn[1], _normal_speed(v, rows[0]),
                              _normal_speed(v, rows[1]))
    for i, row in enumerate(rows):
        # Two contacts: the pair's solution; more: each row alone, at the current speeds.
        new = news[i] if news is not None else max(0.0, pn[i] - _normal_speed(v, row) * kn[i])
        d = new - pn[i]
        if d != 0.0:
            pn[i] = new
            change += abs(d)
            v = _push(v, ((d, row.nx, row.ny, row.rn, row.qn),), m)
    return v, change


def _restitute(rows: Sequence[_Row], pn: Sequence[float], v: Velocities, before: Velocities,
               m: _Masses) -> Velocities:
    """``v`` after the restitution impulses (Poisson's hypothesis: e_i P_i at each contact,
    P_i the compression's normal impulse, N·s), scaled back by λ ≤ 1 if they would return
    more kinetic energy than the velocities ``before`` the impact held."""
    fx = fy = ta = tb = 0.0
    for row, p in zip(rows, pn, strict=True):
        ep = row.restitution * p
        if ep != 0.0:
            fx += ep * row.nx
            fy += ep * row.ny
            ta += ep * row.rn
            tb += ep * row.qn
    if fx == fy == ta == tb == 0.0:  # no restitution impulse
        return v
    delta = (fx * m.inv_ma, fy * m.inv_ma, ta * m.inv_ja,
             -fx * m.inv_mb, -fy * m.inv_mb, -tb * m.inv_jb)
    lam = _energy_scale(v, delta, before, m)
    return (v[0] + lam * delta[0], v[1] + lam * delta[1], v[2] + lam * delta[2],
            v[3] + lam * delta[3], v[4] + lam * delta[4], v[5] + lam * delta[5])


def _energy_scale(v: Velocities, delta: Velocities, before: Velocities, m: _Masses) -> float:
    """The largest λ in [0, 1] for which v + λ·delta holds no more kinetic energy than
    ``before`` (energy(λ) is quadratic; energy(0) ≤ energy(before)); 0 if delta has none."""
    quad = _energy_product(delta, delta, m)
    if not quad > 0.0:
        return 0.0
    lin = 2.0 * _energy_product(v, delta, m)
    const = _energy_product(v, v, m) - _energy_product(before, before, m)
    if not quad + lin + const > 0.0:
        return 1.0
    lam = (-lin + math.sqrt(max(0.0, lin * lin - 4.0 * quad * const))) / (2.0 * quad)
    return max(0.0, min(1.0, lam))


def _energy_product(v: Velocities, w: Velocities, m: _Masses) -> float:
    """Σ mass × v·w over both bodies' linear and angular velocities: 2 × the kinetic energy
    (J) when w is v."""
    return (m.ma * (v[0] * w[0] + v[1] * w[1]) + m.ja * v[2] * w[2]
            + m.mb * (v[3] * w[3] + v[4] * w[4]) + m.jb * v[5] * w[5])


def _effective_mass(arm_a: float, arm_b: float, inv_m: float, inv_ja: float, inv_jb: float
                    ) -> float:
    """1/K of one constraint row (kg): the impulse (N·s) that changes its speed by 1 m/s.

    arm_a, arm_b: the arms r × d (m) of its direction d about the two centres; inv_m the sum
    of the inverse masses (1/kg), inv_ja and inv_jb the inverse inertias (1/(kg·m²)).
    """
    return 1.0 / (inv_m + arm_a * arm_a * inv_ja + arm_b * arm_b * inv_jb)


def _manifold_impulses(rows: Sequence[_Row], v: Velocities, m: _Masses, friction: float
                       ) -> tuple[float, float, float] | None:
    """Exact impulses of one contact manifold (1 or 2 points sharing the normal n).

    Unknowns: a normal impulse per point and, with friction, one tangential impulse at the
    points' centre. Solves the complementarity problem (each normal impulse ≥ 0 with no
    approach speed left where it acts; the tangential impulse stops the sliding within the
    friction cone |p_t| ≤ μ Σp_n, or slides on the cone against the motion) by trying the
    contact modes in turn. Returns (p_n1, p_n2, p_t) (N·s; p_n2 is 0 for one point), or None
    if rounding defeated every mode. rows as in solve_contacts (1 or 2 of them); μ ≥ 0.
    """
    avx, avy, aw, bvx, bvy, bw = v
    inv_m, inv_ja, inv_jb = m.inv_m, m.inv_ja, m.inv_jb
    two = len(rows) == 2
    # One point is handled as two coincident ones of which the second never acts: every sum,
    # mean, minimum and maximum below then has the one-point value.
    r0, r1 = rows[0], rows[-1]
    rx0, ry0, qx0, qy0, nx, ny, an0, bn0 = r0.rx, r0.ry, r0.qx, r0.qy, r0.nx, r0.ny, r0.rn, r0.qn
    rx1, ry1, qx1, qy1, an1, bn1 = r1.rx, r1.ry, r1.qx, r1.qy, r1.rn, r1.qn
    # Normal speeds (m/s, > 0 separating).
    v0 = (avx - aw * ry0 - bvx + bw * qy0) * nx + (avy + aw * rx0 - bvy - bw * qx0) * ny
    v1 = (avx - aw * ry1 - bvx + bw * qy1) * nx + (avy + aw * rx1 - bvy - bw * qx1) * ny
    if v0 >= 0.0 and v1 >= 0.0:
        return 0.0, 0.0, 0.0  # nothing approaches: no impulse at all
    if not friction > 0.0:  # normal impulses only: closed forms
        kn0 = _effective_mass(an0, bn0, inv_m, inv_ja, inv_jb)
        if not two:
            return -v0 * kn0, 0.0, 0.0
        k11, k22 = 1.0 / kn0, 1.0 / _effective_mass(an1, bn1, inv_m, inv_ja, inv_jb)
        k12 = inv_m + an0 * an1 * inv_ja + bn0 * bn1 * inv_jb
        det = k11 * k22 - k12 * k12
        p1, p2 = _two_point_lcp(k11, k12, k22, det if det > 1e-12 * k11 * k22 else 0.0,
                                0.0, 0.0, v0, v1)
        return p1, p2, 0.0
    # The tangent t = n turned +90° at the points' centre c (offset from a; d from b): its
    # speed vt (m/s) and arms c × t, d × t (m), as r × n, q × n are the normals' arms.
    cx, cy, dx, dy = (rx0 + rx1) / 2, (ry0 + ry1) / 2, (qx0 + qx1) / 2, (qy0 + qy1) / 2
    at, bt = cx * nx + cy * ny, dx * nx + dy * ny
    vt = (avy + aw * cx - bvy - bw * dx) * nx - (avx - aw * cy - bvx + bw * dy) * ny
    # K, the symmetric matrix from impulses (p_n1, p_n2, p_t) to speed changes (n ⟂ t).
    nn_m = (nx * nx + ny * ny) * inv_m
    k00 = nn_m + an0 * an0 * inv_ja + bn0 * bn0 * inv_jb
    k01 = nn_m + an0 * an1 * inv_ja + bn0 * bn1 * inv_jb
    k11 = nn_m + an1 * an1 * inv_ja + bn1 * bn1 * inv_jb
    k0t = an0 * at * inv_ja + bn0 * bt * inv_jb
    k1t = an1 * at * inv_ja + bn1 * bt * inv_jb
    ktt = nn_m + at * at * inv_ja + bt * bt * inv_jb
    tol_w = 1e-9 * max(abs(v0), abs(v1), abs(vt))  # m/s
    tol_p = tol_w / min(k00, k11, ktt)  # N·s
    # Each mode is a linear system in the impulses: K's row and -v for an acting point, p_n = 0
    # for one that does not act; K's row and -vt for sticking, p_t ± μ Σp_n = 0 for sliding.
    # Only the acting points' impulses and p_t are solved for, but the singularity test is
    # that of the whole system (its size and largest entry; rows p_n = 0 have entry 1).
    a01, a0t, a1t = abs(k01), abs(k0t), abs(k1t)  # the diagonal is positive
    max0, max_stick, max_slide = max(k00, a01, a0t), max(a0t, a1t, ktt), max(friction, 1.0)
    max1 = max(a01, k11, a1t) if two else 0.0
    slide = 1.0 if vt > 0.0 else -1.0
    actives = ((True, True), (True, False), (False, True)) if two else ((True, False),)
    for on0, on1 in actives:
        for tmode in (0.0, slide, -slide):  # 0: sticking; ±1: sliding in ±t, p_t = ∓μ Σp_n
            if tmode == 0.0:
                t0, t1, t2, rhs_t, max_t = k0t, k1t, ktt, -vt, max_stick
            else:
                t0 = t1 = tmode * friction
                t2, rhs_t, max_t = 1.0, 0.0, max_slide
            scale = max(max0 if on0 else 1.0, (max1 if on1 else 1.0) if two else 0.0, max_t)
            tiny = 1e-12 * scale * scale * (scale if two else 1.0)
            if on0 and on1:
                p = _solve3(k00, k01, k0t, k01, k11, k1t, t0, t1, t2, -v0, -v1, rhs_t, tiny)
            else:  # one point acts: its row and the tangent's
                one = (_solve2(k00, k0t, t0, t2, -v0, rhs_t, tiny) if on0 else
                       _solve2(k11, k1t, t1, t2, -v1, rhs_t, tiny))
                p = None if one is None else (one[0], 0.0, one[1]) if on0 else (
                    0.0, one[0], one[1])
            if p is None:
                continue
            p0, p1, pt = p
            # Acting points push (p_n ≥ 0), the others do not approach (w = v + K·p ≥ 0, m/s),
            # friction stays in its cone or opposes the sliding.
            if p0 < -tol_p if on0 else v0 + (k00 * p0 + k01 * p1 + k0t * pt) < -tol_w:
                continue
            if two and (p1 < -tol_p if on1 else v1 + (k01 * p0 + k11 * p1 + k1t * pt) < -tol_w):
                continue
            if tmode == 0.0:
                if abs(pt) > friction * (p0 + p1) + tol_p:
                    continue
            elif tmode * (vt + (k0t * p0 + k1t * p1 + ktt * pt)) < -tol_w:
                continue
            return p0 if p0 > 0.0 else 0.0, p1 if p1 > 0.0 else 0.0, pt
    return None


def _solve2(a00: float, a01: float, a10: float, a11: float, b0: float, b1: float,
            tiny: float) -> tuple[float, float] | None:
    """x with a·x = b for the 2×2 matrix a (Cramer's rule), None if |det a| ≤ tiny."""
    det = a00 * a11 - a01 * a10
    if abs(det) <= tiny:
        return None
    return (b0 * a11 - a01 * b1) / det, (a00 * b1 - b0 * a10) / det


def _solve3(a00: float, a01: float, a02: float, a10: float, a11: float, a12: float,
            a20: float, a21: float, a22: float, b0: float, b1: float, b2: float, tiny: float
            ) -> tuple[float, float, float] | None:
    """x with a·x = b for the 3×3 matrix a (Cramer's rule), None if |det a| ≤ tiny."""
    c0, c1, c2 = a11 * a22 - a12 * a21, a12 * a20 - a10 * a22, a10 * a21 - a11 * a20
    det = a00 * c0 + a01 * c1 + a02 * c2
    if abs(det) <= tiny:
        return None
    return ((b0 * c0 + a01 * (a12 * b2 - b1 * a22) + a02 * (b1 * a21 - a11 * b2)) / det,
            (a00 * (b1 * a22 - a12 * b2) + b0 * c1 + a02 * (a10 * b2 - b1 * a20)) / det,
            (a00 * (a11 * b2 - b1 * a21) + a01 * (b1 * a20 - a10 * b2) + b0 * c2) / det)


def _two_point_lcp(k11: float, k12: float, k22: float, det: float, p1: float, p2: float,
                   v1: float, v2: float) -> tuple[float, float]:
    """Normal impulses (x1, x2) ≥ 0 of a two-point contact that leave no approach speed.

    Solves w = K·(x − p) + v ≥ 0, x ≥ 0, x·w = 0 exactly by trying both contacts active, each
    alone, then neither; K is the 2×2 normal effective-mass inverse, p the current impulses,
    v the current normal speeds (m/s, > 0 separating).
    """
    b1 = v1 - k11 * p1 - k12 * p2
    b2 = v2 - k12 * p1 - k22 * p2
    if det > 0.0:
        x1 = (k12 * b2 - k22 * b1) / det
        x2 = (k12 * b1 - k11 * b2) / det
        if x1 >= 0.0 and x2 >= 0.0:
            return x1, x2
    x1 = -b1 / k11
    if x1 >= 0.0 and k12 * x1 + b2 >= 0.0:
        return x1, 0.0
    x2 = -b2 / k22
    if x2 >= 0.0 and k12 * x2 + b1 >= 0.0:
        return 0.0, x2
    if b1 >= 0.0 and b2 >= 0.0:
        return 0.0, 0.0
    # Only reachable through rounding at a degenerate K: the better single-contact answer.
    return (max(0.0, x1), 0.0) if abs(b1) >= abs(b2) else (0.0, max(0.0, x2))


def resolve_pair(a: Body, a_polygon: Sequence[Point], a_mass: float, a_inertia: float,
                 b: Body, b_polygon: Sequence[Point], b_mass: float, b_inertia: float,
                 restitution: float, friction: float) -> bool:
    """Separate two overlapping robots and apply their impact impulses. True if they touched.

    Polygons are convex, CCW, body frame (m, bumpers included); masses kg, inertias kg·m²
    (yaw, about the body origin), restitution e in [0, 1], friction μ ≥ 0 between bumpers.
    The push-out is split by inverse mass (the pair's centre of mass does not move); the
    impulses are equal and opposite at the contact points.
    """
    sa, sb = _shape(a_polygon), _shape(b_polygon)
    dx, dy, reach = b.x - a.x, b.y - a.y, sa.radius + sb.radius
    if dx * dx + dy * dy >= reach * reach:
        return False
    pa, na = _place(sa, a.x, a.y, math.cos(a.heading), math.sin(a.heading))
    pb, nb = _place(sb, b.x, b.y, math.cos(b.heading), math.sin(b.heading))
    found = _manifold(pa, na, pb, nb)
    if found is None:
        return False
    nx, ny, depth, points, on_b = found
    inv_a, inv_b = 1.0 / a_mass, 1.0 / b_mass
    move_a, move_b = depth * inv_a / (inv_a + inv_b), depth * inv_b / (inv_a + inv_b)
    a.x -= nx * move_a
    a.y -= ny * move_a
    b.x += nx * move_b
    b.y += ny * move_b
    # The contact points ride with the body whose boundary they are on.
    sx, sy = (nx * move_b, ny * move_b) if on_b else (-nx * move_a, -ny * move_a)
    contacts = [(px + sx - a.x, py + sy - a.y, -nx, -ny) for px, py in points]
    solve_contacts(a, a_mass, a_inertia, b, b_mass, b_inertia, contacts, restitution, friction)
    return True


@dataclass(frozen=True)
class _Element:
    min_x: float
    min_y: float
    max_x: float
    max_y: float
    points: Polygon
    normals: Polygon
    name: str = ""


class Obstacles:
    """Static field elements (convex ``Obstacle`` polygons) that robots bump into.

    restitution e in [0, 1] and friction μ ≥ 0 between bumpers and the elements. After each
    ``resolve``, ``touched`` names the elements it found in contact (in field order).
    """

    def __init__(self, obstacles: Sequence[Obstacle], restitution: float, friction: float):
        if not 0.0 <= restitution <= 1.0:
            raise ValueError("restitution must be in [0, 1]")
        if not friction >= 0.0:
            raise ValueError("friction must be ≥ 0")
        self.obstacles = tuple(obstacles)
        self.restitution = restitution
        self.friction = friction
        elements = []
        for ob in self.obstacles:
            points = tuple((float(x), float(y)) for x, y in ob.points)
            check_convex(points, f"obstacle {ob.name!r}")
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            elements.append(_Element(min(xs), min(ys), max(xs), max(ys), points,
                                     _normals(points), ob.name))
        self._elements = tuple(elements)
        self.touched: tuple[str, ...] = ()

    def near(self, x: float, y: float, reach: float) -> bool:
        """Whether a body centred at (x, y) (m) with bounding radius ``reach`` (m) may touch
        an element: a cheap bounding-box test; False means ``resolve`` would find nothing."""
        for el in self._elements:
            if (x + reach > el.min_x and x - reach < el.max_x and y + reach > el.min_y
                    and y - reach < el.max_y):
                return True
        return False

    def resolve(self, body: Body, polygon: Sequence[Point], mass: float, inertia: float
                ) -> bool:
        """Push ``body`` out of every element it overlaps and apply the impact impulses at the
        contact points (so a corner hit turns the robot). Returns True if it touched any.

        polygon: the robot's convex CCW outline in its body frame, m. mass kg, inertia kg·m².
        """
        shape = _shape(polygon)
        r, x, y = shape.radius, body.x, body.y
        self.touched = ()
        near = [el for el in self._elements
                if x + r > el.min_x and x - r < el.max_x and y + r > el.min_y
                and y - r < el.max_y]
        if not near:
            return False
        c, s = math.cos(body.heading), math.sin(body.heading)
        contacts: list[tuple[float, float, float, float]] = []
        placed: tuple[list[Point], list[Point]] | None = None
        for el in near:
            if placed is None:  # at first, and again once a push has moved the body
                placed = _place(shape, body.x, body.y, c, s)
            found = _manifold(*placed, el.points, el.normals)
            if found is None:
                continue
            nx, ny, depth, points, on_element = found
            self.touched += (el.name,)
            body.x -= nx * depth
            body.y -= ny * depth
            placed = None
            sx, sy = (0.0, 0.0) if on_element else (-nx * depth, -ny * depth)
            contacts += [(px + sx - body.x, py + sy - body.y, -nx, -ny) for px, py in points]
        if not contacts:
            return False
        solve_contacts(body, mass, inertia, None, 0.0, 0.0, contacts, self.restitution,
                       self.friction)
        return True
