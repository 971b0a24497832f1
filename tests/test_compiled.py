"""The compiled build (simserver/compiled.py's modules through mypyc, tools/compile.py) is the
interpreted one, faster: the same worlds bit for bit, and the model, game-piece and world tests
pass with it.

Built here with the C compiler of a Linux machine (gcc, no fused multiply-add: the flags
simserver/compiled.py gives); elsewhere these tests skip.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="compiled builds are checked on Linux"),
    pytest.mark.skipif(sys.version_info < (3, 11), reason="needs python -P (3.11+)"),
]

# Worlds of benchmarks/worlds.py and benchmarks/bench_pieces.py, hashed tick by tick: every
# robot's pose, body velocity and battery voltage, and every game piece's position.
HASH_RUN = """
import hashlib, struct, sys
from benchmarks import bench_pieces, worlds
from simserver.world.world import World
robots = []  # every World, in the order made (gc.get_objects' order depends on the heap)
made = World.__init__
def tracked(self, *args, **kwargs):
    made(self, *args, **kwargs)
    robots.append(self)
World.__init__ = tracked
which, ticks = sys.argv[1], int(sys.argv[2])
case = (worlds.world_case("full", worlds.full_robot_text()) if which == "full"
        else worlds.world_case("kitbot", worlds.default_config_text()) if which == "kitbot"
        else bench_pieces.build_cases()[which][0])
digest = hashlib.sha256()
for _ in range(ticks):
    case.run(1)
    for w in robots:
        digest.update(struct.pack("7d", *w.pose, *w.chassis_speeds, w.battery.voltage))
        if w.field_pieces is not None:
            digest.update(w.field_pieces.field.pos.tobytes())
print(digest.hexdigest())
"""

# Tests that count the solver's internal calls (by subclassing its contact system or patching
# a module function): compiled code calls its own functions directly, so they see nothing.
INSTRUMENTED = ("test_warm_started_contacts_are_closer_to_coulomb_with_fewer_solves",
                "test_warm_one_row_contacts_stay_exact_with_fewer_solves")


@pytest.fixture(scope="module")
def compiled_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mypyc")
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import compile as compile_tool  # tools/compile.py
    finally:
        sys.path.pop(0)
    return compile_tool.build(tmp_path_factory.mktemp("compiled"))


def run(path: list[Path], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -P args`` with ``path`` first on the import path (no current directory)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, path)), PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-P", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_every_listed_module_loads_compiled(compiled_copy: Path) -> None:
    from simserver.compiled import module_names

    out = run([compiled_copy], "-c", "import simserver.compiled as c; print(c.compiled())")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(module_names())
    here = run([REPO], "-c", "import simserver.compiled as c; print(c.compiled())")
    assert here.stdout.strip() == "[]"  # the checkout itself stays plain Python


@pytest.mark.parametrize("which", ["one", "six", "full", "kitbot"])
def test_compiled_worlds_are_the_interpreted_ones_bit_for_bit(compiled_copy: Path,
                                                              which: str) -> None:
    """A swerve through 400 balls, six robots among them, the full robot (swerve, arm,
    elevator, camera, pushing into the elements) and the bundled kitbot (tank traction,
    pushing): 600 ticks, the same hash."""
    digests = []
    for path in ([REPO], [compiled_copy, REPO]):
        out = run(path, "-c", HASH_RUN, which, "600")
        assert out.returncode == 0, out.stderr[-3000:]
        digests.append(out.stdout.strip())
    assert digests[0] == digests[1]


def test_model_piece_and_world_tests_pass_compiled(compiled_copy: Path) -> None:
    """The tests of the models, the game pieces and the worlds, with the compiled modules
    imported before pytest starts (so every test uses them)."""
    args = ["-q", "-p", "no:cacheprovider", "--import-mode=append",
            "-k", " and ".join(f"not {name}" for name in INSTRUMENTED),
            "tests/models", "tests/pieces", "tests/test_world_holonomic.py", "tests/test_arena.py",
            "tests/test_world_mechanisms.py", "tests/test_world_electrical.py"]
    code = ("import sys, pytest, simserver.compiled as c\n"
            "from simserver.compiled import module_names\n"
            "assert c.compiled() == module_names(), c.compiled()\n"
            f"sys.exit(pytest.main({args!r}))")
    out = run([compiled_copy, REPO], "-c", code, timeout=1200)
    assert out.returncode == 0, (out.stdout[-4000:], out.stderr[-2000:])


def test_the_benchmark_measures_both_builds(compiled_copy: Path) -> None:
    """benchmarks/compiled.py (in `make bench`) times each goal world in both builds."""
    out = run([REPO], str(REPO / "benchmarks" / "compiled.py"), "--seconds", "1",
              "--repeats", "1", "--compiled", str(compiled_copy))
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line for line in out.stdout.splitlines() if "× " in line and "goal" not in line]
    assert len(rows) == 5, out.stdout
    for line in rows:
        interpreted, compiled, ratio = (float(x) for x in
                                        re.findall(r"(\d+\.\d+)×", line)[:3])
        assert interpreted > 0 and compiled > 0
        assert ratio == pytest.approx(compiled / interpreted, abs=0.02)
        verdict = re.search(r"interpreted (met|not met), compiled (met|not met)", line)
        assert bool(verdict) != line.startswith("reference:"), line
