"""A robot without a drivetrain (a config with no ``[drivetrain]`` table): it stays at its
start pose. It stands in for a drivetrain in the world so that mechanisms, sensors, pneumatics
and the battery run as usual on a bench-test robot (an arm or an elevator program).

    still = Stationary(mass=27.0, moment_of_inertia=2.0)
    still.reset(2.0, 4.0, 0.0)
    bus, supply = still.substep(world, 0.005, source, enabled=True)   # (source V, 0 A)

It offers the members of :class:`simserver.world.holonomic.Holonomic` that the world uses, with no
motor outputs of its own: wheels, modules and joints are empty, and collisions do not move it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simserver.models.battery import Source

if TYPE_CHECKING:
    from simserver.world.world import World


class Stationary:
    """A chassis fixed at its start pose. mass: kg; moment_of_inertia: yaw inertia, kg·m²
    (used only when another robot bumps into it)."""

    def __init__(self, mass: float, moment_of_inertia: float):
        self.mass = mass
        self.moment_of_inertia = moment_of_inertia
        self.drive: tuple[()] = ()
        self.steer: tuple[()] = ()
        self.currents: list[float] = []
        self._pose = (0.0, 0.0, 0.0)

    @property
    def motors(self) -> tuple[str, ...]:
        """No motor output drives it."""
        return ()

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

    def place(self, x: float, y: float) -> None:
        """A push does not move it (it has no wheels to roll on)."""

    def set_body_velocity(self, vx: float, vy: float, omega: float) -> None:
        """An impact does not set it moving."""

    def has_joint(self, motor: str) -> bool:
        """No motor turns a wheel or a module of it."""
        return False

    def joint(self, motor: str) -> tuple[float, float, float, float]:
        """Never called: :meth:`has_joint` is always False."""
        raise KeyError(motor)

    def rotor_coupling(self, motor: str) -> tuple[float, float]:
        """No modules, no coupling: (0, 0)."""
        return 0.0, 0.0

    def module_states(self) -> list[tuple[float, float]]:
        """No swerve modules."""
        return []

    def wheel_speeds(self) -> tuple[float, ...]:
        """No wheels."""
        return ()

    def begin_tick(self, world: World) -> None:
        """No inputs to take."""

    def substep(self, world: World, h: float, source: Source, enabled: bool) -> tuple[float,
                                                                                      float]:
        """(bus voltage V with no drivetrain load, supply current 0 A)."""
        return source.voltage(0.0), 0.0

    def end_tick(self, world: World) -> None:
        """No motor currents to report."""
