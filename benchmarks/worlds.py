"""Throughput of bigger worlds: a swerve robot, a full robot (swerve + elevator + arm + camera)
and six robots colliding in an arena, each next to a reference stepped in the same run.

What is measured
    Simulated seconds per wall second (× real time) and µs per substep of
    :class:`simserver.world.World` / :class:`simserver.arena.Arena` stepped in-process as fast
    as the CPU allows (no networking, no pacing), tick 10 ms, substep 5 ms (the configs'
    own). Worlds are built from the real configs:

    - swerve: ``examples/swerve/simserver.toml`` (four MK4i modules, eight Kraken X60s,
      ``fidelity = "physical"``: tire model, stiff steer motors) with its battery (every World
      has one: sag, brownout, breaker) on the 2026 field with its elements.
    - full robot: the same swerve plus an elevator (two Kraken X60s) and an arm (a NEO) as in
      tests/worlds.py, and one camera (960×720, 30 fps, the 2026 AprilTags) as in
      tests/io/test_vision_session.py.
    - six robots: two bundled kitbots, two ``examples/mecanum`` and two ``examples/swerve``
      robots on a ring of radius 2.2 m around the blue hub (``[field] elements = true``),
      facing it, all driving at it together: they hit the hub and each other. Also six
      kitbots the same way. Robot-robot contacts are resolved by the arena after every
      substep; wall, field-element and robot-robot contacts are counted.

    Inputs: a 10 s duty-cycle schedule (forward 0.7 for 4 s, back −0.5, forward 0.8 with a
    turn, back −0.4; swerve steer motors ±0.05 in a slow sine; elevator ±0.5 and arm ±0.3 in
    sines), precomputed per tick and looped, the world reset at each loop start.

Reference
    - kitbot: the bundled kitbot World on the same schedule (benchmarks/throughput.py compares
      it with WPILib's DifferentialDrivetrainSim).
    - swerve, full robot: what the same parts cost when built from WPILib's simulation
      classes, as many team physics.py files do: eight ``DCMotorSim`` (drive J 0.025 kg·m²,
      steer J 0.004 kg·m²), ``BatterySim.calculate``, ``SwerveDriveKinematics`` and
      ``Pose2d.exp`` every substep; for the full robot also ``ElevatorSim``,
      ``SingleJointedArmSim`` and photonlibpy's ``PhotonCameraSim.process`` at 30 fps. No tire
      model, no walls, no collisions, no controllers or sensors: less physics than ours.
    - six robots: the same six worlds stepped one by one without the arena (no robot-robot
      collisions), same inputs.

How
    Warm-up, then ``--repeats`` timed runs of every case in alternating order (ABBA), the
    garbage collector paused; best and median.

Goals (from the issue, judged on medians, information only): swerve + battery ≥ 100× real
time; six robots with collisions ≥ 20× real time.

Usage::

    python benchmarks/worlds.py [--seconds 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simserver.arena import Arena
from simserver.config.loader import default_config_text, loads
from simserver.world import World

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

REPO = Path(__file__).resolve().parents[1]
SWERVE = REPO / "examples" / "swerve" / "simserver.toml"
MECANUM = REPO / "examples" / "mecanum" / "simserver.toml"
GOAL_SWERVE = 100.0  # × real time, swerve + battery at the default 5 ms substep
GOAL_SIX = 20.0  # × real time, six robots with collisions
LOOP = 10.0  # s, the input schedule's length
HUB = (4.627, 4.035)  # m, centre of the 2026 blue hub
RING = 2.2  # m, radius of the six robots' start ring

MECHANISMS = """
[motors.lift]
type = "Kraken X60"
count = 2

[motors.shoulder]
type = "NEO"

[mechanisms.lift]
type = "elevator"
motor = "lift"
gearing = 10
drum_radius = "1 in"
carriage_mass = "8 kg"
max_height = "1.2 m"

[mechanisms.arm]
type = "arm"
motor = "shoulder"
gearing = 60
length = "0.6 m"
mass = "3 kg"
min_angle = "-80 deg"
max_angle = "100 deg"
"""

CAMERA = """
[cameras.front]
x = "0.3 m"
z = "0.5 m"
pitch = "-15 deg"
width = 960
height = 720
intrinsics = { fx = 600.0, fy = 600.0, cx = 479.5, cy = 359.5 }
fps = 30
latency = "30 ms"
noise = 0.25
protocol = "photonvision"
"""


# --- configs ---------------------------------------------------------------------------------


def with_elements(text: str) -> str:
    """A config text with the season's field elements switched on."""
    out = text.replace("[field]\n", "[field]\nelements = true\n", 1)
    if out == text:
        raise ValueError("the config has no [field] table")
    return out


