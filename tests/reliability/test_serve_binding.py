"""`simserver run --serve HOST:PORT` serves exactly there, or stops before anything starts.

ntcore's server listens on a numeric IPv4 address only: given `localhost` it listened on
0.0.0.0 at a random port while simserver logged "serving NT4 on localhost:PORT", and on a port
in use it served nothing, silently."""

from __future__ import annotations

import socket
import subprocess
import sys

import ntcore
import pytest

from tests.ntutil import REPO, free_port, wait_for

pytestmark = pytest.mark.network


def serve(address: str, duration: str = "1") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "simserver", "run", "--serve", address, "--duration", duration],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_on_a_host_name_listens_on_its_address_at_that_port():
    port = free_port()
    proc = serve(f"localhost:{port}", duration="20")
    inst = ntcore.NetworkTableInstance.create()
    try:
        inst.startClient4("probe")
        inst.setServer("127.0.0.1", port)
        wait_for(inst.isConnected, 10, f"a client to connect to 127.0.0.1:{port}")
        announced = ntcore.MultiSubscriber(inst, ["/simserver/"])
        wait_for(inst.getTopic("/simserver/pose").exists, 5, "simserver's topics")
        announced.close()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert f"serving NT4 on 127.0.0.1:{port}" in err, err


@pytest.mark.parametrize("address", ["::1:{port}", "[::1]:{port}"])
def test_serve_on_ipv6_is_refused_with_exit_2(address):
    proc = serve(address.format(port=free_port()))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2, err
    assert "IPv4 only" in err and "127.0.0.1" in err, err


def test_serve_on_a_name_that_does_not_resolve_is_refused_with_exit_2():
    proc = serve(f"nosuchhost.invalid:{free_port()}")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2, err
    assert "cannot resolve 'nosuchhost.invalid'" in err, err


@pytest.mark.parametrize("bound", ["127.0.0.1", "0.0.0.0"])
def test_serve_on_a_port_in_use_is_refused_naming_the_port(bound):
    with socket.socket() as other:
        other.bind((bound, 0))
        other.listen()
        port = other.getsockname()[1]
        proc = serve(str(port))
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2, err
    assert f"port {port} on 127.0.0.1 is not free" in err, err
    assert "simulating" not in err  # nothing was started
