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

Settings: ``pipelineIndexRequest`` and ``driverModeRequest`` become requests for the camera
model, ``pipelineIndexState`` and ``driverMode`` follow the frames; the coprocessor-wide
``ledModeRequest``/``ledModeState`` and ``version`` are :class:`PhotonVisionRoot`'s; any other
key robot code writes under the camera's table is logged once
(:mod:`simserver.io.camerarequests`).

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
from simserver.io.camerarequests import RequestReader, whole
from simserver.io.framestamps import FrameStamper
from simserver.models.camera import CameraRequest, CameraSpec, Frame

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
DRIVER_MODE = _spec("driverMode", "boolean", "", "Driver mode of the latest frame (true: no "
                    "targets); follows `driverModeRequest`.")
PIPELINE_INDEX = _spec("pipelineIndexState", "int", "index", "Pipeline of the latest frame "
                       "(the camera's `pipelines`); follows `pipelineIndexRequest`.")
DRIVER_MODE_REQUEST = TopicSpec(f"{CAMERA}/driverModeRequest", "boolean", "in", "",
                                "PhotonCamera.setDriverMode: no targets while true (frames "
                                "keep coming).")
PIPELINE_REQUEST = TopicSpec(f"{CAMERA}/pipelineIndexRequest", "int", "in", "index",
                             "PhotonCamera.setPipelineIndex: a pipeline of the camera's "
                             "`pipelines`, from the next capture.")
LED_REQUEST = TopicSpec(f"{ROOT}/ledModeRequest", "int", "in", "-1..2",
                        "PhotonCamera.setLED (all cameras): kept in `ledModeState`; changes "
                        "nothing detected.")
LED_STATE = TopicSpec(f"{ROOT}/ledModeState", "int", "out", "-1..2",
                      "The LED mode last requested (-1, the default, until then).")
VERSION = TopicSpec(f"{ROOT}/version", "string", "out", "",
                    "The PhotonVision version of the installed photonlibpy (PhotonCamera shows "
                    "it in its version-mismatch message; the check itself compares "
                    "`message_uuid`).")
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
     INTRINSICS, DISTORTION, PIPELINE_REQUEST, DRIVER_MODE_REQUEST, LED_REQUEST, LED_STATE,
     VERSION))
LED_MODES = (-1, 2)  # kDefault .. kBlink (photonlibpy's VisionLEDMode)


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
        self._driver_mode = inst.getBooleanTopic(DRIVER_MODE.at(camera=name)).publish()
        self._pipeline = inst.getIntegerTopic(PIPELINE_INDEX.at(camera=name)).publish()
        self._state = (0, False)  # (pipeline, driver mode) last published
        self._spec = spec
        self._requests = RequestReader(inst, camera_table(name) + "/", name)
        intrinsics = inst.getDoubleArrayTopic(INTRINSICS.at(camera=name)).publish()
        distortion = inst.getDoubleArrayTopic(DISTORTION.at(camera=name)).publish()
        fx, fy, cx, cy = spec.camera_matrix()
        self._driver_mode.set(False)
        self._pipeline.set(0)
        intrinsics.set([fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0])
        distortion.set([*spec.distortion, 0.0, 0.0, 0.0])
        self._static: list[_Closable] = [self._driver_mode, self._pipeline, intrinsics,
                                         distortion]

    def read_requests(self) -> list[CameraRequest]:
        """What robot code wrote under the camera's table since the last call: pipeline and
        driver mode requests for the world; anything else, or a bad value, logged once (see
        :mod:`simserver.io.camerarequests`)."""
        out: list[CameraRequest] = []
        req, spec = self._requests, self._spec
        last = spec.pipeline_count - 1
        for key, _, value in req.read():
            if key == "pipelineIndexRequest":
                index = whole(value, 0, last)
                if index is None:
                    req.bad(key, value, f"a pipeline index 0..{last}")
                else:
                    out.append(CameraRequest(spec.name, "pipeline", index))
            elif key == "driverModeRequest":
                if isinstance(value, bool):
                    out.append(CameraRequest(spec.name, "driver_mode", value))
                else:
                    req.bad(key, value, "a boolean")
            else:
                req.unmodelled(key, value, "a PhotonVision setting with no effect on what the "
                               "simulated camera reports")
        return out

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
        state = (frame.pipeline, frame.driver_mode)
        if state != self._state:
            self._state = state
            self._pipeline.set(frame.pipeline, nt_time)
            self._driver_mode.set(frame.driver_mode, nt_time)
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
        self._requests.close()


class PhotonVisionRoot:
    """What a PhotonVision coprocessor publishes for all its cameras under ``/photonvision/``:
    ``version`` (photonlibpy's PhotonVision version) and ``ledModeState``, which follows
    ``ledModeRequest`` (PhotonCamera.setLED; LEDs change nothing simserver detects)."""

    def __init__(self, inst: ntcore.NetworkTableInstance):
        try:
            from photonlibpy.version import PHOTONVISION_VERSION
        except ImportError:
            PHOTONVISION_VERSION = ""
        self.led_mode = -1
        self._version = inst.getStringTopic(VERSION.name).publish()
        self._version.set(str(PHOTONVISION_VERSION))
        self._led = inst.getIntegerTopic(LED_STATE.name).publish()
        self._led.set(self.led_mode)
        self._requests = RequestReader(inst, LED_REQUEST.name, "(all PhotonVision cameras)")

    def read_requests(self) -> None:
        """Follow ``ledModeRequest``; a bad value is logged once."""
        for _, _, value in self._requests.read():
            mode = whole(value, *LED_MODES)
            if mode is None:
                self._requests.bad("", value, f"a LED mode {LED_MODES[0]}..{LED_MODES[1]}")
            else:
                self.led_mode = mode
                self._led.set(mode)

    def close(self) -> None:
        """Unpublish and stop listening."""
        self._version.close()
        self._led.close()
        self._requests.close()