def placed(text: str, x: float, y: float, heading_deg: float) -> str:
    """A config text whose robot starts at (x m, y m, heading°)."""
    out, n = re.subn(r"^start = \{[^}]*\}",
                     f'start = {{ x = "{x:.4f} m", y = "{y:.4f} m", '
                     f'heading = "{heading_deg:.3f} deg" }}', text, count=1, flags=re.M)
    if n != 1:
        raise ValueError("the config has no start = { ... } line")
    return out


def swerve_text() -> str:
    return with_elements(SWERVE.read_text())


def full_robot_text() -> str:
    return swerve_text() + MECHANISMS + CAMERA


def ring_texts(bases: list[str]) -> list[str]:
    """One config per base, placed on the ring around the blue hub, facing its centre."""
    out = []
    for i, base in enumerate(bases):
        angle = 2.0 * math.pi * i / len(bases) + math.pi / 6
        x, y = HUB[0] + RING * math.cos(angle), HUB[1] + RING * math.sin(angle)
        out.append(placed(with_elements(base), x, y, math.degrees(angle + math.pi)))
    return out


# --- inputs ----------------------------------------------------------------------------------


def drive_command(t: float) -> tuple[float, float]:
    """(forward duty, turn duty) of the schedule at ``t`` s into a loop."""
    if t < 4.0:
        return 0.7, 0.0
    if t < 5.5:
        return -0.5, 0.0
    if t < 8.0:
        return 0.8, 0.2
    return -0.4, 0.0


def duties(motors: list[str], t: float) -> dict[str, float]:
    """Duty cycle of every motor of a config at ``t`` s into a loop."""
    fwd, turn = drive_command(t)
    out = {}
    for name in motors:
        if name == "left":
            out[name] = fwd - turn
        elif name == "right":
            out[name] = fwd + turn
        elif name.endswith("_steer"):
            out[name] = 0.05 * math.sin(2.0 * math.pi * t / 5.0)
        elif name == "lift":
            out[name] = 0.5 * math.sin(2.0 * math.pi * t / 4.0)
        elif name == "shoulder":
            out[name] = 0.3 * math.sin(2.0 * math.pi * t / 3.0)
        else:  # swerve drive motors, mecanum wheels
            out[name] = fwd
    return out


def schedule(world: World, tick: float) -> list[list[tuple[str, float]]]:
    """Per tick of one loop: (motor, duty) pairs to set."""
    names = list(world.cfg.motors)
    return [list(duties(names, k * tick).items()) for k in range(round(LOOP / tick))]


# --- runners: each returns wall seconds for n ticks ------------------------------------------


@dataclass
class Case:
    """A timed workload: ``run(n_ticks)`` → wall seconds; ``info()`` → anything to report."""

    label: str
    run: Callable[[int], float]
    substeps_per_tick: int
    info: Callable[[], dict[str, Any]] = field(default=lambda: {})


def _timed(body: Callable[[], object]) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        body()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def world_case(label: str, text: str) -> Case:
    world = World(loads(text))
    tick = world.cfg.sim.tick
    plan = schedule(world, tick)
    per_loop = len(plan)
    set_motor, step = world.set_motor, world.step

    def body(n: int) -> int:
        frames = 0
        for i in range(n):
            k = i % per_loop
            if k == 0:
                world.reset()
            for name, duty in plan[k]:
                set_motor(name, duty)
            step(tick)
            frames += len(world.frames)
        return frames

    def info() -> dict[str, Any]:
        """Camera frames delivered per simulated second over one loop (run untimed)."""
        return {"frames_per_s": body(per_loop) / LOOP} if world.vision is not None else {}

    return Case(label, lambda n: _timed(lambda: body(n)), round(tick / world.substep), info)


