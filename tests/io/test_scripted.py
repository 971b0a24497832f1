"""Scripted CSV inputs: interpolation, holds, and error messages naming file, row and column.

Row numbers in messages are the file's line numbers (what an editor shows), comments and blank
lines included.
"""

from __future__ import annotations

from importlib import resources

import pytest

from simserver.io.scripted import ScriptError, load_script

MOTORS = ["left", "right"]
SOLENOIDS = ["shift"]


def write(tmp_path, text: str, name: str = "drive.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def script_error(tmp_path, text: str) -> tuple[str, str]:
    path = write(tmp_path, text)
    with pytest.raises(ScriptError) as exc:
        load_script(path, MOTORS, SOLENOIDS)
    return str(exc.value), str(path)


# --- values between and around rows -------------------------------------------------------------


def test_motor_duty_is_linearly_interpolated_between_rows(tmp_path):
    script = load_script(write(tmp_path, "time,left,right\n0,0,0\n1,0.5,-0.5\n3,1.0,0.5\n"),
                         MOTORS, SOLENOIDS)
    # 1e-12: one linear interpolation, rounding only.
    motors, _ = script.at(0.5)
    assert motors == pytest.approx({"left": 0.25, "right": -0.25}, abs=1e-12)
    motors, _ = script.at(2.0)
    assert motors == pytest.approx({"left": 0.75, "right": 0.0}, abs=1e-12)


def test_value_at_a_row_time_is_that_rows_value(tmp_path):
    script = load_script(write(tmp_path, "time,left\n0,0\n1,0.5\n3,1.0\n"), MOTORS, SOLENOIDS)
    assert script.at(1.0)[0] == {"left": 0.5}


def test_solenoid_holds_until_the_next_row(tmp_path):
    script = load_script(write(tmp_path, "time,left,shift\n0,0,0\n1,1,true\n2,0,off\n"),
                         MOTORS, SOLENOIDS)
    assert script.at(0.999)[1] == {"shift": False}
    assert script.at(1.0)[1] == {"shift": True}
    assert script.at(1.5)[1] == {"shift": True}
    assert script.at(2.0)[1] == {"shift": False}


@pytest.mark.parametrize(("cell", "state"), [("1", True), ("true", True), ("ON", True),
                                             ("yes", True), ("0", False), ("False", False),
                                             ("off", False), ("no", False)])
def test_solenoid_cells_accept_common_boolean_spellings(tmp_path, cell, state):
    script = load_script(write(tmp_path, f"time,shift\n0,{cell}\n"), MOTORS, SOLENOIDS)
    assert script.solenoids == {"shift": [state]}


def test_before_first_row_the_first_row_applies(tmp_path):
    script = load_script(write(tmp_path, "time,left,shift\n0.5,0.3,1\n1.5,0.9,0\n"),
                         MOTORS, SOLENOIDS)
    assert script.at(0.0) == ({"left": 0.3}, {"shift": True})


def test_after_last_row_the_last_row_applies(tmp_path):
    script = load_script(write(tmp_path, "time,left,shift\n0.5,0.3,1\n1.5,0.9,0\n"),
                         MOTORS, SOLENOIDS)
    assert script.at(100.0) == ({"left": 0.9}, {"shift": False})
    assert script.duration == 1.5


def test_header_may_name_time_t_and_comments_and_blank_lines_are_skipped(tmp_path):
    script = load_script(write(tmp_path, "# a comment\n\nt,left\n0,0.1\n# mid\n\n2,0.2\n"),
                         MOTORS, SOLENOIDS)
    assert list(script.times) == [0.0, 2.0]
    assert {k: list(v) for k, v in script.motors.items()} == {"left": [0.1, 0.2]}


def test_bundled_s_curve_loads_for_the_kitbot():
    path = resources.files("simserver").joinpath("data/s_curve.csv")
    with resources.as_file(path) as p:
        script = load_script(p, MOTORS, [])
    assert set(script.motors) == {"left", "right"}
    assert script.duration > 0


# --- errors: file, row, column ------------------------------------------------------------------


def test_non_numeric_cell_names_file_row_and_column(tmp_path):
    msg, path = script_error(tmp_path, "time,left,right\n0,0,0\n1,abc,0\n")
    assert msg == f"{path}: row 3, column 2 (left): expected a number, got 'abc'"


def test_out_of_range_duty_names_file_row_and_column(tmp_path):
    msg, path = script_error(tmp_path, "time,left,right\n0,0,0\n1,0,-1.5\n")
    assert msg == f"{path}: row 3, column 3 (right): duty cycle must be within -1..1, got -1.5"


def test_non_increasing_time_names_file_row_and_column(tmp_path):
    msg, path = script_error(tmp_path, "time,left\n0,0\n1,0\n1,0.5\n")
    assert msg == f"{path}: row 4, column 1 (time): times must increase, 1.0 follows 1.0"


def test_decreasing_time_is_rejected(tmp_path):
    msg, path = script_error(tmp_path, "time,left\n0,0\n2,0\n1,0.5\n")
    assert msg.startswith(f"{path}: row 4, column 1 (time): times must increase")


def test_unknown_column_suggests_the_closest_name(tmp_path):
    msg, path = script_error(tmp_path, "time,left,rigth\n0,0,0\n")
    assert msg == (f"{path}: row 1: column 'rigth' is not a motor or solenoid in the config; "
                   "did you mean 'right'?")


def test_unknown_column_without_close_match_lists_known_names(tmp_path):
    msg, _ = script_error(tmp_path, "time,zzz\n0,0\n")
    assert "column 'zzz'" in msg
    assert "(known: left, right, shift; joystick columns are joystick<n>/axis<k>" in msg


def test_joystick_columns_give_axes_interpolated_and_buttons_held(tmp_path):
    path = tmp_path / "sticks.csv"
    path.write_text("time,joystick0/axis1,joystick0/button2,left\n0,0,0,0\n1,-1,1,0.5\n")
    script = load_script(path, ["left", "right"], [])
    sticks = script.joysticks(0.5)
    # Axis 0 unnamed: 0; padded to an Xbox controller's 6 axes and 10 buttons.
    assert sticks["/simserver/ds/joystick0/axes"] == [0.0, -0.5, 0.0, 0.0, 0.0, 0.0]
    assert sticks["/simserver/ds/joystick0/buttons"] == [False] * 10  # held from t=0
    assert script.joysticks(1.0)["/simserver/ds/joystick0/buttons"] == [False, True] + [
        False] * 8
    assert script.at(0.5)[0] == {"left": 0.25}


def test_joystick_axis_out_of_range_names_row_and_column(tmp_path):
    msg, path = script_error(tmp_path, "time,joystick1/axis0\n0,1.5\n")
    assert msg == (f"{path}: row 2, column 2 (joystick1/axis0): an axis must be within -1..1, "
                   "got 1.5")


def test_wrong_column_count_names_file_and_row(tmp_path):
    msg, path = script_error(tmp_path, "time,left,right\n0,0,0\n1,0\n")
    assert msg == f"{path}: row 3: 2 values, expected 3"


def test_row_numbers_are_file_lines_after_comments_and_blank_lines(tmp_path):
    msg, path = script_error(tmp_path, "# demo\ntime,left\n0,0\n\n1,abc\n")
    assert msg == f"{path}: row 5, column 2 (left): expected a number, got 'abc'"


def test_header_row_number_is_its_file_line_after_a_comment(tmp_path):
    msg, path = script_error(tmp_path, "# demo\ntime,left,rigth\n0,0,0\n")
    assert msg.startswith(f"{path}: row 2: column 'rigth'")


def test_first_column_must_be_time(tmp_path):
    msg, path = script_error(tmp_path, "# drive\ntim,left\n0,0\n")
    assert msg == (f"{path}: not an inputs CSV: its first row (row 2) must be a header whose "
                   "first column is 'time' (seconds), such as 'time,left,right'")


def test_bad_solenoid_cell_names_file_row_and_column(tmp_path):
    msg, path = script_error(tmp_path, "time,left,shift\n0,0,maybe\n")
    assert msg == f"{path}: row 2, column 3 (shift): expected 0/1 or true/false, got 'maybe'"


def test_negative_time_is_rejected(tmp_path):
    msg, path = script_error(tmp_path, "time,left\n-1,0\n")
    assert msg == f"{path}: row 2, column 1 (time): time must be ≥ 0 s"


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf"])
def test_non_finite_cell_is_rejected(tmp_path, cell):
    msg, path = script_error(tmp_path, f"time,left\n0,{cell}\n")
    assert msg == f"{path}: row 2, column 2 (left): expected a finite number, got '{cell}'"


def test_duplicate_column_is_rejected(tmp_path):
    msg, path = script_error(tmp_path, "time,left,left\n0,0,0\n")
    assert msg == f"{path}: row 1: duplicate column names"


def test_header_without_data_rows_is_rejected(tmp_path):
    msg, path = script_error(tmp_path, "# only a header\ntime,left\n")
    assert msg == f"{path}: needs a header row and at least one data row"


def test_missing_file_names_it(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(ScriptError, match="file not found") as exc:
        load_script(missing, MOTORS, SOLENOIDS)
    assert str(exc.value).startswith(f"{missing}: ")
