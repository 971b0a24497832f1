"""The autonomous path: one definition shared by robot.py and make_path.py."""

import constants
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import DifferentialDriveKinematics
from wpimath.trajectory import Trajectory, TrajectoryConfig, TrajectoryGenerator
from wpimath.trajectory.constraint import DifferentialDriveKinematicsConstraint

# File name under deploy/paths/ (PathWeaver JSON).
AUTO_PATH_FILE = "auto.wpilib.json"

# Where the robot starts: x = 2 m, y = 4 m, facing the red alliance wall (heading 0).
START_POSE = Pose2d(2.0, 4.0, Rotation2d.fromDegrees(0.0))

# An S-curve: left through (4, 5), then straighten out to (6.5, 5.5) facing forward again.
INTERIOR_WAYPOINTS = [Translation2d(4.0, 5.0)]
END_POSE = Pose2d(6.5, 5.5, Rotation2d.fromDegrees(0.0))


def make_auto_trajectory() -> Trajectory:
    """Generate the autonomous trajectory from the waypoints and drivetrain limits."""
    kinematics = DifferentialDriveKinematics(constants.TRACK_WIDTH_M)
    config = TrajectoryConfig(constants.MAX_SPEED_M_PER_S, constants.MAX_ACCELERATION_M_PER_S2)
    config.addConstraint(
        DifferentialDriveKinematicsConstraint(kinematics, constants.MAX_SPEED_M_PER_S)
    )
    return TrajectoryGenerator.generateTrajectory(START_POSE, INTERIOR_WAYPOINTS, END_POSE, config)
