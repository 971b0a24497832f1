"""One MAXSwerve module: the SPARK MAXes run the loops themselves (velocity on the driving
NEO's encoder, position on the Through Bore Encoder wired to the turning SPARK's data port);
robot code only sends setpoints."""

from __future__ import annotations

import math

import constants
import rev
from wpimath.geometry import Rotation2d
from wpimath.kinematics import SwerveModulePosition, SwerveModuleState


class MAXSwerveModule:
    """``offset``: the absolute encoder's reading (rad) when the wheel points forward."""

    def __init__(self, driving_id: int, turning_id: int, offset: float):
        self.offset = offset
        self.driving = rev.SparkMax(driving_id, rev.SparkLowLevel.MotorType.kBrushless)
        self.turning = rev.SparkMax(turning_id, rev.SparkLowLevel.MotorType.kBrushless)

        driving = rev.SparkMaxConfig()
        driving.setIdleMode(rev.SparkBaseConfig.IdleMode.kBrake)
        driving.smartCurrentLimit(constants.DRIVE_CURRENT_LIMIT)
        driving.encoder.positionConversionFactor(constants.DRIVE_METERS_PER_ROTATION) \
            .velocityConversionFactor(constants.DRIVE_METERS_PER_ROTATION / 60.0)
        driving.closedLoop.setFeedbackSensor(rev.FeedbackSensor.kPrimaryEncoder) \
            .pid(constants.DRIVE_P, 0.0, 0.0).outputRange(-1.0, 1.0)
        driving.closedLoop.feedForward.kV(constants.DRIVE_KV)
        self.driving.configure(driving, rev.ResetMode.kResetSafeParameters,
                               rev.PersistMode.kPersistParameters)

        turning = rev.SparkMaxConfig()
        turning.setIdleMode(rev.SparkBaseConfig.IdleMode.kBrake)
        turning.smartCurrentLimit(constants.TURN_CURRENT_LIMIT)
        # The steering shaft turns against the motor: the encoder is inverted to read the
        # module's angle counter-clockwise positive.
        turning.absoluteEncoder.inverted(True).positionConversionFactor(math.tau) \
            .velocityConversionFactor(math.tau / 60.0)
        turning.closedLoop.setFeedbackSensor(rev.FeedbackSensor.kAbsoluteEncoder) \
            .pid(constants.TURN_P, 0.0, 0.0).outputRange(-1.0, 1.0) \
            .positionWrappingEnabled(True).positionWrappingInputRange(0.0, math.tau)
        self.turning.configure(turning, rev.ResetMode.kResetSafeParameters,
                               rev.PersistMode.kPersistParameters)

        self.drive_encoder = self.driving.getEncoder()
        self.turn_encoder = self.turning.getAbsoluteEncoder()
        self.drive_loop = self.driving.getClosedLoopController()
        self.turn_loop = self.turning.getClosedLoopController()
        self.drive_encoder.setPosition(0.0)

    def angle(self) -> Rotation2d:
        """The wheel's direction on the chassis."""
        return Rotation2d(self.turn_encoder.getPosition() - self.offset)

    def position(self) -> SwerveModulePosition:
        return SwerveModulePosition(self.drive_encoder.getPosition(), self.angle())

    def state(self) -> SwerveModuleState:
        return SwerveModuleState(self.drive_encoder.getVelocity(), self.angle())

    def set_desired_state(self, desired: SwerveModuleState) -> None:
        state = SwerveModuleState(desired.speed, desired.angle)
        state.optimize(self.angle())
        state.cosineScale(self.angle())
        self.drive_loop.setReference(state.speed, rev.SparkBase.ControlType.kVelocity)
        self.turn_loop.setReference((state.angle.radians() + self.offset) % math.tau,
                                    rev.SparkBase.ControlType.kPosition)
