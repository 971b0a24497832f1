"""Our Mechanism2d publisher against WPILib's own Mechanism2d: same topics, types, properties
and values, so Glass, Shuffleboard and AdvantageScope draw it the same way."""

from __future__ import annotations

import time

import ntcore
import pytest
import wpilib

from simserver.io.mechanism2d import Mechanism2dPublisher
from simserver.models.api import Drawing, Ligament

pytestmark = pytest.mark.network


def _dump(inst: ntcore.NetworkTableInstance, table: str) -> dict[str, tuple]:
    watch = ntcore.MultiSubscriber(inst, [table], ntcore.PubSubOptions())
    time.sleep(0.1)
    out = {}
    for t in inst.getTopics(table):
        v = inst.getEntry(t.getName()).getValue()
        value = v.value() if v.isValid() else None
        if isinstance(value, list):
            value = tuple(value)
        out[t.getName()[len(table):]] = (t.getTypeString(), value, t.getProperties())
    del watch
    return out


def test_layout_matches_wpilib_mechanism2d():
    # WPILib's own, on the default instance, as robot code would publish it.
    mech = wpilib.Mechanism2d(3, 2, wpilib.Color8Bit(0, 0, 32))
    root = mech.getRoot("base", 1.5, 0.1)
    arm = root.appendLigament("arm", 1.0, 45.0, 6, wpilib.Color8Bit(255, 128, 0))
    arm.appendLigament("wrist", 0.3, -30.0, 4, wpilib.Color8Bit(0, 192, 255))
    wpilib.SmartDashboard.putData("Ref", mech)
    wpilib.SmartDashboard.updateValues()
    reference = _dump(ntcore.NetworkTableInstance.getDefault(), "/SmartDashboard/Ref")

    inst = ntcore.NetworkTableInstance.create()
    try:
        drawing = Drawing(3.0, 2.0, {"base": (1.5, 0.1)}, (
            Ligament("arm", 1.0, 45.0, root="base", weight=6, color="#FF8000"),
            Ligament("wrist", 0.3, -30.0, parent="arm", weight=4, color="#00C0FF")))
        publisher = Mechanism2dPublisher(inst, "Ref", drawing, ntcore.PubSubOptions())
        ours = _dump(inst, "/SmartDashboard/Ref")
        del publisher
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
    assert set(ours) == set(reference)
    for key, (typ, value, props) in reference.items():
        if key == "/.controllable":
            assert ours[key][0] == typ  # WPILib's is True (robot code may edit); ours read-only
            continue
        assert ours[key] == (typ, value, props), key
