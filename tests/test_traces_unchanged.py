"""Unchanged behaviour, proven: the scripted command-line runs of every example config, the
in-process worlds (cameras, mechanisms, every drivetrain kind, an arena with collisions) and
the lock-step scenario runs of the kitbot and mecanum robot programs trace bit for bit as at
the commit named in tests/golden/traces.json (tools/traces.py says what a trace holds).

On a failure, ``python tools/traces.py compare --base <that commit>`` names the first
differing record of each case. After an intended change of behaviour, regenerate the golden
file (docs/traces.md). The digests hold for the environment recorded beside
them (Python, machine, C library, numeric packages); elsewhere these tests skip and only
``compare`` (which builds both sides here) can tell.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import traces  # noqa: E402

GOLDEN_PATH = REPO / "tests" / "golden" / "traces.json"
GOLDEN = json.loads(GOLDEN_PATH.read_text())


def check(prefixes: tuple[str, ...], tmp_path: Path) -> None:
    """The cases whose names start with ``prefixes`` trace as the golden file says."""
    if traces.environment() != GOLDEN["environment"]:
        pytest.skip(f"golden digests were made with {GOLDEN['environment']}, this is "
                    f"{traces.environment()}: use tools/traces.py compare")
    cases = [c for c in traces.CASES if c.name.startswith(prefixes) and traces.available(c)]
    assert cases
    results = traces.run_cases(REPO, cases, tmp_path)
    traces.print_table(results, sys.stdout)
    wrong = []
    for r in results:
        want = GOLDEN["cases"].get(r.case)
        if want is None:
            wrong.append(f"{r.case}: not in {GOLDEN_PATH.name} (a new case: regenerate it)")
        elif (r.sha256, r.ticks, r.records) != (want["sha256"], want["ticks"], want["records"]):
            wrong.append(f"{r.case}: {r.ticks} ticks, {r.records} records, sha256 "
                         f"{r.sha256[:16]}; golden {want['ticks']} ticks, {want['records']} "
                         f"records, {want['sha256'][:16]}")
    base = GOLDEN["commit"].removesuffix("+dirty")
    patterns = " ".join(f"--cases {r.split(':')[0]}" for r in wrong)
    assert not wrong, ("traces differ from the golden ones:\n  " + "\n  ".join(wrong) +
                       f"\nfirst differing record: python tools/traces.py compare --base "
                       f"{base} {patterns}")


def test_scripted_runs_and_worlds_trace_as_at_the_golden_commit(tmp_path):
    check(("cli/", "world/"), tmp_path)


@pytest.mark.robot
@pytest.mark.network
@pytest.mark.slow
def test_lockstep_robot_programs_trace_as_at_the_golden_commit(tmp_path):
    check(("robot/",), tmp_path)


def test_traces_pin_openblas_kernels_where_the_cpu_runs_them_and_keep_a_choice_made():
    flags = traces._cpu_flags()
    runs_them = ({"avx2", "fma"} <= flags
                 and traces.platform.machine().lower() in ("x86_64", "amd64"))
    assert traces.numeric_env({}).get(traces.BLAS_VARIABLE) == (
        traces.BLAS_CORE if runs_them else None)
    chosen = {traces.BLAS_VARIABLE: "SkylakeX", "OTHER": "1"}
    assert traces.numeric_env(chosen) == chosen
    assert traces.environment()["openblas_coretype"] == traces.numeric_env().get(
        traces.BLAS_VARIABLE, "-")


def test_every_traced_case_has_a_golden_digest():
    names = {c.name for c in traces.CASES}
    assert names == set(GOLDEN["cases"]), "regenerate tests/golden/traces.json"


# --- the data log canonicalisation ------------------------------------------------------------


def write_log(path: Path, header: str, robot_stamp: int, x: float) -> Path:
    """A data log as a lock-step run writes one: the field length at 1 µs, ticks at 20 and
    40 ms (x 2 m, then ``x``), and a robot program value published before the first tick,
    stamped ``robot_stamp`` µs, whose topic changes at 40 ms."""
    import wpiutil

    log = wpiutil.DataLogWriter(str(path), header)
    length = log.start("/simserver/field/length", "double", "{}", 1)
    log.appendDouble(length, 16.541, 1)
    robot = log.start("NT:/FMSInfo/FMSControlData", "int64", '{"source": "robot program"}',
                      robot_stamp)
    log.appendInteger(robot, 0, robot_stamp)
    entry = log.start("/simserver/truth/x", "double", "{}", 20000)
    log.appendDouble(entry, 2.0, 20000)
    log.appendDouble(entry, x, 40000)
    log.appendInteger(robot, 32, 40000)
    log.flush()
    log.stop()
    return path


def test_wpilog_records_leave_out_the_header_and_wall_clock_stamps_before_the_first_tick(
        tmp_path):
    one = traces.wpilog_records(write_log(tmp_path / "a.wpilog", "simserver 0.1.0", 1, 0.5))
    two = traces.wpilog_records(write_log(tmp_path / "b.wpilog", "simserver 0.2.0", 8182, 0.5))
    assert one == two
    assert ("ts=pre", "NT:/FMSInfo/FMSControlData", "0") in one
    assert ("ts=40000", "NT:/FMSInfo/FMSControlData", "32") in one


def test_wpilog_records_tell_a_value_one_bit_off(tmp_path):
    one = traces.wpilog_records(write_log(tmp_path / "a.wpilog", "h", 1, 2.5))
    two = traces.wpilog_records(write_log(tmp_path / "b.wpilog", "h", 1,
                                          math.nextafter(2.5, 3.0)))
    assert [r for r in one if r not in two] == [("ts=40000", "/simserver/truth/x", "2.5")]
    assert ("ts=40000", "/simserver/truth/x", "2.5000000000000004") in two


# --- the comparison ----------------------------------------------------------------------------


def write_trace(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(traces.line(r) for r in rows))
    return path


def test_first_difference_names_the_record_and_counts_the_differing_fields(tmp_path):
    base = [("tick=0", "x", "1.0"), ("tick=0", "encoders[\"l\"][0]", "0.5"),
            ("tick=1", "x", "1.5"), ("tick=1", "encoders[\"l\"][1]", "0.25")]
    head = [base[0], ("tick=0", "encoders[\"l\"][0]", "0.5000000000000001"), base[2],
            ("tick=1", "encoders[\"l\"][1]", "0.25000000000000006")]
    diff = traces.first_difference(write_trace(tmp_path / "a", base),
                                   write_trace(tmp_path / "b", head))
    assert diff is not None
    assert (diff.position, diff.base, diff.head) == (1, base[1], head[1])
    assert (diff.differing, diff.fields, diff.misaligned_at) == (2, ('encoders["l"][*]',), None)
    assert traces.first_difference(write_trace(tmp_path / "c", base), tmp_path / "a") is None
    shorter = traces.first_difference(tmp_path / "a", write_trace(tmp_path / "d", base[:3]))
    assert shorter is not None and (shorter.position, shorter.head) == (3, None)
    assert shorter.misaligned_at == 3
