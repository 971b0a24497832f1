"""The world: one robot on one field, stepped in fixed substeps in a fixed order.

Order within a substep: the drivetrain (its motor controllers and model, with the battery as a
Thevenin source) → walls and field elements → pneumatics (solenoids, cylinders, compressor) →
mechanisms → battery bookkeeping (brownout, breaker). Each tick closes with the gyro, the
cameras and, read from their joints, the encoders. The drivetrain is any
:class:`~simserver.models.api.Drivetrain` its model type built: the world never asks which
kind. The
:class:`~simserver.world.arena.Arena` steps several worlds substep by substep and resolves
robot-robot contacts between them.
Inputs (duty cycles, solenoid states) are set before :meth:`World.step` and held for it.

    world = World.from_config(load_default())
    world.set_motor("left", 0.5); world.set_motor("right", 0.5)
    world.step(0.02)
    snap = world.snapshot()
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from simserver.config.model import Config, FieldConfig, SwitchConfig
from simserver.config.pieces import field_piece_types
from simserver.config.references import motor_mechanisms
from simserver.config.registry import registry
from simserver.config.vision import camera_specs
from simserver.contract.snapshot import Pneumatics, Snapshot
from simserver.field.elements import season_obstacles
from simserver.field.seasons import field_size
from simserver.models.api import Drivetrain, Joint, Model, PieceAccess
from simserver.models.battery import Battery, Source
from simserver.models.camera import Frame, VisionSystem
from simserver.models.collision import Obstacles, outline
from simserver.models.controller import MotorController
from simserver.models.detection import Detectables
from simserver.models.motor import motor_by_name
from simserver.models.obstacles import Obstacle, convex_ccw
from simserver.models.pneumatics import PneumaticSystem
from simserver.models.sensors import Encoder, Gyro
from simserver.models.walls import Body, FieldWalls
from simserver.units import unit_kind, unit_scale
from simserver.world.drivetrains.stationary import Stationary

if TYPE_CHECKING:
    from simserver.world.pieces import FieldPieces

log = logging.getLogger("simserver.world")


def field_obstacles(field_cfg: FieldConfig) -> tuple[Obstacle, ...]:
    """The obstacles of a field config: the season's elements when enabled, then the user's."""
    own = tuple(Obstacle(name, convex_ccw(o.points) or o.points, o.height)
                for name, o in field_cfg.obstacles.items())
    return (season_obstacles(field_cfg.season) if field_cfg.elements else ()) + own


DRIVETRAIN_MEMBERS = ("mass", "moment_of_inertia", "reset", "pose", "body_velocity", "place",
                      "begin_tick", "substep", "travelled", "end_tick", "motor_states",
                      "joint", "outputs")
"""What the world uses of a :class:`~simserver.models.api.Drivetrain`."""


class ModelBuildError(Exception):
    """A model type that could not build its model, or a camera whose publisher cannot be
    made (simserver.io.nt.photonvision_unavailable); ``path`` is the config key path."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class World:
    """Robot, field and battery, with inputs held between steps."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.drivetrain: Drivetrain = self._build_drivetrain(cfg)
        self.mass = self.drivetrain.mass
        self.inertia = self.drivetrain.moment_of_inertia
        drive_type = registry().get("drivetrain", cfg.drivetrain_type)
        self._drive_nt = {o.name for o in (drive_type.outputs if drive_type else ()) if o.nt}
        bc = cfg.battery
        self.battery = Battery(bc.nominal_voltage, bc.resistance, bc.background_current,
                               capacity=bc.capacity, soc_curve=bc.discharge_voltage,
                               brownout_voltage=bc.brownout_voltage,
                               breaker_rating=120.0 if bc.breaker else 0.0)
        length, width = field_size(cfg.field.season)
        self.walls = FieldWalls(cfg.field.length or length, cfg.field.width or width,
                                cfg.field.restitution, cfg.field.wall_friction)
        self.obstacles = Obstacles(field_obstacles(cfg.field), cfg.field.restitution,
                                   cfg.field.wall_friction)
        robot = cfg.robot
        self._half_l, self._half_w = robot.length / 2.0, robot.width / 2.0
        self._reach = math.hypot(self._half_l, self._half_w)
        self.polygon = outline(robot.length, robot.width)
        self._rng = np.random.default_rng(cfg.sim.seed)
        self.controllers = {
            name: MotorController(motor_by_name(m.type), m.count, ramp=m.ramp, noise=m.noise,
                                  stator_limit=m.stator_limit, supply_limit=m.supply_limit,
                                  neutral="coast" if m.neutral == "coast" else "brake",
                                  rng=self._rng)
            for name, m in cfg.motors.items()}
        self.gyro = Gyro(cfg.gyro.noise, cfg.gyro.drift, self._rng)
        self.mechanisms: dict[str, Model] = {}
        for name, section in cfg.mechanisms.items():
            self.mechanisms[name] = self._build_mechanism(name, section.type, section.config)
        # The mechanisms whose supply current is linear in the bus voltage, by name.
        self._loads: dict[str, Callable[[Any], tuple[float, float]]] = {
            name: load for name, m in self.mechanisms.items()
            if callable(load := getattr(m, "load", None))}
        driven = motor_mechanisms(cfg)
        self._joints = {n: self._joint_source(n, driven.get(e.motor))
                        for n, e in cfg.encoders.items()}
        self.encoders = {n: self._encoder(n) for n in cfg.encoders}
        self.pneumatics: PneumaticSystem | None = None
        if cfg.pneumatics is not None:
            pc = cfg.pneumatics
            self.pneumatics = PneumaticSystem(
                tanks=pc.tanks, extra_volume=pc.extra_volume, temperature=pc.temperature,
                switch_off_pressure=pc.switch_off_pressure,
                switch_on_pressure=pc.switch_on_pressure)
            for name, cyl in cfg.cylinders.items():
                self.pneumatics.add_cylinder(name, cyl.bore, cyl.stroke, cyl.rod_diameter,
                                             cyl.double_acting, cyl.extend_time)
        self.vision: VisionSystem | None = None
        self._detects = False  # a camera with an object detector
        self._seen: Callable[[], Detectables] | None = None
        self.neighbours: tuple[World, ...] = ()  # the other robots on the field (the arena's)
        if cfg.cameras:
            piece_types = field_piece_types(cfg.pieces, cfg.field.season)
            specs = camera_specs(cfg.cameras, {t.name: t.class_id for t in piece_types.values()})
            self._detects = any(spec.detects_pieces() for spec in specs)
            self.vision = VisionSystem(
                specs, cfg.vision.all_fiducials(cfg.field.season),
                cfg.vision.bearing_targets(), self.obstacles.obstacles,
                rng=self._rng.spawn(1)[0])
        self.frames: tuple[Frame, ...] = ()
        self.substep = cfg.sim.substep
        self.motors = {name: 0.0 for name in cfg.motors}
        self._sign = {name: -1.0 if m.inverted else 1.0 for name, m in cfg.motors.items()}
        self._counts = {name: m.count for name, m in cfg.motors.items()}
        self.solenoids = {name: s.initial for name, s in cfg.solenoids.items()}
        self._pieces: PieceAccess | None = None
        # The field's game pieces, on the main robot's world (the first of an arena), which
        # steps, resets and snapshots them (simserver.world.pieces).
        self.field_pieces: FieldPieces | None = None
        self.reset()

    @staticmethod
    def _build_drivetrain(cfg: Config) -> Drivetrain:
        """The drivetrain of ``cfg`` (a :class:`Stationary` chassis without one)."""
        if cfg.drivetrain is None:
            return Stationary(cfg.robot.mass, cfg.robot.box_inertia())
        dt_type = registry().get("drivetrain", cfg.drivetrain_type)
        if dt_type is None:
            raise ModelBuildError("drivetrain", f"no drivetrain model type "
                                                f"{cfg.drivetrain_type!r} is installed")
        try:
            drive = dt_type.create("drivetrain", cfg.drivetrain, cfg)
        except Exception as exc:
            raise ModelBuildError("drivetrain", f"model type {dt_type.name!r} (from "
                                                f"{dt_type.source}) failed to build: "
                                                f"{type(exc).__name__}: {exc}") from exc
        missing = [m for m in DRIVETRAIN_MEMBERS if getattr(drive, m, None) is None]
        if missing:
            raise ModelBuildError("drivetrain", f"model type {dt_type.name!r} (from "
                                                f"{dt_type.source}) built a "
                                                f"{type(drive).__name__} without "
                                                f"{', '.join(missing)}")
        return drive

    def _joint_source(self, encoder: str, mechanism: str | None) -> Callable[[], Joint]:
        """How to read the joint encoder ``encoder`` measures: its mechanism's output or what
        its motor turns in the drivetrain."""
        if mechanism is not None:
            mech = self.mechanisms[mechanism]
            radius, gearing = getattr(mech, "geometry", (0.0, 1.0))
            joint = getattr(mech, "joint", None)

            def output() -> Joint:
                position, velocity = (0.0, 0.0) if joint is None else joint()
                return Joint(position, velocity, radius, gearing)

            return output
        motor = self.cfg.encoders[encoder].motor
        if self.drivetrain.joint(motor) is None:
            raise ModelBuildError(f"encoders.{encoder}", f"motor {motor!r} turns no joint of "
                                  "the drivetrain or of a mechanism")
        drive = self.drivetrain

        def read() -> Joint:
            found = drive.joint(motor)
            assert found is not None
            return found

        return read

    def _encoder(self, name: str) -> Encoder:
        """Encoder ``name`` as configured: unit, direction, mount, absolute range."""
        e = self.cfg.encoders[name]
        kind = unit_kind(e.unit)
        per_unit = (2.0 * math.pi / e.ticks_per_revolution if kind == "ticks"
                    else unit_scale(e.unit))
        return Encoder(kind, per_unit, reversed=self.cfg.encoder_reversed(name),
                       on_motor=e.mount == "motor",
                       absolute=(e.offset, e.full_range) if e.absolute else None)

    def reset(self) -> None:
        """Back to the start pose at rest, sensors zeroed, battery fresh, time 0."""
        start = self.cfg.robot.start
        self.drivetrain.reset(start.x, start.y, start.heading)
        self.battery.reset()
        self.gyro.reset(start.heading)
        self.solenoids = {name: s.initial for name, s in self.cfg.solenoids.items()}
        self.time = 0.0
        self._open_tick()
        if self.field_pieces is not None:
            self.field_pieces.reset()
        self.distance = 0.0
        self.wall_hits = 0
        self.touching_wall = False
        self.obstacle_hits = 0
        self.touching_obstacle = False
        self.robot_hits = 0
        self.touching_robot = False
        self.last_contact = ""
        self.failed: dict[str, str] = {}
        for mech in self.mechanisms.values():
            mech.reset()
        if self.vision is not None:
            self.vision.reset()
        self.frames = ()
        for name, enc in self.encoders.items():
            enc.zero(self._joints[name]())
        self.compressor_current = 0.0
        self.mechanism_supply = 0.0
        self._lagged_supply = 0.0
        self.bus_voltage = self.battery.voltage
        self.motor_currents = {name: 0.0 for name in self.cfg.motors}
        self.applied_voltage = {name: 0.0 for name in self.cfg.motors}
        for ctrl in self.controllers.values():
            ctrl.reset()
        if self.pneumatics is not None:
            self.pneumatics.reset()
            self.pneumatics.enabled = self.cfg.pneumatics is not None and \
                self.cfg.pneumatics.compressor

    # --- RobotView: what mechanism models may read -------------------------------------------

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad) of the robot centre."""
        return self.drivetrain.pose

    @property
    def chassis_speeds(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        return self.drivetrain.body_velocity

    @property
    def velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the field frame."""
        heading = self.pose[2]
        vx_b, vy_b, omega = self.chassis_speeds
        c, s = math.cos(heading), math.sin(heading)
        return vx_b * c - vy_b * s, vx_b * s + vy_b * c, omega

    def body(self) -> Body:
        """The chassis as a rigid body in the field frame (for collisions)."""
        x, y, heading = self.pose
        vx_b, vy_b, omega = self.chassis_speeds
        c, s = math.cos(heading), math.sin(heading)
        return Body(x, y, heading, vx_b * c - vy_b * s, vx_b * s + vy_b * c, omega)

    def set_body(self, body: Body) -> None:
        """Take the position and velocity of ``body`` (after an impact pushed it)."""
        c, s = math.cos(body.heading), math.sin(body.heading)
        vx_b, vy_b = body.vx * c + body.vy * s, -body.vx * s + body.vy * c
        self.drivetrain.place(body.x, body.y, vx_b, vy_b, body.omega)

    @property
    def reach(self) -> float:
        """Distance from the robot centre to its farthest outline corner, m."""
        return self._reach

    @property
    def outline(self) -> tuple[float, float]:
        """(length, width) of the robot outline, m."""
        return 2.0 * self._half_l, 2.0 * self._half_w

    @property
    def field_size(self) -> tuple[float, float]:
        """(length, width) of the field, m."""
        return self.walls.length, self.walls.width

    @property
    def rng(self) -> np.random.Generator:
        """The seeded generator."""
        return self._rng

    @property
    def pieces(self) -> PieceAccess | None:
        """The game pieces this robot can handle (set by the field's pieces), or None."""
        return self._pieces

    def attach_pieces(self, access: PieceAccess | None,
                      seen: Callable[[], Detectables] | None = None) -> None:
        """Give this robot's mechanisms access to the field's game pieces, and its cameras
        ``seen``: the pieces a camera could see now."""
        self._pieces = access
        self._seen = seen

    def outline_obstacle(self) -> Obstacle:
        """This robot's outline where it is now, as a prism of its height (what it hides from
        another robot's cameras)."""
        x, y, heading = self.pose
        c, s = math.cos(heading), math.sin(heading)
        return Obstacle("robot", tuple((x + px * c - py * s, y + px * s + py * c)
                                       for px, py in self.polygon), self.cfg.robot.height)

    def motor(self, name: str) -> float:
        """Duty cycle of motor output ``name`` with its inversion applied."""
        return self.motors[name] * self._sign[name]

    def mechanism(self, name: str) -> Any:
        """Mechanism model ``name`` (None: no such mechanism)."""
        return self.mechanisms.get(name)

    def solenoid(self, name: str) -> bool:
        """State of solenoid ``name``."""
        return self.solenoids[name]

    def cylinder(self, name: str) -> float:
        """Extension of cylinder ``name``, 0..1 (0 when there is no pneumatic system)."""
        return 0.0 if self.pneumatics is None else self.pneumatics.extension(name)

    def motor_voltage(self, name: str, motor_speed: float, dt: float,
                      duty: float | None = None) -> float:
        """Run motor ``name``'s controller for this substep (duty, ramp, noise, current limits,
        brownout) and return the voltage across each motor's terminals, V. ``motor_speed`` is
        the motor shaft speed, rad/s; ``duty`` overrides the commanded duty (soft limits).
        When the output coasts, the back-EMF is returned (no current flows)."""
        command = self.motor(name) if duty is None else duty
        out = self.controllers[name].apply(command, self.bus_voltage, motor_speed, dt,
                                           not self.battery.brownout)
        return out.voltage

    def controller(self, name: str) -> MotorController:
        """The controller of motor output ``name`` (for the drivetrain)."""
        return self.controllers[name]

    def motor_coasting(self, name: str) -> bool:
        """Whether motor ``name``'s controller output coasts (windings open) this substep."""
        out = self.controllers[name].output
        return out is not None and out.coasting

    def motor_current(self, name: str, stator_current: float, motor_speed: float,
                      voltage: float | None = None) -> None:
        """Report the stator current of one of motor ``name``'s motors after the substep, A,
        and the terminal voltage actually applied if it differs from the controller's; the
        supply current ``I·V/V_bus`` it draws joins the battery load."""
        out = self.controllers[name].output
        if out is None or out.coasting:
            self.motor_currents[name] = 0.0
            self.applied_voltage[name] = 0.0
            return
        volts = out.voltage if voltage is None else voltage
        self.applied_voltage[name] = volts
        stator = self._counts[name] * stator_current
        self.motor_currents[name] = stator
        if self.bus_voltage > 0.0:
            self.mechanism_supply += stator * volts / self.bus_voltage

    def set_motor(self, name: str, duty: float) -> None:
        """Set a motor's duty cycle, already validated to [-1, 1]."""
        self.motors[name] = duty

    def set_solenoid(self, name: str, on: bool) -> None:
        """Set a solenoid input."""
        self.solenoids[name] = on

    def zero_inputs(self) -> None:
        """All motors to 0 (robot program gone)."""
        for name in self.motors:
            self.motors[name] = 0.0

    def step(self, dt: float) -> None:
        """Advance ``dt`` seconds in whole substeps (at least one)."""
        n = max(1, round(dt / self.substep))
        self.begin_tick()
        pieces = self.field_pieces
        for _ in range(n):
            self.advance()
            if pieces is not None:
                pieces.substep(self.substep)
        self.end_tick(n)

    def begin_tick(self) -> None:
        """Take this tick's inputs (held for all its substeps)."""
        self.drivetrain.begin_tick(self)
        self.tick_min_voltage, self.tick_max_current = math.inf, -math.inf
        self.tick_brownout = False

    def _open_tick(self) -> None:
        """The tick aggregates (see :class:`Snapshot`) before any tick: the battery as it is."""
        battery = self.battery
        self.tick_min_voltage, self.tick_max_current = battery.voltage, battery.current
        self.tick_brownout = battery.brownout

    def advance(self) -> None:
        """One substep of every model (inputs as :meth:`begin_tick` took them)."""
        battery, h, drive = self.battery, self.substep, self.drivetrain
        self.bus_voltage, supply = drive.substep(h, self._source(), not battery.brownout)
        self._collide()
        self.distance += drive.travelled
        self.time += h
        if self.pneumatics is not None:
            for cname, cyl in self.cfg.cylinders.items():
                self.pneumatics.set_solenoid(cname, self.solenoids[cyl.solenoid])
            self.compressor_current = self.pneumatics.step(h, self.bus_voltage)
        self.mechanism_supply = 0.0
        lagged = 0.0
        loads, failed = self._loads, self.failed
        for name, mech in self.mechanisms.items():
            if name not in failed:
                before = self.mechanism_supply
                self._step_mechanism(name, mech, h)
                if name not in loads:
                    lagged += self.mechanism_supply - before
        self._lagged_supply = lagged
        battery.update(supply + self.mechanism_supply + self.compressor_current, h)
        volts, amps = battery.voltage, battery.current
        if volts < self.tick_min_voltage:
            self.tick_min_voltage = volts
        if amps > self.tick_max_current:
            self.tick_max_current = amps
        if battery.brownout:
            self.tick_brownout = True
        if battery.breaker_tripped:
            self.bus_voltage = 0.0

    def end_tick(self, n: int) -> None:
        """Close a tick of ``n`` substeps: drivetrain currents, gyro, cameras, encoders."""
        drive = self.drivetrain
        drive.end_tick()
        for name, (amps, volts) in drive.motor_states().items():
            self.motor_currents[name] = amps
            self.applied_voltage[name] = volts
        _, _, heading = self.pose
        self.gyro.read(heading, self.chassis_speeds[2], n * self.substep)
        if self.vision is not None:
            pieces = robots = None
            if self._detects:
                pieces = None if self._seen is None else self._seen()
                robots = [n.outline_obstacle() for n in self.neighbours] or None
            self.frames = tuple(self.vision.update(self.time, self.pose, pieces, robots))

    def _build_mechanism(self, name: str, type_name: str, config: Any) -> Model:
        path = f"mechanisms.{name}"
        mt = registry().get("mechanism", type_name)
        if mt is None:
            raise ModelBuildError(path, f"no mechanism model type {type_name!r} is installed")
        try:
            model = mt.create(name, config, self.cfg)
        except Exception as exc:
            raise ModelBuildError(path, f"model type {type_name!r} (from {mt.source}) failed to "
                                        f"build: {type(exc).__name__}: {exc}") from exc
        missing = [m for m in ("reset", "step", "outputs") if not callable(getattr(model, m, None))]
        if missing:
            raise ModelBuildError(path, f"model type {type_name!r} (from {mt.source}) built a "
                                        f"{type(model).__name__} without {', '.join(missing)}()")
        return model

    def _source(self) -> Source:
        """The battery as the drivetrain sees it: other loads included, those that are linear in
        the bus voltage (steady-state motors) solved with it, so their sag is felt in the same
        substep; plugins without ``load()`` and the compressor count at their last current."""
        conductance, other = 0.0, self.compressor_current + self._lagged_supply
        if not self.battery.brownout:
            failed = self.failed
            for name, load in self._loads.items():
                if name not in failed:
                    g, i0 = load(self)
                    conductance += g
                    other += i0
        return self.battery.source_with(conductance, other)

    def _step_mechanism(self, name: str, mech: Model, h: float) -> None:
        try:
            mech.step(h, self)
        except Exception as exc:  # a plugin's bug must not stop the simulation
            self.failed[name] = f"{type(exc).__name__}: {exc}"
            log.error("mechanism %r (type %r) raised during step and is disabled until the "
                      "next reset", name, self.cfg.mechanisms[name].type, exc_info=True)

    def _collide(self) -> None:
        """Walls, then field elements: push the chassis out and apply the impact impulses."""
        x, y, _ = self.pose
        walls, reach = self.walls, self._reach
        near_wall = not (reach < x < walls.length - reach and reach < y < walls.width - reach)
        near_obstacle = self.obstacles.near(x, y, reach)
        if not (near_wall or near_obstacle):
            self.touching_wall = self.touching_obstacle = False
            return
        body = self.body()
        hit_wall = near_wall and walls.resolve(body, self._half_l, self._half_w, self.mass,
                                               self.inertia)
        hit_obstacle = near_obstacle and self.obstacles.resolve(body, self.polygon, self.mass,
                                                                self.inertia)
        if hit_wall and not self.touching_wall:
            self.wall_hits += 1
            self.last_contact = walls.touched[0] if walls.touched else "a field wall"
        if hit_obstacle and not self.touching_obstacle:
            self.obstacle_hits += 1
            self.last_contact = (self.obstacles.touched[0] if self.obstacles.touched
                                 else "a field element")
        self.touching_wall, self.touching_obstacle = hit_wall, hit_obstacle
        if hit_wall or hit_obstacle:
            self.set_body(body)

    def robot_contact(self, touched: bool) -> None:
        """Count a contact with another robot (the arena resolves it)."""
        if touched and not self.touching_robot:
            self.robot_hits += 1
        self.touching_robot = touched


    def switch_pressed(self, name: str, sw: SwitchConfig) -> bool:
        """Whether switch ``name`` is pressed: its mechanism at or past its position, or, for a
        beam break (``trigger = "holding"``), holding a game piece."""
        if sw.trigger == "holding":
            holding = getattr(self.mechanisms.get(sw.mechanism), "holding", None)
            return holding is not None and bool(holding())
        position = self.joint_position(sw.mechanism)
        if position is None or sw.position is None:
            return False
        at = sw.position[1]
        return position <= at if sw.trigger == "below" else position >= at

    def joint_position(self, mechanism: str) -> float | None:
        """Position of a mechanism's joint (m or rad), or None if it has no joint."""
        joint = getattr(self.mechanisms.get(mechanism), "joint", None)
        return None if joint is None else float(joint()[0])

    def snapshot(self) -> Snapshot:
        """The state to publish, after the last step."""
        x, y, heading = self.pose
        vx, vy, omega = self.velocity
        outputs = self.drivetrain.outputs()
        nt = self._drive_nt
        return Snapshot(
            time=self.time, x=x, y=y, heading=heading, vx=vx, vy=vy, omega=omega,
            encoders={n: e.read(self._joints[n]()) for n, e in self.encoders.items()},
            gyro_yaw=self.gyro.yaw, gyro_rate=self.gyro.rate,
            battery_voltage=self.battery.voltage, battery_current=self.battery.current,
            charge_used=self.battery.charge_used,
            currents=dict(self.motor_currents),
            duties=dict(self.motors), solenoids=dict(self.solenoids),
            mechanisms={n: m.outputs() for n, m in self.mechanisms.items()},
            drawings={n: draw() for n, m in self.mechanisms.items()
                      if (draw := getattr(m, "drawing", None)) is not None},
            brownout=self.battery.brownout, breaker_tripped=self.battery.breaker_tripped,
            min_voltage=self.tick_min_voltage, max_current=self.tick_max_current,
            brownout_in_tick=self.tick_brownout,
            switches={n: self.switch_pressed(n, sw) for n, sw in self.cfg.switches.items()},
            pneumatics=None if self.pneumatics is None else Pneumatics(
                self.pneumatics.pressure_psi, self.pneumatics.compressor_running,
                self.compressor_current,
                {n: self.pneumatics.extension(n) for n in self.cfg.cylinders}),
            wall_hits=self.wall_hits, touching_wall=self.touching_wall,
            obstacle_hits=self.obstacle_hits, robot_hits=self.robot_hits,
            last_contact=self.last_contact,
            chassis_speeds=self.chassis_speeds,
            drive={n: v for n, v in outputs.items() if n in nt},
            drive_log={n: v for n, v in outputs.items() if n not in nt},
            frames=self.frames,
            pieces=None if self.field_pieces is None else self.field_pieces.snapshot(),
            components=tuple(pose for m in self.mechanisms.values()
                             if (parts := getattr(m, "components", None)) is not None
                             for pose in parts()),
        )
