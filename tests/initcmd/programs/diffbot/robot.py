"""DifferentialDriveBot-like test program: autonomous drives an arc for 2 s, then stops;
every loop it writes its odometry pose to $ODOMETRY_LOG (JSON: x m, y m, heading deg)."""

import json
import os

import wpilib
from drivetrain import Drivetrain


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.drive = Drivetrain()
        self.timer = wpilib.Timer()

    def robotPeriodic(self) -> None:
        self.drive.update_odometry()
        log = os.environ.get("ODOMETRY_LOG")
        if log:
            pose = self.drive.odometry.getPose()
            with open(log, "w") as f:
                json.dump({"x": pose.X(), "y": pose.Y(),
                           "heading": pose.rotation().degrees()}, f)

    def autonomousInit(self) -> None:
        self.timer.restart()

    def autonomousPeriodic(self) -> None:
        if self.timer.get() < 2.0:
            self.drive.drive(1.5, 0.6)
        else:
            self.drive.drive(0.0, 0.0)
