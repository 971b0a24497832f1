"""Throughput of bigger worlds: a swerve robot, a full robot (swerve + elevator + arm + camera)
and six robots in an arena, each next to a reference stepped in the same run.

What is measured
    Simulated seconds per wall second (× real time) and µs per substep of
    :class:`simserver.world.World` / :class:`simserver.world.arena.Arena` stepped in-process as fast
    as the CPU allows (no networking, no pacing), tick 10 ms, substep 5 ms (the configs'
    own). Worlds are built from the real configs: ``examples/swerve/simserver.toml`` (four MK4i
    modules, eight Kraken X60s, ``fidelity = "physical"``: tire model, stiff steer motors, its
    battery: sag, brownout, breaker), ``examples/mecanum`` and the bundled kitbot. Every case
    loops a 10 s input plan and resets its worlds at each loop start. Two kinds of driving:

    - driving: what robot code does. The swerve drives PATH (a 6.7 m × 4.9 m rectangle:
      ahead, strafe left, back, strafe right, then a spin in place), drive duties open loop and
      each steer motor on a proportional loop on its module's measured azimuth (its cost is in
      the timing). Wheels slip when the Krakens launch or the modules turn under load.
    - pushing: every robot drives ahead at 0.7 for 4 s and keeps pushing at whatever it meets
      with its wheels spinning, backs off, drives at 0.8 with a turn, backs off (steer duties
      ±0.05 in a slow sine). A worst case: sliding substeps cost 2-3× rolling ones.

    Cases:

    - swerve + battery, driving (examples/swerve as shipped: perimeter walls, no elements),
      and the same robot pushing into the 2026 field elements from (2 m, 2 m).
    - full robot, pushing: the swerve plus an elevator (two Kraken X60s) and an arm (a NEO) as
      in tests/worlds.py, and one camera (960×720, 30 fps, the 2026 AprilTags) as in
      tests/io/test_vision_session.py.
    - six robots, match: two kitbots, two mecanum and two swerve robots on the 2026 field with
      its elements (MATCH), each on its own loop (kitbots TANK_LOOP, the others PATH at half
      size), the loops crossing in mid-field. Robot-robot contacts are resolved by the arena
      after every substep; wall, field-element and robot-robot contacts are counted.
    - six robots, scrum: the same six kinds on a ring of radius 2.2 m around the blue hub,
      facing it, all on the pushing schedule: they hit the hub and each other and keep
      pushing. Also six kitbots the same way.

Reference
    - swerve, full robot: what the same parts cost when built from WPILib's simulation
      classes, as many team physics.py files do: eight ``DCMotorSim`` (drive J 0.025 kg·m²,
      steer J 0.004 kg·m²), ``BatterySim.calculate``, ``SwerveDriveKinematics`` and
      ``Pose2d.exp`` every substep; for the full robot also ``ElevatorSim``,
      ``SingleJointedArmSim`` and photonlibpy's ``PhotonCameraSim.process`` at 30 fps. No tire
      model, no walls, no collisions, no controllers or sensors: less physics than ours, and a
      cost that does not depend on the inputs (it is stepped on the pushing schedule). The
      full robot's reference is left out on Python 3.10, which has no photonlibpy 2026.
    - six robots: the same six worlds stepped one by one without the arena (no robot-robot
      collisions), same inputs.

How
    Warm-up, then ``--repeats`` timed runs of every case in alternating order (ABBA), the
    garbage collector paused; best and median.

Goals (from the issues, judged on medians, information only): swerve + battery ≥ 100× real
time (driving and pushing); the full robot, with its default losses, ≥ 50× real time; six
robots with collisions ≥ 20× real time.

Usage::

    python benchmarks/worlds.py [--seconds 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from simserver.config.loader import default_config_text, loads
from simserver.world import World
from simserver.world.arena import Arena

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

REPO = Path(__file__).resolve().parents[1]
SWERVE = REPO / "examples" / "swerve" / "simserver.toml"
MECANUM = REPO / "examples" / "mecanum" / "simserver.toml"
GOAL_SWERVE = 100.0  # × real time, swerve + battery at the default 5 ms substep
GOAL_SIX = 20.0  # × real time, six robots with collisions
GOAL_FULL = 50.0  # × real time, swerve + elevator + arm + camera with the default losses
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
    """A config text whose robot starts at (x m, y m, heading°, taken within ±180°: a config
    refuses a start heading beyond ±360°)."""
    heading_deg = (heading_deg + 180.0) % 360.0 - 180.0
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


#: The match: (robot, start x m, y m, heading °). Each robot drives its own loop (kitbots
#: TANK_LOOP, the others PATH at half size, twice), the red robots mirroring the blue ones
#: through the field centre; the swerve and mecanum loops cross in mid-field, so robots meet
#: there, and the swerves brush the walls.
MATCH = (("kitbot", 1.5, 2.5, 90.0), ("kitbot", 15.04, 5.57, -90.0),
         ("mecanum", 8.9, 3.4, 90.0), ("mecanum", 7.64, 4.67, -90.0),
         ("swerve", 5.8, 1.0, 0.0), ("swerve", 10.74, 7.07, 180.0))


def match_robots() -> list[tuple[str, Callable[[World], Driver]]]:
    """(config text, driver) of every MATCH robot, on the 2026 field with its elements."""
    bases: dict[str, tuple[str, Callable[[World], Driver]]] = {
        "kitbot": (default_config_text(), tank_loop_driver),
        "mecanum": (MECANUM.read_text(), partial(mecanum_path_driver, scale=0.5)),
        "swerve": (SWERVE.read_text(), partial(swerve_path_driver, scale=0.5))}
    return [(placed(with_elements(bases[kind][0]), x, y, heading), bases[kind][1])
            for kind, x, y, heading in MATCH]


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
    """Per tick of one loop: (motor, duty) pairs of the pushing schedule (drive_command)."""
    names = list(world.cfg.motors)
    return [list(duties(names, k * tick).items()) for k in range(round(LOOP / tick))]


#: A driver sets a World's motor outputs for tick k of the 10 s loop, as robot code would.
Driver = Callable[[int], None]


def _plan_driver(world: World, plan: list[list[tuple[str, float]]]) -> Driver:
    set_motor = world.set_motor

    def drive(k: int) -> None:
        for name, duty in plan[k]:
            set_motor(name, duty)

    return drive


def push_driver(world: World) -> Driver:
    """Open-loop duties of the pushing schedule: every robot drives ahead for 4 s and keeps
    pushing once it meets something (wheels spinning), backs off, and so on."""
    return _plan_driver(world, schedule(world, world.cfg.sim.tick))


#: Segments of the driving loop: (seconds, direction in the robot frame in rad or "spin",
#: drive duty). From (2 m, 2 m) facing +x the example swerve drives a 6.7 m × 4.9 m rectangle
#: (forward, strafe left, back, strafe right) and spins in place at the end.
PATH: tuple[tuple[float, float | str, float], ...] = (
    (2.2, 0.0, 0.6), (2.0, math.pi / 2, 0.5), (2.2, 0.0, -0.6), (2.0, math.pi / 2, -0.5),
    (1.6, "spin", 0.4))
STEER_KP = 1.5  # steer duty per rad of azimuth error
STEER_MAX = 0.6  # steer duty limit


def _path_segments(tick: float, scale: float = 1.0) -> list[tuple[float | str, float]]:
    """Per tick of one loop: PATH's (direction, duty), its segments ``scale`` times as long
    (0.5: a loop half the size, driven twice)."""
    period = scale * sum(seg[0] for seg in PATH)
    out = []
    for k in range(round(LOOP / tick)):
        t, j = (k * tick) % period, 0
        while j < len(PATH) - 1 and t >= scale * PATH[j][0]:
            t -= scale * PATH[j][0]
            j += 1
        out.append((PATH[j][1], PATH[j][2]))
    return out


def swerve_path_driver(world: World, scale: float = 1.0) -> Driver:
    """PATH for a swerve: the segment's drive duty on every drive motor and, on each steer
    motor, a proportional controller on the module's measured azimuth toward the segment's
    direction (wheels tangent to a CCW turn for "spin"). This is the closed loop robot code
    runs; its cost (a few µs per tick) is inside the timing."""
    holo = world.drivetrain
    assert holo is not None and holo.steer
    spin = [math.atan2(p.x, -p.y) for p in holo.model.modules]
    plan = [(spin if d == "spin" else [float(d)] * len(spin), duty)
            for d, duty in _path_segments(world.cfg.sim.tick, scale)]
    drive = [g.name for g in holo.drive]
    steer = [g.name for g in holo.steer]
    set_motor, remainder, tau = world.set_motor, math.remainder, 2.0 * math.pi

    def run(k: int) -> None:
        targets, duty = plan[k]
        for name in drive:
            set_motor(name, duty)
        states = holo.model.module_states()
        for name, target, (_, angle) in zip(steer, targets, states, strict=True):
            error = remainder(target - angle, tau)
            set_motor(name, max(-STEER_MAX, min(STEER_MAX, STEER_KP * error)))

    return run


def mecanum_path_driver(world: World, scale: float = 1.0) -> Driver:
    """PATH for a mecanum robot, open loop: wheel duties with wpimath's inverse kinematics
    signs (front-left vx − vy − ω, front-right vx + vy + ω, rear-left vx + vy − ω, rear-right
    vx − vy + ω), negated for inverted motor outputs as robot code does."""
    holo = world.drivetrain
    assert holo is not None and not holo.steer
    names = [g.name for g in holo.drive]  # FL, FR, RL, RR
    sign = [-1.0 if world.cfg.motors[n].inverted else 1.0 for n in names]
    plan = []
    for d, duty in _path_segments(world.cfg.sim.tick, scale):
        vx, vy, w = (0.0, 0.0, 1.0) if isinstance(d, str) else (math.cos(d), math.sin(d), 0.0)
        wheels = (vx - vy - w, vx + vy + w, vx + vy - w, vx - vy + w)
        plan.append([(n, s * duty * x) for n, s, x in zip(names, sign, wheels, strict=True)])
    return _plan_driver(world, plan)


#: A tank robot's loop: (seconds, left duty, right duty), repeated: ahead, then a left turn
#: of roughly a quarter, so the kitbot drives a rough square of about 2.5 m.
TANK_LOOP = ((1.0, 0.5, 0.5), (0.45, -0.45, 0.45))


def tank_loop_driver(world: World) -> Driver:
    """TANK_LOOP on the drivetrain's left and right motor outputs, open loop."""
    tick = world.cfg.sim.tick
    left, right = world.cfg.drivetrain.left, world.cfg.drivetrain.right
    period = sum(seg[0] for seg in TANK_LOOP)
    plan = []
    for k in range(round(LOOP / tick)):
        t, j = (k * tick) % period, 0
        while j < len(TANK_LOOP) - 1 and t >= TANK_LOOP[j][0]:
            t -= TANK_LOOP[j][0]
            j += 1
        plan.append([(left, TANK_LOOP[j][1]), (right, TANK_LOOP[j][2])])
    return _plan_driver(world, plan)


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


