"""Floods on the inputs of a served simserver: the tick rate holds and no NaN reaches the state.

``simserver run --serve 127.0.0.1:<free port>`` (kitbot plus an elevator and a solenoid, real
time, tick 10 ms) is flooded by real ntcore clients, all at once for FLOOD seconds:

- garbage doubles on both drive motor topics (NaN, ±inf, ±1e308, ±5, -0.0, subnormals): at
  least 10,000 sets per second in total, sent with ``sendAll`` so every value crosses the wire;
- wrong types: strings on the elevator's motor topic and integer arrays on the solenoid topic
  (each client the first publisher of its topic, so the topics carry the wrong type);
- 2 MiB double arrays, repeatedly: through ntcore on an unknown topic and a second solenoid
  name (ntcore's client refuses to send a value that large: measured, it drops it and may
  reconnect), and sent raw over the NT4 WebSocket protocol as a 2.25 MiB binary frame on the
  left motor's topic (double[] against its double type), which does reach simserver's server:
  it closes that connection (1009, message too big), and the flooder connects again;
- 500 unknown topics under /simserver/ and elsewhere, each set over and over.

An observer client (its own connection) receives every sample of /simserver/time, the
heartbeat, the pose and every sensor. Asserted, with the margins stated at each check: the tick
rate during the flood stays within 20 % of the 100 ticks/s and of the rate measured just before
it, simulated time keeps up with wall time, no gap between ticks exceeds 0.3 s, every received
value is finite, simserver logs each kind of bad input about once per topic, and it exits 0
on Ctrl-C afterwards.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import struct
import threading
import time
from dataclasses import dataclass, field

import ntcore
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect
from wpimath.geometry import Pose2d

from simserver.config.loader import default_config_text
from tests.ntutil import SimserverProcess, client, free_port, wait_for
from tests.worlds import LIFT, TWO_KRAKENS

pytestmark = [pytest.mark.network, pytest.mark.slow]

BEFORE, FLOOD, AFTER = 3.0, 6.0, 2.0  # s of wall time
SETS_PER_S = 10_000  # garbage sets per second on the motor topics, total
TICKS_PER_S = 100.0  # the kitbot's 10 ms tick
RATE_MARGIN = 0.8  # the tick rate may drop 20 % under the flood, no more
MAX_GAP = 0.3  # s between consecutive ticks seen by the observer (simserver's catch-up limit
# is 0.25 s of lag)
BIG = [1.0] * (2 * 1024 * 1024 // 8)  # 2 MiB of doubles
SEND_ALL = ntcore.PubSubOptions(periodic=0.001, sendAll=True, keepDuplicates=True)
OBSERVE = ntcore.PubSubOptions(periodic=0.001, sendAll=True, pollStorage=4096)
GARBAGE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5.0, -5.0, -0.0, 5e-324, 1.5, -1.0001]
SENSORS = ["/simserver/time", "/simserver/battery/voltage", "/simserver/battery/current",
           "/simserver/gyro/yaw", "/simserver/gyro/rate", "/simserver/encoders/left/position",
           "/simserver/encoders/left/velocity", "/simserver/encoders/right/position",
           "/simserver/encoders/right/velocity", "/simserver/currents/left",
           "/simserver/currents/right", "/simserver/currents/lift",
           "/simserver/mechanisms/lift/height", "/simserver/mechanisms/lift/velocity"]

NT4_SUBPROTOCOL = "v4.1.networktables.first.wpi.edu"
DOUBLE_ARRAY = 17  # NT4 type id


def nt4_value_frame(pubuid: int, values: list[float]) -> bytes:
    """An NT4 binary (MessagePack) value message: [pubuid, timestamp 0, double[], values]."""
    out = bytearray(b"\x94\xcd" + struct.pack(">H", pubuid) + b"\x00" + bytes([DOUBLE_ARRAY]))
    out += b"\xdd" + struct.pack(">I", len(values))
    for v in values:
        out += b"\xcb" + struct.pack(">d", v)
    return bytes(out)


RAW_FRAME = nt4_value_frame(7, BIG)  # 2.25 MiB


CONFIG = default_config_text() + TWO_KRAKENS + LIFT + """
[solenoids.claw]
initial = false
"""


@dataclass
class Flood:
    """Flooding clients on their own threads; counts what they sent."""

    port: int
    stop: threading.Event = field(default_factory=threading.Event)
    sets: int = 0
    big_sets: int = 0
    other_sets: int = 0
    raw_frames: int = 0
    raw_refused: int = 0
    threads: list[threading.Thread] = field(default_factory=list)
    instances: list[ntcore.NetworkTableInstance] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def _client(self, name: str) -> ntcore.NetworkTableInstance:
        inst = client(self.port, name)
        self.instances.append(inst)
        wait_for(inst.isConnected, 20, f"flood client {name} to connect")
        return inst

    def start(self, seconds: float) -> None:
        garbage = self._client("flood-garbage")
        wrong = self._client("flood-wrong-types")
        big = self._client("flood-big")
        unknown = self._client("flood-unknown")
        # Each wrong-typed topic is published first by its flooder, so it carries that type.
        left = garbage.getDoubleTopic("/simserver/motors/left").publish(SEND_ALL)
        right = garbage.getDoubleTopic("/simserver/motors/right").publish(SEND_ALL)
        lift = wrong.getStringTopic("/simserver/motors/lift").publish(SEND_ALL)
        claw = wrong.getIntegerArrayTopic("/simserver/solenoids/claw").publish(SEND_ALL)
        huge = [big.getDoubleArrayTopic(t).publish(SEND_ALL)
                for t in ("/simserver/huge", "/simserver/solenoids/claw2")]
        names = [f"/simserver/unknown/{k}" for k in range(250)] + [
            f"/junk/{k}/value" for k in range(250)]
        others = [unknown.getDoubleTopic(n).publish(SEND_ALL) for n in names]
        rng = random.Random(0)
        end = time.monotonic() + seconds

        def guard(body):  # an exception in a thread must fail the test
            def run() -> None:
                try:
                    body()
                except BaseException as exc:
                    self.errors.append(exc)
            return run

        def garbage_loop() -> None:
            batch = SETS_PER_S // 1000  # per millisecond
            next_ms = time.monotonic()
            while not self.stop.is_set() and time.monotonic() < end:
                for _ in range(batch):
                    v = rng.choice(GARBAGE)
                    (left if self.sets % 2 else right).set(v)
                    self.sets += 1
                garbage.flush()
                next_ms += 0.001
                delay = next_ms - time.monotonic()
                if delay > 0:
                    time.sleep(delay)

        def wrong_loop() -> None:
            k = 0
            while not self.stop.is_set() and time.monotonic() < end:
                lift.set(f"full speed {k}")
                claw.set([k, -k, 2**62])
                k += 1
                self.other_sets += 2
                wrong.flush()
                time.sleep(0.0005)

        def big_loop() -> None:
            while not self.stop.is_set() and time.monotonic() < end:
                for pub in huge:
                    BIG[0] += 1.0
                    pub.set(BIG)
                    self.big_sets += 1
                big.flush()
                time.sleep(0.25)

        def unknown_loop() -> None:
            k = 0
            while not self.stop.is_set() and time.monotonic() < end:
                for pub in others:
                    pub.set(math.nan if k % 3 == 0 else float(k))
                k += 1
                self.other_sets += len(others)
                unknown.flush()
                time.sleep(0.005)

        def raw_loop() -> None:
            publish = json.dumps([{"method": "publish", "params": {
                "name": "/simserver/motors/left", "pubuid": 7, "type": "double[]",
                "properties": {}}}])
            while not self.stop.is_set() and time.monotonic() < end:
                try:
                    with connect(f"ws://127.0.0.1:{self.port}/nt/flood-raw",
                                 subprotocols=[NT4_SUBPROTOCOL], max_size=None,
                                 open_timeout=5) as ws:
                        ws.send(publish)
                        self.raw_frames += 1  # counted before: the close may interrupt it
                        ws.send(RAW_FRAME)
                        while True:  # until the server closes the connection
                            ws.recv(timeout=2.0)
                except ConnectionClosed as exc:
                    if exc.rcvd is not None and exc.rcvd.code == 1009:
                        self.raw_refused += 1
                except TimeoutError:
                    pass
                time.sleep(0.2)

        for body in (garbage_loop, wrong_loop, big_loop, unknown_loop, raw_loop):
            t = threading.Thread(target=guard(body), daemon=True)
            t.start()
            self.threads.append(t)

    def join(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)
        for inst in self.instances:
            ntcore.NetworkTableInstance.destroy(inst)


def _rate(samples: list, t0: float, t1: float) -> tuple[float, float, float]:
    """(ticks per wall s, simulated s per wall s, largest gap s) of /simserver/time samples
    received in [t0, t1] (local ntcore µs converted to s)."""
    window = [s for s in samples if t0 <= s.time * 1e-6 <= t1]
    assert len(window) >= 2, f"no ticks received between {t0} and {t1}"
    wall = (window[-1].time - window[0].time) * 1e-6
    sim = window[-1].value - window[0].value
    gaps = [(b.time - a.time) * 1e-6 for a, b in itertools.pairwise(window)]
    return (len(window) - 1) / wall, sim / wall, max(gaps)


def test_floods_of_garbage_wrong_types_huge_arrays_and_unknown_topics(tmp_path):
    cfg = tmp_path / "flood.toml"
    cfg.write_text(CONFIG)
    port = free_port()
    proc = SimserverProcess(str(cfg), "--serve", f"127.0.0.1:{port}", log_dir=tmp_path)
    observer = client(port, "observer")
    flood = Flood(port)
    try:
        wait_for(observer.isConnected, 20, "simserver's NT server")
        time_sub = observer.getDoubleTopic("/simserver/time").subscribe(math.nan, OBSERVE)
        subs = {n: observer.getDoubleTopic(n).subscribe(math.nan, OBSERVE) for n in SENSORS[1:]}
        pose = observer.getStructTopic("/simserver/pose", Pose2d).subscribe(Pose2d(), OBSERVE)
        beat = observer.getIntegerTopic("/simserver/heartbeat").subscribe(-1, OBSERVE)
        wait_for(lambda: beat.get() > 0 and not math.isnan(time_sub.get()), 20, "first tick")
        received: dict[str, list] = {"/simserver/time": []}
        poses: list[Pose2d] = []

        def drain() -> None:
            received["/simserver/time"] += time_sub.readQueue()
            for name, sub in subs.items():
                received.setdefault(name, []).extend(sub.readQueue())
            poses.extend(s.value for s in pose.readQueue())
            beat.readQueue()

        def watch(seconds: float) -> tuple[float, float]:
            start = ntcore._now() * 1e-6
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                drain()
                time.sleep(0.02)
            return start, ntcore._now() * 1e-6

        before = watch(BEFORE)
        flood.start(FLOOD)
        during = watch(FLOOD)
        flood.join()
        after = watch(AFTER)
        assert not flood.errors, flood.errors
        assert proc.alive(), proc.stderr()

        # The flood happened as specified (the count is of set() calls, all sent: sendAll).
        assert flood.sets / FLOOD >= 0.8 * SETS_PER_S, f"only {flood.sets / FLOOD:.0f} sets/s"
        assert flood.big_sets >= 4 and flood.other_sets > 10_000
        assert flood.raw_frames >= 4 and flood.raw_refused >= 1, (flood.raw_frames,
                                                                 flood.raw_refused)

        samples = received["/simserver/time"]
        base_rate, _, _ = _rate(samples, *before)
        rate, speed, gap = _rate(samples, *during)
        after_rate, _, _ = _rate(samples, *after)
        summary = (f"ticks/s before {base_rate:.1f}, during {rate:.1f}, after {after_rate:.1f}; "
                   f"simulated s per wall s during {speed:.3f}; largest gap {gap * 1e3:.0f} ms; "
                   f"garbage sets/s {flood.sets / FLOOD:.0f}; raw 2.25 MiB frames "
                   f"{flood.raw_frames}, connections closed for them {flood.raw_refused}")
        print(summary)
        assert rate >= RATE_MARGIN * TICKS_PER_S, summary
        assert rate >= RATE_MARGIN * base_rate, summary
        assert speed >= RATE_MARGIN, summary
        assert gap <= MAX_GAP, summary
        assert after_rate >= RATE_MARGIN * TICKS_PER_S, summary

        # No NaN or infinity ever reached the state.
        for name, values in received.items():
            assert values, f"nothing received on {name}"
            bad = [s.value for s in values if not math.isfinite(s.value)]
            assert not bad, f"{name}: {bad[:5]}"
        assert poses and all(math.isfinite(v) for p in poses
                             for v in (p.X(), p.Y(), p.rotation().radians()))

        assert proc.interrupt() == 0, proc.stderr()
        err = proc.stderr()
        warnings = [line for line in err.splitlines() if "further such values" in line]
        # One line per topic and kind: NaN/inf and range on left and right, type on lift and
        # claw. Nothing per value.
        assert 2 <= len(warnings) <= 8, err[-3000:]
        assert len(err.splitlines()) < 100, err[-3000:]
    finally:
        flood.join()
        ntcore.NetworkTableInstance.destroy(observer)
        proc.close()
