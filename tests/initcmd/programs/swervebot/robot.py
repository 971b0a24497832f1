"""SwerveBot-like test program (robotpy/examples SwerveBot): four modules of PWM SPARK MAX
drive and turning motors with quadrature encoders, an analog gyro, SwerveDrive4Kinematics and
odometry. Autonomous drives diagonally for 2 s, then stops; every loop the odometry pose goes
to $ODOMETRY_LOG (JSON: x m, y m, heading deg)."""

import json
import os

import wpilib
import wpimath.geometry
import wpimath.kinematics
from swervemodule import SwerveModule


class Drivetrain:
    def __init__(self) -> None:
        self.frontLeftLocation = wpimath.geometry.Translation2d(0.381, 0.381)
        self.frontRightLocation = wpimath.geometry.Translation2d(0.381, -0.381)
        self.backLeftLocation = wpimath.geometry.Translation2d(-0.381, 0.381)
        self.backRightLocation = wpimath.geometry.Translation2d(-0.381, -0.381)
        self.frontLeft = SwerveModule(1, 2, 0, 1, 2, 3)
        self.frontRight = SwerveModule(3, 4, 4, 5, 6, 7)
        self.backLeft = SwerveModule(5, 6, 8, 9, 10, 11)
        self.backRight = SwerveModule(7, 8, 12, 13, 14, 15)
        self.gyro = wpilib.AnalogGyro(0)
        self.kinematics = wpimath.kinematics.SwerveDrive4Kinematics(
            self.frontLeftLocation, self.frontRightLocation, self.backLeftLocation,
            self.backRightLocation)
        self.gyro.reset()
        self.odometry = wpimath.kinematics.SwerveDrive4Odometry(
            self.kinematics, self.gyro.getRotation2d(), self.positions())

    def modules(self) -> list[SwerveModule]:
        return [self.frontLeft, self.frontRight, self.backLeft, self.backRight]

    def positions(self) -> tuple:
        return tuple(m.getPosition() for m in self.modules())

    def drive(self, vx: float, vy: float, omega: float) -> None:
        states = self.kinematics.toSwerveModuleStates(
            wpimath.kinematics.ChassisSpeeds(vx, vy, omega))
        states = self.kinematics.desaturateWheelSpeeds(states, 3.0)
        for module, state in zip(self.modules(), states, strict=True):
            module.setDesiredState(state)


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.swerve = Drivetrain()
        self.timer = wpilib.Timer()

    def robotPeriodic(self) -> None:
        self.swerve.odometry.update(self.swerve.gyro.getRotation2d(), self.swerve.positions())
        log = os.environ.get("ODOMETRY_LOG")
        if log:
            pose = self.swerve.odometry.getPose()
            with open(log, "w") as f:
                json.dump({"x": pose.X(), "y": pose.Y(),
                           "heading": pose.rotation().degrees()}, f)

    def autonomousInit(self) -> None:
        self.timer.restart()

    def autonomousPeriodic(self) -> None:
        if self.timer.get() < 2.0:
            self.swerve.drive(1.0, 0.5, 0.0)
        else:
            self.swerve.drive(0.0, 0.0, 0.0)
