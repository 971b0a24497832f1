"""NT echo server for the latency benchmark's reference: the NetworkTables transport floor.

Serves NT4 on 127.0.0.1:PORT, subscribes to the double ``--in`` topic (sendAll, periodic
0.001, the same options simserver's input subscribers use) and republishes every received
value at once on the double ``--out`` topic (periodic 0.001), flushing after each. The loop
polls the subscriber's queue every ``--poll`` seconds (default 0.2 ms), the same way the
benchmark client polls, so the echo adds at most one poll interval on top of the transport.

With ``--connect`` it is an NT client of 127.0.0.1:PORT instead of a server (the echo of
``benchmarks/robot_latency.py``, beside simserver as a client of the robot program's server).

Not run by hand: ``benchmarks/latency.py`` starts it and kills it. It also ends by itself on
SIGTERM/SIGINT and when its parent process goes away.

Usage::

    python benchmarks/_echo.py --port PORT [--connect] [--in /echo/in] [--out /echo/out]
        [--poll 0.0002]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time

import ntcore

IN_TOPIC = "/echo/in"
OUT_TOPIC = "/echo/out"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--connect", action="store_true",
                    help="be an NT client of 127.0.0.1:PORT instead of serving on it")
    ap.add_argument("--in", dest="in_topic", default=IN_TOPIC)
    ap.add_argument("--out", dest="out_topic", default=OUT_TOPIC)
    ap.add_argument("--poll", type=float, default=0.0002, help="queue poll interval, s")
    args = ap.parse_args(argv)

    stop = [False]

    def request_stop(*_: object) -> None:
        stop[0] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    parent = os.getppid()

    inst = ntcore.NetworkTableInstance.create()
    with tempfile.TemporaryDirectory(prefix="simserver-echo-") as tmp:
        if args.connect:
            inst.startClient4("simserver-echo")
            inst.setServer("127.0.0.1", args.port)
        else:
            inst.startServer(os.path.join(tmp, "nt.json"), "127.0.0.1", 0, args.port)
        try:
            sub = inst.getDoubleTopic(args.in_topic).subscribe(
                0.0, ntcore.PubSubOptions(periodic=0.001, sendAll=True, pollStorage=64))
            pub = inst.getDoubleTopic(args.out_topic).publish(
                ntcore.PubSubOptions(periodic=0.001))
            print("ready", flush=True)
            read, set_, flush, sleep, poll = sub.readQueue, pub.set, inst.flush, time.sleep, (
                args.poll)
            next_parent_check = time.monotonic() + 1.0
            while not stop[0]:
                values = read()
                if values:
                    for v in values:
                        set_(v.value)
                    flush()
                    continue
                sleep(poll)
                now = time.monotonic()
                if now >= next_parent_check:
                    next_parent_check = now + 1.0
                    if os.getppid() != parent:  # orphaned: the benchmark died without us
                        break
        finally:
            ntcore.NetworkTableInstance.destroy(inst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
