"""Config schema of the cameras (``[cameras.<name>]``) and their targets (``[vision]``).

Declared with the field helpers of :mod:`simserver.config.fields`, like ``model.py``; the
loader turns every quantity into SI. ``CameraConfig.spec(name)`` and the ``VisionConfig``
helpers build the model objects of :mod:`simserver.models.camera`.

    [cameras.front]
    x = "0.3 m"
    z = "0.5 m"
    pitch = "-15 deg"          # tilted up (WPILib: positive pitch points the camera down)
    fov = "70 deg"
    protocol = "both"

    [cameras.intake]           # an object detector: game pieces instead of tags
    pipeline = "pieces"
    classes = "fuel"

    [vision]
    season = "field"           # the [field] season's official tags

    [vision.targets.speaker]
    x = "0.2 m"
    y = "5.5 m"
"""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wpimath.geometry import Pose3d, Rotation3d, Transform3d, Translation3d

from simserver.config.fields import (
    choice,
    integer,
    number,
    optional_quantity,
    optional_section,
    quantity,
    table,
    text,
)
from simserver.config.limits import DEG, LARGEST_FIELD, ROBOT_REACH
from simserver.field.seasons import SEASONS, season_fiducials
from simserver.models.camera import (
    BearingTarget,
    CameraSpec,
    Fiducial,
    PipelineSpec,
)
from simserver.models.detection import DetectorSpec

TAG_SEASONS = SEASONS
PROTOCOLS = ("photonvision", "limelight", "both")
PIPELINES = ("apriltag", "pieces")
ALL_CLASSES = "all"
ANGLE: dict[str, Any] = {"minimum": -360 * DEG, "maximum": 360 * DEG}
ON_ROBOT: dict[str, Any] = {"minimum": -ROBOT_REACH, "maximum": ROBOT_REACH}
ON_FIELD: dict[str, Any] = {"minimum": -LARGEST_FIELD, "maximum": LARGEST_FIELD}
HEIGHT: dict[str, Any] = {"minimum": 0.0, "maximum": 10.0}
FOV: dict[str, Any] = {"minimum": 1 * DEG, "maximum": 179 * DEG}
PIXELS: dict[str, Any] = {"minimum": 0.0, "maximum": 10000.0}
DISTORTION: dict[str, Any] = {"minimum": -100.0, "maximum": 100.0}


@dataclass(frozen=True)
class IntrinsicsConfig:
    """A calibrated camera: focal lengths and principal point in pixels, OpenCV distortion
    coefficients (as PhotonVision's calibration reports them)."""

    fx: float = number(None, "Focal length along x, px.", minimum=1.0, maximum=1e5)
    fy: float = number(None, "Focal length along y, px.", minimum=1.0, maximum=1e5)
    cx: float = number(None, "Principal point x, px, pixel centres at whole numbers from 0 "
                       "(OpenCV's convention: the image centre is (width - 1) / 2; a warning "
                       "outside the image).", **PIXELS)
    cy: float = number(None, "Principal point y, px from the top, as `cx` (the image centre "
                       "is (height - 1) / 2).", **PIXELS)
    k1: float = number(0.0, "Radial distortion coefficient k1.", **DISTORTION)
    k2: float = number(0.0, "Radial distortion coefficient k2.", **DISTORTION)
    p1: float = number(0.0, "Tangential distortion coefficient p1.", **DISTORTION)
    p2: float = number(0.0, "Tangential distortion coefficient p2.", **DISTORTION)
    k3: float = number(0.0, "Radial distortion coefficient k3.", **DISTORTION)


MAX_TAG_ID = 586  # the 36h11 family's largest id
MAX_PIPELINES = 10  # a Limelight's pipelines (PhotonVision allows more; 10 is plenty here)


def parse_ids(text: str) -> frozenset[int] | None:
    """The tag ids of a ``tag_ids`` value (None for `all`). ValueError ("tag_ids: ...")
    naming a bad entry."""
    if text.strip() == ALL_CLASSES:
        return None
    ids = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) > MAX_TAG_ID:
            raise ValueError(f"tag_ids: {part[:20]!r} is not a tag id 0..{MAX_TAG_ID}: give ids "
                             "separated by commas, or \"all\"")
        ids.add(int(part))
    return frozenset(ids)


