"""The camera matrix of a camera given by its field of view, against independent references:
OpenCV's own principal point (``cv2.initCameraMatrix2D``, which centres it on the image in
OpenCV's pixel convention) and PhotonLib's simulated calibration (photonlibpy's
``SimCameraProperties.setCalibrationFromFOV``). docs/vision.md, "The camera model", states the
convention."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from simserver.models.camera import CameraSpec

cv2 = pytest.importorskip("cv2")
SIZES = [(960, 720), (1280, 800), (641, 481), (320, 240)]


def opencv_principal_point(width: int, height: int) -> tuple[float, float]:
    """(cx, cy) that OpenCV's initCameraMatrix2D gives from views of a planar grid."""
    grid = np.array([[x, y, 0.0] for x in range(5) for y in range(4)], np.float32)
    k = np.array([[500.0, 0.0, 0.4 * width], [0.0, 500.0, 0.6 * height], [0.0, 0.0, 1.0]])
    views = [cv2.projectPoints(grid, np.array(r), np.array([-2.0, -1.5, 9.0]), k, None)[0]
             for r in ([0.1, 0.2, 0.0], [-0.2, 0.1, 0.1], [0.05, -0.2, 0.0])]
    m = cv2.initCameraMatrix2D([grid] * 3, [v.astype(np.float32) for v in views],
                               (width, height))
    return float(m[0, 2]), float(m[1, 2])


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_principal_point_is_opencvs_image_centre(width, height):
    _, _, cx, cy = CameraSpec("c", width=width, height=height).camera_matrix()
    assert (cx, cy) == opencv_principal_point(width, height)
    assert (cx, cy) == ((width - 1) / 2, (height - 1) / 2)


@pytest.mark.parametrize("horizontal", [math.radians(70.0), math.radians(100.0)])
def test_the_field_of_view_spans_the_outer_edges_of_the_edge_pixels(horizontal):
    spec = CameraSpec("c", width=960, height=720, fov_diagonal=None, fov_horizontal=horizontal)
    fx, _, cx, _ = spec.camera_matrix()
    assert spec.horizontal_fov() == pytest.approx(horizontal, abs=1e-12)
    # the left edge of pixel 0 is at x = -0.5
    assert math.atan((cx + 0.5) / fx) == pytest.approx(horizontal / 2, abs=1e-12)


@pytest.mark.skipif(importlib.util.find_spec("photonlibpy") is None,
                    reason="photonlibpy 2026 needs Python 3.11 or newer")
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_principal_point_and_focal_length_against_photonlibs_simulated_calibration(width,
                                                                                    height):
    from photonlibpy.simulation import SimCameraProperties
    from wpimath.geometry import Rotation2d

    fov = math.radians(90.0)
    props = SimCameraProperties()
    props.setCalibrationFromFOV(width, height, Rotation2d(fov))
    k = np.asarray(props.getIntrinsics())
    fx, fy, cx, cy = CameraSpec("c", width=width, height=height,
                                fov_diagonal=fov).camera_matrix()
    assert (cx, cy) == (k[0, 2], k[1, 2])
    # PhotonLib measures the field of view between the edge pixels' centres: its focal
    # length is shorter by (n - 1) / n. (photonlibpy's fx comes from a horizontal field of
    # view with a misplaced parenthesis; its fy follows PhotonLib's Java code.)
    assert fy * (height - 1) / height == pytest.approx(k[1, 1], rel=1e-12)
    assert fx == fy
