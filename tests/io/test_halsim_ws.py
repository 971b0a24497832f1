"""The halsim_ws client (`simserver.io.halsim_ws`) against a real WebSocket server in-process.

`FakeRobot` plays a robot program's halsim_ws server as measured against WPILib's: on connect
it sends a dump of every device, then deltas; it echoes every value a client sets (one message
per value, only when the value changed); it accepts one client at a time. The tests drive it
from the robot side (``push``, ``restart``) and read what the client sent (``received``).

Two barriers keep the tests free of sleeps:
- client -> robot: every ``HalsimWsLink.send`` with a Driver Station mode ends with one
  DriverStation message, so once the robot has received it, it has the whole batch;
- robot -> client: the robot sets PWM 9 (the config's ``probe`` motor) to a fresh speed and the
  test polls until the client reads it; the connection is ordered, so everything the robot
  sent before has been processed.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Request, Response, ServerConnection, serve

from simserver.config.loader import loads
from simserver.contract import topics
from simserver.io.halsim_ws import PATH, HalsimWsLink, check_config, value_of, ws_device
from simserver.io.nt import InputState
from tests.ntutil import free_port, wait_for
from tests.worlds import ARM, LIFT, SHOULDER_NEO, WIRED_SOLENOIDS_SWITCHES

pytestmark = pytest.mark.network

WAIT = 5.0  # s: the longest any single expected event may take

Msg = dict[str, Any]


def msg(kind: str, device: str, data: dict[str, Any]) -> Msg:
    return {"type": kind, "device": device, "data": data}


DS_DISABLED = msg("DriverStation", "", {">enabled": False, ">autonomous": False, ">test": False})
PWM_INIT = [msg("PWM", str(ch), {"<init": True}) for ch in (0, 1, 2, 9)]


def encoder(device: str, a: int, b: int, **extra: Any) -> Msg:
    return msg("Encoder", device, {"<init": True, "<channel_a": a, "<channel_b": b, **extra})


# --- the emulated robot program -------------------------------------------------------------

class FakeRobot:
    """A halsim_ws server on 127.0.0.1 at a free port, path /wpilibws, one client at a time."""

    def __init__(self, dump: list[Msg], handshake_delay: float = 0.0):
        self.port = free_port()
        self.handshake_delay = handshake_delay
        self.handshake_started = threading.Event()
        self.hold: set[str] = set()  # message types whose echoes are queued, not sent
        self.held: list[Msg] = []
        self.received: list[tuple[int, Msg]] = []  # (connection number, message)
        self.connections = 0  # connections opened so far
        self.refused = 0  # handshakes answered 409: a client was already connected
        self.dumped = 0  # connections whose initial dump has been sent
        self._lock = threading.Lock()
        self._dump = dump
        self._conn: ServerConnection | None = None
        self._state: dict[tuple[str, str], dict[str, Any]] = {}
        self._probe = 0
        self.server = serve(self._handle, "127.0.0.1", self.port, compression=None,
                            process_request=self._check, ping_interval=None)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _check(self, connection: ServerConnection, request: Request) -> Response | None:
        self.handshake_started.set()
        if self.handshake_delay:
            time.sleep(self.handshake_delay)
        if request.path != PATH:
            return connection.respond(404, "no such path\n")
        with self._lock:
            if self._conn is not None:
                self.refused += 1
                return connection.respond(409, "one client at a time\n")
        return None

    def _merge(self, m: Msg) -> dict[str, Any]:
        """Apply ``m`` to the robot's state; the part that changed."""
        state = self._state.setdefault((m["type"], m["device"]), {})
        changed = {k: v for k, v in m["data"].items() if k not in state or state[k] != v}
        state.update(changed)
        return changed

    def _handle(self, conn: ServerConnection) -> None:
        with self._lock:
            self._conn = conn
            self.connections += 1
            number = self.connections
            self._state = {}
            dump = list(self._dump)
            for m in dump:
                self._merge(m)
            for m in dump:
                conn.send(json.dumps(m))
            self.dumped += 1
        try:
            for raw in conn:
                m = json.loads(raw)
                with self._lock:
                    self.received.append((number, m))
                    for name, value in self._merge(m).items():
                        echo = msg(m["type"], m["device"], {name: value})
                        if m["type"] in self.hold:
                            self.held.append(echo)
                        else:
                            conn.send(json.dumps(echo))
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if self._conn is conn:
                    self._conn = None

    # the robot program's side

    def push(self, kind: str, device: str, data: dict[str, Any]) -> None:
        """The robot program changes a device: a delta to the client."""
        self.send_raw(json.dumps(msg(kind, device, data)), msg(kind, device, data))

    def send_raw(self, raw: str | bytes, m: Msg | None = None) -> None:
        with self._lock:
            assert self._conn is not None, "no client connected"
            if m is not None:
                self._merge(m)
            self._conn.send(raw)

    def release_echoes(self, n: int) -> None:
        """Send the first ``n`` held echoes."""
        with self._lock:
            assert self._conn is not None
            for m in self.held[:n]:
                self._conn.send(json.dumps(m))
            del self.held[:n]

    def restart(self, dump: list[Msg]) -> None:
        """The robot program restarts: the connection closes, the next one gets ``dump``."""
        with self._lock:
            self._dump = dump
            conn, self._conn = self._conn, None
        assert conn is not None
        conn.close()

    def client_connected(self) -> bool:
        with self._lock:
            return self._conn is not None

    def wait_dumped(self, n: int = 1) -> None:
        wait_for(lambda: self.dumped >= n, WAIT, f"connection {n} and its dump")

    def ds_count(self) -> int:
        with self._lock:
            return sum(m["type"] == "DriverStation" for _, m in self.received)

    def since(self, mark: int) -> list[Msg]:
        with self._lock:
            return [m for _, m in self.received[mark:]]

    def barrier(self, polls: Polls) -> None:
        """Wait until the client has processed everything this robot sent so far (needs the
        robot enabled and a ``probe`` motor on PWM 9)."""
        self._probe += 1
        speed = self._probe / 64.0
        self.push("PWM", "9", {"<speed": speed})
        polls.until(lambda s: s.motors.get("probe") == speed, "the client to read the probe")

    def stop(self) -> None:
        self.server.shutdown()
        self._thread.join(WAIT)


