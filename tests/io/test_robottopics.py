"""Reading a robot program's own topics over real NetworkTables (a server and a client on
loopback), with their server timestamps, and turning those into simulated time.

Tolerances: timestamps set explicitly on the server arrive exactly (integer µs); the
conversion to simulated time with ntcore's server time offset is good to a few ms on loopback,
so it is asserted to 20 ms; from the lock-step clock it is exact to float rounding (1e-9 s).
"""

from __future__ import annotations

import math
import struct

import ntcore
import pytest
from wpimath.geometry import Pose2d

from simserver.config.loader import load_default
from simserver.io.nt import Endpoint, NtAdapter
from simserver.io.robottopics import RobotTopicReader, decode_pose
from tests.ntutil import client, free_port, wait_for

pytestmark = pytest.mark.network


@pytest.fixture
def robot_server(tmp_path):
    """An NT server on loopback playing the robot program (its own publishers are local)."""
    port = free_port()
    inst = ntcore.NetworkTableInstance.create()
    inst.startServer(str(tmp_path / "nt.json"), "127.0.0.1", 0, port)
    yield inst, port
    ntcore.NetworkTableInstance.destroy(inst)


def connected_reader(port: int, prefixes: list[str], exclude: tuple[str, ...] = ()
                     ) -> tuple[ntcore.NetworkTableInstance, RobotTopicReader]:
    inst = client(port, "simserver-test")
    reader = RobotTopicReader(inst, prefixes, exclude)
    wait_for(inst.isConnected, 10, "the client to connect")
    return inst, reader


def collect(reader: RobotTopicReader, until, timeout: float = 5.0):
    got = []

    def done():
        got.extend(reader.read())
        return until(got)

    wait_for(done, timeout, "robot values")
    return got


def test_every_value_arrives_with_the_timestamp_it_was_published_with(robot_server):
    server, port = robot_server
    field = server.getDoubleArrayTopic("/SmartDashboard/Field/Robot").publish()
    odo = server.getStructTopic("/kitbot/odometry", Pose2d).publish()
    other = server.getDoubleTopic("/elsewhere/x").publish()
    field.set([0.0, 0.0, 0.0], 500_000)
    odo.set(Pose2d(), 500_000)
    inst, reader = connected_reader(port, ["/SmartDashboard/Field/Robot", "/kitbot/"])
    try:
        collect(reader, lambda got: sum(v.topic == "/kitbot/odometry" for v in got) >= 1)
        # 100 periods of 20 ms, published in a burst (as a --fast lock-step robot does)
        for i in range(100):
            stamp = 1_000_000 + 20_000 * i
            field.set([1.0 + 0.01 * i, 2.0, 0.5 * i], stamp)
            odo.set(Pose2d(1.0 + 0.01 * i, 2.0, 0.01 * i), stamp)
            other.set(float(i), stamp)
        got = collect(reader, lambda g: sum(v.topic == "/kitbot/odometry" for v in g) >= 100)
    finally:
        reader.close()
        ntcore.NetworkTableInstance.destroy(inst)
    by_topic: dict[str, list] = {}
    for v in got:
        by_topic.setdefault(v.topic, []).append(v)
    assert set(by_topic) == {"/SmartDashboard/Field/Robot", "/kitbot/odometry"}  # not /elsewhere
    for topic, nt_type in (("/SmartDashboard/Field/Robot", "double[]"),
                           ("/kitbot/odometry", "struct:Pose2d")):
        values = by_topic[topic]
        assert len(values) == 100
        assert [round(v.server_time * 1e6) for v in values] == [
            1_000_000 + 20_000 * i for i in range(100)]
        assert {v.type for v in values} == {nt_type}
        assert all(math.isnan(v.sim_time) for v in values)  # the adapter fills it in
    x, y, heading = decode_pose("struct:Pose2d", by_topic["/kitbot/odometry"][57].value)
    assert (x, y, heading) == pytest.approx((1.57, 2.0, 0.57), abs=1e-12)
    x, y, heading = decode_pose("double[]", by_topic["/SmartDashboard/Field/Robot"][57].value)
    assert (x, y, heading) == pytest.approx((1.57, 2.0, math.radians(28.5)), abs=1e-12)


