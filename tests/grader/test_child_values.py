"""What a grading child may report (grader/child_values.py): `problem` accepts bounded decoded observations, and nothing else."""
import numpy
from hypothesis import given, strategies as st

from grader import child_values
from grader.observed import Instance
from grader.child_values import MAX_DEPTH, MAX_INT_BITS, MAX_NODES, MAX_STRING


def spec(value, depth=0, budget=None) -> bool:
    """The rule as written, one value at a time: True when `value` is acceptable."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        return False
    if value is None or type(value) in (bool, float) or type(value) in child_values.numpy_types():
        return True
    if type(value) is int:
        return value.bit_length() <= MAX_INT_BITS
    if type(value) is str:
        return len(value) <= MAX_STRING
    if type(value) in (list, tuple, set, frozenset):
        return all(spec(v, depth + 1, budget) for v in value)
    if type(value) is Instance:   # its text is a string below it, and so is its builtin value if it has one
        return spec(value.text, depth + 1, budget) and (value.base is None or spec(value.base, depth + 1, budget))
    if type(value) is dict:
        return all(spec(k, depth + 1, budget) and spec(v, depth + 1, budget) for k, v in value.items())
    return False


def nested(depth: int, leaf=0):
    """`leaf` at `depth` levels below the top, through lists and dicts in turn."""
    for level in range(depth):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


leaves = (st.none() | st.booleans() | st.floats() | st.integers(-2 ** 66, 2 ** 66)
          | st.text(max_size=3) | st.text(min_size=MAX_STRING - 1, max_size=MAX_STRING + 1) | st.tuples(st.integers())
          | st.integers(0, 255).map(numpy.uint8) | st.booleans().map(numpy.bool_) | st.binary(max_size=2)
          | st.builds(Instance, st.just("numpy.ndarray"), st.text(max_size=MAX_STRING + 1))
          | st.builds(Instance, st.just("__graded__.P"), st.just("P(x=1)"), st.tuples(st.integers(-2 ** 66, 2 ** 66))))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3), max_leaves=30)


@given(values)
def test_problem_agrees_with_the_rule_as_written(value):
    assert (child_values.problem(value) == "") == spec(value)


@given(st.integers(0, 30))
def test_problem_refuses_exactly_the_values_nested_deeper_than_the_limit(depth):
    assert (child_values.problem(nested(depth)) == "") == (depth <= MAX_DEPTH) == spec(nested(depth))


def test_each_bound_is_exact_and_says_what_was_wrong():
    assert child_values.problem(list(range(MAX_NODES - 1))) == ""   # the list itself is a value too
    assert str(child_values.problem(list(range(MAX_NODES)))) == f"more than {MAX_NODES} values"
    assert child_values.problem(nested(MAX_DEPTH)) == "" and str(child_values.problem(nested(MAX_DEPTH + 1))) == f"nested deeper than {MAX_DEPTH}"
    assert child_values.problem(["x" * MAX_STRING]) == "" and str(child_values.problem({"k": "x" * (MAX_STRING + 1)})) == f"a string of {MAX_STRING + 1} characters"
    assert child_values.problem(-(2 ** MAX_INT_BITS - 1)) == "" and str(child_values.problem([2 ** MAX_INT_BITS])) == f"an integer of {MAX_INT_BITS + 1} bits"
    assert child_values.problem({"k": (1, 2)}) == "" and child_values.problem({(1,): 2}) == ""
    assert str(child_values.problem([b"x"])) == "a bytes"
    assert child_values.problem({"k": [None, True, 1.5, float("nan"), "s", {}, {0: frozenset({1})}, numpy.int64(2)]}) == ""
    assert str(child_values.problem([numpy.datetime64(0, "s")])) == "a datetime64"
    assert str(child_values.problem([object()])) == "a object"
    too_long = Instance("numpy.ndarray", "x" * (MAX_STRING + 1))
    assert str(child_values.problem(too_long)) == f"a string of {MAX_STRING + 1} characters"