class Polls:
    """``link.poll()`` with the connection events of every poll kept."""

    def __init__(self, link: HalsimWsLink):
        self.link = link
        self.history: list[InputState] = []

    def poll(self) -> InputState:
        s = self.link.poll()
        self.history.append(s)
        return s

    def until(self, pred: Callable[[InputState], bool], what: str,
              timeout: float = WAIT) -> InputState:
        return wait_for(lambda: (s := self.poll()).connected and pred(s) and s, timeout, what)

    @property
    def arrived(self) -> int:
        return sum(s.robot_arrived for s in self.history)

    @property
    def left(self) -> int:
        return sum(s.robot_left for s in self.history)


@pytest.fixture
def robots() -> Iterator[Callable[..., FakeRobot]]:
    made: list[FakeRobot] = []

    def make(dump: list[Msg], **kw: Any) -> FakeRobot:
        made.append(FakeRobot(dump, **kw))
        return made[-1]

    yield make
    for r in made:
        r.stop()


@pytest.fixture
def links() -> Iterator[Callable[[str, int], HalsimWsLink]]:
    made: list[HalsimWsLink] = []

    def make(config: str, port: int) -> HalsimWsLink:
        made.append(HalsimWsLink(loads(config), "127.0.0.1", port))
        return made[-1]

    yield make
    for link in made:
        link.close()


def connect(robots: Callable[..., FakeRobot], links: Callable[[str, int], HalsimWsLink],
            config: str, dump: list[Msg], mode: str | None = "teleop"
            ) -> tuple[FakeRobot, HalsimWsLink, Polls]:
    """A robot with ``dump`` and a client of it, connected. With ``mode``, the client has put
    the robot in ``mode`` and (the connection being ordered) processed the whole dump."""
    robot = robots(dump)
    link = links(config, robot.port)
    polls = Polls(link)
    polls.until(lambda s: True, "the client to connect")
    robot.wait_dumped()
    if mode is not None:
        link.send({topics.DS_MODE: mode})
        polls.until(lambda s: s.robot_mode == mode, f"the robot program to be in {mode}")
    return robot, link, polls


def sync_send(robot: FakeRobot, link: HalsimWsLink, values: dict[str, Any],
              mode: str = "teleop") -> list[Msg]:
    """``link.send(values)`` with a Driver Station mode; the messages the robot received."""
    mark, ds = len(robot.received), robot.ds_count()
    link.send({**values, topics.DS_MODE: mode})
    wait_for(lambda: robot.ds_count() > ds, WAIT, "the robot to receive the batch")
    return robot.since(mark)


