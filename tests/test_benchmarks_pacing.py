"""The pacing benchmark's arithmetic (benchmarks/pacing.py), with nothing run in real time."""

from __future__ import annotations

import pytest

from benchmarks.pacing import _summary, format_table


def test_pacing_errors_count_from_the_most_punctual_tick_so_none_is_negative():
    # A late first tick (warm-up) used to be the zero: every later tick then read negative.
    offsets = [100.0004, 100.0001, 100.0002, 100.0001, 100.0003]
    res = _summary(offsets, seconds=0.05)
    assert res["p50_ms"] == pytest.approx(0.1)
    assert res["max_ms"] == pytest.approx(0.3)
    assert res["final_ms"] == pytest.approx(0.2)
    assert res["ticks"] == 5


def test_pacing_drift_is_the_slope_whatever_the_zero():
    # 1 ms late more every 0.1 s tick: 10 ms/s, 600 ms per minute.
    offsets = [5.0 + 0.001 * k for k in range(10)]
    assert _summary(offsets, seconds=1.0)["drift_ms_per_min"] == pytest.approx(600.0)
    shifted = [o - 7.0 for o in offsets]
    assert _summary(shifted, seconds=1.0)["drift_ms_per_min"] == pytest.approx(600.0)


def test_pacing_table_prints_unsigned_spread_for_a_late_first_tick():
    late_first = _summary([1.0005] + [1.0 + 1e-5 * (k % 3) for k in range(99)], seconds=1.0)
    table = format_table({"seconds": 1.0, "tick_ms": 10.0, "ours": late_first,
                          "naive": late_first})
    row = next(line for line in table.splitlines() if line.startswith("simserver Session"))
    _, p50, peak = row.split()[-3:]
    assert not p50.startswith("-") and not peak.startswith("-"), row
