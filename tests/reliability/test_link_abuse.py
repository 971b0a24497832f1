"""The step link (`simserver.io.stepwire`) against a peer that sends what no working peer would:
JSON nested a hundred thousand deep, a message over the size limit, garbage bytes, a greeting
whose period is NaN, inf, negative, 0 or 1e300, robot times that are none of seconds.

What must hold: nothing crashes or hangs, on either side. simserver ends a lock-step run at the
first bad message or greeting with a clear error (exit 1: the robot program's bridge is broken,
not the user's files), before the bad message touches the world; in real time it drops the link,
sets the motors to 0, says so once however often it happens, and attaches again. The bridge
ignores bad connections and keeps listening, detaches a real-time simserver that sends a bad
answer, and ends a lock-step robot program (status 1) on one.

Real sockets on loopback and the real classes throughout: a scripted peer writes raw bytes into
the real `Link` of an in-process `Session`, or of a real `robotpy sim --simserver` program.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from simserver.config.loader import load
from simserver.contract import topics
from simserver.io.nt import Endpoint
from simserver.io.stepwire import MAX_DEPTH, MAX_LINE, VERSION, Link, LinkError, ProtocolError
from simserver.runs.session import RunOptions, Session
from tests.e2e.robots import KITBOT, RobotProgram, config_with
from tests.ntutil import REPO, free_port, wait_for

LEFT = topics.motor("left")
DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_VALUES = b'{"time":0.04,"values":' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001
GOOD_PERIOD = json.dumps({"time": 0.02, "values": {LEFT: 0.25}}).encode()
BAD_PERIODS = {
    "deep-array": DEEP_ARRAY,
    "deep-values": DEEP_VALUES,
    "unbalanced-deep": b"[" * 100_000 + b"}",
    "garbage": b"\x00\xff\xfegarbage{",
    "oversize": b'{"time":0.04,"values":{"' + LEFT.encode() + b'":1.0},"x":"' +
                b"a" * MAX_LINE + b'"}',
    "time-nan": b'{"time":NaN,"values":{"' + LEFT.encode() + b'":1.0}}',
    "time-inf": b'{"time":Infinity,"values":{"' + LEFT.encode() + b'":1.0}}',
    "time-negative": b'{"time":-0.02,"values":{"' + LEFT.encode() + b'":1.0}}',
    "time-1e300": b'{"time":1e300,"values":{"' + LEFT.encode() + b'":1.0}}',
    "time-text": b'{"time":"0.04","values":{"' + LEFT.encode() + b'":1.0}}',
    "time-missing": b'{"values":{"' + LEFT.encode() + b'":1.0}}',
    "values-missing": b'{"time":0.04}',
}


def greeting(mode: str, period: str) -> bytes:
    return (f'{{"hello":"bridge","version":{VERSION},"mode":"{mode}","period":{period}}}'
            .encode())


class ScriptedBridge:
    """A robot-side bridge on a free loopback port: for each connection, reads simserver's
    greeting, sends ``hello`` then each of ``messages`` (raw lines), collecting the answers;
    counts connections. ``after(n)`` is called once the n-th connection has ended."""

    def __init__(self, hello: bytes, messages: list[bytes], after=None):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.hello, self.messages, self.after = hello, messages, after
        self.connections = 0
        self.answers: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.server.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            link = Link(conn)
            with contextlib.suppress(LinkError, OSError):  # simserver hangs up on a bad line
                link.receive(5.0)
                conn.sendall(self.hello + b"\n")
                for line in self.messages:
                    conn.sendall(line + b"\n")
                    self.answers.append(link.receive(5.0))
            link.close()
            if self.after is not None:
                self.after(self.connections)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.server.close()


@pytest.fixture
def bridges() -> Iterator[list[ScriptedBridge]]:
    made: list[ScriptedBridge] = []
    yield made
    for bridge in made:
        bridge.close()


def kitbot(port: int):
    cfg = load(REPO / "simserver/config/kitbot.toml")
    return dataclasses.replace(cfg, bridge=dataclasses.replace(cfg.bridge, port=port,
                                                               timeout=5.0))


def run_in_thread(session: Session, timeout: float = 60.0) -> None:
    """session.run(), failing the test if it has not returned within ``timeout`` s."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            session.run()
        except BaseException as exc:  # handed to the test below
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        session.request_stop()
        thread.join(10)
        pytest.fail(f"session.run() still running after {timeout:g} s")
    if errors:
        raise errors[0]


