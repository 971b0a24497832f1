"""The topic declarations: placeholders, one declaration per topic, the struct types a model
may declare, and the protocol reference without photonlibpy (Python 3.10 has none)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simserver.contract.topics import TopicSpec, fill, matcher
from simserver.io import formats
from simserver.io.structs import struct_class
from simserver.models.api import STRUCT_TYPES
from tests.ntutil import REPO


def test_placeholders_fill_and_match_one_level_or_several():
    spec = TopicSpec("/SmartDashboard/<mechanism>/<root>/<ligament...>/angle", "double", "out",
                     "deg", "")
    name = spec.at(mechanism="arm", root="base", ligament="arm/wrist")
    assert name == "/SmartDashboard/arm/base/arm/wrist/angle"
    assert matcher(spec.name).fullmatch(name)
    assert matcher(spec.name).fullmatch("/SmartDashboard/arm/base/arm/angle")
    assert not matcher(spec.name).fullmatch("/SmartDashboard/arm/base/angle")
    assert not matcher("/photonvision/<camera>/rawBytes").fullmatch("/photonvision/a/b/rawBytes")
    assert matcher("/<table>/tv").fullmatch("/limelight-front/tv")
    assert matcher("photonstruct:PhotonPipelineResult:<uuid>").fullmatch(
        "photonstruct:PhotonPipelineResult:4b2ff16a964b5e2bf04be0c1454d91c4")
    assert matcher("/a.b/<x>").fullmatch("/a.b/c") and not matcher("/a.b/<x>").fullmatch("/aXb/c")
    with pytest.raises(KeyError):
        fill("/photonvision/<camera>/heartbeat", name="front")


def test_every_topic_is_declared_once():
    names = [s.name for g in formats.groups() for s in g.specs]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_every_struct_type_an_output_may_declare_can_be_published():
    for nt_type in ("struct:Pose2d", *STRUCT_TYPES):
        assert struct_class(nt_type) is not None, nt_type
    assert struct_class("double") is None and struct_class("struct:Unknown") is None


def test_protocol_reference_is_the_same_without_photonlibpy():
    """The declarations load without photonlibpy, so `simserver docs protocol` gives the same
    document on Python 3.10."""
    code = ("import sys; sys.modules['photonlibpy'] = None\n"
            "from simserver.docgen import protocol_reference\n"
            "sys.stdout.write(protocol_reference())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    assert out == (REPO / "docs" / "protocol.md").read_text()