@dataclass(frozen=True)
class PipelineConfig:
    """One pipeline robot code may select (`[cameras.<name>.pipelines.<index>]`, `<index>`
    being 0, 1, 2, ... without gaps): Limelight's `pipeline`, PhotonCamera's
    `setPipelineIndex`. A key left out takes the camera's value; calibrated intrinsics are
    scaled to the pipeline's resolution."""

    type: str | None = choice(None, PIPELINES, "What it detects: `apriltag` or `pieces` (the "
                              "camera's `pipeline` when left out).", optional=True)
    tag_ids: str | None = text(None, "AprilTag ids it reports, comma-separated, or `all` (the "
                               "camera's `tag_ids` when left out).", optional=True)
    classes: str | None = text(None, "With type `pieces`: piece types detected, by name, or "
                               "`all` (the camera's `classes` when left out).", optional=True)
    width: int | None = integer(None, "Horizontal resolution, px.", minimum=1, maximum=10000,
                                optional=True)
    height: int | None = integer(None, "Vertical resolution, px.", minimum=1, maximum=10000,
                                 optional=True)
    fps: float | None = number(None, "Frames per second.", minimum=0.1, maximum=1000.0,
                               optional=True)


@dataclass(frozen=True)
class CameraConfig:
    """A camera on the robot (`[cameras.<name>]`): its mount, optics, timing and what it
    publishes. The name is the PhotonVision camera name and the Limelight table
    (`limelight-<name>`, or the name itself when it starts with `limelight`)."""

    x: float = quantity("0 m", "length", "Mount position forward of the robot centre.",
                        **ON_ROBOT)
    y: float = quantity("0 m", "length", "Mount position left of the robot centre.", **ON_ROBOT)
    z: float = quantity("0.5 m", "length", "Mount height above the carpet.", **HEIGHT)
    roll: float = quantity("0 deg", "angle", "Rotation about the camera's forward axis.",
                           **ANGLE)
    pitch: float = quantity(
        "0 deg", "angle", "Tilt about the robot's left axis (WPILib convention: positive "
        "points the camera down, so a camera tilted up 15° has `pitch = \"-15 deg\"`).",
        **ANGLE)
    yaw: float = quantity("0 deg", "angle", "Heading on the robot, CCW positive (180 deg: "
                          "looking backward).", **ANGLE)
    width: int = integer(960, "Horizontal resolution, px.", minimum=1, maximum=10000)
    height: int = integer(720, "Vertical resolution, px.", minimum=1, maximum=10000)
    fov: float = quantity(
        "90 deg", "angle", "Diagonal field of view, between the outer edges of the corner "
        "pixels (square pixels, principal point at the image centre ((width - 1) / 2, "
        "(height - 1) / 2)). Ignored when `horizontal_fov` or `intrinsics` is given.", **FOV)
    horizontal_fov: float | None = optional_quantity(
        "angle", "Horizontal field of view, instead of the diagonal `fov`.", **FOV)
    intrinsics: IntrinsicsConfig | None = optional_section(
        "Calibrated intrinsics and distortion; override the field of view.")
    fps: float = number(30.0, "Frames per second.", minimum=0.1, maximum=1000.0)
    latency: float = quantity("35 ms", "time", "Mean delay from capture to publication.",
                              minimum=0.0, maximum=10.0, usual=(None, 0.5))
    jitter: float = quantity("5 ms", "time", "Standard deviation of that delay (frames keep "
                             "their order).", minimum=0.0, maximum=10.0, usual=(None, 0.5))
    noise: float = number(0.25, "Standard deviation of the noise on each tag-corner "
                          "coordinate (with `pipeline = \"pieces\"`: on each edge of a "
                          "piece's box), px; the reported poses carry the error it causes.",
                          minimum=0.0, maximum=100.0)
    min_area: float = number(0.02, "Smallest tag (or piece box) detected, % of the image "
                             "area (PhotonVision's unit).", minimum=0.0, maximum=100.0)
    max_range: float = quantity("10 m", "length", "Farthest target detected (a piece: to its "
                                "centre).", minimum=0.01, maximum=LARGEST_FIELD)
    pipeline: str = choice(
        "apriltag", PIPELINES,
        "What the camera detects: `apriltag` (tags, with poses), or `pieces` (an object "
        "detector: game pieces as boxes with a class and a confidence, PhotonVision's object "
        "detection or a Limelight neural detector, and no tags).")
    classes: str = text(
        ALL_CLASSES, "With `pipeline = \"pieces\"`: the piece types it detects, by name, "
        "comma-separated (`\"fuel\"`, `\"coral, algae\"`), or `all`.")
    confidence_gain: float = number(
        2.0, "With `pipeline = \"pieces\"`: the reported confidence is this times "
        "sqrt(box area % / 100), clipped to 0..1 (2: photonlibpy's simulation).",
        minimum=0.0, maximum=100.0)
    confidence_noise: float = number(
        0.0, "With `pipeline = \"pieces\"`: standard deviation of Gaussian noise on the "
        "confidence.", minimum=0.0, maximum=1.0)
    min_confidence: float = number(
        0.0, "With `pipeline = \"pieces\"`: detections of a lower confidence are dropped "
        "(PhotonVision's confidence threshold).", minimum=0.0, maximum=1.0)
    tag_ids: str = text(
        ALL_CLASSES, "AprilTag ids reported, comma-separated (`\"9, 10\"`), or `all`: a "
        "Limelight's or PhotonVision's tag ID filter. Robot code may override it "
        "(Limelight `fiducial_id_filters_set`).")
    pipelines: dict[str, PipelineConfig] = table(
        "Pipelines robot code selects by index (Limelight `pipeline`, PhotonCamera "
        "`setPipelineIndex`): `[cameras.<name>.pipelines.0]`, `.1`, ... Without them the "
        "camera has one pipeline, 0, made of its own keys.")
    protocol: str = choice(
        "photonvision", PROTOCOLS,
        "What it publishes: `photonvision` (`/photonvision/<name>/`, read by photonlibpy's "
        "PhotonCamera), `limelight` (table `limelight-<name>`, read by LimelightHelpers) or "
        "`both`. PhotonVision's topics are packed with photonlibpy, which needs Python 3.11 or "
        "newer: on 3.10 only `limelight` runs.")

    def robot_to_camera(self) -> Transform3d:
        """The mount as a WPILib transform from the robot centre."""
        return Transform3d(Translation3d(self.x, self.y, self.z),
                           Rotation3d(self.roll, self.pitch, self.yaw))

    def class_names(self) -> list[str] | None:
        """The piece type names of ``classes`` (None for `all`)."""
        return class_names(self.classes)

    def pipeline_specs(self, piece_classes: Mapping[str, int]) -> tuple[PipelineSpec, ...]:
        """The model's pipelines (none without a ``pipelines`` table), indexes in order.
        Raises ValueError naming the pipeline and key of a bad value."""
        out = []
        for index in range(len(self.pipelines)):
            p = self.pipelines.get(str(index))
            if p is None:
                raise ValueError(f"pipelines: indexes must be 0..{len(self.pipelines) - 1} "
                                 f"without gaps; {index} is missing")
            try:
                tag_ids = parse_ids(p.tag_ids if p.tag_ids is not None else self.tag_ids)
                detector = self.detector(piece_classes, p.type, p.classes)
            except ValueError as exc:
                raise ValueError(f"pipelines.{index}.{exc}") from None
            out.append(PipelineSpec(p.width or self.width, p.height or self.height,
                                    p.fps or self.fps, detector, tag_ids))
        return tuple(out)

    def detector(self, piece_classes: Mapping[str, int], pipeline: str | None = None,
                 classes: str | None = None) -> DetectorSpec | None:
        """The object detector of a `pieces` pipeline (None for `apriltag`), given the
        field's piece types (name -> class id; none: a field without pieces, where the names
        are not checked); ``pipeline``, ``classes``: a pipeline's own values instead of the
        camera's. Raises ValueError naming an unknown type."""
        if (pipeline or self.pipeline) != "pieces":
            return None
        names = class_names(classes if classes is not None else self.classes)
        ids = None
        if names is not None and piece_classes:
            unknown = [n for n in names if n not in piece_classes]
            if unknown:
                known = ", ".join(sorted(piece_classes)) or "none"
                raise ValueError(f"classes: no piece type {unknown[0][:40]!r} on this field "
                                 f"(piece types: {known})")
            ids = tuple(sorted({piece_classes[n] for n in names}))
        return DetectorSpec(classes=ids, labels=tuple(sorted(
            (cid, n) for n, cid in piece_classes.items())),
            confidence_gain=self.confidence_gain, confidence_noise=self.confidence_noise,
            min_confidence=self.min_confidence)

    def spec(self, name: str, piece_classes: Mapping[str, int] | None = None) -> CameraSpec:
        """The model's CameraSpec for the camera called ``name``; ``piece_classes``: the
        field's piece types (name -> class id) for an object detector."""
        intr = self.intrinsics
        return CameraSpec(
            name=name,
            robot_to_camera=self.robot_to_camera(),
            width=self.width,
            height=self.height,
            fov_diagonal=self.fov,
            fov_horizontal=self.horizontal_fov,
            intrinsics=None if intr is None else (intr.fx, intr.fy, intr.cx, intr.cy),
            distortion=(0.0,) * 5 if intr is None else (intr.k1, intr.k2, intr.p1, intr.p2,
                                                         intr.k3),
            fps=self.fps,
            latency=self.latency,
            latency_std=self.jitter,
            pixel_noise=self.noise,
            min_area=self.min_area,
            max_range=self.max_range,
            detector=self.detector(piece_classes or {}),
            tag_ids=parse_ids(self.tag_ids),
            pipelines=self.pipeline_specs(piece_classes or {}),
        )


