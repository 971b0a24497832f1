"""The command line as a user meets it: exit codes, messages, scripted runs, Ctrl-C, docs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from simserver import docgen
from simserver.cli import main
from simserver.config.loader import default_config_text, loads, tomllib
from simserver.io.nt import photonvision_unavailable
from simserver.io.scripted import load_script
from simserver.runs.session import RunOptions, Session
from tests.ntutil import REPO, SimserverProcess, free_port, posix_signals, wait_for

S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_accepts_the_bundled_kitbot(tmp_path):
    path = tmp_path / "robot.toml"
    code, out, _ = run_cli("config", "-o", str(path))
    assert code == 0
    code, out, _ = run_cli("check", str(path))
    assert code == 0 and "OK" in out


def test_check_reports_every_problem_with_file_and_key_and_exits_2(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[robot]\nmass = "-3 kg"\n[drivetrain]\nwhel_diameter = "6 in"\n'
                    'track_width = "26 kg"\n')
    code, _, err = run_cli("check", str(path))
    assert code == 2
    assert f"{path}: robot.mass: must be 0.1 ≤ value ≤ 100 kg" in err
    assert f"{path}: drivetrain.whel_diameter: unknown key; did you mean 'wheel_diameter'?" in err
    assert f"{path}: drivetrain.track_width: '26 kg' is a mass, expected a length" in err


def test_run_refuses_a_bad_config_before_starting_anything(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[motors.left]\ntype = "CIMM"\n')
    # --serve on a free port: if anything started, the port would be bound.
    port = free_port()
    code, _, err = run_cli("run", str(path), "--serve", str(port), "--duration", "1")
    assert code == 2
    assert "motors.left.type: unknown motor type 'CIMM'; did you mean 'CIM'" in err
    assert "nothing was started" in err


def test_run_without_photonlibpy_refuses_a_photonvision_camera_naming_the_key(tmp_path,
                                                                           monkeypatch):
    """Python 3.10 has no photonlibpy 2026 (it needs numpy 2.3): a camera that publishes
    PhotonVision's topics stops the run before anything starts; a Limelight one does not."""
    for name in [m for m in sys.modules if m.split(".")[0] == "photonlibpy"] + ["photonlibpy"]:
        monkeypatch.setitem(sys.modules, name, None)  # import photonlibpy fails
    monkeypatch.delitem(sys.modules, "simserver.io.photonresult", raising=False)
    path = tmp_path / "camera.toml"
    camera = default_config_text() + '\n[cameras.front]\nx = "0.3 m"\nprotocol = "PROTOCOL"\n'
    path.write_text(camera.replace("PROTOCOL", "both"))
    port = free_port()
    code, _, err = run_cli("run", str(path), "--serve", str(port), "--duration", "1")
    assert code == 2
    assert f"{path}: cameras.front.protocol: 'both' publishes PhotonVision's topics" in err
    assert "photonlibpy 2026 needs Python 3.11 or newer" in err
    assert 'use protocol = "limelight"' in err and "nothing was started" in err
    assert photonvision_unavailable(loads(camera.replace("PROTOCOL", "limelight"))) is None


