"""MecanumBot-like test program (robotpy/examples MecanumBot): four PWM SPARK MAX (right side
inverted), an encoder per wheel (the right ones reversed), an analog gyro,
MecanumDriveKinematics and odometry. Autonomous drives forward-left while turning for 2 s, then
stops; every loop the odometry pose goes to $ODOMETRY_LOG (JSON: x m, y m, heading deg)."""

import json
import math
import os

import wpilib
import wpimath.controller
import wpimath.geometry
import wpimath.kinematics

K_WHEEL_RADIUS = 0.0762  # m
K_ENCODER_RESOLUTION = 4096


class Drivetrain:
    def __init__(self) -> None:
        self.frontLeftMotor = wpilib.PWMSparkMax(1)
        self.frontRightMotor = wpilib.PWMSparkMax(2)
        self.backLeftMotor = wpilib.PWMSparkMax(3)
        self.backRightMotor = wpilib.PWMSparkMax(4)
        self.frontLeftEncoder = wpilib.Encoder(0, 1)
        self.frontRightEncoder = wpilib.Encoder(2, 3)
        self.backLeftEncoder = wpilib.Encoder(4, 5)
        self.backRightEncoder = wpilib.Encoder(6, 7)
        self.frontLeftLocation = wpimath.geometry.Translation2d(0.381, 0.381)
        self.frontRightLocation = wpimath.geometry.Translation2d(0.381, -0.381)
        self.backLeftLocation = wpimath.geometry.Translation2d(-0.381, 0.381)
        self.backRightLocation = wpimath.geometry.Translation2d(-0.381, -0.381)
        self.gyro = wpilib.AnalogGyro(0)
        self.kinematics = wpimath.kinematics.MecanumDriveKinematics(
            self.frontLeftLocation, self.frontRightLocation, self.backLeftLocation,
            self.backRightLocation)
        self.feedforward = wpimath.controller.SimpleMotorFeedforwardMeters(1.0, 3.0)
        self.pids = [wpimath.controller.PIDController(1.0, 0.0, 0.0) for _ in range(4)]
        self.frontRightMotor.setInverted(True)
        self.backRightMotor.setInverted(True)
        # This robot's right encoders count backwards when it drives forward.
        self.frontRightEncoder.setReverseDirection(True)
        self.backRightEncoder.setReverseDirection(True)
        for encoder in self.encoders():
            encoder.setDistancePerPulse(2 * math.pi * K_WHEEL_RADIUS / K_ENCODER_RESOLUTION)
        self.gyro.reset()
        self.odometry = wpimath.kinematics.MecanumDriveOdometry(
            self.kinematics, self.gyro.getRotation2d(), self.positions())

    def encoders(self) -> list:
        return [self.frontLeftEncoder, self.frontRightEncoder, self.backLeftEncoder,
                self.backRightEncoder]

    def positions(self) -> wpimath.kinematics.MecanumDriveWheelPositions:
        p = wpimath.kinematics.MecanumDriveWheelPositions()
        fl, fr, bl, br = (e.getDistance() for e in self.encoders())
        p.frontLeft, p.frontRight, p.rearLeft, p.rearRight = fl, fr, bl, br
        return p

    def drive(self, vx: float, vy: float, omega: float) -> None:
        speeds = self.kinematics.toWheelSpeeds(wpimath.kinematics.ChassisSpeeds(vx, vy, omega))
        targets = [speeds.frontLeft, speeds.frontRight, speeds.rearLeft, speeds.rearRight]
        motors = [self.frontLeftMotor, self.frontRightMotor, self.backLeftMotor,
                  self.backRightMotor]
        rows = zip(motors, self.encoders(), self.pids, targets, strict=True)
        for motor, encoder, pid, target in rows:
            motor.setVoltage(self.feedforward.calculate(target)
                             + pid.calculate(encoder.getRate(), target))


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.drive = Drivetrain()
        self.timer = wpilib.Timer()

    def robotPeriodic(self) -> None:
        self.drive.odometry.update(self.drive.gyro.getRotation2d(), self.drive.positions())
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
            self.drive.drive(1.0, 0.5, 0.4)
        else:
            self.drive.drive(0.0, 0.0, 0.0)
