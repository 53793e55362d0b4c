"""When a student's observation is the same as the reference's: types as the TODO's text states them, one tolerance for floats.

Observations cross from the child with their Python types (grader/observed.py), and a value of another type is
another answer: {'0': 1} is not {0: 1}, [0, 1] is not (0, 1), 13.0 is not 13, numpy.int64(13) is not 13, and a
bool is not a number (True is not 1). Where a builtin type is expected, an object of a subclass of it counts as
one, as isinstance() says (a namedtuple is a tuple, numpy.float64 a float); bool stays apart from int. Where the
reference returned an object of another class (an enum member), only an object of that class counts.

Where a TODO's text allows a looser type, its rule says so: `allows` in promises.yml names one of ALLOWANCES and
the sentence of the text that allows it, which the rule then quotes (grader/promises.py checks both). That is all
a rule may loosen; everything else compares strictly.

Floats travel at full precision. Two correct answers that do the same arithmetic in another order (µs to ms before
or after dividing, numpy's percentile or the hand formula) differ in the last bits, so floats are compared with
math.isclose at these tolerances, inside dicts and lists too; a real bug (a divisor off by one, a span one
microsecond longer) moves a value far more than that (each assignment's mutants.py).
"""
from __future__ import annotations

import math

from .observed import Instance, is_numpy

FLOAT_REL_TOL = 1e-9   # relative: about 7 decimal digits more than any value the notebooks print
FLOAT_ABS_TOL = 1e-9   # absolute: near zero, where a relative tolerance means nothing

# What a rule may allow, and words the sentence that allows it must contain in each edition (tests/grader/test_promises.py).
ALLOWANCES = {
    "number": {"what": "any real number type, numpy's included, compared by value (an int where a float is expected)",
               "en": ("numpy", "int"), "zh": ("numpy", "int")},
    "integer": {"what": "any integer type, numpy's included, where an int is expected",
                "en": ("integer",), "zh": ("整数",)},
    "bool": {"what": "numpy.bool_ where a bool is expected", "en": ("numpy.bool_",), "zh": ("numpy.bool_",)},
    "sequence": {"what": "a list or a tuple where either is expected", "en": ("list", "tuple"), "zh": ("列表", "元组")},
}
STRICT: frozenset = frozenset()
_BUILTIN = frozenset({type(None), bool, int, float, str, list, dict, tuple, set, frozenset})


def loosened(value, allow: frozenset = STRICT):
    """`value` as the type it counts as: an Instance's builtin value, numpy.float64 as a float, and numpy's bool and
    numbers as Python's where `allow` says so; anything else as it is."""
    kind = type(value)
    if kind in _BUILTIN:
        return value
    if kind is Instance:
        return value if value.base is None else loosened(value.base, allow)
    if is_numpy(value):
        item = value.item()
        if type(item) is float and (isinstance(value, float) or "number" in allow):
            return item
        if type(item) is int and ("integer" in allow or "number" in allow):
            return item
        if type(item) is bool and "bool" in allow:
            return item
    return value


def same_type(expected, actual, allow: frozenset = STRICT) -> bool:
    """Whether `actual` is of the type `expected` is, or of one the rule allows in its place (contents aside)."""
    if type(expected) is Instance:
        return type(actual) is Instance and expected.type_name == actual.type_name
    expected, actual = loosened(expected, allow), loosened(actual, allow)
    te, ta = type(expected), type(actual)
    if te is ta:
        return te is not Instance or expected.type_name == actual.type_name
    if "number" in allow and te in (int, float) and ta in (int, float):
        return True
    return "sequence" in allow and te in (list, tuple) and ta in (list, tuple)


def same(expected, actual, allow: frozenset = STRICT) -> bool:
    """True when `actual` counts as `expected`: the same types (or those `allow` allows), floats within the tolerance,
    the rest exactly."""
    if expected is actual:   # the protocol hands over the reference's own observation for a record equal to its line
        return True
    te, ta = type(expected), type(actual)
    if te is Instance:
        return _same_instance(expected, actual, allow)
    if te not in _BUILTIN or ta not in _BUILTIN:
        expected, actual = loosened(expected, allow), loosened(actual, allow)
        te, ta = type(expected), type(actual)
        if te not in _BUILTIN or ta not in _BUILTIN:   # an object without a builtin value, or numpy not allowed here
            return te is ta and (expected.type_name == actual.type_name if te is Instance else expected == actual)
    if te is float or ta is float:
        return _same_float(expected, actual, allow)
    container = _CONTAINERS.get(te)
    if container is not None:
        return container(expected, actual, allow)
    return te is ta and expected == actual


def _same_instance(expected: Instance, actual, allow: frozenset) -> bool:
    """The reference's own class: only an object of that class counts (a str is no SequenceStatus)."""
    return (type(actual) is Instance and expected.type_name == actual.type_name
            and (expected.base is None or same(expected.base, actual.base, allow)))


def _same_float(expected, actual, allow: frozenset) -> bool:
    """Two numbers, one of them a float: of the same type (or numbers where allowed) and within the tolerance; NaN is
    the same only as NaN."""
    te, ta = type(expected), type(actual)
    if te is not ta and not ("number" in allow and te in (int, float) and ta in (int, float)):
        return False
    if expected != expected or actual != actual:
        return expected != expected and actual != actual
    return math.isclose(expected, actual, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)


def _same_mapping(expected: dict, actual, allow: frozenset) -> bool:
    """A dict: only another dict counts."""
    return type(actual) is dict and _same_dict(expected, actual, allow)


def _same_sequence(expected, actual, allow: frozenset) -> bool:
    """A list or tuple: of the same type (either where allowed), item by item."""
    te, ta = type(expected), type(actual)
    if ta is not te and not ("sequence" in allow and ta in (list, tuple)):
        return False
    return len(expected) == len(actual) and all(same(e, a, allow) for e, a in zip(expected, actual))


def _same_set(expected, actual, allow: frozenset) -> bool:
    """A set or frozenset: of the same type, with the same items by key()."""
    return type(actual) is type(expected) and {key(k, allow) for k in expected} == {key(k, allow) for k in actual}


def _same_dict(expected: dict, actual: dict, allow: frozenset) -> bool:
    if len(expected) != len(actual):
        return False
    if expected.keys() == actual.keys() and all(type(k) is str for k in expected):   # the common case: str keys
        return all(same(value, actual[k], allow) for k, value in expected.items())
    theirs = by_key(actual, allow)
    return len(theirs) == len(actual) and all(
        (k := key(mine, allow)) in theirs and same(value, theirs[k][1], allow) for mine, value in expected.items())


def key(value, allow: frozenset = STRICT):
    """A dict key or set item as a value that is equal only to a key of the same type (Python says 0 == False == 0.0)."""
    value = loosened(value, allow)
    kind = type(value)
    if kind is tuple:
        return (tuple, *(key(item, allow) for item in value))
    if kind is frozenset:
        return (frozenset, frozenset(key(item, allow) for item in value))
    if kind is float and value != value:
        return (float, "nan")
    if kind is Instance:
        return (Instance, value.type_name)
    return (kind, value)


def by_key(mapping: dict, allow: frozenset = STRICT) -> dict:
    """{key(k): (k, value)} of a dict, in its order."""
    return {key(k, allow): (k, value) for k, value in mapping.items()}


# How each builtin container is compared (the other builtins compare with ==).
_CONTAINERS = {dict: _same_mapping, list: _same_sequence, tuple: _same_sequence, set: _same_set, frozenset: _same_set}
