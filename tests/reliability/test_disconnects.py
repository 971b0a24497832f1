"""Values from a robot program (or NT client) that is gone are never applied: after simserver
logs "disconnected: motors to 0", every motor stays at 0 until a program connects again.

Each peer is a real process publishing both drive motors every 2 ms with ``keepDuplicates``
(every set crosses the wire), alternating between two values (so a subscriber without
keepDuplicates gets every one too) and killed with SIGKILL mid-stream, so its last values arrive
together with its disconnect. The Session runs in real time on a thread of the test process,
so every tick's motors are checked against the log lines written before that tick.
"""

from __future__ import annotations

import signal
import time

import pytest

from benchmarks._livesession import LiveSession, Tick
from benchmarks._ntpeer import Peers, motors
from tests.ntutil import posix_signals

pytestmark = [pytest.mark.network, pytest.mark.slow, posix_signals]

LEFT = "disconnected: motors to 0"
ARRIVED = "robot program connected"  # [: world reset]
STREAM = 0.05  # s a peer publishes after simserver saw it connect, before it is killed
SETTLE = 0.05  # s after the disconnect is logged before the next peer starts


def cycle(live: LiveSession, peers: Peers, role: str, k: int) -> list[Tick]:
    """Peer ``k`` connects, publishes, is SIGKILLed; once simserver logged it leaving, wait
    SETTLE. The ticks after that line that applied a non-zero motor (none when no value of
    the dead peer is applied after its disconnect)."""
    pid = peers.start(role, live.port, *motors(0.5 + 0.001 * (k % 100), wobble=True))
    live.wait_count(ARRIVED, k + 1, timeout=10)
    time.sleep(STREAM)
    peers.signal(pid, signal.SIGKILL)
    left = live.wait_count(LEFT, k + 1, timeout=10)
    time.sleep(SETTLE)
    return [t for t in list(live.ticks) if t.wall > left and any(t.motors.values())]


@pytest.mark.parametrize(("mode", "role", "cycles"), [("server", "client", 200),
                                                      ("client", "server", 30)])
def test_no_motor_moves_after_a_killed_publisher_is_seen_leaving(mode, role, cycles):
    live = LiveSession(mode)
    peers = Peers()
    try:
        for k in range(cycles):
            ghosts = cycle(live, peers, role, k)
            assert not ghosts, (f"cycle {k}: {len(ghosts)} ticks applied {ghosts[-1].motors} "
                                f"after the disconnect:\n{live.text()[-1500:]}")
            assert live.count(ARRIVED) == k + 1, (
                f"cycle {k}: a connection logged that no peer made:\n{live.text()[-1500:]}")
        assert live.count(LEFT) == cycles
    finally:
        peers.close()
        live.close()
