"""simserver's version, from its one source of truth (``__version__`` in simserver/__init__.py),
and the release checks that keep the other places that name it in agreement.

Usage (from the repository root; no install needed)::

    python tools/version.py                        # print the version
    python tools/version.py --check-tag v0.1.0     # exit 1 unless the tag, __version__ and a
                                                   # "## 0.1.0" heading in CHANGELOG.md agree

The release workflow (.github/workflows/release.yml) runs the second form on the pushed tag;
the wheel (pyproject.toml reads the same attribute), ``simserver --version`` and the images'
tag and label follow from it.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def version(repo: Path = REPO) -> str:
    """``__version__`` of simserver/__init__.py, read without importing the package."""
    tree = ast.parse((repo / "simserver" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "__version__"
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    raise SystemExit("simserver/__init__.py has no __version__ = \"X.Y.Z\"")


def changelog_headings(repo: Path = REPO) -> list[tuple[str, str]]:
    """(version, the rest of the line) of CHANGELOG.md's "## X.Y.Z ..." headings, newest
    first."""
    text = (repo / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## (\d+\.\d+\.\d+\S*)(.*)$", text, re.M)


def tag_problems(tag: str, repo: Path = REPO) -> list[str]:
    """Why ``tag`` cannot be released as it stands ([] when it can)."""
    v = version(repo)
    problems = []
    if tag != f"v{v}":
        problems.append(f"tag {tag!r} is not v{v} (simserver/__init__.py's __version__)")
    headings = changelog_headings(repo)
    if not headings or headings[0][0] != v:
        newest = headings[0][0] if headings else "none"
        problems.append(f"CHANGELOG.md's newest heading is {newest}, not ## {v}")
    elif "unreleased" in headings[0][1].lower():
        problems.append(f"CHANGELOG.md still calls {v} unreleased: give it the release date")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-tag", metavar="TAG",
                        help="exit 1 unless TAG, __version__ and CHANGELOG.md agree")
    args = parser.parse_args(argv)
    if args.check_tag is not None:
        problems = tag_problems(args.check_tag)
        for p in problems:
            print(f"version: {p}", file=sys.stderr)
        if problems:
            return 1
    print(version())
    return 0


if __name__ == "__main__":
    sys.exit(main())
