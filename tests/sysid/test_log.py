"""The .wpilog of the routine read back with wpiutil's DataLogReader: SysIdRoutineLog's entries,
types, units and states, and the same constants fitted from what was read."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from wpiutil.log import DataLogReader

from simserver.cli import main
from simserver.config.loader import loads
from simserver.sysid import Settings, characterize, fit_runs, read_log, write_log
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

STATES = ["quasistatic-forward", "quasistatic-reverse", "dynamic-forward", "dynamic-reverse"]


def entries(path):
    """name -> (type, metadata, [(timestamp, value)])."""
    starts, out = {}, {}
    for rec in DataLogReader(str(path)):
        if rec.isStart():
            d = rec.getStartData()
            starts[d.entry] = d.name
            out[d.name] = (d.type, d.metadata, [])
        elif not rec.isControl():
            name = starts[rec.getEntry()]
            kind = out[name][0]
            value = rec.getString() if kind == "string" else rec.getDouble()
            out[name][2].append((rec.getTimestamp(), value))
    return out


@pytest.mark.parametrize("mechanism,angular", [("lift", False), ("arm", True)])
def test_log_has_sysidroutinelog_entries_and_refits_to_the_same_constants(tmp_path, mechanism,
                                                                           angular):
    cfg = loads(LIFT + TWO_KRAKENS + ARM + SHOULDER_NEO)
    result = characterize(cfg, mechanism, Settings(period=0.005))
    motor = result.subject.driven[0]
    path = write_log(tmp_path / "sysid.wpilog", mechanism, result.runs, angular)
    found = entries(path)
    units = ("turn", "turns_per_second") if angular else ("meter", "meters_per_second")
    assert {name: found[name][:2] for name in found} == {
        f"sysid-test-state-{mechanism}": ("string", ""),
        f"voltage-{motor}-{mechanism}": ("double", "volt"),
        f"position-{motor}-{mechanism}": ("double", units[0]),
        f"velocity-{motor}-{mechanism}": ("double", units[1])}
    states = [v for _, v in found[f"sysid-test-state-{mechanism}"][2]]
    changes = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    assert changes == [x for s in STATES for x in (s, "none")]
    stamps = [t for t, _ in found[f"voltage-{motor}-{mechanism}"][2]]
    assert stamps == sorted(stamps) and len(stamps) == sum(len(r.time)
                                                           for r in result.runs[motor])
    name, runs, rotary = read_log(path)
    assert (name, rotary, [r.state for r in runs[motor]]) == (mechanism, angular, STATES)
    again = fit_runs(runs[motor], result.subject.gravity)
    for key in ("ks", "kv", "ka", "kg"):
        assert getattr(again, key) == pytest.approx(getattr(result.fit, key), rel=1e-9,
                                                    abs=1e-12)


def test_cli_prints_constants_and_snippet_and_writes_the_log(tmp_path):
    config = tmp_path / "robot.toml"
    config.write_text(LIFT + TWO_KRAKENS)
    out = CliRunner().invoke(main, ["sysid", str(config), "--mechanism", "lift",
                                    "--period", "0.005"])
    assert out.exit_code == 0, out.output
    assert "[mechanisms.lift.characterization]" in out.output and 'kg = "' in out.output
    assert "kV (V*s/m)" in out.output and "r²" in out.output
    log = tmp_path / "robot-sysid-lift.wpilog"
    assert f"written to {log}" in out.output and log.stat().st_size > 0


@pytest.mark.parametrize("args,message", [
    (["--mechanism", "nope"], "no mechanism 'nope'"),
    (["--step-voltage", "0"], "step voltage must be above 0"),
    (["--timeout", "nan"], "timeout must be"),
    (["--ramp-rate", "fast"], "'fast' is not a valid float"),
])
def test_cli_bad_options_exit_2_with_a_clear_message(tmp_path, args, message):
    config = tmp_path / "robot.toml"
    config.write_text(LIFT + TWO_KRAKENS)
    out = CliRunner().invoke(main, ["sysid", str(config), *args,
                                    "--out", str(tmp_path / "x.wpilog")])
    assert out.exit_code == 2 and message in out.output, out.output