def test_run_refuses_a_missing_config_file(tmp_path):
    code, _, err = run_cli("run", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml: file not found" in err


def test_run_refuses_a_bad_inputs_csv_with_row_and_column(tmp_path):
    csv = tmp_path / "drive.csv"
    csv.write_text("time,left,right\n0,0,0\n1,0.5,lots\n")
    code, _, err = run_cli("run", "--inputs", str(csv), "--fast")
    assert code == 2
    assert "row 3, column 3 (right): expected a number, got 'lots'" in err


def test_scripted_run_prints_summary_and_writes_a_png(tmp_path):
    png = tmp_path / "run.png"
    code, out, _ = run_cli("run", "--inputs", str(S_CURVE), "--fast", "--plot", str(png))
    assert code == 0, out
    assert "simulated time           10.00 s" in out
    assert "minimum battery voltage" in out and "peak battery current" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_motors_lists_the_catalog():
    code, out, _ = run_cli("motors")
    assert code == 0
    for name in ("Kraken X60", "NEO Vortex", "CIM", "pyfrc-775Pro"):
        assert name in out


def test_bundled_config_printed_by_config_command_is_the_default():
    code, out, _ = run_cli("config")
    assert code == 0
    assert tomllib.loads(out)["motors"]["left"]["type"] == "CIM"
    assert loads(out).drivetrain.gearing == 10.71


def test_same_config_seed_and_inputs_give_identical_trajectories():
    text = (REPO / "simserver" / "config" / "kitbot.toml").read_text()
    noisy = text.replace('noise = "0 deg"', 'noise = "0.5 deg"')
    traces = []
    for _ in range(2):
        cfg = loads(noisy)
        script = load_script(S_CURVE, list(cfg.motors), [])
        session = Session(cfg, RunOptions(fast=True, duration=10.0, script=script))
        session.run()
        traces.append((session.trace.data, session.world.gyro.yaw))
    assert traces[0][0] == traces[1][0], "bit-identical per-tick traces"
    assert traces[0][1] == traces[1][1], "bit-identical noisy gyro"
    other = loads(noisy.replace("seed = 0", "seed = 1"))
    session = Session(other, RunOptions(fast=True, duration=10.0,
                                        script=load_script(S_CURVE, ["left", "right"], [])))
    session.run()
    assert session.world.gyro.yaw != traces[0][1], "a different seed gives different noise"


@pytest.mark.network
def test_ctrl_c_during_a_run_keeps_the_summary_and_plot(tmp_path):
    png = tmp_path / "run.png"
    port = free_port()
    proc = SimserverProcess("--serve", str(port), "--duration", "600", "--plot", str(png),
                            "--no-progress", log_dir=tmp_path)
    try:
        time.sleep(2.0)
        assert proc.alive(), proc.stderr()
        assert proc.interrupt() == 0
        out = proc.stdout()
        assert "simulated time" in out and f"plot written to {png}" in out
        assert png.exists()
        assert "stopped; results so far follow" in proc.stderr()
    finally:
        proc.close()


@pytest.mark.network
@posix_signals
def test_sigterm_stops_cleanly(tmp_path):
    proc = SimserverProcess("--serve", str(free_port()), log_dir=tmp_path)
    try:
        wait_for(lambda: "serving NT4" in proc.stderr(), 20, "the server to start")
        proc.proc.send_signal(signal.SIGTERM)
        assert proc.proc.wait(10) == 0
    finally:
        proc.close()


@pytest.mark.network
@posix_signals
def test_sigterm_the_moment_the_server_says_it_serves_is_a_clean_stop(tmp_path):
    """The signal lands right after the NT server starts, before the run's loop: the
    handlers are already in place (they used to be installed after the "serving NT4" line,
    and a SIGTERM that came in between killed the process; seen under load)."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, signal\n"
        "from simserver.io import nt\n"
        "_init = nt.NtAdapter.__init__\n"
        "def _init_then_term(self, *args, **kwargs):\n"
        "    _init(self, *args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "nt.NtAdapter.__init__ = _init_then_term\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    done = subprocess.run([sys.executable, "-m", "simserver", "run", "--serve",
                           str(free_port()), "--duration", "30"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "simulated time" in done.stdout


def test_python_dash_m_runs_the_cli():
    result = subprocess.run([sys.executable, "-m", "simserver", "--version"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "simserver" in result.stdout


@pytest.mark.parametrize(("doc", "generate"), [("config.md", docgen.config_reference),
                                               ("protocol.md", docgen.protocol_reference)])
def test_reference_docs_match_the_code(doc, generate):
    path = Path(REPO, "docs", doc)
    assert path.read_text() == generate(), f"docs/{doc} is stale: run `make docs`"


def test_models_names_drivetrain_outputs_by_their_own_path():
    """A drivetrain output is a path under /simserver (not a mechanism's output), and one
    declared with nt=False is said to be recorded only."""
    code, out, _ = run_cli("models")
    assert code == 0
    assert "output: /simserver/drive/module_states (struct:SwerveModuleState[], m/s, rad)" in out
    assert "output: /simserver/truth/wheel_speed/left (double, m/s, recorded only)" in out
    assert "/mechanisms/<name>/drive/" not in out and "/mechanisms/<name>/truth/" not in out


def test_config_reference_lists_every_key_of_the_bundled_config():
    text = (REPO / "docs" / "config.md").read_text()
    raw = tomllib.loads((REPO / "simserver" / "config" / "kitbot.toml").read_text())

    def keys(table, prefix=""):
        for k, v in table.items():
            if prefix in ("motors", "encoders", "solenoids"):
                yield from keys(v, f"{prefix}.<name>")
            elif isinstance(v, dict) and k != "start":
                yield from keys(v, f"{prefix}.{k}" if prefix else k)
            else:
                yield f"{prefix}.{k}" if prefix else k

    for key in keys(raw):
        assert f"`{key}`" in text or f"`[{key}]`" in text, key


@pytest.mark.parametrize("config", sorted(REPO.glob("examples/*/simserver.toml")),
                         ids=lambda p: p.parent.name)
def test_every_example_config_checks(config):
    code, out, err = run_cli("check", str(config))
    assert code == 0, err
    assert "OK" in out
