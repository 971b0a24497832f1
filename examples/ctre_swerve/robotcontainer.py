"""Bindings and autonomous, as in a Tuner X commands-v2 project: field-centric teleop on an
Xbox controller, and an autonomous that follows a 3 m S-curve with wpimath's
HolonomicDriveController on CTRE's pose estimate."""

from __future__ import annotations

import math

import commands2
from commands2.button import CommandXboxController
from generated.tuner_constants import TunerConstants
from phoenix6 import swerve
from subsystems.command_swerve_drivetrain import CommandSwerveDrivetrain
from wpilib import Field2d, SmartDashboard, Timer
from wpimath.controller import (
    HolonomicDriveController,
    PIDController,
    ProfiledPIDControllerRadians,
)
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.trajectory import TrajectoryConfig, TrajectoryGenerator, TrapezoidProfileRadians

AUTO_START = Pose2d(2.0, 2.0, Rotation2d(0.0))
AUTO_END = Pose2d(5.0, 3.0, Rotation2d(0.0))
AUTO_HEADING = Rotation2d.fromDegrees(30.0)  # where the robot faces at the end of the path
MAX_SPEED = TunerConstants.speed_at_12_volts  # m/s
MAX_ANGULAR_RATE = 1.5 * math.tau  # rad/s


class FollowPath(commands2.Command):
    """Follow a trajectory on the drivetrain's own odometry, then hold the wheels in an X."""

    def __init__(self, drivetrain: CommandSwerveDrivetrain):
        super().__init__()
        self.drivetrain = drivetrain
        config = TrajectoryConfig(2.5, 2.0)
        self.trajectory = TrajectoryGenerator.generateTrajectory(
            AUTO_START, [Translation2d(3.2, 2.5)], AUTO_END, config)
        self.controller = HolonomicDriveController(
            PIDController(5.0, 0.0, 0.0), PIDController(5.0, 0.0, 0.0),
            ProfiledPIDControllerRadians(5.0, 0.0, 0.0,
                                         TrapezoidProfileRadians.Constraints(4.0, 8.0)))
        self.speeds = swerve.requests.ApplyRobotSpeeds()
        self.brake = swerve.requests.SwerveDriveBrake()
        self.timer = Timer()
        self.addRequirements(drivetrain)

    def initialize(self) -> None:
        self.drivetrain.reset_pose(AUTO_START)
        self.timer.restart()

    def execute(self) -> None:
        t = self.timer.get()
        if t > self.trajectory.totalTime() + 1.0:
            self.drivetrain.set_control(self.brake)
            return
        goal = self.trajectory.sample(t)
        speeds = self.controller.calculate(self.drivetrain.get_state().pose, goal,
                                           AUTO_HEADING)
        self.drivetrain.set_control(self.speeds.with_speeds(speeds))


class RobotContainer:
    """The robot's subsystems, controls and autonomous."""

    def __init__(self) -> None:
        self.drivetrain = TunerConstants.create_drivetrain()
        self.joystick = CommandXboxController(0)
        self.drive = (
            swerve.requests.FieldCentric()
            .with_deadband(MAX_SPEED * 0.1).with_rotational_deadband(MAX_ANGULAR_RATE * 0.1)
            .with_drive_request_type(swerve.SwerveModule.DriveRequestType.OPEN_LOOP_VOLTAGE)
        )
        self.drivetrain.setDefaultCommand(self.drivetrain.apply_request(
            lambda: self.drive.with_velocity_x(-self.joystick.getLeftY() * MAX_SPEED)
            .with_velocity_y(-self.joystick.getLeftX() * MAX_SPEED)
            .with_rotational_rate(-self.joystick.getRightX() * MAX_ANGULAR_RATE)))
        self.field = Field2d()
        SmartDashboard.putData("Field", self.field)
        self.drivetrain.register_telemetry(lambda state: self.field.setRobotPose(state.pose))

    def getAutonomousCommand(self) -> commands2.Command:
        return FollowPath(self.drivetrain)
