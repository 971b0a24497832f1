"""Field perimeter walls: rigid-body impacts of a rectangular robot outline.

The robot is a rigid body of mass m and yaw inertia J with a rectangular outline (bumpers
included). When a corner crosses a wall, the body is moved back inside along the wall normal and
an impulse is applied at that corner:

    j_n = -(1 + e) u_n / (1/m + (r×n)²/J)        normal, restitution e
    |j_t| ≤ μ j_n                                  tangential (Coulomb friction)

where u is the corner's velocity and r its offset from the centre. Because the impulse acts at
the corner, an off-centre hit turns the robot (RoboSim's "future work"); angular momentum about
the contact point is conserved, and with e = 1, μ = 0 so is kinetic energy; no impact ever
adds kinetic energy (a guard scales the rare solver overshoot at e near 1 back).

    >>> walls = FieldWalls(16.54, 8.07, restitution=0.2, friction=0.3)
    >>> body = Body(x=0.3, y=4.0, heading=0.0, vx=-2.0, vy=0.0, omega=0.0)
    >>> walls.resolve(body, half_length=0.4, half_width=0.35, mass=27.0, inertia=2.0)
    True
    >>> round(body.vx, 3)
    0.4
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


class FieldWalls:
    """The rectangular perimeter [0, length] × [0, width], metres."""

    def __init__(self, length: float, width: float, restitution: float, friction: float):
        if not (length > 0 and width > 0):
            raise ValueError("field length and width must be > 0")
        self.length = length
        self.width = width
        self.restitution = restitution
        self.friction = friction

    def corners(self, body: Body, half_length: float, half_width: float
                ) -> list[tuple[float, float]]:
        """Field coordinates of the outline's four corners."""
        c, s = math.cos(body.heading), math.sin(body.heading)
        out = []
        for bx, by in ((half_length, half_width), (half_length, -half_width),
                       (-half_length, -half_width), (-half_length, half_width)):
            out.append((body.x + bx * c - by * s, body.y + bx * s + by * c))
        return out

    def resolve(self, body: Body, half_length: float, half_width: float, mass: float,
                inertia: float) -> bool:
        """Push ``body`` back inside and apply impact impulses. Returns True if it touched.

        Every penetrating corner is a contact; their impulses are solved together by projected
        Gauss-Seidel (accumulated, clamped impulses), so a flush face hit gets equal impulses at
        both corners and no spurious spin, and a robot pushed into a wall rests without chatter.
        """
        # Walls as (inward normal x, y, offset): a point p is outside by off - p·n.
        walls = ((1.0, 0.0, 0.0), (-1.0, 0.0, -self.length),
                 (0.0, 1.0, 0.0), (0.0, -1.0, -self.width))
        contacts: list[tuple[float, float, float, float]] = []  # corner offset r, normal n
        for nx, ny, off in walls:
            pts = [(cx, cy, off - (cx * nx + cy * ny))
                   for cx, cy in self.corners(body, half_length, half_width)]
            depth = max(d for _, _, d in pts)
            if depth <= 0.0:
                continue
            body.x += nx * depth
            body.y += ny * depth
            contacts += [(cx - body.x + nx * depth, cy - body.y + ny * depth, nx, ny)
                         for cx, cy, d in pts if d > 0.0]
        if not contacts:
            return False
        self._solve(body, contacts, mass, inertia)
        return True

    def _solve(self, body: Body, contacts: list[tuple[float, float, float, float]],
               mass: float, inertia: float) -> None:
        """Poisson impact: an inelastic, frictional compression solved by projected
        Gauss-Seidel, then a restitution impulse e·P_n at each contact (none below
        RESTING_SPEED). Compression only removes energy; the restitution impulse is scaled down
        only if it would return more energy than came in, so no impact adds energy, and every
        change is an impulse at a contact point."""
        inv_m, inv_j = 1.0 / mass, 1.0 / inertia
        energy0 = mass * (body.vx**2 + body.vy**2) + inertia * body.omega**2
        rows = []
        for rx, ry, nx, ny in contacts:
            un = (body.vx - body.omega * ry) * nx + (body.vy + body.omega * rx) * ny
            e = self.restitution if -un > RESTING_SPEED else 0.0
            rn = rx * ny - ry * nx
            rt = rx * nx + ry * ny  # r × t with t = (-ny, nx)
            rows.append([rx, ry, nx, ny, e, 1.0 / (inv_m + rn * rn * inv_j),
                         1.0 / (inv_m + rt * rt * inv_j), 0.0, 0.0])
        for _ in range(16):
            for row in rows:
                rx, ry, nx, ny, _e, kn, kt, pn, pt = row
                ux = body.vx - body.omega * ry
                uy = body.vy + body.omega * rx
                new_pn = max(0.0, pn - (ux * nx + uy * ny) * kn)
                djn = new_pn - pn
                limit = self.friction * new_pn
                new_pt = max(-limit, min(limit, pt - (-ux * ny + uy * nx) * kt))
                djt = new_pt - pt
                row[7], row[8] = new_pn, new_pt
                jx, jy = djn * nx - djt * ny, djn * ny + djt * nx
                body.vx += jx * inv_m
                body.vy += jy * inv_m
                body.omega += (rx * jy - ry * jx) * inv_j
        # Restitution: Δv = λ·a, Δω = λ·b; energy(λ) is quadratic, energy(0) ≤ energy0.
        ax = sum(r[4] * r[7] * r[2] for r in rows) * inv_m
        ay = sum(r[4] * r[7] * r[3] for r in rows) * inv_m
        b = sum(r[4] * r[7] * (r[0] * r[3] - r[1] * r[2]) for r in rows) * inv_j
        quad = mass * (ax * ax + ay * ay) + inertia * b * b
        if quad == 0.0:
            return
        lin = 2.0 * (mass * (body.vx * ax + body.vy * ay) + inertia * body.omega * b)
        const = mass * (body.vx**2 + body.vy**2) + inertia * body.omega**2 - energy0
        lam = 1.0
        if quad + lin + const > 0.0:
            lam = (-lin + math.sqrt(max(0.0, lin * lin - 4.0 * quad * const))) / (2.0 * quad)
            lam = max(0.0, min(1.0, lam))
        body.vx += lam * ax
        body.vy += lam * ay
        body.omega += lam * b
