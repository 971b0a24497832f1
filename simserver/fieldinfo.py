"""Official field dimensions per season, from robotpy-apriltag's bundled layouts."""

from __future__ import annotations

from functools import cache

_FIELDS = {
    "2022": "k2022RapidReact",
    "2023": "k2023ChargedUp",
    "2024": "k2024Crescendo",
    "2025": "k2025ReefscapeWelded",
    "2026": "k2026RebuiltWelded",
}


@cache
def field_size(season: str) -> tuple[float, float]:
    """(length, width) of the season's field in metres."""
    from robotpy_apriltag import AprilTagField, AprilTagFieldLayout

    layout = AprilTagFieldLayout.loadField(getattr(AprilTagField, _FIELDS[season]))
    return float(layout.getFieldLength()), float(layout.getFieldWidth())
