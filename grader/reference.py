"""The reference implementation, assembled from the master source (never from a second copy)."""
from __future__ import annotations

import contextlib
import io

from . import masters


def namespace(assignment: str = "02_decode_scheduling", answers: dict[str, str] | None = None) -> dict:
    """Globals after running the given cells and the answers (default: the reference)."""
    nb = masters.read_master(assignment)
    answers = answers or masters.reference_answers(assignment)
    ns: dict = {"__name__": f"reference_{assignment}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for src in masters.grading_setup_sources(nb):
            exec(compile(masters.strip_magics(src), "<given cell>", "exec", dont_inherit=True), ns)
        for gid in masters.answer_ids(nb):
            exec(compile(answers[gid], f"<{gid}>", "exec", dont_inherit=True), ns)
    return ns
