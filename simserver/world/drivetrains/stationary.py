"""A robot without a drivetrain (a config with no ``[drivetrain]`` table): it stays at its
start pose. It stands in for a drivetrain in the world so that mechanisms, sensors, pneumatics
and the battery run as usual on a bench-test robot (an arm or an elevator program).

    still = Stationary(mass=27.0, moment_of_inertia=2.0)
    still.reset(2.0, 4.0, 0.0)
    bus, supply = still.substep(0.005, source, enabled=True)   # (source V, 0 A)

A :class:`~simserver.models.api.Drivetrain` with no motor outputs: no joints, no outputs, and
collisions do not move it.
"""

from __future__ import annotations

from typing import Any

from simserver.models.api import DriveView, Joint
from simserver.models.battery import Source


class Stationary:
    """A chassis fixed at its start pose. mass: kg; moment_of_inertia: yaw inertia, kg·m²
    (used only when another robot bumps into it)."""

    def __init__(self, mass: float, moment_of_inertia: float):
        self.mass = mass
        self.moment_of_inertia = moment_of_inertia
        self._pose = (0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """Place the robot at (x m, y m, heading rad), where it stays."""
        self._pose = (x, y, heading)

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad): the start pose."""
        return self._pose

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx, vy, omega) in the robot frame: always zero."""
        return 0.0, 0.0, 0.0

    def place(self, x: float, y: float, vx: float, vy: float, omega: float) -> None:
        """A push does not move it (it has no wheels to roll on)."""

    def begin_tick(self, robot: DriveView) -> None:
        """No inputs to take."""

    def substep(self, dt: float, source: Source, enabled: bool) -> tuple[float, float]:
        """(bus voltage V with no drivetrain load, supply current 0 A)."""
        return source.voltage(0.0), 0.0

    @property
    def travelled(self) -> float:
        """It never moves: 0 m."""
        return 0.0

    def end_tick(self) -> None:
        """Nothing to close."""

    def motor_states(self) -> dict[str, tuple[float, float]]:
        """No motor outputs."""
        return {}

    def joint(self, motor: str) -> Joint | None:
        """No motor turns a wheel or a module of it."""
        return None

    def outputs(self) -> dict[str, Any]:
        """Nothing to publish."""
        return {}
