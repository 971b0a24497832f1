"""The detector keys of `[cameras.<name>]`: loaded into a CameraSpec with a DetectorSpec,
refused (naming the key) or warned about when they cannot mean anything."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simserver.config.issues import ConfigError
from simserver.config.loader import loads
from simserver.config.vision import camera_specs
from tests.ntutil import REPO

PIECES = {"fuel": 0, "coral": 1, "algae": 2}


def cameras(extra: str) -> str:
    return f'[cameras.intake]\nprotocol = "limelight"\n{extra}\n'


def test_a_pieces_pipeline_becomes_a_detector_with_its_classes_and_confidence():
    cfg = loads(cameras('pipeline = "pieces"\nclasses = "coral, algae"\n'
                        'confidence_gain = 1.5\nconfidence_noise = 0.1\nmin_confidence = 0.2\n'
                        'noise = 0.7\nmin_area = 0.05\nmax_range = "4 m"'))
    (spec,) = camera_specs(cfg.cameras, PIECES)
    det = spec.detector
    assert det is not None and det.classes == (1, 2)
    assert (det.confidence_gain, det.confidence_noise, det.min_confidence) == (1.5, 0.1, 0.2)
    assert det.label(1) == "coral" and det.label(7) == "7"
    assert (spec.pixel_noise, spec.min_area, spec.max_range) == (0.7, 0.05, 4.0)
    (every,) = camera_specs(loads(cameras('pipeline = "pieces"')).cameras, PIECES)
    assert every.detector is not None and every.detector.classes is None


def test_the_default_pipeline_sees_tags():
    (spec,) = camera_specs(loads(cameras("")).cameras, PIECES)
    assert spec.detector is None


def test_an_unknown_class_is_named():
    cfg = loads(cameras('pipeline = "pieces"\nclasses = "fuel, note"'))
    with pytest.raises(ValueError, match=r"'note'.*algae, coral, fuel"):
        camera_specs(cfg.cameras, PIECES)


@pytest.mark.parametrize(("extra", "key"), [
    ('pipeline = "yolo"', "cameras.intake.pipeline"),
    ('pipeline = "pieces"\nclasses = " , "', "cameras.intake.classes"),
    ('pipeline = "pieces"\nmin_confidence = 1.5', "cameras.intake.min_confidence"),
    ('pipeline = "pieces"\nconfidence_gain = -1', "cameras.intake.confidence_gain"),
])
def test_bad_detector_keys_are_refused_naming_the_key(extra, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        loads(cameras(extra), "robot.toml")


def test_classes_on_an_apriltag_camera_warn():
    cfg = loads(cameras('classes = "fuel"'), "robot.toml")
    assert any("cameras.intake.classes" in w and "ignored" in w for w in cfg.warnings)


def test_simserver_check_exits_2_on_a_bad_pipeline(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(cameras('pipeline = "yolo"'))
    proc = subprocess.run([sys.executable, "-m", "simserver", "check", str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert "cameras.intake.pipeline" in proc.stderr + proc.stdout
