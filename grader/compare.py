"""When a student's observation is the same as the reference's: one stated tolerance for floats.

Observations travel at full precision. Two correct answers that do the same arithmetic in another order
(µs to ms before or after dividing, numpy's percentile or the hand formula) differ in the last bits, so
floats are compared with math.isclose at these tolerances, inside dicts and lists too; a real bug (a
divisor off by one, a span one microsecond longer) moves a value far more than that (grader/mutants.py).
Everything else compares exactly, and a bool is not a number here: True and 1 differ.
"""
from __future__ import annotations

import math

FLOAT_REL_TOL = 1e-9   # relative: about 7 decimal digits more than any value the notebooks print
FLOAT_ABS_TOL = 1e-9   # absolute: near zero, where a relative tolerance means nothing


def _number(value) -> bool:
    return type(value) in (int, float)


def same(expected, actual) -> bool:
    """True when `actual` counts as `expected`: floats (or an int and a float) within the tolerance, the rest exactly."""
    if expected is actual:   # the protocol hands over the reference's own observation for a record equal to its line
        return True
    if type(expected) is float or type(actual) is float:
        if not (_number(expected) and _number(actual)):
            return False
        if expected != expected or actual != actual:  # NaN: the same only as NaN
            return expected != expected and actual != actual
        return math.isclose(expected, actual, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)
    if type(expected) is dict and type(actual) is dict:
        return expected.keys() == actual.keys() and all(same(value, actual[key]) for key, value in expected.items())
    if type(expected) is list and type(actual) is list:
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual))
    return type(expected) is type(actual) and expected == actual
