"""A TODO's marks are a function of the release, the set-up cells and that TODO's own answer cell only.

The property, over a product of notebooks (tests/own_cell.py): for every TODO of 01-03, notebooks that share its
answer cell byte for byte, and differ in every other answer cell, give it the same verdict, and that verdict is the
one its cell gets when graded on its own. The other cells range over the reference, a catalogued mistake, the cell
as released and three hostile shapes (a cell that installs correct bodies for the other TODOs through a swapped
decorator, computed names, setattr, exec and wrapped constructors; one that patches classes, builtins, sys.modules
and the import machinery to break them; one that leans on names only a hostile cell defines). It is checked through
`make autograde`'s path (grader/autograde.py, grader/pipeline.py) and through stock `nbgrader autograde` configured
by `configure(c)`. The issue's two attacks on notebook 02 are checked on both paths too.
"""
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

import own_cell
from conftest import ROOT
from grader import autograde, build, pipeline, sample_submissions
from grader.assignment import get
from grader.grade import Grader
from grader.paths import assignment_names

pytestmark = pytest.mark.slow
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


def marks(verdict) -> tuple:
    """What a verdict gives: the score, the note, and each rule's result with what the answer did where it departed.
    (A failing case's text is left out: a long one is cut down within a time budget, so its wording may vary.)"""
    return verdict.score, verdict.note, tuple((r.name, r.passed, r.seen) for r in verdict.rules)


_EXPECTED: dict[str, dict[tuple[str, str], tuple]] = {}


def expected(name: str) -> dict[tuple[str, str], tuple]:
    """{(answer grade_id, kind): marks} of each TODO's cell of each kind, graded on its own (a run of its own, never
    a verdict reused, a stub's included)."""
    if name not in _EXPECTED:
        grader = pipeline.grader_for(name)
        _EXPECTED[name] = {(task.answer_id, kind): marks(grader._grade_task(task, own_cell.cell(name, task.answer_id, kind)))
                           for task in grader.tasks for kind in own_cell.KINDS}
    return _EXPECTED[name]


@pytest.mark.parametrize("name", assignment_names())
def test_the_design_pairs_every_cell_with_notebooks_that_differ_everywhere_else(name):
    ids = get(name).answer_ids
    notebooks = own_cell.design(name)
    for gid in ids:
        for kind in own_cell.KINDS:
            sharing = [nb for nb in notebooks if nb[gid] == kind]
            assert len(sharing) == 2, (gid, kind)
            first, second = sharing
            assert all(first[j] != second[j] for j in ids if j != gid), (gid, kind, first, second)
    texts = {(gid, kind): own_cell.cell(name, gid, kind) for gid in ids for kind in own_cell.KINDS}
    assert len(set(texts.values())) == len(texts), "every kind is a different cell"


@pytest.mark.parametrize("name", assignment_names())
def test_the_hostile_cells_would_move_marks_in_a_shared_run(name):
    """Positive control: run together in one child (as the removed whole-notebook run did), a fixer makes a later
    TODO left as released behave as the reference, and an earlier leaning cell too; graded on its own, each scores 0."""
    grader = pipeline.grader_for(name)
    ids = grader.answer_ids
    released = {gid: own_cell.cell(name, gid, "released") for gid in ids}
    for layout, target in (({ids[0]: "fixer", ids[1]: "released"}, ids[1]), ({ids[0]: "leaning", ids[1]: "fixer"}, ids[0])):
        cells = released | {gid: own_cell.cell(name, gid, kind) for gid, kind in layout.items()}
        task = next(t for t in grader.tasks if t.answer_id == target)
        # The hidden scenarios, not the visible checks' cases: a fixer's wrapped constructor also overrides the stand-ins
        # those checks define for other TODOs (03's BudgetOnly), so there it is no help.
        scenarios = [sc for sc in grader._named(task) if sc["ops"][0][0] != "visible check"]
        run = grader._run([(gid, cells[gid]) for gid in ids], scenarios)
        observed = {rec["name"]: rec["obs"] for rec in run.records if rec["kind"] == "scenario"}
        assert run.status == "ok" and observed == {sc["name"]: grader.expected[sc["name"]] for sc in scenarios}, (name, layout)
        assert expected(name)[(target, layout[target])][0] == 0, (name, layout)


def _no_reuse(monkeypatch):
    """Every answer is run: no verdict is taken from an identical answer graded earlier in this process."""
    monkeypatch.setattr(Grader, "grade_task", Grader._grade_task)


