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

Settings robot code writes to the table (:meth:`LimelightPublisher.read_requests`, once per
tick): ``pipeline``, ``fiducial_id_filters_set`` and ``throttle_set`` become requests for the
camera model; ``priorityid`` (the primary target), ``camerapose_robotspace_set`` (the mount
the robot poses use) and ``ledMode`` are kept here; any other key is logged once
(:mod:`simserver.io.camerarequests`). ``json`` carries each frame as Limelight's JSON dump
(:mod:`simserver.io.limelightjson`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from typing import Protocol

import ntcore
from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d

from simserver.contract.topics import TopicGroup, TopicSpec
from simserver.io import limelightjson
from simserver.io.camerarequests import RequestReader, ids, numbers, whole
from simserver.io.framestamps import FrameStamper
from simserver.io.limelight_heading import HeadingSource
from simserver.models.camera import (
    CameraRequest,
    CameraSpec,
    Fiducial,
    Frame,
    TagObservation,
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
GETPIPE = _spec("getpipe", "index", "Pipeline that captured the frame (`pipeline` selects "
                "it among the camera's `pipelines`).")
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
JSON = _spec("json", "JSON", "The frame's results as Limelight's JSON dump (the fields "
             "LimelightHelpers.getLatestResults reads; docs/vision.md).", "string")
CAMERAPOSE_ROBOTSPACE = _spec("camerapose_robotspace", "m, m, m, deg, deg, deg",
                              "The mount used for the robot poses: the config's, or the one "
                              "robot code set on `camerapose_robotspace_set`.", "double[]")
PIPELINE = _spec("pipeline", "index", "Select a pipeline of the camera's `pipelines` (from the "
                 "next capture).", direction="in")
PRIORITYID = _spec("priorityid", "id", "Tag id tx/ty/tid target; -1: the largest tag. Other "
                   "tags still count for the robot poses.", direction="in")
FIDUCIAL_FILTERS = _spec("fiducial_id_filters_set", "ids", "Tag ids the camera detects "
                         "(overrides the pipeline's `tag_ids`; empty: the pipeline's again).",
                         "double[]", "in")
CAMERAPOSE_SET = _spec("camerapose_robotspace_set", "m, m, m, deg, deg, deg",
                       "Mount used to compute the robot poses [forward, left, up, roll, pitch, "
                       "yaw] (WPILib axes, as LimelightHelpers reads it); where the camera "
                       "really is stays the config's.", "double[]", "in")
LED_MODE = _spec("ledMode", "0..8", "LED mode: kept, changes nothing detected (tags and "
                 "pieces need no LEDs).", direction="in")
THROTTLE = _spec("throttle_set", "frames", "Captures skipped after each processed one: the "
                 "frame rate becomes fps / (throttle + 1); outputs hold meanwhile.",
                 direction="in")
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
     BOTPOSE_ORB_WPIRED, RAWFIDUCIALS, RAWDETECTIONS, T2D, STDDEVS, TCLASS, JSON,
     CAMERAPOSE_ROBOTSPACE, ROBOT_ORIENTATION, IMU_MODE, PIPELINE, PRIORITYID, FIDUCIAL_FILTERS,
     CAMERAPOSE_SET, LED_MODE, THROTTLE))
