"""Correct answers written another way get full marks (grader/assignments/<name>/corpus/).

Every notebook in grader/assignments/<name>/corpus/ was written by someone who saw only the student edition (its
language is in the file name), in a style of their own, and saved with nbformat.write. Each must score full
marks through `make autograde`'s pipeline; the structure tests keep the corpus honest: at least two answers
per TODO that differ from the reference, in both editions.
"""
import ast
import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from grader import autograde, editions
from grader.assignment import load
from grader.paths import assignment_names
from grader.submission import answers_of


def corpus(assignment: str) -> list[Path]:
    return load(assignment).corpus


def shape(source: str) -> str:
    """An answer's structure: its AST without docstrings, comments or layout."""
    try:
        tree = ast.parse(editions.strip_magics(source))
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignment_names())
def test_every_todo_has_two_answers_unlike_the_reference_in_both_editions(assignment):
    reference = editions.reference_answers(assignment)
    files = corpus(assignment)
    assert {f.stem.rsplit("-", 1)[-1] for f in files} >= {"en", "zh"}, "both editions are in the corpus"
    for gid, ref in reference.items():
        different = [f.name for f in files
                     if shape(answers_of(nbformat.read(f, as_version=4), [gid]).get(gid, "")) != shape(ref)]
        assert len(different) >= 2, f"{assignment} {gid}: only {different} differ from the reference"


def test_shape_tells_a_different_answer_from_a_reformatted_copy():
    ref = 'def f(xs):\n    """Doc."""\n    return sorted(xs)\n'
    assert shape(ref) == shape('def f(xs):\n    # a comment\n    return sorted( xs )\n')
    assert shape(ref) != shape("def f(xs):\n    import heapq\n    return heapq.nsmallest(len(xs), xs)\n")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignment_names())
def test_every_corpus_answer_scores_full_marks(assignment, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    for file in corpus(assignment):
        shutil.copy(file, subs / file.name)
    autograde.run(assignment, subs, out, jobs=0, cell_timeout=60)
    rows = list(csv.DictReader(open(out / "grades.csv")))
    assert len(rows) == len(corpus(assignment))
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    lost = {row["student_id"]: {k: v for k, v in row.items() if k != "student_id"}
            for row in rows if float(row["total"]) != float(row["max_total"])}
    details = {sid: [(v["task_id"], r["name"], r["detail"]) for v in report[sid]["verdicts"] for r in v["rules"]
                     if not r["passed"]] for sid in lost}
    assert lost == {}, details
    languages = {report[f.stem]["language"] for f in corpus(assignment) if f.stem in report}
    assert languages == {"en", "zh"}
