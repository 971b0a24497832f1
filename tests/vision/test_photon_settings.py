"""PhotonVision settings robot code sends, through `simserver run`, read back by
photonlibpy's own ``PhotonCamera`` in a separate robot-side process
(tests/vision/photon_settings_robot.py).

The robot stands still facing the 2026 blue hub (tags 26, 25, 4, 6, 3 in view); the camera
has two pipelines: 0 reports tag 26 only, 1 every tag. References: the config's pipelines,
photonlibpy's documented semantics of each request and state topic, and the installed
photonlibpy's version (photonlibpy.version)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.io.photon_process import RobotProcess, needs_photonlibpy
from tests.ntutil import SimserverProcess, free_port
from tests.vision.test_limelight_settings import config_text

pytestmark = [pytest.mark.network, pytest.mark.slow, needs_photonlibpy]

ROBOT = Path(__file__).with_name("photon_settings_robot.py")


def test_photoncamera_switches_pipeline_driver_mode_and_led_and_sees_the_version(tmp_path):
    """setPipelineIndex(1): pipelineIndexState becomes 1 and the results hold every tag in
    view instead of tag 26 alone; setDriverMode(True): driverMode true and results keep
    coming with no targets; setLEDMode(kOn): ledModeState kOn; the version topic is the
    installed photonlibpy's PhotonVision version (and its version check raises nothing);
    setFPSLimit (not modelled) is logged once however often it is set; an out-of-range
    pipeline index changes nothing and is logged once."""
    from photonlibpy.version import PHOTONVISION_VERSION

    cfg = tmp_path / "camera.toml"
    cfg.write_text(config_text().replace('protocol = "limelight"', 'protocol = "photonvision"'))
    inputs = tmp_path / "still.csv"
    inputs.write_text("time,left,right\n0,0,0\n600,0,0\n")
    port = free_port()
    robot = RobotProcess(port, 0.0, script=ROBOT)
    sim = None
    try:
        robot.wait_line("READY", 20)
        sim = SimserverProcess(str(cfg), "--server", f"127.0.0.1:{port}", "--inputs",
                               str(inputs), "--duration", "600", log_dir=tmp_path)
        lines = robot.finish(timeout=90)
    finally:
        robot.close()
        if sim is not None:
            sim.interrupt()
            sim.close()
    assert robot.proc.returncode == 0, robot.stderr()
    phases = {p["phase"]: p for p in (json.loads(line) for line in lines
                                      if line.startswith("{"))}
    assert all(p["ok"] for p in phases.values()), phases
    start, pipe1, driver = phases["start"], phases["pipeline 1"], phases["driver mode"]
    assert start["pipeline"] == 0 and start["results"]
    assert all(ids == [26] for ids in start["results"])
    assert pipe1["pipeline"] == 1 and pipe1["results"]
    assert all({25, 26} <= set(ids) for ids in pipe1["results"])
    assert driver["driver_mode"] is True and len(driver["results"]) >= 10
    assert all(ids == [] for ids in driver["results"])
    processing = phases["processing"]
    assert processing["driver_mode"] is False
    assert all({25, 26} <= set(ids) for ids in processing["results"])
    assert phases["led on"]["led"] == 1
    assert {p["version"] for p in phases.values()} == {PHOTONVISION_VERSION}
    bad = phases["bad index"]
    assert bad["pipeline"] == 1 and all({25, 26} <= set(ids) for ids in bad["results"])
    log = sim.stderr()
    assert "incompatible" not in robot.stderr().lower()
    for said in ("/photonvision/front/fpsLimitRequest =",
                 "/photonvision/front/pipelineIndexRequest = 5"):
        assert len([line for line in log.splitlines() if said in line]) == 1, (said, log)