def arena_case(label: str, texts: list[str], collide: bool) -> Case:
    worlds = {f"r{i}": World(loads(t)) for i, t in enumerate(texts)}
    first = next(iter(worlds.values()))
    tick = first.cfg.sim.tick
    plans = {n: schedule(w, tick) for n, w in worlds.items()}
    per_loop = len(next(iter(plans.values())))
    arena = Arena(worlds, first.cfg.field.restitution, first.cfg.field.wall_friction)
    pairs = [(w.set_motor, plans[n]) for n, w in worlds.items()]
    steppers = [w.step for w in worlds.values()]

    def body(n: int) -> None:
        for i in range(n):
            k = i % per_loop
            if k == 0:
                arena.reset()
            for set_motor, plan in pairs:
                for name, duty in plan[k]:
                    set_motor(name, duty)
            if collide:
                arena.step(tick)
            else:
                for step in steppers:
                    step(tick)

    def info() -> dict[str, Any]:
        """Contacts of all robots during one loop (run untimed)."""
        body(per_loop)
        return {key: sum(getattr(w, key) for w in worlds.values())
                for key in ("robot_hits", "obstacle_hits", "wall_hits")}

    return Case(label, lambda n: _timed(lambda: body(n)), round(tick / first.substep), info)


class WpilibSwerve:
    """The swerve (and optionally elevator, arm, camera) built from WPILib's sim classes."""

    def __init__(self, full: bool, substep: float):
        from wpilib.simulation import DCMotorSim, ElevatorSim, SingleJointedArmSim
        from wpimath.geometry import Pose2d, Translation2d
        from wpimath.kinematics import SwerveDrive4Kinematics
        from wpimath.system.plant import DCMotor, LinearSystemId

        kraken = DCMotor.krakenX60(1)
        self.drive = [DCMotorSim(LinearSystemId.DCMotorSystem(kraken, 0.025, 6.75), kraken)
                      for _ in range(4)]
        self.steer = [DCMotorSim(LinearSystemId.DCMotorSystem(kraken, 0.004, 150 / 7), kraken)
                      for _ in range(4)]
        off = 11.375 * 0.0254
        self.kinematics = SwerveDrive4Kinematics(
            Translation2d(off, off), Translation2d(off, -off), Translation2d(-off, off),
            Translation2d(-off, -off))
        self.start = Pose2d(2.0, 2.0, 0.0)
        self.pose = self.start
        self.volts = 12.7
        self.h = substep
        self.wheel_radius = 2 * 0.0254
        self.elevator = self.arm = self.camera = None
        self.frame_period = 1.0 / 30.0
        if full:
            self.elevator = ElevatorSim(DCMotor.krakenX60(2), 10.0, 8.0, 0.0254, 0.0, 1.2, True,
                                        0.0)
            j = 3.0 * 0.3 ** 2 + 3.0 * 0.6 ** 2 / 12.0
            self.arm = SingleJointedArmSim(DCMotor.NEO(1), 60.0, j, 0.6, math.radians(-80),
                                           math.radians(100), True, 0.0)
            try:
                from benchmarks.vision import MOUNT, make_reference
            except ImportError:  # run as a script
                from vision import MOUNT, make_reference  # type: ignore
            self.camera, self.targets = make_reference(0.25)
            self.mount = MOUNT
        self.reset()

    def reset(self) -> None:
        for sim in (*self.drive, *self.steer):
            sim.setState(0.0, 0.0)
        self.pose = self.start
        self.volts = 12.7
        self.t = 0.0
        self.next_frame = 0.0
        if self.elevator is not None and self.arm is not None:
            self.elevator.setState(0.0, 0.0)
            self.arm.setState(0.0, 0.0)

    def run(self, plan: list[list[tuple[str, float]]], n: int, tick: float) -> float:
        from wpilib.simulation import BatterySim
        from wpimath.geometry import Pose3d, Rotation2d, Twist2d
        from wpimath.kinematics import SwerveModuleState

        drive_names = ["fl_drive", "fr_drive", "bl_drive", "br_drive"]
        steer_names = ["fl_steer", "fr_steer", "bl_steer", "br_steer"]
        per_loop = len(plan)
        substeps = round(tick / self.h)
        calculate = BatterySim.calculate
        to_speeds = self.kinematics.toChassisSpeeds
        h, r = self.h, self.wheel_radius

        def body() -> None:
            for i in range(n):
                k = i % per_loop
                if k == 0:
                    self.reset()
                d = dict(plan[k])
                dd = [d[m] for m in drive_names]
                ds = [d[m] for m in steer_names]
                lift, shoulder = d.get("lift", 0.0), d.get("shoulder", 0.0)
                for _ in range(substeps):
                    v = self.volts
                    currents = []
                    for sim, duty in zip(self.drive, dd, strict=True):
                        sim.setInputVoltage(duty * v)
                        sim.update(h)
                        currents.append(sim.getCurrentDraw())
                    for sim, duty in zip(self.steer, ds, strict=True):
                        sim.setInputVoltage(duty * v)
                        sim.update(h)
                        currents.append(sim.getCurrentDraw())
                    if self.elevator is not None and self.arm is not None:
                        self.elevator.setInputVoltage(lift * v)
                        self.elevator.update(h)
                        self.arm.setInputVoltage(shoulder * v)
                        self.arm.update(h)
                        currents.append(self.elevator.getCurrentDraw())
                        currents.append(self.arm.getCurrentDraw())
                    self.volts = calculate(12.7, 0.015, currents)
                    states = [SwerveModuleState(dr.getAngularVelocity() * r,
                                                Rotation2d(st.getAngularPosition()))
                              for dr, st in zip(self.drive, self.steer, strict=True)]
                    s = to_speeds((states[0], states[1], states[2], states[3]))
                    self.pose = self.pose.exp(Twist2d(s.vx * h, s.vy * h, s.omega * h))
                    self.t += h
                if self.camera is not None and self.t >= self.next_frame:
                    self.next_frame += self.frame_period
                    cam = Pose3d(self.pose).transformBy(self.mount)
                    self.camera.process(0.0, cam, self.targets)
        return _timed(body)


