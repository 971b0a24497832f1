"""A roller or indexer motor that runs free: the load of an intake's rollers and a shooter's
indexer on the battery.

The motor is taken to run at its steady no-load speed at every substep (no inertia, no load
from the pieces it moves): it draws its free current, with the sign of the applied voltage,
and turns at ``ω = (V − I·R)·Kv``; below ``I_free·R`` it stalls on its own friction and
draws ``V/R``. So a running roller costs the battery ``count × I_free`` (a 775pro: 0.7 A ×
V/V_bus of supply current), as it does on a real robot with nothing in it.

    roller = FreeRunning(motor_by_name("775pro"))
    volts = roller.step(robot, "roller", dt)   # runs the controller, reports the current
"""

from __future__ import annotations

import math

from simserver.models.api import RobotView
from simserver.models.motor import MotorSpec


class FreeRunning:
    """One motor output running free (see the module docstring)."""

    def __init__(self, spec: MotorSpec):
        self.spec = spec
        self.speed = 0.0  # rad/s, at the end of the last substep
        self.position = 0.0  # rad the shaft turned since reset

    def reset(self) -> None:
        self.speed = 0.0
        self.position = 0.0

    def step(self, robot: RobotView, motor: str, dt: float) -> float:
        """Run motor ``motor``'s controller for ``dt`` s and report its current; the voltage
        across each motor's terminals, V (0 while the controller coasts)."""
        volts = robot.motor_voltage(motor, self.speed, dt)
        if robot.motor_coasting(motor):
            self.speed = 0.0
            robot.motor_current(motor, 0.0, 0.0)
            return 0.0
        spec = self.spec
        current = volts / spec.R
        if abs(current) > spec.free_current:
            current = math.copysign(spec.free_current, volts)
        self.speed = (volts - current * spec.R) * spec.kv
        self.position += self.speed * dt
        robot.motor_current(motor, current, self.speed, volts)
        return volts
