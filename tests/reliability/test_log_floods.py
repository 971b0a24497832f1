"""A client cannot flood simserver's log: a line it can trigger again and again (the robot
mode toggled every 10 ms, a wrong-typed publisher reconnecting, a program freezing and
thawing) is written at most ``lograte.BURST`` times per ``lograte.WINDOW`` s per cause, and
the next one written says how many were left out (the run's end says the rest)."""

from __future__ import annotations

import time

import pytest

from benchmarks._livesession import LiveSession
from benchmarks._ntpeer import Peers
from simserver.util.lograte import BURST
from tests.ntutil import posix_signals

pytestmark = [pytest.mark.network, pytest.mark.slow, posix_signals]

TOGGLE = 2.0  # s


def test_a_client_toggling_the_robot_mode_writes_a_handful_of_lines():
    live = LiveSession("server")
    peers = Peers()
    try:
        peers.start("client", live.port, "/simserver/robot/mode=string~:teleop,disabled",
                    period=0.01)
        time.sleep(TOGGLE)
        assert live.session.robot_mode in ("teleop", "disabled"), live.text()
    finally:
        peers.close()
        live.close()
    modes = [line for _, line in live.lines if line.startswith("robot program is")]
    assert 1 <= len(modes) <= BURST, live.text()
    left_out = [line for _, line in live.lines if "about the robot mode were left out" in line]
    assert len(left_out) == 1, live.text()
    assert int(left_out[0].split()[0]) > 50, left_out  # ~100 changes/s were seen
