"""The user-facing commands, run for real in a Python without what Windows lacks, as close to
Windows as Linux allows (tests/portability/nonposix/sitecustomize.py): simserver's modules
cannot import fcntl, resource, termios, pwd or grp, their ``os`` has no fork, setsid, killpg,
getuid ... and their ``signal`` no SIGKILL, SIGHUP, SIGCHLD ...; a file opened with the
locale's encoding is an error; stdout and stderr are cp1252 (as Windows writes a redirected
stream, in a code page without "≤" or "→"). Robot programs they start inherit the same interpreter.

What each produces is compared with the same command in the normal interpreter, where the
output is data: the same trace, the same generated docs, the same drafted config."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ntutil import REPO

NONPOSIX = Path(__file__).parent / "nonposix"
S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
ARMBOT = REPO / "tests" / "initcmd" / "programs" / "armbot"
KITBOT = REPO / "examples" / "kitbot"


def python(*args: str, cwd: Path = REPO, posix: bool = False, scope: tuple[str, ...] = (),
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python ARGS``; without what Windows lacks unless ``posix``. ``scope``: modules
    besides simserver's that get the non-POSIX view ("__main__" for a ``-c`` script)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if not posix:
        env.update(PYTHONPATH=os.pathsep.join((str(NONPOSIX), str(REPO))),
                   SIMSERVER_NON_POSIX_SCOPE=",".join(scope), PYTHONWARNDEFAULTENCODING="1")
        env.pop("PYTHONIOENCODING", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=timeout,
                          stdin=subprocess.DEVNULL)


def simserver(*args: str, cwd: Path = REPO, posix: bool = False,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = python("-m", "simserver", *args, cwd=cwd, posix=posix, timeout=timeout)
    assert done.returncode == 0, f"simserver {' '.join(args)}: {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_interpreter_hides_what_windows_lacks():
    """The harness itself: otherwise every test below could pass on plain Linux."""
    probe = ("import os, signal, sys\n"
             "import simserver.util.untrusted as untrusted\n"
             "try:\n    import fcntl\n    print('fcntl')\nexcept ImportError:\n    pass\n"
             "print(hasattr(os, 'fork'), hasattr(os, 'killpg'), hasattr(os, 'getuid'),\n"
             "      hasattr(signal, 'SIGKILL'), hasattr(signal, 'SIGHUP'),\n"
             "      hasattr(signal, 'SIGTERM'), hasattr(untrusted.os, 'setsid'),\n"
             "      sys.stdout.encoding)\n"
             "exec('open(os.devnull)', {'__name__': 'simserver.probe', 'os': os})\n")
    done = python("-c", probe, scope=("__main__",))
    assert done.stdout.split() == ["False"] * 5 + ["True", "False", "cp1252"], done.stdout
    assert done.returncode == 1 and "EncodingWarning" in done.stderr, done.stderr
    plain = python("-c", probe.rpartition("exec(")[0], posix=True)
    assert plain.stdout.split()[:8] == ["fcntl"] + ["True"] * 7, plain.stdout + plain.stderr


def test_check_run_and_plot_work_without_posix(tmp_path):
    """`simserver config`, `check`, a scripted `run` with --json, --record, --trace and --plot,
    and `plot`: the trace is the one the normal interpreter gives, to the bit."""
    simserver("config", "-o", str(tmp_path / "kitbot.toml"))
    assert "OK" in simserver("check", str(tmp_path / "kitbot.toml")).stdout
    traces = []
    for posix in (False, True):
        out = tmp_path / ("posix" if posix else "nonposix")
        out.mkdir()
        simserver("run", str(tmp_path / "kitbot.toml"), "--inputs", str(S_CURVE), "--fast",
                  "--duration", "2", "--json", str(out / "result.json"), "--record",
                  str(out / "run.wpilog"), "--trace", str(out / "trace.csv"), "--plot",
                  str(out / "run.png"), posix=posix)
        assert json.loads((out / "result.json").read_text(encoding="utf-8"))["passed"] is True
        traces.append((out / "trace.csv").read_bytes())
    assert traces[0] == traces[1]
    simserver("plot", str(tmp_path / "nonposix" / "run.wpilog"), "-o", str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 10_000


@pytest.mark.parametrize("command", [("docs", "config"), ("docs", "protocol"), ("models",),
                                     ("motors",)], ids=" ".join)
def test_text_commands_write_utf8_where_the_console_cannot(command):
    """Their text holds "≤", "→", "·": on a cp1252 stdout they ended in
    UnicodeEncodeError (Windows' Python writes a redirected stdout in cp1252; click mends
    only an ASCII one). Now the same UTF-8 as in the normal interpreter."""
    assert simserver(*command).stdout == simserver(*command, posix=True).stdout


def test_sysid_works_without_posix(tmp_path):
    done = simserver("sysid", cwd=tmp_path)
    assert "kS" in done.stdout and (tmp_path / "kitbot-sysid-drivetrain.wpilog").is_file()


def test_init_works_without_posix(tmp_path):
    """`simserver init` starts the robot program (which, and its bridge, runs without POSIX
    too) and drafts the config the normal interpreter drafts."""
    drafts = []
    for posix in (False, True):
        out = tmp_path / f"{posix}.toml"
        simserver("init", str(ARMBOT), "-o", str(out), posix=posix)
        drafts.append(out.read_text(encoding="utf-8"))
        assert "OK" in simserver("check", str(out)).stdout
    assert drafts[0] == drafts[1]


def test_run_robot_works_without_posix(tmp_path):
    """`simserver run --robot`: simserver starts the kitbot's robot program (a plain process
    in a group of its own, the bridge in the same non-POSIX Python) on free ports, in
    lock-step through its autonomous; the trace is the normal interpreter's."""
    traces = []
    for posix in (False, True):
        trace = tmp_path / f"{posix}.csv"
        simserver("run", "--robot", str(KITBOT), "--lockstep", "--fast", "--enable",
                  "autonomous", "--duration", "3", "--trace", str(trace), "--robot-log",
                  str(tmp_path / f"{posix}.log"), posix=posix)
        traces.append(trace.read_bytes())
    assert traces[0] == traces[1] and traces[0].count(b"\n") > 100


