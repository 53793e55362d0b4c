"""One tolerance for floats (grader/compare.py), and the candidates a failing case is cut down to (grader/shrink.py)."""
import math

import pytest
from hypothesis import given, strategies as st

from grader import shrink
from grader.compare import FLOAT_ABS_TOL, FLOAT_REL_TOL, same

# Plain observations, as a child reports them: JSON data (floats as JSON carries them, NaN included).
leaves = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats() | st.text(max_size=8)
observations = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                            max_leaves=20)
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


@given(observations)
def test_same_is_reflexive(value):
    assert same(value, value)


@given(observations, observations)
def test_same_is_symmetric(a, b):
    assert same(a, b) == same(b, a)


@given(sizable, st.integers(0, 5))
def test_values_1e_12_apart_are_the_same_at_any_depth(x, depth):
    assert same(nest(x, depth), nest(x + 1e-12, depth))
    assert same(nest(x, depth), nest(x * (1 + 1e-12), depth))


@given(sizable, st.integers(0, 5), st.sampled_from([1, -1]))
def test_values_1e_6_apart_relative_differ_at_any_depth(x, depth, sign):
    assert not same(nest(x, depth), nest(x * (1 + sign * 1e-6), depth))


@given(st.integers(-10**6, 10**6))
def test_an_int_and_its_float_are_the_same_a_bool_is_not_a_number(n):
    assert same(n, float(n)) and same([float(n)], [n])
    assert not same(True, 1) and not same(1, True) and not same(False, 0.0) and not same([1.0], [True])
    assert not same(None, 0) and not same("1", 1) and not same(n, str(n))


def test_structure_compares_exactly():
    assert same({"a": 1.0, "b": [2, 3.0]}, {"b": [2.0, 3], "a": 1})
    assert not same({"a": 1.0}, {"a": 1.0, "b": 2})      # a key more
    assert not same([1.0, 2.0], [1.0])                    # an item fewer
    assert not same([1.0], {"0": 1.0})                    # another container
    assert same(60.36858249999999, 60.3685825)            # one value, computed in two orders of arithmetic
    assert same(float("nan"), float("nan")) and not same(float("nan"), 1.0)
    assert same(math.inf, math.inf) and not same(math.inf, -math.inf)


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
    assert not shrink.disagrees(ok, [{"value": 1.0 + 1e-12}], ok)             # within the tolerance
    assert not shrink.disagrees(ok, "timeout", ok)                            # the student's run did not finish
    assert not shrink.disagrees([{"error": "StopIteration"}], other, ok)     # an op lost what it needed
    assert shrink.disagrees([{"error": "ValueError"}], other, [{"error": "ValueError"}])


@pytest.mark.parametrize("n", [2, 5, 16, 17, 40])
def test_kept_index_sets_are_proper_and_distinct(n):
    kept = shrink._kept(n)
    assert kept and all(0 < len(k) < n and k == sorted(set(k)) for k in kept)
    assert len({tuple(k) for k in kept}) == len(kept)
    assert [0] in kept if n <= shrink.SINGLES else [0] not in kept
