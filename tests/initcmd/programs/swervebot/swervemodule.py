"""A swerve module like robotpy/examples SwerveBot's: PWM SPARK MAX drive and turning motors,
an encoder on each (drive in metres, turning in radians)."""

import math

import wpilib
import wpimath.controller
import wpimath.geometry
import wpimath.kinematics
import wpimath.trajectory

K_WHEEL_RADIUS = 0.0508  # m
K_ENCODER_RESOLUTION = 4096


class SwerveModule:
    def __init__(self, driveMotorChannel: int, turningMotorChannel: int,
                 driveEncoderChannelA: int, driveEncoderChannelB: int,
                 turningEncoderChannelA: int, turningEncoderChannelB: int) -> None:
        self.driveMotor = wpilib.PWMSparkMax(driveMotorChannel)
        self.turningMotor = wpilib.PWMSparkMax(turningMotorChannel)
        self.driveEncoder = wpilib.Encoder(driveEncoderChannelA, driveEncoderChannelB)
        self.turningEncoder = wpilib.Encoder(turningEncoderChannelA, turningEncoderChannelB)
        self.drivePIDController = wpimath.controller.PIDController(1.0, 0.0, 0.0)
        self.turningPIDController = wpimath.controller.PIDController(8.0, 0.0, 0.0)
        self.turningPIDController.enableContinuousInput(-math.pi, math.pi)
        self.driveFeedforward = wpimath.controller.SimpleMotorFeedforwardMeters(0.0, 2.2)
        self.driveEncoder.setDistancePerPulse(
            2 * math.pi * K_WHEEL_RADIUS / K_ENCODER_RESOLUTION)
        self.turningEncoder.setDistancePerPulse(2 * math.pi / K_ENCODER_RESOLUTION)

    def getPosition(self) -> wpimath.kinematics.SwerveModulePosition:
        return wpimath.kinematics.SwerveModulePosition(
            self.driveEncoder.getDistance(),
            wpimath.geometry.Rotation2d(self.turningEncoder.getDistance()))

    def setDesiredState(self, state: wpimath.kinematics.SwerveModuleState) -> None:
        angle = wpimath.geometry.Rotation2d(self.turningEncoder.getDistance())
        state.optimize(angle)
        state.cosineScale(angle)
        drive = self.drivePIDController.calculate(self.driveEncoder.getRate(), state.speed)
        self.driveMotor.setVoltage(drive + self.driveFeedforward.calculate(state.speed))
        turn = self.turningPIDController.calculate(self.turningEncoder.getDistance(),
                                                   state.angle.radians())
        self.turningMotor.setVoltage(turn)
