"""A shooter: an indexer feeds pieces from the robot's storage (an intake) to a wheel that
launches them. It touches pieces only through ``robot.pieces``
(:class:`~simserver.models.api.PieceAccess`) and reads the mechanisms it names through
``robot.mechanism``.

While the indexer's duty is at least ``min_duty``, every ``feed_interval`` s of running one
piece is taken from the ``feed`` mechanism (``hand_over``) and launched:

- from the exit point ``exit`` (robot frame; with a turret, turned with it about the turret's
  axis ``axis``), at ``pitch`` (+ the hood's angle) above horizontal and ``yaw`` (+ the
  turret's angle) CCW from forward, plus the robot's velocity at that point;
- at a fixed ``speed``, or off a flywheel mechanism: the wheel (radius r, turning ``ratio``
  times the flywheel's speed ω, moment of inertia J) and the piece (mass m) exchange momentum
  until the piece leaves at ``efficiency`` (η) times the wheel's slowed surface speed.
  Angular momentum is conserved about the flywheel's axis::

      J·ω = J·ω' + m·v·r·ratio,   v = η·r·ratio·ω'
      ω'  = ω · J / (J + η·m·(r·ratio)²)

  so each shot takes ``m·v·r·ratio`` N·m·s out of the flywheel (its speed drop), which its
  motor then makes up. A flywheel turning backwards launches nothing: the piece drops out at
  the exit point.

No spin is given to the pieces. The indexer motor's load:
:class:`~simserver.models.handling.roller.FreeRunning`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simserver.models.api import RobotView
from simserver.models.handling.geometry import (
    Point2,
    Point3,
    launch_velocity,
    rotate,
    to_field,
    velocity_to_field,
)
from simserver.models.handling.roller import FreeRunning


@dataclass(frozen=True)
class Aim:
    """Where and how a shooter launches. exit: robot-frame point at turret angle 0, m. axis:
    the turret's axis (x, y), m. pitch, yaw: rad (offsets to the hood's and turret's angles
    when those are named). hood, turret: mechanism names or None."""

    exit: Point3
    pitch: float
    yaw: float
    hood: str | None = None
    turret: str | None = None
    axis: Point2 = (0.0, 0.0)


@dataclass(frozen=True)
class Wheel:
    """What launches the pieces: a ``flywheel`` mechanism (name) with wheel ``radius`` m,
    ``ratio`` wheel turns per flywheel turn and ``efficiency`` exit speed per surface speed;
    or the ``roller`` of an intake (name; ``ratio`` wheel turns per turn of its motor); or a
    fixed ``speed`` m/s. piece_mass: kg (None: each piece's own)."""

    piece_mass: float | None
    flywheel: str | None = None
    radius: float = 0.0
    ratio: float = 1.0
    efficiency: float = 1.0
    speed: float = 0.0
    roller: str | None = None

    def shot(self, omega: float, inertia: float, mass: float) -> tuple[float, float]:
        """(exit speed m/s, angular impulse on the flywheel N·m·s) of a shot of a piece of
        ``mass`` kg (``piece_mass`` when set) off a flywheel turning at ``omega`` rad/s with
        moment of inertia ``inertia`` kg·m² (see the module docstring)."""
        if omega <= 0.0:
            return 0.0, 0.0
        m = mass if self.piece_mass is None else self.piece_mass
        lever = self.radius * self.ratio
        after = omega * inertia / (inertia + self.efficiency * m * lever * lever)
        speed = self.efficiency * lever * after
        return speed, -m * speed * lever


class Shooter:
    """See the module docstring. motor: the indexer's output; feed: the storage mechanism."""

    def __init__(self, motor: str, indexer: FreeRunning, min_duty: float,
                 feed_interval: float, feed: str, wheel: Wheel, aim: Aim):
        self.motor = motor
        self.indexer = indexer
        self.min_duty = min_duty
        self.feed_interval = feed_interval
        self.feed = feed
        self.wheel = wheel
        self.aim = aim
        self.shots = 0
        self.last_speed = 0.0
        self._running = 0.0

    def reset(self) -> None:
        self.shots = 0
        self.last_speed = 0.0
        self._running = 0.0
        self.indexer.reset()

    def step(self, dt: float, robot: RobotView) -> None:
        volts = self.indexer.step(robot, self.motor, dt)
        if robot.motor(self.motor) < self.min_duty or volts <= 0.0:
            self._running = 0.0
            return
        self._running += dt
        if self._running >= self.feed_interval - 1e-9:
            self._running -= self.feed_interval
            source = robot.mechanism(self.feed)
            piece = source.hand_over(robot) if source is not None else None
            if piece is not None:
                self._launch(robot, piece)

    def _angle(self, robot: RobotView, name: str | None) -> float:
        """Angle of mechanism ``name``'s joint, rad (0 for none)."""
        if name is None:
            return 0.0
        return float(robot.mechanism(name).joint()[0])

    def _speed(self, robot: RobotView, mass: float) -> float:
        """Exit speed of a shot of a piece of ``mass`` kg now, m/s; takes the shot's momentum
        out of the flywheel."""
        wheel = self.wheel
        if wheel.roller is not None:  # a free-running roller: no inertia, no speed drop
            omega = float(robot.mechanism(wheel.roller).roller_speed())
            return wheel.efficiency * wheel.radius * wheel.ratio * max(omega, 0.0)
        if wheel.flywheel is None:
            return wheel.speed
        fly = robot.mechanism(wheel.flywheel)
        speed, impulse = wheel.shot(float(fly.joint()[1]), fly.model.moment_of_inertia, mass)
        if impulse:
            fly.apply_impulse(impulse)
        return speed

    def _launch(self, robot: RobotView, piece: int) -> None:
        aim = self.aim
        turn = self._angle(robot, aim.turret)
        pitch = aim.pitch + self._angle(robot, aim.hood)
        ax, ay = aim.axis
        ex, ey, ez = aim.exit
        dx, dy = rotate(ex - ax, ey - ay, turn)
        at = (ax + dx, ay + dy, ez)
        pieces = robot.pieces
        assert pieces is not None  # the feed held a piece
        speed = self._speed(robot, pieces.mass(piece))
        velocity = launch_velocity(speed, pitch, aim.yaw + turn)
        pose = robot.pose
        pieces.release(piece, to_field(at, pose),
                       velocity_to_field(velocity, at, pose, robot.velocity))
        self.shots += 1
        self.last_speed = speed

    def joint(self) -> tuple[float, float]:
        """(angle rad, speed rad/s) of the indexer's motor shaft, for an encoder on it."""
        return self.indexer.position, self.indexer.speed

    def outputs(self) -> dict[str, Any]:
        return {"shots": self.shots, "exit_speed": self.last_speed}

