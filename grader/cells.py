"""A notebook cell as nbgrader and the grader read it: its grade_id, tags and regions, from the cell alone.

grader/editions.py reads a master source into a notebook and derives its editions with these; the hidden suite's
visible checks (grader/contract.py) and the similarity of answers read cells with them too, without reading a
master. editions re-exports each name (editions.grade_id, editions.strip_hidden, ...), where most callers know them.
"""
from __future__ import annotations

import copy
import re

import nbformat

SOLUTION_ONLY_TAG = "solution-edition"
GRADING_SETUP_TAG = "grading-setup"
HIDDEN_RE = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)
SOLUTION_MARK_RE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*(\n|\Z)", re.M)


def nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}  # a student's file may hold anything there


def grade_id(cell) -> str | None:
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def strip_hidden(source: str) -> str:
    """Remove ### BEGIN/END HIDDEN TESTS regions."""
    return HIDDEN_RE.sub("", source)


def strip_solution_marks(source: str) -> str:
    """Drop the ### BEGIN/END SOLUTION lines, keep the code between them."""
    return SOLUTION_MARK_RE.sub("", source)


def without_solution_prose(nb) -> nbformat.NotebookNode:
    """A copy of a master notebook without its solution-edition cells."""
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if SOLUTION_ONLY_TAG not in tags(c)]
    return nb


def cells_by_grade_id(nb) -> dict[str, list]:
    """grade_id -> the cells carrying it (a list, so duplicates are visible)."""
    found: dict[str, list] = {}
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid:
            found.setdefault(gid, []).append(cell)
    return found


def answer_ids(nb) -> list[str]:
    """grade_ids of the answer (solution) cells, in notebook order."""
    return [grade_id(c) for c in nb.cells if nbgrader_meta(c).get("solution") and grade_id(c)]


def test_ids(nb) -> list[str]:
    """grade_ids of the autograded test cells, in notebook order."""
    return [grade_id(c) for c in nb.cells if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")]


def strip_magics(source: str) -> str:
    """IPython magics and shell escapes blanked out (the grading child does the same), so plain Python runs it."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def grading_setup_sources(nb) -> list[str]:
    """Sources of the given cells that the grader replays before the answer cells."""
    return [c.source for c in nb.cells if GRADING_SETUP_TAG in tags(c)]


def reference_of(nb) -> dict[str, str]:
    """grade_id -> the source of each answer cell of a master notebook, solution markers removed."""
    return {gid: strip_solution_marks(cells[0].source) for gid, cells in cells_by_grade_id(nb).items()
            if nbgrader_meta(cells[0]).get("solution")}


def hidden_snippets(source) -> list[str]:
    """Lines found only in hidden-test regions (long enough to be distinctive)."""
    hidden, visible = set(), set()
    for cell in source.cells:
        for region in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", cell.source, re.S):
            hidden |= {line.strip() for line in region.splitlines()}
        visible |= {line.strip() for line in strip_hidden(cell.source).splitlines()}
    return sorted(line for line in hidden - visible if len(line) >= 20)
