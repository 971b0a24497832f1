"""tools/doc_commands.py finds the commands docs/ci.md gives, which `make docker-test` runs as
written (docker/test.sh)."""

from __future__ import annotations

import subprocess
import sys

from tests.ntutil import REPO

TOOL = REPO / "tools" / "doc_commands.py"


def _extract(page: str, *names: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), page, *names], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_finds_the_image_and_compose_commands_of_docs_ci_md():
    proc = _extract("docs/ci.md", "The image", "Compose")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "docker build -t simserver -f docker/Dockerfile .",
        "docker run --rm simserver --help",
        "mkdir -p out",
        'docker run --rm -v "$PWD/simserver/data:/data:ro" -v "$PWD/out:/out" simserver '
        "run --inputs /data/s_curve.csv --fast --duration 5 --json /out/scripted.json",
        "docker compose -f docker/compose.yaml up --build --exit-code-from simserver",
    ]


def test_the_podman_section_keeps_the_healthcheck_and_a_working_podman_compose():
    """docker/test.sh stands podman in for docker the way this section says."""
    proc = _extract("docs/ci.md", "Podman")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "export BUILDAH_FORMAT=docker" in lines
    assert any('"podman-compose>=1.6"' in line for line in lines), lines
    test_sh = (REPO / "docker" / "test.sh").read_text()
    assert "BUILDAH_FORMAT=docker" in test_sh and "podman-compose==1.6" in test_sh


def test_joins_continuations_and_skips_comments_other_languages_and_sections(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n```\nnot in a section\n```\n"
        "## One\n\ntext\n```sh\n# a comment\n\nfirst --a \\\n  --b\n```\n"
        "```toml\nkey = 1\n```\n### Sub\n```bash\nsecond\n```\n"
        "## Two\n```\nthird\n```\n")
    proc = _extract(str(page), "One")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["first --a --b", "second"]
    both = _extract(str(page), "Two", "One")
    assert both.stdout.splitlines() == ["third", "first --a --b", "second"]


def test_a_missing_section_or_page_is_an_error_naming_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("## One\nno commands\n")
    proc = _extract(str(page), "One")
    assert proc.returncode == 2 and "'One'" in proc.stderr and proc.stdout == ""
    proc = _extract(str(tmp_path / "absent.md"), "One")
    assert proc.returncode == 2 and "absent.md" in proc.stderr
