"""Example submissions built from the release notebook: the demo's and the tests' inputs."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from . import masters
from .mutants import MUTANTS
from .paths import NOTEBOOKS_DIR

HANG = "    while True:  # a bug that never returns\n        pass\n"
# Stock nbgrader marks a test cell passed when it has no error output. This wraps every later cell of the
# kernel in try/except, so no failing check ever shows an error.
SUBVERT = ("get_ipython().input_transformers_post.append(\n"
           "    lambda lines: ['try:\\n'] + ['    ' + line for line in lines] + ['\\nexcept BaseException:\\n    pass\\n'])\n")


def release(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS_DIR / f"{assignment}.ipynb", as_version=4)


def filled(assignment: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The student edition with the given answer cells typed in, as a student would."""
    nb = release(assignment)
    for cell in nb.cells:
        if masters.grade_id(cell) in answers:
            cell.source = answers[masters.grade_id(cell)]
    return nb


def demo_submissions(assignment: str) -> dict[str, nbformat.NotebookNode]:
    """The three the demo grades: full solution, untouched release, and one TODO broken."""
    reference = masters.reference_answers(assignment)
    subs = {"alice_solution": filled(assignment, reference), "bob_untouched": release(assignment)}
    mutants = MUTANTS.get(assignment, [])
    target = next((m for m in mutants if m.passes_visible and m.answer_id.endswith("3")), None) or (mutants[0] if mutants else None)
    if target:
        subs[f"carol_bug_{target.answer_id}"] = filled(assignment, reference | {target.answer_id: target.apply(reference[target.answer_id])})
    return subs


def bad_submissions(assignment: str) -> dict[str, str | nbformat.NotebookNode]:
    """Submissions that must be reported, not crash the batch."""
    reference = masters.reference_answers(assignment)
    answer_ids = masters.answer_ids(masters.nbgrader_source(assignment))
    deleted, duplicated = release(assignment), release(assignment)
    deleted.cells = [c for c in deleted.cells if masters.grade_id(c) != answer_ids[-1]]
    dup_index = next(i for i, c in enumerate(duplicated.cells) if masters.grade_id(c) == answer_ids[0])
    duplicated.cells.insert(dup_index, copy.deepcopy(duplicated.cells[dup_index]))
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('my other homework')")])
    hang_target = answer_ids[min(2, len(answer_ids) - 1)]
    hanging = reference | {hang_target: _insert_after_docstring(reference[hang_target], HANG)}
    release_answers = {masters.grade_id(c): c.source for c in release(assignment).cells if masters.grade_id(c) in answer_ids}
    subverting = reference | {answer_ids[1]: SUBVERT + release_answers[answer_ids[1]]}  # a stub that silences the kernel
    return {"dan_bad_json": '{"cells": [ this is not json', "erin_other_notebook": other, "frank_deleted_cell": deleted,
            "grace_duplicated_cell": duplicated, f"heidi_hangs_in_{hang_target}": filled(assignment, hanging),
            "ivan_subverts_kernel": filled(assignment, subverting)}


def _insert_after_docstring(source: str, code: str) -> str:
    """Put `code` right after the (one-line) docstring of the function in `source`."""
    lines = source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"""' in line) + 1
    return "".join(lines[:at]) + code + "".join(lines[at:])


def write(subs: dict, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, nb in subs.items():
        path = folder / f"{student}.ipynb"
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            path.write_text(json.dumps(nb, indent=1))
        paths.append(path)
    return paths
