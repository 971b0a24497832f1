"""One camera's frames on NetworkTables as a PhotonVision coprocessor publishes them.

Robot code reads them with photonlibpy's (or PhotonLib's) ``PhotonCamera("<name>")`` and
``PhotonPoseEstimator`` unchanged. The topics under ``/photonvision/<name>/`` are declared in
:data:`TOPICS` (docs/protocol.md lists them): ``rawBytes`` carries each frame, ``heartbeat``
is set last; every topic of a frame is published with periodic 0.01 s, sendAll and
keepDuplicates, so no frame's values are lost or merged.

Timestamps: the result's capture and publish timestamps are in microseconds of the robot
program's time base (its NT server time, the FPGA clock in simulation), given by the
``robot_time`` function (simulated s -> robot s) the session owns. Every value of a frame is
stamped with its publish (delivery) time, converted to this instance's clock with the server
time offset ntcore itself applies when it sends it, so the robot sees exactly that time
(:mod:`simserver.io.framestamps`): ``PhotonPipelineResult.getTimestampSeconds()`` (receive
time - (publish - capture)) is then the capture time in robot time.

The frames are packed by :mod:`simserver.io.photonresult`, which needs photonlibpy (Python 3.11
or newer): it is imported when a publisher is made, so these declarations load without it. A
``PhotonCamera`` is never constructed here (it would start photonlibpy's time-sync server on
UDP port 5810).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import ntcore
from wpimath.geometry import Transform3d

from simserver.contract.topics import TopicGroup, TopicSpec, fill
from simserver.io.framestamps import FrameStamper
from simserver.models.camera import CameraSpec, Frame

ROOT = "/photonvision"
CAMERA = f"{ROOT}/<camera>"


def _spec(key: str, nt_type: str, unit: str, doc: str) -> TopicSpec:
    return TopicSpec(f"{CAMERA}/{key}", nt_type, "out", unit, doc)


RAW_BYTES = _spec("rawBytes", "photonstruct:PhotonPipelineResult:<uuid>", "",
                  "Each frame as PhotonVision publishes it (photonlibpy's PhotonCamera reads "
                  "it): targets with corners, best and alternate camera-to-target transforms, "
                  "ambiguity, the multi-tag field-to-camera estimate with 2+ tags, capture and "
                  "publish time in the robot's time base, sequence id. Topic property "
                  "`message_uuid` (`<uuid>`, photonlibpy's message version). Every frame is "
                  "sent (sendAll, keepDuplicates).")
HEARTBEAT = _spec("heartbeat", "int", "count", "Frame sequence id, set last: PhotonCamera "
                  "reports the camera disconnected when it stops changing for 0.5 s.")
LATENCY = _spec("latencyMillis", "double", "ms", "Capture to publication.")
HAS_TARGET = _spec("hasTarget", "boolean", "", "A target (tag, or piece for an object "
                   "detector) is in view.")
TARGET_YAW = _spec("targetYaw", "double", "deg",
                   "Best target yaw (right positive, PhotonVision's convention); 0 without one.")
TARGET_PITCH = _spec("targetPitch", "double", "deg", "Best target pitch (up positive).")
TARGET_AREA = _spec("targetArea", "double", "% of image", "Best target area.")
TARGET_SKEW = _spec("targetSkew", "double", "deg", "Best target skew (0 for AprilTags and "
                    "pieces).")
TARGET_PIXELS_X = _spec("targetPixelsX", "double", "px", "Best target centre, image x.")
TARGET_PIXELS_Y = _spec("targetPixelsY", "double", "px", "Best target centre, image y.")
TARGET_POSE = _spec("targetPose", "struct:Transform3d", "m, rad",
                    "Best target's camera-to-target transform (identity without one, and for "
                    "pieces).")
DRIVER_MODE = _spec("driverMode", "boolean", "", "false: the pipeline runs (set once).")
PIPELINE_INDEX = _spec("pipelineIndexState", "int", "index", "0: the camera's one pipeline, "
                       "AprilTag or object detection (set once).")
INTRINSICS = _spec("cameraIntrinsics", "double[]", "px",
                   "Camera matrix, row-major [fx, 0, cx, 0, fy, cy, 0, 0, 1] (set once).")
DISTORTION = _spec("cameraDistortion", "double[]", "",
                   "Distortion coefficients [k1, k2, p1, p2, k3, 0, 0, 0] (set once).")
TOPICS = TopicGroup(
    "PhotonVision", "Per camera with `protocol = \"photonvision\"` or `\"both\"`, under "
    "`/photonvision/<camera>/` as a PhotonVision coprocessor publishes them: robot code reads "
    "them with photonlibpy's (or PhotonLib's) `PhotonCamera(\"<camera>\")` and "
    "`PhotonPoseEstimator` unchanged. The values of a frame are stamped with its publish time "
    "in the robot program's time base, so `getTimestampSeconds()` is the capture time.",
    (RAW_BYTES, HEARTBEAT, LATENCY, HAS_TARGET, TARGET_YAW, TARGET_PITCH, TARGET_AREA,
     TARGET_SKEW, TARGET_PIXELS_X, TARGET_PIXELS_Y, TARGET_POSE, DRIVER_MODE, PIPELINE_INDEX,
     INTRINSICS, DISTORTION))


class _Closable(Protocol):
    def close(self) -> None: ...


def camera_table(name: str) -> str:
    """The table PhotonCamera(``name``) reads."""
    return fill(CAMERA, camera=name)


class PhotonVisionPublisher:
    """Publishes one camera's frames as PhotonVision does, on ``inst``.

    robot_time: maps simulated time (s) to the robot program's NT server time (s). Raises
    ImportError when photonlibpy cannot be imported.
    """

    def __init__(self, inst: ntcore.NetworkTableInstance, spec: CameraSpec,
                 robot_time: Callable[[float], float]):
        # Imported here: photonlibpy is not installed on Python 3.10.
        from simserver.io.photonresult import MESSAGE_UUID, pack

        self._pack = pack
        self._stamper = FrameStamper(inst, robot_time)
        name = spec.name
        frames = ntcore.PubSubOptions(periodic=0.01, sendAll=True, keepDuplicates=True)
        self._raw = inst.getRawTopic(RAW_BYTES.at(camera=name)).publishEx(
            fill(RAW_BYTES.type, uuid=MESSAGE_UUID), {"message_uuid": MESSAGE_UUID}, frames)
        self._heartbeat_topic = HEARTBEAT.at(camera=name)
        self._heartbeat = inst.getIntegerTopic(self._heartbeat_topic).publish(frames)
        self._beat = 0
        self._latency = inst.getDoubleTopic(LATENCY.at(camera=name)).publish(frames)
        self._has_target = inst.getBooleanTopic(HAS_TARGET.at(camera=name)).publish(frames)
        self._best = {s: inst.getDoubleTopic(s.at(camera=name)).publish(frames)
                      for s in (TARGET_YAW, TARGET_PITCH, TARGET_AREA, TARGET_SKEW,
                                TARGET_PIXELS_X, TARGET_PIXELS_Y)}
        self._pose = inst.getStructTopic(TARGET_POSE.at(camera=name), Transform3d).publish(
            frames)
        driver_mode = inst.getBooleanTopic(DRIVER_MODE.at(camera=name)).publish()
        pipeline = inst.getIntegerTopic(PIPELINE_INDEX.at(camera=name)).publish()
        intrinsics = inst.getDoubleArrayTopic(INTRINSICS.at(camera=name)).publish()
        distortion = inst.getDoubleArrayTopic(DISTORTION.at(camera=name)).publish()
        fx, fy, cx, cy = spec.camera_matrix()
        driver_mode.set(False)
        pipeline.set(0)
        intrinsics.set([fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0])
        distortion.set([*spec.distortion, 0.0, 0.0, 0.0])
        self._static: list[_Closable] = [driver_mode, pipeline, intrinsics, distortion]

    def publish(self, frame: Frame) -> None:
        """Publish one delivered frame (call in delivery order; the caller flushes)."""
        stamps = self._stamper.stamps(frame)
        nt_time = stamps.nt_time
        self._raw.set(self._pack(frame, stamps.capture, stamps.publish), nt_time)
        self._latency.set(stamps.latency_ms, nt_time)
        best = frame.best or (frame.pieces[0] if frame.pieces else None)
        self._has_target.set(best is not None, nt_time)
        if best is None:
            values = dict.fromkeys(self._best, 0.0)
            self._pose.set(Transform3d(), nt_time)
        else:
            values = {TARGET_YAW: best.yaw, TARGET_PITCH: best.pitch, TARGET_AREA: best.area,
                      TARGET_SKEW: 0.0, TARGET_PIXELS_X: best.center[0],
                      TARGET_PIXELS_Y: best.center[1]}
            self._pose.set(frame.best.best if frame.best is not None else Transform3d(),
                           nt_time)
        for spec, value in values.items():
            self._best[spec].set(value, nt_time)
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
            self._raw, self._heartbeat, self._latency, self._has_target, *self._best.values(),
            self._pose, *self._static]
        for pub in publishers:
            pub.close()
