"""Kitbot hardware constants: wiring, geometry and drivetrain gains (SI units)."""

import math

# Wiring (roboRIO ports)
LEFT_LEADER_PWM = 0
LEFT_FOLLOWER_PWM = 1
RIGHT_LEADER_PWM = 2
RIGHT_FOLLOWER_PWM = 3
LEFT_ENCODER_DIO = (0, 1)
RIGHT_ENCODER_DIO = (2, 3)
GYRO_ANALOG = 0
DRIVER_CONTROLLER = 0

# Geometry: 6 in wheels, 26 in track width, 360 counts per wheel revolution (4X decoding),
# encoders on the wheel axle.
WHEEL_DIAMETER_M = 0.1524
TRACK_WIDTH_M = 0.66
ENCODER_COUNTS_PER_REV = 360
DISTANCE_PER_PULSE_M = math.pi * WHEEL_DIAMETER_M / ENCODER_COUNTS_PER_REV

# Drivetrain characterization: two CIMs per side, 10.71:1, free speed about 3.6 m/s at 12 V.
KS_VOLTS = 0.0
KV_VOLT_SECONDS_PER_METER = 3.3  # about 12 V / 3.6 m/s
KA_VOLT_SECONDS_SQUARED_PER_METER = 0.6

# Wheel velocity feedback, volts per (m/s) of error.
KP_DRIVE_VELOCITY = 1.0

# Autonomous path limits.
MAX_SPEED_M_PER_S = 2.0
MAX_ACCELERATION_M_PER_S2 = 1.5
