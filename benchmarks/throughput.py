"""Throughput of the physics core: simulated seconds per wall second, and µs per substep.

What is measured
    The bundled kitbot (``load_default()``) stepped in-process by :class:`simserver.world.World`
    as fast as the CPU allows, with no networking, no robot program and no real-time pacing.
    Inputs come from the bundled S-curve script (``simserver/data/s_curve.csv``): every tick
    (``cfg.sim.tick``, 10 ms) the loop calls ``script.at(t)``, sets the duty cycles with
    ``world.set_motor`` and calls ``world.step(tick)``, which runs ``tick / cfg.sim.substep``
    physics substeps (5 ms each). The 10 s script is looped until ``--seconds`` of simulated
    time (default 120 s) have passed; the world is reset to the start pose at each loop start
    so every loop drives the same path. From the kitbot's start pose (2 m, 4 m) the S-curve
    ends against the south wall: in each loop about 23 % of the substeps take the wall-contact
    path (from t ≈ 7.7 s on) and about 6 % resolve an actual impact. That is part of our cost;
    WPILib's model has no field and drives through.

Reference
    In the same run, WPILib's ``wpilib.simulation.DifferentialDrivetrainSim`` is stepped
    through the same workload: built from ``world.drivetrain.drive.params`` (for the kitbot:
    ``DCMotor.CIM(2)``, gearing 10.71, the World's moment of inertia, mass, wheel radius and
    track width), ``setInputs(duty_l·12 V, duty_r·12 V)`` from the same ``script.at(t)`` once
    per tick, then ``update(substep)`` once per substep, reset with ``setState`` at each loop
    start. Its model is a 7-state linear system integrated with RK4 in C++ behind pybind11; ours
    is pure Python with battery sag, wall contact checks, encoders and gyro.

How
    Both loops are warmed up, then timed with ``time.perf_counter`` with the garbage collector
    paused (as ``timeit`` does). Each is measured ``--repeats`` times (default 5), alternating
    which model goes first (ABBA order) so slow drifts of a noisy machine hit both alike. The
    table reports the best (fastest) and the median run. ``script.at`` and the per-tick loop
    are included in both figures; their cost alone is shown on its own line.

    rate           = simulated seconds / wall seconds     (×real time)
    µs per substep = wall seconds / number of substeps · 1e6
    ratio          = rate(ours) / rate(WPILib)            (> 1: ours is faster)

Targets (from the spec, printed as information; the exit status is 0 either way): at least
100× real time, and (with its default losses and tires) at least twice as fast as WPILib's
model. They are judged on the medians.

Usage::

    python benchmarks/throughput.py [--seconds 120] [--repeats 5] [--output FILE] [--profile]

``--output FILE`` appends the table in Markdown, with a line describing the machine.
``measure_throughput()`` returns the figures as a dict for ``benchmarks/run_all.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simserver.config.loader import load_default
from simserver.config.model import Config
from simserver.io.scripted import Script
from simserver.world import World

try:
    from benchmarks._common import (
        bundled_script,
        emit,
        machine_info,
        machine_line,
        summarize,
        text_table,
    )
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import (  # type: ignore
        bundled_script,
        emit,
        machine_info,
        machine_line,
        summarize,
        text_table,
    )

TARGET_REALTIME = 100.0  # spec: at least 100× real time
TARGET_RATIO = 2.0  # issue 21: with its losses and tires, twice as fast as WPILib's model
WPILIB_VOLTS = 12.0  # setInputs takes volts; duty cycles are scaled by 12 V


@dataclass
class Workload:
    """The scripted drive both models run, and the kitbot parameters."""

    cfg: Config
    script: Script
    tick: float
    substep: float
    substeps_per_tick: int
    ticks_per_loop: int

    @staticmethod
    def build(cfg: Config | None = None) -> Workload:
        cfg = cfg or load_default()
        script = bundled_script(cfg)
        tick, substep = cfg.sim.tick, cfg.sim.substep
        return Workload(cfg, script, tick, substep, max(1, round(tick / substep)),
                        max(1, round(script.duration / tick)))

    def ticks_for(self, seconds: float) -> int:
        return max(1, round(seconds / self.tick))


def run_ours(wl: Workload, n_ticks: int) -> tuple[float, tuple[float, float, float]]:
    """Time ``n_ticks`` ticks of World. Returns (wall s, final pose x m, y m, heading rad)."""
    world = World(wl.cfg)
    at, set_motor, set_solenoid, step = (wl.script.at, world.set_motor, world.set_solenoid,
                                         world.step)
    tick, per_loop = wl.tick, wl.ticks_per_loop
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for i in range(n_ticks):
            k = i % per_loop
            if k == 0:
                world.reset()
            motors, solenoids = at(k * tick)
            for name, duty in motors.items():
                set_motor(name, duty)
            for name, on in solenoids.items():
                set_solenoid(name, on)
            step(tick)
        elapsed = time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()
    st = world.drivetrain.drive.state
    return elapsed, (st.x, st.y, st.heading)


def make_wpilib_sim(world: World) -> Any:
    """WPILib's DifferentialDrivetrainSim with the World's drivetrain parameters."""
    from wpilib.simulation import DifferentialDrivetrainSim
    from wpimath.system.plant import DCMotor

    p = world.drivetrain.drive.params
    m = p.motor
    motor = DCMotor(m.nominal_voltage, m.stall_torque, m.stall_current, m.free_current,
                    m.free_speed, p.motors_per_side)  # the kitbot: same as DCMotor.CIM(2)
    return DifferentialDrivetrainSim(motor, p.gearing, p.moment_of_inertia, p.mass,
                                     p.wheel_radius, p.track_width)


def run_wpilib(wl: Workload, n_ticks: int) -> tuple[float, tuple[float, float, float]]:
    """Time ``n_ticks`` ticks of WPILib's model. Returns (wall s, final pose)."""
    cfg = wl.cfg
    sim = make_wpilib_sim(World(cfg))
    start_pose = cfg.robot.start
    initial = np.array([start_pose.x, start_pose.y, start_pose.heading, 0.0, 0.0, 0.0, 0.0])
    left, right = cfg.drivetrain.left, cfg.drivetrain.right
    vl = -WPILIB_VOLTS if cfg.motors[left].inverted else WPILIB_VOLTS
    vr = -WPILIB_VOLTS if cfg.motors[right].inverted else WPILIB_VOLTS
    at, set_inputs, update = wl.script.at, sim.setInputs, sim.update
    tick, per_loop, substep = wl.tick, wl.ticks_per_loop, wl.substep
    substeps = range(wl.substeps_per_tick)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for i in range(n_ticks):
            k = i % per_loop
            if k == 0:
                sim.setState(initial)
            motors, _ = at(k * tick)
            set_inputs(motors[left] * vl, motors[right] * vr)
            for _ in substeps:
                update(substep)
        elapsed = time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()
    pose = sim.getPose()
    return elapsed, (pose.X(), pose.Y(), pose.rotation().radians())


