"""The robot-side bridge: ``python -m robotpy sim --simserver``.

Registered in the ``robotpy_sim.2026`` entry-point group, so ``robotpy sim`` offers the
``--simserver`` flag and calls :func:`loadExtension` before the robot program starts. The
bridge reads ``simserver.toml`` from the project directory (or the file ``$SIMSERVER_CONFIG``
names), maps the HAL devices its ``hal`` keys name to simserver's topics, and exchanges them
every robot loop through the HAL's SimPeriodicAfter callback: over its step port with
simserver (real time: :mod:`~simserver.bridge.sync`; lock-step:
:mod:`~simserver.bridge.stepport`), or over NetworkTables while no simserver is attached.
Importing this package is cheap: wpilib is only loaded by loadExtension.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

CONFIG_NAME = "simserver.toml"
_keep: list[Any] = []  # callback handles and threads that must live as long as the process


def _say(message: str) -> None:
    print(f"simserver bridge: {message}", file=sys.stderr, flush=True)


def config_path() -> Path:
    """The config the bridge uses: ``$SIMSERVER_CONFIG`` or ./simserver.toml."""
    return Path(os.environ.get("SIMSERVER_CONFIG") or CONFIG_NAME)


def realtime_budget(period: float) -> float:
    """Wall time (s) a real-time robot loop waits for simserver's answer: half the period, so a
    late answer never makes the loop itself late (an answer takes well under 1 ms)."""
    return 0.5 * period


def loadExtension() -> None:
    """Start the bridge (called by ``robotpy sim`` when given ``--simserver``)."""
    if os.environ.get("SIMSERVER_DISCOVER"):  # `simserver init`: list devices, no physics
        from simserver.bridge.discovery import start

        start(os.environ["SIMSERVER_DISCOVER"])
        return
    import hal.simulation
    from wpilib.simulation import DriverStationSim, pauseTiming, restartTiming

    from simserver.bridge.core import Bridge
    from simserver.bridge.direction import DirectionWatch
    from simserver.bridge.ntserver import move_server
    from simserver.bridge.realtime import NtLink
    from simserver.bridge.stepport import StepPort, fail_fast
    from simserver.bridge.sync import RealtimeSync
    from simserver.bridge.vendorsims import take_over, take_over_rev
    from simserver.config.loader import ConfigError, load

    path = config_path()
    if not path.is_file():
        _say(f"no {path} in {Path.cwd()}: put a simserver.toml with `hal` wiring beside "
             "robot.py (`simserver config -o simserver.toml` writes a starting point) or set "
             "SIMSERVER_CONFIG")
        raise SystemExit(2)
    try:
        cfg = load(path)
    except ConfigError as exc:
        for issue in exc.issues:
            _say(issue.render(exc.source))
        raise SystemExit(2) from None
    for line in cfg.warnings:
        _say(line)
    problem = move_server(cfg.bridge.nt_port)
    if problem is not None:
        _say(f"{path}: {problem}")
        raise SystemExit(2)
    bridge = Bridge(cfg)
    direction = DirectionWatch(cfg)
    link = NtLink(bridge)
    sync = RealtimeSync(bridge, realtime_budget(cfg.bridge.period), _say)
    if cfg.bridge.lockstep:
        pauseTiming()
        restartTiming()
    try:
        server = StepPort(bridge, cfg.bridge, sync, fail_fast, _say)
    except OSError as exc:
        _say(f"cannot listen for simserver (step port) on {cfg.bridge.bind}:"
             f"{cfg.bridge.port} ({exc}); "
             "set bridge.port to a free port")
        raise SystemExit(2) from None
    reported = [False]
    vendor_sims = [False]  # CTRE's swerve simulation turned off where simserver wires it
    rev_sims = [False]  # REV's SparkSim.iterate from the program, likewise

    wired = bridge.wired()

    def observe() -> None:
        if not rev_sims[0]:
            rev_sims[0] = take_over_rev(wired, _say)
        if not vendor_sims[0]:
            vendor_sims[0] = take_over(wired, _say)
            if vendor_sims[0]:  # a call already under way may still write: not a conflict
                return
        bridge.observe()

    def report() -> None:
        reported[0] = True
        lines = bridge.unwired()
        if lines:
            _say(f"the robot program uses devices {path} does not wire:")
            for line in lines:
                _say(f"  {line}")
        for line in bridge.missing():
            _say(f"{path}: {line}")
        direction.start()

    def periodic() -> None:
        bridge.settle()
        if reported[0] and direction.pairs and DriverStationSim.getEnabled():
            direction.periodic()
            for line in direction.warnings:
                _say(f"{path}: {line}")
            direction.warnings.clear()
        if server.loop_ended():
            if not reported[0]:
                report()
            return
        if not sync.periodic():
            link.periodic()
        for line in bridge.warnings:
            _say(line)
        bridge.warnings.clear()
        if not reported[0]:
            report()

    _keep.append(hal.simulation.registerSimPeriodicBeforeCallback(observe))
    _keep.append(hal.simulation.registerSimPeriodicAfterCallback(periodic))
    server.start()
    _keep.extend((bridge, link, server))
    mode = "lock-step (waiting for simserver)" if cfg.bridge.lockstep else "real time"
    _say(f"{path}: {len(bridge.motors)} motors, {len(bridge.encoders)} encoders, "
         f"gyro {'wired' if bridge.gyro else 'not wired'}; {mode}; step port "
         f"{cfg.bridge.bind}:{cfg.bridge.port}; NetworkTables port {cfg.bridge.nt_port}")
