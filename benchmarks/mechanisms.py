"""Mechanisms side by side with WPILib: our elevator vs ``wpilib.simulation.ElevatorSim`` and
our arm vs ``SingleJointedArmSim``, same parameters, same dt, same voltages.

What is measured
    Cost: µs per step of :meth:`simserver.models.mechanisms.Elevator.step` (exact solution of
    the linear motor + carriage system, hard stops by event location) and WPILib's
    ``setInputVoltage`` + ``update`` (RKDP behind pybind11), at dt 5 ms and 20 ms, driven by
    the same 8 s voltage schedule (a ±10 V sine with a 4 s period: the carriage runs into
    both stops) looped ``--seconds`` of simulated time. Likewise the arm (our ETDRK4
    exponential integrator vs WPILib's RKDP).

    Accuracy: from rest, 6 V (elevator) or 3 V (arm) for 1 s with no stop in reach, the
    position error at 1 s against an exact reference: the elevator's closed form
    ``x(t) = (β/α)·t − (β/α²)·(1 − e^{−αt})`` and, for the arm, classic RK4 at 10 µs.

    Parameters: elevator 2× Kraken X60 (``DCMotor.krakenX60``), gearing 10, drum radius
    1 in, carriage 8 kg, stops 0 to 1.2 m; arm 1× NEO, gearing 60, 0.6 m, 3 kg (centre of
    gravity at 0.3 m, WPILib's assumption; J = m·d² + m·L²/12), stops −80° to 100°. Both
    sides use g = 9.8 m/s² (WPILib's value) and no rotor inertia, friction or inductance.
    Ours also with the default losses of a config (``[mechanisms.<name>.losses]`` left out:
    gearbox efficiency, free-current load, static friction with stiction): the cost of the
    friction's events (stops at zero speed, stiction holds) on the same schedule.

How
    Warm-up, then ``--repeats`` timed runs in alternating order (ABBA), garbage collector
    paused; best and median µs per step.

Usage::

    python benchmarks/mechanisms.py [--seconds 60] [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from simserver.config.loader import load_section
from simserver.config.losses import LossesConfig, losses_from_config
from simserver.models.losses import IDEAL, Losses
from simserver.models.mechanisms import Arm, Elevator, MotorDrive
from simserver.models.motor import MotorSpec

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

G = 9.8  # m/s², as WPILib's sims
ELEVATOR = {"count": 2, "gearing": 10.0, "drum": 0.0254, "mass": 8.0, "lo": 0.0, "hi": 1.2}
ARM = {"gearing": 60.0, "length": 0.6, "mass": 3.0, "lo": math.radians(-80),
       "hi": math.radians(100)}
ARM_J = ARM["mass"] * 0.3 ** 2 + ARM["mass"] * ARM["length"] ** 2 / 12.0  # kg·m²
STEPS = (0.005, 0.02)  # s


def _kraken() -> Any:
    from wpimath.system.plant import DCMotor

    return DCMotor.krakenX60(1)


def _neo() -> Any:
    from wpimath.system.plant import DCMotor

    return DCMotor.NEO(1)


def _losses(drive: MotorDrive, ratio: float, lossy: bool) -> Losses:
    """A config's default losses for this drive (``lossy``), or none."""
    if not lossy:
        return IDEAL
    return losses_from_config(load_section(LossesConfig, {}), drive.motor, drive.count, ratio)


def ours_elevator(hi: float = ELEVATOR["hi"], lossy: bool = False) -> Elevator:
    drive = MotorDrive(MotorSpec.from_dcmotor("Kraken X60", _kraken()), int(ELEVATOR["count"]),
                       ELEVATOR["gearing"])
    losses = _losses(drive, ELEVATOR["gearing"] / ELEVATOR["drum"], lossy)
    return Elevator(drive, ELEVATOR["mass"], ELEVATOR["drum"], ELEVATOR["lo"], hi, gravity=G,
                    losses=losses)


def wpilib_elevator(hi: float = ELEVATOR["hi"]) -> Any:
    from wpilib.simulation import ElevatorSim
    from wpimath.system.plant import DCMotor

    return ElevatorSim(DCMotor.krakenX60(int(ELEVATOR["count"])), ELEVATOR["gearing"],
                       ELEVATOR["mass"], ELEVATOR["drum"], ELEVATOR["lo"], hi, True, 0.0)


