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

from simserver.models.collision import RESTING_SPEED, Body, solve_contacts


class FieldWalls:
    """The rectangular perimeter [0, length] × [0, width], metres."""

    def __init__(self, length: float, width: float, restitution: float, friction: float):
        if not (length > 0 and width > 0):
            raise ValueError("field length and width must be > 0")
        self.length = length
        self.width = width
        self.restitution = restitution
        self.friction = friction
        # Wall names, in the order resolve() tries them; ``touched``: those the last resolve()
        # found a corner beyond.
        self.names = ("blue alliance wall (x = 0)", f"red alliance wall (x = {length:.2f} m)",
                      "side wall (y = 0)", f"side wall (y = {width:.2f} m)")
        self.touched: tuple[str, ...] = ()

    def corners(self, body: Body, half_length: float, half_width: float
                ) -> list[tuple[float, float]]:
        """Field coordinates of the outline's four corners."""
        c, s = math.cos(body.heading), math.sin(body.heading)
        x, y = body.x, body.y
        out = []
        for bx, by in ((half_length, half_width), (half_length, -half_width),
                       (-half_length, -half_width), (-half_length, half_width)):
            out.append((x + bx * c - by * s, y + bx * s + by * c))
        return out

    def resolve(self, body: Body, half_length: float, half_width: float, mass: float,
                inertia: float) -> bool:
        """Push ``body`` back inside and apply impact impulses. Returns True if it touched.

        Every penetrating corner is a contact; their impulses are solved together by the
        shared contact solver (``collision.solve_contacts``), so a flush face hit gets equal
        impulses at both corners and no spurious spin, and a robot pushed into a wall rests
        without chatter.
        """
        # Walls as (inward normal x, y, offset): a point p is outside by off - p·n.
        walls = ((1.0, 0.0, 0.0), (-1.0, 0.0, -self.length),
                 (0.0, 1.0, 0.0), (0.0, -1.0, -self.width))
        contacts: list[tuple[float, float, float, float]] = []  # corner offset r, normal n
        corners: list[tuple[float, float]] | None = None
        self.touched = ()
        for name, (nx, ny, off) in zip(self.names, walls, strict=True):
            if corners is None:  # at first, and again once a push has moved the body
                corners = self.corners(body, half_length, half_width)
            depth = 0.0  # of the corner farthest outside, m
            for cx, cy in corners:
                d = off - (cx * nx + cy * ny)
                if d > depth:
                    depth = d
            if depth == 0.0:  # no corner outside
                continue
            self.touched += (name,)
            body.x += nx * depth
            body.y += ny * depth
            contacts += [(cx - body.x + nx * depth, cy - body.y + ny * depth, nx, ny)
                         for cx, cy in corners if off - (cx * nx + cy * ny) > 0.0]
            corners = None
        if not contacts:
            return False
        solve_contacts(body, mass, inertia, None, 0.0, 0.0, contacts, self.restitution,
                       self.friction)
        return True


__all__ = ["RESTING_SPEED", "Body", "FieldWalls"]
