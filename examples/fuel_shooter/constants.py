"""Fuel shooter wiring, geometry and autonomous targets (SI units)."""

import math

# Wiring (roboRIO ports)
LEFT_LEADER_PWM, LEFT_FOLLOWER_PWM = 0, 1
RIGHT_LEADER_PWM, RIGHT_FOLLOWER_PWM = 2, 3
INTAKE_PWM = 4
INDEXER_PWM = 5
FLYWHEEL_PWM = 6
LEFT_ENCODER_DIO = (0, 1)
RIGHT_ENCODER_DIO = (2, 3)
FLYWHEEL_ENCODER_DIO = (4, 5)
BEAM_BREAK_DIO = 6  # reads False while a FUEL breaks the beam
GYRO_ANALOG = 0

# Drive: 6 in wheels, 360 counts per wheel revolution.
DISTANCE_PER_PULSE_M = math.pi * 0.1524 / 360
# Flywheel: 2048 counts per revolution of the flywheel shaft; rate in revolutions per second.
FLYWHEEL_COUNTS_PER_REV = 2048
FLYWHEEL_FREE_RPS = 5676 / 60  # a NEO, direct drive

# Autonomous: where it starts (facing the blue DEPOT) and the shot.
START_X_M, START_Y_M, START_HEADING_DEG = 1.6, 5.96, 180.0
INTAKE_DRIVE_M = 0.95       # forward into the DEPOT with the intake running
BACK_OFF_M = 1.0            # then back out
HUB_X_M, HUB_Y_M = 4.625, 4.035  # the blue HUB's centre (field frame)
SHOT_RPS = 50.0             # flywheel speed for the shot (about 7.3 m/s exit speed)
SHOT_TOLERANCE_RPS = 1.0
AIM_TOLERANCE_DEG = 2.5      # the HUB's opening is about ±8° wide from here
TURN_KS = 0.08               # duty that starts a turn in place
