"""WPILib's HALSim WebSocket protocol: Java, C++ and Python robot programs without the bridge.

A robot program started with the halsim_ws server extension (Java: ``wpi.sim.addWebsocketsServer()``
in build.gradle; RobotPy: ``robotpy sim --ws-server``) exposes its whole HAL on
``ws://HOST:3300/wpilibws`` as JSON messages ``{"type", "device", "data"}`` whose data keys
carry a direction prefix: ``<`` from the robot program, ``>`` to it, ``<>`` both. simserver
connects as the one client the server allows and plays the hardware:

- it keeps the state of every device from the initial dump and the deltas after it, so
  devices created late are seen when they appear;
- it reads the outputs the config's ``hal`` keys name (PWM ``<speed``, SimDevice values such as
  a Talon FX's ``<dutyCycle``, solenoid ``<output``) into the same topic -> value mapping the
  NetworkTables and lock-step transports produce;
- it writes sensor values (encoder ``>count``/``>period``, gyro SimDevice angles, DIO, the
  RoboRIO's ``>vin_voltage``) and Driver Station / joystick state;
- when the robot program restarts, it reconnects by itself.

The server echoes every value a client sets. Echoes of values this client wrote are dropped,
so a value that changes without us (a gyro ``reset()`` in robot code) is seen as the robot
program's own, as the bridge sees it.

Not carried by WPILib 2026's halsim_ws: ``AnalogGyro`` (no provider), so the config must use a
SimDevice gyro (ADXRS450, Pigeon 2, navX); and an encoder's distance-per-pulse, so encoders must
be configured in ``ticks``. :func:`check_config` says so before anything starts.
"""

from __future__ import annotations

import collections
import inspect
import json
import logging
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

from simserver.config.hal import HalAddress
from simserver.config.model import Config, EncoderConfig
from simserver.contract import topics
from simserver.hal import halmap
from simserver.io.nt import InputState
from simserver.io.validation import InputValidator, decode_inputs

log = logging.getLogger("simserver.halsim_ws")

PATH = "/wpilibws"
DEFAULT_PORT = 3300
# SimDevice name prefixes halsim_ws turns into message types ("CANMotor:Talon FX (v6)[1]" ->
# type "CANMotor", device "Talon FX (v6)[1]"); other SimDevices are type "SimDevice".
_TYPED = ("CANMotor", "CANEncoder", "CANGyro", "CANAccel", "CANAIn", "CANDIO", "CANDutyCycle",
          "Gyro", "Accel", "DutyCycle")
DUMP_TIME = 0.5  # s after connecting by which the initial dump of every device has arrived
STOPPED_PERIOD = 1e9  # s between encoder pulses that reads as a rate of 0
Key = tuple[str, str]  # (type, device)


def ws_device(simdevice: str) -> Key:
    """The (type, device) under which halsim_ws carries SimDevice ``simdevice``."""
    prefix, colon, rest = simdevice.partition(":")
    if colon and prefix in _TYPED:
        return prefix, rest
    return "SimDevice", simdevice


def value_of(data: dict[str, Any], name: str, default: Any = None) -> Any:
    """A data value by name, whatever its direction prefix."""
    for prefix in ("<", ">", "<>", ""):
        if prefix + name in data:
            return data[prefix + name]
    return default


def connect(url: str, **options: Any) -> Any:
    """websockets' synchronous ``connect(url, **options)``: the open ClientConnection, whose
    iteration yields the messages. websockets 17.1 and newer want ``legacy=True`` for that
    (or they warn); older releases, the only ones for Python 3.10, have no such flag."""
    from websockets.sync.client import connect as ws_connect

    if "legacy" in inspect.signature(ws_connect).parameters:
        options["legacy"] = True
    return ws_connect(url, **options)


