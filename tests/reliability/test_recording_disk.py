"""A recording that runs out of disk: a warning, the run goes on, the summary and --json are
written, the exit status is 1 with the reason. wpiutil's DataLogWriter cannot report a failed
write: it aborted the process when closed ("LLVM ERROR: IO failure", exit 1, no summary)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from simserver.io.wpilog import SPACE_RESERVE
from tests.io.test_wpilog import read_log
from tests.ntutil import REPO

# A full disk is made with a tmpfs mount or a file size limit (RLIMIT_FSIZE, SIGXFSZ): POSIX.
try:
    import resource
except ImportError:
    pytest.skip("file size limits (resource) are POSIX", allow_module_level=True)

SCRIPT = REPO / "simserver" / "data" / "s_curve.csv"


def run_recording(log: Path, out: Path, duration: str,
                  limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """``simserver run --fast --record log --json out``, the file size limited to ``limit``
    bytes (writes past it fail with EFBIG, as on a full disk) when given."""
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "simserver", "run", "--inputs", str(SCRIPT), "--fast",
         "--duration", duration, "--record", str(log), "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        preexec_fn=limited if limit is not None else None)


def assert_ended_well(done: subprocess.CompletedProcess[str], out: Path, reason: str) -> None:
    assert done.returncode == 1, done.stderr
    assert "LLVM ERROR" not in done.stderr
    assert "simulated time" in done.stdout  # the summary
    assert "incomplete" in done.stdout, done.stdout
    assert done.stderr.count(reason) == 2, done.stderr  # warned when it happened, and at the end
    doc = json.loads(out.read_text())
    assert doc["passed"] is False and reason in doc["error"], doc


@pytest.fixture
def small_disk(tmp_path):
    """A 16 MiB tmpfs with SPACE_RESERVE + 1 MiB free (needs root to mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs",
                                            str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        filler = shutil.disk_usage(mount).free - SPACE_RESERVE - 2**20
        (mount / "filler").write_bytes(b"\0" * filler)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_disk_filling_up_stops_the_recording_whole_and_the_run_goes_on(small_disk, tmp_path):
    log, out = small_disk / "run.wpilog", tmp_path / "result.json"
    done = run_recording(log, out, "600")
    assert_ended_well(done, out, "is nearly full")
    assert "simulated time           600.00 s" in done.stdout  # simulated to the end
    entries = read_log(log)  # closed whole: every record readable, every tick up to the stop
    stamps = entries["/simserver/battery/voltage"].stamps
    assert stamps == [10_000 * k for k in range(1, len(stamps) + 1)]
    assert 10.0 < stamps[-1] * 1e-6 < 300.0  # about 1 MiB of values: ~25 s of the kitbot
    assert shutil.disk_usage(small_disk).free > SPACE_RESERVE  # it stopped with room to spare


def test_a_write_that_fails_anyway_ends_the_file_there_without_aborting(tmp_path):
    # RLIMIT_FSIZE makes the writes past 600 kB fail (EFBIG) while the disk has room: what a
    # disk filled by another program between two flushes does
    log, out = tmp_path / "run.wpilog", tmp_path / "result.json"
    done = run_recording(log, out, "100", limit=600_000)
    assert_ended_well(done, out, "did not reach the file")
    assert "simulated time           100.00 s" in done.stdout
    assert log.stat().st_size == 600_000
    entries = read_log(log)  # readable up to where the write failed
    assert len(entries["/simserver/battery/voltage"].stamps) > 100
