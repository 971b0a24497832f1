"""Smoke test of the benchmarks: ``benchmarks/run_all.py --quick`` runs and prints both tables.

Only checks that the benchmarks run and report numbers; the figures themselves are never
judged (they depend on the machine). Starts simserver and an NT echo server on free loopback
ports, so it is a network test; it takes about 20 s.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from tests.ntutil import REPO

# Also runs the kitbot robot program (port 5810): never beside another robot program.
pytestmark = [pytest.mark.network, pytest.mark.slow, pytest.mark.robot]

TIMEOUT = 400  # s; a quick run takes about 150 s (2-core machine)

NUMBER = r"(\d+(?:\.\d+)?)"


def _run_quick(tmp_path) -> tuple[int, str, str]:
    report = tmp_path / "RESULTS.md"
    # Own session, so a hung run is ended with all of its subprocesses (simserver, echo).
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / "run_all.py"), "--quick",
         "--output", str(report)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"run_all.py --quick did not finish in {TIMEOUT} s\n{out}\n{err}")
    md = report.read_text(encoding="utf-8") if report.exists() else ""
    return proc.returncode, out + err, md


def test_run_all_quick_prints_throughput_and_latency_tables(tmp_path):
    code, out, md = _run_quick(tmp_path)
    assert code == 0, out

    # Throughput: both models with a positive rate (sim s / wall s).
    assert "Throughput:" in out, out
    for label in ("simserver World", "WPILib DifferentialDrivetrainSim"):
        m = re.search(rf"^{re.escape(label)}\s+{NUMBER}×\s+{NUMBER}×", out, re.M)
        assert m, f"no throughput row for {label}:\n{out}"
        assert float(m.group(1)) > 0 and float(m.group(2)) > 0

    # Latency: a header with p50 first, then simserver and echo rows with a positive p50.
    assert "Latency:" in out, out
    assert re.search(r"^path \(ms\)\s+p50\s+p90\s+p99\s+max\s+timed out", out, re.M), out
    for label in ("simserver: motor set → encoder Δv", "NT echo (transport floor): set → echo"):
        m = re.search(rf"^{re.escape(label)}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+"
                      rf"(\d+) / (\d+)", out, re.M)
        assert m, f"no latency row for {label}:\n{out}"
        p50 = float(m.group(1))
        assert p50 > 0, f"{label}: p50 {p50}"
        assert int(m.group(6)) == 100  # --quick: 100 measured switches

    # The Markdown report: heading, machine line and both tables.
    assert md.startswith("# simserver benchmark figures"), md
    assert "not pass/fail" in md
    assert "Machine: " in md
    assert "| simserver World |" in md
    assert "| simserver: motor set → encoder Δv |" in md
    # Pacing: both loops reported, with a drift figure (ms per minute) as a number.
    assert "Pacing:" in out, out
    for label in ("simserver Session (absolute deadlines)",
                  "reference: sleep(tick) after each tick"):
        m = re.search(re.escape(label) + r"\s+(-?[\d.]+)\s+([\d.]+)\s+([\d.]+)", out)
        assert m, f"no pacing row for {label}:\n{out}"
    assert "## Real-time pacing" in md
    # Lock-step with the kitbot robot program: two positive rates and the determinism verdict.
    m = re.search(r"^kitbot example, lock-step \(2 runs\)\s+" + NUMBER + r"× / " + NUMBER + "×",
                  out, re.M)
    assert m, f"no lock-step row:\n{out}"
    assert float(m.group(1)) > 0 and float(m.group(2)) > 0
    # Its floor: the robot program alone under stepTiming, and lock-step's ratio to it.
    m = re.search(r"^floor: the robot program alone under stepTiming \(2 runs\)\s+" + NUMBER +
                  r"× / " + NUMBER + r"×.*lock-step / floor " + NUMBER + "×", out, re.M)
    assert m, f"no floor row:\n{out}"
    assert all(float(m.group(i)) > 0 for i in (1, 2, 3))
    # The bound: the bridge and the world in the robot program's process, nothing exchanged.
    m = re.search(r"^bound: robot program \+ bridge \+ world in one process, nothing exchanged, "
                  r"interpreted \(2 runs\)\s+" + NUMBER + r"× / " + NUMBER + r"×.*\s" + NUMBER +
                  "× the floor", out, re.M)
    assert m, f"no bound row:\n{out}"
    assert all(float(m.group(i)) > 0 for i in (1, 2, 3))
    assert re.search(r"^determinism: pose traces of the 2 runs\s+(bit-identical|DIFFERENT)",
                     out, re.M), out
    assert "## Lock-step with a robot program" in md
    # Memory of a large inputs CSV: load_script's peak next to the rows kept as text.
    m = re.search(r"^load_script \(values as 8-byte floats\)\s+" + NUMBER + r"\s+" + NUMBER,
                  out, re.M)
    assert m and float(m.group(1)) > 0, out
    assert "### Inputs CSV:" in md
