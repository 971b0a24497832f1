"""Files a user hands to `simserver run` besides the config (`--inputs` CSV, `--check` scenario,
its trajectory, a `[robots]` entry's inputs), and to `simserver plot`, that are wrong in every
way a file can be: a FIFO nobody writes, /dev/zero, a directory, binary or non-UTF-8 text, an
endless line, huge fields, a file far too large, a file with secrets in it given by mistake.
Each gives exit status 2 and one message naming the file, promptly, with no traceback, and
with at most a short excerpt of what the file holds.

Everything that reads such a file runs in a subprocess with a timeout and a 2 GiB address
space, so a hang or a read that never ends fails the test instead of hanging it or eating the
machine's memory (the old loader read /dev/zero at gigabytes a second).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simserver.io.scripted import MAX_BYTES, MAX_FIELD, load_script
from simserver.runs.scenario import MAX_TRAJECTORY_BYTES
from simserver.util.untrusted import EXCERPT
from tests.ntutil import REPO

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]
#: Where the address-space limit is known to hold; elsewhere the timeout alone bounds a case.
LIMITS_MEMORY = resource is not None and sys.platform.startswith("linux")

S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
TIMEOUT = 60  # s; every case here ends within a few seconds, a hang ends here
SECRET = "root:$6$Zs8cXQ2Lk9vR$SECRETHASHSECRETHASH:19700:0:99999:7:::"
GOOD_SCENARIO = 'duration = "1 s"\n[expect]\nno_wall_contact = true\n'


MEMORY = 2 * 2**30  # bytes of address space a subprocess may take; a run takes under 1 GiB


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def python(*args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the repository, bounded in time and memory, output captured."""
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                          preexec_fn=_limit_memory if LIMITS_MEMORY else None)


def simserver_run(*args: str) -> tuple[int, str]:
    """``simserver run --fast -q ARGS`` as a subprocess: exit status and stderr."""
    proc = python("-m", "simserver", "run", "--fast", "-q", *args)
    return proc.returncode, proc.stderr


def error_of(call: str, path: Path) -> str:
    """What ``call`` (``load_script`` or ``read_trajectory`` of ``PATH``) raises, as
    "<type>: <message>", evaluated in a subprocess like ``simserver_run``."""
    code = ("import sys\nfrom pathlib import Path\n"
            "from simserver.io.scripted import load_script\n"
            "from simserver.runs.scenario import read_trajectory\n"
            "PATH = Path(sys.argv[1])\n"
            f"try:\n    {call}\nexcept Exception as exc:\n"
            "    print(f'{type(exc).__name__}: {exc}')\n")
    proc = python("-c", code, str(path))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def assert_refused(code: int, err: str, path: Path | str, *expected: str) -> None:
    """Exit 2, no traceback, the file named, each ``expected`` text said, and short."""
    assert code == 2, err
    assert "Traceback" not in err, err
    assert str(path) in err, err
    for text in expected:
        assert text in err, err
    assert len(err) < 600, f"{len(err)} characters of stderr"


