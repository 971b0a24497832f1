"""Limelight settings robot code sends, through `simserver run`: a robot-side reader and
writer of the `limelight-front` table (LimelightHelpers' table semantics: numbers as doubles,
arrays as double[]) in this process, simserver in its own.

The robot stands still facing the 2026 blue hub (tags 26, 25, 4, 6, 3 in view, 26 the
largest) with a noise-free camera: two pipelines, 0 reporting tag 26 only, 1 every tag.
References: the true robot pose and mount (wpimath transforms), the camera's frame period,
and the documented meaning of each key (docs/vision.md)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator

import ntcore
import pytest
from wpimath.geometry import Pose2d, Pose3d, Rotation2d, Rotation3d, Transform3d, Translation3d

from simserver.config.loader import default_config_text
from tests.ntutil import SimserverProcess, client, free_port, wait_for

pytestmark = [pytest.mark.network, pytest.mark.slow]

START = 'start = { x = "2 m", y = "4 m", heading = "0 deg" }'
X, Y, HEADING = 2.5, 4.0, math.radians(5.0)
MOUNT = (0.3, 0.0, 0.5, 0.0, -15.0, 0.0)  # forward, left, up m; roll, pitch, yaw deg
FPS = 30.0
TABLE = "/limelight-front"
WAIT = 10.0  # s: a setting reaches the frames within a tick and a frame's latency


def config_text() -> str:
    x, y, z, roll, pitch, yaw = MOUNT
    text = default_config_text().replace(
        START, f'start = {{ x = "{X} m", y = "{Y} m", heading = "{math.degrees(HEADING)} deg" }}')
    assert START not in text
    return text + f"""
[cameras.front]
x = "{x} m"
y = "{y} m"
z = "{z} m"
roll = "{roll} deg"
pitch = "{pitch} deg"
yaw = "{yaw} deg"
width = 960
height = 720
intrinsics = {{ fx = 600.0, fy = 600.0, cx = 479.5, cy = 359.5 }}
fps = {FPS}
latency = "30 ms"
jitter = "0 ms"
noise = 0.0
protocol = "limelight"

[cameras.front.pipelines.0]
tag_ids = "26"

[cameras.front.pipelines.1]
tag_ids = "all"
"""


class Robot:
    """The robot program's side of the table: LimelightHelpers' reads and writes."""

    def __init__(self, port: int):
        self.inst = client(port)
        t = self.inst.getTable(TABLE)
        self.table = t
        latest = ntcore.PubSubOptions(periodic=0.005)
        self.doubles = {k: t.getDoubleTopic(k).subscribe(math.nan, latest)
                        for k in ("tv", "tx", "tid", "getpipe", "hb")}
        self.arrays = {k: t.getDoubleArrayTopic(k).subscribe([], latest)
                       for k in ("rawfiducials", "botpose_wpiblue", "camerapose_robotspace")}
        self.json = t.getStringTopic("json").subscribe("", latest)
        self.beats = t.getDoubleTopic("hb").subscribe(
            math.nan, ntcore.PubSubOptions(sendAll=True, pollStorage=200, periodic=0.005))
        self._pubs: dict[str, ntcore.Publisher] = {}

    def set(self, key: str, value: object) -> None:
        """setLimelightNTDouble / setLimelightNTDoubleArray (a string for the wrong-type
        cases)."""
        pub = self._pubs.get(key)
        if pub is None:
            topic = self.table.getTopic(key)
            nt_type = ("string" if isinstance(value, str) else
                       "double[]" if isinstance(value, list) else "double")
            pub = self._pubs[key] = topic.genericPublish(nt_type)
        if isinstance(value, str):
            pub.setString(value)
        elif isinstance(value, list):
            pub.setDoubleArray([float(v) for v in value])
        else:
            pub.setDouble(float(value))
        self.inst.flush()

    def get(self, key: str) -> float:
        return self.doubles[key].get()

    def ids(self) -> list[int]:
        raw = self.arrays["rawfiducials"].get()
        return [int(raw[i]) for i in range(0, len(raw), 7)]

    def results(self) -> dict:
        text = self.json.get()
        return json.loads(text) if text else {}

    def close(self) -> None:
        ntcore.NetworkTableInstance.destroy(self.inst)


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Iterator[tuple[Robot, SimserverProcess]]:
    tmp = tmp_path_factory.mktemp("limelight-settings")
    cfg = tmp / "camera.toml"
    cfg.write_text(config_text())
    inputs = tmp / "still.csv"
    inputs.write_text("time,left,right\n0,0,0\n600,0,0\n")
    port = free_port()
    sim = SimserverProcess(str(cfg), "--serve", f"127.0.0.1:{port}", "--inputs", str(inputs),
                           "--duration", "600", log_dir=tmp)
    robot = Robot(port)
    try:
        wait_for(lambda: robot.get("tv") == 1.0, 30, f"a Limelight target; {sim.stderr()}")
        yield robot, sim
    finally:
        robot.close()
        sim.interrupt()
        sim.close()


def test_pipeline_selects_what_is_detected_and_getpipe_follows(session):
    """Pipeline 0 (tag_ids = "26") reports tag 26 only; `pipeline` = 1 (every tag) makes
    getpipe 1, the JSON's pID 1, and the other tags in view appear; back to 0, back to 26."""
    robot, _ = session
    robot.set("pipeline", 0)
    wait_for(lambda: robot.get("getpipe") == 0.0 and robot.ids() == [26], WAIT, "pipeline 0")
    assert robot.get("tid") == 26.0
    robot.set("pipeline", 1)
    wait_for(lambda: robot.get("getpipe") == 1.0, WAIT, "getpipe 1")
    wait_for(lambda: robot.results().get("pID") == 1, WAIT, "JSON pID 1")
    assert {25, 26} <= set(robot.ids())
    assert {f["fID"] for f in robot.results()["Fiducial"]} == set(robot.ids())
    robot.set("pipeline", 0)
    wait_for(lambda: robot.get("getpipe") == 0.0 and robot.ids() == [26], WAIT, "pipeline 0")


