"""One run of a sweep, on whatever machine it lands: the robot program under
``robotpy sim --simserver`` on ports of its own, simserver's session in this process in
lock-step with it (or scripted inputs without one), the scenario's verdict as a record.

A record is what ``runs.jsonl`` holds for the run (docs/sweeps.md): every field but
``timing`` and ``host`` depends only on the sweep file and the run's index.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simserver.config.issues import ConfigError
from simserver.config.loader import loads
from simserver.contract.snapshot import Snapshot
from simserver.runs.robotprogram import PORT_TAKEN, RobotProgram, RunFiles
from simserver.runs.scenario import Scenario, ScenarioCheck
from simserver.sweeps.sampling import RunPlan, config_text, run_source, run_table
from simserver.sweeps.spec import Sweep
from simserver.util.ports import free_port

if TYPE_CHECKING:
    from simserver.runs.report import Summary
    from simserver.runs.session import Session

#: The end of a failed run's robot program output kept in its record, characters.
LOG_TAIL = 4000
#: Tries with fresh ports when another process took one between choosing and binding.
PORT_TRIES = 3


def run_one(sweep: Sweep, plan: RunPlan, keep: Path | None = None) -> dict[str, Any]:
    """Run ``plan`` to its end and return its record; never raises for a failed run (a robot
    program that does not start, a crash, the timeout: the record says so). ``keep``: a
    folder for the run's files (its config, the robot program's output, a trace); without
    it they go to a temporary folder removed at the end."""
    started = time.monotonic()
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        record = _attempts(sweep, plan, RunFiles(keep), keep=True)
    else:
        with tempfile.TemporaryDirectory(prefix=f"simserver-run{plan.index}-") as tmp:
            record = _attempts(sweep, plan, RunFiles(Path(tmp)), keep=False)
    record["timing"]["total"] = time.monotonic() - started
    record["host"] = socket.gethostname()
    return record


def _attempts(sweep: Sweep, plan: RunPlan, files: RunFiles, keep: bool) -> dict[str, Any]:
    """The run, again on fresh ports if its robot program found one taken."""
    record: dict[str, Any] = {}
    for _ in range(PORT_TRIES):
        record = _run(sweep, plan, files, keep)
        if not record.pop("port_taken", False):
            break
    return record


def _run(sweep: Sweep, plan: RunPlan, files: RunFiles, keep: bool) -> dict[str, Any]:
    """One attempt at the run: its record (``port_taken`` set when its robot program found a
    port it was given taken)."""
    record = _record(plan)
    ports = {"port": free_port(), "nt_port": free_port(), "lockstep": True,
             "connect_timeout": f"{sweep.timeout!r} s"} if sweep.robot else {}
    text = config_text(run_table(sweep, plan, ports))
    files.config.write_text(text, encoding="utf-8")
    try:
        session, check = _session(sweep, plan, text, keep)
    except _NotRunnable as exc:
        record["error"] = f"not runnable: {exc}"
        return record
    t0 = time.monotonic()
    robot = RobotProgram(sweep.robot, files) if sweep.robot is not None else None
    try:
        summary, late = _simulate(sweep, session, robot)
        timing = record["timing"]
        if session.attached_at is not None:
            timing["robot_start"] = session.attached_at - t0
        timing["simulate"] = time.monotonic() - (session.attached_at or t0)
        timing["checks"] = check.spent
        record.update(check.result().to_json())
        del record["scenario"]  # the sweep's check file, where this machine keeps it
        record["summary"] = {k: v for k, v in summary.as_dict().items()
                             if k not in _WALL_FIGURES}
        record["error"] = session.failure
        if late:
            record["error"] = f"timed out after {sweep.timeout:g} s"
        elif robot is not None and robot.left_early:
            record["error"] = "the robot program ended before the run did (its output: the log)"
        if record["error"] is not None:
            record["passed"] = False
        if keep and session.trace is not None:
            from simserver.runs.report import write_trace

            write_trace(session.trace, files.folder / "trace.csv")
    finally:
        if robot is not None:
            status = robot.finish()
            if status == PORT_TAKEN and "is in use" in robot.output():
                record["port_taken"] = True
            if not record["passed"]:
                record["log"] = robot.output()[-LOG_TAIL:]
    return record


class _NotRunnable(Exception):
    """A run whose config, inputs or models cannot be built (the message says why)."""


def _session(sweep: Sweep, plan: RunPlan, text: str, keep: bool
             ) -> tuple[Session, _TimedCheck]:
    """The run's session (lock-step with its robot program, or its scripted inputs) and its
    checks; _NotRunnable if they cannot be made."""
    from simserver.io.nt import Endpoint
    from simserver.io.scripted import ScriptError, load_script
    from simserver.runs.session import RunOptions, Session
    from simserver.world import ModelBuildError

    try:
        cfg = loads(text, run_source(sweep, plan.index), sweep.config_path.parent)
        script = None if sweep.inputs is None else load_script(
            sweep.inputs, list(cfg.motors), list(cfg.solenoids))
        check = _TimedCheck(sweep.scenario)
        robot = sweep.robot is not None
        opts = RunOptions(
            fast=not sweep.paced, duration=sweep.scenario.duration, script=script, record=keep,
            enable=sweep.scenario.enable, lockstep=robot, wait=sweep.timeout, check=check,
            endpoint=Endpoint("client", "127.0.0.1", cfg.bridge.nt_port) if robot else None)
        return Session(cfg, opts), check
    except (ConfigError, ScriptError, ModelBuildError) as exc:
        raise _NotRunnable(str(exc)) from None


def _simulate(sweep: Sweep, session: Session, robot: RobotProgram | None
              ) -> tuple[Summary, bool]:
    """Run the session to its end or the sweep's timeout, which also stops the robot program
    it may be waiting for; a robot program that leaves early stops it at once. (summary,
    whether the timeout ended it)."""
    late = threading.Event()

    def timed_out() -> None:
        late.set()
        session.request_stop()
        if robot is not None:
            robot.program.terminate()  # finish() waits for it

    timer = threading.Timer(sweep.timeout, timed_out)
    timer.daemon = True
    timer.start()
    over = threading.Event()
    if robot is not None:
        threading.Thread(target=robot.watch, args=(session, over), daemon=True).start()
    try:
        return session.run(), late.is_set()
    finally:
        over.set()
        timer.cancel()


class _TimedCheck(ScenarioCheck):
    """The scenario's checks, with the wall time their observing took (``spent``, s): the
    "checks" part of a run's timing."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self.spent = 0.0

    def observe(self, t: float, snap: Snapshot) -> None:
        start = time.perf_counter()
        super().observe(t, snap)
        self.spent += time.perf_counter() - start


#: Summary figures that measure the machine, not the run: kept out of a run's record.
_WALL_FIGURES = ("wall_time", "late_periods", "clock_gap", "timing")


def _record(plan: RunPlan) -> dict[str, Any]:
    """A run's record before it runs: a failed one until the verdict says otherwise."""
    return {"run": plan.index, "seed": plan.seed, "values": plan.values, "passed": False,
            "error": None, "checks": [], "final_pose": None, "summary": None,
            "timing": {"robot_start": None, "simulate": None, "checks": None, "total": None}}
