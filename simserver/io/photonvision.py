"""One camera's frames on NetworkTables as a PhotonVision coprocessor publishes them.

Robot code reads them with photonlibpy's (or PhotonLib's) ``PhotonCamera("<name>")`` and
``PhotonPoseEstimator`` unchanged. Under ``/photonvision/<name>/``:

- ``rawBytes``: the packed ``PhotonPipelineResult`` (photonlibpy's own serde), type string
  ``photonstruct:PhotonPipelineResult:<uuid>`` and topic property ``message_uuid``, one value
  per frame (periodic 0.01 s, sendAll, keepDuplicates, so none is lost or merged);
- ``heartbeat`` (int, the frame's sequence number: PhotonCamera reports the camera
  disconnected when it stops changing for 0.5 s);
- ``latencyMillis``, ``hasTarget``, ``targetYaw``, ``targetPitch``, ``targetArea``,
  ``targetSkew``, ``targetPixelsX``, ``targetPixelsY`` (best target) and ``targetPose``
  (``struct:Transform3d``), as PhotonVision's NT API documents them;
- ``cameraIntrinsics`` and ``cameraDistortion`` (once), ``driverMode`` and
  ``pipelineIndexState``.

Timestamps: the result's capture and publish timestamps are in microseconds of the robot
program's time base (its NT server time, the FPGA clock in simulation), given by the
``robot_time`` function (simulated s -> robot s) the session owns. Every value of a frame is
stamped with its publish (delivery) time, converted to this instance's clock with the server
time offset ntcore itself applies when it sends it, so the robot sees exactly that time:
``PhotonPipelineResult.getTimestampSeconds()`` (receive time - (publish - capture)) is then the
capture time in robot time.

Importing photonlibpy pulls in wpilib (no OpenCV); a ``PhotonCamera`` is never constructed
here (it would start photonlibpy's time-sync server on UDP port 5810). photonlibpy 2026 needs
numpy 2.3, so Python 3.11 or newer: on 3.10 it is not installed, this module cannot be imported
and simserver.io.nt imports it only for a camera that publishes PhotonVision's topics (a run
with one fails at the start: nt.photonvision_unavailable).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import ntcore
from photonlibpy.generated.PhotonPipelineResultSerde import PhotonPipelineResultSerde
from photonlibpy.targeting import (
    MultiTargetPNPResult,
    PhotonPipelineMetadata,
    PhotonPipelineResult,
    PhotonTrackedTarget,
    PnpResult,
    TargetCorner,
)
from wpimath.geometry import Transform3d

from simserver.models.camera import CameraSpec, Frame, TagObservation, min_area_rect

MESSAGE_UUID = PhotonPipelineResultSerde.MESSAGE_VERSION
TYPE_STRING = f"photonstruct:PhotonPipelineResult:{MESSAGE_UUID}"
ROOT = "/photonvision"
# Microseconds since the last time-sync pong, as a coprocessor reports it; PhotonLib warns
# when it grows large. The simulated coprocessor is always in sync.
TIME_SINCE_PONG_US = 1000


class _Closable(Protocol):
    def close(self) -> None: ...

def camera_table(name: str) -> str:
    """The table PhotonCamera(``name``) reads."""
    return f"{ROOT}/{name}"


def pipeline_result(frame: Frame, capture_us: int, publish_us: int) -> PhotonPipelineResult:
    """The PhotonPipelineResult of ``frame`` with the given robot-time stamps (µs)."""
    targets = [_tracked_target(t) for t in frame.tags]
    multitag = None
    if frame.multitag is not None:
        mt = frame.multitag
        multitag = MultiTargetPNPResult(
            PnpResult(best=mt.field_to_camera, alt=mt.field_to_camera, ambiguity=0.0,
                      bestReprojErr=mt.error, altReprojErr=mt.error),
            list(mt.ids))
    return PhotonPipelineResult(
        metadata=PhotonPipelineMetadata(captureTimestampMicros=capture_us,
                                        publishTimestampMicros=publish_us,
                                        sequenceID=frame.sequence,
                                        timeSinceLastPong=TIME_SINCE_PONG_US),
        targets=targets, multitagResult=multitag)


def _tracked_target(tag: TagObservation) -> PhotonTrackedTarget:
    return PhotonTrackedTarget(
        yaw=tag.yaw, pitch=tag.pitch, area=tag.area, skew=tag.skew, fiducialId=tag.id,
        bestCameraToTarget=tag.best, altCameraToTarget=tag.alt,
        minAreaRectCorners=[TargetCorner(x, y) for x, y in min_area_rect(tag.corners)],
        detectedCorners=[TargetCorner(x, y) for x, y in tag.corners],
        poseAmbiguity=tag.ambiguity, objDetectId=-1, objDetectConf=-1.0)


class PhotonVisionPublisher:
    """Publishes one camera's frames as PhotonVision does, on ``inst``.

    robot_time: maps simulated time (s) to the robot program's NT server time (s).
    """

    def __init__(self, inst: ntcore.NetworkTableInstance, spec: CameraSpec,
                 robot_time: Callable[[float], float]):
        self._inst = inst
        self._robot_time = robot_time
        table = inst.getTable(camera_table(spec.name))
        frames = ntcore.PubSubOptions(periodic=0.01, sendAll=True, keepDuplicates=True)
        latest = ntcore.PubSubOptions(periodic=0.01, keepDuplicates=True)
        self._raw = table.getRawTopic("rawBytes").publishEx(
            TYPE_STRING, {"message_uuid": MESSAGE_UUID}, frames)
        self._heartbeat = table.getIntegerTopic("heartbeat").publish(latest)
        self._heartbeat_topic = f"{camera_table(spec.name)}/heartbeat"
        self._beat = 0
        self._latency = table.getDoubleTopic("latencyMillis").publish(latest)
        self._has_target = table.getBooleanTopic("hasTarget").publish(latest)
        self._yaw = table.getDoubleTopic("targetYaw").publish(latest)
        self._pitch = table.getDoubleTopic("targetPitch").publish(latest)
        self._area = table.getDoubleTopic("targetArea").publish(latest)
        self._skew = table.getDoubleTopic("targetSkew").publish(latest)
        self._pixels_x = table.getDoubleTopic("targetPixelsX").publish(latest)
        self._pixels_y = table.getDoubleTopic("targetPixelsY").publish(latest)
        self._pose = table.getStructTopic("targetPose", Transform3d).publish(latest)
        driver_mode = table.getBooleanTopic("driverMode").publish()
        pipeline = table.getIntegerTopic("pipelineIndexState").publish()
        intrinsics = table.getDoubleArrayTopic("cameraIntrinsics").publish()
        distortion = table.getDoubleArrayTopic("cameraDistortion").publish()
        fx, fy, cx, cy = spec.camera_matrix()
        driver_mode.set(False)
        pipeline.set(0)
        intrinsics.set([fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0])
        distortion.set([*spec.distortion, 0.0, 0.0, 0.0])
        self._static: list[_Closable] = [driver_mode, pipeline, intrinsics, distortion]

    def stamps(self, frame: Frame) -> tuple[int, int, int]:
        """(capture µs, publish µs) in robot time, and the NT timestamp (µs, this instance's
        clock) that the robot will see as the publish time."""
        offset = self._inst.getServerTimeOffset() or 0
        capture = self._robot_time(frame.capture_time)
        publish = self._robot_time(frame.delivery_time)
        if not (math.isfinite(capture) and math.isfinite(publish)):
            # Robot time unknown: stamp "now" and keep the latency.
            publish_us = ntcore._now() + offset
            return publish_us - round(frame.latency * 1e6), publish_us, 0
        publish_us = round(publish * 1e6)
        capture_us = round(capture * 1e6)
        return capture_us, publish_us, max(publish_us - offset, 1)

    def publish(self, frame: Frame) -> None:
        """Publish one delivered frame (call in delivery order; the caller flushes)."""
        capture_us, publish_us, nt_time = self.stamps(frame)
        result = pipeline_result(frame, capture_us, publish_us)
        self._raw.set(PhotonPipelineResult.photonStruct.pack(result).getData(), nt_time)
        self._latency.set((publish_us - capture_us) / 1000.0, nt_time)
        best = frame.best
        self._has_target.set(best is not None, nt_time)
        if best is None:
            for pub in (self._yaw, self._pitch, self._area, self._skew, self._pixels_x,
                        self._pixels_y):
                pub.set(0.0, nt_time)
            self._pose.set(Transform3d(), nt_time)
        else:
            self._yaw.set(best.yaw, nt_time)
            self._pitch.set(best.pitch, nt_time)
            self._area.set(best.area, nt_time)
            self._skew.set(best.skew, nt_time)
            self._pixels_x.set(best.center[0], nt_time)
            self._pixels_y.set(best.center[1], nt_time)
            self._pose.set(best.best, nt_time)
        self._heartbeat.set(frame.sequence, nt_time)
        self._beat = frame.sequence

    @property
    def heartbeat(self) -> tuple[str, int]:
        """(topic, value) of the heartbeat last published: set after every other value of
        the frame."""
        return self._heartbeat_topic, self._beat

    def close(self) -> None:
        """Unpublish every topic."""
        publishers: list[_Closable] = [
            self._raw, self._heartbeat, self._latency, self._has_target, self._yaw,
            self._pitch, self._area, self._skew, self._pixels_x, self._pixels_y, self._pose,
            *self._static]
        for pub in publishers:
            pub.close()
