"""The world: one robot on one field, stepped in fixed substeps in a fixed order.

Order within a substep: motor controllers → drivetrain (with the battery as a Thevenin source)
→ walls and field elements → drivetrain encoders → pneumatics (solenoids, cylinders,
compressor) → mechanisms → battery bookkeeping (brownout, breaker). The
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
from typing import Any

import numpy as np

from simserver.config.loader import motor_mechanisms
from simserver.config.model import Config, FieldConfig, SwitchConfig
from simserver.config.registry import registry
from simserver.config.vision import camera_specs
from simserver.contract.snapshot import SIDE_SPEEDS, Pneumatics, Snapshot
from simserver.field.elements import season_obstacles
from simserver.field.seasons import field_size
from simserver.models.api import Model
from simserver.models.battery import Battery, Source
from simserver.models.camera import Frame, VisionSystem
from simserver.models.collision import Obstacles, outline
from simserver.models.controller import MotorController
from simserver.models.differential import DifferentialDrive, Electrical
from simserver.models.motor import motor_by_name
from simserver.models.obstacles import Obstacle, convex_ccw
from simserver.models.pneumatics import PneumaticSystem
from simserver.models.sensors import Encoder, Gyro
from simserver.models.walls import Body, FieldWalls
from simserver.units import unit_kind, unit_scale
from simserver.world.holonomic import Holonomic
from simserver.world.stationary import Stationary

log = logging.getLogger("simserver.world")


def field_obstacles(field_cfg: FieldConfig) -> tuple[Obstacle, ...]:
    """The obstacles of a field config: the season's elements when enabled, then the user's."""
    own = tuple(Obstacle(name, convex_ccw(o.points) or o.points, o.height)
                for name, o in field_cfg.obstacles.items())
    return (season_obstacles(field_cfg.season) if field_cfg.elements else ()) + own


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
        self.drive: DifferentialDrive | None = None
        self.holo: Holonomic | Stationary | None = None
        drive = self._build_drivetrain(cfg)
        if isinstance(drive, DifferentialDrive):
            self.drive = drive
            self.params = drive.params
            self.mass, self.inertia = drive.params.mass, drive.params.moment_of_inertia
        elif isinstance(drive, (Holonomic, Stationary)):
            self.holo = drive
            self.mass, self.inertia = drive.mass, drive.moment_of_inertia
        else:
            raise TypeError(f"drivetrain type {cfg.drivetrain_type!r} did not build a drivetrain")
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
        driven = motor_mechanisms(cfg)
        self._enc_mech = {n: driven[e.motor] for n, e in cfg.encoders.items()
                          if e.motor in driven}
        holo = self.holo
        self._enc_holo = {n for n, e in cfg.encoders.items()
                          if holo is not None and holo.has_joint(e.motor)}
        self.encoders = {n: self._encoder(n) for n in cfg.encoders
                         if n not in self._enc_mech and n not in self._enc_holo}
        self._enc_side = {n: e.motor == getattr(cfg.drivetrain, "left", None)
                          for n, e in cfg.encoders.items()}
        self.mechanisms: dict[str, Model] = {}
        for name, section in cfg.mechanisms.items():
            self.mechanisms[name] = self._build_mechanism(name, section.type, section.config)
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
        if cfg.cameras:
            self.vision = VisionSystem(
                camera_specs(cfg.cameras), cfg.vision.all_fiducials(cfg.field.season),
                cfg.vision.bearing_targets(), self.obstacles.obstacles,
                rng=self._rng.spawn(1)[0])
        self.frames: tuple[Frame, ...] = ()
        self.substep = cfg.sim.substep
        self.motors = {name: 0.0 for name in cfg.motors}
        self.solenoids = {name: s.initial for name, s in cfg.solenoids.items()}
        self.reset()

    @staticmethod
    def _build_drivetrain(cfg: Config) -> Any:
        """The drivetrain model of ``cfg`` (a :class:`Stationary` chassis without one)."""
        if cfg.drivetrain is None:
            robot = cfg.robot
            moi = robot.moment_of_inertia or robot.mass / 12.0 * (robot.length**2
                                                                  + robot.width**2)
            return Stationary(robot.mass, moi)
        dt_type = registry().get("drivetrain", cfg.drivetrain_type)
        if dt_type is None:
            raise ValueError(f"no drivetrain model type {cfg.drivetrain_type!r} is installed")
        return dt_type.create("drivetrain", cfg.drivetrain, cfg)

    def _encoder_scale(self, name: str, gearing: float) -> float:
        """Reading units per metre of wheel travel of encoder ``name``."""
        e = self.cfg.encoders[name]
        kind = unit_kind(e.unit)
        sign = -1.0 if self.cfg.encoder_reversed(name) else 1.0
        if kind == "length":
            return sign / unit_scale(e.unit)
        wheel_rad_per_m = 1.0 / self.params.wheel_radius
        shaft_rad_per_m = wheel_rad_per_m * (gearing if e.mount == "motor" else 1.0)
        if kind == "angle":
            return sign * shaft_rad_per_m / unit_scale(e.unit)
        return sign * shaft_rad_per_m / (2.0 * math.pi) * e.ticks_per_revolution

    def _encoder(self, name: str) -> Encoder:
        return Encoder(self._encoder_scale(name, self.params.gearing),
                       ticks=self.cfg.encoders[name].unit in ("tick", "ticks"))

    def reset(self) -> None:
        """Back to the start pose at rest, sensors zeroed, battery fresh, time 0."""
        start = self.cfg.robot.start
        if self.drive is not None:
            self.drive.reset(start.x, start.y, start.heading)
        else:
            assert self.holo is not None
            self.holo.reset(start.x, start.y, start.heading)
        self.battery.reset()
        self.gyro.reset(start.heading)
        for enc in self.encoders.values():
            enc.reset()
        self.solenoids = {name: s.initial for name, s in self.cfg.solenoids.items()}
        self.time = 0.0
        self.elec = Electrical(self.battery.voltage, 0.0, 0.0, 0.0)
        self.peak_current = 0.0
        self.min_voltage = self.battery.voltage
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
        self._joint_zero = {n: 0.0 for n in (*self._enc_mech, *self._enc_holo)}
        self._joint_zero = {n: self._encoder_joint(n)[0] for n in self._joint_zero}
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
        if self.drive is None:
            assert self.holo is not None
            return self.holo.pose
        st = self.drive.state
        return st.x, st.y, st.heading

    @property
    def chassis_speeds(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        if self.drive is None:
            assert self.holo is not None
            return self.holo.body_velocity
        return self.drive.v_forward, self.drive.state.v_lat, self.drive.omega

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
        if self.drive is None:
            assert self.holo is not None
            self.holo.place(body.x, body.y)
            self.holo.set_body_velocity(vx_b, vy_b, body.omega)
            return
        st = self.drive.state
        # Wheels roll without slipping: the push-back along the heading undoes wheel travel.
        along = (body.x - st.x) * c + (body.y - st.y) * s
        st.s_left += along
        st.s_right += along
        st.x, st.y = body.x, body.y
        self.drive.set_body_velocity(vx_b, vy_b, body.omega)

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

    def motor(self, name: str) -> float:
        """Duty cycle of motor output ``name`` with its inversion applied."""
        return self.motors[name] * (-1.0 if self.cfg.motors[name].inverted else 1.0)

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

    def motor_coasting(self, name: str) -> bool:
        """Whether motor ``name``'s controller output coasts (windings open) this substep."""
        out = self.controllers[name].output
        return out is not None and out.coasting

    def motor_current(self, name: str, stator_current: float, motor_speed: float,
                      voltage: float | None = None) -> None:
        """Report the stator current of one of motor ``name``'s motors after the substep, A,
        and the terminal voltage actually applied if it differs from the controller's; the
        supply current ``I·V/V_bus`` it draws joins the battery load."""
        ctrl = self.controllers[name]
        count = self.cfg.motors[name].count
        out = ctrl.output
        if out is None or out.coasting:
            self.motor_currents[name] = 0.0
            self.applied_voltage[name] = 0.0
            return
        volts = out.voltage if voltage is None else voltage
        self.applied_voltage[name] = volts
        self.motor_currents[name] = count * stator_current
        if self.bus_voltage > 0.0:
            self.mechanism_supply += count * stator_current * volts / self.bus_voltage

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

    def _gearing(self) -> float:
        dt = self.cfg.drivetrain
        assert dt is not None  # a differential drivetrain
        if dt.shifter is not None and self.solenoids.get(dt.shifter) and dt.high_gearing:
            return dt.high_gearing
        return dt.gearing

    def step(self, dt: float) -> None:
        """Advance ``dt`` seconds in whole substeps (at least one)."""
        n = max(1, round(dt / self.substep))
        self.begin_tick()
        for _ in range(n):
            self.advance()
        self.end_tick(n)

    def begin_tick(self) -> None:
        """Take this tick's inputs (held for all its substeps)."""
        if self.drive is None:
            assert self.holo is not None
            self.holo.begin_tick(self)
            return
        cfg = self.cfg.drivetrain
        assert cfg is not None
        drive = self.drive
        gearing = self._gearing()
        if gearing != drive.gearing:
            drive.gearing = gearing
            for name, enc in self.encoders.items():
                enc.units_per_metre = self._encoder_scale(name, gearing)
        ctrl_l, ctrl_r = self.controllers[cfg.left], self.controllers[cfg.right]
        dl = max(-1.0, min(1.0, self.motor(cfg.left)))
        dr = max(-1.0, min(1.0, self.motor(cfg.right)))
        self._tick = (dl, dr, ctrl_l, ctrl_r, gearing / self.params.wheel_radius,
                      ctrl_l.passthrough and ctrl_r.passthrough,
                      (dl == 0.0 and ctrl_l.neutral == "coast",
                       dr == 0.0 and ctrl_r.neutral == "coast"))

    def advance(self) -> None:
        """One substep of every model (inputs as :meth:`begin_tick` took them)."""
        battery, h = self.battery, self.substep
        if self.drive is not None:
            elec = self._advance_differential(h)
            self.elec = elec
            supply = elec.supply_current
            peak = max(abs(elec.current_left), abs(elec.current_right))
        else:
            assert self.holo is not None
            bus, supply = self.holo.substep(self, h, self._source(), not battery.brownout)
            self.bus_voltage = bus
            vx, vy, _ = self.holo.body_velocity
            self.distance += math.hypot(vx, vy) * h  # the pose moved with these velocities
            self._collide()
            peak = 0.0  # the drivetrain's peak is taken once per tick (end_tick)
        self.time += h
        if self.pneumatics is not None:
            for cname, cyl in self.cfg.cylinders.items():
                self.pneumatics.set_solenoid(cname, self.solenoids[cyl.solenoid])
            self.compressor_current = self.pneumatics.step(h, self.bus_voltage)
        self.mechanism_supply = 0.0
        lagged = 0.0
        for name, mech in self.mechanisms.items():
            if name not in self.failed:
                before = self.mechanism_supply
                self._step_mechanism(name, mech, h)
                if getattr(mech, "load", None) is None:
                    lagged += self.mechanism_supply - before
        self._lagged_supply = lagged
        battery.update(supply + self.mechanism_supply + self.compressor_current, h)
        if peak > self.peak_current:
            self.peak_current = peak
        if battery.voltage < self.min_voltage:
            self.min_voltage = battery.voltage
        if battery.breaker_tripped:
            self.bus_voltage = 0.0

    def _advance_differential(self, h: float) -> Electrical:
        drive = self.drive
        assert drive is not None
        st, battery = drive.state, self.battery
        dl, dr, ctrl_l, ctrl_r, to_motor, passthrough, plain = self._tick
        s_l, s_r = st.s_left, st.s_right
        if passthrough and not battery.brownout:
            eff_l, eff_r = dl, dr
            drive.coast = plain
        else:
            enabled = not battery.brownout
            out_l = ctrl_l.apply(dl, self.bus_voltage, st.v_left * to_motor, h, enabled)
            out_r = ctrl_r.apply(dr, self.bus_voltage, st.v_right * to_motor, h, enabled)
            eff_l, eff_r = out_l.duty, out_r.duty
            drive.coast = (out_l.coasting, out_r.coasting)
        elec = drive.step(h, eff_l, eff_r, self._source())
        self.bus_voltage = elec.bus_voltage
        self._collide()
        for name, enc in self.encoders.items():
            if self._enc_side[name]:
                enc.advance(st.s_left - s_l, st.v_left)
            else:
                enc.advance(st.s_right - s_r, st.v_right)
        self.distance += abs(0.5 * (st.s_left - s_l + st.s_right - s_r))
        return elec

    def end_tick(self, n: int) -> None:
        """Close a tick of ``n`` substeps: drivetrain currents, gyro reading."""
        if self.drive is not None:
            cfg = self.cfg.drivetrain
            assert cfg is not None
            self.motor_currents[cfg.left] = self.elec.current_left
            self.motor_currents[cfg.right] = self.elec.current_right
        else:
            assert self.holo is not None
            self.holo.end_tick(self)
            peak = max(map(abs, self.holo.currents[: len(self.holo.drive)]), default=0.0)
            self.peak_current = max(self.peak_current, peak)
        _, _, heading = self.pose
        self.gyro.read(heading, self.chassis_speeds[2], n * self.substep)
        if self.vision is not None:
            self.frames = tuple(self.vision.update(self.time, self.pose))

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
            for name, mech in self.mechanisms.items():
                load = getattr(mech, "load", None)
                if load is not None and name not in self.failed:
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
        """Whether limit switch ``name`` is pressed (its mechanism at or past its position)."""
        position = self.joint_position(sw.mechanism)
        if position is None:
            return False
        at = sw.position[1]
        return position <= at if sw.trigger == "below" else position >= at

    def _joint(self, mechanism: str) -> tuple[float, float]:
        joint = getattr(self.mechanisms[mechanism], "joint", None)
        return (0.0, 0.0) if joint is None else joint()

    def _encoder_joint(self, name: str) -> tuple[float, float, float, float]:
        """(position, velocity, radius, gearing) of the joint encoder ``name`` measures: a
        mechanism's output, a holonomic drivetrain's wheel (m) or module azimuth (rad)."""
        if name in self._enc_holo:
            assert self.holo is not None
            return self.holo.joint(self.cfg.encoders[name].motor)
        mech = self._enc_mech[name]
        radius, gearing = getattr(self.mechanisms[mech], "geometry", (0.0, 1.0))
        position, velocity = self._joint(mech)
        return position, velocity, radius, gearing

    def _joint_encoder(self, name: str) -> tuple[float, float]:
        """(position, velocity) of encoder ``name`` on a joint, in its configured unit."""
        e = self.cfg.encoders[name]
        position, velocity, radius, gearing = self._encoder_joint(name)
        kind = unit_kind(e.unit)
        sign = -1.0 if self.cfg.encoder_reversed(name) else 1.0
        to_shaft = 1.0 if radius == 0.0 or kind == "length" else 1.0 / radius  # m -> drum rad
        if kind != "length" and e.mount == "motor":
            to_shaft *= gearing
        per_unit = unit_scale(e.unit) if kind != "ticks" else 2.0 * math.pi / \
            e.ticks_per_revolution
        if e.absolute:
            angle = (sign * position * to_shaft + e.offset) % e.full_range
            return angle / per_unit, sign * velocity * to_shaft / per_unit
        position = (position - self._joint_zero[name]) * to_shaft
        velocity *= to_shaft
        # a coaxial swerve's coupling: on the drivetrain's own rotor sensors, not a mechanism's
        if e.mount == "motor" and name in self._enc_holo and self.holo is not None:
            turn, rate = self.holo.rotor_coupling(e.motor)
            to_reading = radius / gearing if kind == "length" else 1.0  # shaft rad -> reading
            position, velocity = position + turn * to_reading, velocity + rate * to_reading
        reading = sign * position / per_unit
        if kind == "ticks":
            reading = float(math.floor(reading))
        return reading, sign * velocity / per_unit


    def joint_position(self, mechanism: str) -> float | None:
        """Position of a mechanism's joint (m or rad), or None if it has no joint."""
        joint = getattr(self.mechanisms.get(mechanism), "joint", None)
        return None if joint is None else float(joint()[0])

    def snapshot(self) -> Snapshot:
        """The state to publish, after the last step."""
        x, y, heading = self.pose
        vx, vy, omega = self.velocity
        drive: dict[str, Any]
        drive_log: dict[str, Any] = {}
        if self.drive is not None:
            drive = {}
            drive_log = dict(zip(SIDE_SPEEDS, (self.drive.state.v_left,
                                               self.drive.state.v_right), strict=True))
        else:
            assert self.holo is not None
            from wpimath.geometry import Rotation2d
            from wpimath.kinematics import MecanumDriveWheelSpeeds, SwerveModuleState
            if self.holo.steer:
                drive = {"drive/module_states": [SwerveModuleState(v, Rotation2d(a)) for v, a in
                                                 self.holo.module_states()]}
            elif self.holo.drive:
                drive = {"drive/wheel_speeds": MecanumDriveWheelSpeeds(*self.holo.wheel_speeds())}
            else:
                drive = {}
        return Snapshot(
            time=self.time, x=x, y=y, heading=heading, vx=vx, vy=vy, omega=omega,
            encoders={**{n: (e.position, e.velocity) for n, e in self.encoders.items()},
                      **{n: self._joint_encoder(n) for n in (*self._enc_mech, *self._enc_holo)}},
            gyro_yaw=self.gyro.yaw, gyro_rate=self.gyro.rate,
            battery_voltage=self.battery.voltage, battery_current=self.battery.current,
            charge_used=self.battery.charge_used,
            currents=dict(self.motor_currents),
            duties=dict(self.motors), solenoids=dict(self.solenoids),
            mechanisms={n: m.outputs() for n, m in self.mechanisms.items()},
            drawings={n: draw() for n, m in self.mechanisms.items()
                      if (draw := getattr(m, "drawing", None)) is not None},
            brownout=self.battery.brownout, breaker_tripped=self.battery.breaker_tripped,
            switches={n: self.switch_pressed(n, sw) for n, sw in self.cfg.switches.items()},
            pneumatics=None if self.pneumatics is None else Pneumatics(
                self.pneumatics.pressure_psi, self.pneumatics.compressor_running,
                self.compressor_current,
                {n: self.pneumatics.extension(n) for n in self.cfg.cylinders}),
            wall_hits=self.wall_hits, touching_wall=self.touching_wall,
            obstacle_hits=self.obstacle_hits, robot_hits=self.robot_hits,
            last_contact=self.last_contact,
            chassis_speeds=self.chassis_speeds, drive=drive, drive_log=drive_log,
            frames=self.frames,
        )
