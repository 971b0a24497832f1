"""Game pieces and mechanism components on NetworkTables (issue 22, part 5), read by a real
ntcore client on loopback: struct:Pose3d[] arrays of the pieces by state and type (decoded
with wpimath's own Pose3d struct), scores and counts, the SimField's ``Pieces`` object, and
/simserver/robot/components; a field without pieces publishes none of it."""

from __future__ import annotations

import math
from collections.abc import Iterator

import ntcore
import numpy as np
import pytest
from wpimath.geometry import Pose3d, Rotation3d, Translation3d

from simserver.contract import topics
from simserver.io import field2d
from simserver.io.nt import Endpoint, NtAdapter
from simserver.models.pieces.types import FLIGHT, HELD, LOOSE
from simserver.world import World
from tests.ntutil import FAST, client, free_port, wait_for
from tests.pieces.shown_fixtures import field_of, scored, with_pieces
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS, make_world

pytestmark = pytest.mark.network

# A three-stage elevator whose bottom of travel is 0.2 m forward, 0.1 m up, and an arm
# pivoting 0.25 m behind the centre, 0.6 m up.
SHOWN = (TWO_KRAKENS + LIFT + 'stages = 3\nbase_x = "0.2 m"\nbase_z = "0.1 m"\n'
         + SHOULDER_NEO + ARM + 'pivot_x = "-0.25 m"\npivot_z = "0.6 m"\n'
         + 'start_angle = "30 deg"\n')


class Served:
    """An adapter serving NT4 on a free loopback port and a real client of it."""

    def __init__(self, world: World):
        port = free_port()
        self.world = world
        self.adapter = NtAdapter(world.cfg, Endpoint("server", "127.0.0.1", port))
        self.inst = client(port)
        wait_for(self.inst.isConnected, 10, "the client to connect")

    def poses(self, name: str) -> ntcore.StructArraySubscriber:
        return self.inst.getStructArrayTopic(name, Pose3d).subscribe([], FAST)

    def publish_until(self, snap, arrived) -> None:
        def check() -> bool:
            self.adapter.publish(snap)
            return arrived()
        wait_for(check, 10, "the values on the client")

    def close(self) -> None:
        self.inst.stopClient()
        ntcore.NetworkTableInstance.destroy(self.inst)
        self.adapter.close()


@pytest.fixture
def served() -> Iterator[Served]:
    s = Served(make_world())
    try:
        yield s
    finally:
        s.close()


def _expected(pose_rows: np.ndarray) -> list[Pose3d]:
    return [Pose3d(Translation3d(x, y, z), Rotation3d(r, p, w))
            for x, y, z, r, p, w in pose_rows.tolist()]


