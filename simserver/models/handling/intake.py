"""A roller intake: takes loose game pieces in through a zone of the robot outline, holds
them, lets them out again. It touches pieces only through ``robot.pieces``
(:class:`~simserver.models.api.PieceAccess`).

Each substep, with the roller's duty ``d`` (inversion applied, times ``sign``: +1 when a
positive duty takes pieces in):

- ``d ≥ min_duty`` (and the controller drives that way): while it holds fewer than
  ``capacity``, it takes the loose pieces whose footprint overlaps ``zone`` and whose centre
  is below ``height`` (those nearest the zone's first edge first), and carries them at
  ``hold``, each further one ``spacing`` behind (−x);
- ``d ≤ −min_duty``: it lets the last piece taken out, from the middle of the zone at the
  height of ``hold``, at ``eject_speed`` relative to the robot, out of the zone away from its
  first edge (plus the robot's own velocity there); then one more each ``eject_interval``;
- a shooter can take pieces from it (:meth:`Intake.hand_over`, first taken first).

Without pieces on the field (``robot.pieces`` None) it holds nothing. The roller's motor
load: :class:`~simserver.models.handling.roller.FreeRunning`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from simserver.models.api import RobotView
from simserver.models.handling.geometry import (
    Point2,
    Point3,
    away_from_first_edge,
    centroid,
    to_field,
    velocity_to_field,
)
from simserver.models.handling.roller import FreeRunning


class Intake:
    """See the module docstring. zone: robot-frame convex polygon, counter-clockwise, m.
    height: m. hold: robot-frame point, m. spacing: m. eject_speed: m/s. eject_interval: s.
    sign: +1 or −1."""

    def __init__(self, motor: str, roller: FreeRunning, zone: Sequence[Point2],
                 height: float, capacity: int, hold: Point3, spacing: float,
                 eject_speed: float, eject_interval: float, min_duty: float, sign: float,
                 name: str = ""):
        self.name = name
        self.motor = motor
        self.roller = roller
        self.zone = tuple(zone)
        self.height = height
        self.capacity = capacity
        self.hold = hold
        self.spacing = spacing
        self.eject_speed = eject_speed
        self.eject_interval = eject_interval
        self.min_duty = min_duty
        self.sign = sign
        mx, my = centroid(self.zone)
        self.mouth: Point3 = (mx, my, hold[2])
        self.outward = away_from_first_edge(self.zone)
        self.held: list[int] = []
        self._next_eject = -math.inf
        self._unloaded = True  # its preloaded pieces are still to be taken up

    def reset(self) -> None:
        """Empty (until its preloaded pieces are taken up in the first step), roller at
        rest."""
        self.held = []
        self._next_eject = -math.inf
        self._unloaded = True
        self.roller.reset()

    def joint(self) -> tuple[float, float]:
        """(angle rad, speed rad/s) of the roller's motor shaft: what an encoder on it reads
        (a SPARK's, which REV's simulation needs to see the roller turn)."""
        return self.roller.position, self.roller.speed

    def roller_speed(self) -> float:
        """Speed of the roller's motor in its intake direction, rad/s (negative while it
        ejects)."""
        return self.roller.speed * self.sign

    def holding(self) -> bool:
        """Whether it holds a piece (what a beam break across it sees)."""
        return bool(self.held)

    def step(self, dt: float, robot: RobotView) -> None:
        volts = self.roller.step(robot, self.motor, dt) * self.sign
        duty = robot.motor(self.motor) * self.sign
        pieces = robot.pieces
        if pieces is None:
            return
        if self._unloaded:
            self._unloaded = False
            for piece in pieces.preloaded(self.name):
                pieces.carry(piece, self.slot(len(self.held)))
                self.held.append(piece)
        if duty >= self.min_duty and volts > 0.0:
            room = self.capacity - len(self.held)
            if room > 0:
                for piece in pieces.loose_in(self.zone, self.height)[:room]:
                    pieces.take(piece, self.slot(len(self.held)))
                    self.held.append(piece)
        elif duty <= -self.min_duty and volts < 0.0 and self.held:
            if robot.time >= self._next_eject - 1e-9:
                self._eject(robot)
                self._next_eject = robot.time + self.eject_interval
            return
        self._next_eject = -math.inf

    def _eject(self, robot: RobotView) -> None:
        pieces = robot.pieces
        assert pieces is not None
        piece = self.held.pop()
        ux, uy = self.outward
        s = self.eject_speed
        pose = robot.pose
        pieces.release(piece, to_field(self.mouth, pose),
                       velocity_to_field((ux * s, uy * s, 0.0), self.mouth, pose,
                                         robot.velocity))

    def hand_over(self, robot: RobotView) -> int | None:
        """The piece taken first, out of the intake (a shooter's indexer took it), or None
        when empty; the others move up a place."""
        if not self.held:
            return None
        piece = self.held.pop(0)
        pieces = robot.pieces
        if pieces is not None:
            for i, other in enumerate(self.held):
                pieces.carry(other, self.slot(i))
        return piece

    def slot(self, index: int) -> Point3:
        """Robot-frame point where the ``index``-th held piece sits, m."""
        x, y, z = self.hold
        return x - index * self.spacing, y, z

    def outputs(self) -> dict[str, Any]:
        return {"held": len(self.held), "beam_break": bool(self.held)}
