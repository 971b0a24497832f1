"""Robot side of tests/vision/test_photon_settings.py: a robot program that changes its
PhotonVision camera's settings through photonlibpy's ``PhotonCamera`` and reports what it sees.

Run as its own process: it hosts the NT server on ``--port``, makes ``PhotonCamera("front")``
(its time-sync server moved to ``--timesync-port``), prints ``READY``, then goes through the
phases below, each printing one JSON line ``{"phase": ..., ...}`` with what robot code reads:
the pipeline index, driver mode, LED mode, the version topic, and the tag ids of the results
received in the phase. Every wait has a deadline; on a missed one the line says so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--timesync-port", type=int, required=True)
    args = ap.parse_args()

    from photonlibpy.timesync import timeSyncServer

    timeSyncServer.inst.PORT = args.timesync_port
    import ntcore
    from photonlibpy import PhotonCamera
    from photonlibpy.photonCamera import VisionLEDMode

    inst = ntcore.NetworkTableInstance.getDefault()
    inst.startServer("", "127.0.0.1", 0, args.port)
    camera = PhotonCamera("front")
    print("READY", flush=True)

    def until(check, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return True
            time.sleep(0.02)
        return False

    def report(phase: str, ok: bool, seconds: float = 0.6) -> None:
        camera.getAllUnreadResults()  # drop what came before the phase settled
        ids: list[list[int]] = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ids += [[t.fiducialId for t in r.getTargets()]
                    for r in camera.getAllUnreadResults()]
            time.sleep(0.02)
        print(json.dumps({
            "phase": phase, "ok": ok, "pipeline": camera.getPipelineIndex(),
            "driver_mode": camera.getDriverMode(), "led": camera.getLEDMode().value,
            "version": camera.versionEntry.get(), "results": ids}), flush=True)

    report("start", until(lambda: camera.isConnected() and camera.getAllUnreadResults()))
    camera.setPipelineIndex(1)
    report("pipeline 1", until(lambda: camera.getPipelineIndex() == 1))
    camera.setDriverMode(True)
    report("driver mode", until(lambda: camera.getDriverMode()))
    camera.setDriverMode(False)
    report("processing", until(lambda: not camera.getDriverMode()))
    camera.setLEDMode(VisionLEDMode.kOn)
    report("led on", until(lambda: camera.getLEDMode() == VisionLEDMode.kOn))
    for limit in (10, 15, 10):  # not modelled: reported once
        camera.setFPSLimit(limit)
        inst.flush()
        time.sleep(0.1)
    camera.setPipelineIndex(5)  # out of range: ignored
    report("bad index", True, seconds=1.0)
    inst.stopServer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
