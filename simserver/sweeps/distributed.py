"""A sweep's runs as Ray tasks: on a local Ray instance (one worker per core) by default, on a
Ray cluster when given its address (``--address`` or ``RAY_ADDRESS``).

Ray schedules the runs; this module only keeps about as many runs in flight as the cluster
has CPUs, so that a run that outlives its timeout can be told from one still queued and
cancelled, and so that Ctrl-C stops every worker at once. A run that crashes, hangs or loses
its worker becomes a failed record with the reason, never a stalled sweep.

On a cluster, Ray ships the sweep file's folder (robot project, config, scenario) to every
worker as its working directory (a runtime environment); simserver itself, RobotPy and the
robot's own dependencies must be installed on every node (docs/sweeps.md).
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simserver.sweeps.sampling import plan_run
from simserver.sweeps.spec import Sweep, load_sweep

#: Seconds past a run's own timeout before its task is cancelled as hung (the run stops
#: itself at its timeout; this catches a worker stuck below Python).
HANG_GRACE = 60.0
#: Seconds between looks at the tasks in flight.
POLL = 0.25
#: Seconds to wait for a cluster's head to answer before saying nothing is there.
CONNECT_TIMEOUT = 5.0
#: Object store of a local Ray instance, bytes (records are a few kB each).
LOCAL_OBJECT_STORE = 128 * 1024 * 1024
#: What Ray leaves out of the folder it ships to a cluster.
SHIPPED_EXCLUDES = [".git/", "__pycache__/", "*.wpilog", "*-results/", ".venv/"]


class RayMissing(RuntimeError):
    """Ray is not installed (the ``sweep`` extra)."""


@dataclass(frozen=True)
class Where:
    """Where the runs go: ``address`` of a Ray cluster (None: a local instance with
    ``workers`` workers, None for one per core)."""

    address: str | None = None
    workers: int | None = None


@dataclass
class Outcome:
    """The records of the runs that ended (in the order they ended), and whether the sweep
    was stopped before all were done."""

    records: list[dict[str, Any]]
    interrupted: bool = False
    workers: int = 0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissing("simserver sweep runs on Ray, which is not installed: "
                         "pip install 'frc-simserver[sweep]'") from None
    return ray


class ClusterUnavailable(RuntimeError):
    """The Ray cluster named cannot be joined."""


class NotShippable(ValueError):
    """A sweep whose files are not all inside its folder, which Ray ships to a cluster."""


def _check_shippable(sweep: Sweep) -> None:
    """NotShippable naming the first file a cluster's workers would not get."""
    files = {"sweep.config": sweep.config_path, "sweep.check": sweep.check_path,
             "sweep.robot": sweep.robot, "sweep.inputs": sweep.inputs}
    if sweep.scenario.trajectory is not None:
        files["the scenario's trajectory"] = Path(sweep.scenario.trajectory.file)
    files.update({f"the config's robots.{name}": Path(entry.config)
                  for name, entry in sweep.config.robots.items()})
    for key, path in files.items():
        if path is not None and not path.resolve().is_relative_to(sweep.folder):
            raise NotShippable(f"{key} ({path}) is outside {sweep.folder}, the folder Ray ships "
                               "to the cluster's workers: move it inside")


def _check_listening(address: str) -> None:
    """ClusterUnavailable at once when nothing listens at a ``host:port`` address (Ray itself
    retries for minutes); other forms (``auto``, ``ray://...``) are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ClusterUnavailable(f"nothing answers at {address} ({exc.strerror or exc}): start "
                                 "the cluster's head there with `ray start --head`") from None


def cluster_address(where: Where) -> str | None:
    """The Ray cluster the runs go to (``--address``, else RAY_ADDRESS); None for a local
    instance of the sweep's own."""
    return where.address or os.environ.get("RAY_ADDRESS") or None


def start(sweep: Sweep, where: Where) -> tuple[str, int]:
    """Start or join Ray; returns (how the task finds the sweep file: its absolute path, or
    its name in the shipped working directory on a cluster, the number of CPUs)."""
    ray = _ray()
    address = cluster_address(where)
    if address is None:
        # "local": a new instance of our own, even where a cluster was started on this machine.
        ray.init(address="local", num_cpus=where.workers or os.cpu_count() or 1,
                 include_dashboard=False,
                 object_store_memory=LOCAL_OBJECT_STORE, log_to_driver=False,
                 logging_level=logging.WARNING, configure_logging=True)
        sweep_ref = str(Path(sweep.source).resolve())
    else:
        _check_shippable(sweep)
        _check_listening(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING,
                     runtime_env={"working_dir": str(sweep.folder),
                                  "excludes": SHIPPED_EXCLUDES})
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterUnavailable(
                f"cannot join the Ray cluster at {address}: {str(exc)[:300]} (a cluster that "
                "`ray start` made uses token authentication: set RAY_AUTH_MODE=token here, "
                "with its token in ~/.ray/auth_token or RAY_AUTH_TOKEN)") from None
        sweep_ref = Path(sweep.source).resolve().name
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return sweep_ref, max(cpus, 1)


