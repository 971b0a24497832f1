"""Run every benchmark: throughput of the physics core (kitbot vs WPILib; swerve, a full robot
and six colliding robots; game pieces on the field), mechanisms vs WPILib's, latency over
NetworkTables (a plain ntcore client, and a real robot program through the bridge), real-time
pacing, lock-step with a real robot program, sweeps of seeded runs on Ray (one worker, all
cores, a two-node cluster, 1000 runs), the cost of a camera frame against photonlibpy's
simulation, what showing 500 game pieces costs per tick, and memory.

Each benchmark prints its figures next to a reference measured in the same run (WPILib's
models; an NT echo; bare processes). The figures are information, not pass/fail: the exit
status is 0 whenever the benchmarks ran, whatever the numbers. Each module's docstring says
what exactly is measured. Robot programs bind port 5810: the benchmarks that start one hold
the machine-wide lock /tmp/simserver-5810.lock meanwhile (waiting for it if need be).

Usage::

    python benchmarks/run_all.py [--quick] [--output FILE]

``--output FILE`` writes (overwrites) a Markdown report: the machine, then every section.
``--quick`` runs short versions (20 s simulated × 3 repeats; 100 switches) as a smoke test;
its figures are noisier.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

try:
    from benchmarks import (
        bench_pieces,
        compiled,
        disconnect,
        heartbeat,
        inputs_memory,
        latency,
        lockstep,
        mechanisms,
        memory,
        pacing,
        pieces_shown,
        robot_latency,
        sweeps,
        throughput,
        vision,
        worlds,
    )
    from benchmarks._common import machine_info, machine_line
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import bench_pieces  # type: ignore
    import compiled  # type: ignore
    import disconnect  # type: ignore
    import heartbeat  # type: ignore
    import inputs_memory  # type: ignore
    import latency  # type: ignore
    import lockstep  # type: ignore
    import mechanisms  # type: ignore
    import memory  # type: ignore
    import pacing  # type: ignore
    import pieces_shown  # type: ignore
    import robot_latency  # type: ignore
    import sweeps  # type: ignore
    import throughput  # type: ignore
    import vision  # type: ignore
    import worlds  # type: ignore
    from _common import machine_info, machine_line  # type: ignore

FULL = {"seconds": 120.0, "repeats": 5, "switches": 1000, "warmup": 20, "pacing": 60.0,
        "lockstep": 60.0, "vision_poses": 200, "worlds": 30.0, "worlds_repeats": 3, "pieces": 30.0,
        "mechanisms": 60.0, "robot_switches": 1000, "kills": 120, "freezes": 20,
        "inputs_mb": 60.0, "pieces_ticks": 500, "sweep_runs": 1000, "sweep_small": 64}
QUICK = {"seconds": 20.0, "repeats": 3, "switches": 100, "warmup": 10, "pacing": 5.0,
         "lockstep": 10.0, "vision_poses": 50, "worlds": 5.0, "worlds_repeats": 1, "pieces": 5.0,
         "mechanisms": 10.0, "robot_switches": 100, "kills": 12, "freezes": 3, "inputs_mb": 5.0,
         "pieces_ticks": 100, "sweep_runs": 8, "sweep_small": 4}


def markdown_report(thr: dict, lat: dict, quick: bool, elapsed: float,
                    pace: dict | None = None, lock: dict | None = None,
                    vis: dict | None = None, wor: dict | None = None,
                    mech: dict | None = None, rlat: dict | None = None,
                    mem: dict | None = None, gone: dict | None = None,
                    inp: dict | None = None, pie: dict | None = None,
                    shown: dict | None = None, swp: dict | None = None,
                    beat: dict | None = None, fast: dict | None = None) -> str:
    """The whole report: heading, machine, how to reproduce, every section measured."""
    lines = [
        "# simserver benchmark figures",
        "",
        "Measured figures, not pass/fail results: each is shown next to a reference measured "
        "in the same run on the same machine. Regenerate with `make bench`.",
        "",
        f"Machine: {machine_line(machine_info())}",
        "",
        f"Command: `python benchmarks/run_all.py{' --quick' if quick else ''}` "
        f"({elapsed:.0f} s wall).",
        "",
        "## Throughput",
        "",
        throughput.format_markdown(thr).rstrip(),
        "",
    ]
    if wor is not None:
        lines += [worlds.format_markdown(wor).rstrip(), ""]
    if pie is not None:
        lines += [bench_pieces.format_markdown(pie).rstrip(), ""]
    if fast is not None:
        lines += [compiled.format_markdown(fast).rstrip(), ""]
    if mech is not None:
        lines += ["## Mechanisms", "", mechanisms.format_markdown(mech).rstrip(), ""]
    if shown is not None:
        lines += ["## Game pieces shown", "", pieces_shown.format_markdown(shown).rstrip(), ""]
    lines += ["## Latency", "", latency.format_markdown(lat).rstrip(), ""]
    if rlat is not None:
        lines += [robot_latency.format_markdown(rlat).rstrip(), ""]
    if pace is not None:
        lines += ["## Real-time pacing", "", pacing.format_markdown(pace).rstrip(), ""]
    if lock is not None:
        lines += ["## Lock-step with a robot program", "",
                  lockstep.format_markdown(lock).rstrip(), ""]
    if swp is not None:
        lines += [sweeps.format_markdown(swp).rstrip(), ""]
    if vis is not None:
        lines += ["## Vision", "", vision.format_markdown(vis).rstrip(), ""]
    if mem is not None:
        lines += ["## Memory", "", memory.format_markdown(mem).rstrip(), ""]
    if gone is not None:
        lines += ["## Disconnect and frozen client to motors at 0", "",
                  disconnect.format_markdown(gone).rstrip(), ""]
    if inp is not None:
        lines += [inputs_memory.format_markdown(inp).rstrip(), ""]
    if beat is not None:
        lines += ["## Heartbeat (container health check)", "",
                  heartbeat.format_markdown(beat).rstrip(), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true",
                    help="short runs for a smoke test (20 s simulated, 100 switches)")
    ap.add_argument("--output", type=Path, help="write a Markdown report to this file")
    args = ap.parse_args(argv)

    def on_sigterm(signum: int, _frame: object) -> None:  # stop subprocesses via finally
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    p = QUICK if args.quick else FULL
    start = time.perf_counter()
    print("Figures, not pass/fail: each next to a reference measured in the same run.\n",
          flush=True)
    thr = throughput.measure_throughput(p["seconds"], int(p["repeats"]))
    print(throughput.format_table(thr), flush=True)
    print(flush=True)
    wor = worlds.measure_worlds(p["worlds"], int(p["worlds_repeats"]))
    print(worlds.format_table(wor), flush=True)
    print(flush=True)
    pie = bench_pieces.measure_pieces(p["pieces"], int(p["worlds_repeats"]))
    print(bench_pieces.format_table(pie), flush=True)
    print(flush=True)
    fast = None
    try:
        fast = compiled.measure_compiled(p["pieces"], int(p["worlds_repeats"]))
    except FileNotFoundError as exc:
        print(f"Compiled build: left out, {exc}.", flush=True)
    else:
        print(compiled.format_table(fast), flush=True)
    print(flush=True)
    mech = mechanisms.measure_mechanisms(p["mechanisms"], int(p["repeats"]))
    print(mechanisms.format_table(mech), flush=True)
    print(flush=True)
    shown = pieces_shown.measure(int(p["pieces_ticks"]), int(p["repeats"]))
    print(pieces_shown.format_table(shown), flush=True)
    print(flush=True)
    lat = latency.measure_latency(int(p["switches"]), int(p["warmup"]))
    print(latency.format_table(lat), flush=True)
    print(flush=True)
    rlat = robot_latency.measure_robot_latency(int(p["robot_switches"]), warmup=int(p["warmup"]))
    print(robot_latency.format_table(rlat), flush=True)
    print(flush=True)
    pace = pacing.measure_pacing(p["pacing"])
    print(pacing.format_table(pace), flush=True)
    print(flush=True)
    lock = lockstep.measure_lockstep(p["lockstep"])
    print(lockstep.format_table(lock), flush=True)
    print(flush=True)
    swp = None
    try:
        import ray  # noqa: F401
    except ImportError:
        print("Sweeps: left out, Ray is not installed (the `sweep` extra).", flush=True)
    else:
        swp = sweeps.measure_sweeps(int(p["sweep_runs"]), int(p["sweep_small"]))
        print(sweeps.format_table(swp), flush=True)
    print(flush=True)
    vis = None
    if vision.have_reference():
        vis = vision.measure_vision(int(p["vision_poses"]), int(p["repeats"]))
        print(vision.format_table(vis), flush=True)
    else:
        print("Vision: left out, its reference photonlibpy is not installed (it needs Python "
              "3.11 or newer).", flush=True)
    print(flush=True)
    mem = memory.summarize_run(rlat, memory.measure_references())
    print(memory.format_table(mem), flush=True)
    print(flush=True)
    gone = disconnect.measure_disconnects(int(p["kills"]), int(p["freezes"]))
    print(disconnect.format_table(gone), flush=True)
    print(flush=True)
    inp = inputs_memory.measure_inputs_memory(p["inputs_mb"])
    print(inputs_memory.format_table(inp), flush=True)
    print(flush=True)
    beat = heartbeat.measure_heartbeat()
    print(heartbeat.format_table(beat), flush=True)
    elapsed = time.perf_counter() - start
    print(f"\nTotal: {elapsed:.0f} s")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(markdown_report(thr, lat, args.quick, elapsed, pace, lock, vis,
                                               wor, mech, rlat, mem, gone, inp, pie, shown,
                                               swp, beat, fast),
                                encoding="utf-8")
        print(f"Markdown written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
