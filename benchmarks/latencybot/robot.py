"""Latency probe: a real robot program that measures its own round trip through simserver.

Wired as examples/kitbot (PWM 0-3 drive motors, the right side inverted; a 360-count encoder
on DIO 0/1 for the left wheels), so it runs against ``examples/kitbot/simserver.toml`` under
``python -m robotpy --main benchmarks/latencybot/robot.py sim --nogui --simserver`` with
``simserver run <that config> --enable teleop`` beside it. ``benchmarks/robot_latency.py``
starts both and reads the results; nothing here is meant to be run by hand.

Every ``$LATENCYBOT_EVERY`` robot periods (20 ms each) while enabled, ``robotPeriodic``
sleeps a random 0 to ``$LATENCYBOT_JITTER`` s (so the switches sample every phase of
simserver's tick), stamps t0 = ``time.perf_counter()`` and flips the drive command between
+``duty`` and −``duty``; then it publishes the switch number on ``/latencybot/ping``.
The bridge publishes the PWM outputs right after this period's ``robotPeriodic`` (the HAL's
SimPeriodicAfter callback); nothing here flushes NetworkTables by hand.

For each switch it records, in seconds after t0:

- ``arrive``: when the first encoder velocity sample whose change has the sign of the new
  command reached this program's NT server (an NT listener on
  ``/simserver/encoders/left/velocity``, stamped on ntcore's listener thread): robot → NT →
  simserver (next tick, step, publish) → NT → robot.
- ``seen``: the start of the first ``robotPeriodic`` whose ``Encoder.getRate()`` (what the
  bridge wrote into the HAL) changed with that sign: what robot code experiences; and
  ``seen_periods``, how many periods after the switching one that was.
- ``echo``: when the switch number came back on ``/latencybot/pong``, echoed at once by a
  plain NT client (``benchmarks/_echo.py --connect``): the transport floor of the same path.

One JSON line per switch goes to the file ``$LATENCYBOT_LOG``; lines of the first
``$LATENCYBOT_WARMUP`` switches carry ``"warmup": true``. After ``$LATENCYBOT_SWITCHES``
measured switches it writes ``{"done": true}``.
"""

import json
import os
import random
import threading
import time

import ntcore
import wpilib

VELOCITY = "/simserver/encoders/left/velocity"
PING, PONG = "/latencybot/ping", "/latencybot/pong"
TIMEOUT = 0.5  # s: a switch not answered by then is written with null figures


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.motors = [wpilib.PWMSparkMax(ch) for ch in range(4)]
        self.motors[2].setInverted(True)  # as examples/kitbot: the right side is inverted
        self.motors[3].setInverted(True)
        self.encoder = wpilib.Encoder(0, 1)
        self.encoder.setDistancePerPulse(0.1524 * 3.141592653589793 / 360)
        self.log_path = os.environ["LATENCYBOT_LOG"]
        self.every = int(os.environ.get("LATENCYBOT_EVERY", "4"))
        self.jitter = float(os.environ.get("LATENCYBOT_JITTER", "0.01"))
        self.warmup = int(os.environ.get("LATENCYBOT_WARMUP", "20"))
        self.switches = int(os.environ.get("LATENCYBOT_SWITCHES", "1000"))
        self.duty = 0.5
        self.rng = random.Random(0)
        self.lock = threading.Lock()
        self.k = 0  # switches made
        self.periods = 0
        self.pending: dict | None = None
        self.last_rate = self.encoder.getRate()
        self.done = False

        inst = ntcore.NetworkTableInstance.getDefault()
        fast = ntcore.PubSubOptions(periodic=0.001, sendAll=True)
        self.ping = inst.getDoubleTopic(PING).publish(fast)
        self.vel_sub = inst.getDoubleTopic(VELOCITY).subscribe(0.0, fast)
        self.pong_sub = inst.getDoubleTopic(PONG).subscribe(-1.0, fast)
        self.last_velocity: float | None = None
        self.listeners = [
            inst.addListener(self.vel_sub, ntcore.EventFlags.kValueAll, self._on_velocity),
            inst.addListener(self.pong_sub, ntcore.EventFlags.kValueAll, self._on_pong),
        ]
        self.log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115

    # --- ntcore's listener thread ----------------------------------------------------------

    def _on_velocity(self, event: ntcore.Event) -> None:
        now = time.perf_counter()
        value = event.data.value.value()
        with self.lock:
            previous, self.last_velocity = self.last_velocity, value
            p = self.pending
            if (p is not None and p["arrive"] is None and previous is not None
                    and (value - previous) * p["cmd"] > 0):
                p["arrive"] = now - p["t0"]

    def _on_pong(self, event: ntcore.Event) -> None:
        now = time.perf_counter()
        value = event.data.value.value()
        with self.lock:
            p = self.pending
            if p is not None and p["echo"] is None and value == float(p["k"]):
                p["echo"] = now - p["t0"]

    # --- the robot loop ----------------------------------------------------------------------

    def robotPeriodic(self) -> None:
        start = time.perf_counter()
        self.periods += 1  # this period's number
        rate = self.encoder.getRate()
        with self.lock:
            p = self.pending
            if p is not None:
                if p["seen"] is None and (rate - self.last_rate) * p["cmd"] > 0:
                    p["seen"] = start - p["t0"]
                    p["seen_periods"] = self.periods - p["period"]
                finished = p["seen"] is not None and p["arrive"] is not None and (
                    p["echo"] is not None)
                if finished or start - p["t0"] > TIMEOUT:
                    self._write(p)
                    self.pending = None
        self.last_rate = rate
        if self.done or not wpilib.DriverStation.isEnabled():
            return
        if self.pending is None and self.periods % self.every == 0:
            time.sleep(self.rng.uniform(0.0, self.jitter))
            self.k += 1
            cmd = self.duty if self.k % 2 else -self.duty
            with self.lock:
                self.pending = {"k": self.k, "cmd": cmd, "period": self.periods,
                                "t0": time.perf_counter(), "arrive": None, "seen": None,
                                "seen_periods": None, "echo": None}
                for m in self.motors:
                    m.set(cmd)
            self.ping.set(float(self.k))

    def _write(self, p: dict) -> None:
        record = {key: p[key] for key in ("k", "arrive", "seen", "seen_periods", "echo")}
        record["warmup"] = p["k"] <= self.warmup
        self.log.write(json.dumps(record) + "\n")
        if p["k"] >= self.warmup + self.switches:
            self.log.write(json.dumps({"done": True}) + "\n")
            self.done = True
        self.log.flush()