def stop() -> None:
    """Leave Ray (a local instance stops with it)."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


@functools.cache
def _worker_sweep(sweep_ref: str) -> Sweep:
    """The sweep as a worker loads it (once per worker process)."""
    return load_sweep(sweep_ref)


def _run_task(sweep_ref: str, index: int) -> dict[str, Any]:
    """Run ``index`` of the sweep on a worker; a failed record for anything that goes wrong."""
    from simserver.sweeps.run import run_one

    try:
        sweep = _worker_sweep(sweep_ref)
        return run_one(sweep, plan_run(sweep, index))
    except Exception as exc:
        return failed_record(index, f"the run raised {type(exc).__name__}: {exc}",
                             traceback.format_exc()[-4000:])  # the sweep may be what failed


def failed_record(index: int, error: str, log: str | None = None,
                  sweep: Sweep | None = None) -> dict[str, Any]:
    """The record of a run that produced none of its own (a lost worker, a hang); with the
    ``sweep``, its seed and values as the run would have drawn them."""
    plan = plan_run(sweep, index) if sweep is not None else None
    return {"run": index, "seed": plan and plan.seed, "values": plan and plan.values,
            "passed": False, "error": error,
            "checks": [], "final_pose": None, "summary": None, "log": log,
            "timing": {"robot_start": None, "simulate": None, "checks": None, "total": None},
            "host": None}


def run_all(sweep: Sweep, indices: Sequence[int], where: Where,
            done: Callable[[dict[str, Any]], None] | None = None) -> Outcome:
    """Run ``indices`` of ``sweep`` on Ray; ``done(record)`` as each ends. Ctrl-C cancels the
    runs in flight and returns what ended (``interrupted``)."""
    ray = _ray()
    sweep_ref, cpus = start(sweep, where)
    task = ray.remote(num_cpus=1, max_retries=0)(_run_task)
    outcome = Outcome([], workers=cpus)
    queue = list(indices)
    flight: dict[Any, tuple[int, float]] = {}  # ref -> (run, when submitted)
    deadline = sweep.timeout + HANG_GRACE

    def finish(record: dict[str, Any]) -> None:
        outcome.records.append(record)
        if done is not None:
            done(record)

    try:
        while queue or flight:
            while queue and len(flight) < cpus:
                index = queue.pop(0)
                flight[task.remote(sweep_ref, index)] = (index, time.monotonic())
            ready, _ = ray.wait(list(flight), num_returns=1, timeout=POLL)
            for ref in ready:
                index, _ = flight.pop(ref)
                finish(_collect(ray, ref, index, sweep))
            now = time.monotonic()
            for ref, (index, since) in list(flight.items()):
                if now - since > deadline:
                    ray.cancel(ref, force=True)
                    del flight[ref]
                    finish(failed_record(index, f"hung: no result {deadline:g} s after it "
                                         "started; its worker was stopped", sweep=sweep))
    except KeyboardInterrupt:
        outcome.interrupted = True
        # A local instance ends its workers as it stops. Cancelling them first races with
        # runs that are just ending: Ray 2.60's driver then fails an internal check and dies
        # ("Tried to complete task that was not pending", ray-project/ray#54798), taking
        # the records with it. A cluster outlives the sweep: its runs must be cancelled.
        if cluster_address(where) is not None:
            for ref in flight:
                ray.cancel(ref, force=True)
    finally:
        stop()
    return outcome


def _collect(ray: Any, ref: Any, index: int, sweep: Sweep) -> dict[str, Any]:
    """A finished task's record, or a failed one saying how the task was lost."""
    try:
        record: dict[str, Any] = ray.get(ref)
        return record
    except Exception as exc:  # a lost worker or node, a cancelled task
        return failed_record(index, f"lost: {type(exc).__name__}: {str(exc)[:500]}",
                             sweep=sweep)