def test_priorityid_and_the_tag_filter_choose_the_target(session):
    """priorityid 25 makes tid 25 and tx the tx of tag 25 in the JSON results (not the
    largest, 26); a tag not in view gives no target (Limelight: "ignore other targets");
    -1 gives the largest back. fiducial_id_filters_set [25] overrides the pipeline's filter:
    only 25 is reported; an empty array gives the pipeline's filter back."""
    robot, _ = session
    robot.set("pipeline", 1)
    wait_for(lambda: robot.get("getpipe") == 1.0, WAIT, "pipeline 1")
    robot.set("priorityid", 25)
    wait_for(lambda: robot.get("tid") == 25.0, WAIT, "tid 25")
    tag25 = next(f for f in robot.results()["Fiducial"] if f["fID"] == 25)
    assert robot.get("tx") == pytest.approx(tag25["tx"], abs=1e-9)
    assert {25, 26} <= set(robot.ids())  # localization still sees every tag
    robot.set("priorityid", 7)
    wait_for(lambda: robot.get("tv") == 0.0 and robot.get("tid") == -1.0, WAIT, "no target")
    robot.set("priorityid", -1)
    wait_for(lambda: robot.get("tid") == 26.0, WAIT, "tid 26, the largest")

    robot.set("fiducial_id_filters_set", [25])
    wait_for(lambda: robot.ids() == [25] and robot.get("tid") == 25.0, WAIT, "only tag 25")
    robot.set("fiducial_id_filters_set", [])
    wait_for(lambda: {25, 26} <= set(robot.ids()), WAIT, "every tag again")
    robot.set("pipeline", 0)
    wait_for(lambda: robot.ids() == [26], WAIT, "pipeline 0's filter")