def warnings_with(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and text in r.getMessage()]


# --- the wire itself ----------------------------------------------------------------------------


@pytest.fixture
def raw_pair() -> Iterator[tuple[Link, socket.socket]]:
    """A Link and the raw loopback socket of its peer."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        peer = socket.create_connection(server.getsockname(), timeout=5)
        conn, _ = server.accept()
    link = Link(conn)
    try:
        yield link, peer
    finally:
        link.close()
        peer.close()


@pytest.mark.parametrize(("line", "why"), [
    (DEEP_ARRAY, f"message nested deeper than {MAX_DEPTH} levels"),
    (DEEP_VALUES, f"message nested deeper than {MAX_DEPTH} levels"),
    (b"[" * 100_000 + b"}", "malformed message"),
    (b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1),
     f"message nested deeper than {MAX_DEPTH} levels"),
], ids=["array", "object", "unbalanced", "one-too-deep"])
def test_deep_nesting_is_refused_before_parsing_and_the_link_goes_on(raw_pair, line, why):
    link, peer = raw_pair
    threading.Thread(target=peer.sendall, args=(line + b"\n" + GOOD_PERIOD + b"\n",),
                     daemon=True).start()
    with pytest.raises(ProtocolError) as exc:  # not RecursionError
        link.receive(5.0)
    assert str(exc.value) == why
    assert link.receive(5.0) == json.loads(GOOD_PERIOD)


def test_nesting_up_to_the_limit_and_brackets_in_strings_are_fine(raw_pair):
    link, peer = raw_pair
    deep_ok = {"values": {}}
    inner = deep_ok["values"]
    for _ in range(MAX_DEPTH - 2):
        inner["a"] = {}
        inner = inner["a"]
    brackets = {"values": {"/x": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{\\\""}}
    for message in (deep_ok, brackets):
        peer.sendall(json.dumps(message).encode() + b"\n")
        assert link.receive(5.0) == message


def test_a_line_just_over_the_limit_is_refused_with_or_without_its_newline(raw_pair):
    link, peer = raw_pair
    line = b'{"x":"' + b"a" * MAX_LINE + b'"}'  # 8 bytes over: within one last chunk
    sender = threading.Thread(target=_send_quietly, args=(peer, line + b"\n"), daemon=True)
    sender.start()
    with pytest.raises(ProtocolError, match="message too long"):
        link.receive(10.0)
    link.close()
    sender.join(5)


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(data)


# --- simserver in lock-step: the first bad word ends the run -----------------------------------


@pytest.mark.network
@pytest.mark.parametrize("period", ["NaN", "Infinity", "-Infinity", "-0.02", "0", "0.0",
                                    "1e300", '"0.02"', "null", "[0.02]"])
def test_a_lockstep_greeting_with_a_bad_period_ends_the_run_at_once(bridges, period):
    bridge = ScriptedBridge(greeting("lockstep", period), [])
    bridges.append(bridge)
    session = Session(kitbot(bridge.port), RunOptions(fast=True, lockstep=True, duration=1.0,
                                                      wait=20.0))
    run_in_thread(session)
    assert session.failure is not None
    assert session.failure.startswith(f"lock-step: localhost:{bridge.port} answered, but not "
                                      "as a robot program's bridge: unexpected greeting "
                                      "(expected a period in 0..1 s and mode 'lockstep')")
    assert bridge.connections == 1  # not retried for --wait


@pytest.mark.network
@pytest.mark.parametrize("hello", [DEEP_ARRAY, b"\x00\xff garbage", b"HTTP/1.1 400 Bad Request"],
                         ids=["deep", "garbage", "http"])
def test_a_lockstep_greeting_that_is_not_a_message_ends_the_run_at_once(bridges, hello):
    bridge = ScriptedBridge(hello, [])
    bridges.append(bridge)
    session = Session(kitbot(bridge.port), RunOptions(fast=True, lockstep=True, duration=1.0,
                                                      wait=20.0))
    run_in_thread(session)
    assert session.failure is not None
    assert "answered, but not as a robot program's bridge" in session.failure
    assert bridge.connections == 1


@pytest.mark.network
@pytest.mark.parametrize("case", list(BAD_PERIODS))
def test_a_bad_period_message_in_lockstep_ends_the_run_before_touching_the_world(bridges,
                                                                                  case):
    bridge = ScriptedBridge(greeting("lockstep", "0.02"), [GOOD_PERIOD, BAD_PERIODS[case]])
    bridges.append(bridge)
    session = Session(kitbot(bridge.port), RunOptions(fast=True, lockstep=True, duration=1.0,
                                                      wait=20.0))
    run_in_thread(session)
    assert session.failure is not None
    assert session.failure.startswith("lock-step: bad message from the robot program's bridge ("
                                      ), session.failure
    assert session.failure.endswith("); the run ends")
    assert len(session.failure) < 300
    assert session.world.motors["left"] == 0.25  # the good period's, not the bad one's 1.0
    assert session.ticks == 1


@pytest.mark.network
def test_lockstep_bad_robot_times_are_named_with_an_excerpt(bridges):
    bridge = ScriptedBridge(greeting("lockstep", "0.02"),
                            [GOOD_PERIOD, b'{"time":"' + b"9" * 5000 + b'","values":{}}'])
    bridges.append(bridge)
    session = Session(kitbot(bridge.port), RunOptions(fast=True, lockstep=True, duration=1.0,
                                                      wait=20.0))
    run_in_thread(session)
    assert session.failure is not None
    assert "robot time '99999" in session.failure and "is not seconds in 0..1e+09" in \
        session.failure
    assert "9" * 100 not in session.failure


# --- simserver in real time: drop, zero, say once, attach again ----------------------------------


def realtime_session(port: int) -> Session:
    """Real time as an NT client (of a port where nothing listens): it looks for the bridge."""
    nt_port = free_port()
    return Session(kitbot(port), RunOptions(fast=False, endpoint=Endpoint(
        "client", "127.0.0.1", nt_port)))


@pytest.mark.network
@pytest.mark.parametrize("case", ["deep-values", "garbage", "time-nan", "time-1e300"])
def test_a_bad_message_in_real_time_drops_the_link_once_said_and_zeroes_the_motors(
        bridges, caplog, case):
    caplog.set_level(logging.INFO, logger="simserver")
    box: list[Session] = []

    def after(n: int) -> None:
        if n == 3:
            box[0].request_stop()

    bridge = ScriptedBridge(greeting("realtime", "0.02"), [GOOD_PERIOD, BAD_PERIODS[case]],
                            after)
    bridges.append(bridge)
    session = realtime_session(bridge.port)
    box.append(session)
    run_in_thread(session)
    assert session.failure is None
    assert bridge.connections >= 3  # attached again after each bad message
    said = warnings_with(caplog, "bad message from the robot program's bridge")
    assert len(said) == 1, said  # once, though it happened at every attach
    assert said[0].endswith("link dropped, motors to 0; said once")
    assert session.world.motors["left"] == 0.0
    # The good period of every attach was answered with the sensors, the bad one with a
    # goodbye.
    kinds = [next(iter(a)) for a in bridge.answers]
    assert kinds[:6] == ["values", "bye"] * 3, kinds


@pytest.mark.network
def test_a_bad_realtime_greeting_is_said_once_and_tried_again_quietly(bridges, caplog):
    caplog.set_level(logging.INFO, logger="simserver")
    box: list[Session] = []

    def after(n: int) -> None:
        if n == 3:
            box[0].request_stop()

    bridge = ScriptedBridge(greeting("realtime", "NaN"), [], after)
    bridges.append(bridge)
    session = realtime_session(bridge.port)
    box.append(session)
    run_in_thread(session)
    assert session.failure is None and bridge.connections >= 3
    said = warnings_with(caplog, "answered, but not as a robot program's bridge")
    assert len(said) == 1, said
    assert "unexpected greeting" in said[0] and "trying again every 0.5 s, quietly" in said[0]


# --- the bridge, in a real robot program --------------------------------------------------------


def _greet(port: int, mode: str) -> tuple[Link, dict]:
    link = Link(socket.create_connection(("127.0.0.1", port), timeout=5))
    link.send({"hello": "simserver", "version": VERSION, "mode": mode})
    return link, link.receive(10.0)


def _poke(port: int, data: bytes) -> None:
    """Connect to the step port, send ``data``, and hang up (whatever the bridge does)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        _send_quietly(sock, data)
        with contextlib.suppress(OSError):
            sock.settimeout(3)
            sock.recv(65536)  # the bridge closes (or refuses) first


