"""FRC kitbot: differential drive, drive encoders, an analog gyro and a trajectory autonomous.

Wiring is in constants.py (and README.md). Autonomous follows deploy/paths/auto.wpilib.json
(written by make_path.py from paths.py) with an LTV unicycle controller, feedforward and wheel
velocity PID. Teleop is arcade drive on an Xbox controller: left stick Y drives, right stick X
turns.
"""

import os

import constants
import ntcore
import paths
import wpilib
import wpilib.drive
from wpimath.controller import (
    LTVUnicycleController,
    PIDController,
    SimpleMotorFeedforwardMeters,
)
from wpimath.geometry import Pose2d
from wpimath.kinematics import (
    DifferentialDriveKinematics,
    DifferentialDriveOdometry,
    DifferentialDriveWheelSpeeds,
)
from wpimath.trajectory import Trajectory, TrajectoryUtil


def load_auto_trajectory() -> Trajectory:
    """The autonomous path from the deploy directory, or generated if the file is missing."""
    path = os.path.join(wpilib.getDeployDirectory(), "paths", paths.AUTO_PATH_FILE)
    if os.path.exists(path):
        return TrajectoryUtil.fromPathweaverJson(path)
    wpilib.reportWarning(f"{path} not found: generating the autonomous path instead")
    return paths.make_auto_trajectory()


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        # Drive motors: followers copy their leader's output (inversion included).
        self.left_leader = wpilib.PWMSparkMax(constants.LEFT_LEADER_PWM)
        self.left_follower = wpilib.PWMSparkMax(constants.LEFT_FOLLOWER_PWM)
        self.right_leader = wpilib.PWMSparkMax(constants.RIGHT_LEADER_PWM)
        self.right_follower = wpilib.PWMSparkMax(constants.RIGHT_FOLLOWER_PWM)
        self.left_leader.addFollower(self.left_follower)
        self.right_leader.addFollower(self.right_follower)
        self.right_leader.setInverted(True)
        self.drive = wpilib.drive.DifferentialDrive(self.left_leader, self.right_leader)

        # Sensors. Both encoders count up when their wheel drives the robot forward.
        self.left_encoder = wpilib.Encoder(*constants.LEFT_ENCODER_DIO)
        self.right_encoder = wpilib.Encoder(*constants.RIGHT_ENCODER_DIO)
        for encoder in (self.left_encoder, self.right_encoder):
            encoder.setDistancePerPulse(constants.DISTANCE_PER_PULSE_M)
        self.gyro = wpilib.AnalogGyro(constants.GYRO_ANALOG)

        self.controller = wpilib.XboxController(constants.DRIVER_CONTROLLER)

        # Odometry and its displays.
        self.kinematics = DifferentialDriveKinematics(constants.TRACK_WIDTH_M)
        self.odometry = DifferentialDriveOdometry(
            self.gyro.getRotation2d(),
            self.left_encoder.getDistance(),
            self.right_encoder.getDistance(),
            paths.START_POSE,
        )
        self.field = wpilib.Field2d()
        wpilib.SmartDashboard.putData("Field", self.field)
        nt = ntcore.NetworkTableInstance.getDefault()
        self.odometry_pub = nt.getStructTopic("/kitbot/odometry", Pose2d).publish()
        self.reference_pub = nt.getStructTopic("/kitbot/reference", Pose2d).publish()

        # Path following.
        self.trajectory = load_auto_trajectory()
        self.follower = LTVUnicycleController(self.getPeriod())
        self.feedforward = SimpleMotorFeedforwardMeters(
            constants.KS_VOLTS,
            constants.KV_VOLT_SECONDS_PER_METER,
            constants.KA_VOLT_SECONDS_SQUARED_PER_METER,
            self.getPeriod(),
        )
        self.left_pid = PIDController(constants.KP_DRIVE_VELOCITY, 0.0, 0.0, self.getPeriod())
        self.right_pid = PIDController(constants.KP_DRIVE_VELOCITY, 0.0, 0.0, self.getPeriod())
        self.previous_speeds = DifferentialDriveWheelSpeeds()
        self.auto_timer = wpilib.Timer()

        self.reset_pose(paths.START_POSE)

    def reset_pose(self, pose: Pose2d) -> None:
        """Zero the encoders and gyro and tell odometry the robot is at ``pose``."""
        self.left_encoder.reset()
        self.right_encoder.reset()
        self.gyro.reset()
        self.odometry.resetPosition(
            self.gyro.getRotation2d(),
            self.left_encoder.getDistance(),
            self.right_encoder.getDistance(),
            pose,
        )

    def robotPeriodic(self) -> None:
        pose = self.odometry.update(
            self.gyro.getRotation2d(),
            self.left_encoder.getDistance(),
            self.right_encoder.getDistance(),
        )
        self.field.setRobotPose(pose)
        self.odometry_pub.set(pose)
        wpilib.SmartDashboard.putNumber("Left distance (m)", self.left_encoder.getDistance())
        wpilib.SmartDashboard.putNumber("Right distance (m)", self.right_encoder.getDistance())
        wpilib.SmartDashboard.putNumber("Left speed (m/s)", self.left_encoder.getRate())
        wpilib.SmartDashboard.putNumber("Right speed (m/s)", self.right_encoder.getRate())
        wpilib.SmartDashboard.putNumber("Gyro angle (deg)", self.gyro.getAngle())

    def autonomousInit(self) -> None:
        self.reset_pose(self.trajectory.initialPose())
        self.field.getObject("Trajectory").setTrajectory(self.trajectory)
        self.left_pid.reset()
        self.right_pid.reset()
        self.previous_speeds = DifferentialDriveWheelSpeeds()
        self.auto_timer.restart()

    def autonomousPeriodic(self) -> None:
        elapsed = self.auto_timer.get()
        if elapsed > self.trajectory.totalTime():
            self.tank_drive_volts(0.0, 0.0)
            return

        reference = self.trajectory.sample(elapsed)
        self.reference_pub.set(reference.pose)
        chassis = self.follower.calculate(self.odometry.getPose(), reference)
        target = self.kinematics.toWheelSpeeds(chassis)

        left_volts = self.feedforward.calculate(
            self.previous_speeds.left, target.left
        ) + self.left_pid.calculate(self.left_encoder.getRate(), target.left)
        right_volts = self.feedforward.calculate(
            self.previous_speeds.right, target.right
        ) + self.right_pid.calculate(self.right_encoder.getRate(), target.right)
        self.previous_speeds = target
        self.tank_drive_volts(left_volts, right_volts)

    def tank_drive_volts(self, left: float, right: float) -> None:
        self.left_leader.setVoltage(left)
        self.right_leader.setVoltage(right)
        # We bypass DifferentialDrive here; keep its motor safety watchdog fed.
        self.drive.feed()

    def teleopPeriodic(self) -> None:
        self.drive.arcadeDrive(-self.controller.getLeftY(), -self.controller.getRightX())

    def disabledInit(self) -> None:
        self.drive.stopMotor()