def run_script_only(wl: Workload, n_ticks: int) -> float:
    """Time the per-tick loop and ``script.at`` alone (included in both figures). Wall s."""
    at, tick, per_loop = wl.script.at, wl.tick, wl.ticks_per_loop
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for i in range(n_ticks):
            at((i % per_loop) * tick)
        elapsed = time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()
    return elapsed


Runner = Callable[[Workload, int], tuple[float, tuple[float, float, float]]]


def _figures(elapsed: list[float], sim_seconds: float, substeps: int) -> dict[str, Any]:
    rates = [sim_seconds / e for e in elapsed]
    per_substep = [e / substeps * 1e6 for e in elapsed]
    return {
        "rate": summarize(rates),
        "us_per_substep": summarize(per_substep, higher_is_better=False),
        "wall_seconds": elapsed,
    }


def measure_throughput(seconds: float = 120.0, repeats: int = 5, warmup: float = 2.0,
                       cfg: Config | None = None) -> dict[str, Any]:
    """Measure both models on the looped S-curve; returns every figure the table shows.

    seconds: simulated time per run. repeats: timed runs of each model (alternating order).
    warmup: simulated seconds run untimed by each model first. cfg: robot (default: kitbot).
    """
    if seconds <= 0 or repeats < 1:
        raise ValueError("seconds must be > 0 and repeats ≥ 1")
    wl = Workload.build(cfg)
    n_ticks = wl.ticks_for(seconds)
    sim_seconds = n_ticks * wl.substeps_per_tick * wl.substep
    substeps = n_ticks * wl.substeps_per_tick
    if warmup > 0:
        warm = wl.ticks_for(min(warmup, seconds))
        run_ours(wl, warm)
        run_wpilib(wl, warm)
    runners: list[tuple[str, Runner]] = [("ours", run_ours), ("wpilib", run_wpilib)]
    elapsed: dict[str, list[float]] = {"ours": [], "wpilib": []}
    poses: dict[str, tuple[float, float, float]] = {}
    script_only: list[float] = []
    for r in range(repeats):
        order = runners if r % 2 == 0 else runners[::-1]
        for name, run in order:
            wall, poses[name] = run(wl, n_ticks)
            elapsed[name].append(wall)
        script_only.append(run_script_only(wl, n_ticks))
    ours = _figures(elapsed["ours"], sim_seconds, substeps)
    wpilib = _figures(elapsed["wpilib"], sim_seconds, substeps)
    ours["final_pose"], wpilib["final_pose"] = poses["ours"], poses["wpilib"]
    ratio = {k: ours["rate"][k] / wpilib["rate"][k] for k in ("best", "median")}
    script_us = summarize([e / n_ticks * 1e6 for e in script_only], higher_is_better=False)
    p = World(wl.cfg).drivetrain.drive.params
    return {
        "benchmark": "throughput",
        "sim_seconds": sim_seconds,
        "repeats": repeats,
        "tick": wl.tick,
        "substep": wl.substep,
        "substeps": substeps,
        "fidelity": wl.cfg.drivetrain.fidelity,
        "params": {"motor": f"{p.motors_per_side}× {p.motor.name}", "gearing": p.gearing,
                   "moment_of_inertia": p.moment_of_inertia, "mass": p.mass,
                   "wheel_radius": p.wheel_radius, "track_width": p.track_width},
        "ours": ours,
        "wpilib": wpilib,
        "ratio": ratio,
        "script_us_per_tick": script_us,
        "targets": {
            "realtime": {"target": TARGET_REALTIME, "value": ours["rate"]["median"],
                         "met": ours["rate"]["median"] >= TARGET_REALTIME},
            "vs_wpilib": {"target": TARGET_RATIO, "value": ratio["median"],
                          "met": ratio["median"] >= TARGET_RATIO},
        },
        "machine": machine_info(),
    }


