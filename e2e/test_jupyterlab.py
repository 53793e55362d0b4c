"""A student's path through a real JupyterLab, then the instructor's `make autograde` on the saved files.

For each assignment: open the student edition in Chromium, type each TODO's answer into its cell
through the editor, Run All from the menu, save with Ctrl+S. One copy gets the reference answers,
a second copy one broken TODO. JupyterLab writes the files (sources as lists of lines), and
`make autograde` grades them: full marks for the first, points lost on the broken TODO only for
the second. Screenshots of every step land in build/e2e/.
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, step
from grader import editions
from grader.assignment import MUTANTS, mutated_answers
from grader.paths import NOTEBOOKS_DIR, assignment_names

RUN_TIMEOUT_MS = 180_000
NOTEBOOK = "#jp-main-dock-panel .jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"  # the notebook in the open tab


def broken_variant(assignment: str):
    """A mutant of TODO 2 (one that passes the visible checks if there is one)."""
    candidates = [m for m in MUTANTS[assignment] if m.answer_id == "todo2"]
    return next((m for m in candidates if m.passes_visible), candidates[0])


def answer_cell_indexes(path: Path) -> tuple[dict[str, int], int]:
    """Index of each answer cell, and the number of cells."""
    nb = nbformat.read(path, as_version=4)
    return {editions.grade_id(c): i for i, c in enumerate(nb.cells) if editions.nbgrader_meta(c).get("solution")}, len(nb.cells)


def open_notebook(page, server: dict, name: str, num_cells: int) -> None:
    """Open one notebook in a fresh workspace (`reset`: no tabs restored) and wait until all its cells show."""
    page.goto(f"{server['url']}/lab/tree/{name}?reset&token={server['token']}")
    page.wait_for_function("([name, n]) => {"
                           " const tab = document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel');"
                           f" return tab && tab.textContent === name && document.querySelectorAll('{NOTEBOOK} .jp-Cell').length === n; }}",
                           arg=[name, num_cells], timeout=90_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-DebuggerBugButton, .jp-KernelStatus",
                           timeout=90_000)
    dismiss_dialogs(page)


def dismiss_dialogs(page) -> None:
    """Close a kernel-selection or notification dialog if one opened."""
    for _ in range(3):
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            return
        dialog.locator(".jp-mod-accept").first.click()
        page.wait_for_timeout(300)


def type_answer(page, cell_index: int, source: str) -> None:
    """Replace a cell's text through its editor, as a student's paste would."""
    cell = page.locator(f"{NOTEBOOK} .jp-Cell").nth(cell_index)
    cell.scroll_into_view_if_needed()
    editor = cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")  # leave edit mode


def run_all_and_save(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).first.click()
    # Run All stops at the first cell that raises (a TODO check may); wait until nothing is queued or running.
    page.wait_for_function(f"() => !Array.from(document.querySelectorAll('{NOTEBOOK} .jp-InputPrompt'))"
                           ".some(p => p.textContent.includes('[*]'))", timeout=RUN_TIMEOUT_MS)
    page.keyboard.press("Control+S")
    page.wait_for_function("() => !document.querySelector('.jp-mod-current.jp-mod-dirty, .lm-TabBar-tab.jp-mod-current.jp-mod-dirty')",
                           timeout=30_000)


def grades_for(assignment: str, submissions: Path, out: Path) -> dict[str, dict[str, float]]:
    proc = subprocess.run(["make", "autograde", f"ASSIGNMENT={assignment}", f"SUBMISSIONS={submissions}", f"OUT={out}", "JOBS=2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"make autograde failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    with open(out / "grades.csv") as handle:
        return {row.pop("student_id"): {k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)}


@pytest.mark.parametrize("assignment", assignment_names())
def test_saved_from_jupyterlab_and_graded(assignment, lab_server, browser, shots, tmp_path):
    workspace = lab_server["workspace"]
    mutant = broken_variant(assignment)
    copies = {"right": editions.reference_answers(assignment), f"wrong_{mutant.answer_id}": mutated_answers(assignment, mutant)}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    saved = {}
    for label, answers in copies.items():
        name = f"{assignment}__{label}.ipynb"
        shutil.copy(NOTEBOOKS_DIR / f"{assignment}.ipynb", workspace / name)
        cells, num_cells = answer_cell_indexes(workspace / name)
        with step(page, shots, f"{assignment} {label}: open the student edition"):
            open_notebook(page, lab_server, name, num_cells)
        for gid, index in cells.items():
            with step(page, shots, f"{assignment} {label}: type {gid}"):
                type_answer(page, index, answers[gid])
        with step(page, shots, f"{assignment} {label}: run all and save"):
            run_all_and_save(page)
            page.keyboard.press("Alt+W")  # close the tab, as a student moving on would
        saved[label] = workspace / name
    page.close()

    with step(page, shots, f"{assignment}: the files are as JupyterLab saved them"):
        for label, path in saved.items():
            raw = json.loads(path.read_text())
            by_id = {c["metadata"].get("nbgrader", {}).get("grade_id"): c for c in raw["cells"]}
            assert isinstance(by_id["todo1"]["source"], list), "JupyterLab saves sources as lists of lines"
            for gid, source in copies[label].items():
                assert "".join(by_id[gid]["source"]).strip() == source.strip(), f"{label}: {gid} was not saved as typed"
            assert any(c.get("outputs") for c in raw["cells"]), "the notebook was run before saving"

    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for label, path in saved.items():
        shutil.copy(path, submissions / f"{label}.ipynb")
    grades = grades_for(assignment, submissions, tmp_path / "out")
    full = {k: v for k, v in grades["right"].items()}
    assert full["total"] == full["max_total"] > 0, grades
    wrong = grades[f"wrong_{mutant.answer_id}"]
    assert wrong[mutant.answer_id] < full[mutant.answer_id], grades
    assert {k: v for k, v in wrong.items() if k not in (mutant.answer_id, "total")} == \
        {k: v for k, v in full.items() if k not in (mutant.answer_id, "total")}, grades
    for student in grades:
        shutil.copy(tmp_path / "out" / "feedback" / f"{student}.html", shots / f"{assignment}__{student}-feedback.html")
