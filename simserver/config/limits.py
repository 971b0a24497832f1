"""Units and the physical and FRC limits that config ranges are derived from, in SI.

A key's range has two parts (``simserver.config.fields``): values outside its refused bounds
cannot be a robot that simserver can simulate (the models would overflow, divide by almost
zero or never finish a tick), and are errors; values outside its usual bounds are possible but
unlike an FRC robot, and load with a warning. The bounds below are the ones several keys share;
each key's doc text says where its own come from.
"""

from __future__ import annotations

import math

from simserver.units import INCH

DEG = math.pi / 180.0  # rad per degree
PSI = 6894.757293168361  # Pa per lbf/in²
MS = 1e-3  # s per millisecond

#: The TCP port of a robot program's NetworkTables 4 server (WPILib's default).
ROBOT_NT_PORT = 5810

# Robot weight: FRC R103 allows 125 lb (2019-2024) or 115 lb (2025-2026) without bumpers and
# battery; with bumpers at most 135 lb (2026 R408); the battery adds about 13 lb.
HEAVIEST_FRC_ROBOT = 70.0  # kg, 154 lb
HEAVIEST_ROBOT = 100.0  # kg (220 lb, 1.4 times the heaviest legal robot)
LIGHTEST_ROBOT = 0.1  # kg: a Romi or an XRP weighs a few hundred grams

# Outline: a Romi is 0.17 m across; an FRC frame perimeter is at most 120 in (R101, the largest
# of recent games), which with bumpers of up to about 4.5 in a side gives an outline perimeter
# of up to about 156 in.
SMALLEST_ROBOT = 0.1  # m, length or width
LARGEST_ROBOT = 3.0  # m, length or width
FRC_OUTLINE_PERIMETER = 156.0 * INCH

# Fields: the FRC fields of 2022-2026 measure 16.46-17.55 m by 8.01-8.23 m (robotpy-apriltag).
SMALLEST_FIELD = 0.5  # m
LARGEST_FIELD = 100.0  # m
USUAL_FIELD = (4.0, 20.0)  # m: a quarter field to a little more than a full one

# Wheels from a Romi's 70 mm to 8 in pneumatics; FRC drive wheels are 3 to 8 in.
SMALLEST_WHEEL = 0.02  # m diameter
LARGEST_WHEEL = 0.5  # m diameter

# Gear reductions: the catalog's motors spin free at 150 (the Romi's, gearbox included) to
# 19,000 rpm; FRC drivetrains reduce 4:1 to 20:1, arms up to a few hundred to one. Whether a
# drivetrain's reduction is usual depends on its motor and wheel: simserver.config.plausible
# warns on the free speed they give.
DRIVE_GEARING = (0.5, 200.0)
MECHANISM_GEARING = (0.05, 2000.0)

# Positions on and off the robot.
ROBOT_REACH = 3.0  # m: modules, cameras, mechanisms' travel, from the robot centre
TRAVEL = 10.0  # m: an elevator's or linear slide's travel either way from 0

# Time: the substep bounds the work of one tick (MAX_SUBSTEPS_PER_TICK substeps at most, so a
# tick finishes and Ctrl-C / SIGTERM are handled between ticks).
SMALLEST_SUBSTEP = 0.1 * MS
MAX_SUBSTEPS_PER_TICK = 1000

# Electrical: a 12 V lead-acid battery (a Romi runs on 6 AA cells, 7.2 V).
LARGEST_CURRENT = 1000.0  # A: above any stall current in the motor catalog (483 A)
