"""Scenario checks on game pieces (issue 22, part 5): `[expect.pieces]` with at-least counts
of pieces scored (in all, per alliance, per goal), picked up and shot; each passes or fails
on the counts after enabling, and fails when the field has no pieces."""

from __future__ import annotations

import json

import pytest

from simserver.config.loader import ConfigError
from simserver.runs.scenario import ScenarioCheck, load_scenario
from simserver.world import World
from tests.pieces.shown_fixtures import field_of, scored, with_pieces
from tests.worlds import make_world

HEAD = 'enable = "autonomous"\nduration = "2 s"\n\n[expect]\n'
PIECES = """
[expect.pieces]
min_scored = 3
min_scored_blue = 2
min_scored_red = 1
min_picked_up = 4
min_shots = 3

[expect.pieces.goals.blue_hub]
min_scored = 2
"""


def scenario(tmp_path, body: str = PIECES):
    path = tmp_path / "pieces-check.toml"
    path.write_text(HEAD + body, encoding="utf-8")
    return load_scenario(path)


def run(check: ScenarioCheck, world: World, counts: list[dict[str, int]] | None) -> None:
    """One tick per entry of ``counts`` (the field's counts at that tick; None: no pieces)."""
    base = field_of(8)
    for k, c in enumerate(counts or [{}]):
        world.step(world.cfg.sim.tick)
        pieces = None if counts is None else scored(base, **c)
        check.observe(0.01 * (k + 1), with_pieces(world.snapshot(), pieces))


def verdicts(result) -> dict[str, tuple[bool, str]]:
    return {c.name: (c.passed, c.measured) for c in result.checks}


def test_every_count_reached_passes(tmp_path):
    check = ScenarioCheck(scenario(tmp_path))
    run(check, make_world(), [{}, dict(blue=1, picked_up=2, shots=1),
                              dict(blue=2, red=1, picked_up=4, shots=3)])
    result = check.result()
    assert result.passed, result.report()
    assert verdicts(result) == {
        "pieces.min_scored": (True, "3"), "pieces.min_scored_blue": (True, "2"),
        "pieces.min_scored_red": (True, "1"), "pieces.min_picked_up": (True, "4"),
        "pieces.min_shots": (True, "3"), 'pieces.goals.blue_hub': (True, "2")}
    doc = json.loads(json.dumps(result.to_json()))
    assert {c["name"]: c["values"]["count"] for c in doc["checks"]}["pieces.min_scored"] == 3


def test_a_count_short_of_its_minimum_fails_and_says_how_many(tmp_path):
    check = ScenarioCheck(scenario(tmp_path))
    run(check, make_world(), [{}, dict(blue=2, red=0, picked_up=4, shots=2)])
    result = check.result()
    assert not result.passed
    v = verdicts(result)
    assert v["pieces.min_scored"] == (False, "2")
    assert v["pieces.min_scored_red"] == (False, "0")
    assert v["pieces.min_shots"] == (False, "2")
    assert v["pieces.min_scored_blue"] == (True, "2")
    assert "FAIL" in result.report() and "≥ 3" in result.report()


def test_counts_before_the_first_observed_tick_do_not_count(tmp_path):
    check = ScenarioCheck(scenario(tmp_path, "[expect.pieces]\nmin_scored = 2\n"))
    # two pieces already scored when observing starts (before enabling), one more after
    run(check, make_world(), [dict(blue=2), dict(blue=3)])
    assert verdicts(check.result()) == {"pieces.min_scored": (False, "1")}


def test_a_field_without_pieces_fails_the_piece_checks(tmp_path):
    check = ScenarioCheck(scenario(tmp_path, "[expect.pieces]\nmin_shots = 0\n"))
    run(check, make_world(), None)
    assert verdicts(check.result()) == {
        "pieces.min_shots": (False, "the field has no game pieces")}


def test_a_goal_the_season_does_not_have_fails_naming_it(tmp_path):
    check = ScenarioCheck(scenario(tmp_path, '[expect.pieces.goals.speaker]\nmin_scored = 1\n'))
    run(check, make_world(), [dict(blue=1)])
    assert verdicts(check.result()) == {
        "pieces.goals.speaker": (False, "the field has no goal 'speaker'")}


def test_piece_expectations_count_as_expectations(tmp_path):
    sc = scenario(tmp_path, "[expect.pieces]\nmin_picked_up = 1\n")
    assert sc.pieces is not None and sc.pieces.min_picked_up == 1


@pytest.mark.parametrize(("body", "message"), [
    ("[expect.pieces]\n", "expect.pieces: nothing to check"),
    ("[expect.pieces]\nmin_scored = -1\n", "expect.pieces.min_scored"),
    ('[expect.pieces]\nmin_scored = "3"\n', "expect.pieces.min_scored"),
    ("[expect.pieces]\nmin_score = 3\n", "did you mean 'min_scored'"),
    ("[expect.pieces.goals.hub]\n", "expect.pieces.goals.hub.min_scored: missing"),
])
def test_bad_piece_expectations_are_config_errors(tmp_path, body, message):
    with pytest.raises(ConfigError) as exc:
        scenario(tmp_path, body)
    assert message in str(exc.value)
