"""Example submissions built from the release notebook: the demo's and the tests' inputs."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from . import editions
from .assignment import get
from .paths import NOTEBOOKS_DIR

HANG = "    while True:  # a bug that never returns\n        pass\n"
# Stock nbgrader marks a test cell passed when it has no error output. This wraps every later cell of the
# kernel in try/except, so no failing check ever shows an error.
SUBVERT = ("get_ipython().input_transformers_post.append(\n"
           "    lambda lines: ['try:\\n'] + ['    ' + line for line in lines] + ['\\nexcept BaseException:\\n    pass\\n'])\n")


def release(assignment: str, language: str = "en") -> nbformat.NotebookNode:
    """The student edition as JupyterLab holds it after opening: nbformat 4.5, every cell with an id."""
    folder = NOTEBOOKS_DIR if language == "en" else NOTEBOOKS_DIR / language
    nb = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    return nbformat.v4.upgrade(nb, from_version=4, from_minor=nb.nbformat_minor)


def filled(assignment: str, answers: dict[str, str], language: str = "en") -> nbformat.NotebookNode:
    """The student edition (of `language`) with the given answer cells typed in, as a student would."""
    nb = release(assignment, language)
    for cell in nb.cells:
        if editions.grade_id(cell) in answers:
            cell.source = answers[editions.grade_id(cell)]
    return nb


def demo_submissions(assignment: str) -> dict[str, nbformat.NotebookNode]:
    """The three the demo grades: full solution, untouched release, and one TODO broken."""
    reference = dict(get(assignment).reference)
    subs = {"alice_solution": filled(assignment, reference), "bob_untouched": release(assignment)}
    mutants = get(assignment).mutants
    target = next((m for m in mutants if m.passes_visible and m.answer_id.endswith("3")), None) or (mutants[0] if mutants else None)
    if target:
        subs[f"carol_bug_{target.answer_id}"] = filled(assignment, reference | {target.answer_id: target.apply(reference[target.answer_id])})
    return subs


def demo_class(assignment: str, alternatives: int = 2) -> dict[str, nbformat.NotebookNode]:
    """The demo's class: the three of demo_submissions, one student per mutant, correct answers written another
    way (the assignment's corpus/) and a blank Chinese edition; the class report (grader/class_report.py) reads it."""
    subs = demo_submissions(assignment)
    reference = dict(get(assignment).reference)
    for index, mutant in enumerate(get(assignment).mutants):
        subs[f"m{index:02d}_{mutant.answer_id}"] = filled(assignment, reference | {mutant.answer_id: mutant.apply(reference[mutant.answer_id])})
    for path in sorted(get(assignment).corpus)[:alternatives]:
        subs[f"alt_{path.stem.replace('-', '_')}"] = nbformat.read(path, as_version=4)
    subs["zoe_untouched_zh"] = release(assignment, "zh")
    return subs


def class_submissions(assignment: str, bugs: int = 6) -> dict[str, nbformat.NotebookNode]:
    """A small class for `make bench`: a perfect notebook, a blank one, and `bugs` with one bug each (TODOs in turn)."""
    reference = dict(get(assignment).reference)
    subs = {"perfect": filled(assignment, reference), "blank": release(assignment)}
    for index, mutant in enumerate(mutants_in_turn(assignment, bugs)):
        subs[f"bug{index}_{mutant.answer_id}"] = filled(assignment, reference | {mutant.answer_id: mutant.apply(reference[mutant.answer_id])})
    return subs


def mutants_in_turn(assignment: str, count: int) -> list:
    """Up to `count` of the assignment's mutants, the TODOs in turn: each TODO's first, then each one's second, ..."""
    by_todo: dict[str, list] = {}
    for mutant in get(assignment).mutants:
        by_todo.setdefault(mutant.answer_id, []).append(mutant)
    return [ms[turn] for turn in range(count) for ms in by_todo.values() if turn < len(ms)][:count]


def signed(nb: nbformat.NotebookNode, answer_ids, who: str) -> nbformat.NotebookNode:
    """A copy of `nb` whose answer cells end with a comment naming `who`, so that no two students' answers are alike."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if editions.grade_id(cell) in answer_ids:
            cell.source = cell.source.rstrip("\n") + f"\n# student {who}\n"
    return nb


def varied_class(assignment: str, size: int) -> dict[str, nbformat.NotebookNode]:
    """`size` submissions in which no two answer cells are the same text, as in a real class. In turn a correct
    notebook (the reference, then each independent answer of corpus/, both languages) and one with a common
    mistake (each mutant in turn); every 8th is blank. Each answer cell is signed by its student (a comment),
    so no verdict can be reused from another student."""
    a = get(assignment)
    reference = dict(a.reference)
    correct = [("ref", filled(assignment, reference)), *((p.stem.split("-")[0], nbformat.read(p, as_version=4)) for p in sorted(a.corpus))]
    wrong = [(f"m{i:02d}", filled(assignment, reference | {m.answer_id: m.apply(reference[m.answer_id])})) for i, m in enumerate(a.mutants)]
    subs, turns = {}, {True: 0, False: 0}
    for index in range(size):
        if index % 8 == 7:
            kind, base = "blank", release(assignment)
        else:
            right = index % 2 == 0 or not wrong
            pool = correct if right else wrong
            kind, base = pool[turns[right] % len(pool)]
            turns[right] += 1
        subs[f"s{index:03d}_{kind}"] = signed(base, a.answer_ids, f"s{index:03d}")
    return subs


def one_bug_class(assignment: str, size: int = 8) -> dict[str, nbformat.NotebookNode]:
    """`size` submissions, no two answer cells alike: a correct one, then one per mutant with that one wrong TODO (the
    TODOs in turn), then a blank one; each answer cell signed by its student, as in varied_class."""
    a = get(assignment)
    reference = dict(a.reference)
    bases = [("ref", filled(assignment, reference))]
    bases += [(f"bug_{m.answer_id}", filled(assignment, reference | {m.answer_id: m.apply(reference[m.answer_id])}))
              for m in mutants_in_turn(assignment, size - 2)]
    bases.append(("blank", release(assignment)))
    return {f"b{index:03d}_{kind}": signed(base, a.answer_ids, f"b{index:03d}") for index, (kind, base) in enumerate(bases)}


def hanging(assignment: str, answer_id: str) -> nbformat.NotebookNode:
    """The reference with an infinite loop at the top of one TODO's function."""
    reference = dict(get(assignment).reference)
    return filled(assignment, reference | {answer_id: _insert_after_docstring(reference[answer_id], HANG)})


def bad_submissions(assignment: str) -> dict[str, str | nbformat.NotebookNode]:
    """Submissions that must be reported, not crash the batch: unreadable, foreign, hanging, cheating."""
    reference = dict(get(assignment).reference)
    answer_ids = get(assignment).answer_ids
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('my other homework')")])
    hang_target = answer_ids[min(2, len(answer_ids) - 1)]
    hanging = reference | {hang_target: _insert_after_docstring(reference[hang_target], HANG)}
    subverting = reference | {answer_ids[1]: SUBVERT + release_answers(assignment)[answer_ids[1]]}  # a stub that silences the kernel
    return {"dan_bad_json": '{"cells": [ this is not json', "erin_other_notebook": other,
            f"heidi_hangs_in_{hang_target}": filled(assignment, hanging),
            "ivan_subverts_kernel": filled(assignment, subverting)}


def release_answers(assignment: str) -> dict[str, str]:
    """The stubs of the student edition, by answer grade_id."""
    answer_ids = get(assignment).answer_ids
    return {editions.grade_id(c): c.source for c in release(assignment).cells if editions.grade_id(c) in answer_ids}


def layout_submissions(assignment: str) -> dict[str, nbformat.NotebookNode]:
    """Correct answers with accidents of layout; each must cost nothing, or only the TODO it touches."""
    reference = dict(get(assignment).reference)
    answer_ids = get(assignment).answer_ids
    first, last = answer_ids[0], answer_ids[-1]

    def edit(change) -> nbformat.NotebookNode:
        nb = filled(assignment, reference)
        change(nb.cells)
        return nb

    def index(cells, gid: str) -> int:
        return next(i for i, c in enumerate(cells) if editions.grade_id(c) == gid)

    def duplicate(gid: str, source: str | None = None, after: bool = False):
        def change(cells):
            at = index(cells, gid)
            copied = copy.deepcopy(cells[at])
            copied["id"] = f"{copied.get('id', 'cell')}-copy"  # JupyterLab gives a pasted cell a new id
            if source is not None:
                copied.source = source
            cells.insert(at + after, copied)  # the last copy is the one graded
        return change

    def delete(gid: str):
        return lambda cells: cells.pop(index(cells, gid))

    def move_up(gid: str):
        def change(cells):
            moved = cells.pop(index(cells, gid))
            cells.insert(index(cells, first), moved)
        return change

    def scratch(cells):
        cells.insert(0, nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np  # my own set-up"))
        cells.append(nbformat.v4.new_code_cell("x = 1 + 1  # scratch work"))

    def edit_test(cells):
        cells[index(cells, f"{first}_tests")].source = "print('I changed the checks')"

    def nbgrader_scratch(cells):  # stock nbgrader's CheckCellMetadata raises on each: it would stop the class
        marked = [nbformat.v4.new_code_cell("x = 2  # scratch"), nbformat.v4.new_markdown_cell("my notes"),
                  nbformat.v4.new_code_cell("y = 3"), copy.deepcopy(cells[index(cells, f"{first}_tests")])]
        marked[0].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "grade_id": "scratch"}
        marked[1].metadata["nbgrader"] = {"solution": True, "grade_id": "notes\x1b]0;owned\x07", "schema_version": 3}
        marked[2].metadata["nbgrader"] = "copied from a forum"
        marked[3].metadata["nbgrader"]["grade_id"] = f"{first}_tests_copy"
        marked[3]["id"] = "pasted-copy"
        cells.extend(marked)

    kernel = edit(lambda cells: None)
    kernel.metadata["kernelspec"] = {"name": "python3.11-venv", "display_name": "My venv", "language": "python"}
    return {
        "kai_deleted_test_cell": edit(delete(f"{last}_tests")),
        "lea_duplicated_test_cell": edit(duplicate(f"{first}_tests")),
        "max_edited_test_cell": edit(edit_test),
        "nia_moved_test_cell": edit(move_up(f"{last}_tests")),
        "oli_extra_cells": edit(scratch),
        "pia_other_kernel": kernel,
        "pim_scratch_nbgrader_metadata": edit(nbgrader_scratch),
        "quinn_duplicated_answer_last_wins": edit(duplicate(first, release_answers(assignment)[first])),
        f"ravi_duplicated_answer_stub_last_{first}": edit(duplicate(first, release_answers(assignment)[first], after=True)),
        f"sam_deleted_answer_{last}": edit(delete(last)),
    }


def _insert_after_docstring(source: str, code: str) -> str:
    """Put `code` right after the (one-line) docstring of the function in `source`."""
    lines = source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"""' in line) + 1
    return "".join(lines[:at]) + code + "".join(lines[at:])


def write(subs: dict, folder: Path, form: str = "lines") -> list[Path]:
    """Save each submission as a student's tool would.

    form "lines": `nbformat.write`, as the Jupyter server, JupyterLab, Notebook 7 and Colab save (sources
    are lists of lines); "string": one string per source, as some older tools save.
    """
    if form not in ("lines", "string"):
        raise ValueError(f"form must be 'lines' or 'string', not {form!r}")
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, nb in subs.items():
        path = folder / f"{student}.ipynb"
        if isinstance(nb, str):
            path.write_text(nb)
        elif form == "lines":
            nbformat.write(nb, path)
        else:
            path.write_text(json.dumps(nb, indent=1))
        paths.append(path)
    return paths
