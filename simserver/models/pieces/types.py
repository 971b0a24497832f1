"""What a game piece is, as data: shape and size, mass, and how it meets the carpet and the air.

    fuel = PieceType("fuel", "sphere", radius=0.075, height=0.15, mass=0.215, restitution=0.6,
                     friction=0.7, rolling=0.03, drag_coefficient=0.47, drag_area=0.0177,
                     class_id=0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Shape = Literal["sphere", "ring", "cylinder"]
"""sphere: a ball (rolls); ring: a torus lying flat (slides); cylinder: a cylinder lying on its
side along the yaw direction (rolls across, slides along; its floor footprint is modelled as a
circle of ``radius``)."""

LOOSE, FLIGHT, HELD, GONE = 0, 1, 2, 3
"""Where a piece is: loose on the carpet, in flight, held by a robot, gone (scored and removed)."""

STATES = ("floor", "flight", "held", "gone")
"""Names of the states above, by code."""


@dataclass(frozen=True)
class PieceType:
    """One kind of game piece.

    radius: of its footprint on the carpet (a circle), m; height: its height lying on the
    carpet, m (its centre rests at height / 2); mass, kg; restitution: against the carpet,
    walls, elements, robots and other pieces, 0..1; friction: sliding friction coefficient
    against the carpet and against bumpers; rolling: rolling-resistance coefficient (a rolling
    piece decelerates at rolling·g; a piece that cannot roll uses ``friction``);
    drag_coefficient and drag_area (m², frontal): quadratic air drag
    F = ½·ρ·Cd·A·v²; lift_coefficient: Magnus lift per unit spin ratio (0: none);
    class_id: the object detector's class (PhotonVision's objDetectId, Limelight's classID).
    """

    name: str
    shape: Shape
    radius: float
    height: float
    mass: float
    restitution: float
    friction: float
    rolling: float
    drag_coefficient: float
    drag_area: float
    class_id: int
    lift_coefficient: float = 0.0

    def __post_init__(self) -> None:
        for key in ("radius", "height", "mass"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"piece type {self.name!r}: {key} must be positive, got {value}")
        if not 0.0 <= self.restitution <= 1.0:
            raise ValueError(f"piece type {self.name!r}: restitution must be in 0..1")

    @property
    def rolls(self) -> bool:
        """Whether it rolls on the carpet (a sphere, or a cylinder across its axis)."""
        return self.shape != "ring"
