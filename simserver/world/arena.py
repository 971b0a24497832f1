"""Several robots on one field: each robot is a :class:`~simserver.world.World` (its own
drivetrain, battery, mechanisms and seeded generator); the arena steps them substep by substep
and resolves robot-robot contacts after each substep, with the field's restitution and friction,
then steps the field's game pieces (carried by the first world: ``World.field_pieces``).

Nothing is shared between arenas or worlds, so two arenas can run in one process.

    arena = Arena({"main": World(cfg), "opponent": World(other_cfg)}, restitution=0.2,
                  friction=0.3)
    arena.step(0.02)
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from simserver.models.collision import resolve_pair
from simserver.world import World


class Arena:
    """Robots by name, the first being the one the robot program drives."""

    def __init__(self, worlds: Mapping[str, World], restitution: float, friction: float):
        if not worlds:
            raise ValueError("an arena needs at least one robot")
        substeps = {w.substep for w in worlds.values()}
        if len(substeps) != 1:
            raise ValueError(f"every robot of an arena must use the same substep, got "
                             f"{sorted(substeps)}")
        self.worlds = dict(worlds)
        self.restitution = restitution
        self.friction = friction
        self.substep = substeps.pop()
        self._list = list(self.worlds.values())
        self._pairs = list(itertools.combinations(range(len(self._list)), 2))
        for w in self._list:
            w.neighbours = tuple(other for other in self._list if other is not w)

    @property
    def time(self) -> float:
        """Simulated time, s (every world keeps the same)."""
        return next(iter(self.worlds.values())).time

    def reset(self) -> None:
        """Every robot back to its start."""
        for w in self.worlds.values():
            w.reset()

    def step(self, dt: float) -> None:
        """Advance every robot ``dt`` seconds in whole substeps (at least one)."""
        n = max(1, round(dt / self.substep))
        worlds = self.worlds.values()
        pieces = self._list[0].field_pieces
        for w in worlds:
            w.begin_tick()
        for _ in range(n):
            for w in worlds:
                w.advance()
            self.collide()
            if pieces is not None:
                pieces.substep(self.substep)
        for w in worlds:
            w.end_tick(n)

    def collide(self) -> None:
        """Resolve every pair of robots in contact (bounding circles first)."""
        robots = self._list
        spots = [(*w.pose[:2], w.reach) for w in robots]  # x m, y m, reach m
        touched = [False] * len(robots)
        for i, j in self._pairs:
            ax, ay, ar = spots[i]
            bx, by, br = spots[j]
            dx, dy, reach = ax - bx, ay - by, ar + br
            if dx * dx + dy * dy > reach * reach:
                continue
            a, b = robots[i], robots[j]
            body_a, body_b = a.body(), b.body()
            if resolve_pair(body_a, a.polygon, a.mass, a.inertia, body_b, b.polygon, b.mass,
                            b.inertia, self.restitution, self.friction):
                a.set_body(body_a)
                b.set_body(body_b)
                spots[i] = (body_a.x, body_a.y, ar)
                spots[j] = (body_b.x, body_b.y, br)
                touched[i] = touched[j] = True
        for w, t in zip(robots, touched, strict=True):
            w.robot_contact(t)
