"""A camera frame as PhotonVision's ``PhotonPipelineResult``, packed with photonlibpy's own
serde (what :mod:`simserver.io.photonvision` publishes on ``rawBytes``).

photonlibpy 2026 needs numpy 2.3, so Python 3.11 or newer: on 3.10 it is not installed and this
module cannot be imported; :mod:`simserver.io.photonvision` imports it only when it publishes a
camera (a run with one fails at the start: ``nt.photonvision_unavailable``). Importing
photonlibpy pulls in wpilib (no OpenCV).
"""

from __future__ import annotations

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

from simserver.models.camera import Frame, TagObservation, min_area_rect
from simserver.models.detection import PieceObservation

MESSAGE_UUID = PhotonPipelineResultSerde.MESSAGE_VERSION
# Microseconds since the last time-sync pong, as a coprocessor reports it; PhotonLib warns
# when it grows large. The simulated coprocessor is always in sync.
TIME_SINCE_PONG_US = 1000


def pipeline_result(frame: Frame, capture_us: int, publish_us: int) -> PhotonPipelineResult:
    """The PhotonPipelineResult of ``frame`` with the given robot-time stamps (µs)."""
    targets = [_tracked_target(t) for t in frame.tags]
    targets += [_detected_piece(p) for p in frame.pieces]
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


def pack(frame: Frame, capture_us: int, publish_us: int) -> bytes:
    """The bytes PhotonVision publishes on ``rawBytes`` for ``frame``."""
    result = pipeline_result(frame, capture_us, publish_us)
    return PhotonPipelineResult.photonStruct.pack(result).getData()


def _tracked_target(tag: TagObservation) -> PhotonTrackedTarget:
    return PhotonTrackedTarget(
        yaw=tag.yaw, pitch=tag.pitch, area=tag.area, skew=tag.skew, fiducialId=tag.id,
        bestCameraToTarget=tag.best, altCameraToTarget=tag.alt,
        minAreaRectCorners=[TargetCorner(x, y) for x, y in min_area_rect(tag.corners)],
        detectedCorners=[TargetCorner(x, y) for x, y in tag.corners],
        poseAmbiguity=tag.ambiguity, objDetectId=-1, objDetectConf=-1.0)


def _detected_piece(piece: PieceObservation) -> PhotonTrackedTarget:
    """An object-detection target as PhotonVision reports one (and photonlibpy's
    PhotonCameraSim simulates it): no fiducial id, no pose (identity transforms, ambiguity
    -1), skew 0, the box as both corner lists."""
    corners = [TargetCorner(x, y) for x, y in piece.corners]
    return PhotonTrackedTarget(
        yaw=piece.yaw, pitch=piece.pitch, area=piece.area, skew=0.0, fiducialId=-1,
        bestCameraToTarget=Transform3d(), altCameraToTarget=Transform3d(),
        minAreaRectCorners=corners, detectedCorners=list(corners), poseAmbiguity=-1.0,
        objDetectId=piece.class_id, objDetectConf=piece.confidence)