# Keys robot code writes that other parts read (MegaTag2's inputs).
HANDLED_ELSEWHERE = ("robot_orientation_set", "imumode_set")
LED_MODES = 8  # 0: the pipeline's, 1 off, 2 blink, 3 on, 4-8 halves (Limelight's ledMode)
MAX_THROTTLE = 10_000  # frames


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
        self._mount = spec.robot_to_camera  # as robot code last set it (the robot poses')
        self._mount_inverse = self._mount.inverse()
        self._priority = -1  # priorityid: the tag tx/ty/tid target (-1: the largest)
        self.led_mode = 0
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
        self._fiducials = tuple(fiducials)
        self._localizers: dict[int, TagLocalizer] = {}  # by pipeline, for the current mount
        self._json = inst.getStringTopic(JSON.at(table=self.table)).publish(opts)
        self._camerapose = inst.getDoubleArrayTopic(
            CAMERAPOSE_ROBOTSPACE.at(table=self.table)).publish(opts)
        self._requests = RequestReader(inst, f"/{self.table}/", spec.name)
        self._pipelines: dict[int, CameraSpec] = {}

    # --- settings from robot code ---------------------------------------------------------

    def read_requests(self) -> list[CameraRequest]:
        """Read what robot code wrote to the table since the last call: the settings of the
        camera model (pipeline, tag filter, throttle) as requests for the world; priorityid,
        camerapose_robotspace_set and ledMode kept here; anything else, or a bad value,
        logged once (see :mod:`simserver.io.camerarequests`)."""
        out: list[CameraRequest] = []
        req, name = self._requests, self._spec.name
        for key, _, value in req.read():
            if key == PIPELINE.name.rsplit("/", 1)[1]:
                index = whole(value, 0, self._spec.pipeline_count - 1)
                if index is None:
                    req.bad(key, value, f"a pipeline index 0..{self._spec.pipeline_count - 1}")
                else:
                    out.append(CameraRequest(name, "pipeline", index))
            elif key == "priorityid":
                tag = whole(value, -1, 10**6)
                if tag is None:
                    req.bad(key, value, "a tag id, or -1")
                else:
                    self._priority = tag
            elif key == "fiducial_id_filters_set":
                got = ids(value, 10**6)
                if got is None:
                    req.bad(key, value, "an array of tag ids")
                else:
                    out.append(CameraRequest(name, "tag_filter", got or None))
            elif key == "camerapose_robotspace_set":
                pose = numbers(value, 6)
                if pose is None or max(abs(v) for v in pose[:3]) > 100.0:
                    req.bad(key, value, "6 finite numbers [forward m, left m, up m, roll deg, "
                            "pitch deg, yaw deg], within 100 m")
                else:
                    self._set_mount(pose)
            elif key == "ledMode":
                mode = whole(value, 0, LED_MODES)
                if mode is None:
                    req.bad(key, value, f"a LED mode 0..{LED_MODES}")
                else:
                    self.led_mode = mode
                    req.once(key, "kept", "ledMode %d kept; LEDs change nothing simserver "
                             "detects", mode, level=logging.INFO)
            elif key == "throttle_set":
                skip = whole(value, 0, MAX_THROTTLE)
                if skip is None:
                    req.bad(key, value, f"a whole number of frames 0..{MAX_THROTTLE}")
                else:
                    out.append(CameraRequest(name, "throttle", skip))
            elif key not in HANDLED_ELSEWHERE:
                req.unmodelled(key, value, "a Limelight setting with no effect on what the "
                               "simulated camera reports")
        return out

    def _set_mount(self, pose: list[float]) -> None:
        """The mount robot code set: [forward, left, up m, roll, pitch, yaw deg]."""
        x, y, z, roll, pitch, yaw = pose
        self._mount = Transform3d(Translation3d(x, y, z), Rotation3d(
            math.radians(roll), math.radians(pitch), math.radians(yaw)))
        self._mount_inverse = self._mount.inverse()
        self._localizers.clear()

    # --- publishing -----------------------------------------------------------------------

    def publish(self, frame: Frame) -> None:
        """Publish one delivered frame (call in delivery order; the caller flushes)."""
        stamps = self._stamper.stamps(frame)
        capture_us = stamps.capture if stamps.known else None
        nt_time = stamps.nt_time
        latency_ms = stamps.latency_ms
        times = (stamps.capture * 1e-6, stamps.publish * 1e-6) if stamps.known else (
            math.nan, math.nan)
        pspec = self._pipeline_spec(frame.pipeline)
        fx, fy = pspec.camera_matrix()[:2]
        ccx, ccy = (pspec.width - 1) / 2.0, (pspec.height - 1) / 2.0
        self._heartbeat += 1

        raw: list[float] = []
        dists: list[float] = []
        for tag in frame.tags:
            to_cam = tag.best.translation().norm()
            to_robot = (self._mount + tag.best).translation().norm()
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
        localizer = self._localizer(frame.pipeline)
        std = [0.0] * 12
        if mt1 is not None:
            ids_used = frame.multitag.ids if frame.multitag is not None else None
            std[:6] = localizer.megatag1_stddevs(frame, mt1, ids_used)
        o = self._heading.at_capture(frame.robot_pose[2], capture_us)  # every frame: seeding
        if frame.tags:
            est = localizer.megatag2(frame, o.yaw, o.pitch, o.roll)
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
            if not megatag2:
                poses_json = {POSES[(False, o)].name.rsplit("/", 1)[1]: a[:6]
                              for o, a in arrays.items()}
        _set_array(self._arrays[RAWFIDUCIALS], raw, nt_time)
        _set_array(self._arrays[STDDEVS], std, nt_time)

        detections: list[float] = []
        for p in frame.pieces:  # box corners from top-left, clockwise on the image
            (x0, y1), (x1, _), (_, y0), _ = p.corners
            detections += [float(p.class_id), p.yaw, p.pitch, p.area, x0, y0, x1, y0, x1, y1,
                           x0, y1]
        _set_array(self._arrays[RAWDETECTIONS], detections, nt_time)
        piece = frame.pieces[0] if frame.pieces else None
        best = self._primary(frame)
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
        label = pspec.detector.label(piece.class_id) if (
            piece is not None and pspec.detector is not None) else ""
        self._tclass.set(label, nt_time)
        values.update({TL: latency_ms, CL: 0.0, GETPIPE: float(frame.pipeline)})
        for spec, value in values.items():
            d[spec].set(value, nt_time)
        _set_array(self._arrays[T2D], t2d, nt_time)
        mount = _pose_array(Pose3d().transformBy(self._mount))
        _set_array(self._camerapose, mount, nt_time)
        self._json.set(limelightjson.dump(
            frame, pspec, latency_ms, times, mount, poses_json, stats), nt_time)
        d[HB].set(float(self._heartbeat), nt_time)  # last: the frame is complete

    def _primary(self, frame: Frame) -> TagObservation | None:
        """The tag tx/ty/tid target: the largest, or with ``priorityid`` that tag only
        (Limelight: "ignore other targets"; none when it is not in view)."""
        if self._priority < 0:
            return frame.best
        return next((t for t in frame.tags if t.id == self._priority), None)

    def _localizer(self, index: int) -> TagLocalizer:
        """The robot-pose solver of pipeline ``index`` (its intrinsics) with the mount robot
        code set last."""
        localizer = self._localizers.get(index)
        if localizer is None:
            spec = dataclasses.replace(self._pipeline_spec(index), robot_to_camera=self._mount)
            localizer = self._localizers[index] = TagLocalizer(spec, self._fiducials)
        return localizer

    def _pipeline_spec(self, index: int) -> CameraSpec:
        """The camera running pipeline ``index`` (its resolution and detector)."""
        spec = self._pipelines.get(index)
        if spec is None:
            spec = self._pipelines[index] = self._spec.pipeline(index)
        return spec

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
                                       self._tclass, self._json, self._camerapose]
        for pub in publishers:
            pub.close()
        self._heading.close()
        self._requests.close()