def test_excluded_prefixes_and_own_values_are_not_reported(robot_server):
    server, port = robot_server
    inst, reader = connected_reader(port, ["/"], exclude=("/simserver/",))
    try:
        mine = inst.getDoubleTopic("/mine").publish()
        mine.set(1.0)
        inst.flush()
        motor = server.getDoubleTopic("/simserver/motors/left").publish()
        motor.set(0.5)
        flag = server.getBooleanTopic("/robot/flag").publish()
        flag.set(True)
        got = collect(reader, lambda g: any(v.topic == "/robot/flag" for v in g))
    finally:
        reader.close()
        ntcore.NetworkTableInstance.destroy(inst)
    assert [v.topic for v in got] == ["/robot/flag"]
    assert got[0].value is True and got[0].type == "boolean"


def test_decode_pose_rejects_what_is_not_a_pose():
    assert decode_pose("double[]", [1.0, 2.0]) is None
    assert decode_pose("double[]", [1.0, math.nan, 0.0]) is None
    assert decode_pose("double", 1.0) is None
    assert decode_pose("struct:Pose2d", b"\0" * 23) is None
    assert decode_pose("struct:Pose2d", struct.pack("<3d", 1.0, 2.0, math.inf)) is None
    # a Field2d with several poses: the first is the robot
    assert decode_pose("double[]", [1.0, 2.0, 90.0, 5.0, 5.0, 0.0]) == pytest.approx(
        (1.0, 2.0, math.pi / 2))


def test_adapter_gives_each_value_the_simulated_time_it_was_published_at(robot_server):
    server, port = robot_server
    adapter = NtAdapter(load_default(), Endpoint("client", "127.0.0.1", port))
    pub = server.getStructTopic("/kitbot/odometry", Pose2d).publish()
    try:
        adapter.watch_robot(["/kitbot/odometry"])
        wait_for(lambda: adapter.connected, 10, "the adapter to connect")
        wait_for(lambda: adapter.inst.getServerTimeOffset() is not None, 10, "a time offset")
        # Real time: from ntcore's offset; simulated "now" (5.0 s) is the server's now.
        now_us = ntcore._now()
        pub.set(Pose2d(1, 2, 0.1), now_us - 300_000)  # published 0.3 s ago
        got, read_us = collect_adapter(adapter, now=5.0)
        # 0.3 s before publishing; publishing came (read_us - now_us) before "now"
        expected = 5.0 - 0.3 - (read_us - now_us) * 1e-6
        assert got.sim_time == pytest.approx(expected, abs=0.005)
        # With the bridge: its clock pairs simulated 3.0 s with the robot loop at T0 (a later
        # time: NT drops a value stamped before the topic's current one), 20 ms periods. A
        # value set in that loop saw the world at 3.0 s; one set between loops (commands-v2's
        # scheduler, 5 ms later) saw the sensors of the period's end, 3.02 s.
        t0 = now_us * 1e-6 + 10.0
        adapter.clock = (3.0, t0, 0.02)
        for offset, expected in ((0.0, 3.0), (0.005, 3.02), (0.02, 3.02), (0.465, 3.48),
                                 (-0.0004, 3.0)):
            pub.set(Pose2d(1, 2, offset), round((t0 + 0.5 + offset) * 1e6))
            got, _ = collect_adapter(adapter, now=3.5)
            assert got.sim_time == pytest.approx(expected + 0.5, abs=1e-9), offset
            t0 += 1.0  # each value later than the last
            adapter.clock = (3.0, t0, 0.02)
    finally:
        adapter.close()


def collect_adapter(adapter: NtAdapter, now: float):
    """The one value the adapter receives, and the ntcore time (µs) of the first poll: the
    moment simulated time ``now`` refers to (later polls at the same ``now`` keep it)."""
    got = []
    read = [0]

    def done():
        read[0] = read[0] or ntcore._now()
        got.extend(adapter.robot_values(now))
        return got

    wait_for(done, 5, "a value through the adapter")
    (value,) = got
    return value, read[0]
