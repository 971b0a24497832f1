"""A mecanum robot: four CIMs on PWM motor controllers, an encoder on each wheel and an
ADXRS450 gyro. Autonomous strafes and turns along a generated trajectory with wpimath's
HolonomicDriveController and per-wheel feedforward plus velocity P; teleop is field-relative
on an Xbox controller.

Nothing here knows about simulation: `python -m robotpy sim --simserver` runs it against
simserver's physics (simserver.toml maps each device).
"""

import math

import wpilib
from wpimath.controller import HolonomicDriveController, PIDController, ProfiledPIDControllerRadians
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import (
    ChassisSpeeds,
    MecanumDriveKinematics,
    MecanumDriveOdometry,
    MecanumDriveWheelPositions,
)
from wpimath.trajectory import TrajectoryConfig, TrajectoryGenerator, TrapezoidProfileRadians

WHEEL_DIAMETER_M = 6 * 0.0254
DISTANCE_PER_PULSE_M = math.pi * WHEEL_DIAMETER_M / 360
GEARING = 10.71
MAX_SPEED_MPS = 5310 / 60 / GEARING * math.pi * WHEEL_DIAMETER_M  # CIM free speed at the rim
HALF_WHEELBASE_M, HALF_TRACK_M = 0.254, 0.2794
WHEEL_KP = 0.1      # duty per m/s of wheel speed error
PATH_KP = 2.0       # m/s per m of position error
HEADING_KP = 3.0    # rad/s per rad of heading error

AUTO_START = Pose2d(2.0, 2.0, Rotation2d(0.0))


def auto_trajectory():
    """Forward and sideways to (5, 3.5) through (3.5, 2.2); the heading is held at 0 by the
    controller, so the robot strafes."""
    return TrajectoryGenerator.generateTrajectory(
        AUTO_START, [Translation2d(3.5, 2.2)], Pose2d(5.0, 3.5, Rotation2d(math.pi / 4)),
        TrajectoryConfig(1.5, 1.5))


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.motors = [wpilib.PWMSparkMax(ch) for ch in (0, 2, 1, 3)]  # fl, fr, rl, rr
        self.motors[1].setInverted(True)
        self.motors[3].setInverted(True)
        self.encoders = [wpilib.Encoder(a, a + 1) for a in (0, 4, 2, 6)]  # fl, fr, rl, rr
        for encoder in self.encoders:
            encoder.setDistancePerPulse(DISTANCE_PER_PULSE_M)
        self.gyro = wpilib.ADXRS450_Gyro()
        self.kinematics = MecanumDriveKinematics(
            Translation2d(HALF_WHEELBASE_M, HALF_TRACK_M),
            Translation2d(HALF_WHEELBASE_M, -HALF_TRACK_M),
            Translation2d(-HALF_WHEELBASE_M, HALF_TRACK_M),
            Translation2d(-HALF_WHEELBASE_M, -HALF_TRACK_M))
        self.odometry = MecanumDriveOdometry(self.kinematics, self.heading(), self.positions(),
                                             AUTO_START)
        self.field = wpilib.Field2d()
        wpilib.SmartDashboard.putData("Field", self.field)
        theta = ProfiledPIDControllerRadians(
            HEADING_KP, 0, 0, TrapezoidProfileRadians.Constraints(math.pi, math.pi))
        theta.enableContinuousInput(-math.pi, math.pi)
        self.follower = HolonomicDriveController(
            PIDController(PATH_KP, 0, 0), PIDController(PATH_KP, 0, 0), theta)
        self.trajectory = auto_trajectory()
        self.field.getObject("traj").setTrajectory(self.trajectory)
        self.controller = wpilib.XboxController(0)
        self.timer = wpilib.Timer()

    def heading(self) -> Rotation2d:
        return self.gyro.getRotation2d()  # CCW positive (the ADXRS450 reads clockwise)

    def positions(self) -> MecanumDriveWheelPositions:
        positions = MecanumDriveWheelPositions()
        (positions.frontLeft, positions.frontRight, positions.rearLeft,
         positions.rearRight) = (e.getDistance() for e in self.encoders)
        return positions

    def robotPeriodic(self) -> None:
        self.field.setRobotPose(self.odometry.update(self.heading(), self.positions()))

    def drive(self, speeds: ChassisSpeeds) -> None:
        wheels = self.kinematics.toWheelSpeeds(speeds)
        wheels.desaturate(MAX_SPEED_MPS)
        targets = (wheels.frontLeft, wheels.frontRight, wheels.rearLeft, wheels.rearRight)
        for motor, encoder, target in zip(self.motors, self.encoders, targets, strict=True):
            duty = target / MAX_SPEED_MPS + WHEEL_KP * (target - encoder.getRate())
            motor.set(max(-1.0, min(1.0, duty)))

    def autonomousInit(self) -> None:
        self.gyro.reset()
        for encoder in self.encoders:
            encoder.reset()
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

        self.drive(ChassisSpeeds.fromFieldRelativeSpeeds(
            -axis(self.controller.getLeftY()) * MAX_SPEED_MPS,
            -axis(self.controller.getLeftX()) * MAX_SPEED_MPS,
            -axis(self.controller.getRightX()) * math.pi, self.heading()))