def wpilib_case(label: str, full: bool, reference_world: World) -> Case:
    tick = reference_world.cfg.sim.tick
    plan = schedule(reference_world, tick)
    sim = WpilibSwerve(full, reference_world.substep)
    return Case(label, lambda n: sim.run(plan, n, tick), round(tick / reference_world.substep))


# --- measurement -----------------------------------------------------------------------------


def _summary(walls: list[float], sim_seconds: float, substeps: int) -> dict[str, Any]:
    rates = [sim_seconds / w for w in walls]
    per = [w / substeps * 1e6 for w in walls]
    return {"rate_best": max(rates), "rate_median": statistics.median(rates),
            "us_best": min(per), "us_median": statistics.median(per), "walls": walls}


def build_cases() -> dict[str, list[Case]]:
    """The cases by group; the first of each group is ours, the rest its references."""
    kitbot = default_config_text()
    swerve = swerve_text()
    full = full_robot_text()
    mixed = ring_texts([kitbot, kitbot, MECANUM.read_text(), MECANUM.read_text(),
                        SWERVE.read_text(), SWERVE.read_text()])
    kitbots = ring_texts([kitbot] * 6)
    return {
        "kitbot": [world_case("kitbot World (bundled config)", kitbot)],
        "swerve": [world_case("swerve + battery World (examples/swerve, physical)", swerve),
                   wpilib_case("reference: WPILib sim classes (8 DCMotorSim + BatterySim + "
                               "kinematics)", False, World(loads(swerve)))],
        "full": [world_case("swerve + elevator + arm + camera World", full),
                 wpilib_case("reference: WPILib sim classes + ElevatorSim + "
                             "SingleJointedArmSim + PhotonCameraSim", True, World(loads(full)))],
        "six": [arena_case("six robots (2 kitbot, 2 mecanum, 2 swerve), Arena with "
                           "collisions", mixed, True),
                arena_case("reference: the same six Worlds stepped alone (no robot-robot "
                           "collisions)", mixed, False)],
        "six_kitbots": [arena_case("six kitbots, Arena with collisions", kitbots, True),
                        arena_case("reference: the same six kitbots stepped alone", kitbots,
                                   False)],
    }