def world_case(label: str, text: str, driver: Callable[[World], Driver] = push_driver) -> Case:
    """One World driven by ``driver``, reset at each loop start."""
    world = World(loads(text))
    tick = world.cfg.sim.tick
    drive, step = driver(world), world.step
    per_loop = round(LOOP / tick)
    model = getattr(world.drivetrain, "model", None)  # a holonomic drivetrain's tire model
    slipping = getattr(model, "slipping", None)

    def body(n: int, tally: dict[str, float] | None = None) -> None:
        for i in range(n):
            k = i % per_loop
            if k == 0:
                world.reset()
            drive(k)
            step(tick)
            if tally is not None:
                tally["frames"] += len(world.frames)
                tally["slipping"] += slipping is not None and bool(model.slipping.any())
                tally["touching"] += world.touching_wall or world.touching_obstacle

    def info() -> dict[str, Any]:
        """Over one loop (run untimed): camera frames per simulated second, and the share of
        ticks ending with a wheel slipping or the robot touching a wall or element."""
        tally = {"frames": 0.0, "slipping": 0.0, "touching": 0.0}
        body(per_loop, tally)
        out = {"touching": tally["touching"] / per_loop}
        if slipping is not None:
            out["slipping"] = tally["slipping"] / per_loop
        if world.vision is not None:
            out["frames_per_s"] = tally["frames"] / LOOP
        return out

    return Case(label, lambda n: _timed(lambda: body(n)), round(tick / world.substep), info)