# --- output -----------------------------------------------------------------------------------


def _title(res: dict[str, Any]) -> str:
    return (f"Throughput: kitbot ({res['fidelity']}), bundled S-curve looped, "
            f"{res['sim_seconds']:g} s simulated per run, tick {res['tick'] * 1e3:g} ms, "
            f"substep {res['substep'] * 1e3:g} ms, {res['repeats']} repeats "
            f"(alternating order)")


def _rows(res: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, key in (("simserver World", "ours"),
                       ("WPILib DifferentialDrivetrainSim", "wpilib")):
        f = res[key]
        rows.append([label, f"{f['rate']['best']:.1f}×", f"{f['rate']['median']:.1f}×",
                     f"{f['us_per_substep']['best']:.2f}", f"{f['us_per_substep']['median']:.2f}"])
    r = res["ratio"]
    rows.append(["ratio ours / WPILib (>1: ours faster)", f"{r['best']:.2f}", f"{r['median']:.2f}",
                 "", ""])
    return rows


_HEAD = ["model", "sim s/wall s best", "median", "µs/substep best", "median"]


def _target_lines(res: dict[str, Any]) -> list[str]:
    t = res["targets"]
    rt, vs = t["realtime"], t["vs_wpilib"]
    return [
        f"≥ {rt['target']:g}× real time: {rt['value']:.1f}× — "
        f"{'met' if rt['met'] else 'not met'}",
        f"at least twice as fast as WPILib's model (ratio ≥ {vs['target']:g}): {vs['value']:.2f} — "
        f"{'met' if vs['met'] else 'not met'}",
    ]


def _pose(p: tuple[float, float, float]) -> str:
    return f"x {p[0]:.3f} m, y {p[1]:.3f} m, heading {p[2]:.3f} rad"


def format_table(res: dict[str, Any]) -> str:
    """The plain-text table printed to stdout."""
    lines = [_title(res), f"Machine: {machine_line(res['machine'])}", "",
             *text_table(_HEAD, _rows(res))]
    lines += [
        "",
        f"Per-tick loop + script.at alone (included in both rows): "
        f"{res['script_us_per_tick']['median']:.2f} µs/tick median "
        f"({res['script_us_per_tick']['median'] / (res['tick'] / res['substep']):.2f} µs/substep)",
        f"End pose, ours:   {_pose(res['ours']['final_pose'])}",
        f"End pose, WPILib: {_pose(res['wpilib']['final_pose'])}  "
        "(WPILib: fixed 12 V, no battery sag)",
        "",
        "Spec targets (judged on medians; information only):",
        *[f"  {line}" for line in _target_lines(res)],
    ]
    return "\n".join(lines)


def format_markdown(res: dict[str, Any]) -> str:
    """The table as a Markdown section, with the machine described."""
    lines = [f"### {_title(res)}", "", f"Machine: {machine_line(res['machine'])}", "",
             "| " + " | ".join(_HEAD) + " |", "|" + "---|" + "---:|" * (len(_HEAD) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(res)]
    lines += ["", f"Per-tick loop + script.at alone (in both rows): "
                  f"{res['script_us_per_tick']['median']:.2f} µs/tick (median).", "",
              "Spec targets (medians, information only):", ""]
    lines += [f"- {line}" for line in _target_lines(res)]
    return "\n".join(lines) + "\n"


def profile_ours(seconds: float, top: int = 20) -> str:
    """cProfile of our loop (``seconds`` simulated), top functions by own time."""
    wl = Workload.build()
    prof = cProfile.Profile()
    prof.runcall(run_ours, wl, wl.ticks_for(seconds))
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=120.0,
                    help="simulated seconds per run (default 120)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each model (default 5)")
    ap.add_argument("--output", type=Path, help="append the table in Markdown to this file")
    ap.add_argument("--profile", action="store_true",
                    help="also print a cProfile of our loop (top functions by own time)")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        ap.error("--seconds must be > 0 and --repeats ≥ 1")
    res = measure_throughput(args.seconds, args.repeats)
    emit(format_table(res), format_markdown(res), args.output)
    if args.profile:
        print("\ncProfile of our loop (profiler overhead inflates every figure):")
        print(profile_ours(min(args.seconds, 30.0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