LAUNCH = """
import sys, time
from pathlib import Path
from simserver.runs.launcher import Launcher, own_group
folder = Path(sys.argv[1])
launcher = Launcher(folder)
print(launcher.problem, own_group())
program = launcher.start(["-c", "import time; time.sleep(60)"], folder, dict(__import__("os")
                         .environ), folder / "sleep.log")
print(program.alive(), program.wait(0.2))
start = time.monotonic()
program.stop(5)
print(program.alive(), program.wait(1) is not None, time.monotonic() - start < 4)
done = launcher.start(["-c", "raise SystemExit(3)"], folder, dict(__import__("os").environ),
                      folder / "exit.log")
print(done.wait(30))
launcher.close()
"""


def test_a_sweep_starts_plain_programs_where_nothing_forks(tmp_path):
    """The sweep's launcher without fork(): no fork server, each program a plain subprocess
    in a new process group (Windows' creation flag), stopped by Popen.terminate."""
    done = python("-c", LAUNCH, str(tmp_path), scope=("__main__",))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["no fork() here {'creationflags': 0}", "True None",
                                        "False True True", "3"], done.stdout


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs simserver[sweep]")
def test_a_robot_sweep_without_fork_gives_the_runs_of_the_forked_one(tmp_path):
    """Two runs of the kitbot's sweep (its robot program in lock-step, on ports of its own):
    started as plain subprocesses without POSIX, forked with it; the same final poses."""
    project = tmp_path / "kitbot"
    project.mkdir()
    for item in KITBOT.iterdir():
        if item.is_file():
            (project / item.name).write_bytes(item.read_bytes())
    (project / "deploy").symlink_to(KITBOT / "deploy")
    sweep = project / "sweep.toml"
    sweep.write_text(sweep.read_text(encoding="utf-8").replace("runs = 200", "runs = 2"),
                     encoding="utf-8")
    poses = []
    for posix in (False, True):
        out = tmp_path / f"out-{posix}"
        done = python("-m", "simserver", "sweep", str(sweep), "--workers", "1", "--out",
                      str(out), posix=posix, timeout=300)
        assert done.returncode in (0, 1), done.stderr
        runs = [json.loads(line) for line in
                (out / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(runs) == 2 and all(r["final_pose"] for r in runs), runs
        poses.append([r["final_pose"] for r in sorted(runs, key=lambda r: r["run"])])
    assert poses[0] == poses[1]


@pytest.mark.slow
def test_every_test_module_is_collected_without_posix():
    """On a Windows runner, a test module that imports fcntl or names signal.SIGHUP at import
    fails pytest's collection and with it the whole run: each guards or skips instead."""
    done = python("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests",
                  scope=("tests",), timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "error" not in done.stdout.splitlines()[-1], done.stdout[-3000:]