def _same(got: list[Pose3d], want: list[Pose3d]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.translation() == b.translation()
        q, r = a.rotation().getQuaternion(), b.rotation().getQuaternion()
        assert (q.W(), q.X(), q.Y(), q.Z()) == pytest.approx((r.W(), r.X(), r.Y(), r.Z()),
                                                             abs=1e-15)


def test_piece_arrays_by_state_and_type_reach_a_real_client(served):
    pieces = field_of(500)
    snap = with_pieces(served.world.snapshot(), pieces)
    subs = {(state, t): served.poses(topics.pieces_in(state, t))
            for state in ("floor", "flight", "held") for t in pieces.types}
    served.publish_until(snap, lambda: all(s.get() for s in subs.values()))
    codes = {"floor": LOOSE, "flight": FLIGHT, "held": HELD}
    total = 0
    for (state, t), sub in subs.items():
        chosen = (pieces.state == codes[state]) & (pieces.kind == pieces.types.index(t))
        want = _expected(pieces.pose[chosen])
        _same(sub.get(), want)  # decoded by wpimath's Pose3d struct: the same poses
        total += len(want)
    assert total == 375  # every piece but the gone ones (1 in 4)
    info = served.inst.getTopic(topics.pieces_in("floor", "fuel")).getTypeString()
    assert info == "struct:Pose3d[]"


def test_a_state_emptied_publishes_an_empty_array(served):
    pieces = field_of(8)
    flight = served.poses(topics.pieces_in("flight", "fuel"))
    served.publish_until(with_pieces(served.world.snapshot(), pieces),
                         lambda: len(flight.get()) == 1)
    landed = field_of(8)
    landed.state[landed.state == FLIGHT] = LOOSE
    served.publish_until(with_pieces(served.world.snapshot(), landed),
                         lambda: flight.get() == [])


def test_scores_goals_and_counts_reach_a_real_client(served):
    snap = with_pieces(served.world.snapshot(), scored(field_of(8), blue=3, red=1,
                                                       picked_up=4, shots=2))
    names = {topics.pieces_scored("blue"): 3, topics.pieces_scored("red"): 1,
             topics.goal_scored("blue_hub"): 3, topics.goal_scored("red_hub"): 1,
             topics.PICKED_UP: 4, topics.SHOTS: 2,
             topics.robot_prefix("partner") + "/pieces/picked_up": 5,
             topics.robot_prefix("partner") + "/pieces/shots": 3}
    subs = {n: served.inst.getIntegerTopic(n).subscribe(-1, FAST) for n in names}
    served.publish_until(snap, lambda: all(s.get() == names[n] for n, s in subs.items()))


def test_loose_and_flying_pieces_are_a_simfield_object(served):
    pieces = field_of(12)
    sub = served.inst.getDoubleArrayTopic(field2d.GAME_PIECES.name).subscribe([], FAST)
    served.publish_until(with_pieces(served.world.snapshot(), pieces), lambda: sub.get())
    shown = (pieces.state == LOOSE) | (pieces.state == FLIGHT)
    want = [v for x, y, yaw in pieces.pose[shown][:, (0, 1, 5)].tolist()
            for v in (x, y, math.degrees(yaw))]
    assert sub.get() == pytest.approx(want, abs=1e-12)
    assert len(want) == 3 * 6  # pieces 0, 1, 4, 5, 8, 9: held and gone ones are not drawn


def test_a_field_without_pieces_publishes_no_piece_topics(served):
    every = ntcore.MultiSubscriber(served.inst, [""], ntcore.PubSubOptions(topicsOnly=True))
    heartbeat = served.inst.getIntegerTopic(topics.HEARTBEAT).subscribe(-1, FAST)
    snap = served.world.snapshot()
    assert snap.pieces is None and snap.components == ()  # the kitbot has no mechanisms
    served.publish_until(snap, lambda: heartbeat.get() > 3)
    names = {t.getName() for t in served.inst.getTopics()}
    assert topics.POSE in names
    assert not [n for n in names if n.startswith(topics.PIECES) or n == topics.COMPONENTS
                or n == field2d.GAME_PIECES.name or "Pose3d" in n]
    del every


def test_mechanism_components_reach_a_real_client():
    s = Served(make_world(SHOWN))
    try:
        world = s.world
        world.set_motor("lift", 0.6)
        for _ in range(25):
            world.step(world.cfg.sim.tick)
        snap = world.snapshot()
        height = snap.mechanisms["lift"]["height"]
        angle = math.radians(snap.mechanisms["arm"]["angle"])
        assert height > 0.05 and angle == pytest.approx(math.radians(30), abs=0.2)
        sub = s.poses(topics.COMPONENTS)
        s.publish_until(snap, lambda: len(sub.get()) == 4)
        got = sub.get()
        # the elevator: stage 1, stage 2, carriage; rising 1/3, 2/3 and all of the travel
        for k, pose in enumerate(got[:3], start=1):
            assert (pose.X(), pose.Y()) == (0.2, 0.0)
            assert pose.Z() == pytest.approx(0.1 + height * k / 3, abs=1e-12)
            assert pose.rotation().getQuaternion().W() == 1.0
        # the arm: at its pivot, its x axis along the arm (0 forward, up positive)
        arm = got[3]
        tip = arm.transformBy(_forward(0.6))
        assert (arm.X(), arm.Y(), arm.Z()) == (-0.25, 0.0, 0.6)
        assert tip.X() == pytest.approx(-0.25 + 0.6 * math.cos(angle), abs=1e-12)
        assert tip.Z() == pytest.approx(0.6 + 0.6 * math.sin(angle), abs=1e-12)
        assert tip.Y() == pytest.approx(0.0, abs=1e-12)
    finally:
        s.close()


def _forward(distance: float):
    from wpimath.geometry import Transform3d
    return Transform3d(Translation3d(distance, 0.0, 0.0), Rotation3d())


def test_another_robots_components_are_under_its_prefix():
    s = Served(make_world())
    other = make_world(SHOULDER_NEO + ARM)
    partner = NtAdapter(other.cfg, s.adapter.endpoint, robot=("partner", s.adapter))
    try:
        sub = s.poses(topics.robot_prefix("partner") + "/robot/components")
        snap = other.snapshot()

        def arrived() -> bool:
            partner.publish(snap, flush=False)
            s.adapter.publish(s.world.snapshot())
            return len(sub.get()) == 1
        wait_for(arrived, 10, "the partner's components")
        assert sub.get()[0].rotation().Y() == pytest.approx(math.radians(80))  # at -80 deg
        assert not s.inst.getTopic(topics.COMPONENTS).exists()  # the kitbot has none
    finally:
        partner.close()
        s.close()
