"""A failing hidden scenario as code a student can paste into a scratch cell and run.

Each assignment's driver replays ops of its own shape; its `cases` module (grader/assignments/<name>/cases.py)
turns the same ops into the calls they stand for: call(op), and optionally state(ops, part), result(shown, lines)
and helpers(shown). This module holds what is shared. A case longer than MAX_LINES or MAX_CHARS is first cut
down by grader/shrink.py; whatever is left is shown as it is.
"""
from __future__ import annotations

import builtins
import re
import textwrap

MAX_LINES = 25      # a case longer than this is cut down before it is shown
MAX_CHARS = 2500
WIDTH = 100         # a list whose code is longer than this is written one item per line


def fits(code: str) -> bool:
    """Short enough to show as it is."""
    return len(code.splitlines()) <= MAX_LINES and len(code) <= MAX_CHARS


def literal(value) -> str:
    """A value as code; a long list one item per line, so that a student reads (and edits) it item by item."""
    text = repr(value)
    if len(text) <= WIDTH or type(value) is not list or len(value) < 2:
        return text
    return "[\n" + "".join(f"    {item!r},\n" for item in value) + "]"


def kwargs(args: dict) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in args.items())


def function_call(op: list) -> str:
    """One op of a function-call driver: [name, [args...]]."""
    name, args = op
    return f"{name}({', '.join(literal(a) for a in args)})"


VISIBLE = "visible check"   # a case of a visible check cell (grader/contract.py): the call, as the cell has it


def call(cases, op: list) -> str:
    """One op as code: the assignment's cases.call, or a visible check's case as the check cell writes it."""
    return op[1] if op and op[0] == VISIBLE else cases.call(op)


def describe(cases, op: list, limit: int = 120) -> str:
    """One op, shortened for a one-line explanation."""
    text = call(cases, op)  # one line: lists written item by item are joined again
    for pattern, joined in ((r",\n\s*\]", "]"), (r"\[\n\s*", "["), (r",\n\s*", ", "), (r":\n\s*", ": "), (r"\n\s*", "; ")):
        text = re.sub(pattern, joined, text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def state_expression(cases, ops: list, part: str | None = None) -> str | None:
    """Code that shows the state the driver observes (its `part` that differs), ending in an expression."""
    state = getattr(cases, "state", None)
    return state(ops, part) if state else None


def _suppressed(line: str, error: str) -> str:
    """An op the reference raises on, wrapped so that the cell goes on to the ops after it."""
    error = error if isinstance(getattr(builtins, error, None), type) else "Exception"
    if "\n" not in line:
        return f"with suppress({error}): {line}"
    return f"with suppress({error}):\n" + textwrap.indent(line, "    ")


def snippet(cases, ops: list, upto: int | None = None, state: bool | str = False, errors: list | None = None) -> str:
    """The scenario up to op `upto` as code; it ends with the value (or, with `state`, the state) that differs.

    `state` may name the part of the state that differs (a key of the driver's snapshot).
    `errors`: the exception each op raised on the reference (or None); those ops are wrapped in suppress(), so
    the cell runs on past them as the replay does. Always code, however long: the grader cuts a long case down
    first (grader/shrink.py)."""
    shown = ops if upto is None else ops[: upto + 1]
    lines = [call(cases, op) for op in shown]
    if shown and all(op[0] == VISIBLE for op in shown):   # the check cell's own code: run it as it is
        return "\n".join(lines)
    last = len(shown) - 1 if state else len(shown) - 2  # the op that differs raises as it is, unless its state is shown
    wrapped = [i for i, error in enumerate((errors or [])[: last + 1]) if error]
    for i in wrapped:
        lines[i] = _suppressed(lines[i], errors[i])
    lines = _ending(cases, shown, lines, state)
    helpers = (["from contextlib import suppress"] if wrapped else []) + (cases.helpers(shown) if hasattr(cases, "helpers") else [])
    return "\n".join(helpers + lines)


def _ending(cases, shown: list, lines: list[str], state: bool | str) -> list[str]:
    """The lines with what the cell ends on: the state that differs, or the value (as the cases write it)."""
    expression = state_expression(cases, shown, state if isinstance(state, str) else None) if state else None
    if expression:
        lines.append(expression)
    elif hasattr(cases, "result"):
        lines = cases.result(shown, lines)
    return lines
