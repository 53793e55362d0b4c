"""Assertion helpers for visible tests: each failure names the rule and shows both values."""
from __future__ import annotations

import math
import numbers
from typing import Any

from .i18n import tr

REL_TOL = ABS_TOL = 1e-9  # floats are compared as the grader compares them: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


class CheckFailed(AssertionError):
    """A visible check failed; the message says which rule broke."""


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def same(actual: Any, expected: Any) -> bool:
    """Equal, except that where a float is involved, numbers need only be close (REL_TOL, ABS_TOL), at any depth."""
    if _number(actual) and _number(expected) and (isinstance(actual, float) or isinstance(expected, float)):
        return math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(same(actual[k], expected[k]) for k in expected)
    if isinstance(actual, (list, tuple)) and type(actual) is type(expected):
        return len(actual) == len(expected) and all(same(a, e) for a, e in zip(actual, expected))
    return bool(actual == expected)


def expect(actual: Any, expected: Any, rule: str) -> None:
    """Fail with `rule`, the expected and the actual value unless they are the same (floats: within the tolerance)."""
    if not same(actual, expected):
        raise CheckFailed(tr("{rule}\n    expected: {expected}\n    actual:   {actual}", rule=rule, expected=repr(expected), actual=repr(actual)))


def expect_true(condition: bool, rule: str, detail: Any = "") -> None:
    """Fail with `rule` (and what was seen) unless `condition` holds."""
    if not condition:
        raise CheckFailed(tr("{rule}\n    seen: {detail}", rule=rule, detail=repr(detail)) if detail != "" else rule)


def expect_raises(exc_type: type[BaseException], fn, rule: str) -> None:
    """Fail with `rule` unless calling fn() raises exc_type."""
    try:
        fn()
    except exc_type:
        return
    except Exception as exc:  # a different error is still a broken rule
        raise CheckFailed(tr("{rule}\n    expected: {expected}\n    actual:   {actual}", rule=rule, expected=exc_type.__name__,
                             actual=f"{type(exc).__name__}: {exc}")) from None
    raise CheckFailed(tr("{rule}\n    expected: {expected}\n    actual:   {actual}", rule=rule, expected=exc_type.__name__,
                         actual=tr("no error")))


def passed(task_id: str, count: int) -> None:
    """Print the closing line of a test cell."""
    template = "{task_id}: {count} visible check passed." if count == 1 else "{task_id}: {count} visible checks passed."
    print(tr(template, task_id=task_id, count=count))
