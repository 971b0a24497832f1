"""Bindings and autonomous: field-relative teleop on an Xbox controller, and an autonomous
that follows a 3 m S-curve with wpimath's HolonomicDriveController on the robot's odometry."""

from __future__ import annotations

import math

import commands2
import constants
import wpilib
import wpimath
from subsystems.drivesubsystem import DriveSubsystem
from wpimath.controller import (
    HolonomicDriveController,
    PIDController,
    ProfiledPIDControllerRadians,
)
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import ChassisSpeeds
from wpimath.trajectory import TrajectoryConfig, TrajectoryGenerator, TrapezoidProfileRadians

AUTO_START = Pose2d(2.0, 4.0, Rotation2d(0.0))
AUTO_END = Pose2d(5.0, 4.0, Rotation2d(0.0))
AUTO_HEADING = Rotation2d.fromDegrees(-30.0)  # where the robot faces at the end of the path


class FollowPath(commands2.Command):
    """Follow a trajectory on the drivetrain's odometry, then stop."""

    def __init__(self, drive: DriveSubsystem):
        super().__init__()
        self.drive = drive
        config = TrajectoryConfig(2.5, 2.5)
        config.setKinematics(constants.KINEMATICS)
        self.trajectory = TrajectoryGenerator.generateTrajectory(
            AUTO_START, [Translation2d(3.0, 4.6), Translation2d(4.0, 3.4)], AUTO_END, config)
        self.controller = HolonomicDriveController(
            PIDController(3.0, 0.0, 0.0), PIDController(3.0, 0.0, 0.0),
            ProfiledPIDControllerRadians(4.0, 0.0, 0.0,
                                         TrapezoidProfileRadians.Constraints(math.pi, math.pi)))
        self.timer = wpilib.Timer()
        self.addRequirements(drive)

    def initialize(self) -> None:
        self.drive.reset_pose(AUTO_START)
        self.timer.restart()

    def execute(self) -> None:
        t = self.timer.get()
        if t > self.trajectory.totalTime() + 1.0:
            self.drive.drive(ChassisSpeeds())
            return
        goal = self.trajectory.sample(t)
        self.drive.drive(self.controller.calculate(self.drive.pose(), goal, AUTO_HEADING))


class RobotContainer:
    def __init__(self) -> None:
        self.drive = DriveSubsystem()
        self.controller = wpilib.XboxController(0)
        self.drive.setDefaultCommand(commands2.RunCommand(
            lambda: self.drive.drive_field_relative(
                -wpimath.applyDeadband(self.controller.getLeftY(), 0.05) * constants.MAX_SPEED,
                -wpimath.applyDeadband(self.controller.getLeftX(), 0.05) * constants.MAX_SPEED,
                -wpimath.applyDeadband(self.controller.getRightX(), 0.05)
                * constants.MAX_ANGULAR_SPEED),
            self.drive))

    def getAutonomousCommand(self) -> commands2.Command:
        return FollowPath(self.drive)
