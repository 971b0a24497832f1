"""Robot side of the MegaTag2 test in tests/io/test_vision_session.py: a robot program's
LimelightHelpers calls, in their own process.

It hosts the NetworkTables server (on the given port instead of 5810) and prints ``READY``.
Every 20 ms it sends ``robot_orientation_set`` = [yaw, 0, 0, 0, 0, 0] (degrees,
LimelightHelpers.SetRobotOrientation): ``--yaw`` at first, ``--wrong-yaw`` from
``--wrong-after`` s on; from ``--internal-after`` s on it sets ``imumode_set`` to 2
(LimelightHelpers.SetIMUMode: a double). It reads ``botpose_orb_wpiblue`` as
LimelightHelpers.getBotPoseEstimate_wpiBlue_MegaTag2 does (pose from the first six values,
timestamp = NT time - latency, tag count, raw fiducials when the array has 11 + 7 per tag)
and ``stddevs``, both with sendAll, and prints one JSON line per MegaTag2 array received
(``{"mt2": ...}``, with the stddevs of the same NT time and the phase its capture time falls
in: "true", "wrong" or "internal", or "switching" within ``MARGIN`` of a switch), then
``DONE``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

MARGIN = 0.3  # s either side of a switch

def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True, help="NT4 server port")
    ap.add_argument("--camera", default="front")
    ap.add_argument("--yaw", type=float, required=True, help="yaw sent first, deg")
    ap.add_argument("--wrong-yaw", type=float, required=True, help="yaw sent later, deg")
    ap.add_argument("--wrong-after", type=float, required=True, help="s after READY")
    ap.add_argument("--internal-after", type=float, required=True,
                    help="s after READY to switch imumode_set to 2")
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args()

    import ntcore

    inst = ntcore.NetworkTableInstance.getDefault()
    inst.startServer("", "127.0.0.1", 0, args.port)
    table = inst.getTable(f"limelight-{args.camera}")
    every = ntcore.PubSubOptions(sendAll=True, pollStorage=1000, keepDuplicates=True)
    mt2 = table.getDoubleArrayTopic("botpose_orb_wpiblue").subscribe([], every)
    stddevs = table.getDoubleArrayTopic("stddevs").subscribe([], every)
    orientation = table.getDoubleArrayTopic("robot_orientation_set").publish()
    imu_mode = table.getDoubleTopic("imumode_set").publish()
    print("READY", flush=True)

    start = time.monotonic()
    switched: dict[str, float] = {}  # phase -> NT time (s) it began
    std_by_time: dict[int, list[float]] = {}
    arrays: list[tuple[int, list[float]]] = []
    while (now := time.monotonic() - start) < args.seconds:
        if now >= args.wrong_after:
            switched.setdefault("wrong", ntcore._now() / 1e6)
        orientation.set([args.wrong_yaw if "wrong" in switched else args.yaw, 0.0, 0.0, 0.0,
                         0.0, 0.0])
        if "internal" not in switched and now >= args.internal_after:
            imu_mode.set(2.0)
            switched["internal"] = ntcore._now() / 1e6
        inst.flush()
        arrays += [(v.time, list(v.value)) for v in mt2.readQueue()]
        std_by_time |= {v.time: list(v.value) for v in stddevs.readQueue()}
        time.sleep(0.02)
    arrays += [(v.time, list(v.value)) for v in mt2.readQueue()]
    std_by_time |= {v.time: list(v.value) for v in stddevs.readQueue()}
    for nt_time, values in arrays:
        if len(values) < 11:
            continue
        count = int(values[7])
        raw = [values[11 + 7 * i: 18 + 7 * i] for i in range(count)] \
            if len(values) == 11 + 7 * count else []
        timestamp = nt_time / 1e6 - values[6] / 1000.0
        phase = "true"
        for name in ("wrong", "internal"):
            if name in switched and timestamp > switched[name] - MARGIN:
                phase = name if timestamp > switched[name] + MARGIN else "switching"
        print(json.dumps({"mt2": {
            "x": values[0], "y": values[1], "yaw": values[5], "timestamp": timestamp,
            "tag_count": count, "raw_ids": [int(r[0]) for r in raw],
            "stddevs": std_by_time.get(nt_time), "phase": phase}}), flush=True)
    print("DONE", flush=True)
    inst.stopServer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
