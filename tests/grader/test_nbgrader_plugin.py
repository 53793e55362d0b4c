"""Our grading inside a standard nbgrader course: the collect layout, then plain `nbgrader autograde`,
`nbgrader generate_feedback` and `nbgrader export`, configured only by the two documented lines."""
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hostile
from conftest import ROOT
from grader import build, examples, masters
from grader.feedback import visible_text
from grader.masters import hidden_snippets
from grader.mutants import MUTANTS, mutated_answers
from grader.pipeline import grader_for
from grader.submission import answers_of
from grader.assignment import load
from grader.runner import leftovers, sandbox_level

NAME = "02_decode_scheduling"
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], cwd=course, capture_output=True,
                          text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = build.make_course(tmp_path_factory.mktemp("course"), [NAME], with_db=True)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(PLUGIN_LINES)
    mutant = next(m for m in MUTANTS[NAME] if m.passes_visible and m.answer_id == "todo3")
    subs = {"alice": examples.filled(NAME, masters.reference_answers(NAME)), "bob": examples.release(NAME),
            "carol": examples.filled(NAME, mutated_answers(NAME, mutant)),
            "ivan": examples.bad_submissions(NAME)["ivan_subverts_kernel"],
            "kim": hostile.submissions(NAME)["kim_relays"],  # blank stubs that relay the reference through the kernel
            # First in nbgrader's order: stock CheckCellMetadata on his scratch cells once stopped the whole class.
            "aaron": examples.layout_submissions(NAME)["pim_scratch_nbgrader_metadata"]}
    for sid, nb in subs.items():  # what `nbgrader collect` leaves: submitted/<student>/<assignment>/<notebook>.ipynb
        examples.write({NAME: nb}, course / "submitted" / sid / NAME)
    log = nbgrader(course, "autograde", NAME)
    kernel = leftovers()  # what sandbox uids hold once `nbgrader autograde` is done
    nbgrader(course, "generate_feedback", NAME)
    nbgrader(course, "export")
    return course, subs, log.stdout + log.stderr, kernel


def our_verdicts(nb):
    grader = grader_for(load(NAME))
    return grader.grade(answers_of(nb, grader.answer_ids))


def test_exported_scores_are_our_verdicts(course):
    folder, subs, _, _ = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert set(rows) == set(subs)
    for sid, nb in subs.items():
        total = sum(v.score for v in our_verdicts(nb))
        assert float(rows[sid]["raw_score"]) == pytest.approx(total, abs=0.01), sid
        assert float(rows[sid]["max_score"]) == 12
    assert float(rows["alice"]["raw_score"]) == 12 and float(rows["bob"]["raw_score"]) == 0
    assert 9 < float(rows["carol"]["raw_score"]) < 12  # the bug passes every visible check; only the sandbox sees it


def test_a_relay_between_todo_children_gains_nothing_and_leaves_the_host_clean(course):
    """kim's children publish whatever they hold as kernel keys and byte-range locks and read their own."""
    folder, _, _, kernel = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert float(rows["kim"]["raw_score"]) == 0
    if sandbox_level() == "bwrap":
        assert kernel == {"processes": {}, "keys": {}, "ipc": {}}


def test_a_scratch_cells_nbgrader_metadata_stops_no_one(course):
    """aaron's scratch cells carry nbgrader metadata of their own (no schema_version, a copied test cell, not even
    a dict): repaired before stock nbgrader checks it, so he and everyone after him are graded."""
    folder, _, log, _ = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert float(rows["aaron"]["raw_score"]) == 12 and float(rows["alice"]["raw_score"]) == 12
    assert "aaron: 4 cell(s) had nbgrader metadata the release does not have; it was removed" in log
    assert "\x1b" not in log  # his grade_id's escape never reached nbgrader's log


def test_a_silenced_kernel_gains_nothing_in_the_gradebook(course):
    """Stock nbgrader scores a test cell by the absence of errors in the student's kernel; ivan's kernel hides them."""
    from nbgrader.api import Gradebook

    folder, subs, _, _ = course
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        ivan = {g.name: g.auto_score for g in gb.find_submission_notebook(NAME, NAME, "ivan").grades}
        alice = {g.name: g.auto_score for g in gb.find_submission_notebook(NAME, NAME, "alice").grades}
    assert ivan["todo2_tests"] == 0 and ivan["todo1_tests"] == 2 and ivan["todo4_tests"] == 4
    assert alice == {"todo1_tests": 2, "todo2_tests": 3, "todo3_tests": 3, "todo4_tests": 4}


def test_generate_feedback_is_redacted_and_shows_the_verdicts(course):
    folder, _, _, _ = course
    hidden = hidden_snippets(masters.nbgrader_source(NAME))
    pages = {sid: visible_text((folder / "feedback" / sid / NAME / f"{NAME}.html").read_text()) for sid in ("alice", "carol")}
    for page in pages.values():
        assert not [line for line in hidden if line in page] and "BEGIN HIDDEN" not in page
    assert "TODO 3:" in pages["carol"] and "[FAIL]" in pages["carol"]
    carol = (folder / "feedback" / "carol" / NAME / f"{NAME}.html").read_text()
    assert carol.count("data:image/png") >= 4  # her own plots, from the sandboxed run


def test_the_autograded_notebook_keeps_its_tests_and_outputs_only_the_verdict(course):
    """The instructor's copy keeps the full test cells (nbgrader's checksums hold); no output shows a hidden line,
    since the run never held them, and each test cell's result is its sandboxed score."""
    import nbformat

    folder, _, _, _ = course
    hidden = hidden_snippets(masters.nbgrader_source(NAME))
    nb = nbformat.read(folder / "autograded" / "carol" / NAME / f"{NAME}.ipynb", as_version=4)
    tests = {masters.grade_id(c): c for c in nb.cells if (masters.grade_id(c) or "").endswith("_tests")}
    assert all("BEGIN HIDDEN TESTS" in c.source for c in tests.values())
    outputs = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=c.get("outputs", []))
                                                              for c in nb.cells if c.cell_type == "code"]))
    assert not [line for line in hidden if line in outputs]
    results = {gid: c.outputs[-1]["data"]["text/plain"] for gid, c in tests.items()}
    assert results["todo1_tests"] == "2" and float(results["todo3_tests"]) < 3