def class_names(classes: str) -> list[str] | None:
    """The piece type names of a ``classes`` value (None for `all`)."""
    if classes.strip() == ALL_CLASSES:
        return None
    return [c.strip() for c in classes.split(",") if c.strip()]


@dataclass(frozen=True)
class FiducialConfig:
    """A custom AprilTag (`[vision.fiducials.<name>]`), added to (or replacing, by id) the
    season's tags."""

    id: int = integer(None, "Tag id (36h11 family).", minimum=0, maximum=586)
    x: float = quantity(None, "length", "Centre x, from the blue alliance wall.", **ON_FIELD)
    y: float = quantity(None, "length", "Centre y, from the right-hand wall seen from blue.",
                        **ON_FIELD)
    z: float = quantity(None, "length", "Centre height above the carpet.", **HEIGHT)
    roll: float = quantity("0 deg", "angle", "Rotation about the tag's normal.", **ANGLE)
    pitch: float = quantity("0 deg", "angle", "Tilt (WPILib convention: positive faces down).",
                            **ANGLE)
    yaw: float = quantity(None, "angle", "Direction the tag faces, CCW from the red wall "
                          "direction (180 deg: facing the blue wall).", **ANGLE)
    size: float = quantity("6.5 in", "length", "Edge of the black square (FRC tags: 6.5 in "
                           "since 2024, 6 in before).", minimum=0.01, maximum=2.0)

    def fiducial(self) -> Fiducial:
        """The model's Fiducial."""
        return Fiducial(self.id, Pose3d(Translation3d(self.x, self.y, self.z),
                                        Rotation3d(self.roll, self.pitch, self.yaw)), self.size)


