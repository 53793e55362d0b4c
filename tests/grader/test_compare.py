"""Types as the text states them and one tolerance for floats (grader/compare.py), and the candidates a failing case is cut down to (grader/shrink.py)."""
import copy
import math

import pytest
from hypothesis import given, strategies as st

import numpy

from grader import shrink
from grader.compare import ALLOWANCES, FLOAT_ABS_TOL, FLOAT_REL_TOL, STRICT, same
from grader.observed import Instance

NUMBER = frozenset({"number"})

# Observations as a child reports them, with their types (floats as JSON carries them, NaN included).
keys = st.text(max_size=4) | st.integers(-5, 5) | st.booleans() | st.tuples(st.integers(-2, 2), st.text(max_size=2))
leaves = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats() | st.text(max_size=8)
          | st.integers(-2**63, 2**63 - 1).map(numpy.int64) | st.booleans().map(numpy.bool_) | st.floats(width=32).map(numpy.float32))
observations = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                            | st.dictionaries(keys, inner, max_size=4), max_leaves=20)
allowances = st.sets(st.sampled_from(sorted(ALLOWANCES))).map(frozenset)
# Floats away from zero, where a relative error of 1e-6 is far above the absolute tolerance too.
sizable = st.floats(min_value=1e-2, max_value=1e12) | st.floats(min_value=-1e12, max_value=-1e-2)


def nest(value, depth: int):
    """`value` buried `depth` levels deep, alternating a dict and a list around it."""
    for level in range(depth):
        value = {"k": [1, value, None]} if level % 2 else [True, {"x": value}]
    return value


def test_the_tolerance_is_the_stated_one_and_the_visible_checks_use_it_too():
    from lab import checks
    assert FLOAT_REL_TOL == 1e-9 and FLOAT_ABS_TOL == 1e-9
    assert (checks.REL_TOL, checks.ABS_TOL) == (FLOAT_REL_TOL, FLOAT_ABS_TOL)


@pytest.mark.slow
@given(observations, allowances)
def test_same_is_reflexive(value, allow):
    assert same(value, value, allow) and same(value, copy.deepcopy(value), allow)


@pytest.mark.slow
@given(observations, observations, allowances)
def test_same_is_symmetric(a, b, allow):
    assert same(a, b, allow) == same(b, a, allow)


@given(observations, observations, allowances)
def test_an_allowance_only_ever_loosens(a, b, allow):
    assert not same(a, b) or same(a, b, allow)


@given(sizable, st.integers(0, 5))
def test_values_1e_12_apart_are_the_same_at_any_depth(x, depth):
    assert same(nest(x, depth), nest(x + 1e-12, depth))
    assert same(nest(x, depth), nest(x * (1 + 1e-12), depth))


@given(sizable, st.integers(0, 5), st.sampled_from([1, -1]))
def test_values_1e_6_apart_relative_differ_at_any_depth(x, depth, sign):
    assert not same(nest(x, depth), nest(x * (1 + sign * 1e-6), depth))


@given(st.integers(-10**6, 10**6))
def test_an_int_and_its_float_differ_unless_the_rule_allows_any_number_a_bool_is_never_a_number(n):
    assert not same(n, float(n)) and not same([float(n)], [n]) and not same({"k": n}, {"k": float(n)})
    assert same(n, float(n), NUMBER) and same([float(n)], [n], NUMBER) and same(float(n), n, NUMBER)
    for allow in (STRICT, NUMBER, frozenset(ALLOWANCES)):
        assert not same(True, 1, allow) and not same(1, True, allow) and not same(False, 0.0, allow)
        assert not same([1.0], [True], allow) and not same(None, 0, allow) and not same("1", 1, allow) and not same(n, str(n), allow)


def test_structure_compares_exactly():
    assert same({"a": 1.0, "b": [2, 3.0]}, {"b": [2, 3.0], "a": 1.0})   # key order aside
    assert not same({"a": 1.0}, {"a": 1.0, "b": 2})      # a key more
    assert not same([1.0, 2.0], [1.0])                    # an item fewer
    assert not same([1.0], {"0": 1.0})                    # another container
    assert same(60.36858249999999, 60.3685825)            # one value, computed in two orders of arithmetic
    assert same(float("nan"), float("nan")) and not same(float("nan"), 1.0)
    assert same(math.inf, math.inf) and not same(math.inf, -math.inf)


