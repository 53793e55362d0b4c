"""What a grading child's values may be: data of bounded size, and how much of them feedback may show.

A child runs student code, so everything it writes is hostile until checked. The parent accepts only
the records it expects, in order (grader/runner/protocol.py), and observations that decode to data
(grader/observed.py: JSON values, tuples, sets, numpy scalars, stand-ins of other objects) of bounded
depth, size and string length (here). Anything else is replaced by a short description. What is
accepted reaches a feedback page only through a Budget: FEEDBACK_BUDGET characters of printable ASCII per
failing rule, so what the child was given (the reference, the scenarios) can ride out only that far.
"""
from __future__ import annotations

import sys

from . import caches
from .messages import Message
from .observed import NUMPY_DTYPES, Instance, kind

MAX_DEPTH = 12
MAX_NODES = 20_000        # values in one observation (a scenario's whole op log)
MAX_STRING = 400          # characters in one string of an observation
MAX_INT_BITS = 64
MAX_LINE = 2 << 20        # bytes in one record
MAX_TEXT = 160            # free text (a cell's error message) kept for feedback
FEEDBACK_BUDGET = 120     # characters of a child's values that one failing rule's feedback may show, in all
NAME_CHARS = 40           # an exception name longer than this is shown as "an error"
TYPE_CHARS = 60           # a class name of the child's longer than this is shown as "an object"


def problem(value) -> Message | str:
    """'' if `value` is a decoded observation of bounded depth, size and string length, else what is wrong with it (a Message).

    Decoded (grader/observed.py): JSON's None, bool, int, float, str, list and dict with str keys, plus tuples, sets,
    frozensets, dicts with other keys, numpy scalars of the allowlisted dtypes and Instances (their text is a string,
    their builtin value a value). Level by level, not by recursion: a child's observations are checked value by
    value on every scenario, and a call per value cost the grader more than the child's run took."""
    level, depth, nodes = [value], 0, 0
    while level:
        nodes += len(level)
        if nodes > MAX_NODES:
            return Message("problem_values", {"limit": MAX_NODES})
        if depth > MAX_DEPTH:
            return Message("problem_depth", {"limit": MAX_DEPTH})
        below: list = []
        wrong = _level_problem(level, below)
        if wrong:
            return wrong
        level, depth = below, depth + 1
    return ""


_AS_IS = frozenset({type(None), bool, float})   # values with nothing to bound


def _level_problem(level: list, below: list) -> Message | str:
    """What is wrong with a value of one level of an observation, or ''; puts the values inside them in `below`."""
    for item in level:
        kind = type(item)
        if kind is str:
            if len(item) > MAX_STRING:
                return Message("problem_string", {"length": len(item)})
        elif kind is list or kind is tuple or kind is set or kind is frozenset:
            below += item
        elif kind is dict:
            below += item          # the keys are values too
            below += item.values()
        elif kind is int:
            if item.bit_length() > MAX_INT_BITS:
                return Message("problem_int", {"bits": item.bit_length()})
        elif kind is Instance:
            below.append(item.text)
            if item.base is not None:
                below.append(item.base)
        elif kind not in _AS_IS and kind not in numpy_types():
            return Message("problem_type", {"type": kind.__name__})
    return ""


def numpy_types() -> frozenset:
    """The numpy scalar types an observation may hold (none while the grader has not imported numpy)."""
    global _NUMPY_TYPES
    if _NUMPY_TYPES is None:
        numpy = sys.modules.get("numpy")
        if numpy is None:   # no numpy scalar was decoded yet (grader/observed.py imports it for the first)
            return frozenset()
        _NUMPY_TYPES = frozenset(numpy.dtype(name).type for name in NUMPY_DTYPES)
    return _NUMPY_TYPES


_NUMPY_TYPES: frozenset | None = None
caches.register("_NUMPY_TYPES", "nothing (one set, made once numpy is imported)", "numpy's scalar types do not change "
                "in a process", lambda: globals().update(_NUMPY_TYPES=None))


def describe(value) -> str:
    """A short description of a value's type and size, never its content."""
    if isinstance(value, (str, list, dict)):
        return f"<{type(value).__name__} of length {len(value)}>"
    return f"<{type(value).__name__}>"


class Budget:
    """What one failing rule may show of a child's values: ascii() renderings, FEEDBACK_BUDGET characters in all.

    Every character of a rendering counts (keys, quotes, brackets and digits too: a child chooses them all),
    so the bound holds however the value is shaped: one long string, many short ones, or deep nests."""

    def __init__(self, chars: int = FEEDBACK_BUDGET):
        self.left = chars

    def value(self, value) -> str:
        """`value` as ascii() writes it (printable ASCII, escapes for the rest), cut to what the budget has left."""
        text = ascii(value)
        kept = text[: self.left]
        self.left -= len(kept)
        return kept if len(kept) == len(text) else kept + "..."

    def kind(self, value) -> str:
        """The name of `value`'s type (grader/observed.py); the name of a class the child wrote counts toward the budget,
        and is shown only if it is a short dotted ASCII name."""
        name = kind(value)
        if type(value) is not Instance:
            return name
        plain = name.isascii() and len(name) <= TYPE_CHARS and all(part.isidentifier() for part in name.split("."))
        if not plain or len(name) > self.left:
            return "an object"
        self.left -= len(name)
        return name

    def key_kinds(self, mapping: dict) -> str:
        """The types of a dict's keys ('int keys', 'int and str keys'), each named as kind() names it."""
        found = {}
        for key in mapping:
            found.setdefault(kind(key), key)
        return " and ".join(sorted(self.kind(key) for key in found.values())) + " keys"

    def name(self, text) -> str:
        """An exception name the child reported, if it is a short ASCII identifier the budget still holds."""
        name = error_name(text)
        if name in ("an error", CELL_TIMEOUT) or len(name) > self.left:
            return "an error"
        self.left -= len(name)
        return name


def shown(value) -> str:
    """One value of a child in a judge's message: a message shows at most one, so a rule stays within its budget."""
    return Budget().value(value)


def short_text(text, limit: int = MAX_TEXT) -> str:
    """Free text from a child, cut to `limit` characters and to one line."""
    if type(text) is not str:
        return describe(text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


CELL_TIMEOUT = "the cell itself ran past the time limit"


def error_name(text) -> str:
    """Only the exception's type survives: its message is free text the student controls.

    The full traceback is in the student's own notebook run, which holds no reference.
    """
    if text == CELL_TIMEOUT:
        return text
    name = text.split(":", 1)[0].strip() if type(text) is str else ""
    return name if name.isascii() and name.isidentifier() and len(name) <= NAME_CHARS else "an error"