def data_of(messages: list[Msg], kind: str, device: str) -> dict[str, Any]:
    """The data of every message to (kind, device), merged."""
    out: dict[str, Any] = {}
    for m in messages:
        if (m["type"], m["device"]) == (kind, device):
            out.update(m["data"])
    return out


# --- configs --------------------------------------------------------------------------------

PROBE = '\n[motors.probe]\ntype = "CIM"\nhal = "pwm:9"\n'

DRIVE = """
[drivetrain]

[motors.left]
type = "CIM"
hal = ["pwm:0", "pwm:1"]

[motors.right]
type = "CIM"
hal = "talonfx:1"

[motors.lift]
type = "Kraken X60"
hal = "pwm:2"

[gyro]
hal = "adxrs450"
""" + LIFT + PROBE

ENCODERS = DRIVE + """
[encoders.left]
motor = "left"
unit = "ticks"
ticks_per_revolution = 360
hal = "encoder:0"

[encoders.right]
motor = "right"
unit = "ticks"
ticks_per_revolution = 360
hal = "encoder:3"
"""

PNEUMATIC = DRIVE + WIRED_SOLENOIDS_SWITCHES


def with_gyro(hal: str) -> str:
    return DRIVE.replace('hal = "adxrs450"', f'hal = "{hal}"')


TALON = msg("CANMotor", "Talon FX (v6)[1]", {"<dutyCycle": -0.4, ">supplyVoltage": 12.0})
ADXRS450 = msg("Gyro", "ADXRS450[0]", {">connected": True, ">angle_x": 0.0, ">rate_x": 0.0})


# --- connecting, the initial dump, outputs ---------------------------------------------------

def test_ws_device_and_value_of():
    assert ws_device("CANMotor:Talon FX (v6)[1]") == ("CANMotor", "Talon FX (v6)[1]")
    assert ws_device("Gyro:ADXRS450[0]") == ("Gyro", "ADXRS450[0]")
    assert ws_device("CANGyro:Pigeon 2 (v6)[3]") == ("CANGyro", "Pigeon 2 (v6)[3]")
    assert ws_device("navX-Sensor[4]") == ("SimDevice", "navX-Sensor[4]")
    assert ws_device("MyThing:sub[1]") == ("SimDevice", "MyThing:sub[1]")
    assert value_of({"<speed": 0.5}, "speed") == 0.5
    assert value_of({">count": 3}, "count") == 3
    assert value_of({"<>value": True}, "value") is True
    assert value_of({}, "value", "none") == "none"


def test_dump_then_motors_follow_the_ds_state_the_server_echoes(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, TALON,
            msg("PWM", "0", {"<speed": 0.5}), msg("PWM", "1", {"<speed": -0.1}),
            msg("PWM", "2", {"<speed": 0.3}), msg("PWM", "5", {"<init": True, "<speed": 1.0})]
    robot, link, polls = connect(robots, links, DRIVE, dump, mode=None)
    first = polls.history[-1]
    assert first.connected and first.robot_arrived and not first.robot_left
    assert first.robot_mode == "disabled"
    assert all(v == 0.0 for v in first.motors.values())

    link.send({topics.DS_MODE: "teleop"})  # the server's echo is the robot program's new state
    s = polls.until(lambda s: s.robot_mode == "teleop", "the echo of the enabled DS")
    assert s.motors["left"] == pytest.approx(0.2)  # mean of its two PWMs
    assert s.motors["lift"] == pytest.approx(0.3)
    assert s.motors["right"] == pytest.approx(-0.4)  # Talon FX <dutyCycle

    link.send({topics.DS_MODE: "disabled"})
    s = polls.until(lambda s: s.robot_mode == "disabled", "the echo of the disabled DS")
    assert s.motors == {"left": 0.0, "right": 0.0, "lift": 0.0, "probe": 0.0}
    assert polls.arrived == 1 and polls.left == 0
    assert robot.connections == 1