@pytest.fixture
def fifo(tmp_path) -> Path:
    """A FIFO nobody writes: opening it for reading blocks."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs and /dev/zero are POSIX: Windows has neither")
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


def _special(kind: str, tmp_path: Path, fifo: Path) -> tuple[Path, str]:
    """A path that is not a regular file, and what the message calls it."""
    if kind == "fifo":
        return fifo, "is a FIFO (named pipe), not a regular file"
    if kind == "link-to-fifo":
        link = tmp_path / "drive.csv"
        link.symlink_to(fifo)
        return link, "is a FIFO (named pipe), not a regular file"
    return Path("/dev/zero"), "is a character device, not a regular file"


# --- not a regular file: refused, never opened for reading -----------------------------------


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "dev-zero"])
def test_inputs_that_are_not_a_regular_file_exit_2_without_blocking(tmp_path, fifo, kind):
    path, what = _special(kind, tmp_path, fifo)
    code, err = simserver_run("--inputs", str(path))
    assert_refused(code, err, path, what, "an inputs CSV must be a regular file")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_scenario_that_is_not_a_regular_file_exits_2_without_blocking(tmp_path, fifo, kind):
    path, what = _special(kind, tmp_path, fifo)
    code, err = simserver_run("--inputs", str(S_CURVE), "--check", str(path))
    assert_refused(code, err, path, what, "scenario not usable; nothing was started")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_trajectory_that_is_not_a_regular_file_exits_2(tmp_path, fifo, kind):
    path, what = _special(kind, tmp_path, fifo)
    scenario = tmp_path / "check.toml"
    scenario.write_text(GOOD_SCENARIO + f'[expect.trajectory]\nfile = "{path}"\n')
    code, err = simserver_run("--inputs", str(S_CURVE), "--check", str(scenario))
    assert_refused(code, err, path, what, "expect.trajectory.file")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_plotting_a_recording_that_is_not_a_regular_file_exits_2(tmp_path, fifo, kind):
    path, what = _special(kind, tmp_path, fifo)
    proc = python("-m", "simserver", "plot", str(path), "-o", str(tmp_path / "plot.png"))
    assert_refused(proc.returncode, proc.stderr, path, what,
                   "a recording must be a regular file")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_robots_inputs_that_are_not_a_regular_file_are_refused(tmp_path, fifo, kind):
    path, what = _special(kind, tmp_path, fifo)
    error = error_of("load_script(PATH, ['left', 'right'], [])", path)
    assert error == f"ScriptError: {path}: {what}; an inputs CSV must be a regular file"


def test_a_directory_as_inputs_is_refused_naming_it(tmp_path):
    error = error_of("load_script(PATH, ['left', 'right'], [])", tmp_path)
    assert error == (f"ScriptError: {tmp_path}: is a directory, not a regular file; an inputs "
                     "CSV must be a regular file")


# --- bad content: refused with the line, never echoed at length -------------------------------


def _bad_csvs(tmp_path: Path) -> dict[str, tuple[Path, tuple[str, ...], str | None]]:
    """name -> (file, texts the message must hold, text it must not hold)."""
    def write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    long_cell = "9" * 10_000
    return {
        "non-utf8": (write("latin1.csv", "time,left\n0,0\n1,0.5 # café\n".encode("latin-1")),
                     ("line 3 is not UTF-8 text (byte 12 of the line is 0xe9)",), None),
        "binary": (write("robot.so", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64),
                   ("not an inputs CSV",), "ELF"),
        "binary-first-line": (write("robot.bin", bytes(range(255, -1, -1)) * 64),
                              ("line 1 is not UTF-8 text (byte 1 of the line is 0xff)",), None),
        "128-KiB-field": (write("wide.csv", b"time,left\n0,0\n1," + b"5" * 131_073 + b"\n"),
                          ("line 3 is longer than 64 KiB",), None),
        "endless-line": (write("zeros.csv", b"0" * (3 * 2**20)),
                         ("line 1 is longer than 64 KiB",), None),
        "10-kB-cell": (write("cell.csv", f"time,left\n0,0\n1,{long_cell}\n".encode()),
                       (f"row 3, column 2: a field of 10000 characters; fields hold at most "
                        f"{MAX_FIELD}",), "9" * (EXCERPT + 1)),
        "200-char-cell": (write("short.csv", b"time,left\n0,0\n1," + b"x" * 200 + b"\n"),
                          ("row 3, column 2 (left): expected a number, got 'xxx",
                           "… (200 characters)"), "x" * (EXCERPT + 1)),
        "200-char-column": (write("cols.csv", b"time," + b"y" * 200 + b"\n0,0\n"),
                            ("is not a motor or solenoid in the config",
                             "… (200 characters)"), "y" * (EXCERPT + 1)),
        "shadow": (write("shadow", f"{SECRET}\ndaemon:*:19700:0:99999:7:::\n".encode()),
                   ("not an inputs CSV", "must be a header whose first column is 'time'",
                    "'time,left,right'"), "SECRET"),
    }


@pytest.mark.parametrize("case", ["non-utf8", "binary", "binary-first-line", "128-KiB-field",
                                  "endless-line", "10-kB-cell", "200-char-cell",
                                  "200-char-column", "shadow"])
def test_a_bad_inputs_csv_exits_2_naming_the_line_with_a_short_message(tmp_path, case):
    path, expected, hidden = _bad_csvs(tmp_path)[case]
    code, err = simserver_run("--inputs", str(path))
    assert_refused(code, err, path, *expected)
    if hidden is not None:
        assert hidden not in err, err


def test_an_inputs_csv_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.csv"
    with path.open("wb") as fh:  # sparse: no disk space used, and unreadable as a CSV
        fh.truncate(MAX_BYTES + 1)
    code, err = simserver_run("--inputs", str(path))
    assert_refused(code, err, path,
                   f"is {MAX_BYTES + 1:,} bytes; an inputs CSV may be 64 MiB at most")


def test_a_utf8_byte_order_mark_is_not_part_of_the_header(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbftime,left\r\n0,0.5\r\n1,0.5\r\n")
    assert list(load_script(path, ["left"], []).times) == [0.0, 1.0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_large_inputs_csv_takes_memory_for_its_values_not_its_text(tmp_path):
    """20 MB of 1 ms rows of time and two duties (750,000 rows): peak RSS grows by the values
    as 8-byte floats (17.7 MB, measured), not by the rows as Python strings and floats (452 MB
    before, measured: 23 times the file's size). Bound: 1.5 times the file's size."""
    path = tmp_path / "long.csv"
    with path.open("w") as fh:
        fh.write("time,left,right\n")
        fh.writelines(f"{k * 0.001:.3f},{(k % 2000) / 1000 - 1:.6f},0.250000\n"
                      for k in range(750_000))
    size = path.stat().st_size
    probe = (
        "import sys\n"
        "from simserver.io.scripted import load_script\n"
        "def hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM'):\n"
        "            return int(line.split()[1]) * 1024\n"
        "before = hwm()\n"
        "script = load_script(sys.argv[1], ['left', 'right'], [])\n"
        "print(hwm() - before, len(script.times))\n")
    proc = python("-c", probe, str(path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    grown, rows = int(out[0]), int(out[1])
    assert rows == 750_000
    assert grown < 1.5 * size, f"peak RSS grew {grown / 1e6:.0f} MB for a {size / 1e6:.0f} MB CSV"


# --- scenario and trajectory files ------------------------------------------------------------


def test_a_non_utf8_scenario_exits_2_naming_the_line(tmp_path):
    path = tmp_path / "check.toml"
    path.write_bytes(GOOD_SCENARIO.encode() + b"# \xff\n")
    code, err = simserver_run("--inputs", str(S_CURVE), "--check", str(path))
    assert_refused(code, err, path, "line 4 is not UTF-8 text (byte 3 of the line is 0xff)")


def test_a_scenario_over_its_size_limit_is_refused(tmp_path):
    path = tmp_path / "check.toml"
    with path.open("wb") as fh:
        fh.truncate(2**20 + 1)
    code, err = simserver_run("--inputs", str(S_CURVE), "--check", str(path))
    assert_refused(code, err, path, "a TOML file may be 1 MiB at most")


@pytest.mark.parametrize("content", [
    f'"{SECRET} and the rest of the line',  # an unterminated string: wpimath quoted all of it
    f"{SECRET}\n",
    '[{"time": 1' + "0" * 5000 + "e999}]",  # a number it cannot hold: quoted whole
], ids=["unterminated-string", "shadow", "huge-number"])
def test_a_trajectory_file_that_is_not_json_is_not_echoed(tmp_path, content):
    path = tmp_path / "path.json"
    path.write_text(content)
    scenario = tmp_path / "check.toml"
    scenario.write_text(GOOD_SCENARIO + f'[expect.trajectory]\nfile = "{path}"\n')
    code, err = simserver_run("--inputs", str(S_CURVE), "--check", str(scenario))
    assert_refused(code, err, path, "is not a WPILib trajectory JSON")
    assert "SECRET" not in err and "0" * (EXCERPT + 1) not in err, err


def test_a_trajectory_over_its_size_limit_is_refused(tmp_path):
    path = tmp_path / "path.json"
    with path.open("wb") as fh:
        fh.truncate(MAX_TRAJECTORY_BYTES + 1)
    error = error_of("read_trajectory(PATH)", path)
    assert error == (f"TrajectoryFileError: trajectory file {path}: is "
                     f"{MAX_TRAJECTORY_BYTES + 1:,} bytes; a trajectory file may be 16 MiB at "
                     "most")
