"""Security defaults: a served NetworkTables instance listens on loopback unless told otherwise;
config files are data, never code; the container image runs as an unprivileged user."""

from __future__ import annotations

import ast
import socket
import sys
from pathlib import Path

import ntcore
import pytest

from simserver.config.loader import ConfigError, default_config_text, load_default, loads
from tests.ntutil import REPO, SimserverProcess, client, free_port, wait_for

# --- network: loopback by default ---------------------------------------------------------------


def listening_addresses(port: int) -> set[str]:
    """Local addresses (IPv4 dotted, IPv6 hex) of TCP sockets listening on ``port``, from
    /proc/net/tcp and /proc/net/tcp6 (Linux)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, port_hex = local.rsplit(":", 1)
            if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                if len(address) == 8:
                    found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
                else:
                    found.add(address)
    return found


@pytest.mark.network
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/tcp")
@pytest.mark.parametrize(("serve", "expected"), [("{port}", {"127.0.0.1"}),
                                                 ("0.0.0.0:{port}", {"0.0.0.0"})],
                         ids=["port-only-binds-loopback", "told-otherwise"])
def test_serve_binds_loopback_unless_a_host_is_given(tmp_path, serve, expected):
    port = free_port()
    proc = SimserverProcess("--serve", serve.format(port=port), log_dir=tmp_path)
    inst = client(port, "security-check")
    try:
        wait_for(inst.isConnected, 20, "simserver's NT server")
        assert listening_addresses(port) == expected
        assert proc.interrupt() == 0, proc.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        proc.close()


def test_the_lockstep_bridge_listens_on_loopback_by_default():
    assert load_default().bridge.bind == "127.0.0.1"


# --- configs are data ------------------------------------------------------------------------

PAYLOAD = "__import__('pathlib').Path({marker!r}).write_text('pwned')"


@pytest.mark.parametrize("template", [
    'mass = {payload}',  # bare Python: not TOML
    'mass = "{payload}"',  # Python in a quantity string: handed to pint, never to eval
    'mass = "60 lb"\n[robot.x]\nexec = "{payload}"',  # Python under an unknown key
    'mass = "{{{{ {payload} }}}}"',
    'mass = "$({payload})"',
])
def test_python_in_a_config_is_an_error_and_never_runs(tmp_path, template):
    marker = tmp_path / "ran"
    payload = PAYLOAD.format(marker=str(marker)).replace('"', '\\"')
    text = default_config_text().replace('mass = "60 lb"', template.format(payload=payload))
    with pytest.raises(ConfigError):
        loads(text)
    assert not marker.exists()


def test_config_and_unit_parsing_code_never_evaluates_text():
    """No eval/exec/compile/pickle/yaml in the modules that read configs and scenario files."""
    modules = [*sorted((REPO / "simserver" / "config").glob("*.py")),
               REPO / "simserver" / "units.py", REPO / "simserver" / "runs" / "scenario.py",
               REPO / "simserver" / "io" / "scripted.py"]
    banned_calls = {"eval", "exec", "compile", "__import__"}
    banned_modules = {"pickle", "marshal", "yaml", "shelve", "dill"}
    for path in modules:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in banned_calls, f"{path}:{node.lineno}"
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & banned_modules, path
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] not in banned_modules, path


# --- the container -----------------------------------------------------------------------------


def dockerfile_stages(path: Path, word: str) -> dict[str, str | None]:
    """The last value of instruction ``word`` (USER, ENTRYPOINT) in each stage of a
    Dockerfile (None: never set), following ``FROM <earlier stage>`` chains; the last stage
    under the key ``""``. For USER, None means root, the default."""
    values: dict[str, str | None] = {}
    current: str | None = None
    last = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition(" ")
        head = head.upper()
        if head == "FROM":
            parts = rest.split()
            base = parts[0]
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else f"<{base}>"
            current = values.get(base)  # an earlier stage: inherit its value
            last = name
            values[name] = current
        elif head == word:
            current = rest.split(":")[0].strip() if word == "USER" else rest.strip()
            values[last] = current
    values[""] = values.get(last)
    return values


def drops_privileges(script: str) -> bool:
    """Whether an entrypoint script runs simserver as root only through setpriv with no
    capabilities and no_new_privs: every `exec simserver` sits under a `id -u` != 0 test,
    and setpriv's exec has all three flags."""
    lines = [line.strip() for line in script.replace("\\\n", " ").splitlines()
             if line.strip() and not line.strip().startswith("#")]
    direct = [i for i, line in enumerate(lines) if line.startswith("exec simserver")]
    guarded = all(i > 0 and '"$(id -u)" != 0' in lines[i - 1] for i in direct)
    setpriv = [line for line in lines if line.startswith("exec setpriv ")]
    flags = ("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "-- simserver")
    return guarded and len(setpriv) == 1 and all(f in setpriv[0] for f in flags)


def test_the_container_images_run_simserver_as_an_unprivileged_user():
    dockerfile = REPO / "docker" / "Dockerfile"
    users = dockerfile_stages(dockerfile, "USER")
    assert users.get("robot") not in (None, "root", "0"), users
    entrypoints = dockerfile_stages(dockerfile, "ENTRYPOINT")
    # The server image starts as root only for docker/entrypoint.sh, which runs simserver as
    # the owner of /out without capabilities (checked in the running container by
    # docker/test.sh: Uid, CapEff 0, NoNewPrivs 1).
    for stage in ("", "runtime"):  # "": what a plain `docker build` makes
        if users.get(stage) in (None, "root", "0"):
            assert entrypoints.get(stage) == '["simserver-entrypoint"]', (stage, entrypoints)
    assert "COPY docker/entrypoint.sh /usr/local/bin/simserver-entrypoint" in \
        dockerfile.read_text()
    assert drops_privileges((REPO / "docker" / "entrypoint.sh").read_text())


@pytest.mark.parametrize("script, safe", [
    ("exec simserver \"$@\"\n", False),
    ('if [ "$(id -u)" != 0 ]; then\n  exec simserver "$@"\nfi\nexec simserver "$@"\n', False),
    ('exec setpriv --reuid=1 --regid=1 -- simserver "$@"\n', False),
    ('if [ "$(id -u)" != 0 ]; then\n  exec simserver "$@"\nfi\n'
     'exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \\\n'
     '  --inh-caps=-all --bounding-set=-all --no-new-privs -- simserver "$@"\n', True),
])
def test_the_entrypoint_check_tells_a_privilege_drop_from_none(script, safe):
    assert drops_privileges(script) is safe
