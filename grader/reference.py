"""The reference implementation, assembled from the master source (never from a second copy)."""
from __future__ import annotations

import contextlib
import io

from . import editions
from .assignment import Assignment, get


def namespace(assignment: Assignment | str = "02_decode_scheduling", answers: dict[str, str] | None = None) -> dict:
    """Globals after running the given cells and the answers (default: the reference)."""
    assignment = get(assignment)
    answers = answers or assignment.reference
    ns: dict = {"__name__": f"reference_{assignment.name}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for src in assignment.setup:
            exec(compile(editions.strip_magics(src), "<given cell>", "exec", dont_inherit=True), ns)
        for gid in assignment.answer_ids:
            exec(compile(answers[gid], f"<{gid}>", "exec", dont_inherit=True), ns)
    return ns