def test_types_compare_as_the_value_was_returned():
    assert not same({0: (0, 1)}, {"0": (0, 1)})                 # int keys are not str keys
    assert not same({0: (0, 1)}, {0: [0, 1]})                   # a tuple is not a list
    assert not same((0, 1), [0, 1]) and same((0, 1), [0, 1], frozenset({"sequence"}))
    assert not same({1: "a"}, {True: "a"}) and not same({1: "a"}, {1.0: "a"})   # Python says 1 == True == 1.0
    assert not same({(0, 1)}, {(0, 1.0)}) and same({(0, 1)}, {(0, 1)})
    assert not same({1, 2}, frozenset({1, 2})) and not same(set(), [])
    assert not same(13, numpy.int64(13)) and same(13, numpy.int64(13), frozenset({"integer"})) and same(13, numpy.int64(13), NUMBER)
    assert not same(numpy.int64(13), numpy.int32(13)) and same(numpy.int64(13), numpy.int64(13))
    assert not same(True, numpy.bool_(True)) and same(True, numpy.bool_(True), frozenset({"bool"}))
    assert not same(0.5, numpy.float32(0.5)) and same(0.5, numpy.float32(0.5), NUMBER)
    assert same(2.5, numpy.float64(2.5))                         # numpy.float64 is a float (a subclass of it)
    assert same({numpy.int64(3): 1}, {numpy.int64(3): 1}) and not same({3: 1}, {numpy.int64(3): 1})


def test_an_object_counts_as_its_builtin_value_where_that_builtin_is_expected():
    point = Instance("__graded__.Point", "Point(x=1, y=2)", (1, 2))        # a namedtuple: a tuple
    assert same((1, 2), point) and not same([1, 2], point)           # where a tuple is expected
    assert not same(point, (1, 2)) and same(point, copy.deepcopy(point))   # where the reference returned a Point
    status = Instance("lab.engine.sequence.SequenceStatus", "<SequenceStatus.RUNNING: 'running'>", "running")
    assert same("running", status) and not same("waiting", status) and not same(status, "running")
    array = Instance("numpy.ndarray", "array([1, 2])")
    assert not same([1, 2], array) and same(array, Instance("numpy.ndarray", "array([3])"))   # by type, as before
    assert not same(array, Instance("builtins.generator", "<generator object f at 0x1>"))


def test_a_rule_allows_only_what_it_names():
    for name in ALLOWANCES:
        alone = frozenset({name})
        assert not same({0: 1}, {"0": 1}, alone) and not same(None, 0, alone)
    assert not same(13, numpy.int64(13), frozenset({"bool", "sequence"}))
    assert not same([1, 2], (1, 2), NUMBER) and not same(True, numpy.bool_(True), NUMBER)


# ------------------------------------------------------------------ shrink candidates
def test_candidates_keep_the_first_op_and_drop_items_of_every_list():
    ops = [["sched", {}], *[["add", {"seq_id": i}] for i in range(6)], ["run", 40]]
    found = shrink.candidates("engine", ops)
    assert found and all(c[0] == ops[0] for c in found)
    assert all(len(c) < len(ops) or c[-1][1] < 40 for c in found)         # every one is smaller
    assert [ops[0], ops[3]] in found                                      # an op alone
    assert [*ops[:-1], ["run", 20]] in found and [*ops[:-1], ["run", 1]] in found
    engine = [["engine", {"num_blocks": 9}, [{"seq_id": i} for i in range(5)], {}]]
    assert [["engine", {"num_blocks": 9}, [{"seq_id": 2}], {}]] in shrink.candidates("engine", engine)
    call = [["call", "latency_summary", [[{"seq_id": i} for i in range(40)], 200, 50]]]
    smaller = shrink.candidates("engine", call)
    assert smaller and all(len(c[0][2][0]) < 40 and c[0][2][1:] == [200, 50] for c in smaller)
    assert [["f", [[1, 3], 2]]] in shrink.candidates("batching", [["f", [[1, 2, 3], 2]]])


def test_a_candidate_counts_only_when_both_finish_and_the_reference_raises_nothing_new():
    ok, other = [{"value": 1}], [{"value": 2}]
    assert shrink.disagrees(ok, other, ok)
    assert not shrink.disagrees([{"value": 1.0}], [{"value": 1.0 + 1e-12}], ok)  # within the tolerance
    assert shrink.disagrees(ok, [{"value": 1.0}], ok) and not shrink.disagrees(ok, [{"value": 1.0}], ok, NUMBER)  # as its rule allows
    assert not shrink.disagrees(ok, "timeout", ok)                            # the student's run did not finish
    assert not shrink.disagrees([{"error": "StopIteration"}], other, ok)     # an op lost what it needed
    assert shrink.disagrees([{"error": "ValueError"}], other, [{"error": "ValueError"}])


@pytest.mark.parametrize("n", [2, 5, 16, 17, 40])
def test_kept_index_sets_are_proper_and_distinct(n):
    kept = shrink._kept(n)
    assert kept and all(0 < len(k) < n and k == sorted(set(k)) for k in kept)
    assert len({tuple(k) for k in kept}) == len(kept)
    assert [0] in kept if n <= shrink.SINGLES else [0] not in kept
