"""What showing game pieces costs per tick: packing their Pose3d arrays, publishing them on
NetworkTables and recording them (issue 22, part 5).

What is measured
    Packing: µs to pack 500 Pose3d (the pieces of a crowded field) into one
    ``struct:Pose3d[]`` value, with numpy (:func:`simserver.io.structs.pose3d_bytes`, what
    simserver does) and, as the reference, by building 500 wpimath Pose3d and packing them
    with ``wpistruct.packArray`` (the same bytes).

    Publishing: µs per :meth:`simserver.io.nt.NtAdapter.publish` of the kitbot's snapshot in
    server mode with one real client subscribed to every topic, without pieces and with 500
    (three pose arrays per type, scores, counts, the SimField's ``Pieces``), every piece
    moving a little each tick.

    Recording: µs per :meth:`simserver.io.wpilog.WpilogRecorder.record` and bytes written
    per tick, without pieces, with 500 at rest (their arrays are written only when they
    change) and with 500 moving.

How
    ``--ticks`` ticks per case after 50 of warm-up, ``--repeats`` repeats; best and median.

Usage::

    python benchmarks/pieces_shown.py [--ticks 500] [--repeats 5] [--output FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ntcore
import numpy as np
from wpimath.geometry import Pose3d, Rotation3d
from wpiutil import wpistruct

from simserver.config.loader import load_default
from simserver.contract.snapshot import PieceSnapshot, Snapshot
from simserver.io.nt import Endpoint, NtAdapter
from simserver.io.structs import pose3d_bytes
from simserver.io.wpilog import WpilogRecorder
from simserver.models.pieces.types import FLIGHT, HELD, LOOSE
from simserver.world import World

try:
    from benchmarks._common import emit, text_table
    from benchmarks._livesession import free_port, wait_for
except ImportError:  # run as a script
    from _common import emit, text_table  # type: ignore
    from _livesession import free_port, wait_for  # type: ignore

PIECES = 500


def field(n: int = PIECES, seed: int = 3) -> PieceSnapshot:
    """``n`` pieces of two types, most on the carpet, some in flight and held."""
    rng = np.random.default_rng(seed)
    pose = rng.uniform(0.0, 1.0, (n, 6)) * [16.5, 8.0, 0.1, 6.28, 6.28, 6.28]
    state = rng.choice([LOOSE, LOOSE, LOOSE, FLIGHT, HELD], n)
    return PieceSnapshot(("fuel", "coral"), np.arange(n) % 2, state, pose,
                         tuple("-" for _ in range(n)), {"blue": 0, "red": 0},
                         {"blue hub": 0, "red hub": 0}, {"": 0}, {"": 0})


def moved(pieces: PieceSnapshot, k: int) -> PieceSnapshot:
    """``pieces`` with every piece shifted by tick ``k`` (all of them moving)."""
    pose = pieces.pose.copy()
    pose[:, 0] += 1e-3 * k
    return dataclasses.replace(pieces, pose=pose)


def _per_call(body: Callable[[int], Any], ticks: int) -> float:
    for k in range(50):
        body(k)
    gc.disable()
    try:
        start = time.perf_counter()
        for k in range(ticks):
            body(k)
        return (time.perf_counter() - start) / ticks * 1e6
    finally:
        gc.enable()


def packing(ticks: int) -> dict[str, float]:
    pose = field().pose

    def objects(_k: int) -> bytes:
        return bytes(wpistruct.packArray([Pose3d(x, y, z, Rotation3d(r, p, w))
                                          for x, y, z, r, p, w in pose.tolist()]))
    return {"numpy": _per_call(lambda _k: pose3d_bytes(pose), ticks),
            "objects": _per_call(objects, ticks)}


def publishing(ticks: int) -> dict[str, float]:
    world = World(load_default())
    base = world.snapshot()
    pieces = field()
    port = free_port()
    adapter = NtAdapter(world.cfg, Endpoint("server", "127.0.0.1", port))
    inst = ntcore.NetworkTableInstance.create()
    inst.startClient4("bench")
    inst.setServer("127.0.0.1", port)
    every = ntcore.MultiSubscriber(inst, [""], ntcore.PubSubOptions(periodic=0.001))
    try:
        wait_for(inst.isConnected, 10, "the client to connect")
        without = _per_call(lambda _k: adapter.publish(base), ticks)
        with_pieces = _per_call(lambda k: adapter.publish(
            dataclasses.replace(base, pieces=moved(pieces, k))), ticks)
    finally:
        del every
        ntcore.NetworkTableInstance.destroy(inst)
        adapter.close()
    return {"without": without, "with": with_pieces}


def recording(ticks: int) -> dict[str, tuple[float, float]]:
    world = World(load_default())
    base = world.snapshot()
    pieces = field()
    cases: dict[str, Callable[[int], Snapshot]] = {
        "without": lambda k: dataclasses.replace(base, time=k * 0.01),
        "at rest": lambda k: dataclasses.replace(base, time=k * 0.01, pieces=pieces),
        "moving": lambda k: dataclasses.replace(base, time=k * 0.01, pieces=moved(pieces, k)),
    }
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, snap in cases.items():
            path = Path(tmp) / f"{name}.wpilog"
            rec = WpilogRecorder(path, world.cfg, (16.54, 8.07))
            cost = _per_call(lambda k, rec=rec, snap=snap: rec.record(snap(k)), ticks)
            rec.close()
            out[name] = (cost, path.stat().st_size / (ticks + 50))
    return out


def measure(ticks: int = 500, repeats: int = 5) -> dict[str, Any]:
    runs = [(packing(ticks), publishing(ticks), recording(ticks)) for _ in range(repeats)]
    med = statistics.median
    return {
        "ticks": ticks, "repeats": repeats,
        "pack": {k: (min(r[0][k] for r in runs), med(r[0][k] for r in runs))
                 for k in runs[0][0]},
        "publish": {k: (min(r[1][k] for r in runs), med(r[1][k] for r in runs))
                    for k in runs[0][1]},
        "record": {k: (min(r[2][k][0] for r in runs), med(r[2][k][0] for r in runs),
                       med(r[2][k][1] for r in runs)) for k in runs[0][2]},
    }


def _rows(res: dict[str, Any]) -> list[list[str]]:
    p, n, r = res["pack"], res["publish"], res["record"]
    return [
        [f"pack {PIECES} Pose3d with numpy (simserver)", f"{p['numpy'][0]:.0f}",
         f"{p['numpy'][1]:.0f}", ""],
        [f"reference: {PIECES} wpimath Pose3d + wpistruct.packArray", f"{p['objects'][0]:.0f}",
         f"{p['objects'][1]:.0f}", "same bytes"],
        ["NtAdapter.publish, kitbot without pieces", f"{n['without'][0]:.0f}",
         f"{n['without'][1]:.0f}", ""],
        [f"NtAdapter.publish, kitbot + {PIECES} moving pieces", f"{n['with'][0]:.0f}",
         f"{n['with'][1]:.0f}", ""],
        *[[f"WpilogRecorder.record, {name}", f"{v[0]:.0f}", f"{v[1]:.0f}",
           f"{v[2] / 1024:.1f} KiB/tick"] for name, v in
          (("kitbot without pieces", r["without"]), (f"{PIECES} pieces at rest", r["at rest"]),
           (f"{PIECES} pieces all moving", r["moving"]))],
    ]


HEAD = ("per tick", "µs best", "median", "note")


def format_table(res: dict[str, Any]) -> str:
    return "\n".join([f"Showing game pieces: {res['ticks']} ticks × {res['repeats']} repeats",
                      *text_table(HEAD, _rows(res))])


def format_markdown(res: dict[str, Any]) -> str:
    lines = [f"### Showing game pieces ({res['ticks']} ticks × {res['repeats']} repeats)", "",
             "| " + " | ".join(HEAD) + " |", "|---|---:|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(res)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--ticks", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--output", type=Path)
    args = ap.parse_args(argv)
    res = measure(args.ticks, args.repeats)
    emit(format_table(res), format_markdown(res), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
