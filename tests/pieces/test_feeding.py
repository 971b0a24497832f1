"""Human-player feeding: a station's staged pieces come onto the field on the [pieces.feeding]
schedule or when asked, from the station's point with its direction and speed, and no more
than the stock; a reset stages them again; bad feeding config is refused."""

from __future__ import annotations

import time
from pathlib import Path

import ntcore
import numpy as np
import pytest
from wpimath.geometry import Pose3d

from simserver.config.issues import ConfigError
from simserver.config.loader import default_config_text, loads
from simserver.contract import topics
from simserver.field.gamepieces import stations
from simserver.models.pieces.types import FLIGHT, GONE, LOOSE
from simserver.world import World
from simserver.world.pieces import FieldPieces, field_pieces
from tests.ntutil import FAST, SimserverProcess, client, free_port, wait_for

OUTPOST = next(st for st in stations("2026") if st.name == "blue_outpost")


def fed_world(feeding: str, stock: int = 3) -> tuple[World, FieldPieces]:
    cfg = loads(default_config_text() + f'\n[pieces]\nlayout = "none"\nstock = {stock}\n'
                + feeding)
    world = World(cfg)
    pieces = field_pieces(cfg, {"": world})
    assert pieces is not None and pieces.feeder is not None
    return world, pieces


def until(world: World, t: float) -> None:
    while world.time < t - 1e-9:
        world.step(0.02)


def test_schedule_feeds_from_the_station_until_the_stock_runs_out() -> None:
    world, pieces = fed_world('[pieces.feeding.hp]\nstation = "blue_outpost"\nat = "1 s"\n'
                              'count = 5\ninterval = "0.5 s"\n')
    field, feeder = pieces.field, pieces.feeder
    assert feeder is not None
    staged = np.flatnonzero(field.state == GONE)
    assert len(staged) == 6  # both outposts' stock of 3
    until(world, 0.98)
    assert feeder.fed["blue_outpost"] == 0
    until(world, 1.0)
    assert feeder.fed["blue_outpost"] == 1 and feeder.left("blue_outpost") == 2
    piece = int(np.flatnonzero(field.state != GONE)[0])
    # It left the station's point along the station's direction at its speed.
    assert field.state[piece] in (FLIGHT, LOOSE)
    assert field.pos[piece, 0] > OUTPOST.x and abs(field.pos[piece, 1] - OUTPOST.y) < 1e-9
    until(world, 3.5)
    assert feeder.fed["blue_outpost"] == 3 and feeder.left("blue_outpost") == 0
    until(world, 6.0)
    out = np.flatnonzero(field.state != GONE)
    assert len(out) == 3 and np.all(field.state[out] == LOOSE)
    length, width = world.field_size
    r = field.radius[out]
    assert np.all((field.pos[out, 0] >= r) & (field.pos[out, 0] <= length - r))
    assert np.all((field.pos[out, 1] >= r) & (field.pos[out, 1] <= width - r))
    world.reset()
    assert feeder.left("blue_outpost") == 3 and np.all(field.state == GONE)


def test_feed_on_request() -> None:
    world, pieces = fed_world("", stock=1)
    feeder = pieces.feeder
    assert feeder is not None
    assert not feeder.feed("Nowhere")
    assert feeder.feed("red_outpost")
    assert not feeder.feed("red_outpost")
    world.step(0.02)
    snap = world.snapshot().pieces
    assert snap is not None and int((snap.state != GONE).sum()) == 1


@pytest.mark.parametrize(("text", "key", "words"), [
    ('[pieces.feeding.hp]\nstation = "blue_outpst"\n', "pieces.feeding.hp.station",
     "did you mean 'blue_outpost'"),
    ('[pieces.feeding.hp]\nstation = "blue_outpost"\ncount = 0\n', "pieces.feeding.hp.count",
     "1 ≤ value ≤ 200"),
])
def test_bad_feeding_is_refused(text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        loads(default_config_text() + '\n[pieces]\n' + text)
    assert any(i.path == key and words in i.message for i in err.value.issues), \
        err.value.issues


def test_a_station_without_stock_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        loads(default_config_text().replace('season = "2026"', 'season = "2024"')
              + '\n[pieces]\n[pieces.feeding.hp]\nstation = "blue_source"\n')
    assert any("no pieces staged" in i.message for i in err.value.issues)


@pytest.mark.network
def test_feeding_on_request_over_networktables(tmp_path: Path) -> None:
    """A dashboard publishes station names on /simserver/pieces/feed: each puts one staged
    FUEL on the field (seen on /simserver/pieces/floor/fuel); an unknown station is logged
    and changes nothing."""
    config = tmp_path / "fed.toml"
    config.write_text(default_config_text() + '\n[pieces]\nlayout = "none"\nstock = 2\n')
    port = free_port()
    proc = SimserverProcess(str(config), "--serve", f"127.0.0.1:{port}", log_dir=tmp_path)
    inst = client(port)
    try:
        feed = inst.getStringTopic(topics.PIECE_FEED).publish(
            ntcore.PubSubOptions(keepDuplicates=True, periodic=0.005))
        on_floor = inst.getStructArrayTopic(topics.pieces_in("floor", "fuel"),
                                            Pose3d).subscribe([], FAST)
        flying = inst.getStructArrayTopic(topics.pieces_in("flight", "fuel"),
                                          Pose3d).subscribe([], FAST)
        wait_for(lambda: inst.getTopic(topics.PIECE_FEED).exists() and proc.alive(), 15,
                 "simserver to start")

        def out() -> int:
            return len(on_floor.get()) + len(flying.get())

        def ignored() -> bool:  # until simserver hears the feed topic: an unknown station
            feed.set("nowhere")
            inst.flush()
            time.sleep(0.05)
            return "'nowhere' ignored: no such station" in proc.stderr()

        wait_for(ignored, 15, "simserver to hear the feed topic")
        assert out() == 0
        for _ in range(2):
            feed.set("blue_outpost")
            inst.flush()
            time.sleep(0.3)
        wait_for(lambda: len(on_floor.get()) == 2, 15, "two FUEL to come to rest")
        assert out() == 2
        poses = on_floor.get()
        assert all(p.X() > OUTPOST.x for p in poses)
        feed.set("blue_outpost")  # its stock is empty now
        inst.flush()
        time.sleep(0.5)
        assert out() == 2
        assert proc.alive(), proc.stderr()
        assert "none left to feed" in proc.stderr()
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        proc.close()