def check_config(cfg: Config) -> list[str]:
    """Problems that stop ``cfg`` from working over halsim_ws (key path: message)."""
    out = []
    for name, enc in cfg.encoders.items():
        if any(a.kind == "encoder" for a in enc.hal) and enc.unit not in ("tick", "ticks"):
            out.append(f'encoders.{name}.unit: halsim_ws carries encoder counts, not the robot '
                       'program\'s distance-per-pulse: set unit = "ticks" and '
                       "ticks_per_revolution to the encoder's counts per revolution")
    if any(a.kind == "analoggyro" for a in cfg.gyro.hal):
        out.append('gyro.hal: WPILib 2026\'s halsim_ws has no AnalogGyro messages: use a '
                   'SimDevice gyro (hal = "adxrs450", "pigeon2:N" or "navx"), or run a RobotPy '
                   "program through the bridge (robotpy sim --simserver)")
    return out


class HalsimWsLink:
    """The client connection and the device state it mirrors. ``poll`` and ``send`` run on
    the session's thread; a reader thread receives."""

    def __init__(self, cfg: Config, host: str, port: int = DEFAULT_PORT):
        self.cfg = cfg
        self.url = f"ws://{host}:{port}{PATH}"
        self.validator = InputValidator()
        self._lock = threading.Lock()
        self._state: dict[Key, dict[str, Any]] = {}
        self._written: dict[tuple[Key, str], collections.deque[Any]] = {}
        self._sent: dict[tuple[Key, str], Any] = {}
        self._events: list[bool] = []  # True: connected, False: lost
        self._conn: Any = None  # connected: the server has spoken
        self._opening: Any = None  # the latest connection, spoken or not
        self._stop = threading.Event()
        self._rezero: dict[str, halmap.Rezero] = {}
        self._turns: dict[str, halmap.TurnCounter] = {}  # CAN encoders' multi-turn positions
        self._valves = {name: halmap.Valve(s.initial, bool(s.reverse_hal))
                        for name, s in cfg.solenoids.items()}
        self._reported = False
        self._connected_at = 0.0
        self._out: list[tuple[Key, dict[str, Any]]] = []
        self._thread = threading.Thread(target=self._run, name="halsim-ws", daemon=True)
        self._thread.start()

    # --- connection (reader thread) -------------------------------------------------------

    def _run(self) -> None:
        from websockets.exceptions import InvalidStatus, WebSocketException

        warned = False
        while not self._stop.is_set():
            try:
                conn = connect(self.url, open_timeout=2.0, compression=None, max_size=None,
                               ping_interval=None)
            except InvalidStatus as exc:
                if not warned:
                    log.warning("%s refused the connection (HTTP %s): halsim_ws allows one "
                                "client; is another simulator connected?", self.url,
                                exc.response.status_code)
                    warned = True
                self._stop.wait(1.0)
                continue
            except (OSError, TimeoutError, WebSocketException):
                self._stop.wait(0.5)
                continue
            with self._lock:
                self._opening = conn
            if self._stop.is_set():  # close() ran while the handshake was under way
                conn.close()
                return
            first = True
            try:
                for raw in conn:
                    if first:
                        # Arrived only once the server talks: one that allows a single client
                        # accepts a second handshake and closes it at once, silently.
                        first = False
                        warned = False
                        self._arrive(conn)
                    self._receive(raw)
            except (OSError, WebSocketException):
                pass
            if first:
                if not warned:
                    log.warning("%s closed the connection at once: halsim_ws allows one client; "
                                "is another simulator or GUI connected? Retrying.", self.url)
                    warned = True
                self._stop.wait(1.0)
                continue
            with self._lock:
                self._conn = None
                self._events.append(False)
            log.info("halsim_ws connection to %s lost", self.url)

    def _arrive(self, conn: Any) -> None:
        with self._lock:
            self._state.clear()
            self._written.clear()
            self._sent.clear()
            self._rezero.clear()  # a new program: its sensors start from its own zero
            self._turns.clear()
            for valve in self._valves.values():
                valve.reset()
            self._conn = conn
            self._connected_at = time.monotonic()
            self._reported = False
            self._events.append(True)
        log.info("connected to the robot program's halsim_ws at %s", self.url)

    def _receive(self, raw: str | bytes) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        kind, device, data = msg.get("type"), msg.get("device"), msg.get("data")
        if not isinstance(kind, str) or not isinstance(device, str) or not isinstance(data,
                                                                                      dict):
            return
        key = (kind, device)
        with self._lock:
            state = self._state.setdefault(key, {})
            for name, value in data.items():
                echoes = self._written.get((key, name))
                if echoes and value in echoes:  # the server repeating what we set, in order
                    while echoes.popleft() != value:
                        pass
                    continue
                state[name] = value

    def close(self) -> None:
        """Disconnect and stop the reader thread."""
        self._stop.set()
        with self._lock:
            conn = self._conn or self._opening
        if conn is not None:
            conn.close()
        self._thread.join(5.0)

    # --- reading the robot program's outputs ----------------------------------------------

    def _get(self, key: Key, name: str, default: Any = None) -> Any:
        return value_of(self._state.get(key, {}), name, default)

    def _devices(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        return ((d, data) for (k, d), data in self._state.items() if k == kind)

    def _duty(self, address: HalAddress) -> float:
        ch = address.channel or 0
        if address.kind == "pwm":
            value = self._get(("PWM", str(ch)), "speed", 0.0)
        elif address.kind == "talonfx":
            value = self._get(ws_device(halmap.talonfx_motor(ch)), "dutyCycle", 0.0)
        elif address.kind in ("sparkmax", "sparkflex"):
            key = ws_device(halmap.spark(address.kind, ch))
            mode = halmap.finite(self._get(key, "Control Mode", 0)) or 0.0
            value, _ = halmap.spark_duty(round(mode), self._num(key, "Setpoint"),
                                         self._num(key, "Bus Voltage", 12.0),
                                         self._num(key, "Applied Output"))
        else:
            value = self._get(ws_device(address.device), address.value, 0.0)
        return halmap.finite(value) or 0.0

    def _num(self, key: Key, name: str, default: float = 0.0) -> float:
        x = halmap.finite(self._get(key, name))
        return default if x is None else x

    def robot_mode(self) -> str:
        """The Driver Station state the robot program was last given."""
        ds = self._state.get(("DriverStation", ""), {})
        return halmap.mode_name(value_of(ds, "enabled") is True,
                                value_of(ds, "autonomous") is True, value_of(ds, "test") is True)

    def poll(self) -> InputState:
        """The robot program's outputs now (validated), and connection changes since the last
        poll. Motors read 0 and solenoids off while the robot program is disabled."""
        out = InputState()
        with self._lock:
            events, self._events = self._events, []
            out.connected = self._conn is not None
            out.robot_arrived = bool(events) and events[-1]
            out.robot_left = not all(events)
            if not out.connected:
                return out
            mode = self.robot_mode()
            enabled = mode != "disabled"
            values: dict[str, Any] = {}
            for name, m in self.cfg.motors.items():
                if m.hal:
                    duties = [self._duty(a) for a in m.hal]
                    values[topics.motor(name)] = halmap.mean_duty(duties, enabled)
            for name, sol in self.cfg.solenoids.items():
                if sol.hal:
                    forward, *reverse = [self._solenoid_on(a) for a in
                                         (*sol.hal, *sol.reverse_hal)]
                    values[topics.solenoid(name)] = self._valves[name].update(
                        enabled, forward, any(reverse))
            if not self._reported and time.monotonic() - self._connected_at > DUMP_TIME:
                self._report_unwired()
        out.robot_mode = mode
        out.motors, out.solenoids = decode_inputs(values, list(self.cfg.motors),
                                                  list(self.cfg.solenoids), self.validator)
        return out

    def _solenoid_on(self, a: HalAddress) -> bool:
        module = 0 if a.kind == "ctre" else 1
        return self._get(("Solenoid", f"{module},{a.channel}"), "output", False) is True

    def _report_unwired(self) -> None:
        self._reported = True
        wired = {str(a) for m in self.cfg.motors.values() for a in m.controllers}
        lines = [f'PWM {d}: add hal = "pwm:{d}" to a [motors.<name>] table'
                 for d, data in sorted(self._devices("PWM"), key=lambda x: int(x[0])
                                       if x[0].isdigit() else 0)
                 if value_of(data, "init") is True and f"pwm:{d}" not in wired]
        if lines:
            log.warning("the robot program uses devices the config does not wire:\n  %s",
                        "\n  ".join(lines))

    # --- writing sensors and the Driver Station -------------------------------------------

    def _set(self, key: Key, data: dict[str, Any]) -> dict[str, Any]:
        """The part of ``data`` that changed since it was last sent; remembered as sent and as
        our own, for echo filtering."""
        changed = {}
        state = self._state.setdefault(key, {})
        for name, value in data.items():
            if self._sent.get((key, name), _UNSENT) != value:
                changed[name] = value
                self._sent[(key, name)] = value
                self._written.setdefault((key, name), collections.deque(maxlen=8)).append(value)
                state[name] = value
        return changed

    def send(self, values: dict[str, Any]) -> None:
        """Write sensor values and Driver Station commands (topic -> value) as halsim_ws
        messages; only what changed is sent."""
        with self._lock:
            conn = self._conn
            if conn is None:
                return
            messages = self._messages(values)
        for key, data in messages:
            try:
                conn.send(json.dumps({"type": key[0], "device": key[1], "data": data}))
            except Exception as exc:  # a lost connection is handled by the reader thread
                log.debug("send failed: %s", exc)
                return

    def _put(self, key: Key, data: dict[str, Any]) -> None:
        """Queue what changed in ``data`` for the message list being built."""
        changed = self._set(key, data)
        if changed:
            self._out.append((key, changed))

    def _messages(self, values: dict[str, Any]) -> list[tuple[Key, dict[str, Any]]]:
        self._out = out = []
        put = self._put
        cfg = self.cfg
        for name, enc in cfg.encoders.items():
            pos = halmap.finite(values.get(topics.encoder_position(name)))
            if pos is None or not enc.hal:
                continue
            vel = halmap.finite(values.get(topics.encoder_velocity(name))) or 0.0
            self._encoder(enc, pos, vel)
        yaw = halmap.finite(values.get(topics.GYRO_YAW))
        if yaw is not None and cfg.gyro.hal:
            rate = halmap.finite(values.get(topics.GYRO_RATE)) or 0.0
            self._gyro(cfg.gyro.hal[0], yaw, rate)
        volts = halmap.finite(values.get(topics.BATTERY_VOLTAGE))
        if volts is not None and volts >= 0.0:
            put(("RoboRIO", ""), {">vin_voltage": volts})
            for m in cfg.motors.values():
                for a in m.hal:
                    if a.kind == "talonfx":
                        put(ws_device(halmap.talonfx_motor(a.channel or 0)),
                            {">supplyVoltage": volts})
        for name, sw in cfg.switches.items():
            pressed = values.get(topics.switch(name))
            if sw.hal and isinstance(pressed, bool):
                a = sw.hal[0]
                put(("DIO", str(a.channel)), {"<>value": pressed != a.inverted})
        for i in range(topics.JOYSTICKS):
            data: dict[str, Any] = {}
            axes = values.get(topics.joystick_axes(i))
            if isinstance(axes, (list, tuple)):
                data[">axes"] = halmap.clean_axes(axes)
            buttons = values.get(topics.joystick_buttons(i))
            if isinstance(buttons, (list, tuple)):
                data[">buttons"] = halmap.clean_buttons(buttons)
            if data:
                put(("Joystick", str(i)), data)
        mode = values.get(topics.DS_MODE)
        if isinstance(mode, str) and mode in topics.MODES:
            # Like a Driver Station's control packets: every tick, so nothing depends on one
            # message. Not recorded as our own: the server's echo is how the robot program's
            # Driver Station state (robot_mode) is known.
            enabled, autonomous, test = halmap.mode_flags(mode)
            out.append((("DriverStation", ""), {">enabled": enabled, ">autonomous": autonomous,
                                                ">test": test, ">ds": True, ">new_data": True}))
        return out

    def _encoder(self, enc: EncoderConfig, pos: float, vel: float) -> None:
        put = self._put
        a, unit, tpr = enc.hal[0], enc.unit, enc.ticks_per_revolution
        ch = a.channel or 0
        if a.kind == "encoder":
            for device, data in self._devices("Encoder"):
                if value_of(data, "init") is True and ch in (value_of(data, "channel_a"),
                                                             value_of(data, "channel_b")):
                    sign = -1.0 if value_of(data, "reverse_direction") is True else 1.0
                    period = 1.0 / vel if vel else STOPPED_PERIOD
                    put(("Encoder", device), {">count": round(sign * pos),
                                              ">period": sign * period})
                    return
            return
        if a.kind == "analog":
            put(("AI", str(ch)), {">voltage": halmap.analog_voltage(pos, unit, tpr,
                                                                    enc.full_range)})
            return
        per_unit = halmap.rotations_per_unit(unit, tpr)
        if a.kind in ("talonfx", "cancoder"):
            name = halmap.talonfx_rotor(ch) if a.kind == "talonfx" else halmap.cancoder(ch)
            turns = self._turns.setdefault(str(a), halmap.TurnCounter(enc.wrap / math.tau))
            put(ws_device(name), {">rawPositionInput": turns(pos * per_unit),
                                  ">velocity": vel * per_unit})
        elif a.kind in ("sparkmax", "sparkflex"):
            key = ws_device(halmap.spark_encoder(a.kind, ch, a.port))
            # a port's own inversion; the relative encoder's is the motor's, which the
            # SimDevice does not show (not applied: say so in docs)
            inverted = bool(a.port) and self._get(key, "Is Inverted") is True
            zero = self._num(key, "Zero Offset") if a.port == "absolute" else None
            position, velocity = halmap.spark_reading(
                pos * per_unit, vel * per_unit, self._num(key, "Position Conversion Factor", 1.0),
                self._num(key, "Velocity Conversion Factor", 1.0), inverted, zero)
            put(key, {">Position": position, ">Velocity": velocity})
        else:
            key = ws_device(a.device)
            self._rezeroed(f"enc:{a}", key, a.value, pos)

    def _gyro(self, a: HalAddress, yaw: float, rate: float) -> None:
        put = self._put
        angle, angle_rate = halmap.gyro_reading(a.kind, yaw, rate)
        if a.kind == "pigeon2":
            put(ws_device(halmap.pigeon2(a.channel or 0)), {">rawYawInput": angle,
                                                            ">angularVelZ": angle_rate})
        elif a.kind == "navx":
            device = next((d for d, _ in self._devices("SimDevice")
                           if d.startswith(halmap.NAVX_PREFIX)), None)
            if device is not None:  # the navX library keeps its own zero
                put(("SimDevice", device), {">Yaw": angle, ">Rate": angle_rate})
        elif a.kind == "adxrs450":
            key = ws_device(halmap.ADXRS450_DEVICE)
            self._rezeroed("gyro", key, "angle_x", angle)
            put(key, {">rate_x": angle_rate})
        elif a.kind in halmap.ADIS_PREFIXES:  # yaw on z: the default axis
            kind, prefix = ws_device(halmap.ADIS_PREFIXES[a.kind])
            device = next((d for d, _ in self._devices(kind) if d.startswith(prefix)), None)
            if device is not None:
                angle_value, rate_value = halmap.adis_values("z")
                self._rezeroed("gyro", (kind, device), angle_value, angle)
                put((kind, device), {f">{rate_value}": angle_rate})
        elif a.kind == "simdevice":
            self._rezeroed("gyro", ws_device(a.device), a.value, angle)

    def _rezeroed(self, slot: str, key: Key, name: str, value: float) -> None:
        """Write ``value`` through a Rezero: a change the robot program made (a reset) is kept
        as an offset."""
        if key not in self._state:
            return
        rezero = self._rezero.get(slot)
        if rezero is None:
            def read() -> float:
                x = halmap.finite(self._get(key, name))
                return 0.0 if x is None else x

            rezero = halmap.Rezero(read, lambda x: self._put(key, {f">{name}": x}))
            self._rezero[slot] = rezero
        rezero(value)


_UNSENT = object()
