"""A swerve robot on Phoenix 6 devices: four modules (Talon FX drive and steer, a CANcoder on
each azimuth) and a Pigeon 2. Autonomous follows a generated trajectory with wpimath's
HolonomicDriveController; teleop is field-relative on an Xbox controller.

Nothing here knows about simulation: `python -m robotpy sim --simserver` runs it against
simserver's physics (simserver.toml maps each device).
"""

import math

import constants
import phoenix6
import wpilib
from phoenix6 import controls
from phoenix6.configs import CANcoderConfiguration
from phoenix6.hardware import CANcoder, Pigeon2, TalonFX
from wpimath.controller import HolonomicDriveController, PIDController, ProfiledPIDControllerRadians
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import (
    ChassisSpeeds,
    SwerveDrive4Kinematics,
    SwerveDrive4Odometry,
    SwerveModulePosition,
    SwerveModuleState,
)
from wpimath.trajectory import (
    TrajectoryConfig,
    TrajectoryGenerator,
    TrapezoidProfileRadians,
)

AUTO_START = Pose2d(2.0, 2.0, Rotation2d(0.0))


def auto_trajectory(kinematics: SwerveDrive4Kinematics):
    """An S through two waypoints to (6, 3), 2.5 m/s, 2 m/s²."""
    config = TrajectoryConfig(2.5, 2.0)
    config.setKinematics(kinematics)
    return TrajectoryGenerator.generateTrajectory(
        AUTO_START, [Translation2d(3.5, 2.8), Translation2d(5.0, 2.2)],
        Pose2d(6.0, 3.0, Rotation2d(0.0)), config)


class Module:
    """One swerve module: drive and steer Talon FX, CANcoder on the azimuth."""

    def __init__(self, drive_id: int, steer_id: int, cancoder_id: int, offset: float):
        self.drive = TalonFX(drive_id)
        self.steer = TalonFX(steer_id)
        self.cancoder = CANcoder(cancoder_id)
        config = CANcoderConfiguration()
        config.magnet_sensor.magnet_offset = offset
        self.cancoder.configurator.apply(config)
        self.drive.set_position(0)

    def angle(self) -> Rotation2d:
        return Rotation2d(2 * math.pi * self.cancoder.get_absolute_position().value)

    def distance_m(self) -> float:
        return (self.drive.get_position().value / constants.DRIVE_GEARING
                * constants.WHEEL_CIRCUMFERENCE_M)

    def speed_mps(self) -> float:
        return (self.drive.get_velocity().value / constants.DRIVE_GEARING
                * constants.WHEEL_CIRCUMFERENCE_M)

    def position(self) -> SwerveModulePosition:
        return SwerveModulePosition(self.distance_m(), self.angle())

    def state(self) -> SwerveModuleState:
        return SwerveModuleState(self.speed_mps(), self.angle())

    def set(self, desired: SwerveModuleState) -> None:
        angle = self.angle()
        desired.optimize(angle)
        desired.cosineScale(angle)
        error = (desired.angle - angle).radians() / (2 * math.pi)
        steer = max(-1.0, min(1.0, constants.STEER_KP * error))
        drive = desired.speed / constants.MAX_SPEED_MPS + constants.DRIVE_KP * (
            desired.speed - self.speed_mps())
        self.steer.set_control(controls.DutyCycleOut(steer))
        self.drive.set_control(controls.DutyCycleOut(max(-1.0, min(1.0, drive))))

    def stop(self) -> None:
        self.steer.set_control(controls.DutyCycleOut(0))
        self.drive.set_control(controls.DutyCycleOut(0))


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.modules = [Module(d, s, c, off) for d, s, c, _, off in constants.MODULES.values()]
        self.kinematics = SwerveDrive4Kinematics(
            *(loc for *_, loc, _ in constants.MODULES.values()))
        self.pigeon = Pigeon2(constants.PIGEON_ID)
        self.odometry = SwerveDrive4Odometry(self.kinematics, self.heading(),
                                             self.positions(), AUTO_START)
        self.field = wpilib.Field2d()
        wpilib.SmartDashboard.putData("Field", self.field)
        self.controller = wpilib.XboxController(constants.DRIVER_CONTROLLER)
        theta = ProfiledPIDControllerRadians(
            constants.HEADING_KP, 0, 0,
            TrapezoidProfileRadians.Constraints(constants.MAX_ANGULAR_RPS, 2 * math.pi))
        theta.enableContinuousInput(-math.pi, math.pi)
        self.follower = HolonomicDriveController(
            PIDController(constants.PATH_KP, 0, 0), PIDController(constants.PATH_KP, 0, 0),
            theta)
        self.trajectory = auto_trajectory(self.kinematics)
        self.field.getObject("traj").setTrajectory(self.trajectory)
        self.timer = wpilib.Timer()

    def heading(self) -> Rotation2d:
        return Rotation2d.fromDegrees(self.pigeon.get_yaw().value)

    def positions(self) -> tuple[SwerveModulePosition, ...]:
        return tuple(m.position() for m in self.modules)

    def robotPeriodic(self) -> None:
        pose = self.odometry.update(self.heading(), self.positions())
        self.field.setRobotPose(pose)

    def drive(self, speeds: ChassisSpeeds) -> None:
        states = self.kinematics.toSwerveModuleStates(speeds)
        states = SwerveDrive4Kinematics.desaturateWheelSpeeds(states, constants.MAX_SPEED_MPS)
        for module, state in zip(self.modules, states, strict=True):
            module.set(state)

    def autonomousInit(self) -> None:
        self.pigeon.set_yaw(AUTO_START.rotation().degrees())
        self.odometry.resetPosition(self.heading(), self.positions(), AUTO_START)
        self.timer.restart()

    def autonomousPeriodic(self) -> None:
        t = self.timer.get()
        if t > self.trajectory.totalTime():
            self.drive(ChassisSpeeds())
            return
        goal = self.trajectory.sample(t)
        self.drive(self.follower.calculate(self.odometry.getPose(), goal, Rotation2d(0.0)))

    def teleopPeriodic(self) -> None:
        def axis(value: float) -> float:
            return 0.0 if abs(value) < 0.08 else value

        speeds = ChassisSpeeds.fromFieldRelativeSpeeds(
            -axis(self.controller.getLeftY()) * constants.MAX_SPEED_MPS,
            -axis(self.controller.getLeftX()) * constants.MAX_SPEED_MPS,
            -axis(self.controller.getRightX()) * constants.MAX_ANGULAR_RPS,
            self.heading())
        self.drive(speeds)

    def disabledInit(self) -> None:
        for module in self.modules:
            module.stop()


assert phoenix6  # imported for its side effects in simulation
