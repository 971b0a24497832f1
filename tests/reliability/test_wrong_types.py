"""A client that publishes an input topic with the wrong type first (a string on
``/simserver/motors/left``) cannot block the robot's doubles on it: with ``--serve``
simserver publishes every input topic itself with its type before any client connects, so
ntcore refuses the wrong-typed publisher instead of the robot's, and simserver names it once.

Without that, ntcore types a topic after its first publisher and refuses every later one of
another type for as long as the topic has any publisher, the refused one included: measured,
the robot's doubles never got through, even after the string publisher left.
"""

from __future__ import annotations

import signal
import time

import pytest

from benchmarks._livesession import LiveSession
from benchmarks._ntpeer import Peers, motors
from tests.ntutil import posix_signals, wait_for

pytestmark = [pytest.mark.network, pytest.mark.slow, posix_signals]

REPORT = "publishes it as string, not double"


def test_a_wrong_typed_first_publisher_does_not_block_the_robot_s_doubles():
    live = LiveSession("server")
    peers = Peers()
    try:
        bad = peers.start("client", live.port, "/simserver/motors/left=string:fast")
        wait_for(lambda: live.count(REPORT), 10, "the wrong-typed publisher to be reported")
        time.sleep(0.2)
        since = time.monotonic()
        peers.start("client", live.port, *motors(0.5))
        wait_for(lambda: [t for t in live.ticks if t.wall > since
                          and t.motors == {"left": 0.5, "right": 0.5}], 5,
                 "the robot's doubles on both motors, beside the string publisher")
        peers.signal(bad, signal.SIGKILL)
        time.sleep(0.3)
        assert live.ticks[-1].motors == {"left": 0.5, "right": 0.5}, live.text()
        reports = [line for _, line in live.lines if REPORT in line]
        assert len(reports) == 1, live.text()
        assert reports[0].startswith("/simserver/motors/left: client ntpeer-")
        assert f"ntpeer-{bad}" in reports[0]
        assert live.count("disconnected") == 0, live.text()
    finally:
        peers.close()
        live.close()


def test_the_bridge_owns_its_output_topics_before_any_client_can_publish_there():
    # Client mode: the robot program hosts the NT server. The bridge's NT link publishes its
    # output topics when it starts, before that server listens, so a client that publishes a
    # string on a motor topic first is refused and the bridge's doubles get through.
    import ntcore

    from simserver.bridge.realtime import NtLink
    from simserver.contract import topics
    from tests.bridge.test_bridge_core import make_bridge
    from tests.ntutil import free_port

    server = ntcore.NetworkTableInstance.create()
    hostile = ntcore.NetworkTableInstance.create()
    watcher = ntcore.NetworkTableInstance.create()
    try:
        link = NtLink(make_bridge(left='"pwm:0"', right='"pwm:1"'), server)
        port = free_port()
        server.startServer("", "127.0.0.1", 0, port)
        for inst, name in ((hostile, "hostile"), (watcher, "watcher")):
            inst.startClient4(name)
            inst.setServer("127.0.0.1", port)
            wait_for(inst.isConnected, 10, f"{name} to connect")
        bad = hostile.getStringTopic(topics.motor("left")).publish()
        bad.set("full speed")
        hostile.flush()
        time.sleep(0.5)  # its publish reaches the server before the bridge's first loop
        seen = watcher.getTopic(topics.motor("left")).genericSubscribe()
        for _ in range(20):
            link.periodic()
            server.flush()
            time.sleep(0.02)
        assert seen.getTopic().getTypeString() == "double"
        assert seen.get().type() == ntcore.NetworkTableType.kDouble
    finally:
        for inst in (hostile, watcher, server):
            ntcore.NetworkTableInstance.destroy(inst)
