"""`[cameras.<name>.pipelines.<index>]` and `tag_ids` in the config: what loads, and what is
refused by `simserver check` and `simserver run` with the file, the key and the range, exit
status 2, before anything starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.config.loader import default_config_text, loads
from simserver.config.vision import camera_specs

CAMERA = '\n[cameras.front]\nfps = 30\nwidth = 960\nheight = 720\ntag_ids = "26"\n'


def test_pipelines_inherit_the_cameras_keys_they_do_not_give():
    cfg = loads(default_config_text() + CAMERA + """
[cameras.front.pipelines.0]
[cameras.front.pipelines.1]
tag_ids = "all"
width = 640
height = 480
fps = 90
[cameras.front.pipelines.2]
type = "pieces"
""")
    spec, = camera_specs(cfg.cameras, {"fuel": 0})
    p0, p1, p2 = spec.pipelines
    assert (p0.width, p0.height, p0.fps, p0.tag_ids, p0.detector) == (
        960, 720, 30.0, frozenset({26}), None)
    assert (p1.width, p1.height, p1.fps, p1.tag_ids) == (640, 480, 90.0, None)
    assert p2.detector is not None and p2.tag_ids == frozenset({26})


def test_without_pipelines_the_camera_is_what_it_was():
    """No `pipelines` table: exactly one pipeline, index 0, the camera's own spec (the
    behaviour before pipelines existed)."""
    cfg = loads(default_config_text() + '\n[cameras.front]\nfps = 30\n')
    spec, = camera_specs(cfg.cameras)
    assert spec.pipelines == () and spec.tag_ids is None and spec.pipeline_count == 1
    assert spec.pipeline(0) is spec


@pytest.mark.parametrize(("extra", "key", "says"), [
    pytest.param("[cameras.front.pipelines.1]\n", "cameras.front.pipelines",
                 "indexes must be 0..0 without gaps; 0 is missing", id="gap"),
    pytest.param("[cameras.front.pipelines.x]\n", "cameras.front.pipelines.x",
                 "a pipeline index must be 0..9", id="not-an-index"),
    pytest.param("[cameras.front.pipelines.10]\n", "cameras.front.pipelines.10",
                 "a pipeline index must be 0..9", id="index-10"),
    pytest.param("[cameras.front.pipelines.0]\nfps = 0\n", "cameras.front.pipelines.0.fps",
                 "must be 0.1 ≤ value ≤ 1000", id="fps-0"),
    pytest.param("[cameras.front.pipelines.0]\nwidth = 0\n",
                 "cameras.front.pipelines.0.width", "must be 1 ≤ value ≤ 10000", id="width-0"),
    pytest.param('[cameras.front.pipelines.0]\ntype = "retro"\n',
                 "cameras.front.pipelines.0.type", "apriltag", id="type"),
    pytest.param('[cameras.front.pipelines.0]\ntag_ids = "7, 999"\n',
                 "cameras.front.pipelines.0.tag_ids", "'999' is not a tag id 0..586",
                 id="tag-id-999"),
    pytest.param('[cameras.front.pipelines.0]\ncolour = 3\n',
                 "cameras.front.pipelines.0.colour", "unknown key", id="unknown-key"),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_bad_pipeline_is_refused_naming_file_key_and_range(tmp_path, extra, key, says,
                                                             command):
    path = tmp_path / "robot.toml"
    path.write_text(default_config_text() + CAMERA + extra)
    args = [command, str(path)] + (["--duration", "0.1"] if command == "run" else [])
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"robot.toml: {key}" in result.stderr and says in result.stderr, result.stderr


def test_a_bad_camera_tag_ids_is_refused(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(default_config_text() + CAMERA.replace('"26"', '"26, x"'))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "robot.toml: cameras.front.tag_ids: 'x' is not a tag id 0..586" in result.stderr
