"""Robot side of tests/pieces/test_detect_wire.py: what a robot program reads from a camera
with an object detector, through photonlibpy and through the Limelight table.

Run as its own process, like a robot program: it hosts the NetworkTables server (on the given
port instead of 5810) and prints ``READY``. Every 20 ms it reads photonlibpy's
``PhotonCamera("<camera>").getAllUnreadResults()`` (with ``--photon``) and prints one JSON line
per result (``{"photon": ...}``: sequence id and, per target, fiducialId, objDetectId,
objDetectConf, yaw, pitch, area, skew, pose ambiguity, the corner lists and the
camera-to-target translation). Before it exits after ``--seconds`` it prints every value
received on the Limelight table ``limelight-<camera>`` (subscribed with sendAll, as
LimelightHelpers' entries keep the latest), grouped by NT timestamp, one JSON line each
(``{"limelight": ...}``), and ``DONE``.

photonlibpy's PhotonCamera starts a UDP time-sync server on port 5810; it is moved to
``--timesync-port`` so tests running beside robot programs do not collide.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

DOUBLES = ("tv", "tx", "ty", "txnc", "tync", "ta", "tid", "hb")
ARRAYS = ("rawdetections", "rawfiducials", "t2d", "botpose_wpiblue")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True, help="NT4 server port")
    ap.add_argument("--timesync-port", type=int, required=True, help="UDP time-sync port")
    ap.add_argument("--camera", default="intake")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--photon", action="store_true", help="read with photonlibpy too")
    args = ap.parse_args()

    import ntcore

    inst = ntcore.NetworkTableInstance.getDefault()
    inst.startServer("", "127.0.0.1", 0, args.port)
    table = inst.getTable(f"limelight-{args.camera}")
    every = ntcore.PubSubOptions(sendAll=True, pollStorage=1000, keepDuplicates=True)
    subs = {k: table.getDoubleTopic(k).subscribe(float("nan"), every) for k in DOUBLES}
    subs |= {k: table.getDoubleArrayTopic(k).subscribe([], every) for k in ARRAYS}
    subs["tclass"] = table.getStringTopic("tclass").subscribe("", every)
    camera = None
    if args.photon:
        from photonlibpy.timesync import timeSyncServer

        timeSyncServer.inst.PORT = args.timesync_port
        from photonlibpy import PhotonCamera

        camera = PhotonCamera(args.camera)
    print("READY", flush=True)

    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        if camera is not None:
            for result in camera.getAllUnreadResults():
                targets = []
                for t in result.getTargets():
                    pose = t.getBestCameraToTarget().translation()
                    targets.append({
                        "fiducial": t.getFiducialId(), "class": t.objDetectId,
                        "conf": t.objDetectConf, "yaw": t.getYaw(), "pitch": t.getPitch(),
                        "area": t.getArea(), "skew": t.getSkew(),
                        "ambiguity": t.getPoseAmbiguity(),
                        "corners": [[c.x, c.y] for c in t.getDetectedCorners()],
                        "rect": [[c.x, c.y] for c in t.getMinAreaRectCorners()],
                        "pose": [pose.X(), pose.Y(), pose.Z()]})
                print(json.dumps({"photon": {
                    "seq": result.metadata.sequenceID, "targets": targets,
                    "has_targets": result.hasTargets(),
                    "multitag": result.multitagResult is not None}}), flush=True)
        time.sleep(0.02)
    time.sleep(0.3)
    by_time: dict[int, dict[str, object]] = {}
    for key, sub in subs.items():
        for v in sub.readQueue():
            value = v.value
            by_time.setdefault(v.time, {})[key] = list(value) if key in ARRAYS else value
    for t in sorted(by_time):
        print(json.dumps({"limelight": {"time": t, **by_time[t]}}), flush=True)
    print("DONE", flush=True)
    inst.stopServer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
