"""The runs whose traces must not change: scripted CLI runs of every example config, worlds
stepped in-process (cameras, mechanisms, every drivetrain kind and fidelity, an arena with
collisions), and robot programs in lock-step.

Every case drives simserver only through surfaces that outlive a reorganisation of its
modules: the ``python -m simserver run`` command line, ``simserver.world.World``, the config
loader's ``loads``/``default_config_text``, the Arena (imported from ``simserver.world.arena``,
else ``simserver.arena``), ``World.set_motor``/``set_solenoid``/``step``/``snapshot``, and
the example projects with tests/e2e/robots.py. Inputs are computed here from the config
files (motor names, module order) and from the snapshots, never from a model's internals,
and the builders of benchmarks/worlds.py are not reused for that reason (they read
``world.holo``).

The world cases trace every field of every snapshot, except that the drivetrain's outputs
are traced in one form (``drive_outputs``) whichever of the two snapshot layouts a commit has
(``DRIVE_LAYOUT``), so that commits on both sides of the Drivetrain protocol compare.

Lock-step robot programs (``robot/*``): examples/kitbot and examples/mecanum, ``--fast``.
Their data logs hold the robot program's own NetworkTables topics (``NT:...``) too. Each gave
identical traces in 17 runs (14 of them beside other CPU-bound work), 2026-11, once the
timestamps of values published before the first tick were left out (trace_records).

examples/swerve is left out: it is not deterministic. Two runs at the same commit differed
from t = 0.58 s, the first tick after enabling that moves: the robot program's Talon FX
duty cycles (``/simserver/motors/br_drive`` 0.0331 vs 0.0217). Its steer and drive loops
read the Talon FX rotor sensors and CANcoders, and Phoenix 6 reports the values the bridge
writes into those devices from its own simulation thread, on the wall clock, one or two
robot loops later depending on how that thread was scheduled (docs/bridge.md; the example
must run paced for the same reason). Everything downstream of the first such output differs.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_configs import (
    BENCH,
    CAMERA,
    HUB,
    INTAKE,
    MECHANISMS,
    RING,
    SHIFTER,
    TANK_CHARACTERIZED,
    TANK_KINEMATIC,
    example,
    in_table,
    kinematic,
    placed,
)
from trace_records import Record, csv_records, flatten, json_records, wpilog_records

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

TICK = 0.01  # s: every in-process case steps 10 ms ticks (the configs' own tick)
SEED = 7  # --seed of the CLI runs
CLI_SECONDS = 4.0  # simulated s of a scripted CLI run
WALL_CLOCK = ('["summary"]["wall_time"]', '["summary"]["late_periods"]',
              '["summary"]["clock_gap"]')

#: Run cases: repo is the checkout being traced, work an empty directory of the case's own.
Runner = Callable[[Path, Path], Iterator[Record]]


@dataclass(frozen=True)
class Case:
    """One traced run; ``name`` is ``cli/...``, ``world/...`` or ``robot/...`` (a robot
    program: port 5810, one at a time)."""

    name: str
    doc: str
    run: Runner
    needs: str = ""  # a module that must be importable (a plugin), else the case is skipped


# --- imports that survive the reorganisation -------------------------------------------------


def _world_api() -> tuple[Any, Any, Callable[[], str]]:
    """(World, loads, default_config_text)."""
    from simserver.config.loader import default_config_text, loads
    from simserver.world import World

    return World, loads, default_config_text


def _arena_class() -> Any:
    """The Arena class, where it lives now or where it lived before."""
    for module in ("simserver.world.arena", "simserver.arena"):
        try:
            return importlib.import_module(module).Arena
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    raise ImportError("no simserver.world.arena nor simserver.arena")


# --- drivers: inputs from the config file and the last snapshot ------------------------------

#: A command at time t: (forward, sideways, turn), each -1..1 (sideways: left positive).
Command = Callable[[float], tuple[float, float, float]]


def pushing(t: float) -> tuple[float, float, float]:
    """Ahead, keep pushing into whatever is met, back off, ahead with a turn, back off."""
    t %= 6.0
    if t < 2.5:
        return 0.7, 0.0, 0.0
    if t < 3.2:
        return -0.5, 0.0, 0.0
    if t < 5.0:
        return 0.8, 0.0, 0.25
    return -0.4, 0.0, 0.0


def touring(t: float) -> tuple[float, float, float]:
    """A rectangle (ahead, left, back, right) and a spin, for holonomic robots."""
    t %= 8.0
    for end, cmd in ((2.0, (0.6, 0.0, 0.0)), (3.8, (0.0, 0.5, 0.0)), (5.8, (-0.6, 0.0, 0.0)),
                     (7.0, (0.0, -0.5, 0.0))):
        if t < end:
            return cmd
    return 0.0, 0.0, 0.4


def stop_and_go(t: float) -> tuple[float, float, float]:
    """Ahead into the block, back off through the start to the blue wall, then a turn."""
    t %= 6.0
    if t < 1.5:
        return 0.8, 0.0, 0.0
    if t < 4.0:
        return -0.9, 0.0, 0.0
    return 0.3, 0.0, 0.6


def wave(name: str, t: float, amplitude: float = 0.6) -> float:
    """A mechanism motor's duty: a sine whose period and phase depend on the motor's name."""
    h = sum(map(ord, name))
    return amplitude * math.sin(2.0 * math.pi * t / (1.5 + h % 7 * 0.4) + h % 5)


Driver = Callable[[int, "dict[str, Any] | None"], None]


def driver(world: Any, doc: dict[str, Any], command: Command) -> Driver:
    """Sets every motor and solenoid of ``world`` (config ``doc``, the parsed TOML) for tick
    k, as robot code would (motor ``inverted`` applied): drivetrain motors from ``command``,
    swerve steer motors on a proportional loop on the module azimuths of the last
    ``snapshot_view`` (open loop, a slow sine, without one), every other motor a ``wave``,
    solenoids toggling every 0.7 s."""
    dt = doc.get("drivetrain", {})
    kind = dt.get("type", "differential") if dt else None
    motors = doc.get("motors", {})
    sign = {n: -1.0 if m.get("inverted") else 1.0 for n, m in motors.items()}
    used: set[str] = set()
    if kind == "swerve":
        modules = [(m["drive"], m["steer"], _length(m["x"]), _length(m["y"]))
                   for m in dt["modules"].values()]
        used = {n for m in modules for n in m[:2]}
    elif kind == "mecanum":
        wheels = [dt.get(k, k) for k in ("front_left", "front_right", "rear_left", "rear_right")]
        used = set(wheels)
    elif kind is not None:
        left, right = dt.get("left", "left"), dt.get("right", "right")
        used = {left, right}
    others = [n for n in motors if n not in used]
    solenoids = list(doc.get("solenoids", {}))

    def set_motor(name: str, duty: float) -> None:
        world.set_motor(name, sign[name] * max(-1.0, min(1.0, duty)))

    def drive(k: int, view: dict[str, Any] | None) -> None:
        t = k * TICK
        vx, vy, w = command(t)
        if kind == "swerve":
            for i, (d, s, x, y) in enumerate(modules):
                mx, my = vx - w * y, vy + w * x  # the module's velocity, robot frame
                speed = math.hypot(mx, my)
                if view is None:
                    set_motor(s, 0.2 * math.sin(2.0 * math.pi * t / 2.0 + i))
                    set_motor(d, speed)
                    continue
                angle = view["drive_outputs"][MODULE_STATES][i].angle.radians()
                target = math.atan2(my, mx) if speed > 1e-9 else angle
                error = math.remainder(target - angle, 2.0 * math.pi)
                set_motor(s, max(-0.6, min(0.6, 1.5 * error)))
                set_motor(d, speed * max(0.0, math.cos(error)))
        elif kind == "mecanum":
            for name, duty in zip(wheels, (vx - vy - w, vx + vy + w, vx + vy - w, vx - vy + w),
                                  strict=True):
                set_motor(name, duty)
        elif kind is not None:
            set_motor(left, vx - w)
            set_motor(right, vx + w)
        for name in others:
            set_motor(name, wave(name, t))
        for i, name in enumerate(solenoids):
            world.set_solenoid(name, int(t / 0.7 + i) % 2 == 1)

    return drive


_UNITS = {"m": 1.0, "in": 0.0254, "cm": 0.01, "mm": 0.001, "ft": 0.3048}


def _length(text: str | float) -> float:
    """A module position from the config (``"11.375 in"``), m."""
    if isinstance(text, int | float):
        return float(text)
    value, unit = text.split()
    return float(value) * _UNITS[unit]


# --- in-process worlds -----------------------------------------------------------------------


#: Snapshot fields whose layout the Drivetrain protocol changed (17315aa): 0ccb9e0 has
#: ``wheel_speeds`` and ``modules``, later commits ``drive`` and ``drive_log``.
DRIVE_LAYOUT = ("wheel_speeds", "modules", "drive", "drive_log")
MODULE_STATES = "drive/module_states"


def drive_outputs(snap: Any) -> dict[str, Any]:
    """The drivetrain's outputs by name, as the Drivetrain protocol declares them
    (``drive/module_states``, ``drive/wheel_speeds``, ``truth/wheel_speed/left``...), from
    either snapshot layout: the same physics gives the same values in both."""
    if hasattr(snap, "drive"):
        return {**snap.drive, **snap.drive_log}
    from wpimath.geometry import Rotation2d
    from wpimath.kinematics import MecanumDriveWheelSpeeds, SwerveModuleState

    if snap.modules:
        return {MODULE_STATES: [SwerveModuleState(v, Rotation2d(a)) for v, a in snap.modules]}
    if len(snap.wheel_speeds) == 4:
        return {"drive/wheel_speeds": MecanumDriveWheelSpeeds(*snap.wheel_speeds)}
    if len(snap.wheel_speeds) == 2:
        return dict(zip(("truth/wheel_speed/left", "truth/wheel_speed/right"),
                        snap.wheel_speeds, strict=True))
    return {}


def snapshot_view(snap: Any) -> dict[str, Any]:
    """What is traced of a snapshot: every field, except that the drivetrain's outputs are
    ``drive_outputs`` whichever layout the snapshot has."""
    out = {f.name: getattr(snap, f.name) for f in dataclasses.fields(snap)
           if f.name not in DRIVE_LAYOUT}
    out["drive_outputs"] = drive_outputs(snap)
    return out


def _snapshot_records(k: int, views: list[tuple[str, dict[str, Any]]]) -> Iterator[Record]:
    where = f"tick={k}"
    for prefix, view in views:
        for path, text in flatten(view):
            yield where, prefix + _field(path), text


def _field(path: str) -> str:
    """``["x"]`` -> ``x``: a view's top-level keys read as the snapshot's field names."""
    head, _, rest = path.partition("]")
    return json.loads(head[1:]) + rest


def world_run(texts: dict[str, str], command: Command, seconds: float,
              arena: bool = False) -> Iterator[Record]:
    """Worlds from config texts, each driven by ``driver``; stepped alone, or together in an
    Arena (robot-robot contacts); every field of every snapshot after every tick."""
    World, loads, _ = _world_api()
    worlds = {name: World(loads(text)) for name, text in texts.items()}
    docs = {name: tomllib.loads(text) for name, text in texts.items()}
    drivers = [driver(w, docs[n], command) for n, w in worlds.items()]
    step: Callable[[float], None]
    if arena:
        first = next(iter(worlds.values()))
        step = _arena_class()(worlds, first.cfg.field.restitution,
                              first.cfg.field.wall_friction).step
    else:
        def step(dt: float) -> None:
            for w in worlds.values():
                w.step(dt)
    prefix = len(worlds) > 1
    views: list[dict[str, Any] | None] = [None] * len(worlds)
    for k in range(round(seconds / TICK)):
        for drive, view in zip(drivers, views, strict=True):
            drive(k, view)
        step(TICK)
        now = [snapshot_view(w.snapshot()) for w in worlds.values()]
        yield from _snapshot_records(k, [(f"{n}." if prefix else "", v)
                                         for n, v in zip(worlds, now, strict=True)])
        views = list(now)


def swerve_camera(repo: Path, work: Path) -> Iterator[Record]:
    text = in_table(example(repo, "swerve"), "field", "elements = true\n")
    return world_run({"robot": text + CAMERA.format(protocol="limelight")}, touring, 6.0)


def full_robot(repo: Path, work: Path) -> Iterator[Record]:
    text = in_table(example(repo, "swerve"), "field", "elements = true\n")
    return world_run({"robot": text + MECHANISMS + CAMERA.format(protocol="photonvision")},
                     pushing, 5.0)


def scrum(repo: Path, work: Path) -> Iterator[Record]:
    """Six robots (2 kitbots, 2 mecanum, 2 swerve) on a ring around the blue hub, facing it,
    with the 2026 elements: they hit the hub and each other."""
    _, _, default = _world_api()
    bases = [default(), default(), example(repo, "mecanum"), example(repo, "mecanum"),
             example(repo, "swerve"), example(repo, "swerve")]
    texts = {}
    for i, base in enumerate(bases):
        angle = 2.0 * math.pi * i / len(bases) + math.pi / 6
        x, y = HUB[0] + RING * math.cos(angle), HUB[1] + RING * math.sin(angle)
        texts[f"r{i}"] = placed(in_table(base, "field", "elements = true\n"), x, y,
                                math.degrees(angle + math.pi))
    return world_run(texts, pushing, 5.0, arena=True)


def bench(repo: Path, work: Path) -> Iterator[Record]:
    return world_run({"bench": BENCH}, pushing, 4.0)


def kitbot_shifter(repo: Path, work: Path) -> Iterator[Record]:
    _, _, default = _world_api()
    text = in_table(default(), "drivetrain", 'shifter = "shift"\nhigh_gearing = 6\n') + SHIFTER
    return world_run({"robot": text}, stop_and_go, 6.0)


def fidelities(repo: Path, work: Path) -> Iterator[Record]:
    """The kinematic and characterized drivetrains, each stepped alone."""
    _, _, default = _world_api()
    kitbot = default()
    texts = {
        "tank_kinematic": kinematic(kitbot, table=TANK_KINEMATIC),
        "tank_characterized": kinematic(kitbot, "characterized", TANK_CHARACTERIZED),
        "mecanum_kinematic": kinematic(example(repo, "mecanum")),
        "swerve_kinematic": kinematic(example(repo, "swerve")),
    }
    return world_run(texts, touring, 4.0)


def intake(repo: Path, work: Path) -> Iterator[Record]:
    _, _, default = _world_api()

    def command(t: float) -> tuple[float, float, float]:
        return (0.5, 0.0, 0.0) if t < 3.0 else (-0.3, 0.0, 0.3)

    return world_run({"robot": default() + INTAKE}, command, 5.0)


# --- scripted runs of the command line -------------------------------------------------------


def python_env(repo: Path) -> dict[str, str]:
    """The environment of a subprocess that runs ``repo``'s simserver."""
    return dict(os.environ, PYTHONPATH=str(repo), PYTHONUNBUFFERED="1")