def ours_arm(lo: float = ARM["lo"], hi: float = ARM["hi"], lossy: bool = False) -> Arm:
    drive = MotorDrive(MotorSpec.from_dcmotor("NEO", _neo()), 1, ARM["gearing"])
    return Arm(drive, ARM["length"], ARM["mass"], cg_distance=0.3, moment_of_inertia=ARM_J,
               min_angle=lo, max_angle=hi, start_angle=0.0, gravity=G,
               losses=_losses(drive, ARM["gearing"], lossy))


def wpilib_arm(lo: float = ARM["lo"], hi: float = ARM["hi"]) -> Any:
    from wpilib.simulation import SingleJointedArmSim

    return SingleJointedArmSim(_neo(), ARM["gearing"], ARM_J, ARM["length"], lo, hi, True, 0.0)


def voltages(dt: float, seconds: float, amplitude: float) -> list[float]:
    """The sine schedule (period 4 s), one voltage per step."""
    return [amplitude * math.sin(2.0 * math.pi * k * dt / 4.0)
            for k in range(max(1, round(seconds / dt)))]


def _timed(body: Callable[[], None]) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        body()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def run_ours(model: Elevator | Arm, dt: float, volts: list[float]) -> float:
    step = model.step

    def body() -> None:
        for v in volts:
            step(dt, v)
    return _timed(body)


def run_wpilib(sim: Any, dt: float, volts: list[float]) -> float:
    set_v, update = sim.setInputVoltage, sim.update

    def body() -> None:
        for v in volts:
            set_v(v)
            update(dt)
    return _timed(body)


# --- accuracy --------------------------------------------------------------------------------


def elevator_exact(t: float, volts: float) -> float:
    """Carriage height (m) at ``t`` s from rest at 0 m under ``volts``, no stops: closed form."""
    m = _kraken()
    n, c = ELEVATOR["count"], ELEVATOR["gearing"] / ELEVATOR["drum"]
    alpha = n * c * c * m.Kt / (m.R * m.Kv * ELEVATOR["mass"])
    beta = (-ELEVATOR["mass"] * G + n * c * m.Kt * volts / m.R) / ELEVATOR["mass"]
    return beta / alpha * t - beta / alpha ** 2 * (1.0 - math.exp(-alpha * t))


def arm_reference(t_end: float, volts: float, h: float = 1e-5) -> float:
    """Arm angle (rad) at ``t_end`` s from rest at 0 rad under ``volts``, no stops: RK4 at
    ``h`` s."""
    m = _neo()
    g = ARM["gearing"]
    mgd = ARM["mass"] * G * 0.3

    def f(q: float, w: float) -> tuple[float, float]:
        current = (volts - g * w / m.Kv) / m.R
        return w, (g * m.Kt * current - mgd * math.cos(q)) / ARM_J

    q = w = 0.0
    for _ in range(round(t_end / h)):
        k1 = f(q, w)
        k2 = f(q + 0.5 * h * k1[0], w + 0.5 * h * k1[1])
        k3 = f(q + 0.5 * h * k2[0], w + 0.5 * h * k2[1])
        k4 = f(q + h * k3[0], w + h * k3[1])
        q += h / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        w += h / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return q


def accuracy() -> dict[str, dict[float, dict[str, float]]]:
    """|position error| after 1 s (m or rad) of each model at each dt, and the reference."""
    out: dict[str, dict[float, dict[str, float]]] = {"elevator": {}, "arm": {}}
    ev, av = 6.0, 3.0
    e_ref = elevator_exact(1.0, ev)
    a_ref = arm_reference(1.0, av)
    for dt in STEPS:
        n = round(1.0 / dt)
        ours_e, ref_e = ours_elevator(100.0), wpilib_elevator(100.0)
        ours_a, ref_a = ours_arm(-100.0, 100.0), wpilib_arm(-100.0, 100.0)
        for _ in range(n):
            ours_e.step(dt, ev)
            ref_e.setInputVoltage(ev)
            ref_e.update(dt)
            ours_a.step(dt, av)
            ref_a.setInputVoltage(av)
            ref_a.update(dt)
        out["elevator"][dt] = {"reference": e_ref, "ours": abs(ours_e.position - e_ref),
                               "wpilib": abs(ref_e.getPosition() - e_ref)}
        out["arm"][dt] = {"reference": a_ref, "ours": abs(ours_a.position - a_ref),
                          "wpilib": abs(ref_a.getAngle() - a_ref)}
    return out


# --- measurement -----------------------------------------------------------------------------


