"""What the telemetry shows is what happened (issue 21): the battery's per-tick aggregates
(lowest voltage, largest current, brownout at any substep) reach NetworkTables, the snapshot
and the recording, and the summary, the scenario check, the plot and the recording give the
same figures, on runs that sag and on one whose brownout toggles every substep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from wpiutil.log import DataLogReader

from simserver.cli import main
from simserver.config.loader import default_config_text, loads
from simserver.contract import topics
from simserver.io.nt import Endpoint, NtAdapter
from simserver.runs.recording import read_recording
from simserver.runs.report import battery_caption
from simserver.world import World
from tests.ntutil import client, free_port, wait_for

# The kitbot on a battery with 0.1 Ω inside: at full throttle from rest the bus falls below
# the 6.75 V brownout level in one substep, the cut outputs let it recover above 7.5 V in the
# next, and so on; with 2 substeps a tick, every tick ends on the healthy substep.
TOGGLING = default_config_text().replace('resistance = "0.015 ohm"', 'resistance = "0.1 ohm"')
# The kitbot 0.4 m from the far wall (x = 16.54 m), driving into it and pushing on.
WALL = default_config_text().replace('start = { x = "2 m"', 'start = { x = "15.7 m"')


def test_a_brownout_toggling_every_substep_shows_in_the_tick_aggregates():
    world = World(loads(TOGGLING))
    assert world.substep * 2 == pytest.approx(world.cfg.sim.tick)  # an even count
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    for _ in range(5):
        world.step(world.cfg.sim.tick)
        snap = world.snapshot()
        # the end-of-tick instant values look like a robot at rest on a full battery...
        assert snap.battery_voltage > 12.6 and snap.battery_current == 0.5
        assert not snap.brownout
        # ...while the robot crawls in brownout half of every tick, as the aggregates show
        assert snap.brownout_in_tick
        assert snap.min_voltage < world.battery.brownout_voltage
        assert snap.max_current > 90.0
    assert snap.vx < 0.25


def test_the_tick_aggregates_reach_a_real_nt_client():
    port = free_port()
    world = World(loads(TOGGLING))
    adapter = NtAdapter(world.cfg, Endpoint("server", "127.0.0.1", port))
    inst = client(port)
    try:
        subs = {name: inst.getTopic(name).genericSubscribe()
                for name in (topics.BATTERY_MIN_VOLTAGE, topics.BATTERY_MAX_CURRENT,
                             topics.BROWNOUT_IN_TICK, topics.BATTERY_VOLTAGE, topics.BROWNOUT)}
        wait_for(inst.isConnected, 10, "the client to connect")
        world.set_motor("left", 1.0)
        world.set_motor("right", 1.0)
        world.step(world.cfg.sim.tick)
        snap = world.snapshot()

        def arrived() -> bool:
            adapter.publish(snap)
            value = subs[topics.BATTERY_MIN_VOLTAGE].get()
            return value.isValid() and value.getDouble() == snap.min_voltage

        wait_for(arrived, 10, "the tick's aggregates on the client")
        got = {name: sub.get().value() for name, sub in subs.items()}
        assert got[topics.BROWNOUT_IN_TICK] is True and got[topics.BROWNOUT] is False
        assert got[topics.BATTERY_MAX_CURRENT] == snap.max_current > 90.0
        assert got[topics.BATTERY_MIN_VOLTAGE] < 6.75 < 12.6 < got[topics.BATTERY_VOLTAGE]
    finally:
        inst.stopClient()
        type(inst).destroy(inst)
        adapter.close()


def _run(tmp_path: Path, config: str, seconds: float) -> tuple[dict, str, Path, Path]:
    """`simserver run` at full throttle with --record, --json, --check, --plot and --summary:
    the JSON, the printed output, the recording and the plot."""
    cfg = tmp_path / "robot.toml"
    cfg.write_text(config)
    inputs = tmp_path / "drive.csv"
    inputs.write_text("time,left,right\n0,1,1\n")
    scenario = tmp_path / "check.toml"
    scenario.write_text(f'duration = "{seconds} s"\n[expect]\nmin_battery_voltage = "1 V"\n')
    log, js, png = tmp_path / "run.wpilog", tmp_path / "run.json", tmp_path / "run.png"
    result = CliRunner().invoke(main, [
        "run", str(cfg), "--inputs", str(inputs), "--fast", "--check", str(scenario),
        "--record", str(log), "--json", str(js), "--plot", str(png), "--summary"])
    assert result.exit_code == 0, result.output
    return json.loads(js.read_text()), result.stdout, log, png


def _recorded(log: Path, name: str) -> list:
    """Every value of entry ``name`` in a recording, read with wpiutil's DataLogReader."""
    entries, out = {}, []
    for rec in DataLogReader(str(log)):
        if rec.isStart():
            start = rec.getStartData()
            entries[start.entry] = start
        elif not rec.isControl() and entries[rec.getEntry()].name == name:
            kind = entries[rec.getEntry()].type
            out.append(rec.getBoolean() if kind == "boolean" else rec.getDouble())
    return out


@pytest.mark.parametrize("config, seconds", [(WALL, 2.0), (TOGGLING, 0.5)],
                         ids=["kitbot pushing a wall", "brownout toggling every substep"])
def test_summary_scenario_plot_and_recording_give_the_same_battery_figures(
        tmp_path, config, seconds):
    doc, out, log, png = _run(tmp_path, config, seconds)
    lowest = min(_recorded(log, topics.BATTERY_MIN_VOLTAGE))
    peak = max(_recorded(log, topics.BATTERY_MAX_CURRENT))
    summary = doc["summary"]
    check = next(c for c in doc["checks"] if c["name"] == "min_battery_voltage")
    assert summary["min_voltage"] == check["values"]["min_voltage"] == lowest
    assert summary["peak_battery_current"] == peak
    assert f"minimum battery voltage  {lowest:.2f} V" in out
    assert f"peak battery current     {peak:.1f} A" in out
    assert f"lowest {lowest:.2f} V" in check["measured"]
    caption = battery_caption(read_recording(log).trace)  # what `simserver plot` draws
    assert f"lowest {lowest:.2f} V, peak {peak:.1f} A" in caption
    assert png.read_bytes()[:4] == b"\x89PNG"
    # the instant values alone would have said otherwise
    assert min(_recorded(log, topics.BATTERY_VOLTAGE)) > lowest
    brownouts = _recorded(log, topics.BROWNOUT_IN_TICK)
    if config is TOGGLING:
        assert summary["brownout_ticks"] == round(seconds / 0.01)
        assert summary["first_brownout"] == pytest.approx(0.01)
        assert True in brownouts and True not in _recorded(log, topics.BROWNOUT)
        assert lowest < 6.75
    else:
        assert summary["brownout_ticks"] == 0 and True not in brownouts
        assert lowest < 11.0
