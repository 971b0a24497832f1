"""Lock-step answers a period before it records and publishes it on NetworkTables, so the robot
program's next period runs while simserver does that work (issue 24: lock-step speed); with
cameras, the answer still waits for the frames to be published and names them ("await").

A real in-process Session (serving NT on a free port) in lock-step against a scripted bridge on
a real loopback socket; the Session's NT publishing step is wrapped to look, at that moment,
whether the bridge already holds the period's answer.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from simserver.config.loader import load
from simserver.config.model import Config
from simserver.contract import topics
from simserver.contract.snapshot import Snapshot
from simserver.io.nt import Endpoint
from simserver.io.stepwire import SPIN, VERSION, Link
from simserver.runs.session import RunOptions, Session
from tests.ntutil import REPO, free_port
from tests.reliability.test_link_abuse import run_in_thread

pytestmark = pytest.mark.network

PERIODS = 6
VISIONBOT = REPO / "tests" / "e2e" / "visionbot" / "simserver.toml"


class Bridge:
    """A bridge on a free port that runs ``PERIODS`` lock-step periods and keeps the answers."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.answers: list[dict] = []
        self.changed = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        link = Link(conn)
        try:
            link.receive(5.0)
            link.send({"hello": "bridge", "version": VERSION, "period": 0.02,
                       "mode": "lockstep"})
            for k in range(1, PERIODS + 50):
                link.send({"time": 0.02 * k, "values": {topics.motor("left"): 0.25}})
                answer = link.receive(10.0)
                with self.changed:
                    self.answers.append(answer)
                    self.changed.notify_all()
                if "bye" in answer:
                    return
        finally:
            link.close()

    def holds(self, count: int, timeout: float) -> bool:
        """Whether ``count`` answers have come (waiting up to ``timeout`` s for them)."""
        with self.changed:
            return self.changed.wait_for(lambda: len(self.answers) >= count, timeout)

    def close(self) -> None:
        self.server.close()
        self._thread.join(10)


class Watched(Session):
    """A Session that notes, when it publishes tick n on NT, whether the bridge holds the
    answer of period n already (waiting up to ``wait`` s for it)."""

    def __init__(self, cfg: Config, options: RunOptions, bridge: Bridge, wait: float):
        super().__init__(cfg, options)
        self.bridge, self.wait = bridge, wait
        self.seen: list[bool] = []
        self.spin: float | None = None  # the lock-step link's

    def _exchange(self, link: Link, *args: object, **kwargs: object) -> None:
        self.spin = link.spin
        super()._exchange(link, *args, **kwargs)  # type: ignore[arg-type]

    def _publish(self, snap: Snapshot) -> None:
        if self.ticks:  # the publish before the link is not a period's
            self.seen.append(self.bridge.holds(self.ticks, self.wait))
        super()._publish(snap)


@pytest.fixture
def bridge() -> Iterator[Bridge]:
    made = Bridge()
    yield made
    made.close()


def _session(config: Path, bridge: Bridge, wait: float) -> Watched:
    cfg = load(config)
    cfg = dataclasses.replace(cfg, bridge=dataclasses.replace(cfg.bridge, port=bridge.port,
                                                               timeout=10.0))
    options = RunOptions(fast=True, lockstep=True, duration=PERIODS * 0.02, wait=20.0,
                         endpoint=Endpoint("server", "127.0.0.1", free_port()))
    return Watched(cfg, options, bridge, wait)


def test_lockstep_answers_each_period_before_publishing_it(bridge):
    session = _session(REPO / "simserver" / "config" / "kitbot.toml", bridge, wait=5.0)
    run_in_thread(session)
    assert session.failure is None, session.failure
    assert len(session.seen) >= PERIODS - 1
    assert all(session.seen), session.seen
    assert all("await" not in a for a in bridge.answers)
    assert session.spin == SPIN  # simserver's end polls before it sleeps


def test_lockstep_with_cameras_answers_after_publishing_the_frames_it_names(bridge):
    session = _session(VISIONBOT, bridge, wait=0.05)
    run_in_thread(session)
    assert session.failure is None, session.failure
    assert len(session.seen) >= PERIODS - 1
    assert not any(session.seen), session.seen
    awaited = [a["await"] for a in bridge.answers if "await" in a]
    assert awaited, json.dumps(bridge.answers)[:500]
    assert all(isinstance(v, int) for beats in awaited for v in beats.values())
