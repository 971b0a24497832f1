"""The floor of lock-step: a robot program stepped alone, as fast as it goes, by WPILib's
simulated timing from inside its own process (no simserver, no bridge, no physics).

Run in a robot project's directory::

    python benchmarks/_floorbot.py PERIODS NT_PORT

It starts the program's NetworkTables server on ``NT_PORT`` (so it needs neither port 5810
nor the machine-wide lock), starts the program as ``robotpy sim`` does (``RobotBase.main``),
and from a driver thread: waits for the program to start, pauses its timing, enables it in
autonomous, then calls ``wpilib.simulation.stepTiming(period)`` ``PERIODS`` times, as pyfrc's
test harness steps a robot. The last line it prints is JSON: ``{"periods": N, "period": s,
"wall": s, "autonomous_loops": n}``: the wall time of the ``PERIODS`` steps and how many
autonomous loops the program ran meanwhile.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

_loops = [0]  # autonomousPeriodic calls: shows the program ran its autonomous every period


def _counted(robot: Any) -> type:
    """``robot`` (a TimedRobot class) with its autonomousPeriodic calls counted."""
    periodic = robot.autonomousPeriodic

    def autonomousPeriodic(self: object) -> None:
        _loops[0] += 1
        periodic(self)

    return type(robot.__name__, (robot,), {"autonomousPeriodic": autonomousPeriodic})


def _drive(periods: int) -> None:
    from wpilib.simulation import (
        DriverStationSim,
        pauseTiming,
        stepTiming,
        waitForProgramStart,
    )

    waitForProgramStart()
    pauseTiming()
    DriverStationSim.setDsAttached(True)
    DriverStationSim.setAutonomous(True)
    DriverStationSim.setEnabled(True)
    DriverStationSim.notifyNewData()
    period = 0.02
    stepTiming(period)  # the mode change's first loop, outside the measurement
    start = time.perf_counter()
    for _ in range(periods):
        stepTiming(period)
    wall = time.perf_counter() - start
    print(json.dumps({"periods": periods, "period": period, "wall": wall,
                      "autonomous_loops": _loops[0]}), flush=True)
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    periods, nt_port = int(sys.argv[1]), int(sys.argv[2])
    sys.path.insert(0, str(Path.cwd()))
    import robotpy.main

    robotpy.main.robot_py_path = Path.cwd() / "robot.py"  # the deploy directory is beside it
    import ntcore
    import wpilib

    ntcore.NetworkTableInstance.getDefault().startServer("networktables.json", "", 0, nt_port)
    robot = _counted(importlib.import_module("robot").Robot)
    threading.Thread(target=_drive, args=(periods,), daemon=True).start()
    wpilib.RobotBase.main(robot)


if __name__ == "__main__":
    main()
