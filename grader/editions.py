"""Read a master source and derive its editions (nbgrader source, solved) and its reference answers.

What a cell is (grade_id, tags, solution and hidden-test regions) is grader/cells.py's, read from the cell alone;
editions re-exports those names, so editions.grade_id and the rest work where callers know them.
"""
from __future__ import annotations

import jupytext
import nbformat

from . import course
from .cells import (GRADING_SETUP_TAG, HIDDEN_RE, SOLUTION_MARK_RE, SOLUTION_ONLY_TAG,  # noqa: F401 - re-exported
                    answer_ids, cells_by_grade_id, grade_id, grading_setup_sources, hidden_snippets, nbgrader_meta,
                    reference_of, strip_hidden, strip_magics, strip_solution_marks, tags, test_ids, without_solution_prose)
from .paths import master_path

SETUP_ID = "setup_imports"


def read_master(name: str, language: str = "en") -> nbformat.NotebookNode:
    """The master notebook, parsed from its jupytext percent source, in `language` (see translation.py),
    with the course set-up code filled in (after translation: it comes from course.toml, not the master, and
    speaks the edition's language)."""
    from .translation import translate

    nb = jupytext.read(master_path(name))
    nb.metadata.pop("jupytext", None)
    nb = translate(nb, name, language)
    setup = [c for c in nb.cells if grade_id(c) == SETUP_ID]
    if len(setup) != 1:
        raise ValueError(f"{master_path(name)}: expected one cell with grade_id {SETUP_ID!r}, found {len(setup)}")
    setup[0].source = course.expand(setup[0].source, language=language)
    return nb


def nbgrader_source(name: str, language: str = "en") -> nbformat.NotebookNode:
    """What nbgrader sees as the source: all cells except solution-edition prose."""
    return without_solution_prose(read_master(name, language))


def solved_edition(name: str, language: str = "en") -> nbformat.NotebookNode:
    """The self-study edition: solutions in place, hidden tests and nbgrader markup removed."""
    nb = read_master(name, language)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = strip_solution_marks(strip_hidden(cell.source)).rstrip()
        cell.metadata.pop("nbgrader", None)
    return nb


def reference_answers(name: str) -> dict[str, str]:
    """grade_id -> the reference solution's source, solution markers removed."""
    return reference_of(read_master(name))
