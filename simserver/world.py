"""The world: one robot on one field, stepped in fixed substeps in a fixed order.

Order within a substep: motor controllers → drivetrain (with the battery as a Thevenin source)
→ walls → drivetrain encoders → pneumatics (solenoids, cylinders, compressor) → mechanisms →
battery bookkeeping (brownout, breaker).
Inputs (duty cycles, solenoid states) are set before :meth:`World.step` and held for it.

    world = World.from_config(load_default())
    world.set_motor("left", 0.5); world.set_motor("right", 0.5)
    world.step(0.02)
    snap = world.snapshot()
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simserver.config.loader import motor_mechanisms
from simserver.config.model import Config, EncoderConfig, SwitchConfig
from simserver.fieldinfo import field_size
from simserver.models.api import Drawing, Model
from simserver.models.battery import Battery, Source
from simserver.models.controller import MotorController
from simserver.models.differential import DifferentialDrive, Electrical
from simserver.models.motor import motor_by_name
from simserver.models.pneumatics import PneumaticSystem
from simserver.models.sensors import Encoder, Gyro
from simserver.models.walls import Body, FieldWalls
from simserver.registry import registry
from simserver.units import unit_kind, unit_scale


@dataclass
class Pneumatics:
    """Published pneumatic state: gauge pressure psi, compressor running and current A,
    cylinder extensions 0..1."""

    pressure_psi: float
    compressor_running: bool
    compressor_current: float
    extensions: dict[str, float]


@dataclass
class Snapshot:
    """Everything published after a tick. Units: s, m, rad, m/s, rad/s, V, A.

    wall_hits counts separate wall contacts since reset (a contact lasting several substeps
    is one hit); touching_wall is whether the robot touched a wall in the last substep."""

    time: float
    x: float
    y: float
    heading: float
    vx: float
    vy: float
    omega: float
    wheel_speeds: tuple[float, float]
    encoders: dict[str, tuple[float, float]]
    gyro_yaw: float
    gyro_rate: float
    battery_voltage: float
    battery_current: float
    charge_used: float
    currents: dict[str, float]
    duties: dict[str, float]
    solenoids: dict[str, bool] = field(default_factory=dict)
    mechanisms: dict[str, dict[str, Any]] = field(default_factory=dict)
    drawings: dict[str, Drawing] = field(default_factory=dict)
    brownout: bool = False
    breaker_tripped: bool = False
    switches: dict[str, bool] = field(default_factory=dict)
    pneumatics: Pneumatics | None = None
    wall_hits: int = 0
    touching_wall: bool = False


log = logging.getLogger("simserver.world")


class ModelBuildError(Exception):
    """A model type that could not build its model; ``path`` is the config key path."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class World:
    """Robot, field and battery, with inputs held between steps."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        reg = registry()
        dt_type = reg.get("drivetrain", cfg.drivetrain_type)
        if dt_type is None:
            raise ValueError(f"no drivetrain model type {cfg.drivetrain_type!r} is installed")
        drive = dt_type.create("drivetrain", cfg.drivetrain, cfg)
        if not isinstance(drive, DifferentialDrive):
            raise TypeError(f"drivetrain type {cfg.drivetrain_type!r} did not build a drivetrain")
        self.drive = drive
        self.params = drive.params
        bc = cfg.battery
        self.battery = Battery(bc.nominal_voltage, bc.resistance, bc.background_current,
                               capacity=bc.capacity, soc_curve=bc.discharge_voltage,
                               brownout_voltage=bc.brownout_voltage,
                               breaker_rating=120.0 if bc.breaker else 0.0)
        length, width = field_size(cfg.field.season)
        self.walls = FieldWalls(cfg.field.length or length, cfg.field.width or width,
                                cfg.field.restitution, cfg.field.wall_friction)
        robot = cfg.robot
        self._half_l, self._half_w = robot.length / 2.0, robot.width / 2.0
        self._reach = math.hypot(self._half_l, self._half_w)
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
        self.encoders = {n: self._encoder(e) for n, e in cfg.encoders.items()
                         if n not in self._enc_mech}
        self._enc_side = {n: e.motor == cfg.drivetrain.left for n, e in cfg.encoders.items()}
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
        self.substep = cfg.sim.substep
        self.motors = {name: 0.0 for name in cfg.motors}
        self.solenoids = {name: s.initial for name, s in cfg.solenoids.items()}
        self.reset()

    def _encoder_scale(self, e: EncoderConfig, gearing: float) -> float:
        """Reading units per metre of wheel travel."""
        kind = unit_kind(e.unit)
        sign = -1.0 if e.inverted else 1.0
        if kind == "length":
            return sign / unit_scale(e.unit)
        wheel_rad_per_m = 1.0 / self.params.wheel_radius
        shaft_rad_per_m = wheel_rad_per_m * (gearing if e.mount == "motor" else 1.0)
        if kind == "angle":
            return sign * shaft_rad_per_m / unit_scale(e.unit)
        return sign * shaft_rad_per_m / (2.0 * math.pi) * e.ticks_per_revolution

    def _encoder(self, e: EncoderConfig) -> Encoder:
        return Encoder(self._encoder_scale(e, self.params.gearing), ticks=e.unit in ("tick",
                                                                                     "ticks"))

    def reset(self) -> None:
        """Back to the start pose at rest, sensors zeroed, battery fresh, time 0."""
        start = self.cfg.robot.start
        self.drive.reset(start.x, start.y, start.heading)
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
        self.failed: dict[str, str] = {}
        for mech in self.mechanisms.values():
            mech.reset()
        self._joint_zero = {n: self._joint(m)[0] for n, m in self._enc_mech.items()}
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
        st = self.drive.state
        return st.x, st.y, st.heading

    @property
    def velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the field frame."""
        st = self.drive.state
        c, s = math.cos(st.heading), math.sin(st.heading)
        vx_b = self.drive.v_forward
        return vx_b * c - st.v_lat * s, vx_b * s + st.v_lat * c, self.drive.omega

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
        if dt.shifter is not None and self.solenoids.get(dt.shifter) and dt.high_gearing:
            return dt.high_gearing
        return dt.gearing

    def step(self, dt: float) -> None:
        """Advance ``dt`` seconds in whole substeps (at least one)."""
        n = max(1, round(dt / self.substep))
        cfg = self.cfg.drivetrain
        dl, dr = self.motor(cfg.left), self.motor(cfg.right)
        drive, st, battery, h = self.drive, self.drive.state, self.battery, self.substep
        gearing = self._gearing()
        if gearing != drive.gearing:
            drive.gearing = gearing
            for name, enc in self.encoders.items():
                enc.units_per_metre = self._encoder_scale(self.cfg.encoders[name], gearing)
        ctrl_l, ctrl_r = self.controllers[cfg.left], self.controllers[cfg.right]
        to_motor = gearing / self.params.wheel_radius  # motor rad/s per wheel m/s
        passthrough = ctrl_l.passthrough and ctrl_r.passthrough
        dl, dr = max(-1.0, min(1.0, dl)), max(-1.0, min(1.0, dr))
        plain = (dl == 0.0 and ctrl_l.neutral == "coast", dr == 0.0 and ctrl_r.neutral == "coast")
        for _ in range(n):
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
            battery.update(elec.supply_current + self.mechanism_supply + self.compressor_current,
                           h)
            peak = max(abs(elec.current_left), abs(elec.current_right))
            if peak > self.peak_current:
                self.peak_current = peak
            if battery.voltage < self.min_voltage:
                self.min_voltage = battery.voltage
            if battery.breaker_tripped:
                self.bus_voltage = 0.0
        self.elec = elec
        self.motor_currents[cfg.left] = elec.current_left
        self.motor_currents[cfg.right] = elec.current_right
        self.gyro.read(st.heading, drive.omega, n * h)

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
        st = self.drive.state
        walls, reach = self.walls, self._reach
        if reach < st.x < walls.length - reach and reach < st.y < walls.width - reach:
            self.touching_wall = False
            return
        vx_b = self.drive.v_forward
        c, s = math.cos(st.heading), math.sin(st.heading)
        body = Body(st.x, st.y, st.heading, vx_b * c - st.v_lat * s, vx_b * s + st.v_lat * c,
                    self.drive.omega)
        touched = walls.resolve(body, self._half_l, self._half_w, self.params.mass,
                                self.params.moment_of_inertia)
        if touched and not self.touching_wall:
            self.wall_hits += 1
        self.touching_wall = touched
        if touched:
            # Wheels roll without slipping: the push-back along the heading undoes wheel travel.
            along = (body.x - st.x) * c + (body.y - st.y) * s
            st.s_left += along
            st.s_right += along
            st.x, st.y = body.x, body.y
            self.drive.set_body_velocity(body.vx * c + body.vy * s, -body.vx * s + body.vy * c,
                                         body.omega)

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

    def _mechanism_encoder(self, name: str) -> tuple[float, float]:
        """(position, velocity) of encoder ``name`` on a mechanism, in its configured unit."""
        e = self.cfg.encoders[name]
        mech = self._enc_mech[name]
        radius, gearing = getattr(self.mechanisms[mech], "geometry", (0.0, 1.0))
        position, velocity = self._joint(mech)
        kind = unit_kind(e.unit)
        sign = -1.0 if e.inverted else 1.0
        to_shaft = 1.0 if radius == 0.0 or kind == "length" else 1.0 / radius  # m -> drum rad
        if kind != "length" and e.mount == "motor":
            to_shaft *= gearing
        per_unit = unit_scale(e.unit) if kind != "ticks" else 2.0 * math.pi / \
            e.ticks_per_revolution
        if e.absolute:
            turn = 2.0 * math.pi
            angle = (sign * position * to_shaft + e.offset) % turn
            reading = angle / per_unit
        else:
            reading = sign * (position - self._joint_zero[name]) * to_shaft / per_unit
        if kind == "ticks":
            reading = float(math.floor(reading))
        return reading, sign * velocity * to_shaft / per_unit

    def joint_position(self, mechanism: str) -> float | None:
        """Position of a mechanism's joint (m or rad), or None if it has no joint."""
        joint = getattr(self.mechanisms.get(mechanism), "joint", None)
        return None if joint is None else float(joint()[0])

    def snapshot(self) -> Snapshot:
        """The state to publish, after the last step."""
        st, drive = self.drive.state, self.drive
        c, s = math.cos(st.heading), math.sin(st.heading)
        vx_b = drive.v_forward
        return Snapshot(
            time=self.time, x=st.x, y=st.y, heading=st.heading,
            vx=vx_b * c - st.v_lat * s, vy=vx_b * s + st.v_lat * c, omega=drive.omega,
            wheel_speeds=(st.v_left, st.v_right),
            encoders={**{n: (e.position, e.velocity) for n, e in self.encoders.items()},
                      **{n: self._mechanism_encoder(n) for n in self._enc_mech}},
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
        )
