"""A differential drivetrain like robotpy/examples DifferentialDriveBot: two PWM SPARK MAX
per side (leader and follower), an encoder per side, an analog gyro, wpimath kinematics and
odometry."""

import math

import wpilib
import wpimath.controller
import wpimath.kinematics

K_TRACK_WIDTH = 0.381 * 2  # m
K_WHEEL_RADIUS = 0.0508  # m
K_ENCODER_RESOLUTION = 4096


class Drivetrain:
    def __init__(self) -> None:
        self.leftLeader = wpilib.PWMSparkMax(1)
        self.leftFollower = wpilib.PWMSparkMax(2)
        self.rightLeader = wpilib.PWMSparkMax(3)
        self.rightFollower = wpilib.PWMSparkMax(4)
        self.leftEncoder = wpilib.Encoder(0, 1)
        self.rightEncoder = wpilib.Encoder(2, 3)
        self.gyro = wpilib.AnalogGyro(0)
        self.leftPID = wpimath.controller.PIDController(1.0, 0.0, 0.0)
        self.rightPID = wpimath.controller.PIDController(1.0, 0.0, 0.0)
        self.kinematics = wpimath.kinematics.DifferentialDriveKinematics(K_TRACK_WIDTH)
        self.feedforward = wpimath.controller.SimpleMotorFeedforwardMeters(1.0, 3.0)
        self.leftLeader.addFollower(self.leftFollower)
        self.rightLeader.addFollower(self.rightFollower)
        self.rightLeader.setInverted(True)
        per_pulse = 2 * math.pi * K_WHEEL_RADIUS / K_ENCODER_RESOLUTION
        self.leftEncoder.setDistancePerPulse(per_pulse)
        self.rightEncoder.setDistancePerPulse(per_pulse)
        self.leftEncoder.reset()
        self.rightEncoder.reset()
        self.gyro.reset()
        self.odometry = wpimath.kinematics.DifferentialDriveOdometry(
            self.gyro.getRotation2d(), 0.0, 0.0)

    def drive(self, speed: float, rotation: float) -> None:
        """Forward m/s, counter-clockwise rad/s, through PID + feedforward per side."""
        wheels = self.kinematics.toWheelSpeeds(
            wpimath.kinematics.ChassisSpeeds(speed, 0.0, rotation))
        for motor, encoder, pid, target in (
                (self.leftLeader, self.leftEncoder, self.leftPID, wheels.left),
                (self.rightLeader, self.rightEncoder, self.rightPID, wheels.right)):
            volts = self.feedforward.calculate(target) + pid.calculate(encoder.getRate(), target)
            motor.setVoltage(volts)

    def update_odometry(self) -> None:
        self.odometry.update(self.gyro.getRotation2d(), self.leftEncoder.getDistance(),
                             self.rightEncoder.getDistance())
