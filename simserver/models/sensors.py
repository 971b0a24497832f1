"""Sensors: encoders and a yaw gyro, turning true motion into what robot code reads.

Every encoder, on a drivetrain's wheel or module or on a mechanism's output, reads a
:class:`~simserver.models.api.Joint` through the one conversion in :class:`Encoder`:

    >>> enc = Encoder("length", per_unit=0.3048)  # feet, on a wheel's travel
    >>> enc.zero(Joint(0.0, 0.0, radius=0.0762))
    >>> enc.read(Joint(0.3048, 1.0, radius=0.0762))
    (1.0, 3.280839895013123)
"""

from __future__ import annotations

import math

import numpy as np

from simserver.models.api import Joint


class Encoder:
    """An encoder on a joint, read in its unit.

    kind: "length" (reads the output's travel), "angle" or "ticks" (read a shaft's angle).
    per_unit: m or rad per reading unit (ticks: 2π / counts per revolution). reversed: counts
    against the joint's positive direction. on_motor: on the motor shaft, through the joint's
    gearing plus its rotor term, rather than on the output. absolute: (offset rad, full range
    rad) of an absolute encoder, which reads the shaft angle within its range; None for a
    relative one, which counts from where :meth:`zero` found the joint (whole counts in
    ticks, as a quadrature counter does).
    """

    def __init__(self, kind: str, per_unit: float, reversed: bool = False,
                 on_motor: bool = False, absolute: tuple[float, float] | None = None):
        self.kind = kind
        self.per_unit = per_unit
        self.sign = -1.0 if reversed else 1.0
        self.on_motor = on_motor
        self.absolute = absolute
        self._zero = 0.0

    def zero(self, joint: Joint) -> None:
        """Count from the joint's present position."""
        self._zero = joint.position

    def read(self, joint: Joint) -> tuple[float, float]:
        """(position, velocity) of ``joint`` in the encoder's unit (per second)."""
        kind, sign, per_unit = self.kind, self.sign, self.per_unit
        radius, gearing = joint.radius, joint.gearing
        to_shaft = 1.0 if radius == 0.0 or kind == "length" else 1.0 / radius  # m -> drum rad
        if kind != "length" and self.on_motor:
            to_shaft *= gearing
        if self.absolute is not None:
            offset, full_range = self.absolute
            angle = (sign * joint.position * to_shaft + offset) % full_range
            return angle / per_unit, sign * joint.velocity * to_shaft / per_unit
        position = (joint.position - self._zero) * to_shaft
        velocity = joint.velocity * to_shaft
        if self.on_motor:
            to_reading = radius / gearing if kind == "length" else 1.0  # shaft rad -> reading
            position = position + joint.rotor * to_reading
            velocity = velocity + joint.rotor_rate * to_reading
        reading = sign * position / per_unit
        if kind == "ticks":
            reading = float(math.floor(reading))
        return reading, sign * velocity / per_unit


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