def arena_case(label: str, robots: list[tuple[str, Callable[[World], Driver]]],
               collide: bool) -> Case:
    """Worlds from (config text, driver) pairs in one Arena (``collide``) or stepped alone."""
    worlds = {f"r{i}": World(loads(t)) for i, (t, _) in enumerate(robots)}
    first = next(iter(worlds.values()))
    tick = first.cfg.sim.tick
    per_loop = round(LOOP / tick)
    drivers = [make(w) for w, (_, make) in zip(worlds.values(), robots, strict=True)]
    arena = Arena(worlds, first.cfg.field.restitution, first.cfg.field.wall_friction)
    steppers = [w.step for w in worlds.values()]

    def body(n: int) -> None:
        for i in range(n):
            k = i % per_loop
            if k == 0:
                arena.reset()
            for drive in drivers:
                drive(k)
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
                from benchmarks.vision import MOUNT, make_reference, reference_frame
            except ImportError:  # run as a script
                from vision import MOUNT, make_reference, reference_frame  # type: ignore
            self.camera, self.targets = make_reference(0.25)
            self.frame = reference_frame
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
                    self.frame(self.camera, cam, self.targets)
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
    swerve = SWERVE.read_text()
    pushing = swerve_text()
    full = full_robot_text()
    match = match_robots()
    ring = [(t, push_driver) for t in ring_texts(
        [kitbot, kitbot, MECANUM.read_text(), MECANUM.read_text(), swerve, swerve])]
    kitbots = [(t, push_driver) for t in ring_texts([kitbot] * 6)]
    # Its camera is photonlibpy's PhotonCameraSim: not installed on Python 3.10.
    full_reference = [wpilib_case("reference: WPILib sim classes + ElevatorSim + "
                                  "SingleJointedArmSim + PhotonCameraSim", True,
                                  World(loads(full)))
                      ] if importlib.util.find_spec("photonlibpy") is not None else []
    reference = wpilib_case("reference: WPILib sim classes (8 DCMotorSim + BatterySim + "
                            "kinematics)", False, World(loads(pushing)))
    return {
        "kitbot": [world_case("kitbot World (bundled config), pushing schedule", kitbot)],
        "swerve": [world_case("swerve + battery World (examples/swerve, physical), driving "
                              "PATH with closed-loop steering", swerve, swerve_path_driver),
                   reference],
        "swerve_push": [world_case("swerve + battery World, pushing schedule into the 2026 "
                                   "elements", pushing)],
        "full": [world_case("swerve + elevator + arm + camera World, pushing schedule", full),
                 *full_reference],
        "six": [arena_case("six robots (2 kitbot, 2 mecanum, 2 swerve), match: own loops, "
                           "Arena with collisions", match, True),
                arena_case("reference: the same six Worlds stepped alone (no robot-robot "
                           "collisions)", match_robots(), False)],
        "six_push": [arena_case("six robots (2 kitbot, 2 mecanum, 2 swerve), scrum: pushing "
                                "schedule at the hub, Arena with collisions", ring, True),
                     arena_case("reference: the same six Worlds stepped alone", ring, False)],
        "six_kitbots": [arena_case("six kitbots, scrum, Arena with collisions", kitbots, True),
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
    out["goals"] = {key: {"goal": goal, "value": g[key][0]["rate_median"]}
                    for key, goal in (("swerve", GOAL_SWERVE), ("swerve_push", GOAL_SWERVE),
                                      ("full", GOAL_FULL), ("six", GOAL_SIX),
                                      ("six_push", GOAL_SIX),
                                      ("six_kitbots", GOAL_SIX))}
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
    if "slipping" in info:
        return (f"ticks ending with a wheel slipping {info['slipping']:.0%}, touching a wall "
                f"or element {info['touching']:.0%}")
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
    labels = {"swerve": "swerve (examples/swerve, physical) + battery, 5 ms substep, driving",
              "swerve_push": "the same, pushing into the field elements",
              "full": "full robot (swerve + elevator + arm + camera, default losses), pushing",
              "six": "six robots (2 kitbot, 2 mecanum, 2 swerve) with collisions, match",
              "six_push": "the same six, scrum at the hub",
              "six_kitbots": "six kitbots with collisions, scrum"}
    return [f"{labels[k]}: ≥ {v['goal']:g}× real time: {v['value']:.1f}× — "
            f"{'met' if v['value'] >= v['goal'] else 'not met'}" for k, v in g.items()]


def _contacts_note(res: dict) -> str:
    parts = []
    for key, name in (("six", "match"), ("six_push", "scrum")):
        ours, alone = (r["info"] for r in res["groups"][key][:2])
        parts.append(f"{name}: {ours['robot_hits']:.0f} robot-robot in the arena; stepped "
                     f"alone the robots drive through each other ({alone['robot_hits']:.0f}) "
                     f"and hit the field elements {alone['obstacle_hits']:.0f} times")
    return "Contacts in one 10 s loop: " + "; ".join(parts) + "."


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
             "Robots from examples/swerve, examples/mecanum and the bundled kitbot; references "
             "measured in the same run (see benchmarks/worlds.py: the WPILib rows model less, "
             "no tires, walls or collisions, and cost the same whatever the inputs). Driving: "
             "the swerve drives PATH (a rectangle and a spin) with a proportional steer loop; "
             "pushing: every robot drives ahead and keeps pushing at whatever it meets.", "",
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
