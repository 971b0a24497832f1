"""Sensors: encoders and a yaw gyro, turning true motion into what robot code reads.

    >>> enc = Encoder(units_per_metre=1 / 0.3048)  # feet
    >>> enc.advance(0.3048, 1.0)
    >>> enc.position, round(enc.velocity, 4)
    (1.0, 3.2808)
"""

from __future__ import annotations

import math

import numpy as np


class Encoder:
    """An encoder on a wheel axle or motor shaft, read in any unit.

    units_per_metre: reading units per metre of wheel travel (may change with gearing; pass the
    current value to :meth:`advance`). ticks: report whole counts (floor), as a quadrature
    counter does.
    """

    def __init__(self, units_per_metre: float, ticks: bool = False):
        self.units_per_metre = units_per_metre
        self.ticks = ticks
        self.reset()

    def reset(self) -> None:
        """Zero the count."""
        self._raw = 0.0
        self.velocity = 0.0

    def advance(self, distance: float, speed: float, units_per_metre: float | None = None) -> None:
        """Add ``distance`` m of wheel travel; ``speed`` m/s is the wheel speed now."""
        scale = self.units_per_metre if units_per_metre is None else units_per_metre
        self._raw += distance * scale
        self.velocity = speed * scale

    @property
    def position(self) -> float:
        """Accumulated reading, in the encoder's unit (whole counts for ticks)."""
        return float(math.floor(self._raw)) if self.ticks else self._raw


class Gyro:
    """A yaw gyro: 0 at reset, CCW positive, continuous (not wrapped).

    noise: standard deviation of white noise on each yaw reading, rad. drift: constant rate
    bias, rad/s. rng: the seeded generator every noise source draws from.
    """

    def __init__(self, noise: float, drift: float, rng: np.random.Generator):
        self.noise = noise
        self.drift = drift
        self.rng = rng
        self.reset(0.0)

    def reset(self, heading: float) -> None:
        """Zero the gyro with the robot at ``heading`` rad."""
        self._zero = heading
        self._bias = 0.0
        self.yaw = 0.0
        self.rate = 0.0

    def read(self, heading: float, omega: float, elapsed: float) -> None:
        """Sample at true ``heading`` rad and yaw rate ``omega`` rad/s, ``elapsed`` s later."""
        self._bias += self.drift * elapsed
        noise = self.rng.normal(0.0, self.noise) if self.noise > 0.0 else 0.0
        self.yaw = heading - self._zero + self._bias + noise
        self.rate = omega + self.drift
