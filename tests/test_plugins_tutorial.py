"""docs/plugins.md, executed: the tutorial's plugin is extracted and used the way a user would.

Every code block preceded by ``<!-- file: PATH -->`` is written to PATH in a scratch project
(blocks with the same PATH are concatenated in document order). The plugin is made discoverable
without pip: a ``<name>-<version>.dist-info`` directory (METADATA + entry_points.txt, generated
from the extracted pyproject.toml) next to the package, in a directory on PYTHONPATH, is exactly
what importlib.metadata finds for an installed distribution.

Every block preceded by ``<!-- output: simserver ARGS -->`` (or ``<!-- output (ENV): ... -->``)
must be what that command prints: each line shown appears in the real output.

``simserver.config.registry.registry()`` is cached per process, so every scenario runs in its own
subprocess with its own PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import ntcore
import pytest

from simserver.config.loader import default_config_text, tomllib
from tests.ntutil import FAST, INTERRUPT, INTERRUPTIBLE, client, free_port, wait_for

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "plugins.md"
S_CURVE = REPO / "simserver" / "data" / "s_curve.csv"
TEXT = DOC.read_text(encoding="utf-8")

_BLOCK = r"\n```[\w-]*\n(?P<body>.*?)^```[ \t]*$"
FILE_RE = re.compile(r"^<!-- file: (?P<path>\S+) -->" + _BLOCK, re.M | re.S)
OUTPUT_RE = re.compile(
    r"^<!-- output(?: \((?P<env>[^)]+)\))?: simserver (?P<args>[^>]+?) -->" + _BLOCK, re.M | re.S)

REQUIRED_FILES = ("pyproject.toml", "simserver_turret/__init__.py", "tests/test_turret.py",
                  "simserver.toml")
BROKEN_ENV = "turret_sdk missing"
TIMEOUT = 60


def extract(text: str) -> dict[str, str]:
    """Labelled file blocks by path, parts of one file joined in document order."""
    parts: dict[str, list[str]] = {}
    for m in FILE_RE.finditer(text):
        parts.setdefault(m["path"], []).append(m["body"])
    return {path: "\n\n".join(bodies) for path, bodies in parts.items()}


FILES = extract(TEXT)
OUTPUTS = [(m["env"] or "plugin", m["args"].split(), m["body"]) for m in OUTPUT_RE.finditer(TEXT)]


def _norm(line: str) -> str:
    return " ".join(line.split())


def dist_info(site: Path, pyproject: str) -> Path:
    """Register the project of ``pyproject`` as installed in ``site``, as pip would."""
    project = tomllib.loads(pyproject)["project"]
    name, version = project["name"], project["version"]
    info = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, eps in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{ep} = {target}" for ep, target in eps.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    return info


def make_plugin(site: Path, name: str, module: str, source: str, entry_points: dict[str, str],
                ) -> None:
    """A one-module distribution ``name`` installed in ``site``."""
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(source)
    eps = "\n".join(f'{k} = "{v}"' for k, v in entry_points.items())
    dist_info(site, f'[project]\nname = "{name}"\nversion = "0.1.0"\n'
                    f'[project.entry-points."simserver.models"]\n{eps}\n')


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


@dataclass
class Env:
    """Where the plugin is installed (``site``, put on PYTHONPATH) and where commands run."""

    site: Path
    cwd: Path

    def environ(self) -> dict[str, str]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("PYTEST_ADDOPTS", None)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(self.site), os.environ.get("PYTHONPATH", "")) if p)
        return env

    def python(self, *args: str) -> Result:
        proc = subprocess.run([sys.executable, *args], cwd=self.cwd, env=self.environ(),
                              capture_output=True, text=True, timeout=TIMEOUT)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def simserver(self, *args: str) -> Result:
        return self.python("-m", "simserver", *args)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")


def _config_using(type_name: str) -> str:
    text = FILES["simserver.toml"]
    assert 'type = "turret"' in text
    return text.replace('type = "turret"', f'type = "{type_name}"')


# Plugins that cannot be registered, each for a different reason:
# type name -> (distribution, module, source, entry points, reason reported).
_SCHEMALESS = """
from dataclasses import dataclass

from simserver.config import fields
from simserver.models.api import ModelType


@dataclass(frozen=True)
class Config:
    gain: float = {gain}


