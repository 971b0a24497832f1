"""A commands-v2 robot on a REV MAXSwerve drivetrain whose SPARK MAXes run their own
velocity and position loops. Nothing here knows about simserver: `python -m robotpy sim
--simserver` runs it against simserver's physics, and simserver.toml says which device is
which."""

from __future__ import annotations

import commands2
from robotcontainer import RobotContainer


class MyRobot(commands2.TimedCommandRobot):
    """Runs the command scheduler every loop; autonomous schedules the container's command."""

    def robotInit(self) -> None:
        self.container = RobotContainer()
        self.autonomous_command: commands2.Command | None = None

    def autonomousInit(self) -> None:
        self.autonomous_command = self.container.getAutonomousCommand()
        commands2.CommandScheduler.getInstance().schedule(self.autonomous_command)

    def teleopInit(self) -> None:
        if self.autonomous_command is not None:
            self.autonomous_command.cancel()
