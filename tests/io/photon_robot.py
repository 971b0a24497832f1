"""Robot side of tests/io/test_photonvision.py: what a robot program sees through photonlibpy.

Run as its own process, like a robot program: it hosts the NetworkTables server (on the given
port instead of 5810), creates photonlibpy's ``PhotonCamera`` and ``PhotonPoseEstimator`` for
the 2026 field, and every 20 ms reads ``getAllUnreadResults()``. For each result it prints one
JSON line with what robot code would use: sequence id, ``getTimestampSeconds()``, the robot
clock when it was read, target ids, yaws and ambiguities, and the two estimator outputs. It
prints ``READY`` once the server listens, and a ``SUMMARY`` line (connected state, the
``message_uuid`` the camera topic carries) before it exits after ``--seconds``.

photonlibpy's PhotonCamera starts a UDP time-sync server on port 5810 (the same number as the
NT server's TCP port) on 0.0.0.0; it is moved to ``--timesync-port`` here so tests running in
parallel with robot programs do not collide.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True, help="NT4 server port")
    ap.add_argument("--timesync-port", type=int, required=True, help="UDP time-sync port")
    ap.add_argument("--camera", default="front")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--mount", type=float, nargs=6, required=True,
                    help="robot-to-camera x y z (m) roll pitch yaw (rad)")
    args = ap.parse_args()

    from photonlibpy.timesync import timeSyncServer

    timeSyncServer.inst.PORT = args.timesync_port
    import ntcore
    from photonlibpy import PhotonCamera, PhotonPoseEstimator
    from robotpy_apriltag import AprilTagField, AprilTagFieldLayout
    from wpilib import Timer
    from wpimath.geometry import Rotation3d, Transform3d, Translation3d

    inst = ntcore.NetworkTableInstance.getDefault()
    inst.startServer("", "127.0.0.1", 0, args.port)
    layout = AprilTagFieldLayout.loadField(AprilTagField.k2026RebuiltWelded)
    x, y, z, roll, pitch, yaw = args.mount
    mount = Transform3d(Translation3d(x, y, z), Rotation3d(roll, pitch, yaw))
    camera = PhotonCamera(args.camera)
    estimator = PhotonPoseEstimator(layout, mount)
    print("READY", flush=True)

    def pose_list(est):
        if est is None:
            return None
        p = est.estimatedPose
        return [p.X(), p.Y(), p.Z(), p.rotation().Z()]

    end = time.monotonic() + args.seconds
    connected_seen = False
    while time.monotonic() < end:
        now = Timer.getFPGATimestamp()
        for result in camera.getAllUnreadResults():
            meta = result.metadata
            print(json.dumps({
                "seq": meta.sequenceID,
                "capture_us": meta.captureTimestampMicros,
                "publish_us": meta.publishTimestampMicros,
                "timestamp": result.getTimestampSeconds(),
                "read_at": now,
                "ids": [t.fiducialId for t in result.getTargets()],
                "yaws": [t.getYaw() for t in result.getTargets()],
                "ambiguities": [t.getPoseAmbiguity() for t in result.getTargets()],
                "corners": [len(t.getDetectedCorners()) for t in result.getTargets()],
                "multitag_ids": (list(result.multitagResult.fiducialIDsUsed)
                                 if result.multitagResult else None),
                "multitag": pose_list(estimator.estimateCoprocMultiTagPose(result)),
                "single": pose_list(estimator.estimateLowestAmbiguityPose(result)),
            }), flush=True)
        connected_seen = connected_seen or camera.isConnected()
        time.sleep(0.02)
    uuid = camera._rawBytesEntry.getTopic().getProperty("message_uuid")
    print("SUMMARY " + json.dumps({
        "connected": camera.isConnected(), "connected_seen": connected_seen,
        "message_uuid": None if uuid is None else str(uuid).replace('"', ""),
        "type": camera._rawBytesEntry.getTopic().getTypeString(),
    }), flush=True)
    inst.stopServer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
