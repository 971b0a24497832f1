"""Bad config files (issue 19, item 6): each ends `simserver check` and `simserver run` with
exit 2 and a message naming the file, in bounded time, instead of a traceback, endless
recursion, a blocked read or a read that eats memory. Real subprocesses: a hang is a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simserver.config.loader import ConfigError, default_config_text, load
from tests.ntutil import REPO

KITBOT = default_config_text()
TIMEOUT = 60  # s: each case takes well under a second when it is handled


def simserver(*args: str | Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``python -m simserver ARGS``; a hang fails the test (TimeoutExpired)."""
    return subprocess.run([sys.executable, "-m", "simserver", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def refused(path: Path, *says: str) -> None:
    """``check`` and ``run`` of ``path`` exit 2 with a message naming it and saying ``says``,
    without a traceback."""
    for args in (("check", path), ("run", path, "--fast", "--duration", "0.1")):
        result = simserver(*args)
        err = result.stderr
        assert result.returncode == 2, (args, err[-2000:])
        assert "Traceback" not in err, err[-2000:]
        assert f"{path}" in err and all(s in err for s in says), (says, err[-2000:])


def test_a_robots_entry_naming_its_own_file_is_refused_with_the_chain(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(KITBOT + '\n[robots.twin]\nconfig = "robot.toml"\n')
    refused(path, "robots.twin.config", f"{path} → {path}",
            "a robot's own config cannot list [robots]")


def test_robots_files_listing_each_other_are_refused_with_the_chain(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(KITBOT + '\n[robots.b]\nconfig = "b.toml"\n')
    b.write_text(KITBOT + '\n[robots.a]\nconfig = "./a.toml"\n')
    refused(a, f"{b}: robots.a.config", f"{a} → {b} → {tmp_path / './a.toml'}")


def test_a_robots_file_that_lists_robots_itself_is_refused(tmp_path):
    a, b, c = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    a.write_text(KITBOT + '\n[robots.b]\nconfig = "b.toml"\n')
    b.write_text(KITBOT + '\n[robots.c]\nconfig = "c.toml"\n')
    c.write_text(KITBOT)
    refused(a, f"{b}: robots: a robot listed in {a} [robots] cannot list robots itself")


@pytest.mark.parametrize(("body", "says"), [
    pytest.param("a = " + "[" * 50_000 + "]" * 50_000, "nested more than 32 deep",
                 id="arrays-50000-deep"),
    pytest.param("a = " + "{b = " * 50_000 + "1" + "}" * 50_000, "nested more than 32 deep",
                 id="inline-tables-50000-deep"),
    pytest.param("a" + ".b" * 50_000 + " = 1", "more than 32 dotted parts",
                 id="dotted-key-50000-parts"),
    pytest.param("[" + "a." * 50_000 + "b]", "more than 32 dotted parts",
                 id="table-header-50000-parts"),
])
def test_toml_nested_beyond_the_parsers_recursion_is_refused_before_parsing(tmp_path, body,
                                                                             says):
    path = tmp_path / "deep.toml"
    path.write_text(body + "\n")
    refused(path, "not usable TOML: line 1: ", says)


def test_brackets_and_dots_inside_strings_and_comments_do_not_count(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(KITBOT.replace("[gyro]", '# ' + "[" * 100 + "\n[gyro]")
                    + '\n[solenoids."a.b.c"]\n[solenoids.x]\n'
                    + 'initial = false # ' + "." * 100 + '\n')
    result = simserver("check", path)
    assert "not usable TOML" not in result.stderr
    text = 'a = "' + "[" * 100 + '"\nb = \'\'\'' + "{" * 100 + "\n" + "." * 100 + "'''\n"
    path.write_text(text + KITBOT.split("\n", 2)[2].replace("[sim]", "[sim]", 1))
    assert "not usable TOML" not in simserver("check", path).stderr


def test_an_integer_of_5000_digits_is_refused(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(KITBOT.replace("seed = 0", "seed = " + "1" * 5000))
    refused(path, "not valid TOML", "4300 digits")


def test_an_integer_beyond_64_bits_is_refused_where_a_number_is_expected(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(KITBOT.replace("gearing = 10.71", "gearing = 1" + "0" * 400))
    refused(path, "drivetrain.gearing: integer out of range: TOML integers are 64-bit")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="Windows has no FIFOs")
def test_a_fifo_as_the_config_is_refused_without_blocking(tmp_path):
    path = tmp_path / "robot.toml"
    os.mkfifo(path)
    refused(path, "is a FIFO (named pipe), not a regular file")


@pytest.mark.skipif(os.name != "posix", reason="Windows has no /dev/zero")
def test_dev_zero_as_the_config_is_refused_without_reading_it():
    refused(Path("/dev/zero"), "is a character device, not a regular file")


def test_a_directory_as_the_config_is_refused(tmp_path):
    for args in (("check", tmp_path), ("run", tmp_path, "--fast", "--duration", "0.1")):
        result = simserver(*args)
        assert result.returncode == 2 and "is a directory" in result.stderr, result.stderr
    with pytest.raises(ConfigError, match="is a directory, not a regular file"):
        load(tmp_path)  # the loader itself, as the bridge and scenario files use it


def test_a_config_larger_than_1_mib_is_refused_unread(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(KITBOT + "#" * (1 << 20) + "\n")
    refused(path, "a simserver config (TOML) may be 1 MiB at most")


def test_a_config_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_bytes(KITBOT.encode() + b"\n# \xff\xfe\n")
    refused(path, "not UTF-8 text")
