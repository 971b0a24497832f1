"""One camera's frames on NetworkTables as a Limelight publishes them (AprilTag pipeline).

Robot code reads them with LimelightHelpers (or the raw table) unchanged. Table
``limelight-<name>`` (or ``<name>`` when it already starts with ``limelight``), every value a
double or double array, stamped with the frame's publish time in the robot's time base:

- ``tv`` (1 with a target), ``tx``/``ty`` (deg from the crosshair at the image centre, right
  and up positive), ``txnc``/``tync`` (from the principal point), ``ta`` (% of the image),
  ``tid`` (primary tag id, -1), ``tl`` (pipeline latency, ms: the whole capture-to-publish
  delay), ``cl`` (capture latency, ms: 0, since ``tl`` holds it all), ``hb`` (heartbeat,
  +1 per frame), ``getpipe`` (0);
- ``botpose_wpiblue`` (MegaTag1): [x m, y m, z m, roll°, pitch°, yaw°, latency ms, tag count,
  tag span m, mean tag distance m, mean tag area %] then 7 values per tag [id, txnc, tync, ta,
  distance to camera m, distance to robot m, ambiguity]; the pose is the multi-tag solution
  with two or more tags, the single-tag one with one, zeros with none;
- ``botpose_orb_wpiblue`` (MegaTag2): the same layout, the position solved with the robot yaw
  the robot program last sent in ``robot_orientation_set`` before the capture (that yaw, roll
  and pitch 0); zeros and tag count 0 until a yaw has been received;
- ``botpose``/``botpose_wpired`` and ``botpose_orb``/``botpose_orb_wpired`` (field-centre and
  red-wall origins) when the field size is given;
- ``rawfiducials`` (7 values per tag) and ``t2d`` (17 values: valid, count, tl, cl, tx, ty,
  txnc, tync, ta, tid, -1, -1, long side px, short side px, horizontal extent px, vertical
  extent px, skew°).

LimelightHelpers computes a pose's timestamp as (NT timestamp - latency); with the values
stamped at the publish time that is the capture time.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

import ntcore
from wpimath.geometry import Pose3d

from simserver.models.camera import (
    CameraSpec,
    Fiducial,
    Frame,
    megatag2_position,
    min_area_rect,
)

# robot_orientation_set samples kept to find the yaw at a capture time (about 2 s at 50 Hz).
ORIENTATION_HISTORY = 100


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
    ``robot_orientation_set``.

    fiducials: the tag layout the Limelight knows (for its robot poses). robot_time: maps
    simulated time (s) to the robot program's NT server time (s). field_size: (length m,
    width m), for the field-centre and red-origin poses (left out without it).
    """

    def __init__(self, inst: ntcore.NetworkTableInstance, spec: CameraSpec,
                 fiducials: Sequence[Fiducial], robot_time: Callable[[float], float],
                 field_size: tuple[float, float] | None = None):
        self._inst = inst
        self._spec = spec
        self._robot_time = robot_time
        self._field_size = field_size
        self._tags = {f.id: f.pose for f in fiducials}
        self._tag_positions = {i: (p.X(), p.Y(), p.Z()) for i, p in self._tags.items()}
        self._mount_inverse = spec.robot_to_camera.inverse()
        self._heartbeat = 0
        self.table = limelight_table(spec.name)
        table = inst.getTable(self.table)
        opts = ntcore.PubSubOptions(periodic=0.01, keepDuplicates=True)
        self._doubles = {key: table.getDoubleTopic(key).publish(opts) for key in (
            "tv", "tx", "ty", "txnc", "tync", "ta", "tid", "tl", "cl", "hb", "getpipe")}
        arrays = ["botpose_wpiblue", "botpose_orb_wpiblue", "rawfiducials", "t2d"]
        if field_size is not None:
            arrays += ["botpose", "botpose_wpired", "botpose_orb", "botpose_orb_wpired"]
        self._arrays = {key: table.getDoubleArrayTopic(key).publish(opts) for key in arrays}
        self._orientation = table.getDoubleArrayTopic("robot_orientation_set").subscribe(
            [], ntcore.PubSubOptions(sendAll=True, pollStorage=ORIENTATION_HISTORY))
        self._yaws: deque[tuple[int, float]] = deque(maxlen=ORIENTATION_HISTORY)
        self._k = spec.camera_matrix()
        self._centre = ((spec.width - 1) / 2.0, (spec.height - 1) / 2.0)

    # --- robot orientation ----------------------------------------------------------------

    def _read_orientation(self) -> None:
        for sample in self._orientation.readQueue():
            value = sample.value
            if len(value) >= 1 and math.isfinite(value[0]):
                self._yaws.append((int(sample.serverTime), math.radians(value[0])))

    def robot_yaw(self, robot_time_us: int | None = None) -> float | None:
        """The yaw (rad) the robot program sent last at or before ``robot_time_us`` (its NT
        server time, µs; the latest when None, the oldest kept if all are later); None if it
        has sent none."""
        self._read_orientation()
        if not self._yaws:
            return None
        if robot_time_us is None:
            return self._yaws[-1][1]
        chosen = self._yaws[0][1]
        for t, yaw in self._yaws:
            if t > robot_time_us:
                break
            chosen = yaw
        return chosen

    # --- publishing -----------------------------------------------------------------------

    def publish(self, frame: Frame) -> None:
        """Publish one delivered frame (call in delivery order; the caller flushes)."""
        offset = self._inst.getServerTimeOffset() or 0
        capture = self._robot_time(frame.capture_time)
        publish = self._robot_time(frame.delivery_time)
        if math.isfinite(capture) and math.isfinite(publish):
            capture_us = round(capture * 1e6)
            nt_time = max(round(publish * 1e6) - offset, 1)
        else:
            capture_us, nt_time = None, 0  # robot time unknown: stamp "now"
        latency_ms = frame.latency * 1000.0
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
        yaw = self.robot_yaw(capture_us)
        if yaw is not None:
            xy = megatag2_position(frame, yaw, self._spec.robot_to_camera,
                                   self._tag_positions)
            if xy is not None:
                mt2 = [xy[0], xy[1], 0.0, 0.0, 0.0, math.degrees(yaw)]
        empty = [0.0] * 6 + [latency_ms, 0.0, 0.0, 0.0, 0.0]
        poses = {"botpose_wpiblue": mt1, "botpose_orb_wpiblue": mt2}
        for key, pose in poses.items():
            _set_array(self._arrays[key],
                       empty if pose is None else [*pose, latency_ms, *stats, *raw], nt_time)
        if self._field_size is not None:
            length, width = self._field_size
            for suffix, pose in (("", mt1), ("_orb", mt2)):
                centre_arr = red_arr = empty
                if pose is not None:
                    tail = [latency_ms, *stats, *raw]
                    centre_arr = [pose[0] - length / 2, pose[1] - width / 2, *pose[2:], *tail]
                    red_arr = [length - pose[0], width - pose[1], pose[2], pose[3], pose[4],
                               math.degrees(math.remainder(math.radians(pose[5] + 180.0),
                                                           math.tau)), *tail]
                _set_array(self._arrays[f"botpose{suffix}"], centre_arr, nt_time)
                _set_array(self._arrays[f"botpose{suffix}_wpired"], red_arr, nt_time)
        _set_array(self._arrays["rawfiducials"], raw, nt_time)

        d = self._doubles
        if best is None:
            values = {"tv": 0.0, "tx": 0.0, "ty": 0.0, "txnc": 0.0, "tync": 0.0, "ta": 0.0,
                      "tid": -1.0}
            t2d = [0.0, 0.0, latency_ms, 0.0] + [0.0] * 5 + [-1.0, -1.0, -1.0] + [0.0] * 5
        else:
            px, py = best.center
            tx = math.degrees(math.atan((px - ccx) / fx))
            ty = math.degrees(math.atan((ccy - py) / fy))
            values = {"tv": 1.0, "tx": tx, "ty": ty, "txnc": best.yaw, "tync": best.pitch,
                      "ta": best.area, "tid": float(best.id)}
            rect = min_area_rect(best.corners)
            sides = sorted((math.dist(rect[0], rect[1]), math.dist(rect[1], rect[2])))
            xs = [c[0] for c in best.corners]
            ys = [c[1] for c in best.corners]
            t2d = [1.0, float(count), latency_ms, 0.0, tx, ty, best.yaw, best.pitch, best.area,
                   float(best.id), -1.0, -1.0, sides[1], sides[0], max(xs) - min(xs),
                   max(ys) - min(ys), 0.0]
        values.update(tl=latency_ms, cl=0.0, getpipe=0.0)
        for key, value in values.items():
            d[key].set(value, nt_time)
        _set_array(self._arrays["t2d"], t2d, nt_time)
        d["hb"].set(float(self._heartbeat), nt_time)  # last: the frame is complete

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
        return f"/{self.table}/hb", self._heartbeat

    def close(self) -> None:
        """Unpublish every topic and stop reading."""
        publishers: list[_Closable] = [*self._doubles.values(), *self._arrays.values()]
        for pub in publishers:
            pub.close()
        self._orientation.close()