@pytest.mark.parametrize("name", assignment_names())
def test_through_make_autograde_a_todos_verdict_is_its_own_cells(name, tmp_path, monkeypatch):
    notebooks = own_cell.design(name)
    subs = {f"n{i:02d}": own_cell.notebook(name, kinds, "zh" if i % 4 == 3 else "en") for i, kinds in enumerate(notebooks)}
    sample_submissions.write(subs, tmp_path / "subs")   # as Jupyter saves them: sources as lists of lines
    want = expected(name)
    _no_reuse(monkeypatch)
    outcomes = {o.student_id: o for o in autograde.run(name, tmp_path / "subs", tmp_path / "out")}
    assert set(outcomes) == set(subs) and all(o.status == "graded" for o in outcomes.values())
    by_cell: dict[tuple[str, str], set] = {}
    for i, kinds in enumerate(notebooks):
        got = {v.answer_id: marks(v) for v in outcomes[f"n{i:02d}"].verdicts}
        for gid, kind in kinds.items():
            assert got[gid] == want[(gid, kind)], (name, f"n{i:02d}", gid, kind)
            by_cell.setdefault((gid, kind), set()).add(got[gid])
    assert all(len(seen) == 1 for seen in by_cell.values())
    assert len(by_cell) == len(get(name).answer_ids) * len(own_cell.KINDS)


def attack_scores() -> dict[str, dict[str, float]]:
    """The issue's attacks: each TODO's score on its own cell (TODO 2: 0, as its cell alone scores)."""
    grader = pipeline.grader_for("02_decode_scheduling")
    found = {}
    for attack, (_, answers) in own_cell.attacks().items():
        found[attack] = {t.answer_id: grader._grade_task(t, answers[t.answer_id]).score for t in grader.tasks}
        assert found[attack]["todo2"] == 0 and found[attack]["todo3"] == 3 and found[attack]["todo4"] == 4, (attack, found)
    return found


def test_through_make_autograde_the_issues_attacks_get_their_own_cells_verdicts(tmp_path):
    subs = {attack: sample_submissions.filled(name, answers) for attack, (name, answers) in own_cell.attacks().items()}
    sample_submissions.write(subs, tmp_path / "subs")
    outcomes = {o.student_id: o for o in autograde.run("02_decode_scheduling", tmp_path / "subs", tmp_path / "out")}
    released = pipeline.grader_for("02_decode_scheduling")._released(sample_submissions.release_answers("02_decode_scheduling"))
    for attack, scores in attack_scores().items():
        assert outcomes[attack].scores == scores, attack
        todo2 = next(v for v in outcomes[attack].verdicts if v.answer_id == "todo2")
        if attack == "wrapped_init":   # left as released: the stub's verdict, as shipped
            assert dataclasses.asdict(todo2) == dataclasses.asdict(released["todo2"])


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], cwd=course, capture_output=True,
                          text=True, env=env, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


def test_through_stock_nbgrader_a_todos_score_is_its_own_cells(tmp_path):
    """Stock `nbgrader autograde` with the two documented lines: each TODO's score in the gradebook is the one its cell
    gets on its own, in the first family of the design (every cell of every kind, once) and for the issue's attacks."""
    from nbgrader.api import Gradebook

    names = assignment_names()
    course = build.make_course(tmp_path / "course", names, with_db=True)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(PLUGIN_LINES)
    planned = {}
    for name in names:
        for i, kinds in enumerate(own_cell.design(name)[: len(own_cell.KINDS)]):
            planned[(name, f"n{i:02d}")] = {gid: expected(name)[(gid, kind)][0] for gid, kind in kinds.items()}
            sample_submissions.write({name: own_cell.notebook(name, kinds)}, course / "submitted" / f"n{i:02d}" / name)
    for attack, (name, answers) in own_cell.attacks().items():
        planned[(name, attack)] = attack_scores()[attack]
        sample_submissions.write({name: sample_submissions.filled(name, answers)}, course / "submitted" / attack / name)
    for name in names:
        nbgrader(course, "autograde", name)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for (name, student), scores in planned.items():
            got = {g.name: g.auto_score for g in gb.find_submission_notebook(name, name, student).grades}
            tasks = {t.answer_id: t.test_id for t in pipeline.grader_for(name).tasks}
            assert {gid: got[test] for gid, test in tasks.items()} == pytest.approx(scores), (name, student)
