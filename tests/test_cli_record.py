"""`simserver run --record` and `simserver plot` as a user meets them: the quickstart's commands,
help, clean errors, and a recording interrupted by Ctrl-C, SIGTERM or SIGHUP that is still
whole."""

from __future__ import annotations

import re
import shlex
import signal
import time

import pytest
from click.testing import CliRunner
from wpiutil.log import DataLogReader

from simserver.cli import main
from simserver.runs.recording import read_recording
from tests.io.test_wpilog import read_log
from tests.ntutil import REPO, SimserverProcess, free_port, posix_signals, wait_for

S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit), f"traceback: {result.exception!r}"
    return result.exit_code, result.stdout, result.stderr


def quickstart_commands(section: str) -> list[list[str]]:
    """The `simserver ...` lines of the first code block of a docs/quickstart.md section."""
    text = (REPO / "docs" / "quickstart.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = body.split("```\n", 2)[1]
    return [shlex.split(line, comments=True) for line in block.splitlines()
            if line.startswith("simserver ")]


def test_quickstart_record_and_plot_commands_work_as_written(tmp_path, monkeypatch):
    commands = quickstart_commands("5. Record and plot")
    assert [c[:2] for c in commands] == [["simserver", "run"], ["simserver", "plot"]]
    monkeypatch.chdir(tmp_path)  # build/ does not exist yet: --record creates it
    outs = []
    for command in commands:
        args = [str(S_CURVE) if a == "simserver/data/s_curve.csv" else a for a in command[1:]]
        code, out, err = run_cli(*args)
        assert code == 0, err
        outs.append(out)
    assert "recording written to build/run.wpilog" in outs[0]
    assert "plot written to build/run.png" in outs[1]
    assert DataLogReader(str(tmp_path / "build" / "run.wpilog")).isValid()
    assert (tmp_path / "build" / "run.png").read_bytes()[:8] == PNG


def test_run_reports_the_recording(tmp_path):
    log = tmp_path / "run.wpilog"
    code, out, _ = run_cli("run", "--inputs", str(S_CURVE), "--fast", "--record", str(log))
    assert code == 0
    assert re.search(rf"recording written to {re.escape(str(log))} \(\d+ values\)", out)
    assert len(read_recording(log).trace) == 1000


def test_plot_without_output_writes_beside_the_log(tmp_path):
    log = tmp_path / "run.wpilog"
    assert run_cli("run", "--inputs", str(S_CURVE), "--fast", "--record", str(log))[0] == 0
    code, out, _ = run_cli("plot", str(log), "--title", "my run")
    assert code == 0 and f"plot written to {tmp_path / 'run.png'}" in out
    assert (tmp_path / "run.png").read_bytes()[:8] == PNG


def test_help_lists_plot_and_record():
    code, out, _ = run_cli("--help")
    assert code == 0 and re.search(r"^\s+plot\s+Plot a recording", out, re.M)
    code, out, _ = run_cli("run", "--help")
    assert code == 0 and "--record WPILOG" in out and "AdvantageScope" in out
    code, out, _ = run_cli("plot", "--help")
    assert code == 0 and "-o, --output PNG" in out and "motor currents" in out


def test_record_to_an_unwritable_path_exits_2_before_starting(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    port = free_port()  # with --serve: had it started, the run would end with 0
    code, _, err = run_cli("run", "--serve", str(port), "--duration", "1", "--record",
                           str(blocker / "run.wpilog"))
    assert code == 2
    assert f"{blocker / 'run.wpilog'}: cannot create its directory" in err
    assert "nothing was started" in err
    code, _, err = run_cli("run", "--inputs", str(S_CURVE), "--fast", "--record",
                           str(tmp_path))
    assert code == 2 and str(tmp_path) in err


def test_plot_of_a_missing_or_corrupt_file_exits_2_with_its_name(tmp_path):
    missing = tmp_path / "missing.wpilog"
    code, _, err = run_cli("plot", str(missing))
    assert code == 2 and f"{missing}: file not found" in err
    junk = tmp_path / "junk.wpilog"
    junk.write_bytes(b"\x00" * 100)
    code, _, err = run_cli("plot", str(junk), "-o", str(tmp_path / "junk.png"))
    assert code == 2 and f"{junk}: not a WPILib data log" in err
    assert not (tmp_path / "junk.png").exists()


def test_plot_to_an_unwritable_path_exits_1_with_its_name(tmp_path):
    log = tmp_path / "run.wpilog"
    assert run_cli("run", "--inputs", str(S_CURVE), "--fast", "--record", str(log))[0] == 0
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    code, _, err = run_cli("plot", str(log), "-o", str(blocker / "run.png"))
    assert code == 1 and f"{blocker / 'run.png'}: cannot write" in err


#: The signals that end a run cleanly, where the system has them (Windows has no SIGHUP).
STOP_SIGNALS = {name: getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name)}


@pytest.mark.slow
@posix_signals
@pytest.mark.parametrize("sig", list(STOP_SIGNALS.values()), ids=list(STOP_SIGNALS))
def test_a_recording_interrupted_by_a_signal_is_complete(tmp_path, sig):
    log = tmp_path / "run.wpilog"
    proc = SimserverProcess("--inputs", "simserver/data/s_curve.csv", "--record", str(log),
                            log_dir=tmp_path)  # real time: 10 s
    try:
        wait_for(lambda: "simulating" in proc.stderr(), 30, "the run to start")
        time.sleep(2.0)
        assert proc.alive(), proc.stderr()
        proc.proc.send_signal(sig)
        assert proc.proc.wait(10) == 0, proc.stderr()
        out, proc_err = proc.stdout(), proc.stderr()
    finally:
        proc.close()
    assert "recording written to" in out
    simulated = float(re.search(r"simulated time\s+([\d.]+) s", out).group(1))
    assert 1.0 < simulated < 6.0, "stopped about 2 s in, not at the end of the script"
    entries = read_log(log)
    assert {"/simserver/pose", "/simserver/encoders/left/position", "/simserver/gyro/yaw",
            "/simserver/battery/voltage", "/simserver/motors/left",
            "/simserver/currents/right", "/simserver/truth/x"} <= set(entries)
    stamps = entries["/simserver/battery/voltage"].stamps
    assert stamps == [10_000 * k for k in range(1, len(stamps) + 1)], "every tick, in order"
    assert stamps[-1] * 1e-6 == pytest.approx(simulated, abs=0.006), "up to the interrupt"
    assert len(entries["/simserver/pose"].records) == len(stamps)
    assert len(read_recording(log).trace) == len(stamps)
    closed = re.search(r"recorded (\d+) values to", proc_err)
    assert closed, "the recorder was closed by the session, not left to the garbage collector"
    assert int(closed.group(1)) == sum(len(e.records) for n, e in entries.items()
                                       if not n.startswith("/.schema/"))