def test_ds_state_set_by_the_robot_side_is_read_from_dump_and_deltas(robots, links):
    dump = [msg("DriverStation", "", {">enabled": True, ">autonomous": True}), *PWM_INIT,
            msg("PWM", "2", {"<speed": -0.7})]
    robot, _link, polls = connect(robots, links, DRIVE, dump, mode=None)
    s = polls.until(lambda s: s.motors.get("lift") == -0.7, "the dumped PWM speed")
    assert s.robot_mode == "autonomous"
    robot.push("DriverStation", "", {">autonomous": False, ">test": True})
    polls.until(lambda s: s.robot_mode == "test", "the robot-side DS change")
    robot.push("DriverStation", "", {">enabled": False})
    s = polls.until(lambda s: s.robot_mode == "disabled", "the robot-side disable")
    assert s.motors["lift"] == 0.0


def test_nan_string_and_out_of_range_speeds_are_validated(robots, links):
    robot, _link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    robot.push("PWM", "0", {"<speed": float("nan")})  # json: NaN
    robot.push("PWM", "1", {"<speed": 0.5})
    polls.until(lambda s: s.motors.get("left") == pytest.approx(0.25), "NaN read as 0")
    robot.push("PWM", "0", {"<speed": "fast"})
    robot.push("PWM", "2", {"<speed": 7.0})
    s = polls.until(lambda s: s.motors.get("lift") == 1.0, "an out-of-range speed clamped")
    assert math.isfinite(s.motors["left"]) and -1.0 <= s.motors["left"] <= 1.0
    robot.push("PWM", "0", {"<speed": 0.1})
    polls.until(lambda s: s.motors.get("left") == pytest.approx(0.3), "a valid speed after")
    assert polls.left == 0 and robot.connections == 1


def test_solenoids_by_module_and_channel(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, msg("Solenoid", "0,1", {"<output": True}),
            msg("Solenoid", "1,15", {"<output": False}), msg("Solenoid", "1,1", {"<output": True})]
    robot, link, polls = connect(robots, links, PNEUMATIC, dump, mode=None)
    s = polls.poll()
    assert s.solenoids == {"claw": False, "shift": False}  # disabled: all off
    link.send({topics.DS_MODE: "teleop"})
    s = polls.until(lambda s: s.solenoids.get("claw") is True, "the CTRE solenoid 1 on")
    assert s.solenoids["shift"] is False  # REV 1 is on, REV 15 is not
    robot.push("Solenoid", "1,15", {"<output": True})
    robot.push("Solenoid", "0,1", {"<output": False})
    s = polls.until(lambda s: s.solenoids == {"claw": False, "shift": True}, "the deltas")


def test_double_solenoid_holds_its_state_while_both_channels_are_off(robots, links):
    config = DRIVE + '[solenoids.claw]\nhal = "ctre:4"\nreverse_hal = "ctre:5"\n'
    dump = [DS_DISABLED, *PWM_INIT, msg("Solenoid", "0,4", {"<output": False}),
            msg("Solenoid", "0,5", {"<output": False})]
    robot, link, polls = connect(robots, links, config, dump, mode=None)
    assert polls.poll().solenoids == {"claw": False}
    link.send({topics.DS_MODE: "teleop"})
    robot.push("Solenoid", "0,4", {"<output": True})  # kForward
    polls.until(lambda s: s.solenoids == {"claw": True}, "forward")
    robot.push("Solenoid", "0,4", {"<output": False})  # kOff: the valve holds
    robot.push("Solenoid", "1,0", {"<output": True})  # anything else, to see a later poll
    time.sleep(0.2)
    assert polls.poll().solenoids == {"claw": True}
    robot.push("Solenoid", "0,5", {"<output": True})  # kReverse
    polls.until(lambda s: s.solenoids == {"claw": False}, "reverse")


# --- writing sensors ------------------------------------------------------------------------

def test_encoder_counts_and_periods_by_channel_as_deltas(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, encoder("0", 0, 1),
            encoder("1", 2, 3, **{"<reverse_direction": True}), encoder("2", 4, 5)]
    robot, link, _polls = connect(robots, links, ENCODERS, dump)
    left, right = "left", "right"
    values = {topics.encoder_position(left): 100.4, topics.encoder_velocity(left): 50.0,
              topics.encoder_position(right): 20.6, topics.encoder_velocity(right): -4.0}
    got = sync_send(robot, link, values)
    assert data_of(got, "Encoder", "0") == {">count": 100, ">period": pytest.approx(0.02)}
    # encoder:3 is channel B of device 1, which the robot program reversed: both negated
    assert data_of(got, "Encoder", "1") == {">count": -21, ">period": pytest.approx(0.25)}
    assert data_of(got, "Encoder", "2") == {}
    assert isinstance(data_of(got, "Encoder", "0")[">count"], int)

    got = sync_send(robot, link, values)  # nothing changed: no encoder messages
    assert [m for m in got if m["type"] == "Encoder"] == []

    values[topics.encoder_velocity(left)] = 0.0
    values[topics.encoder_position(left)] = 100.2  # still 100 ticks
    values[topics.encoder_velocity(right)] = 8.0
    got = sync_send(robot, link, values)
    assert data_of(got, "Encoder", "0") == {">period": 1e9}  # stopped
    assert data_of(got, "Encoder", "1") == {">period": pytest.approx(-0.125)}

    values[topics.encoder_velocity(left)] = -8.0
    values[topics.encoder_position(left)] = -3.7
    got = sync_send(robot, link, values)
    assert data_of(got, "Encoder", "0") == {">count": -4, ">period": pytest.approx(-0.125)}