@dataclass(frozen=True)
class BearingTargetConfig:
    """A point target seen as a bearing and a distance (`[vision.targets.<name>]`), with
    pyfrc VisionSim semantics, published under `/simserver/vision/<camera>/`."""

    x: float = quantity(None, "length", "Field x, from the blue alliance wall.", **ON_FIELD)
    y: float = quantity(None, "length", "Field y, from the right-hand wall seen from blue.",
                        **ON_FIELD)
    z: float = quantity("0 m", "length", "Height (for line of sight over field elements).",
                        **HEIGHT)
    view_start: float = quantity(
        "0 deg", "angle", "The target is seen only from directions (target to camera, CCW "
        "from the red wall direction) between `view_start` and `view_end`, counter-clockwise.",
        minimum=-720 * DEG, maximum=720 * DEG)
    view_end: float = quantity("360 deg", "angle", "End of that window (a window of 360° or "
                               "more: seen from everywhere).", minimum=-720 * DEG,
                               maximum=720 * DEG)
    min_distance: float = quantity("0 m", "length", "Nearer than this it is not seen.",
                                   minimum=0.0, maximum=10 * LARGEST_FIELD)
    max_distance: float = quantity("1000 m", "length", "Farther than this it is not seen.",
                                   minimum=0.01, maximum=10 * LARGEST_FIELD)

    def target(self, name: str) -> BearingTarget:
        """The model's BearingTarget called ``name``."""
        return BearingTarget(name, self.x, self.y, self.z, self.view_start, self.view_end,
                             self.min_distance, self.max_distance)


@dataclass(frozen=True)
class VisionConfig:
    """What the cameras can see (`[vision]`)."""

    season: str = choice(
        "field", ("field", *TAG_SEASONS, "none"),
        "Season whose official AprilTags are on the field: `field` (the `[field]` season), a "
        "year, or `none` (only `fiducials`).")
    fiducials: dict[str, FiducialConfig] = table("Custom AprilTags by name.")
    targets: dict[str, BearingTargetConfig] = table("Bearing targets by name.")

    def tag_season(self, field_season: str) -> str | None:
        """The season whose tags are used (None for `none`)."""
        if self.season == "none":
            return None
        return field_season if self.season == "field" else self.season

    def all_fiducials(self, field_season: str) -> list[Fiducial]:
        """The season's tags, then the custom ones (which replace a season tag of equal id)."""
        season = self.tag_season(field_season)
        tags = season_fiducials(season) if season is not None else []
        return tags + [f.fiducial() for f in self.fiducials.values()]

    def bearing_targets(self) -> list[BearingTarget]:
        """The bearing targets, in file order."""
        return [t.target(name) for name, t in self.targets.items()]


def camera_specs(cameras: dict[str, CameraConfig],
                 piece_classes: Mapping[str, int] | None = None) -> Sequence[CameraSpec]:
    """CameraSpecs of a ``[cameras]`` table, in file order; ``piece_classes``: the field's
    piece types (name -> class id), for the object detectors."""
    return [cfg.spec(name, piece_classes) for name, cfg in cameras.items()]