class _Inputs:
    """Stands in for a World to take a driver's motor and solenoid values."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}  # column -> CSV cell

    def set_motor(self, name: str, duty: float) -> None:
        self.values[name] = f"{duty:.5f}"

    def set_solenoid(self, name: str, on: bool) -> None:
        self.values[name] = "1" if on else "0"


def inputs_csv(doc: dict[str, Any], path: Path) -> None:
    """An inputs CSV for config ``doc`` with the ``pushing`` command: the driver's values
    (open-loop steering) every 50 ms, to 5 decimals."""
    inputs = _Inputs()
    drive = driver(inputs, doc, pushing)
    rows: list[str] = []
    for k in range(0, round(CLI_SECONDS / TICK) + 1, 5):
        drive(k, None)
        if not rows:
            rows.append(",".join(["time", *inputs.values]))
        rows.append(",".join([f"{k * TICK:.2f}", *inputs.values.values()]))
    path.write_text("\n".join(rows) + "\n")


def run_outputs(repo: Path, work: Path) -> Iterator[Record]:
    """The trace CSV, the data log and the JSON summary a run wrote into ``work``."""
    yield from csv_records(work / "trace.csv")
    yield from wpilog_records(work / "run.wpilog")
    summary = json.loads((work / "summary.json").read_text())
    yield from json_records(summary, WALL_CLOCK, {str(work): "<work>", str(repo): "<repo>"})


def simserver_run(repo: Path, work: Path, args: list[str], timeout: float = 300.0) -> None:
    """``python -m simserver run ARGS`` writing trace.csv, run.wpilog and summary.json."""
    cmd = [sys.executable, "-m", "simserver", "run", *args, "--record", str(work / "run.wpilog"),
           "--trace", str(work / "trace.csv"), "--json", str(work / "summary.json"),
           "--no-summary", "--no-progress", "-q"]
    done = subprocess.run(cmd, cwd=repo, env=python_env(repo), capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")


def scripted(config: str | None) -> Runner:
    """A scripted run (``--inputs``, ``--fast``, fixed seed) of an example's config, or of the
    bundled default one (None)."""

    def run(repo: Path, work: Path) -> Iterator[Record]:
        if config is None:
            _, _, default = _world_api()
            text, args = default(), []
        else:
            path = repo / "examples" / config / "simserver.toml"
            text, args = path.read_text(), [str(path)]
        inputs_csv(tomllib.loads(text), work / "inputs.csv")
        simserver_run(repo, work, [*args, "--inputs", str(work / "inputs.csv"), "--fast",
                                   "--duration", str(CLI_SECONDS), "--seed", str(SEED)])
        return run_outputs(repo, work)

    return run


def two_robots(repo: Path, work: Path) -> Iterator[Record]:
    """The kitbot example with the mecanum example as a second robot (``[robots.<name>]``),
    each on its own inputs CSV, on the 2026 field with its elements."""
    other = placed((repo / "examples" / "mecanum" / "simserver.toml").read_text(),
                   3.4, 4.3, 180.0)
    (work / "other.toml").write_text(other)
    inputs_csv(tomllib.loads(other), work / "other.csv")
    main = in_table(example(repo, "kitbot"), "field", "elements = true\n")
    main += '\n[robots.other]\nconfig = "other.toml"\ninputs = "other.csv"\n'
    (work / "main.toml").write_text(main)
    inputs_csv(tomllib.loads(main), work / "inputs.csv")
    simserver_run(repo, work, [str(work / "main.toml"), "--inputs", str(work / "inputs.csv"),
                               "--fast", "--duration", str(CLI_SECONDS), "--seed", str(SEED)])
    return run_outputs(repo, work)


# --- robot programs in lock-step -------------------------------------------------------------


def lockstep(project: str) -> Runner:
    """The example's robot program (``robotpy sim --simserver``, holding the port-5810 lock
    through tests/e2e/robots.py) and ``simserver run --lockstep --check auto-check.toml``."""

    def run(repo: Path, work: Path) -> Iterator[Record]:
        sys.path.insert(0, str(repo))
        try:
            from tests.e2e.robots import RobotProgram, config_with
        finally:
            sys.path.remove(str(repo))
        folder = repo / "examples" / project
        cfg, _ = config_with(work, folder / "simserver.toml", "lockstep = true")
        robot = RobotProgram(folder, cfg, work, env={"PYTHONPATH": str(repo)})
        try:
            robot.wait_ready()
            simserver_run(repo, work, [str(cfg), "--lockstep", "--check",
                                       str(folder / "auto-check.toml"), "--fast"])
            code = robot.wait_exit(30)
            if code != 0:
                raise RuntimeError(f"the {project} robot program exited {code}:\n"
                                   f"{robot.output()[-2000:]}")
        finally:
            robot.close()
        return run_outputs(repo, work)

    return run


CASES: tuple[Case, ...] = (
    Case("cli/default", "the bundled kitbot config, scripted", scripted(None)),
    Case("cli/kitbot", "examples/kitbot, scripted", scripted("kitbot")),
    Case("cli/swerve", "examples/swerve (physical, battery), scripted", scripted("swerve")),
    Case("cli/mecanum", "examples/mecanum, scripted", scripted("mecanum")),
    Case("cli/nt_elevator_arm", "examples/nt_elevator_arm (elevator, arm, pneumatics), "
         "scripted", scripted("nt_elevator_arm")),
    Case("cli/ctre_swerve", "examples/ctre_swerve, scripted", scripted("ctre_swerve")),
    Case("cli/rev_maxswerve", "examples/rev_maxswerve, scripted", scripted("rev_maxswerve")),
    Case("cli/two_robots", "examples/kitbot with examples/mecanum as [robots.other], "
         "elements on, scripted", two_robots),
    Case("world/swerve_camera", "examples/swerve + elements + a Limelight camera, touring",
         swerve_camera),
    Case("world/full_robot", "swerve + elevator + arm + switch + PhotonVision camera, pushing "
         "into the elements", full_robot),
    Case("world/scrum", "Arena: 2 kitbots, 2 mecanum, 2 swerves at the hub (elements, walls, "
         "each other)", scrum),
    Case("world/bench", "no drivetrain: arm, elevator, flywheel, linear, switches, "
         "pneumatics, bearing camera", bench),
    Case("world/kitbot_shifter", "kitbot + shifter + own obstacle, into the block and the wall",
         kitbot_shifter),
    Case("world/fidelities", "tank kinematic and characterized, mecanum and swerve kinematic",
         fidelities),
    Case("world/intake", "kitbot + the simserver-intake plugin's intake", intake,
         needs="simserver_intake"),
    Case("robot/kitbot", "examples/kitbot robot program, lock-step --fast, auto-check.toml",
         lockstep("kitbot")),
    Case("robot/mecanum", "examples/mecanum robot program, lock-step --fast, auto-check.toml",
         lockstep("mecanum")),
)