def test_cancoder_absolute_reading_is_written_as_turns_it_counts(robots, links):
    config = DRIVE + ('[encoders.azimuth]\nmotor = "lift"\nunit = "deg"\nabsolute = true\n'
                      'hal = "cancoder:9"\n')
    cancoder = msg("CANEncoder", "CANcoder (v6)[9]", {">rawPositionInput": 0.0,
                                                      ">velocity": 0.0})
    robot, link, _polls = connect(robots, links, config, [DS_DISABLED, *PWM_INIT, cancoder])
    written = []
    for reading in (350.0, 10.0, 20.0, 355.0):
        got = sync_send(robot, link, {topics.encoder_position("azimuth"): reading,
                                      topics.encoder_velocity("azimuth"): 0.0})
        written.append(data_of(got, "CANEncoder", "CANcoder (v6)[9]")[">rawPositionInput"])
    assert written == pytest.approx([350 / 360, 370 / 360, 380 / 360, 355 / 360])


def test_analog_potentiometer_gets_five_volts_over_one_turn(robots, links):
    config = DRIVE + ARM + SHOULDER_NEO + """
[encoders.pot]
motor = "shoulder"
unit = "deg"
absolute = true
hal = "analog:2"
"""
    robot, link, _polls = connect(robots, links, config, [DS_DISABLED, *PWM_INIT])
    got = sync_send(robot, link, {topics.encoder_position("pot"): 90.0})
    assert data_of(got, "AI", "2") == {">voltage": pytest.approx(1.25)}
    got = sync_send(robot, link, {topics.encoder_position("pot"): 450.0})  # a turn on: same
    assert data_of(got, "AI", "2") == {}


def test_analog_potentiometer_spans_five_volts_over_its_full_range(robots, links):
    config = DRIVE + ARM + SHOULDER_NEO + """
[encoders.pot]
motor = "shoulder"
unit = "deg"
absolute = true
full_range = "10 rotations"
hal = "analog:3"
"""
    robot, link, _polls = connect(robots, links, config, [DS_DISABLED, *PWM_INIT])
    got = sync_send(robot, link, {topics.encoder_position("pot"): 900.0})
    assert data_of(got, "AI", "3") == {">voltage": pytest.approx(1.25)}


def test_battery_voltage_talonfx_supply_and_dio_switches(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, TALON, msg("DIO", "3", {"<init": True, "<>value": True}),
            msg("DIO", "4", {"<init": True, "<>value": True})]
    robot, link, _polls = connect(robots, links, PNEUMATIC, dump)
    values = {topics.BATTERY_VOLTAGE: 12.3, topics.switch("bottom"): True,
              topics.switch("top"): True}
    got = sync_send(robot, link, values)
    assert data_of(got, "RoboRIO", "") == {">vin_voltage": 12.3}
    assert data_of(got, "CANMotor", "Talon FX (v6)[1]") == {">supplyVoltage": 12.3}
    assert data_of(got, "DIO", "3") == {"<>value": False}  # !dio: pressed reads low
    assert data_of(got, "DIO", "4") == {"<>value": True}

    values.update({topics.switch("bottom"): False, topics.switch("top"): False})
    got = sync_send(robot, link, values)
    assert data_of(got, "RoboRIO", "") == {}  # unchanged: not sent again
    assert data_of(got, "CANMotor", "Talon FX (v6)[1]") == {}
    assert data_of(got, "DIO", "3") == {"<>value": True}
    assert data_of(got, "DIO", "4") == {"<>value": False}

    values[topics.BATTERY_VOLTAGE] = 11.0
    got = sync_send(robot, link, values)
    assert data_of(got, "RoboRIO", "") == {">vin_voltage": 11.0}
    assert data_of(got, "CANMotor", "Talon FX (v6)[1]") == {">supplyVoltage": 11.0}


