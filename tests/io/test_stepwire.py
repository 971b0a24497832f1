"""The lock-step wire (`simserver.io.stepwire.Link`): newline-delimited JSON objects over a real
loopback TCP connection (an ephemeral port; `socket.socketpair()` gives AF_UNIX sockets, on
which Link's TCP_NODELAY cannot be set).

One end is a Link; where a test needs bytes a well-behaved peer would never send, the other end
writes them on the raw socket.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from simserver.io.stepwire import (
    MAX_LINE,
    VERSION,
    Attacher,
    Link,
    LinkError,
    LinkTimeout,
    Refused,
    attach,
)


@pytest.fixture
def sockets() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected loopback TCP pair."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname(), timeout=5)
        conn, _ = server.accept()
    try:
        yield client, conn
    finally:
        client.close()
        conn.close()


# Each Link test runs with a Link that blocks at once (real time) and one that polls first
# (lock-step's ``spin``: long enough here that messages arriving later come while it polls).
@pytest.fixture(params=[0.0, 0.5], ids=["blocking", "polling"])
def spin(request) -> float:
    return float(request.param)


@pytest.fixture
def links(sockets, spin) -> Iterator[tuple[Link, Link]]:
    a, b = Link(sockets[0], spin), Link(sockets[1], spin)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


@pytest.fixture
def receiver(sockets, spin) -> Iterator[tuple[Link, socket.socket]]:
    """A Link and the raw socket of its peer."""
    link = Link(sockets[1], spin)
    try:
        yield link, sockets[0]
    finally:
        link.close()


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def error_of(call: Callable[..., object], *args: object) -> str:
    """The message of the LinkError that ``call(*args)`` raises."""
    with pytest.raises(LinkError) as exc:
        call(*args)
    return str(exc.value)


# --- round trips --------------------------------------------------------------------------------


def test_message_round_trips_with_every_json_type(links):
    a, b = links
    message = {
        "hello": "bridge", "version": VERSION, "period": 0.02,
        "values": {
            "/simserver/motors/left": -0.5,
            "/simserver/solenoids/claw": True,
            "/simserver/robot/mode": "autonomous",
            "/simserver/ds/joystick0/axes": [0.0, -1.0, 1.0],
            "/simserver/ds/joystick0/buttons": [True, False],
        },
        "none": None, "big": 2**62, "text": "line\nbreak \"quoted\" ünïcödé ✓",
    }
    a.send(message)
    assert b.receive(1.0) == message


def test_floats_travel_bit_exact(links):
    a, b = links
    values = [0.1 + 0.2, 1 / 3, math.pi, 5e-324, 1.7976931348623157e308, -0.0, 1e-300,
              0.30000000000000004, 123456789.123456789, -2.5e-17]
    a.send({"values": values})
    got = b.receive(1.0)["values"]
    assert [bits(x) for x in got] == [bits(x) for x in values]
    assert got[0] == 0.30000000000000004 != 0.3
    assert math.copysign(1.0, got[5]) == -1.0  # the sign of zero survives


def test_non_finite_floats_do_not_break_the_link(links):
    # Python's json writes NaN/Infinity; the bridge skips non-finite values, so they must at
    # least arrive as what they were.
    a, b = links
    a.send({"v": [math.nan, math.inf, -math.inf]})
    got = b.receive(1.0)["v"]
    assert math.isnan(got[0]) and got[1:] == [math.inf, -math.inf]


def test_messages_go_both_ways_in_order(links):
    a, b = links
    for i in range(50):
        a.send({"time": i * 0.02, "values": {"i": i}})
    for i in range(50):
        assert b.receive(1.0) == {"time": i * 0.02, "values": {"i": i}}
    b.send({"bye": "done"})
    assert a.receive(1.0) == {"bye": "done"}


def test_wire_format_is_one_compact_json_line(links, sockets):
    a, _ = links
    a.send({"values": {"x": 0.1, "y": [1, 2]}})
    raw = b""
    sockets[1].settimeout(1.0)
    while not raw.endswith(b"\n"):
        raw += sockets[1].recv(4096)
    assert raw == b'{"values":{"x":0.1,"y":[1,2]}}\n'


def test_nodelay_is_set(sockets):
    Link(sockets[0])
    assert sockets[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


# --- framing ------------------------------------------------------------------------------------


def test_several_messages_in_one_chunk_are_returned_one_by_one(receiver):
    link, peer = receiver
    peer.sendall(b'{"a":1}\n{"b":[2]}\n{"c":{"d":3.5}}\n')
    assert link.receive(1.0) == {"a": 1}
    assert link.receive(1.0) == {"b": [2]}
    assert link.receive(1.0) == {"c": {"d": 3.5}}
    assert error_of(link.receive, 0.05) == "no message for 0.05 s"


def test_message_split_across_chunks_is_reassembled(receiver):
    link, peer = receiver
    peer.sendall(b'{"values":{"/simserver/gyro/yaw":1')
    assert error_of(link.receive, 0.1) == "no message for 0.1 s"  # half is not a message...
    peer.sendall(b'2.5,"k":"\xc3')  # (split inside a UTF-8 character, too)
    assert error_of(link.receive, 0.1) == "no message for 0.1 s"
    peer.sendall(b'\xa9"}}\n{"next"')
    # ...and the half kept through the timeouts completes it.
    assert link.receive(1.0) == {"values": {"/simserver/gyro/yaw": 12.5, "k": "é"}}
    peer.sendall(b":true}\n")
    assert link.receive(1.0) == {"next": True}


def test_message_sent_a_byte_at_a_time_is_received_whole(receiver):
    link, peer = receiver
    data = json.dumps({"time": 0.02, "values": {"x": 0.1 + 0.2}}).encode() + b"\n"

    def trickle() -> None:
        for i in range(len(data)):
            peer.sendall(data[i:i + 1])
            time.sleep(0.001)

    sender = threading.Thread(target=trickle)
    sender.start()
    try:
        got = link.receive(5.0)
    finally:
        sender.join(5.0)
    assert got == {"time": 0.02, "values": {"x": 0.1 + 0.2}}
    assert bits(got["values"]["x"]) == bits(0.1 + 0.2)


def test_message_arriving_later_within_the_timeout_is_received(receiver):
    link, peer = receiver
    timer = threading.Timer(0.2, peer.sendall, args=(b'{"late":true}\n',))
    timer.start()
    try:
        start = time.monotonic()
        assert link.receive(5.0) == {"late": True}
        assert 0.15 <= time.monotonic() - start < 2.0
    finally:
        timer.join()


def test_a_polling_link_polls_without_sleeping_then_blocks(sockets):
    link, peer = Link(sockets[1], spin=0.3), sockets[0]
    timer = threading.Timer(0.15, peer.sendall, args=(b'{"n":1}\n',))
    timer.start()
    try:
        cpu = time.thread_time()
        assert link.receive(5.0) == {"n": 1}
        assert time.thread_time() - cpu > 0.03  # it polled: its thread ran while waiting
    finally:
        timer.join()
    timer = threading.Timer(0.6, peer.sendall, args=(b'{"n":2}\n',))
    timer.start()
    try:
        start, cpu = time.monotonic(), time.thread_time()
        assert link.receive(5.0) == {"n": 2}  # after its spin: the blocking read gets it
        assert time.monotonic() - start >= 0.5
        assert time.thread_time() - cpu < 0.3 + 0.2  # it polled for its spin only
    finally:
        timer.join()


# --- failures -----------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [0.05, 0.3])
def test_receive_times_out_with_link_error_after_about_the_timeout(links, timeout):
    _, b = links
    start = time.monotonic()
    message = error_of(b.receive, timeout)
    elapsed = time.monotonic() - start
    assert message == f"no message for {timeout:g} s"
    assert timeout * 0.9 <= elapsed < timeout + 0.5


def test_peer_close_is_connection_closed(links):
    a, b = links
    a.close()
    assert error_of(b.receive, 2.0) == "connection closed"


def test_messages_sent_before_the_peer_closed_are_still_received(receiver):
    link, peer = receiver
    peer.sendall(b'{"bye":"end of run"}\n{"partial"')
    peer.close()
    assert link.receive(1.0) == {"bye": "end of run"}
    # A partial message at the close is not delivered.
    assert error_of(link.receive, 1.0) == "connection closed"


def test_peer_close_is_noticed_immediately_not_at_the_timeout(links):
    a, b = links
    a.close()
    start = time.monotonic()
    assert error_of(b.receive, 10.0) == "connection closed"
    assert time.monotonic() - start < 1.0


def test_send_to_a_closed_peer_raises_link_error(links, sockets):
    a, b = links
    b.close()

    def send_until_it_fails() -> None:
        # The first sends may still be buffered by the kernel; a reset follows.
        for _ in range(200):
            a.send({"values": {"x": 1.0}})
            time.sleep(0.005)

    assert error_of(send_until_it_fails).startswith("connection lost (")


def test_send_on_a_closed_link_raises_link_error(links):
    a, _ = links
    a.close()
    assert error_of(a.send, {"x": 1}).startswith("connection lost (")
    a.close()  # closing twice is harmless


@pytest.mark.parametrize("line", [
    b"{not json}", b'{"a":1', b'{"a":1}}', b"", b"   ", b"\xff\xfe{}", b"{'a': 1}",
], ids=repr)
def test_malformed_json_is_a_link_error(receiver, line):
    link, peer = receiver
    peer.sendall(line + b"\n")
    assert error_of(link.receive, 1.0) == "malformed message"


@pytest.mark.parametrize("line", [b"[1,2]", b'"hello"', b"3", b"null", b"true", b"[]"],
                         ids=repr)
def test_json_that_is_not_an_object_is_a_link_error(receiver, line):
    link, peer = receiver
    peer.sendall(line + b"\n")
    assert error_of(link.receive, 1.0) == "malformed message"


def test_a_malformed_line_is_consumed_and_the_next_message_still_arrives(receiver):
    link, peer = receiver
    peer.sendall(b'garbage\n[1]\n{"ok":1}\n')
    assert error_of(link.receive, 1.0) == "malformed message"
    assert error_of(link.receive, 1.0) == "malformed message"
    assert link.receive(1.0) == {"ok": 1}


def _send_in_background(peer: socket.socket, data: bytes) -> threading.Thread:
    """sendall() of more than the socket buffers hold blocks until the reader reads."""
    def send() -> None:
        with contextlib.suppress(OSError):  # the reader gave up and closed
            peer.sendall(data)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_over_long_line_is_a_link_error(receiver):
    link, peer = receiver
    sender = _send_in_background(peer, b'{"x":"' + b"a" * (MAX_LINE + 10))  # no newline
    try:
        assert error_of(link.receive, 10.0) == "message too long"
    finally:
        link.close()
        sender.join(5.0)
    assert not sender.is_alive()


def test_over_long_line_with_its_newline_is_a_link_error(receiver):
    link, peer = receiver
    sender = _send_in_background(
        peer, json.dumps({"x": "a" * (MAX_LINE + 10)}).encode() + b"\n")
    try:
        assert error_of(link.receive, 10.0) == "message too long"
    finally:
        link.close()
        sender.join(5.0)


def test_long_message_under_the_limit_is_received(links):
    a, b = links
    big = {"values": {f"/simserver/k{i}": i * 0.1 for i in range(20000)}}
    assert len(json.dumps(big, separators=(",", ":"))) < MAX_LINE
    sender = threading.Thread(target=a.send, args=(big,))
    sender.start()
    try:
        assert b.receive(10.0) == big
    finally:
        sender.join(5.0)


# --- real time: polling, greeting, attaching -------------------------------------------------


def test_receive_zero_returns_what_has_arrived_and_times_out_otherwise(links):
    a, b = links
    with pytest.raises(LinkTimeout):
        b.receive(0.0)
    a.send({"n": 1})
    time.sleep(0.05)
    assert b.receive(0.0) == {"n": 1}
    with pytest.raises(LinkTimeout):
        b.receive(0.0)
    a.send({"n": 2})  # the link is still usable after a timeout
    assert b.receive(1.0) == {"n": 2}


def _bridge_stub(greeting: dict | None) -> tuple[socket.socket, threading.Thread, list[dict]]:
    """A listening socket that answers one simserver greeting with ``greeting`` (None: stays
    silent); the greetings it got are appended to the returned list."""
    server = socket.create_server(("127.0.0.1", 0))
    got: list[dict] = []

    def serve() -> None:
        conn, _ = server.accept()
        link = Link(conn)
        got.append(link.receive(5.0))
        if greeting is not None:
            link.send(greeting)
        time.sleep(0.5)
        link.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread, got


def test_attach_greets_with_the_mode_and_returns_the_period():
    server, thread, got = _bridge_stub({"hello": "bridge", "version": VERSION, "period": 0.02,
                                        "mode": "realtime"})
    with server:
        link, period = attach("127.0.0.1", server.getsockname()[1], "realtime", 2.0)
        link.close()
    thread.join(5)
    assert period == 0.02
    assert got == [{"hello": "simserver", "version": VERSION, "mode": "realtime"}]


def test_attach_reports_the_bridges_refusal():
    server, thread, _ = _bridge_stub({"hello": "bridge", "version": VERSION,
                                      "refused": "another simserver is attached"})
    with server, pytest.raises(Refused, match="another simserver"):
        attach("127.0.0.1", server.getsockname()[1], "realtime", 2.0)
    thread.join(5)


@pytest.mark.parametrize("greeting", [
    {"hello": "bridge", "version": VERSION, "period": 0.02, "mode": "lockstep"},  # wrong mode
    {"hello": "bridge", "version": VERSION, "period": -1.0, "mode": "realtime"},
    {"hello": "other"},
])
def test_attach_rejects_a_wrong_greeting(greeting):
    server, thread, _ = _bridge_stub(greeting)
    with server, pytest.raises(LinkError) as info:
        attach("127.0.0.1", server.getsockname()[1], "realtime", 2.0)
    assert not isinstance(info.value, Refused)
    thread.join(5)


def test_attacher_keeps_trying_until_a_bridge_listens():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    attacher = Attacher("127.0.0.1", port, "realtime", 2.0, interval=0.05)
    attacher.start()
    try:
        time.sleep(0.3)
        assert attacher.take() is None  # nothing listens yet
        server = socket.create_server(("127.0.0.1", port))
        with server:
            conn_thread = threading.Thread(target=lambda: _answer(server), daemon=True)
            conn_thread.start()
            deadline = time.monotonic() + 5
            found = None
            while found is None and time.monotonic() < deadline:
                found = attacher.take()
                time.sleep(0.02)
            assert found is not None and found[1] == 0.01
            found[0].close()
            conn_thread.join(5)
    finally:
        attacher.stop()


def _answer(server: socket.socket) -> None:
    conn, _ = server.accept()
    link = Link(conn)
    link.receive(5.0)
    link.send({"hello": "bridge", "version": VERSION, "period": 0.01, "mode": "realtime"})
    time.sleep(0.3)
    link.close()
