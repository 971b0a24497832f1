"""Where a Limelight's MegaTag2 orientation comes from: what robot code sends on
``robot_orientation_set``, or (Limelight 4, ``imumode_set``) the camera's own IMU.

``robot_orientation_set`` is [yaw, yaw rate, pitch, pitch rate, roll, roll rate] in degrees
(LimelightHelpers.SetRobotOrientation). For a frame, the sample robot code sent last at or
before the capture (its NT time) is used, as the device pairs each image with the orientation
it had then; the oldest kept sample when all are later. Until robot code sends one, the
orientation is all zeros: the entry the Limelight reads holds zeros, and MegaTag2 solves with
yaw 0 (the pose is right only while the robot faces the red wall).

``imumode_set`` (Limelight's NetworkTables API; LimelightHelpers.SetIMUMode; a double or an
integer), read when a frame is published:

- 0: external only: ``robot_orientation_set``.
- 1: external, and the internal IMU is seeded with it: as 0; each frame also aligns the
  internal IMU's heading with the yaw robot code sent.
- 2: internal: the simulated IMU's heading, the robot's true heading at the capture plus
  the seeded offset (0 until mode 1 seeds it) plus Gaussian noise of
  ``INTERNAL_IMU_NOISE`` (per frame, from a generator seeded from the camera's name); roll
  and pitch 0 (the simulated robot stays flat).
- 3, 4: internal, with MegaTag1's or the external yaw as a slow correction: the correction is
  not modelled (reported once in the log); as 2.

Any other value is reported once in the log and the previous mode kept.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections import deque
from typing import NamedTuple

import ntcore
import numpy as np

from simserver.util.lograte import LogLimiter

log = logging.getLogger(__name__)

# robot_orientation_set samples kept to find the orientation at a capture time (about 2 s
# at 50 Hz).
ORIENTATION_HISTORY = 100
INTERNAL_IMU_NOISE = math.radians(0.05)  # rad: σ of the internal IMU's heading, per frame
IMU_MODES = {0: "external IMU only", 1: "external IMU, seeding the internal one",
             2: "internal IMU", 3: "internal IMU with MegaTag1 assist",
             4: "internal IMU with external assist"}
_ASSISTED = (3, 4)


class Orientation(NamedTuple):
    """The robot's orientation MegaTag2 uses: ``yaw``, ``pitch``, ``roll`` rad (WPILib's
    Rotation3d angles)."""

    yaw: float
    pitch: float
    roll: float


ZERO = Orientation(0.0, 0.0, 0.0)


def _finite(values: list[float], i: int) -> float:
    """values[i] in rad from degrees, 0 when missing or not finite."""
    if len(values) > i and math.isfinite(values[i]):
        return math.radians(values[i])
    return 0.0


class HeadingSource:
    """Reads ``robot_orientation_set`` and ``imumode_set`` of one Limelight table on ``inst``
    (full topic names given) and gives the orientation of each frame. ``name``: the camera,
    for log lines and the internal IMU's noise seed."""

    def __init__(self, inst: ntcore.NetworkTableInstance, orientation_topic: str,
                 imu_mode_topic: str, name: str):
        self._name = name
        self._orientation = inst.getDoubleArrayTopic(orientation_topic).subscribe(
            [], ntcore.PubSubOptions(sendAll=True, pollStorage=ORIENTATION_HISTORY))
        # A double subscriber also receives integers (ntcore converts numbers).
        self._imu_mode = inst.getDoubleTopic(imu_mode_topic).subscribe(
            0.0, ntcore.PubSubOptions(sendAll=True, pollStorage=20))
        self._samples: deque[tuple[int, Orientation]] = deque(maxlen=ORIENTATION_HISTORY)
        self.mode = 0
        self._offset = 0.0  # internal IMU heading - true heading, rad
        self._rng = np.random.default_rng(zlib.crc32(name.encode()))
        self._limiter = LogLimiter(log, burst=1, window=math.inf)

    def _read(self) -> None:
        for sample in self._orientation.readQueue():
            value = sample.value
            if len(value) >= 1 and math.isfinite(value[0]):
                self._samples.append((int(sample.serverTime), Orientation(
                    math.radians(value[0]), _finite(value, 2), _finite(value, 4))))
        for mode in self._imu_mode.readQueue():
            self._set_mode(mode.value)

    def _set_mode(self, value: float) -> None:
        if not (math.isfinite(value) and value == int(value) and int(value) in IMU_MODES):
            self._limiter.log(f"bad:{value:.6g}", logging.WARNING,
                              "camera %s: imumode_set %.6g is not a mode 0-4; keeping mode %d",
                              self._name, value, self.mode)
            return
        self.mode = int(value)
        if self.mode in _ASSISTED:
            self._limiter.log(f"assist:{self.mode}", logging.WARNING,
                              "camera %s: imumode_set %d (%s): the assist's heading correction "
                              "is not modelled; the internal IMU's heading is used as in "
                              "mode 2", self._name, self.mode, IMU_MODES[self.mode])

    def external(self, robot_time_us: int | None = None) -> Orientation | None:
        """The orientation robot code sent last at or before ``robot_time_us`` (its NT
        server time, µs; the latest when None, the oldest kept if all are later); None if it
        has sent none."""
        self._read()
        if not self._samples:
            return None
        if robot_time_us is None:
            return self._samples[-1][1]
        chosen = self._samples[0][1]
        for t, orientation in self._samples:
            if t > robot_time_us:
                break
            chosen = orientation
        return chosen

    def at_capture(self, true_heading: float, robot_time_us: int | None) -> Orientation:
        """The orientation for a frame captured at ``robot_time_us`` (robot NT time, µs;
        None when unknown: the latest sample) with the robot's true heading
        ``true_heading`` rad then, as the IMU mode says."""
        sent = self.external(robot_time_us)
        if self.mode <= 1:
            if self.mode == 1 and sent is not None and math.isfinite(true_heading):
                self._offset = math.remainder(sent.yaw - true_heading, math.tau)
            return sent if sent is not None else ZERO
        noise = float(self._rng.normal(0.0, INTERNAL_IMU_NOISE))
        return Orientation(math.remainder(true_heading + self._offset + noise, math.tau),
                           0.0, 0.0)

    def close(self) -> None:
        """Stop reading."""
        self._orientation.close()
        self._imu_mode.close()