{attr} = ModelType(name={name!r}, config=Config, doc="d", create=lambda name, config, cfg: None)
"""
BAD_PLUGINS = {
    "notatype": ("simserver-notatype", "simserver_notatype",
                 "def create(name, config, cfg):\n    return None\n",
                 {"notatype": "simserver_notatype:create"},
                 "entry point must be a simserver.models.api.ModelType, got function"),
    "noschema": ("simserver-noschema", "simserver_noschema",
                 _SCHEMALESS.format(gain="1.0", attr="NOSCHEMA", name="noschema"),
                 {"noschema": "simserver_noschema:NOSCHEMA"},
                 "noschema: config field 'gain' has no schema; declare it with "
                 "simserver.config.fields"),
    "misnamed": ("simserver-misnamed", "simserver_misnamed",
                 _SCHEMALESS.format(gain='fields.number(1.0, "Gain.")', attr="MISNAMED",
                                    name="turret2"),
                 {"misnamed": "simserver_misnamed:MISNAMED"},
                 "entry point 'misnamed' provides a type named 'turret2'; use the same name"),
    "badoutput": ("simserver-badoutput", "simserver_badoutput",
                  "from simserver.models.api import OutputSpec\n\n"
                  "SPEC = OutputSpec('angle', 'float', 'deg', 'Angle.')\n",
                  {"badoutput": "simserver_badoutput:SPEC"},
                  "import failed: ValueError: OutputSpec.type must be one of"),
}


@pytest.fixture(scope="module")
def envs(tmp_path_factory) -> dict[str, Env]:
    """The tutorial project installed as-is ("plugin"), with an import that fails plus other
    broken plugins (BROKEN_ENV), and next to a second plugin claiming its type name ("fork")."""
    root = tmp_path_factory.mktemp("plugin-tutorial")
    project = root / "simserver-turret"
    _write(project, FILES)
    dist_info(project, FILES["pyproject.toml"])
    configs = {p: b for p, b in FILES.items() if p.endswith((".toml", ".csv"))
               and p != "pyproject.toml"}
    configs["kitbot.toml"] = default_config_text()
    configs |= {f"uses-{t}.toml": _config_using(t) for t in BAD_PLUGINS}
    _write(project, configs)

    broken_site = root / "site-broken"
    plugin = FILES["simserver_turret/__init__.py"]
    future = "from __future__ import annotations\n"
    assert future in plugin
    _write(broken_site, {"simserver_turret/__init__.py":
                         plugin.replace(future, future + "\nimport turret_sdk  # noqa: F401\n")})
    dist_info(broken_site, FILES["pyproject.toml"])
    for dist, module, source, eps, _ in BAD_PLUGINS.values():
        make_plugin(broken_site, dist, module, source, eps)
    broken_run = root / "run-broken"
    _write(broken_run, configs)

    fork_site = root / "site-fork"
    shutil.copytree(project / "simserver_turret", fork_site / "simserver_turret")
    dist_info(fork_site, FILES["pyproject.toml"])
    make_plugin(fork_site, "simserver-turret-fork", "turret_fork",
                "from simserver_turret import TURRET\n", {"turret": "turret_fork:TURRET"})
    fork_run = root / "run-fork"
    _write(fork_run, configs)
    return {"plugin": Env(project, project), BROKEN_ENV: Env(broken_site, broken_run),
            "fork": Env(fork_site, fork_run)}


_cache: dict[tuple[str, tuple[str, ...]], Result] = {}


def sim(envs: dict[str, Env], env: str, *args: str) -> Result:
    """`simserver ARGS` in ``env`` (each distinct command runs once per session)."""
    key = (str(envs[env].site), args)
    if key not in _cache:
        _cache[key] = envs[env].simserver(*args)
    return _cache[key]


# --- the document itself ----------------------------------------------------------------------


def test_every_label_is_attached_to_a_code_block():
    labels = re.findall(r"<!-- (?:file|output)\b", TEXT)
    assert len(labels) == len(FILE_RE.findall(TEXT)) + len(OUTPUT_RE.findall(TEXT)), (
        "a `<!-- file: ... -->` or `<!-- output: ... -->` comment is not directly followed by a "
        "fenced block (or an output label does not run `simserver`)")
    for path in REQUIRED_FILES:
        assert path in FILES, f"docs/plugins.md has no block labelled {path}"


def test_the_pyproject_registers_the_turret_and_ships_the_package():
    project = tomllib.loads(FILES["pyproject.toml"])
    eps = project["project"]["entry-points"]["simserver.models"]
    assert eps == {"turret": "simserver_turret:TURRET"}
    for package in project["tool"]["setuptools"]["packages"]:
        assert f"{package.replace('.', '/')}/__init__.py" in FILES


def test_the_plugin_lints_clean_alone_and_inside_the_repository(tmp_path):
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    alone = tmp_path / "simserver-turret"
    _write(alone, FILES)
    # As `make lint` sees it in plugins/turret/ (the repository's pyproject.toml above it).
    repo = tmp_path / "repo"
    _write(repo / "plugins" / "turret", FILES)
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    for cwd, target in ((alone, "."), (repo, "plugins")):
        proc = subprocess.run([ruff, "check", "--no-cache", target], cwd=cwd,
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, f"in {cwd}:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize(("env", "args", "shown"), OUTPUTS,
                         ids=[f"{e}: simserver {' '.join(a)}" for e, a, _ in OUTPUTS])
def test_shown_output_is_what_the_command_prints(envs, env, args, shown):
    result = sim(envs, env, *args)
    printed = {_norm(line) for line in result.text.splitlines()}
    missing = [line for line in shown.splitlines()
               if line.strip() and line.strip() != "..." and _norm(line) not in printed]
    assert not missing, f"not printed by `simserver {' '.join(args)}`:\n" + "\n".join(
        missing) + f"\n--- it printed:\n{result.text}"


# --- (a)-(c): the plugin works as the tutorial says --------------------------------------------


def test_check_accepts_the_tutorial_config(envs):
    result = sim(envs, "plugin", "check", "simserver.toml")
    assert result.code == 0, result.text
    assert "simserver.toml: OK" in result.out and "turret (turret)" in result.out


def test_check_rejects_the_wrong_configs_with_exit_2(envs):
    result = sim(envs, "plugin", "check", "wrong.toml", "wrong-limits.toml")
    assert result.code == 2, result.text
    assert "OK" not in result.out


def test_models_lists_the_turret_with_its_keys_units_and_topics(envs):
    result = sim(envs, "plugin", "models")
    assert result.code == 0, result.text
    section = result.out.split("turret  (mechanism", 1)
    assert len(section) == 2, result.out
    lines = {_norm(line) for line in section[1].split("\n\n", 1)[0].splitlines()}
    assert "from simserver-turret)" in section[1].splitlines()[0]
    for key, unit, default in (("max_speed", "rad/s", '"180 deg/s"'),
                               ("min_angle", "rad", '"-90 deg"'),
                               ("max_angle", "rad", '"90 deg"'),
                               ("start_angle", "rad", '"0 deg"')):
        assert any(line.startswith(f"{key} ") and f"SI: {unit})" in line and
                   line.endswith(f"default {default}") for line in lines), (key, lines)
    assert "motor string; default required" in lines
    assert "input: `motor` names a motor" in lines
    assert any(line.startswith("output: /simserver/mechanisms/<name>/angle (double, deg)")
               for line in lines)
    assert any(line.startswith("output: /simserver/mechanisms/<name>/at_limit (boolean,")
               for line in lines)
    assert "could not be loaded" not in result.out


def test_the_tutorials_own_tests_pass(envs):
    n = len(re.findall(r"^def test_", FILES["tests/test_turret.py"], re.M))
    result = envs["plugin"].python("-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "tests/test_turret.py")
    assert result.code == 0, result.text
    assert f"{n} passed" in result.out, result.text


def test_run_with_the_tutorial_inputs(envs):
    result = sim(envs, "plugin", "run", "simserver.toml", "--inputs", "turret.csv", "--fast",
                 "--summary")
    assert result.code == 0, result.text
    assert re.search(r"simulated time\s+3\.00 s", result.out), result.out


@pytest.mark.network
def test_served_run_publishes_the_turret_topics(envs):
    env = envs["plugin"]
    # Like turret.csv, with a longer stay on the +90 deg limit (0.75 s to 3.05 s of simulated,
    # here real, time) so a slow client connection cannot miss it.
    (env.cwd / "served.csv").write_text("time,turret\n0,0\n0.5,1\n3,1\n3.1,-1\n10,-1\n")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "simserver", "run", "simserver.toml", "--inputs", "served.csv",
         "--serve", f"127.0.0.1:{port}", "--duration", "30"],
        cwd=env.cwd, env=env.environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, **INTERRUPTIBLE)
    inst = client(port)
    try:
        angle = inst.getDoubleTopic("/simserver/mechanisms/turret/angle").subscribe(-999.0, FAST)
        limit = inst.getBooleanTopic("/simserver/mechanisms/turret/at_limit").subscribe(False,
                                                                                       FAST)
        wait_for(inst.isConnected, 20, "simserver's NT server to accept a client")
        wait_for(limit.get, 10, "the turret to reach its +90 deg limit")
        assert angle.get() == pytest.approx(90.0)
        wait_for(lambda: not limit.get(), 10, "the turret to leave its limit")
        assert angle.get() < 90.0
        wait_for(limit.get, 10, "the turret to reach its -90 deg limit")
        assert angle.get() == pytest.approx(-90.0)
        assert angle.getTopic().getTypeString() == "double"
        assert limit.getTopic().getTypeString() == "boolean"
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        if proc.poll() is None:
            proc.send_signal(INTERRUPT)  # Ctrl-C: a clean stop
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 0, out + err


# --- (d) failure modes, through the real entry-point path ------------------------------------


def test_a_plugin_that_fails_to_import_is_an_error_only_for_configs_that_use_it(envs):
    result = sim(envs, BROKEN_ENV, "check", "simserver.toml")
    assert result.code == 2, result.text
    assert "mechanisms.turret.type: model type 'turret' comes from the plugin " \
           "'simserver-turret', which could not be loaded" in result.err
    assert "ModuleNotFoundError: No module named 'turret_sdk'" in result.err
    other = sim(envs, BROKEN_ENV, "check", "kitbot.toml")
    assert other.code == 0, other.text
    assert "kitbot.toml: OK" in other.out


def test_run_refuses_a_config_whose_plugin_failed_and_runs_one_that_does_not_use_it(envs):
    result = sim(envs, BROKEN_ENV, "run", "simserver.toml", "--inputs", "turret.csv", "--fast")
    assert result.code == 2, result.text
    assert "No module named 'turret_sdk'" in result.err and "nothing was started" in result.err
    # scripted inputs: a served run with no robot program driving it would fail (issue 17)
    ok = sim(envs, BROKEN_ENV, "run", "kitbot.toml", "--fast", "--duration", "0.5", "--serve",
             f"127.0.0.1:{free_port()}", "--inputs", str(S_CURVE))
    assert ok.code == 0, ok.text


def test_models_reports_every_plugin_that_could_not_be_registered(envs):
    result = sim(envs, BROKEN_ENV, "models")
    assert result.code == 0, result.text
    assert "Plugins that could not be loaded" in result.out
    lines = [_norm(line) for line in result.out.splitlines()]
    for ep, (dist, _, _, _, reason) in BAD_PLUGINS.items():
        assert any(line.startswith(f"{ep} (from {dist}): ") and reason in line
                   for line in lines), (ep, result.out)
    assert any(line.startswith("turret (from simserver-turret): import failed:") for line in lines)
    assert "differential  (drivetrain" in result.out  # the built-in types are unaffected


@pytest.mark.parametrize("type_name", sorted(BAD_PLUGINS))
def test_check_names_the_plugin_and_the_reason_for_a_type_that_failed(envs, type_name):
    dist, _, _, _, reason = BAD_PLUGINS[type_name]
    result = sim(envs, BROKEN_ENV, "check", f"uses-{type_name}.toml")
    assert result.code == 2, result.text
    assert (f"mechanisms.turret.type: model type '{type_name}' comes from the plugin '{dist}', "
            f"which could not be loaded: ") in result.err
    assert reason in result.err


def test_validate_type_reports_a_config_field_without_schema(envs):
    result = envs[BROKEN_ENV].python(
        "-c", "import simserver_noschema as m\n"
              "from simserver.config.registry import validate_type\n"
              "print(validate_type(m.NOSCHEMA))\n")
    assert result.code == 0, result.text
    assert result.out.strip().startswith(BAD_PLUGINS["noschema"][4])


def test_a_second_plugin_claiming_the_same_type_name_is_reported_and_the_first_kept(envs):
    result = sim(envs, "fork", "models")
    assert result.code == 0, result.text
    assert "turret  (mechanism, [mechanisms.<name>], from simserver-turret)" in result.out
    assert "turret (from simserver-turret-fork): mechanism type 'turret' is already provided " \
           "by simserver-turret" in _norm(result.out)
    check = sim(envs, "fork", "check", "simserver.toml")
    assert check.code == 0, check.text
