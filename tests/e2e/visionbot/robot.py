"""A test robot that only looks: photonlibpy's PhotonCamera("front") and PhotonPoseEstimator on
the 2026 field, read every loop as robot code does. Each result becomes one JSON line in the
file named by $VISIONBOT_LOG: sequence id, getTimestampSeconds(), the robot clock when read,
tag ids and the multi-tag pose estimate."""

import json
import os

import wpilib
from photonlibpy import PhotonCamera, PhotonPoseEstimator
from robotpy_apriltag import AprilTagField, AprilTagFieldLayout
from wpimath.geometry import Rotation3d, Transform3d, Translation3d

# Must match the test's [cameras.front] mount.
MOUNT = Transform3d(Translation3d(0.3, 0.0, 0.5), Rotation3d(0.0, -0.2617993877991494, 0.0))


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.camera = PhotonCamera("front")
        layout = AprilTagFieldLayout.loadField(AprilTagField.k2026RebuiltWelded)
        self.estimator = PhotonPoseEstimator(layout, MOUNT)
        self.out = open(os.environ["VISIONBOT_LOG"], "w")  # noqa: SIM115 (open for the run)

    def robotPeriodic(self) -> None:
        now = wpilib.Timer.getFPGATimestamp()
        for result in self.camera.getAllUnreadResults():
            estimate = self.estimator.estimateCoprocMultiTagPose(result)
            pose = None if estimate is None else estimate.estimatedPose
            record = {
                "seq": result.metadata.sequenceID,
                "timestamp": result.getTimestampSeconds(),
                "read_at": now,
                "ids": [t.getFiducialId() for t in result.getTargets()],
                "multitag": None if pose is None else [pose.X(), pose.Y(),
                                                       pose.rotation().Z()],
            }
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()
