"""Property-based fuzzing of input validation (simserver/io/validation.py): whatever a robot
program, a dashboard or an attacker on the network publishes, what reaches a model is a finite
duty cycle in [-1, 1] or a boolean, every other value is dropped and counted, and each kind of
problem is warned about once per topic however many values arrive.

Also the values as NetworkTables delivers them: every type an ``ntcore.Value`` can hold goes
through the NT adapter's own unwrapping (``simserver.io.ntinputs.python_value``) first.
"""

from __future__ import annotations

import logging
import math

import ntcore
from hypothesis import given, settings
from hypothesis import strategies as st

from simserver.contract import topics
from simserver.io.ntinputs import _UNSET
from simserver.io.ntinputs import python_value as _python_value
from simserver.io.validation import InputValidator, decode_inputs

FUZZ = settings(max_examples=500, deadline=None, derandomize=True)

numbers = st.one_of(st.floats(), st.integers(), st.integers(-2**70, 2**70))
anything = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=10), st.binary(max_size=10),
              st.complex_numbers()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)

# What ntcore can carry on a topic: every NT4 type.
nt_values = st.one_of(
    st.floats().map(ntcore.Value.makeDouble),
    st.floats(width=32).map(ntcore.Value.makeFloat),
    st.integers(-2**63, 2**63 - 1).map(ntcore.Value.makeInteger),
    st.booleans().map(ntcore.Value.makeBoolean),
    st.text(max_size=20).map(ntcore.Value.makeString),
    st.binary(max_size=20).map(ntcore.Value.makeRaw),
    st.lists(st.floats(), max_size=5).map(ntcore.Value.makeDoubleArray),
    st.lists(st.floats(width=32), max_size=5).map(ntcore.Value.makeFloatArray),
    st.lists(st.integers(-2**63, 2**63 - 1), max_size=5).map(ntcore.Value.makeIntegerArray),
    st.lists(st.booleans(), max_size=5).map(ntcore.Value.makeBooleanArray),
    st.lists(st.text(max_size=5), max_size=5).map(ntcore.Value.makeStringArray),
)

TOPIC = topics.motor("left")


def _clean_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@FUZZ
@given(value=anything)
def test_a_duty_is_finite_and_within_one_or_dropped_and_counted(value):
    v = InputValidator()
    out = v.duty(TOPIC, value)
    if out is None:
        assert not _clean_number(value)
        assert v.rejected == 1
        return
    assert isinstance(out, float) and math.isfinite(out) and -1.0 <= out <= 1.0
    assert _clean_number(value)
    x = float(value)
    if math.isfinite(x) and -1.0 <= x <= 1.0:
        assert out == x and v.rejected == 0  # a good value passes unchanged, uncounted
    else:
        assert v.rejected == 1
        assert out == (0.0 if not math.isfinite(x) else math.copysign(1.0, x))


@FUZZ
@given(value=anything)
def test_a_solenoid_state_is_a_boolean_or_dropped_and_counted(value):
    v = InputValidator()
    out = v.solenoid(topics.solenoid("claw"), value)
    if isinstance(value, bool):
        assert out is value and v.rejected == 0
    else:
        assert out is None and v.rejected == 1


@FUZZ
@given(value=nt_values)
def test_every_nt_value_type_is_validated_after_unwrapping(value):
    raw = _python_value(value)
    assert raw is not _UNSET
    v = InputValidator()
    duty = v.duty(TOPIC, raw)
    assert duty is None or (math.isfinite(duty) and -1.0 <= duty <= 1.0)
    state = v.solenoid(topics.solenoid("claw"), raw)
    assert state is None or isinstance(state, bool)


@FUZZ
@given(values=st.dictionaries(
    st.one_of(st.sampled_from([topics.motor(n) for n in ("left", "right", "ghost")] +
                              [topics.solenoid(n) for n in ("claw", "ghost")]),
              st.text(max_size=20)),
    anything, max_size=8))
def test_decoded_inputs_hold_only_known_names_and_safe_values(values):
    motors, solenoids = ["left", "right"], ["claw"]
    duties, states = decode_inputs(values, motors, solenoids, InputValidator())
    assert set(duties) <= set(motors) and set(states) <= set(solenoids)
    assert all(isinstance(d, float) and math.isfinite(d) and -1 <= d <= 1
               for d in duties.values())
    assert all(isinstance(s, bool) for s in states.values())


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(burst=st.lists(anything, min_size=50, max_size=300))
def test_a_flood_of_bad_values_warns_at_most_once_per_topic_and_kind(burst):
    v = InputValidator()
    handler = _Records()
    logger = logging.getLogger("simserver.inputs")
    logger.addHandler(handler)
    try:
        for value in burst:
            v.duty(TOPIC, value)
            v.solenoid(topics.solenoid("claw"), value)
    finally:
        logger.removeHandler(handler)
    assert len(handler.records) <= 3 + 1  # duty: type, nonfinite, range; solenoid: type
    assert v.rejected >= len(handler.records)