def test_camerapose_robotspace_set_moves_botpose_by_exactly_the_mount_difference(session):
    """The mount robot code sets is the one the robot poses use (the camera itself stays
    where the config puts it): botpose becomes the camera's true pose times the inverse of
    the mount set, i.e. the true robot pose moved by true mount · set mount⁻¹ (noise-free
    camera: 1e-6 m, 1e-6°); camerapose_robotspace and the JSON's t6c_rs report it."""
    robot, _ = session
    robot.set("pipeline", 1)

    def mount(values) -> Transform3d:
        x, y, z, roll, pitch, yaw = values
        return Transform3d(Translation3d(x, y, z), Rotation3d(
            math.radians(roll), math.radians(pitch), math.radians(yaw)))

    truth = Pose3d(Pose2d(X, Y, Rotation2d(HEADING)))
    camera = truth.transformBy(mount(MOUNT))
    wait_for(lambda: robot.get("getpipe") == 1.0 and len(robot.ids()) >= 2, WAIT, "tags")

    def botpose() -> list[float]:
        return list(robot.arrays["botpose_wpiblue"].get()[:6])

    def near(pose: list[float], expected: Pose3d) -> bool:
        r = expected.rotation()
        want = [expected.X(), expected.Y(), expected.Z(), *(math.degrees(a) for a in (
            r.X(), r.Y(), r.Z()))]
        return len(pose) == 6 and all(abs(a - b) < 1e-6 for a, b in zip(pose, want,
                                                                         strict=True))

    wait_for(lambda: near(botpose(), truth), WAIT, f"the true pose, got {botpose()}")
    moved = (0.5, -0.2, 0.3, 0.0, -10.0, 20.0)
    robot.set("camerapose_robotspace_set", list(moved))
    expected = camera.transformBy(mount(moved).inverse())
    wait_for(lambda: near(botpose(), expected), WAIT,
             f"botpose with the mount set, got {botpose()}")
    assert truth.translation().distance(expected.translation()) > 0.3  # it did move
    assert list(robot.arrays["camerapose_robotspace"].get()) == pytest.approx(moved, abs=1e-9)
    assert robot.results()["t6c_rs"] == pytest.approx(moved, abs=1e-9)
    robot.set("camerapose_robotspace_set", list(MOUNT))
    wait_for(lambda: near(botpose(), truth), WAIT, "the true pose again")


def test_throttle_set_skips_frames_between_processed_ones(session):
    """throttle_set 2: one frame processed, two skipped: the heartbeats come 3/fps apart
    on average (jitter 0; single gaps in real time move by a late tick, about 1 ms, so the
    mean of 15 gaps is compared, within 1 %); 0: 1/fps again."""
    robot, _ = session

    def mean_gap(count: int) -> float:
        robot.beats.readQueue()
        got: list[int] = []
        wait_for(lambda: got.extend(v.time for v in robot.beats.readQueue()) or
                 len(got) > count, 3 * WAIT, "heartbeats")
        return (got[-1] - got[0]) * 1e-6 / (len(got) - 1)

    robot.set("throttle_set", 2)
    wait_for(lambda: mean_gap(2) > 0.09, WAIT, "the throttled rate")
    assert mean_gap(15) == pytest.approx(3 / FPS, rel=0.01)
    robot.set("throttle_set", 0)
    wait_for(lambda: mean_gap(2) < 0.04, WAIT, "the full rate")
    assert mean_gap(15) == pytest.approx(1 / FPS, rel=0.01)


def test_unmodelled_keys_are_logged_once_and_bad_values_change_nothing(session):
    """stream and crop (not modelled) are reported once each however often robot code
    writes them; a NaN pipeline, an out-of-range pipeline, a 5-value mount and a string LED
    mode are each reported once (per key) and ignored: the camera keeps running on its
    pipeline and mount."""
    robot, sim = session
    robot.set("pipeline", 0)
    wait_for(lambda: robot.get("getpipe") == 0.0, WAIT, "pipeline 0")
    for value in (1, 2, 1):
        robot.set("stream", value)
        robot.set("crop", [-1.0, 1.0, -0.5, value])
        time.sleep(0.05)
    robot.set("pipeline", math.nan)
    wait_for(lambda: f"{TABLE}/pipeline = nan" in sim.stderr(), WAIT, "the NaN reported")
    robot.set("pipeline", 7)  # the same key: not reported again
    robot.set("camerapose_robotspace_set", [0.1, 0.2, 0.3, 0.0, 0.0])
    robot.set("ledMode", "on")
    beat = robot.get("hb")
    wait_for(lambda: robot.get("hb") > beat + 10, WAIT, "frames after the bad values")
    assert robot.get("getpipe") == 0.0 and robot.ids() == [26]
    assert list(robot.arrays["camerapose_robotspace"].get()) == pytest.approx(MOUNT, abs=1e-9)
    wait_for(lambda: "ledMode" in sim.stderr(), WAIT, "the log lines")
    lines = sim.stderr().splitlines()
    for key in ("stream", "crop", "pipeline", "camerapose_robotspace_set", "ledMode"):
        said = [line for line in lines if f"{TABLE}/{key} =" in line]
        assert len(said) == 1, (key, said)
    assert "does not model" in next(line for line in lines if f"{TABLE}/stream =" in line)
    assert sim.alive()
