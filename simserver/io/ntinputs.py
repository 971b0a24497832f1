"""simserver's inputs over NetworkTables (motor duty cycles, solenoids, the robot mode), read in
the order ntcore received them together with their publishers coming and going.

One ``NetworkTableListenerPoller`` queues, in ntcore's order: every value of the input topics
(subscribed with ``sendAll`` and ``keepDuplicates``), each input topic's ``$pub$`` meta topic
(which clients publish it), the connection events (the main adapter's) and, with ``--serve``,
ntcore's log messages. Measured with pyntcore 2026.2.2 on a server whose client is SIGKILLed
while it publishes every 2 ms: its last values, then ``$pub$`` without it, then the
disconnect. Read in that order:

- a value is applied only if no departure follows it in the same poll: when a topic's last
  publisher leaves, its value goes to 0 (off), and when every input topic has lost its
  publishers (``--serve``) or the connection drops (client mode) the robot program has left,
  and nothing it sent is applied after that;
- with ``--serve`` simserver publishes every input topic itself first, with its type and
  without a value: ntcore types a topic after its first publisher and refuses later ones of
  another type for as long as it has any publisher, so a client that published
  ``/simserver/motors/left`` as a string first would otherwise block the robot's doubles for
  the whole run. Now that client is the one refused; it is reported (topic, its type, client)
  from ntcore's log message;
- the stale-input watchdog: a program that re-sends unchanged values every loop (the bridge
  does, as does any client publishing with ``keepDuplicates``; seen as an unchanged value
  coming ``RESENDS`` times in a row) and then sends nothing for ``timeout`` s is frozen (a
  SIGSTOP, a breakpoint): ``stalled`` once, and its latest values again (``resumed``) when it
  sends again. A program that only sends changes is never timed
  out: its silence cannot be told from a constant output.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ntcore
import ntcore.meta

from simserver.config.model import Config
from simserver.contract import topics
from simserver.io.validation import InputValidator
from simserver.models.camera import CameraRequest

INPUTS = ntcore.PubSubOptions(periodic=0.001, sendAll=True, keepDuplicates=True)
HOLD = ntcore.PubSubOptions(periodic=0.001)
META = ntcore.PubSubOptions(periodic=0.001, sendAll=True)
_CONFLICT = re.compile(r"client (\S+) publish '([^']+)' conflicting type '([^']*)' "
                       r"\(currently '([^']*)'\)")
_UNSET = object()
# Times in a row an unchanged value must come again before the watchdog applies: measured,
# a publisher without keepDuplicates sends its first value twice (the first two sets).
RESENDS = 3
MAX_STATION = 64  # characters of a station name on the feed topic


@dataclass
class InputState:
    """Validated inputs read during one poll, plus connection transitions since the last.

    stalled: the program stopped sending for the watchdog's timeout during this poll (motors
    to 0); resumed: it sends again, and ``motors``/``solenoids`` hold all its latest values."""

    motors: dict[str, float] = field(default_factory=dict)
    solenoids: dict[str, bool] = field(default_factory=dict)
    connected: bool = False
    robot_arrived: bool = False
    robot_left: bool = False
    robot_mode: str | None = None
    stalled: bool = False
    resumed: bool = False
    feeds: list[str] = field(default_factory=list)  # stations asked to feed, in order
    # settings robot code sent to the cameras, in order (simserver.io.camerarequests)
    cameras: list[CameraRequest] = field(default_factory=list)


@dataclass
class _Input:
    kind: str  # "motor", "solenoid" or "mode"
    name: str  # config name (the mode's: "")
    topic: str  # full topic name
    nt_type: str


@dataclass
class Refusal:
    """A client ntcore refused as a publisher of an input topic for its type."""

    client: str
    topic: str
    published: str  # the type it used
    expected: str


class InputReader:
    """Inputs of one robot: ``topic_of`` maps a /simserver topic to this robot's name.

    ``serve``: simserver hosts the NT server (or the robot is another robot of the arena,
    whose presence is told by its publishers too). ``main``: this reader gets the connection
    events. ``timeout``: the watchdog's (s of wall time; 0: off)."""

    def __init__(self, inst: ntcore.NetworkTableInstance, cfg: Config,
                 topic_of: Callable[[str], str], *, serve: bool, hold: bool, main: bool,
                 validator: InputValidator, clock: Callable[[], float] = time.monotonic):
        self.validator = validator
        self.timeout = 0.0
        self.refusals: list[Refusal] = []  # not yet reported (taken by the caller)
        self._serve = serve
        self._clock = clock
        inputs = [_Input("motor", n, topic_of(topics.motor(n)), "double") for n in cfg.motors]
        inputs += [_Input("solenoid", n, topic_of(topics.solenoid(n)), "boolean")
                   for n in cfg.solenoids]
        inputs.append(_Input("mode", "", topic_of(topics.ROBOT_MODE), "string"))
        if main and cfg.pieces is not None:
            inputs.append(_Input("feed", "", topics.PIECE_FEED, "string"))
        self._poller = ntcore.NetworkTableListenerPoller(inst)
        self._subs: list[ntcore.GenericSubscriber] = []
        self._holds: list[ntcore.GenericPublisher] = []
        self._by_topic: dict[str, _Input] = {}
        self._by_meta: dict[str, _Input] = {}
        for spec in inputs:
            topic = inst.getTopic(spec.topic)
            if hold:
                self._holds.append(topic.genericPublish(spec.nt_type, HOLD))
            sub = topic.genericSubscribe(spec.nt_type, INPUTS)
            self._subs.append(sub)
            self._poller.addListener(sub, ntcore.EventFlags.kValueAll)
            self._by_topic[spec.topic] = spec
            if spec.kind not in ("mode", "feed"):
                meta = inst.getTopic(f"$pub${spec.topic}")
                self._subs.append(meta.genericSubscribe("msgpack", META))
                self._poller.addListener(self._subs[-1], ntcore.EventFlags.kValueAll)
                self._by_meta[meta.getName()] = spec
        if main:
            self._poller.addConnectionListener(True)
            if serve:
                self._poller.addLogger(ntcore.NetworkTableInstance.LogLevel.kLogInfo, 100)
        self._publishers: dict[str, set[str]] = {}  # topic -> clients publishing it
        self._refused: set[tuple[str, str]] = set()  # (client, topic)
        self._latest: dict[str, Any] = {}  # topic -> latest valid value of this program
        self._previous: dict[str, tuple[Any, int]] = {}  # topic -> latest raw value,
        # times it came again unchanged in a row
        self._present = False  # a robot program sends these inputs
        self._armed = False  # it re-sends unchanged values: the watchdog applies
        self._stalled = False
        self._heard = clock()  # wall time of the latest input value
        self.mode: str | None = None

    def publishers(self) -> set[str]:
        """Clients that publish an input topic with its type (``--serve``: simserver's own
        typed placeholders, client "", left out)."""
        return set().union(*self._publishers.values())

    def poll(self, out: InputState) -> None:
        """Fill ``out`` with everything received since the last poll, in order."""
        pending: dict[str, Any] = {}
        heard = False
        for event in self._poller.readQueue():
            if event.is_(ntcore.EventFlags.kConnection):
                if not self._serve:
                    self._on_connection(event.is_(ntcore.EventFlags.kConnected), out, pending)
            elif event.is_(ntcore.EventFlags.kLogMessage):
                self._on_log(event.data.message)
            elif isinstance(event.data, ntcore.ValueEventData):
                name = event.data.topic.getName()
                spec = self._by_topic.get(name)
                if spec is not None and spec.kind == "feed":
                    self._on_feed(event.data.value, out)
                elif spec is not None:
                    heard = True
                    self._on_value(spec, event.data.value, out, pending)
                elif (spec := self._by_meta.get(name)) is not None:
                    self._on_publishers(spec, event.data.value, out, pending)
        self._watch(heard, out, pending)
        for spec, value in pending.values():
            if spec.kind == "motor":
                out.motors[spec.name] = value
            elif spec.kind == "solenoid":
                out.solenoids[spec.name] = value
            else:
                self.mode = value
        out.robot_mode = self.mode

    def _on_connection(self, connected: bool, out: InputState,
                       pending: dict[str, Any]) -> None:
        """Client mode: the robot program's server came or went."""
        if connected:
            out.robot_arrived = True
            self._present = True
            return
        out.robot_arrived = False
        out.robot_left = True
        self._forget(pending)

    def _forget(self, pending: dict[str, Any]) -> None:
        """The robot program left: nothing it sent counts any more."""
        pending.clear()
        self._latest.clear()
        self._previous.clear()
        self._publishers.clear()
        self._present = self._armed = self._stalled = False

    def _on_value(self, spec: _Input, value: ntcore.Value, out: InputState,
                  pending: dict[str, Any]) -> None:
        raw = python_value(value)
        if raw is _UNSET:
            return
        previous, repeats = self._previous.get(spec.topic, (_UNSET, 0))
        repeats = repeats + 1 if previous == raw else 0
        if repeats >= RESENDS:
            self._armed = True  # unchanged values sent again and again: it re-sends them
        self._previous[spec.topic] = (raw, repeats)
        if spec.kind == "mode":
            checked = raw if raw in topics.MODES else None
        elif spec.kind == "motor":
            checked = self.validator.duty(spec.topic, raw)
        else:
            checked = self.validator.solenoid(spec.topic, raw)
        if checked is None:
            return
        if spec.kind != "mode" and self._serve and not self._present:
            out.robot_arrived = True
            self._present = True
        pending[spec.topic] = (spec, checked)
        if spec.kind != "mode":
            self._latest[spec.topic] = (spec, checked)

    def _on_feed(self, value: ntcore.Value, out: InputState) -> None:
        """A station name on the feed topic (a dashboard's or a test's, not the robot
        program's input: it neither marks the program present nor feeds the watchdog)."""
        raw = python_value(value)
        if isinstance(raw, str) and 0 < len(raw) <= MAX_STATION:
            out.feeds.append(raw)

    def _on_publishers(self, spec: _Input, value: ntcore.Value, out: InputState,
                       pending: dict[str, Any]) -> None:
        """``$pub$<topic>`` changed: when its last publisher left, its value is void; when
        every input topic lost its publishers (``--serve``), the robot program left."""
        if value.type() != ntcore.NetworkTableType.kRaw:
            return
        decoded = ntcore.meta.decodeTopicPublishers(value.getRaw()) or []
        clients = {p.client for p in decoded
                   if not (self._serve and p.client == "")
                   and (p.client, spec.topic) not in self._refused}
        had = bool(self.publishers())
        if clients:
            self._publishers[spec.topic] = clients
            return
        self._publishers.pop(spec.topic, None)
        if spec.topic in self._latest or spec.topic in pending:
            self._latest.pop(spec.topic, None)
            self._previous.pop(spec.topic, None)
            pending[spec.topic] = (spec, 0.0 if spec.kind == "motor" else False)
        if had and not self._publishers and self._serve and self._present:
            out.robot_arrived = False
            out.robot_left = True
            self._forget(pending)

    def _on_log(self, message: str) -> None:
        """ntcore's server refused a client's publisher of an input topic for its type."""
        match = _CONFLICT.search(message)
        if match is None:
            return
        client, topic, published, expected = match.groups()
        if topic not in self._by_topic:
            return
        self._refused.add((client, topic))
        clients = self._publishers.get(topic)
        if clients is not None:
            clients.discard(client)
            if not clients:
                del self._publishers[topic]
        self.refusals.append(Refusal(client, topic, published, expected))

    def _watch(self, heard: bool, out: InputState, pending: dict[str, Any]) -> None:
        """The stale-input watchdog (see the module's docstring)."""
        now = self._clock()
        if heard:
            self._heard = now
            if self._stalled:
                self._stalled = False
                out.resumed = True
                for topic, latest in self._latest.items():
                    pending.setdefault(topic, latest)
            return
        if (self.timeout > 0 and self._present and self._armed and not self._stalled
                and now - self._heard > self.timeout):
            self._stalled = True
            out.stalled = True


def python_value(v: ntcore.Value) -> Any:
    """The Python value inside an ntcore Value, or _UNSET for an unassigned one."""
    if v.type() == ntcore.NetworkTableType.kUnassigned:
        return _UNSET
    return v.value()
