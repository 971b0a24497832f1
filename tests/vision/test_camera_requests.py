"""Settings robot code writes to a camera's topics, read by the publishers (real ntcore
server and client on loopback, in this process): every modelled key becomes the request
the docs name; unmodelled keys are logged once per camera and key at warning level; bad
values (NaN, inf, wrong types, huge arrays, out-of-range indices) are logged once and
change nothing."""

from __future__ import annotations

import logging
import math
import time

import ntcore
import pytest
from wpimath.geometry import Rotation3d, Transform3d, Translation3d

from simserver.field.seasons import season_fiducials
from simserver.io.limelight import LimelightPublisher
from simserver.models.camera import CameraRequest, CameraSpec, PipelineSpec
from tests.ntutil import client, free_port, wait_for

pytestmark = pytest.mark.network

SPEC = CameraSpec("front", Transform3d(Translation3d(0.3, 0, 0.5), Rotation3d()),
                  pipelines=(PipelineSpec(960, 720, 30.0), PipelineSpec(640, 480, 60.0)))
TABLE = "/limelight-front"


@pytest.fixture
def pair():
    port = free_port()
    robot = ntcore.NetworkTableInstance.create()
    robot.startServer("", "127.0.0.1", 0, port)
    sim = client(port, "simserver")
    wait_for(sim.isConnected, 10, "connection")
    pub = LimelightPublisher(sim, SPEC, season_fiducials("2026"), lambda t: t)
    # Values set before simserver's subscription reaches the server would be lost: wait
    # until a probe value gets through.
    probe = robot.getDoubleTopic(f"{TABLE}/probe").publish(
        ntcore.PubSubOptions(keepDuplicates=True))

    def through() -> bool:
        probe.set(1.0)
        robot.flush()
        time.sleep(0.02)
        return bool(list(pub._requests.read()))

    wait_for(through, 10, "simserver's subscription")
    try:
        yield robot, pub
    finally:
        pub.close()
        ntcore.NetworkTableInstance.destroy(sim)
        ntcore.NetworkTableInstance.destroy(robot)


def send(robot: ntcore.NetworkTableInstance, values: list[tuple[str, str, object]]) -> None:
    """Publish each (key, NT type, value) on the Limelight table, one flush per value."""
    pubs = {}
    for key, nt_type, value in values:
        pub = pubs.get((key, nt_type))
        if pub is None:
            pub = pubs[(key, nt_type)] = robot.getTopic(f"{TABLE}/{key}").genericPublish(
                nt_type, ntcore.PubSubOptions(sendAll=True, keepDuplicates=True))
        setter = {"double": pub.setDouble, "double[]": pub.setDoubleArray,
                  "string": pub.setString, "string[]": pub.setStringArray}[nt_type]
        setter(value)
        robot.flush()
        time.sleep(0.02)


def collect(pub: LimelightPublisher, count: int) -> list[CameraRequest]:
    got: list[CameraRequest] = []
    wait_for(lambda: got.extend(pub.read_requests()) or len(got) >= count, 10, "requests")
    time.sleep(0.1)
    return got + pub.read_requests()


def test_modelled_keys_become_requests(pair):
    robot, pub = pair
    send(robot, [("pipeline", "double", 1.0), ("throttle_set", "double", 100.0),
                 ("fiducial_id_filters_set", "double[]", [25.0, 26.0]),
                 ("fiducial_id_filters_set", "double[]", [])])
    assert collect(pub, 4) == [
        CameraRequest("front", "pipeline", 1), CameraRequest("front", "throttle", 100),
        CameraRequest("front", "tag_filter", [25, 26]),
        CameraRequest("front", "tag_filter", None)]


def test_unmodelled_keys_are_warned_once_per_key(pair, caplog):
    robot, pub = pair
    caplog.set_level(logging.INFO, "simserver.vision")
    send(robot, [("stream", "double", 1.0), ("stream", "double", 2.0),
                 ("snapshot", "double", 1.0), ("keystone_set", "double[]", [0.1, 0.2]),
                 ("llrobot", "double[]", [1.0, 2.0]), ("snapshot", "double", 2.0)])
    time.sleep(0.3)
    assert pub.read_requests() == []
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    for key in ("stream", "snapshot", "keystone_set", "llrobot"):
        mine = [(level, m) for level, m in said if f"{TABLE}/{key} =" in m]
        assert len(mine) == 1 and mine[0][0] == logging.WARNING, (key, said)
        assert "does not model" in mine[0][1]


BAD = [
    ("pipeline", "double", math.nan), ("pipeline", "double", math.inf),
    ("pipeline", "double", -1.0), ("pipeline", "double", 2.0), ("pipeline", "double", 0.5),
    ("throttle_set", "double", -3.0), ("throttle_set", "double", 1e300),
    ("priorityid", "string", "seven"), ("ledMode", "double", 99.0),
    ("fiducial_id_filters_set", "double[]", [1.0, math.nan]),
    ("fiducial_id_filters_set", "double[]", [float(i) for i in range(20000)] + [-1.0]),
    ("camerapose_robotspace_set", "double[]", [0.0] * 5),
    ("camerapose_robotspace_set", "double[]", [1e9, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ("camerapose_robotspace_set", "string[]", ["a"] * 6),
]


def test_bad_values_are_reported_once_and_change_nothing(pair, caplog):
    robot, pub = pair
    caplog.set_level(logging.WARNING, "simserver.vision")
    mount = pub._mount
    send(robot, BAD)
    time.sleep(0.3)
    assert pub.read_requests() == []
    assert pub._mount == mount and pub._priority == -1 and pub.led_mode == 0
    keys = {key for key, _, _ in BAD}
    for key in keys:
        mine = [r for r in caplog.records if f"{TABLE}/{key} =" in r.getMessage()]
        assert len(mine) == 1 and mine[0].levelno == logging.WARNING, (key, mine)
        assert len(mine[0].getMessage()) < 400  # an excerpt of the value, not all of it
    send(robot, [("pipeline", "double", 1.0)])  # and good values still work afterwards
    assert collect(pub, 1) == [CameraRequest("front", "pipeline", 1)]
