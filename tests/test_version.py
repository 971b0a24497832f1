"""One version, named the same everywhere, on a distribution pip installs as frc-simserver.

The source of truth is simserver/__init__.py's ``__version__``; the wheel's metadata,
``simserver --version``, CHANGELOG.md's newest heading and the release tag follow it
(tools/version.py, which the release workflow runs on the tag)."""

from __future__ import annotations

import email
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import simserver

REPO = Path(__file__).resolve().parents[1]
DIST = simserver.DISTRIBUTION
_spec = importlib.util.spec_from_file_location("release_version", REPO / "tools" / "version.py")
assert _spec is not None and _spec.loader is not None
release = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release)


def test_the_installed_distribution_is_frc_simserver_at_the_source_version():
    assert release.version() == simserver.__version__
    assert importlib.metadata.version(DIST) == simserver.__version__
    # The unrelated project that owns the PyPI name `simserver` must not be what we are.
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("simserver")


def test_simserver_version_prints_it():
    out = subprocess.run([sys.executable, "-m", "simserver", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"simserver, version {simserver.__version__}"


def test_changelog_names_the_version_as_its_newest_heading():
    assert release.changelog_headings()[0][0] == simserver.__version__


def _repo_copy(tmp_path: Path, heading: str) -> Path:
    (tmp_path / "simserver").mkdir(parents=True)
    shutil.copy(REPO / "simserver" / "__init__.py", tmp_path / "simserver" / "__init__.py")
    (tmp_path / "CHANGELOG.md").write_text(f"# Changelog\n\n{heading}\n\n- a change\n\n"
                                           "## 0.0.9 (2026-01-01)\n")
    return tmp_path


def test_a_release_tag_must_match_the_version_and_a_dated_changelog_heading(tmp_path):
    v = simserver.__version__
    dated = _repo_copy(tmp_path / "dated", f"## {v} (2026-11-27)")
    assert release.tag_problems(f"v{v}", dated) == []
    (wrong,) = release.tag_problems("v9.9.9", dated)
    assert "v9.9.9" in wrong and f"v{v}" in wrong
    (unreleased,) = release.tag_problems(f"v{v}", _repo_copy(tmp_path / "un",
                                                             f"## {v} (unreleased)"))
    assert "unreleased" in unreleased
    (older,) = release.tag_problems(f"v{v}", _repo_copy(tmp_path / "old", "## 0.0.8"))
    assert "0.0.8" in older


@pytest.mark.slow
def test_the_wheel_is_frc_simserver_with_the_command_and_every_packaged_file(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(REPO),
                    "-w", str(tmp_path)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name == f"frc_simserver-{simserver.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"frc_simserver-{simserver.__version__}.dist-info"
        meta = email.message_from_bytes(z.read(f"{info}/METADATA"))
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert meta["Name"] == DIST and meta["Version"] == simserver.__version__
    assert "simserver = simserver.cli:main" in entry_points
    assert "[simserver.models]" in entry_points and "[robotpy_sim.2026]" in entry_points
    tracked = subprocess.run(["git", "ls-files", "simserver"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    missing = [f for f in tracked if f not in names]
    assert not missing, f"files of the package left out of the wheel: {missing}"
