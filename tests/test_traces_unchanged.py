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


def test_every_traced_case_has_a_golden_digest():
    names = {c.name for c in traces.CASES}
    assert names == set(GOLDEN["cases"]), "regenerate tests/golden/traces.json"