@pytest.mark.robot
@pytest.mark.network
@pytest.mark.slow
def test_the_bridge_survives_bad_peers_and_stops_lockstep_on_a_bad_answer(tmp_path):
    cfg, port = config_with(tmp_path, KITBOT / "simserver.toml")
    robot = RobotProgram(KITBOT, cfg, tmp_path)
    try:
        robot.wait_ready()
        # Connections that are not simserver: ignored, the bridge keeps listening.
        for data in (DEEP_ARRAY + b"\n", b"x" * (MAX_LINE + 2), b"\x00\xff garbage\n",
                     b'{"hello":"simserver","version":"' + b"9" * 100_000 + b'"}\n'):
            _poke(port, data)
        # A real-time simserver whose answer is nested too deeply: detached, said why.
        link, hello = _greet(port, "realtime")
        assert hello["mode"] == "realtime"
        link.receive(10.0)  # the first robot loop's period
        link.sock.sendall(DEEP_VALUES + b"\n")
        wait_for(lambda: "real time: message nested deeper" in robot.output(), 20,
                 "the bridge to detach")
        link.close()
        assert robot.proc.poll() is None
        # A lock-step simserver: greeted; a bad answer ends the robot program with status 1.
        link, hello = _greet(port, "lockstep")
        assert hello["mode"] == "lockstep" and hello["period"] == 0.02
        period = link.receive(10.0)
        assert "time" in period and "values" in period
        link.sock.sendall(b"\x00\xff not json\n")
        assert robot.wait_exit(30) == 1
        link.close()
        output = robot.output()
    finally:
        robot.close()
    assert "lock-step: bad message from simserver (malformed message). The robot program " \
           "stops" in output, output
    assert "Traceback" not in output and "RecursionError" not in output, output
    assert "9" * 100 not in output  # the version it did not speak, as an excerpt
    assert "simserver speaks step-wire version '99999" in output


@pytest.mark.network
def test_simserver_run_exits_1_with_one_line_on_a_bad_bridge(tmp_path, bridges):
    bridge = ScriptedBridge(greeting("lockstep", "0.02"), [GOOD_PERIOD, DEEP_VALUES])
    bridges.append(bridge)
    config = tmp_path / "robot.toml"
    config.write_text((REPO / "simserver/config/kitbot.toml").read_text() +
                      f"\n[bridge]\nport = {bridge.port}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "simserver", "run", str(config), "--lockstep", "--fast", "-q",
         "--server", f"127.0.0.1:{free_port()}", "--duration", "1", "--wait", "20"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (f"simserver: lock-step: bad message from the robot program's bridge (message "
            f"nested deeper than {MAX_DEPTH} levels); the run ends") in proc.stderr
