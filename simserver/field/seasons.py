"""Season data from robotpy-apriltag's bundled layouts: which seasons simserver knows, each
season's AprilTag layout and its field's dimensions.

    length, width = field_size("2026")          # m
    tags = season_fiducials("2024")             # the official AprilTags, for cameras
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robotpy_apriltag import AprilTagFieldLayout

    from simserver.models.camera import Fiducial

_LAYOUTS = {
    "2022": "k2022RapidReact",
    "2023": "k2023ChargedUp",
    "2024": "k2024Crescendo",
    "2025": "k2025ReefscapeWelded",
    "2026": "k2026RebuiltWelded",
}

SEASONS: tuple[str, ...] = tuple(sorted(_LAYOUTS))
"""Seasons with a field layout, oldest first."""


@cache
def tag_layout(season: str) -> AprilTagFieldLayout:
    """The official AprilTag layout of ``season`` ("2022" … "2026"); ValueError for another."""
    from robotpy_apriltag import AprilTagField, AprilTagFieldLayout

    if season not in _LAYOUTS:
        raise ValueError(f"no AprilTag layout for season {season!r} "
                         f"(known: {', '.join(SEASONS)})")
    return AprilTagFieldLayout.loadField(getattr(AprilTagField, _LAYOUTS[season]))


@cache
def field_size(season: str) -> tuple[float, float]:
    """(length, width) of the season's field in metres."""
    layout = tag_layout(season)
    return float(layout.getFieldLength()), float(layout.getFieldWidth())


def season_fiducials(season: str) -> list[Fiducial]:
    """The official AprilTags of a season, as cameras see them (36h11, 6.5 in)."""
    from simserver.models.camera import layout_fiducials

    return layout_fiducials(tag_layout(season))
