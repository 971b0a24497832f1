"""NetworkTables 4 adapter: the only module (with field2d) that touches ntcore.

Two modes:

- client (default): connect to the robot program's NT server (localhost:5810), reconnecting by
  itself. Connection events reset the world / zero the motors.
- server (``--serve``): host an NT server, bound to 127.0.0.1 unless a host is given. The first
  motor value after start or after the robot left counts as a robot connecting; every input
  topic losing its last publisher counts as it leaving.

Inputs are read by :mod:`simserver.io.ntinputs`, in the order ntcore received them with their
publishers' comings and goings: nothing a departed publisher sent is applied after its
departure, a wrong-typed publisher cannot block the robot's values (``--serve``), and a
program that stops re-sending its inputs is timed out (the stale-input watchdog).

Latency settings follow ARCHITECTURE.md: periodic 0.001 (ntcore's 5 ms floor) on every publisher
and subscriber, one flush per tick.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import socket
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ntcore

from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.contract import topics
from simserver.contract.snapshot import PieceSnapshot, Snapshot
from simserver.io import field2d
from simserver.io.field2d import Field2dPublisher
from simserver.io.limelight import LimelightPublisher
from simserver.io.mechanism2d import Mechanism2dPublisher
from simserver.io.ntinputs import InputReader, InputState
from simserver.io.photonvision import PhotonVisionPublisher, PhotonVisionRoot
from simserver.io.robottopics import RobotTopicReader, RobotValue
from simserver.io.structs import add_schemas, pack, struct_class
from simserver.io.validation import InputValidator
from simserver.models.api import OutputSpec
from simserver.models.camera import CameraSpec, Fiducial
from simserver.util.lograte import LogLimiter

log = logging.getLogger("simserver.nt")

# Fraction of a period by which a value may precede its loop's time and still belong to it
# (real time: the loop's time is read after its code has run).
CLOCK_SLACK = 0.05
FAST = ntcore.PubSubOptions(periodic=0.001)
# Sent every tick even when unchanged (ntcore leaves out a value equal to the last otherwise).
EVERY_TICK = ntcore.PubSubOptions(periodic=0.001, keepDuplicates=True)


def photonvision_unavailable(cfg: Config) -> tuple[str, str] | None:
    """(key path, message) when a camera of ``cfg`` publishes PhotonVision's topics but
    photonlibpy, whose serde packs the frames, cannot be imported: photonlibpy 2026 needs
    numpy 2.3, which needs Python 3.11 or newer. None when nothing stands in the way."""
    wanting = [name for name, cam in cfg.cameras.items()
               if cam.protocol in ("photonvision", "both")]
    if not wanting:
        return None
    try:
        import simserver.io.photonresult  # noqa: F401
    except ImportError as exc:
        name = wanting[0]
        return (f"cameras.{name}.protocol",
                f"{cfg.cameras[name].protocol!r} publishes PhotonVision's topics with "
                f"photonlibpy, which cannot be imported ({exc}); photonlibpy 2026 needs Python "
                '3.11 or newer. On this Python use protocol = "limelight"')
    return None


@dataclass(frozen=True)
class Cameras:
    """The cameras an adapter publishes, as the world built them: name -> spec (each published
    as its config's ``protocol`` says), the tag layout the Limelights know, and the field size
    (length m, width m) for their field-centre and red-origin poses."""

    specs: Mapping[str, CameraSpec] = field(default_factory=dict)
    fiducials: Sequence[Fiducial] = ()
    field_size: tuple[float, float] | None = None


@dataclass
class Endpoint:
    """Where to connect: ``mode`` is "client" or "server"."""

    mode: str
    host: str
    port: int

    def describe(self) -> str:
        verb = "serving NT4 on" if self.mode == "server" else "NT4 client of"
        return f"{verb} {self.host}:{self.port}"


def parse_hostport(text: str, default_host: str, default_port: int) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``:PORT`` or ``PORT`` -> (host, port); an IPv6 host as
    ``::1:PORT`` or ``[::1]:PORT``. Raises ValueError."""
    text = text.strip()
    if text.isdigit():
        host, port_s = default_host, text
    elif text.startswith("[") and "]" in text:
        host, _, rest = text[1:].partition("]")
        port_s = rest.removeprefix(":") or str(default_port)
    elif ":" in text:
        host, port_s = text.rsplit(":", 1)
        host = host or default_host
    else:
        host, port_s = text, str(default_port)
    if not port_s.isdigit() or not 0 < int(port_s) < 65536:
        raise ValueError(f"port must be 1..65535, got {port_s[:20]!r}")
    if not host:
        raise ValueError("empty host")
    return host, int(port_s)


def listen_address(host: str, port: int) -> str:
    """The IPv4 address for an NT server asked to serve on ``host``:``port``, checked free.

    ntcore's server listens on a numeric IPv4 address only: given a host name or an IPv6
    address it listens on 0.0.0.0 at a random port, and on a port in use it serves nothing,
    both without a word (measured, pyntcore 2026.2). So the name is resolved here and the port
    tried first. Raises ValueError naming the host or the port."""
    try:
        infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        if ":" in host:
            raise ValueError(f"{host} is an IPv6 address; ntcore serves NT4 on IPv4 only: use "
                             "127.0.0.1 (this machine) or 0.0.0.0 (every interface)") from None
        raise ValueError(f"cannot resolve {host[:60]!r} to an IPv4 address") from None
    address = str(infos[0][4][0])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if os.name != "nt":  # a port in TIME_WAIT is free; one with a listener is not
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError as exc:
            raise ValueError(f"port {port} on {address} is not free ({exc.strerror}): another "
                             "simserver or a robot program serves there?") from None
    return address


class NtAdapter:
    """Owns one ntcore instance: input subscribers, output publishers, the Field2d.

    An adapter made with ``robot=(name, main)`` serves another robot of the arena on ``main``'s
    instance instead: its topics live under ``/simserver/robots/<name>/`` and it is drawn as
    object ``<name>`` of the SimField; connection events stay with ``main``. ``cameras``: what
    the main robot's cameras publish (none without)."""

    robot_topics: RobotTopicReader | None = None  # the robot program's own topics, if read
    # (simulated s, ntcore µs) of the latest robot_values() call: real-time conversions of
    # robot times refer to that moment, even when the caller polls again later at that time
    _anchor: tuple[float, int] | None = None

    def __init__(self, cfg: Config, endpoint: Endpoint, identity: str = "simserver",
                 robot: tuple[str, NtAdapter] | None = None, cameras: Cameras | None = None):
        self.cfg = cfg
        self.cameras = cameras or Cameras()
        self.endpoint = endpoint
        self.validator = InputValidator()
        self._limiter = LogLimiter(log)
        self._persist_dir: tempfile.TemporaryDirectory[str] | None = None
        self._main = robot is None
        self._prefix = topics.PREFIX if robot is None else topics.robot_prefix(robot[0])
        self._object = field2d.ROBOT.name if robot is None else field2d.OTHER_ROBOT.at(
            robot=robot[0])
        self.inst: ntcore.NetworkTableInstance
        self._field: Field2dPublisher
        if robot is not None:
            self.inst = robot[1].inst
            self._make_inputs()
            self._make_publishers(robot[1]._field)
            return
        self.inst = ntcore.NetworkTableInstance.create()
        if endpoint.mode == "server":
            self._persist_dir = tempfile.TemporaryDirectory(prefix="simserver-nt-")
            self.inst.startServer(os.path.join(self._persist_dir.name, "nt.json"),
                                  endpoint.host, 0, endpoint.port)
        else:
            self.inst.startClient4(identity)
            self.inst.setServer(endpoint.host, endpoint.port)
        self._make_inputs()
        self._make_publishers(Field2dPublisher(self.inst, FAST))

    def _topic(self, name: str) -> str:
        """``name`` (a /simserver topic) under this adapter's robot prefix."""
        return self._prefix + name.removeprefix(topics.PREFIX)

    def _make_inputs(self) -> None:
        server = self.endpoint.mode == "server"
        self._inputs = InputReader(self.inst, self.cfg, self._topic, serve=server or not self._main,
                                   hold=server, main=self._main, validator=self.validator)
        self._ds: dict[str, ntcore.GenericPublisher] = {}

    @property
    def connected(self) -> bool:
        """Client mode: connected to the server. Server mode: some client is connected."""
        return bool(self.inst.getConnections()) if self.endpoint.mode == "server" else (
            self.inst.isConnected())

    def publishes_inputs(self) -> bool:
        """Whether some client publishes a /simserver input topic (an NT-only robot program)."""
        return bool(self._inputs.publishers())

    def watch_inputs(self, timeout: float) -> None:
        """Arm the stale-input watchdog: ``timeout`` s of wall time (0: off). See
        :mod:`simserver.io.ntinputs`."""
        self._inputs.timeout = timeout

    # --- inputs ------------------------------------------------------------------------------

    def poll(self) -> InputState:
        """Read every input update since the last poll, validated, in the order received:
        nothing a departed publisher sent is returned after its departure."""
        out = InputState(connected=self.connected)
        self._inputs.poll(out)
        for r in self._inputs.refusals:
            self._limiter.log(
                f"the type of {r.topic}", logging.WARNING,
                "%s: client %s publishes it as %s, not %s; its values are refused (a robot "
                "program's %s values still get through)", r.topic, r.client,
                r.published or "?", r.expected, r.expected)
        self._inputs.refusals.clear()
        for pubs in self._cameras.values():
            for pub in pubs:
                out.cameras += pub.read_requests()
        if self._photon_root is not None:
            self._photon_root.read_requests()
        return out

    # --- outputs -----------------------------------------------------------------------------

    def _make_publishers(self, field: Field2dPublisher) -> None:
        inst, cfg = self.inst, self.cfg
        # The true pose every tick, so that a dashboard sees a parked robot too; the other
        # outputs only when they change.
        self._out = {spec.name: self._setter(self._topic(spec.name), spec.type,
                                             EVERY_TICK if spec.name == topics.POSE else FAST)
                     for spec in topics.contract_for(cfg)
                     if spec.direction == "out" and spec.name != topics.HEARTBEAT
                     and not any(m.fullmatch(spec.name) for m in _PUBLISHED_ELSEWHERE)}
        self._heartbeat = inst.getIntegerTopic(self._topic(topics.HEARTBEAT)).publish(EVERY_TICK)
        self._beats = 0
        self._field = field
        self._make_cameras()
        self._mech: dict[str, dict[str, Callable[[Any], None]]] = {}
        self._drawings: dict[str, Mechanism2dPublisher] = {}
        # topics published once a snapshot has them (game pieces, components), by name
        self._later: dict[str, Callable[[Any], None]] = {}
        self._piece_types: dict[str, str] = {}
        reg = registry()
        for name, section in cfg.mechanisms.items():
            mt = reg.get("mechanism", section.type)
            if mt is None:
                continue
            self._mech[name] = {o.name: self._mechanism_setter(name, o) for o in mt.outputs}

    def _make_cameras(self) -> None:
        """PhotonVision and Limelight publishers per camera (main robot only), and the
        bearing-target topics."""
        cfg = self.cfg
        # (sim s, robot s, period s) of the latest robot loop, when the bridge says so
        self.clock: tuple[float, float, float] | None = None
        self._sim_now = 0.0
        # (sim s, ntcore µs) from the real-time schedule: the world at that time was due then
        self._due: tuple[float, float] | None = None
        self._monotonic_to_nt = ntcore._now() - time.monotonic() * 1e6  # µs, both steady
        self._cameras: dict[str, list[PhotonVisionPublisher | LimelightPublisher]] = {}
        self.heartbeats: dict[str, int] = {}  # camera heartbeat topic -> last value published
        self._bearings: dict[tuple[str, str], Callable[[Any], None]] = {}
        self._photon_root: PhotonVisionRoot | None = None
        if not self._main:
            return
        cams = self.cameras
        for name, spec in cams.specs.items():
            protocol = cfg.cameras[name].protocol
            pubs: list[PhotonVisionPublisher | LimelightPublisher] = []
            if protocol in ("photonvision", "both"):
                pubs.append(PhotonVisionPublisher(self.inst, spec, self.robot_time))
                if self._photon_root is None:
                    self._photon_root = PhotonVisionRoot(self.inst)
            if protocol in ("limelight", "both"):
                pubs.append(LimelightPublisher(self.inst, spec, cams.fiducials, self.robot_time,
                                               cams.field_size))
            self._cameras[name] = pubs
            for target in cfg.vision.targets:
                self._bearings[(name, target)] = self._setter(
                    topics.bearing_target(name, target), "double[]")

    def schedule(self, sim_time: float, due: float) -> None:
        """Real time without the bridge: the world at ``sim_time`` (s) was due at ``due`` (s of
        ``time.monotonic()``), the start of its tick on the run's schedule. Robot times then
        follow the schedule, not the moment a late tick publishes."""
        self._due = (sim_time, due * 1e6 + self._monotonic_to_nt)

    def robot_time(self, sim_time: float) -> float:
        """The robot program's NT server time (s) at simulated time ``sim_time``: exact from
        the bridge's clock; else from the real-time schedule (:meth:`schedule`) and ntcore's
        server time offset, so a late tick does not shift it; else from the moment of the
        latest publication. NaN while the offset is unknown."""
        if self.clock is not None:
            return self.clock[1] + (sim_time - self.clock[0])
        offset = self.inst.getServerTimeOffset()
        if offset is None:
            return math.nan
        if self._due is not None:
            sim, due = self._due
            return (due + offset) * 1e-6 + (sim_time - sim)
        return (ntcore._now() + offset) * 1e-6 - (self._sim_now - sim_time)

    def sim_time(self, robot_time: float) -> float:
        """The simulated time (s) of the world a value the robot program set at NT server
        time ``robot_time`` (s) was computed from. With the bridge's clock: the time of the
        sensors the program had then, which are those of the end of the period from the loop's
        exchange on (a commands-v2 scheduler runs 5 ms after its loop, on the sensors written
        at the loop's end). Otherwise from ntcore's server time offset (a server's own clock
        with ``--serve``), NaN before it is known."""
        if self.clock is not None:
            sim, robot, period = self.clock
            periods = math.ceil((robot_time - robot) / period - CLOCK_SLACK)
            return sim + periods * period
        offset = 0 if self.endpoint.mode == "server" else self.inst.getServerTimeOffset()
        if offset is None:
            return math.nan
        sim_now, wall_now = self._anchor or (self._sim_now, ntcore._now())
        return sim_now - ((wall_now + offset) * 1e-6 - robot_time)

    def watch_robot(self, prefixes: list[str], exclude: tuple[str, ...] = ()) -> None:
        """Receive every value the robot program (any other NT peer) publishes under
        ``prefixes`` (topic names or prefixes), except under ``exclude``; read them with
        :meth:`robot_values`."""
        if prefixes:
            self.robot_topics = RobotTopicReader(self.inst, prefixes, exclude)

    def robot_values(self, now: float) -> list[RobotValue]:
        """The robot program's values received since the last call, each with the simulated
        time it was published at; ``now``: the simulated time (s) of the latest step."""
        if self.robot_topics is None:
            return []
        if self._anchor is None or self._anchor[0] != now:
            self._anchor = (now, ntcore._now())
        return [dataclasses.replace(v, sim_time=self.sim_time(v.server_time))
                for v in self.robot_topics.read()]

    def _publish_frames(self, snap: Snapshot) -> None:
        self._sim_now = snap.time
        for frame in snap.frames:
            for pub in self._cameras.get(frame.camera, ()):
                pub.publish(frame)
                topic, beat = pub.heartbeat
                self.heartbeats[topic] = beat
            self._field.set_poses(field2d.CAMERA_TAGS.at(camera=frame.camera),
                                  frame.visible_tag_poses())
            seen = {b.name: b for b in frame.bearings}
            t = self.robot_time(frame.capture_time)
            for (cam, target), setter in self._bearings.items():
                if cam == frame.camera:
                    b = seen.get(target)
                    setter([1.0, t, b.offset, b.distance] if b is not None
                           else [0.0, t, 0.0, 0.0])

    def _mechanism_setter(self, mechanism: str, out: OutputSpec) -> Callable[[Any], None]:
        """A function that publishes one declared output of a mechanism."""
        if out.type == "field2d":
            topic = field2d.PIECES.at(mechanism=mechanism)
            return lambda poses: self._field.set_poses(topic, list(poses))
        return self._setter(self._topic(topics.mechanism_output(mechanism, out.name)), out.type)

    def _setter(self, name: str, nt_type: str,
                options: ntcore.PubSubOptions = FAST) -> Callable[[Any], None]:
        """A function that publishes a value on topic ``name`` of NT type ``nt_type``, with
        the publisher ``options``."""
        inst = self.inst
        if nt_type == "double":
            pd = inst.getDoubleTopic(name).publish(options)
            return lambda v: pd.set(float(v))
        if nt_type == "boolean":
            pb = inst.getBooleanTopic(name).publish(options)
            return lambda v: pb.set(bool(v))
        if nt_type == "int":
            pi = inst.getIntegerTopic(name).publish(options)
            return lambda v: pi.set(int(v))
        if nt_type == "double[]":
            pa = inst.getDoubleArrayTopic(name).publish(options)
            return lambda v: pa.set([float(x) for x in v])
        cls = struct_class(nt_type)
        if cls is not None and nt_type == "struct:Pose3d[]":
            # Raw, so that a game-piece array packed with numpy goes out as it is.
            add_schemas(inst.addSchema, cls)
            pr = inst.getRawTopic(name).publish(nt_type, options)
            return lambda v: pr.set(pack(nt_type, v))
        if cls is not None:
            if nt_type.endswith("[]"):
                return inst.getStructArrayTopic(name, cls).publish(options).set
            return inst.getStructTopic(name, cls).publish(options).set
        raise ValueError(f"no publisher for NT type {nt_type!r}")

    def publish(self, snap: Snapshot, flush: bool = True) -> None:
        """Set every output from ``snap`` and flush once (unless ``flush`` is False: another
        adapter on the same instance flushes)."""
        for name, value in topics.output_values(snap).items():
            self._out[name](value)
        self._beats += 1
        self._heartbeat.set(self._beats)
        wrapped = math.atan2(math.sin(snap.heading), math.cos(snap.heading))
        self._field.set_poses(self._object, [(snap.x, snap.y, wrapped)])
        self._publish_frames(snap)
        for mech, drawing in snap.drawings.items() if self._main else ():
            pub = self._drawings.get(mech)
            if pub is None:
                self._drawings[mech] = Mechanism2dPublisher(self.inst, mech, drawing, FAST)
            else:
                pub.update(drawing)
        for mech, values in snap.mechanisms.items():
            setters = self._mech.get(mech, {})
            for key, value in values.items():
                setter = setters.get(key)
                if setter is not None:
                    setter(value)
        if snap.components:
            self._later_setter(self._topic(topics.COMPONENTS), "struct:Pose3d[]")(
                snap.components)
        if self._main and snap.pieces is not None:
            self._publish_pieces(snap.pieces)
        if flush:
            self.inst.flush()

    def _later_setter(self, name: str, nt_type: str) -> Callable[[Any], None]:
        """The setter of topic ``name``, made when first needed."""
        setter = self._later.get(name)
        if setter is None:
            setter = self._later[name] = self._setter(name, nt_type)
        return setter

    def _publish_pieces(self, pieces: PieceSnapshot) -> None:
        """The game-piece topics (:func:`~simserver.contract.topics.piece_values`) and the
        SimField's ``Pieces`` object: the pieces on the carpet and in flight."""
        for name, value in topics.piece_values(pieces).items():
            nt_type = self._piece_types.get(name)
            if nt_type is None:
                self._piece_types = {s.name: s.type for s in topics.piece_specs(pieces)}
                nt_type = self._piece_types[name]
            self._later_setter(name, nt_type)(value)
        self._field.set_array(field2d.GAME_PIECES.name, field2d.loose_poses(pieces))

    def command(self, values: dict[str, Any]) -> None:
        """Publish Driver Station commands for the bridge (``topics.DS_MODE``, joysticks):
        topic -> str, list of floats or list of booleans. Sent with the next flush."""
        for topic, value in values.items():
            pub = self._ds.get(topic)
            if pub is None:
                nt_type = ("string" if isinstance(value, str) else
                           "boolean[]" if value and isinstance(value[0], bool) else "double[]")
                pub = self.inst.getTopic(topic).genericPublish(nt_type, FAST)
                self._ds[topic] = pub
            if isinstance(value, str):
                pub.setString(value)
            elif value and isinstance(value[0], bool):
                pub.setBooleanArray(value)
            else:
                pub.setDoubleArray([float(v) for v in value])

    def show_trajectory(self, poses: list[tuple[float, float, float]]) -> None:
        """Draw a scenario's trajectory, ``poses`` (m, m, rad), on the SimField."""
        self._field.set_poses(field2d.TRAJECTORY.name, poses)

    def close(self) -> None:
        """Stop ntcore and release the instance (the main adapter's)."""
        for pubs in self._cameras.values():
            for pub in pubs:
                pub.close()
        if self._photon_root is not None:
            self._photon_root.close()
        if not self._main:
            return
        if self.robot_topics is not None:
            self.robot_topics.close()
        ntcore.NetworkTableInstance.destroy(self.inst)
        if self._persist_dir is not None:
            self._persist_dir.cleanup()


# /simserver output topics published by their own publishers, not from ``output_values``.
_PUBLISHED_ELSEWHERE = [topics.matcher(name) for name in (
    topics.BEARING.name, topics.COMPONENTS, topics.mechanism_output("<mechanism>", "<output...>"),
    *(s.name for s in topics.BRIDGE))]
