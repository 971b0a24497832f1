"""The stale-input watchdog: a program that re-sends its inputs every loop and then freezes
(SIGSTOP; it stays connected, and ntcore never notices: measured, neither side of a stopped
peer sees a disconnect within 12 s) has its motors set to 0 after ``sim.input_timeout``
(100 ms), reported once per stall; they come back when it sends again (SIGCONT). A program
that sends only changes is never timed out, however long its output stays the same.

Each peer is a real process publishing both drive motors every 20 ms (a robot loop); the
Session runs in real time on a thread of the test process, so every tick is checked.
"""

from __future__ import annotations

import signal
import time

import pytest

from benchmarks._livesession import LiveSession
from benchmarks._ntpeer import Peers, motors
from tests.ntutil import posix_signals, wait_for

pytestmark = [pytest.mark.network, pytest.mark.slow, posix_signals]

FROZEN = "frozen?"
RESUMED = "sends its inputs again"
LOOP = 0.02  # s between a peer's sets, a TimedRobot's period
FREEZE = 1.0  # s a peer stays stopped
LIMIT = 0.1 + 0.05  # s: the default timeout, plus a tick (10 ms) and scheduling slack


def started(live: LiveSession, peers: Peers, role: str, keep: bool) -> int:
    """A peer publishing 0.5 on both drive motors every loop; its pid, once the world
    applies its values."""
    pid = peers.start(role, live.port, *motors(0.5), period=LOOP, keep=keep)
    live.wait_count("robot program connected", 1, timeout=10)
    deadline = time.monotonic() + 5
    while not (live.ticks and live.ticks[-1].motors["left"] == 0.5):
        assert time.monotonic() < deadline, live.text()
        time.sleep(0.01)
    return pid


@pytest.mark.parametrize(("mode", "role"), [("server", "client"), ("client", "server")])
def test_a_frozen_program_s_motors_go_to_0_and_come_back_when_it_thaws(mode, role):
    live = LiveSession(mode)
    peers = Peers()
    try:
        pid = started(live, peers, role, keep=True)
        time.sleep(0.5)
        assert live.count(FROZEN) == 0, "a live program was taken as frozen:\n" + live.text()
        stopped = time.monotonic()
        peers.signal(pid, signal.SIGSTOP)
        time.sleep(FREEZE)
        zeroed = [t.wall for t in live.ticks if t.wall > stopped and not any(t.motors.values())]
        assert zeroed, "motors still applied while the program is frozen:\n" + live.text()
        print(f"SIGSTOP to motors at 0: {(zeroed[0] - stopped) * 1e3:.0f} ms")
        assert zeroed[0] - stopped < LIMIT
        assert all(not any(t.motors.values()) for t in live.ticks if t.wall > zeroed[0])
        assert live.count(FROZEN) == 1, live.text()

        thawed = time.monotonic()
        peers.signal(pid, signal.SIGCONT)
        back = wait_for(lambda: [t.wall for t in live.ticks
                                 if t.wall > thawed and t.motors["left"] == 0.5], 5,
                        "the motors to come back")
        print(f"SIGCONT to motors back: {(back[0] - thawed) * 1e3:.0f} ms "
              f"({'resumed' if live.count(RESUMED) else 'after a reconnect'})")
        assert live.count(FROZEN) == 1, live.text()
    finally:
        peers.close()
        live.close()


def test_a_program_that_sends_only_changes_is_never_timed_out():
    live = LiveSession("server")
    peers = Peers()
    try:
        started(live, peers, "client", keep=False)  # 0.5 crosses the wire once
        since = time.monotonic()
        time.sleep(FREEZE)
        held = [t for t in live.ticks if t.wall > since]
        assert held and all(t.motors == {"left": 0.5, "right": 0.5} for t in held)
        assert live.count(FROZEN) == 0, live.text()
    finally:
        peers.close()
        live.close()


def test_input_timeout_0_turns_the_watchdog_off():
    live = LiveSession("server", sim='input_timeout = "0 s"')
    peers = Peers()
    try:
        pid = started(live, peers, "client", keep=True)
        since = time.monotonic()
        peers.signal(pid, signal.SIGSTOP)
        time.sleep(FREEZE / 2)
        held = [t for t in live.ticks if t.wall > since]
        assert held and all(t.motors["left"] == 0.5 for t in held)
        assert live.count(FROZEN) == 0, live.text()
    finally:
        peers.close()
        live.close()
