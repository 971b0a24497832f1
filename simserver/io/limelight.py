"""One camera's frames on NetworkTables as a Limelight publishes them (AprilTag pipeline, or
neural detector for a camera with an object detector).

Robot code reads them with LimelightHelpers (or the raw table) unchanged. Table
``limelight-<name>`` (or ``<name>`` when it already starts with ``limelight``), every value a
double or double array, stamped with the frame's publish time in the robot's time base. The
topics are declared in :data:`TOPICS` (docs/protocol.md lists them); a robot pose array
(``botpose*``) is [x m, y m, z m, roll°, pitch°, yaw°, latency ms, tag count, tag span m, mean
tag distance m, mean tag area %] then 7 values per tag [id, txnc, tync, ta, distance to camera
m, distance to robot m, ambiguity]: MegaTag1 (``botpose*``) is the multi-tag solution with two
or more tags, the single-tag one with one, zeros with none; MegaTag2 (``botpose_orb*``) is
the position solved from all tags' corners at once with the robot's orientation given
(:mod:`simserver.models.megatag2`): the one robot code sent on ``robot_orientation_set``
before the capture, or the camera's own IMU, as ``imumode_set`` says
(:mod:`simserver.io.limelight_heading`); zeros with no tag. ``stddevs`` holds the standard
deviations of both. The field-centre and red-wall poses need the field size.

A detector camera (``CameraSpec.detector``) sees no tags: its primary target (``tv``, ``tx``,
``ty``, ``txnc``, ``tync``, ``ta``) is the largest piece, ``tid`` is -1, ``tclass`` is its
class's label, ``t2d`` carries its class id, and ``rawdetections`` has 12 values per piece
(Limelight's NetworkTables API; LimelightHelpers.getRawDetections): [class id, txnc, tync, ta,
then the box corners x, y in px: top-left, top-right, bottom-right, bottom-left].

LimelightHelpers computes a pose's timestamp as (NT timestamp - latency); with the values
stamped at the publish time that is the capture time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import ntcore
from wpimath.geometry import Pose3d

from simserver.contract.topics import TopicGroup, TopicSpec
from simserver.io.framestamps import FrameStamper
from simserver.io.limelight_heading import HeadingSource
from simserver.models.camera import (
    CameraSpec,
    Fiducial,
    Frame,
    min_area_rect,
)
from simserver.models.megatag2 import TagLocalizer

TABLE = "/<table>"
POSE_LAYOUT = "m, m, m, deg, deg, deg, ms, count, m, m, %, then 7 per tag"


def _spec(key: str, unit: str, doc: str, nt_type: str = "double",
          direction: str = "out") -> TopicSpec:
    return TopicSpec(f"{TABLE}/{key}", nt_type, direction, unit, doc)


def _pose(key: str, doc: str) -> TopicSpec:
    return _spec(key, POSE_LAYOUT, doc, "double[]")


TV = _spec("tv", "1/0", "1 with a target in view, else 0.")
TX = _spec("tx", "deg", "Primary tag's offset from the crosshair at the image centre, right "
           "positive.")
TY = _spec("ty", "deg", "Primary tag's offset from the crosshair, up positive.")
TXNC = _spec("txnc", "deg", "Primary tag's horizontal offset from the principal point.")
TYNC = _spec("tync", "deg", "Primary tag's vertical offset from the principal point.")
TA = _spec("ta", "% of image", "Primary tag's area.")
TID = _spec("tid", "id", "Primary tag's id, -1 without one (and for a detector).")
TCLASS = _spec("tclass", "", "Class label of the primary detection of a detector camera; "
               "empty otherwise.", "string")
TL = _spec("tl", "ms", "Pipeline latency: the whole capture-to-publish delay.")
CL = _spec("cl", "ms", "Capture latency: 0 (`tl` holds it all).")
HB = _spec("hb", "count", "Heartbeat, +1 per frame, set last.")
GETPIPE = _spec("getpipe", "index", "Active pipeline: 0.")
BOTPOSE_WPIBLUE = _pose("botpose_wpiblue", "MegaTag1 robot pose from the blue origin, with "
                        "per-tag data.")
BOTPOSE = _pose("botpose", "MegaTag1 robot pose from the field centre.")
BOTPOSE_WPIRED = _pose("botpose_wpired", "MegaTag1 robot pose from the red origin.")
BOTPOSE_ORB_WPIBLUE = _pose("botpose_orb_wpiblue", "MegaTag2 robot pose from the blue origin: "
                            "the position from all tags' corners in one solve, with the "
                            "orientation the robot program sends on `robot_orientation_set` "
                            "(or the internal IMU's, see `imumode_set`).")
BOTPOSE_ORB = _pose("botpose_orb", "MegaTag2 robot pose from the field centre.")
BOTPOSE_ORB_WPIRED = _pose("botpose_orb_wpired", "MegaTag2 robot pose from the red origin.")
RAWFIDUCIALS = _spec("rawfiducials", "7 per tag", "id, txnc, tync, ta, distance to camera, "
                     "to robot, ambiguity.", "double[]")
RAWDETECTIONS = _spec("rawdetections", "12 per piece", "Detector cameras: class id, txnc "
                      "deg, tync deg, ta %, then the box corners x, y px: top-left, "
                      "top-right, bottom-right, bottom-left; largest first. Empty for AprilTag "
                      "cameras.", "double[]")
T2D = _spec("t2d", "17 values", "Valid, count, tl, cl, tx, ty, txnc, tync, ta, tid, detector "
            "class id (-1 for tags), -1, long side px, short side px, horizontal extent px, "
            "vertical extent px, skew deg.", "double[]")
STDDEVS = _spec("stddevs", "m, m, m, deg, deg, deg, twice", "Standard deviations of MegaTag1's "
                "x, y, z, roll, pitch, yaw, then MegaTag2's, from the pose solve's covariance "
                "with the corner noise (MegaTag2's z, roll, pitch, yaw are given: 0); zeros "
                "for a pose not published.", "double[]")
ROBOT_ORIENTATION = _spec("robot_orientation_set", "deg", "Robot yaw, yaw rate, pitch, pitch "
                          "rate, roll, roll rate from the robot program, for MegaTag2 (zeros "
                          "until sent).", "double[]", "in")
IMU_MODE = _spec("imumode_set", "mode", "Limelight 4's IMU mode for MegaTag2: 0 external "
                 "(`robot_orientation_set`), 1 external seeding the internal IMU, 2 internal, "
                 "3/4 internal with assist (modelled as 2); double or integer.", "double", "in")
DOUBLES = (TV, TX, TY, TXNC, TYNC, TA, TID, TL, CL, HB, GETPIPE)
POSES = {  # (MegaTag2, origin) -> topic
    (False, "blue"): BOTPOSE_WPIBLUE, (False, "centre"): BOTPOSE, (False, "red"): BOTPOSE_WPIRED,
    (True, "blue"): BOTPOSE_ORB_WPIBLUE, (True, "centre"): BOTPOSE_ORB,
    (True, "red"): BOTPOSE_ORB_WPIRED}
TOPICS = TopicGroup(
    "Limelight", "Per camera with `protocol = \"limelight\"` or `\"both\"`, in table `<table>`: "
    "`limelight-<camera>`, or the camera's name when it starts with `limelight`. Robot code "
    "reads them with LimelightHelpers unchanged; every value is stamped with the frame's "
    "publish time in the robot's time base, so LimelightHelpers' timestamp (NT time - "
    "latency) is the capture time.",
    (*DOUBLES, BOTPOSE_WPIBLUE, BOTPOSE, BOTPOSE_WPIRED, BOTPOSE_ORB_WPIBLUE, BOTPOSE_ORB,
     BOTPOSE_ORB_WPIRED, RAWFIDUCIALS, RAWDETECTIONS, T2D, STDDEVS, TCLASS, ROBOT_ORIENTATION,
     IMU_MODE))


class _Closable(Protocol):
    def close(self) -> None: ...


def limelight_table(name: str) -> str:
    """The table of camera ``name``: the name itself if it starts with ``limelight``
    (``limelight``, ``limelight-front``), otherwise ``limelight-<name>``."""
    return name if name.startswith("limelight") else f"limelight-{name}"


def _set_array(pub: ntcore.DoubleArrayPublisher, values: Sequence[float], time: int) -> None:
    pub.set([*values], time)


def _pose_array(pose: Pose3d) -> list[float]:
    r = pose.rotation()
    return [pose.X(), pose.Y(), pose.Z(), math.degrees(r.X()), math.degrees(r.Y()),
            math.degrees(r.Z())]


class LimelightPublisher:
    """Publishes one camera's frames as a Limelight does, on ``inst``, and reads the robot's
    ``robot_orientation_set`` and ``imumode_set``.

    fiducials: the tag layout the Limelight knows (for its robot poses). robot_time: maps
    simulated time (s) to the robot program's NT server time (s). field_size: (length m,
    width m), for the field-centre and red-origin poses (left out without it).
    """

    def __init__(self, inst: ntcore.NetworkTableInstance, spec: CameraSpec,
                 fiducials: Sequence[Fiducial], robot_time: Callable[[float], float],
                 field_size: tuple[float, float] | None = None):
        self._spec = spec
        self._stamper = FrameStamper(inst, robot_time)
        self._field_size = field_size
        self._tags = {f.id: f.pose for f in fiducials}
        self._tag_positions = {i: (p.X(), p.Y(), p.Z()) for i, p in self._tags.items()}
        self._mount_inverse = spec.robot_to_camera.inverse()
        self._heartbeat = 0
        self.table = limelight_table(spec.name)
        # sendAll: every frame's values reach a reader of the queue, even two frames
        # published in one tick (a tick late, catching up).
        opts = ntcore.PubSubOptions(periodic=0.01, sendAll=True, keepDuplicates=True)
        self._doubles = {s: inst.getDoubleTopic(s.at(table=self.table)).publish(opts)
                         for s in DOUBLES}
        arrays = [p for (_, origin), p in POSES.items()
                  if origin == "blue" or field_size is not None] + [RAWFIDUCIALS,
                                                                    RAWDETECTIONS, T2D,
                                                                    STDDEVS]
        self._arrays = {s: inst.getDoubleArrayTopic(s.at(table=self.table)).publish(opts)
                        for s in arrays}
        self._tclass = inst.getStringTopic(TCLASS.at(table=self.table)).publish(opts)
        self._heading = HeadingSource(inst, ROBOT_ORIENTATION.at(table=self.table),
                                      IMU_MODE.at(table=self.table), spec.name)
        self._localizer = TagLocalizer(spec, fiducials)
        self._k = spec.camera_matrix()
        self._centre = ((spec.width - 1) / 2.0, (spec.height - 1) / 2.0)

    # --- publishing -----------------------------------------------------------------------

    def publish(self, frame: Frame) -> None:
        """Publish one delivered frame (call in delivery order; the caller flushes)."""
        stamps = self._stamper.stamps(frame)
        capture_us = stamps.capture if stamps.known else None
        nt_time = stamps.nt_time
        latency_ms = stamps.latency_ms
        fx, fy = self._k[:2]
        ccx, ccy = self._centre
        self._heartbeat += 1
        best = frame.best

        raw: list[float] = []
        dists: list[float] = []
        for tag in frame.tags:
            to_cam = tag.best.translation().norm()
            to_robot = (self._spec.robot_to_camera + tag.best).translation().norm()
            dists.append(to_cam)
            raw += [float(tag.id), tag.yaw, tag.pitch, tag.area, to_cam, to_robot,
                    tag.ambiguity]
        count = len(frame.tags)
        span = 0.0
        centres = [self._tag_positions[t.id] for t in frame.tags if t.id in self._tag_positions]
        for i, a in enumerate(centres):
            for b in centres[i + 1:]:
                span = max(span, math.dist(a, b))
        stats = [float(count), span, sum(dists) / count if count else 0.0,
                 sum(t.area for t in frame.tags) / count if count else 0.0]

        mt1 = self._megatag1(frame)
        mt2 = None
        std = [0.0] * 12
        if mt1 is not None:
            ids = frame.multitag.ids if frame.multitag is not None else None
            std[:6] = self._localizer.megatag1_stddevs(frame, mt1, ids)
        o = self._heading.at_capture(frame.robot_pose[2], capture_us)  # every frame: seeding
        if frame.tags:
            est = self._localizer.megatag2(frame, o.yaw, o.pitch, o.roll)
            if est is not None:
                mt2 = [est.x, est.y, 0.0, math.degrees(o.roll), math.degrees(o.pitch),
                       math.degrees(o.yaw)]
                std[6:8] = est.std_x, est.std_y
        empty = [0.0] * 6 + [latency_ms, 0.0, 0.0, 0.0, 0.0]
        tail = [latency_ms, *stats, *raw]
        for megatag2, pose in ((False, mt1), (True, mt2)):
            arrays = {"blue": empty if pose is None else [*pose, *tail]}
            if self._field_size is not None:
                length, width = self._field_size
                arrays["centre"] = arrays["red"] = empty
                if pose is not None:
                    arrays["centre"] = [pose[0] - length / 2, pose[1] - width / 2, *pose[2:],
                                        *tail]
                    arrays["red"] = [length - pose[0], width - pose[1], pose[2], pose[3],
                                     pose[4], math.degrees(math.remainder(
                                         math.radians(pose[5] + 180.0), math.tau)), *tail]
            for origin, array in arrays.items():
                _set_array(self._arrays[POSES[(megatag2, origin)]], array, nt_time)
        _set_array(self._arrays[RAWFIDUCIALS], raw, nt_time)
        _set_array(self._arrays[STDDEVS], std, nt_time)

        detections: list[float] = []
        for p in frame.pieces:  # box corners from top-left, clockwise on the image
            (x0, y1), (x1, _), (_, y0), _ = p.corners
            detections += [float(p.class_id), p.yaw, p.pitch, p.area, x0, y0, x1, y0, x1, y1,
                           x0, y1]
        _set_array(self._arrays[RAWDETECTIONS], detections, nt_time)
        piece = frame.pieces[0] if frame.pieces else None
        target = best or piece
        d = self._doubles
        if target is None:
            values = {TV: 0.0, TX: 0.0, TY: 0.0, TXNC: 0.0, TYNC: 0.0, TA: 0.0, TID: -1.0}
            t2d = [0.0, 0.0, latency_ms, 0.0] + [0.0] * 5 + [-1.0, -1.0, -1.0] + [0.0] * 5
        else:
            px, py = target.center
            tx = math.degrees(math.atan((px - ccx) / fx))
            ty = math.degrees(math.atan((ccy - py) / fy))
            tid = float(best.id) if best is not None else -1.0
            values = {TV: 1.0, TX: tx, TY: ty, TXNC: target.yaw, TYNC: target.pitch,
                      TA: target.area, TID: tid}
            rect = min_area_rect(target.corners)
            sides = sorted((math.dist(rect[0], rect[1]), math.dist(rect[1], rect[2])))
            xs = [c[0] for c in target.corners]
            ys = [c[1] for c in target.corners]
            t2d = [1.0, float(count or len(frame.pieces)), latency_ms, 0.0, tx, ty, target.yaw,
                   target.pitch, target.area, tid,
                   float(piece.class_id) if best is None and piece is not None else -1.0, -1.0,
                   sides[1], sides[0], max(xs) - min(xs), max(ys) - min(ys), 0.0]
        label = self._spec.detector.label(piece.class_id) if (
            piece is not None and self._spec.detector is not None) else ""
        self._tclass.set(label, nt_time)
        values.update({TL: latency_ms, CL: 0.0, GETPIPE: 0.0})
        for spec, value in values.items():
            d[spec].set(value, nt_time)
        _set_array(self._arrays[T2D], t2d, nt_time)
        d[HB].set(float(self._heartbeat), nt_time)  # last: the frame is complete

    def _megatag1(self, frame: Frame) -> list[float] | None:
        """Robot pose array (6 values) from the multi-tag or the single-tag solution."""
        if frame.multitag is not None:
            camera = Pose3d().transformBy(frame.multitag.field_to_camera)
        elif len(frame.tags) == 1 and frame.tags[0].id in self._tags:
            tag = frame.tags[0]
            camera = self._tags[tag.id].transformBy(tag.best.inverse())
        else:
            return None
        return _pose_array(camera.transformBy(self._mount_inverse))

    @property
    def heartbeat(self) -> tuple[str, int]:
        """(topic, value) of the heartbeat ``hb`` last published: set after every other value
        of the frame."""
        return HB.at(table=self.table), self._heartbeat

    def close(self) -> None:
        """Unpublish every topic and stop reading."""
        publishers: list[_Closable] = [*self._doubles.values(), *self._arrays.values(),
                                       self._tclass]
        for pub in publishers:
            pub.close()
        self._heading.close()

