"""NT peers that publish simserver's inputs, each in its own process, for tests and benchmarks
that SIGKILL or SIGSTOP them.

``python benchmarks/_ntpeer.py`` is a spawner: it imports ntcore once, then for each
line on its standard input forks a peer and prints the peer's pid. Forking from the spawner
(which has no NT instance, so no threads) makes a peer in milliseconds instead of the half
second a fresh interpreter takes, so a test can kill hundreds of them. A line reads::

    ROLE PORT PERIOD KEEP TOPIC=TYPE:VALUE [TOPIC=TYPE:VALUE ...]

ROLE ``client`` connects to 127.0.0.1:PORT; ``server`` hosts an NT server there (as a robot
program does). Every PERIOD seconds the peer sets each TOPIC (TYPE ``double`` or ``string``;
``double~``: alternating between VALUE and VALUE + 1e-6; ``string~``: between the two
comma-separated words of VALUE) to VALUE and flushes; KEEP
1 publishes with ``keepDuplicates`` (every set crosses the wire), 0 without (an unchanged
value is sent once).

:class:`Peers` drives the spawner from a test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import ntcore

FAST = ntcore.PubSubOptions(periodic=0.001)
RESEND = ntcore.PubSubOptions(periodic=0.001, keepDuplicates=True)


def _publish(inst: ntcore.NetworkTableInstance, spec: str, keep: bool):
    """A function that sets the topic of ``TOPIC=TYPE:VALUE`` to its value."""
    topic, _, rest = spec.partition("=")
    nt_type, _, text = rest.partition(":")
    base = nt_type.rstrip("~")
    pub = inst.getTopic(topic).genericPublish(base, RESEND if keep else FAST)
    if base == "string":
        words = text.split(",") if nt_type.endswith("~") else [text, text]
        strings = [0]

        def set_string() -> None:
            strings[0] += 1
            pub.setString(words[strings[0] % 2])
        return set_string
    values = [float(text), float(text) + (1e-6 if nt_type.endswith("~") else 0.0)]
    sets = [0]

    def set_double() -> None:
        sets[0] += 1
        pub.setDouble(values[sets[0] % 2])
    return set_double


def _peer(words: list[str]) -> None:
    """A peer's whole life (in the forked child): publish until killed."""
    role, port, period, keep, *specs = words
    inst = ntcore.NetworkTableInstance.create()
    if role == "server":
        persist = os.path.join(tempfile.mkdtemp(prefix="ntpeer-"), "nt.json")
        inst.startServer(persist, "127.0.0.1", 0, int(port))
    else:
        inst.startClient4(f"ntpeer-{os.getpid()}")
        inst.setServer("127.0.0.1", int(port))
    setters = [_publish(inst, spec, keep == "1") for spec in specs]
    while True:
        for set_value in setters:
            set_value()
        inst.flush()
        time.sleep(float(period))


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # peers are reaped by the kernel
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _peer(words)
            finally:
                os._exit(0)
        print(pid, flush=True)


@dataclass
class Peers:
    """A running spawner; :meth:`start` forks a peer, :meth:`kill`/:meth:`stop` signal it."""

    proc: subprocess.Popen[str] = field(init=False)
    pids: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def start(self, role: str, port: int, *values: str, period: float = 0.002,
              keep: bool = True) -> int:
        """Fork a peer publishing ``values`` (``TOPIC=TYPE:VALUE``); its pid."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{role} {port} {period} {int(keep)} {' '.join(values)}\n")
        self.proc.stdin.flush()
        pid = int(self.proc.stdout.readline())
        self.pids.append(pid)
        return pid

    def signal(self, pid: int, sig: int) -> None:
        """Send ``sig`` to peer ``pid`` (one this spawner made and has not killed)."""
        assert pid in self.pids
        os.kill(pid, sig)
        if sig == signal.SIGKILL:  # reaped by the kernel: its pid may be reused
            self.pids.remove(pid)

    def close(self) -> None:
        """SIGKILL every peer still there, then the spawner."""
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.pids.clear()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.kill()
        self.proc.wait(10)


def motors(value: float, names: tuple[str, ...] = ("left", "right"),
           wobble: bool = False) -> list[str]:
    """``TOPIC=double:VALUE`` for each drive motor topic (``double~`` with ``wobble``)."""
    kind = "double~" if wobble else "double"
    return [f"/simserver/motors/{n}={kind}:{value!r}" for n in names]


if __name__ == "__main__":
    main()
