"""The robot's numbers: a REV MAXSwerve chassis (NEO drive motors on the 14-tooth pinion,
NEO 550 steering, a Through Bore Encoder on each module's steering shaft read as the SPARK
MAX's absolute encoder) and an ADIS16470 IMU on the roboRIO."""

from __future__ import annotations

import math

from wpimath.geometry import Translation2d
from wpimath.kinematics import SwerveDrive4Kinematics

NEO_FREE_SPEED = 5676.0 / 60.0  # rot/s
WHEEL_DIAMETER = 0.0762  # m (3 in)
DRIVE_REDUCTION = (45.0 * 22.0) / (14.0 * 15.0)  # bevel 45T, spur 22T, pinion 14T, 15T
DRIVE_METERS_PER_ROTATION = WHEEL_DIAMETER * math.pi / DRIVE_REDUCTION
WHEEL_FREE_SPEED = NEO_FREE_SPEED * DRIVE_METERS_PER_ROTATION  # m/s

DRIVE_P = 0.2  # duty per m/s of error
DRIVE_KV = 12.0 / WHEEL_FREE_SPEED  # V per m/s (REVLib 2026 feedforward is in volts)
TURN_P = 1.0  # duty per rad of error
DRIVE_CURRENT_LIMIT = 50  # A
TURN_CURRENT_LIMIT = 20  # A

HALF_TRACK = 0.5 * 0.6731  # m: 26.5 in between module centres both ways
MODULE_POSITIONS = (Translation2d(HALF_TRACK, HALF_TRACK), Translation2d(HALF_TRACK, -HALF_TRACK),
                    Translation2d(-HALF_TRACK, HALF_TRACK), Translation2d(-HALF_TRACK, -HALF_TRACK))
KINEMATICS = SwerveDrive4Kinematics(*MODULE_POSITIONS)

# (driving CAN id, turning CAN id, the absolute encoder's reading with the wheel forward, rad)
# for front left, front right, back left, back right: each module is mounted turned by a
# quarter turn from its neighbour, as on REV's chassis.
MODULES = ((11, 10, -math.pi / 2), (15, 14, 0.0), (13, 12, math.pi), (17, 16, math.pi / 2))

MAX_SPEED = 4.0  # m/s
MAX_ANGULAR_SPEED = math.tau  # rad/s