def measure_worlds(seconds: float = 30.0, repeats: int = 3, warmup: float = 2.0) -> dict:
    """Time every case; returns the figures by group."""
    if seconds <= 0 or repeats < 1:
        raise ValueError("seconds must be > 0 and repeats ≥ 1")
    groups = build_cases()
    cases = [c for group in groups.values() for c in group]
    tick = 0.01
    n = max(1, round(seconds / tick))
    for c in cases:
        c.run(max(1, round(warmup / tick)))
    walls: dict[str, list[float]] = {c.label: [] for c in cases}
    for r in range(repeats):
        for c in (cases if r % 2 == 0 else cases[::-1]):
            walls[c.label].append(c.run(n))
    out: dict[str, Any] = {"seconds": n * tick, "repeats": repeats, "groups": {}}
    for name, group in groups.items():
        rows = []
        for c in group:
            row = _summary(walls[c.label], n * tick, n * c.substeps_per_tick)
            row["label"] = c.label
            row["info"] = c.info()
            rows.append(row)
        out["groups"][name] = rows
    g = out["groups"]
    out["goals"] = {
        "swerve": {"goal": GOAL_SWERVE, "value": g["swerve"][0]["rate_median"]},
        "six": {"goal": GOAL_SIX, "value": g["six"][0]["rate_median"]},
        "six_kitbots": {"goal": GOAL_SIX, "value": g["six_kitbots"][0]["rate_median"]},
    }
    return out


# --- output ----------------------------------------------------------------------------------

HEAD = ["world", "sim s/wall s best", "median", "µs/substep best", "median", "note"]


def _note(group: str, i: int, row: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    info = row["info"]
    if i > 0:
        return f"ours / reference (medians): {rows[0]['rate_median'] / row['rate_median']:.2f}×"
    if "frames_per_s" in info:
        return f"{info['frames_per_s']:.0f} camera frames per simulated s"
    if "robot_hits" in info and group.startswith("six"):
        return (f"contacts per 10 s loop: {info['robot_hits']:.0f} robot-robot, "
                f"{info['obstacle_hits']:.0f} robot-hub/trench, {info['wall_hits']:.0f} wall")
    return ""


def _rows(res: dict) -> list[list[str]]:
    rows = []
    for group, group_rows in res["groups"].items():
        for i, r in enumerate(group_rows):
            rows.append([r["label"], f"{r['rate_best']:.1f}×", f"{r['rate_median']:.1f}×",
                         f"{r['us_best']:.1f}", f"{r['us_median']:.1f}",
                         _note(group, i, r, group_rows)])
    return rows


def _goal_lines(res: dict) -> list[str]:
    g = res["goals"]
    labels = {"swerve": "swerve (examples/swerve, physical) + battery, 5 ms substep",
              "six": "six robots (2 kitbot, 2 mecanum, 2 swerve) with collisions",
              "six_kitbots": "six kitbots with collisions"}
    return [f"{labels[k]}: ≥ {v['goal']:g}× real time: {v['value']:.1f}× — "
            f"{'met' if v['value'] >= v['goal'] else 'not met'}" for k, v in g.items()]


def _contacts_note(res: dict) -> str:
    ours = res["groups"]["six"][0]["info"]
    alone = res["groups"]["six"][1]["info"]
    return (f"Contacts in one 10 s loop of the schedule: with the arena "
            f"{ours['robot_hits']:.0f} robot-robot; stepped alone the robots drive through "
            f"each other ({alone['robot_hits']:.0f} robot-robot), hitting the hub "
            f"{alone['obstacle_hits']:.0f} times.")


def format_table(res: dict) -> str:
    """Plain-text table."""
    lines = [f"Throughput of bigger worlds, {res['seconds']:g} s simulated per run, tick 10 ms, "
             f"substep 5 ms, {res['repeats']} repeats (alternating order)",
             *text_table(HEAD, _rows(res)), "", _contacts_note(res), "",
             "Goals (medians, information only):", *[f"  {x}" for x in _goal_lines(res)]]
    return "\n".join(lines)


def format_markdown(res: dict) -> str:
    """Markdown section."""
    lines = [f"### Throughput of bigger worlds: {res['seconds']:g} s simulated per run, tick "
             f"10 ms, substep 5 ms, {res['repeats']} repeats (alternating order)", "",
             "Robots from examples/swerve, examples/mecanum and the bundled kitbot on the 2026 "
             "field with its elements; references measured in the same run (see "
             "benchmarks/worlds.py: the WPILib rows model less, no tires, walls or "
             "collisions).", "",
             "| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * 4 + "---|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", _contacts_note(res), "", "Goals (medians, information only):", ""]
    lines += [f"- {x}" for x in _goal_lines(res)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated s per run")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(format_table(measure_worlds(args.seconds, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