def _fresh(run: Callable[[Any, float, list[float]], float], make: Callable[[], Any], dt: float,
           volts: list[float]) -> float:
    """Wall seconds of ``run`` on a freshly made model."""
    return run(make(), dt, volts)


def measure_mechanisms(seconds: float = 60.0, repeats: int = 5) -> dict[str, Any]:
    """Cost (µs per step) of both models of both mechanisms at both dts, and accuracy."""
    if seconds <= 0 or repeats < 1:
        raise ValueError("seconds must be > 0 and repeats ≥ 1")
    cases: list[tuple[str, float, str, Callable[[], float]]] = []
    for dt in STEPS:
        ev = voltages(dt, seconds, 10.0)
        av = voltages(dt, seconds, 6.0)
        cases += [
            ("elevator", dt, "ours", partial(_fresh, run_ours, ours_elevator, dt, ev)),
            ("elevator", dt, "lossy", partial(_fresh, run_ours,
                                              partial(ours_elevator, lossy=True), dt, ev)),
            ("elevator", dt, "wpilib", partial(_fresh, run_wpilib, wpilib_elevator, dt, ev)),
            ("arm", dt, "ours", partial(_fresh, run_ours, ours_arm, dt, av)),
            ("arm", dt, "lossy", partial(_fresh, run_ours, partial(ours_arm, lossy=True), dt,
                                         av)),
            ("arm", dt, "wpilib", partial(_fresh, run_wpilib, wpilib_arm, dt, av)),
        ]
    for *_, run in cases:  # warm-up
        run()
    walls: dict[tuple[str, float, str], list[float]] = {c[:3]: [] for c in cases}
    for r in range(repeats):
        for mech, dt, who, run in (cases if r % 2 == 0 else cases[::-1]):
            walls[(mech, dt, who)].append(run())
    cost = {}
    for (mech, dt, who), w in walls.items():
        per = [x / max(1, round(seconds / dt)) * 1e6 for x in w]
        cost[(mech, dt, who)] = {"best": min(per), "median": statistics.median(per)}
    return {"seconds": seconds, "repeats": repeats, "cost": cost, "accuracy": accuracy()}


# --- output ----------------------------------------------------------------------------------

HEAD = ["mechanism, dt", "ours µs/step (best / median)", "ours, default losses",
        "WPILib µs/step (best / median)", "WPILib / ours (medians)", "|error| at 1 s: ours",
        "WPILib"]


def _rows(res: dict[str, Any]) -> list[list[str]]:
    rows = []
    for mech, unit, label in (("elevator", "m", "elevator vs ElevatorSim"),
                              ("arm", "rad", "arm vs SingleJointedArmSim")):
        for dt in STEPS:
            o, w = res["cost"][(mech, dt, "ours")], res["cost"][(mech, dt, "wpilib")]
            lossy = res["cost"][(mech, dt, "lossy")]
            acc = res["accuracy"][mech][dt]
            rows.append([f"{label}, {dt * 1e3:g} ms", f"{o['best']:.2f} / {o['median']:.2f}",
                         f"{lossy['best']:.2f} / {lossy['median']:.2f}",
                         f"{w['best']:.2f} / {w['median']:.2f}",
                         f"{w['median'] / o['median']:.2f}×", f"{acc['ours']:.1e} {unit}",
                         f"{acc['wpilib']:.1e} {unit}"])
    return rows


def _notes(res: dict[str, Any]) -> list[str]:
    e = res["accuracy"]["elevator"][STEPS[0]]["reference"]
    a = res["accuracy"]["arm"][STEPS[0]]["reference"]
    return [f"Cost over {res['seconds']:g} s simulated (a ±10 V / ±6 V sine into both stops), "
            f"{res['repeats']} repeats in alternating order; > 1 in the ratio: ours faster.",
            f"Error: 1 s from rest at 6 V (elevator, exact height {e:.4f} m, closed form) and "
            f"3 V (arm, exact angle {a:.4f} rad, RK4 at 10 µs), no stops in reach."]


def format_table(res: dict[str, Any]) -> str:
    """Plain-text table."""
    return "\n".join(["Mechanisms vs WPILib's ElevatorSim and SingleJointedArmSim",
                      *text_table(HEAD, _rows(res)), "", *_notes(res)])


def format_markdown(res: dict[str, Any]) -> str:
    """Markdown section."""
    lines = ["| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * (len(HEAD) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", *[f"- {n}" for n in _notes(res)]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="simulated s per timed run")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(format_table(measure_mechanisms(args.seconds, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
