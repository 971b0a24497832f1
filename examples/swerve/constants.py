"""Swerve example wiring and geometry (matches simserver.toml)."""

import math

from wpimath.geometry import Translation2d

# CAN ids: drive Talon FX, steer Talon FX, CANcoder per module; one Pigeon 2.
MODULES = {
    #              drive, steer, cancoder, location (m), CANcoder MagnetOffset (rotations)
    "front_left": (1, 5, 9, Translation2d(0.288925, 0.288925), -0.125),
    "front_right": (2, 6, 10, Translation2d(0.288925, -0.288925), 0.25),
    "back_left": (3, 7, 11, Translation2d(-0.288925, 0.288925), -0.375),
    "back_right": (4, 8, 12, Translation2d(-0.288925, -0.288925), 0.0),
}
PIGEON_ID = 13

WHEEL_DIAMETER_M = 4 * 0.0254
DRIVE_GEARING = 6.75
WHEEL_CIRCUMFERENCE_M = math.pi * WHEEL_DIAMETER_M
# Kraken X60 free speed (6000 rpm) at the wheel.
MAX_SPEED_MPS = 6000 / 60 / DRIVE_GEARING * WHEEL_CIRCUMFERENCE_M
MAX_ANGULAR_RPS = MAX_SPEED_MPS / math.hypot(0.288925, 0.288925)

# Closed-loop gains, all on duty cycle.
STEER_KP = 2.0            # duty per rotation of azimuth error
DRIVE_KP = 0.05           # duty per m/s of wheel speed error
PATH_KP = 2.0             # m/s per m of position error (x and y)
HEADING_KP = 3.0          # rad/s per rad of heading error

DRIVER_CONTROLLER = 0
