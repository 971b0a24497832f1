"""A frame as a Limelight's ``json`` results entry (LimelightHelpers.getLatestResults).

The fields are those LimelightHelpers' ``LimelightResults`` reads: ``pID`` (pipeline index),
``tl``/``cl`` (latency ms), ``ts`` (publish) and ``ts_rio`` (capture), both robot time in
seconds as LimelightHelpers documents them, ``v`` (1 with a target), the MegaTag1 robot poses
``botpose``, ``botpose_wpiblue``, ``botpose_wpired`` (x, y, z m, roll, pitch, yaw deg; the
field-centre and red ones only with the field size), ``botpose_tagcount``, ``botpose_span``,
``botpose_avgdist``, ``botpose_avgarea``, ``t6c_rs`` (the mount used), and the target lists:
``Fiducial`` (``fID``, ``fam``, ``pts`` corners px, ``ta``, ``tx``/``ty`` from the crosshair
at the image centre, ``tx_nocross``/``ty_nocross`` from the principal point, ``txp``/``typ``
the target centre px, ``ts`` skew 0), ``Detector`` (``class``, ``classID``, ``conf`` 0-100,
the same angles, area and corners), and empty ``Retro``, ``Classifier`` and ``Barcode``.
Left out: the per-tag camera-, target- and robot-space transforms (``t6c_ts``, ``t6r_fs``,
``t6r_ts``, ``t6t_cs``, ``t6t_rs``), which LimelightHelpers then reads as zeros.

    >>> from simserver.models.camera import CameraSpec, Frame
    >>> frame = Frame("front", 1, 0.0, 0.03, (0.0, 0.0, 0.0), (), None, ())
    >>> text = dump(frame, CameraSpec("front"), 30.0, (1.0, 1.03), [0.0] * 6, {}, [0.0] * 4)
    >>> json.loads(text)["pID"], json.loads(text)["v"]
    (0, 0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from simserver.models.camera import CameraSpec, Frame

FAMILY = "36H11"


def dump(frame: Frame, spec: CameraSpec, latency_ms: float, times: tuple[float, float],
         mount: Sequence[float], botposes: Mapping[str, Sequence[float]],
         stats: Sequence[float]) -> str:
    """The JSON text of ``frame``, captured by ``spec`` (the camera running the frame's
    pipeline). times: (capture, publish) robot time s (NaN: unknown, written as 0); mount:
    the robot-space camera pose (6 values); botposes: MegaTag1 arrays by key (6 values
    each; none without a pose); stats: tag count, span m, mean distance m, mean area %."""
    fx, fy, _, _ = spec.camera_matrix()
    ccx, ccy = (spec.width - 1) / 2.0, (spec.height - 1) / 2.0

    def target(centre: tuple[float, float], corners: Sequence[tuple[float, float]],
               area: float, yaw: float, pitch: float) -> dict[str, Any]:
        px, py = centre
        return {"ta": area, "tx": math.degrees(math.atan((px - ccx) / fx)),
                "ty": math.degrees(math.atan((ccy - py) / fy)), "tx_nocross": yaw,
                "ty_nocross": pitch, "txp": px, "typ": py,
                "pts": [[x, y] for x, y in corners]}

    fiducials = [{"fID": t.id, "fam": FAMILY, "skew": 0.0, "ts": 0.0,
                  **target(t.center, t.corners, t.area, t.yaw, t.pitch)} for t in frame.tags]
    labels = spec.detector
    detections = [{"class": labels.label(p.class_id) if labels is not None else "",
                   "classID": p.class_id, "conf": 100.0 * p.confidence,
                   **target(p.center, p.corners, p.area, p.yaw, p.pitch)}
                  for p in frame.pieces]
    capture, publish = (t if math.isfinite(t) else 0.0 for t in times)
    count, span, dist, area = stats
    out: dict[str, Any] = {
        "pID": frame.pipeline, "tl": latency_ms, "cl": 0.0, "ts": publish, "ts_rio": capture,
        "v": 1 if fiducials or detections else 0,
        "botpose_tagcount": count, "botpose_span": span, "botpose_avgdist": dist,
        "botpose_avgarea": area, "t6c_rs": list(mount),
        "Fiducial": fiducials, "Detector": detections, "Retro": [], "Classifier": [],
        "Barcode": []}
    for key in ("botpose", "botpose_wpiblue", "botpose_wpired"):
        if key in botposes:
            out[key] = list(botposes[key])
    return json.dumps(_finite(out))


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by 0 (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else 0.0
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
