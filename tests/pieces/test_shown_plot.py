"""`simserver plot` and `run --plot` draw the game pieces (issue 22, part 5): their last
positions on the field, one scatter per state, the scores in the field's title and a panel of
the scores over time; without pieces the figure is as before."""

from __future__ import annotations

import matplotlib.pyplot as plt
from click.testing import CliRunner
from matplotlib.collections import PathCollection

from simserver.cli import main
from simserver.runs.report import Trace, figure
from tests.pieces.shown_fixtures import field_of, scored, with_pieces
from tests.pieces.test_shown_wpilog import record
from tests.worlds import make_world

FIELD = (16.54, 8.07)


def trace_of(counts: list[dict[str, int]] | None, n: int = 60) -> Trace:
    world = make_world()
    trace = Trace()
    for c in counts or [{}] * 5:
        world.set_motor("left", 0.5)
        world.set_motor("right", 0.5)
        world.step(world.cfg.sim.tick)
        trace.record(with_pieces(world.snapshot(),
                                 None if counts is None else scored(field_of(n), **c)))
    return trace


def scatters(ax) -> dict[str, int]:
    """Label -> point count of the piece scatters on ``ax``."""
    return {c.get_label(): len(c.get_offsets()) for c in ax.collections
            if isinstance(c, PathCollection)}


def test_the_figure_draws_the_pieces_by_state_and_the_scores():
    counts = [dict(blue=k, red=k // 2) for k in range(6)]
    fig = figure(trace_of(counts), FIELD)
    try:
        field_ax, *panels = fig.axes
        assert scatters(field_ax) == {"pieces floor (15)": 15, "pieces flight (15)": 15,
                                      "pieces held (15)": 15}  # 60 pieces, 15 gone
        assert "scored: blue 5, red 2" in field_ax.get_title()
        (score_ax,) = [a for a in panels if a.get_ylabel() == "pieces scored"]
        lines = {line.get_label(): list(line.get_ydata()) for line in score_ax.get_lines()}
        assert lines == {"blue": [0, 1, 2, 3, 4, 5], "red": [0, 0, 1, 1, 2, 2]}
    finally:
        plt.close(fig)


def test_without_pieces_the_figure_is_as_before():
    fig = figure(trace_of(None), FIELD)
    try:
        assert len(fig.axes) == 6  # field, speeds, yaw rate, currents, battery (two axes)
        assert scatters(fig.axes[0]) == {}
        assert "scored" not in fig.axes[0].get_title()
    finally:
        plt.close(fig)


def test_simserver_plot_draws_a_recording_with_pieces(tmp_path):
    rec = tmp_path / "pieces.wpilog"
    record(rec, make_world(), lambda k: scored(field_of(200), blue=k, red=k // 3))
    out = tmp_path / "pieces.png"
    result = CliRunner().invoke(main, ["plot", str(rec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

