"""Assertion helpers for visible tests: each failure names the rule and shows both values."""
from __future__ import annotations

from typing import Any

from .i18n import tr


class CheckFailed(AssertionError):
    """A visible check failed; the message says which rule broke."""


def expect(actual: Any, expected: Any, rule: str) -> None:
    """Fail with `rule`, the expected and the actual value unless they are equal."""
    if actual != expected:
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
    print(tr("{task_id}: {count} visible checks passed.", task_id=task_id, count=count))
