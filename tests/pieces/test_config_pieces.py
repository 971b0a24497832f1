"""[pieces] in the config: defaults, and every bad value refused naming file, key and unit or
range (exit 2 from `simserver check`)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.config.issues import ConfigError
from simserver.config.loader import default_config_text, loads
from tests.pieces.test_world_pieces import BALL_TYPE


def errors(extra: str) -> str:
    with pytest.raises(ConfigError) as info:
        loads(default_config_text() + extra, source="robot.toml")
    return str(info.value)


def test_no_pieces_table_means_no_pieces() -> None:
    assert loads(default_config_text()).pieces is None


def test_pieces_defaults_and_values_in_si() -> None:
    cfg = loads(default_config_text() + "\n[pieces]\n" + BALL_TYPE
                + '[pieces.extra.a]\ntype = "ball"\nx = "120 in"\ny = "4 m"\nyaw = "90 deg"\n')
    p = cfg.pieces
    assert p is not None
    assert (p.enabled, p.layout, p.scored) == (True, "season", "remove")
    assert p.types["ball"].radius == pytest.approx(0.075)
    assert p.types["ball"].drag_area == pytest.approx(0.0177)
    assert p.types["ball"].lift_coefficient is None
    assert p.extra["a"].x == pytest.approx(3.048) and p.extra["a"].yaw == pytest.approx(1.5708,
                                                                                        abs=1e-4)


@pytest.mark.parametrize(("extra", "message"), [
    ('\n[pieces]\nlayout = "all"\n', "robot.toml: pieces.layout: "),
    ('\n[pieces]\nscored = "keep"\n', "robot.toml: pieces.scored: "),
    ('\n[pieces]\nenabled = "yes"\n', "robot.toml: pieces.enabled: "),
    ('\n[pieces]\nsleep = true\n', "robot.toml: pieces.sleep: unknown key"),
    ('\n[pieces.types.ball]\nradius = "5 kg"\n',
     "robot.toml: pieces.types.ball.radius: '5 kg' is a mass, expected a length"),
    ('\n[pieces.types.ball]\nrestitution = 1.5\n',
     "robot.toml: pieces.types.ball.restitution: must be 0 ≤ value ≤ 1"),
    ('\n[pieces.types.ball]\nmass = "-1 kg"\n',
     "robot.toml: pieces.types.ball.mass: must be 0.001 ≤ value ≤ 25 kg"),
    ('\n[pieces.types.ball]\ndrag_area = "3 m"\n',
     "robot.toml: pieces.types.ball.drag_area: '3 m' is a length, expected an area"),
    ('\n[pieces.types.ball]\nshape = "cube"\n', "robot.toml: pieces.types.ball.shape: "),
    ('\n[pieces.types.ball]\nclass_id = 1.5\n', "robot.toml: pieces.types.ball.class_id: "),
    ('\n[pieces.types.ball]\nradius = "7 cm"\n',
     "robot.toml: pieces.types.ball: a new piece type (not one of the 2026 season's) needs "
     "shape, height, mass, restitution, friction, rolling, drag_coefficient, drag_area, "
     "class_id"),
    ('\n[pieces]\n' + BALL_TYPE + '[pieces.extra.a]\ntype = "bal"\nx = "3 m"\ny = "3 m"\n',
     "robot.toml: pieces.extra.a.type: no piece type named 'bal' in [pieces.types]; did you "
     "mean 'ball'?"),
    ('\n[pieces]\n' + BALL_TYPE + '[pieces.extra.a]\ntype = "ball"\nx = "17 m"\ny = "3 m"\n',
     "robot.toml: pieces.extra.a.x: 17 m is off the field: the piece's centre must lie "
     "between 0.075 m and 16.466 m"),
    ('\n[pieces]\n' + BALL_TYPE + '[pieces.extra.a]\ntype = "ball"\nx = "3 m"\n',
     "robot.toml: pieces.extra.a.y: missing required key"),
])
def test_bad_pieces_values_are_refused(extra: str, message: str) -> None:
    assert message in errors(extra)


def test_check_exits_2_naming_file_and_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.toml"
    path.write_text(default_config_text() + '\n[pieces]\nlayout = "none"\n'
                    '[pieces.types.ball]\nradius = "7 kg"\n')
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}: pieces.types.ball.radius: '7 kg' is a mass, expected a length" in \
        result.stderr
    good = tmp_path / "good.toml"
    good.write_text(default_config_text() + '\n[pieces]\nlayout = "none"\n' + BALL_TYPE)
    result = CliRunner().invoke(main, ["check", str(good)])
    assert result.exit_code == 0, result.stderr
