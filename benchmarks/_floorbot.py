"""The floor of lock-step: a robot program stepped alone, as fast as it goes, by WPILib's
simulated timing from inside its own process (no simserver, no bridge, no physics).

Run in a robot project's directory::

    python benchmarks/_floorbot.py PERIODS NT_PORT [CONFIG]

It starts the program's NetworkTables server on ``NT_PORT`` (so it needs neither port 5810
nor the machine-wide lock), starts the program as ``robotpy sim`` does (``RobotBase.main``),
and from a driver thread: waits for the program to start, pauses its timing, enables it in
autonomous, then calls ``wpilib.simulation.stepTiming(period)`` ``PERIODS`` times, as pyfrc's
test harness steps a robot. The last line it prints is JSON: ``{"periods": N, "period": s,
"wall": s, "autonomous_loops": n}``: the wall time of the ``PERIODS`` steps and how many
autonomous loops the program ran meanwhile.

With CONFIG (a simserver.toml wiring the program), it measures instead the least any lock-step
of the bridge's design can take: the same program with the bridge's own work and simserver's
world in this process, one after the other, each period, with nothing exchanged between
processes: the bridge reads the program's outputs from its HAL, the world steps a period
with them, the bridge writes the sensors into the HAL, and the bridge's clock
(:class:`~simserver.bridge.clock.LockstepClock`) runs the program's next loop.
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


def _in_process(config: str) -> Any:
    """A step function doing a lock-step period of the bridge and the world of ``config``
    in this process (see the module's docstring)."""
    from simserver.bridge.clock import LockstepClock
    from simserver.bridge.core import Bridge
    from simserver.config.loader import load
    from simserver.contract import topics
    from simserver.io.validation import InputValidator, decode_inputs
    from simserver.world.world import World

    cfg = load(config)
    bridge, world, validator = Bridge(cfg), World(cfg), InputValidator()
    motors, solenoids = list(cfg.motors), list(cfg.solenoids)
    clock = LockstepClock(cfg.bridge.timeout, print, os._exit)

    def step(period: float) -> None:
        duties, states = decode_inputs(bridge.outputs(), motors, solenoids, validator)
        for name, duty in duties.items():
            world.set_motor(name, duty)
        for name, on in states.items():
            world.set_solenoid(name, on)
        world.step(period)
        bridge.apply(topics.sensor_values(world.snapshot()))
        clock.step(period)

    return step


def _drive(periods: int, config: str | None) -> None:
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
    step = stepTiming if config is None else _in_process(config)
    start = time.perf_counter()
    for _ in range(periods):
        step(period)
    wall = time.perf_counter() - start
    print(json.dumps({"periods": periods, "period": period, "wall": wall,
                      "autonomous_loops": _loops[0]}), flush=True)
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    periods, nt_port = int(sys.argv[1]), int(sys.argv[2])
    config = sys.argv[3] if len(sys.argv) > 3 else None
    sys.path.insert(0, str(Path.cwd()))
    import robotpy.main

    robotpy.main.robot_py_path = Path.cwd() / "robot.py"  # the deploy directory is beside it
    import ntcore
    import wpilib

    ntcore.NetworkTableInstance.getDefault().startServer("networktables.json", "", 0, nt_port)
    robot = _counted(importlib.import_module("robot").Robot)
    threading.Thread(target=_drive, args=(periods, config), daemon=True).start()
    wpilib.RobotBase.main(robot)


if __name__ == "__main__":
    main()