def test_joysticks_then_driver_station_new_data(robots, links):
    robot, link, _polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    values = {topics.joystick_axes(0): [0.5, 2.0, -3.0, float("nan"), "x"],
              topics.joystick_buttons(0): [True, False, 1, True],
              topics.joystick_axes(2): [0.25]}
    got = sync_send(robot, link, values, "autonomous")
    kinds = [(m["type"], m["device"]) for m in got]
    assert kinds == [("Joystick", "0"), ("Joystick", "2"), ("DriverStation", "")]
    assert got[0]["data"] == {">axes": [0.5, 1.0, -1.0, 0.0, 0.0],
                              ">buttons": [True, False, False, True]}
    assert got[1]["data"] == {">axes": [0.25]}
    ds = got[2]["data"]
    assert ds[">new_data"] is True
    assert (ds[">enabled"], ds[">autonomous"], ds[">test"]) == (True, True, False)

    got = sync_send(robot, link, values, "autonomous")  # same axes: only the DS packet
    assert [m["type"] for m in got] == ["DriverStation"]


@pytest.mark.parametrize(("mode", "flags"), [
    ("disabled", (False, False, False)), ("autonomous", (True, True, False)),
    ("teleop", (True, False, False)), ("test", (True, False, True))])
def test_ds_flags_of_each_mode_are_sent_every_call(robots, links, mode, flags):
    robot, link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    for _ in range(2):
        got = sync_send(robot, link, {}, mode)
        ds = data_of(got, "DriverStation", "")
        assert (ds[">enabled"], ds[">autonomous"], ds[">test"]) == flags
        assert ds[">new_data"] is True
    polls.until(lambda s: s.robot_mode == mode, f"the robot program in {mode}")
    mark = len(robot.received)
    link.send({topics.DS_MODE: "dancing"})  # not a mode: nothing sent
    sync_send(robot, link, {}, mode)
    assert [m["type"] for m in robot.since(mark)] == ["DriverStation"]


# --- gyros ----------------------------------------------------------------------------------

def test_adxrs450_angle_is_clockwise(robots, links):
    robot, link, _polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT, ADXRS450])
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "Gyro", "ADXRS450[0]") == {">angle_x": -30.0, ">rate_x": -12.0}


