"""The navX (Studica's robotpy-navx) through the bridge, in-process against the HAL sim."""

from __future__ import annotations

import time

import hal
import pytest

from simserver.bridge.core import Bridge
from simserver.config.loader import loads
from simserver.contract import topics
from tests.ntutil import wait_for

navx = pytest.importorskip("navx")

CONFIG = """
[drivetrain]
[motors.left]
type = "CIM"
[motors.right]
type = "CIM"
[gyro]
hal = "navx"
"""


def test_navx_reads_simserver_yaw_clockwise_positive_and_keeps_its_own_zero():
    # One AHRS per process (it has no close); no other test creates one.
    ahrs = navx.AHRS(navx.AHRS.NavXComType.kMXP_SPI)
    bridge = Bridge(loads(CONFIG))

    def settle(yaw: float, rate: float = 0.0) -> None:
        bridge.apply({topics.GYRO_YAW: yaw, topics.GYRO_RATE: rate})
        hal.simPeriodicBefore()
        hal.simPeriodicAfter()

    settle(30.0, 12.0)
    # navX yaw is clockwise positive; its Rotation2d is counter-clockwise, like simserver.
    wait_for(lambda: (settle(30.0, 12.0), abs(ahrs.getYaw() + 30.0) < 1e-6)[1], 5,
             "the navX to read -30 deg")
    assert ahrs.getRotation2d().degrees() == pytest.approx(30.0, abs=1e-6)
    time.sleep(0.3)  # the navX library samples on its own thread, as on the robot
    ahrs.reset()  # the navX library zeroes in software: later readings are relative
    wait_for(lambda: (settle(45.0), abs(ahrs.getYaw() + 15.0) < 1e-6)[1], 5,
             "the navX to read -15 deg after its reset at 30 deg")
