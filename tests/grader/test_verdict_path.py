"""The one verdict path (grader/grade.py, Grader.grade): each TODO graded in its own child, on its own cell; what
is shared around it (a child's records read as the reference's, the bench class, the feedback run's shortcuts).

The property that a TODO's marks come from its own cell alone is tests/grader/test_own_cell.py.
"""

import nbformat
import pytest

from grader import editions, pipeline, sample_submissions, submission
from grader.feedback import visible_text
from grader.assignment import get
from grader.paths import assignment_names
from grader.verdict import Outcome


@pytest.fixture(scope="module", params=assignment_names())
def grader(request):
    return pipeline.grader_for(request.param)


@pytest.mark.slow
def test_a_todo_whose_cell_raises_after_a_right_answer_says_so(grader):
    """Its cell raised after defining everything right: the verdict's note names the error."""
    first = grader.answer_ids[0]
    notebook = dict(grader.reference) | {first: grader.reference[first] + "\n\nraise ValueError('after the answer')\n"}
    verdict = grader.grade(notebook)[0]
    assert "ValueError" in str(verdict.note) and verdict.status == "raised"


@pytest.mark.slow
def test_a_correct_childs_records_are_the_references_own_not_parsed_again(grader):
    """The protocol's fast path really meets a real child's lines: every observation of a correct run is taken as is."""
    cells = [(gid, grader.reference[gid] + "\n# mine\n") for gid in grader.answer_ids]
    run = grader._run(cells, [sc for task in grader.tasks for sc in grader._named(task)])
    scenarios = [rec for rec in run.records if rec["kind"] == "scenario"]
    assert run.status == "ok" and scenarios
    assert all(rec["obs"] is grader.expected[rec["name"]] for rec in scenarios)


@pytest.mark.slow
def test_the_benchmark_classes_reuse_no_answer():
    """make bench's classes: no two students share an answer cell, so no verdict can be reused; in the second, six of
    eight have exactly one wrong TODO."""
    for name in ("02_decode_scheduling", "03_batch_scheduling"):
        ids = get(name).answer_ids
        for subs in (sample_submissions.varied_class(name, 24), sample_submissions.one_bug_class(name, 8)):
            sources = [submission.answers_of(nb, ids) for nb in subs.values()]
            for gid in ids:
                texts = [s[gid] for s in sources]
                assert len(set(texts)) == len(texts), gid
        kinds = {sid.split("_", 1)[1] for sid in sample_submissions.varied_class(name, 24)}
        assert {"ref", "blank", "m00"} <= kinds and any(k.startswith("w") for k in kinds)
        reference = get(name).reference
        wrong = [sum(editions.strip_solution_marks(reference[g]).rstrip("\n") != src[g].rsplit("\n# student", 1)[0] for g in ids)
                 for src in (submission.answers_of(nb, ids) for sid, nb in sample_submissions.one_bug_class(name, 8).items() if "_bug_" in sid)]
        assert wrong == [1] * 6, wrong


@pytest.mark.slow
def test_a_test_cell_at_full_marks_is_not_run_for_the_page_and_one_below_is(tmp_path):
    """Its outputs become the verdict on the page anyway; below full marks it runs, to flag a disagreement."""
    from grader import autograde

    name = "03_batch_scheduling"
    reference = dict(get(name).reference)
    mutant = next(m for m in get(name).mutants if m.answer_id == "todo5")
    nb = sample_submissions.filled(name, reference | {mutant.answer_id: mutant.apply(reference[mutant.answer_id])})
    sample_submissions.write({"kim": nb}, tmp_path / "subs")
    autograde.run(name, tmp_path / "subs", tmp_path / "out", jobs=1)
    page = (tmp_path / "out" / "feedback" / "kim.html").read_text()
    work = pipeline.run(pipeline.prepare(name), pipeline.Work(path=tmp_path / "subs" / "kim.ipynb"))
    runs = {editions.grade_id(c): c.get("execution_count") for c in work.nb.cells if editions.grade_id(c)}
    assert runs["todo2_tests"] is None and runs["todo4_tests"] is None, runs
    assert runs["todo1_tests"] is not None, "it defines a class a later cell uses (BudgetOnly): it still runs"
    assert runs["todo5_tests"] is not None, "below full marks: run, so a disagreement could be flagged"
    assert "TODO 2: 2 / 2 points" in visible_text(page) and "TODO 5: 2 / 2 points" not in visible_text(page)
    assert not [n for n in work.notes if "todo2_tests" in str(n)], work.notes


@pytest.mark.parametrize("binding", ["import numpy as np", "np, other = 1, 2", "for np in range(3):\n    pass",
                                     "with open('/dev/null') as np:\n    pass", "def np():\n    pass"])
def test_a_cell_whose_names_a_later_cell_uses_is_never_left_out(binding):
    from grader.notebook_run import unused_later

    cells = [nbformat.v4.new_code_cell(binding), nbformat.v4.new_code_cell("print(np)")]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert not unused_later(nb, 0)
    nb.cells[1].source = "print('nothing of it')"
    assert unused_later(nb, 0)
    nb.cells[0].source = "%time x = 1\nnp ="   # does not parse: run, whatever it would bind
    assert not unused_later(nb, 0)


@pytest.mark.slow
def test_grading_threads_build_syntax_trees_one_at_a_time(monkeypatch):
    """CPython 3.11's AST construction is not thread-safe (python/cpython#106905: "AST constructor recursion depth
    mismatch", met in CI with four grading workers): every parse the workers make goes through one lock."""
    import ast
    import threading
    import time

    from grader import diagnose, notebook_run

    inside, most, real = [0], [0], ast.parse

    def watched(source, *args, **kwargs):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        inside[0] -= 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", watched)
    grader = pipeline.grader_for("02_decode_scheduling")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("print(x)")])
    work = [lambda: diagnose.code_digest(grader.reference["todo1"] + "\n# mine\n"),
            lambda: notebook_run.dependents(nb, ["a"]), lambda: notebook_run.unused_later(nb, 0)] * 3
    threads = [threading.Thread(target=job) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1


@pytest.mark.slow
def test_a_missing_answer_beside_a_wrong_one_scores_zero_on_its_own_todo_only():
    """Nothing is run together without every answer cell; the missing one scores 0 and the others are graded."""
    name = "02_decode_scheduling"
    grader = pipeline.grader_for(name)
    bug = next(m for m in get(name).mutants if m.name.startswith("admits at enqueue"))
    notebook = dict(grader.reference) | {"todo1": bug.apply(grader.reference["todo1"])}
    notebook.pop("todo4")
    verdicts = {v.answer_id: v for v in grader.grade(notebook)}
    assert verdicts["todo4"].score == 0 and verdicts["todo4"].status == Outcome.MISSING
    assert str(verdicts["todo4"].note) == "the answer cell is missing"
    assert verdicts["todo1"].score < verdicts["todo1"].points
    assert verdicts["todo2"].score == verdicts["todo2"].points and verdicts["todo3"].score == verdicts["todo3"].points