def test_adxrs450_own_echoes_are_not_robot_changes(robots, links):
    robot, link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT, ADXRS450])
    robot.hold = {"Gyro"}  # the echoes of the two writes arrive after both
    sync_send(robot, link, {topics.GYRO_YAW: 30.0})
    got = sync_send(robot, link, {topics.GYRO_YAW: 40.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x") == -40.0
    robot.release_echoes(1)  # the echo of -30 arrives after -40 was written
    robot.barrier(polls)
    got = sync_send(robot, link, {topics.GYRO_YAW: 50.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x") == -50.0


def test_adxrs450_reset_in_robot_code_makes_later_writes_relative(robots, links):
    robot, link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT, ADXRS450])
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0})
    assert data_of(got, "Gyro", "ADXRS450[0]")[">angle_x"] == -30.0
    robot.barrier(polls)  # the echo of -30 is in
    robot.push("Gyro", "ADXRS450[0]", {">angle_x": 0.0})  # gyro.reset() in robot code
    robot.barrier(polls)
    got = sync_send(robot, link, {topics.GYRO_YAW: 45.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x") == pytest.approx(-15.0)
    got = sync_send(robot, link, {topics.GYRO_YAW: 50.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x") == pytest.approx(-20.0)


def test_adxrs450_of_a_restarted_program_does_not_inherit_the_old_offset(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, ADXRS450]
    robot, link, polls = connect(robots, links, DRIVE, dump)
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0})
    assert data_of(got, "Gyro", "ADXRS450[0]")[">angle_x"] == -30.0
    robot.restart(dump)
    robot.wait_dumped(2)
    polls.until(lambda s: polls.arrived == 2, "the restarted program")
    link.send({topics.DS_MODE: "teleop"})
    polls.until(lambda s: s.robot_mode == "teleop", "the new program's dump and DS echo")
    # the session resets the world on robot_arrived: yaw 0, and the new gyro reads 0 too
    got = sync_send(robot, link, {topics.GYRO_YAW: 0.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x", 0.0) == 0.0
    got = sync_send(robot, link, {topics.GYRO_YAW: 10.0})
    assert data_of(got, "Gyro", "ADXRS450[0]").get(">angle_x") == -10.0


def test_pigeon2_yaw_is_counter_clockwise(robots, links):
    pigeon = msg("CANGyro", "Pigeon 2 (v6)[7]", {">rawYawInput": 0.0, ">angularVelZ": 0.0})
    robot, link, _polls = connect(robots, links, with_gyro("pigeon2:7"),
                                  [DS_DISABLED, *PWM_INIT, pigeon])
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "CANGyro", "Pigeon 2 (v6)[7]") == {">rawYawInput": 30.0,
                                                          ">angularVelZ": 12.0}
    got = sync_send(robot, link, {topics.GYRO_YAW: 40.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "CANGyro", "Pigeon 2 (v6)[7]") == {">rawYawInput": 40.0}


def test_adis16470_yaw_is_counter_clockwise_on_its_z_axis(robots, links):
    adis = msg("Gyro", "ADIS16470[0]", {">connected": True, ">gyro_angle_z": 0.0,
                                         ">gyro_rate_z": 0.0, ">gyro_angle_x": 0.0})
    robot, link, _polls = connect(robots, links, with_gyro("adis16470"),
                                  [DS_DISABLED, *PWM_INIT, adis])
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "Gyro", "ADIS16470[0]") == {">gyro_angle_z": 30.0,
                                                    ">gyro_rate_z": 12.0}


def test_navx_yaw_is_clockwise_on_the_device_it_finds(robots, links):
    navx = msg("SimDevice", "navX-Sensor[4]", {">Yaw": 0.0, ">Rate": 0.0, ">Connected": True})
    other = msg("SimDevice", "Other[4]", {">Yaw": 0.0})
    robot, link, _polls = connect(robots, links, with_gyro("navx"),
                                  [DS_DISABLED, *PWM_INIT, other, navx])
    got = sync_send(robot, link, {topics.GYRO_YAW: 30.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "SimDevice", "navX-Sensor[4]") == {">Yaw": -30.0, ">Rate": -12.0}
    assert data_of(got, "SimDevice", "Other[4]") == {}
    got = sync_send(robot, link, {topics.GYRO_YAW: 40.0, topics.GYRO_RATE: 12.0})
    assert data_of(got, "SimDevice", "navX-Sensor[4]") == {">Yaw": -40.0}


# --- devices after connect, restarts, bad input ---------------------------------------------

def test_devices_created_after_connect_are_picked_up(robots, links):
    robot, link, polls = connect(robots, links, ENCODERS,
                                 [DS_DISABLED, msg("PWM", "9", {"<init": True})])
    values = {topics.encoder_position("left"): 12.0, topics.encoder_velocity("left"): 2.0}
    got = sync_send(robot, link, values)
    assert [m for m in got if m["type"] == "Encoder"] == []  # no such encoder yet
    robot.push("Encoder", "0", {"<init": True, "<channel_a": 0, "<channel_b": 1})
    robot.push("PWM", "0", {"<init": True, "<speed": 0.4})
    polls.until(lambda s: s.motors.get("left") == pytest.approx(0.2), "the late PWM")
    got = sync_send(robot, link, values)
    assert data_of(got, "Encoder", "0") == {">count": 12, ">period": 0.5}


def test_robot_program_restart_reconnects_and_drops_old_state(robots, links):
    dump = [DS_DISABLED, *PWM_INIT, encoder("0", 0, 1), msg("PWM", "0", {"<speed": 0.5}),
            msg("PWM", "1", {"<speed": 0.5})]
    robot, link, polls = connect(robots, links, ENCODERS, dump)
    assert polls.poll().motors["left"] == 0.5
    values = {topics.encoder_position("left"): 100.0, topics.encoder_velocity("left"): 0.0}
    assert data_of(sync_send(robot, link, values), "Encoder", "0") == {">count": 100,
                                                                       ">period": 1e9}
    mark = len(robot.received)

    robot.restart([DS_DISABLED, *PWM_INIT, encoder("0", 0, 1)])
    robot.wait_dumped(2)
    wait_for(lambda: (polls.poll(), polls.left and polls.arrived == 2)[1], WAIT,
             "robot_left, then robot_arrived")
    left_at = next(i for i, s in enumerate(polls.history) if s.robot_left)
    assert polls.history[left_at].robot_arrived or any(
        s.robot_arrived for s in polls.history[left_at + 1:])
    # the new program starts disabled (its dump) and its PWMs have no speed yet
    assert polls.poll().robot_mode == "disabled"
    link.send({topics.DS_MODE: "teleop"})
    s = polls.until(lambda s: s.robot_mode == "teleop", "the new program enabled")
    assert s.motors["left"] == 0.0
    # deltas start over: the unchanged encoder values are sent to the new program
    got = sync_send(robot, link, values)
    assert data_of(got, "Encoder", "0") == {">count": 100, ">period": 1e9}
    assert {n for n, _ in robot.received[mark:]} == {2}
    assert robot.connections == 2 and polls.left == 1 and polls.arrived == 2


@pytest.mark.parametrize("raw", [
    "not json", b"\x00\xff binary", "[1, 2]", '"text"', "null", "3",
    '{"type": "PWM", "device": "0"}',
    '{"device": "0", "data": {"<speed": 1.0}}',
    '{"type": 5, "device": "0", "data": {"<speed": 1.0}}',
    '{"type": ["PWM"], "device": "0", "data": {"<speed": 1.0}}',
    '{"type": "PWM", "device": {"0": 0}, "data": {"<speed": 1.0}}',
    '{"type": "PWM", "device": 0, "data": {"<speed": 1.0}}',
    '{"type": "PWM", "device": "0", "data": [1.0]}',
    '{"type": "PWM", "device": "0", "data": {"<speed": [1.0]}}',
    '{"type": "PWM", "device": "0", "data": {"<speed": {"x": 1}}}',
])
def test_malformed_messages_are_ignored_and_the_reader_lives_on(robots, links, raw):
    robot, _link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    robot.send_raw(raw)
    robot.push("PWM", "1", {"<speed": 0.2})
    s = polls.until(lambda s: s.motors.get("left") == pytest.approx(0.1),
                    "a valid message after the malformed one")
    assert s.connected and polls.left == 0 and robot.connections == 1


# --- check_config and close -----------------------------------------------------------------

def test_check_config_names_the_keys_halsim_ws_cannot_carry():
    bad = ENCODERS.replace('unit = "ticks"\nticks_per_revolution = 360\nhal = "encoder:0"',
                           'unit = "m"\nhal = "encoder:0"')
    bad = bad.replace('hal = "adxrs450"', 'hal = "analoggyro:0"')
    problems = check_config(loads(bad))
    assert len(problems) == 2
    assert problems[0].startswith("encoders.left.unit")
    assert problems[1].startswith("gyro.hal")
    assert check_config(loads(ENCODERS)) == []
    assert check_config(loads(with_gyro("pigeon2:1"))) == []
    assert check_config(loads(with_gyro("navx"))) == []


def closes_promptly(link: HalsimWsLink) -> None:
    t0 = time.monotonic()
    link.close()
    assert time.monotonic() - t0 < 3.0
    assert not link._thread.is_alive()  # the reader thread
    assert not link.poll().connected


def test_close_when_connected(robots, links):
    robot, link, _polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    closes_promptly(link)
    wait_for(lambda: not robot.client_connected(), WAIT, "the server to see the client leave")
    link.send({topics.DS_MODE: "teleop"})  # after close: a no-op, no error


def test_close_when_no_server_ever_existed(links):
    link = links(DRIVE, free_port())
    time.sleep(0.05)  # into the retry loop
    assert not link.poll().connected
    closes_promptly(link)


def test_second_client_is_refused_and_closes_promptly(robots, links):
    robot, _link, polls = connect(robots, links, DRIVE, [DS_DISABLED, *PWM_INIT])
    other = links(DRIVE, robot.port)
    wait_for(lambda: robot.refused, WAIT, "the second client to be refused (HTTP 409)")
    assert not other.poll().connected
    closes_promptly(other)
    assert polls.poll().connected and robot.connections == 1


def test_close_during_the_opening_handshake(robots, links):
    robot = robots([DS_DISABLED], handshake_delay=0.5)
    link = links(DRIVE, robot.port)
    assert robot.handshake_started.wait(WAIT)
    done = threading.Event()
    threading.Thread(target=lambda: (link.close(), done.set()), daemon=True).start()
    assert done.wait(2.5), "close() still running 2.5 s after it was called"
    assert not link._thread.is_alive()
