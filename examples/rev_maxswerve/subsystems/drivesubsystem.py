"""The swerve drivetrain: four MAXSwerve modules, an ADIS16470 for heading, odometry on the
modules' encoders and the gyro, published as a Field2d."""

from __future__ import annotations

import commands2
import constants
import wpilib
from wpimath.geometry import Pose2d, Rotation2d
from wpimath.kinematics import ChassisSpeeds, SwerveDrive4Odometry, SwerveModuleState

from subsystems.maxswervemodule import MAXSwerveModule


class DriveSubsystem(commands2.Subsystem):
    def __init__(self) -> None:
        super().__init__()
        self.modules = [MAXSwerveModule(*m) for m in constants.MODULES]
        self.gyro = wpilib.ADIS16470_IMU()
        self.odometry = SwerveDrive4Odometry(constants.KINEMATICS, self.heading(),
                                             self.positions())
        self.field = wpilib.Field2d()
        wpilib.SmartDashboard.putData("Field", self.field)

    def heading(self) -> Rotation2d:
        return Rotation2d.fromDegrees(self.gyro.getAngle())

    def positions(self) -> tuple:
        return tuple(m.position() for m in self.modules)

    def periodic(self) -> None:
        self.field.setRobotPose(self.odometry.update(self.heading(), self.positions()))

    def pose(self) -> Pose2d:
        return self.odometry.getPose()

    def reset_pose(self, pose: Pose2d) -> None:
        self.odometry.resetPosition(self.heading(), self.positions(), pose)

    def set_module_states(self, states: tuple[SwerveModuleState, ...]) -> None:
        states = constants.KINEMATICS.desaturateWheelSpeeds(states, constants.MAX_SPEED)
        for module, state in zip(self.modules, states, strict=True):
            module.set_desired_state(state)

    def drive(self, speeds: ChassisSpeeds) -> None:
        """Robot-relative chassis speeds (m/s, rad/s)."""
        self.set_module_states(constants.KINEMATICS.toSwerveModuleStates(speeds))

    def drive_field_relative(self, vx: float, vy: float, omega: float) -> None:
        self.drive(ChassisSpeeds.fromFieldRelativeSpeeds(vx, vy, omega, self.pose().rotation()))
