"""One run of the whole notebook gives full marks to each TODO that is right there; the others are graded TODO by TODO.

grader/grade.py's whole_notebook: the student's answers run together in one child, with no reference near them.
It may only ever give full marks, and to a TODO only when every observation of its scenarios equals the
reference's; these tests show it never takes a catalogued mistake's TODO, takes every TODO of an independently
written correct notebook, agrees with the per-TODO runs, and reads a correct child's records without parsing them.
"""
import dataclasses

import nbformat
import pytest

from grader import examples, masters, pipeline, submission
from grader.feedback import visible_text
from grader.assignment import get
from grader.paths import assignment_names


@pytest.fixture(scope="module", params=assignment_names())
def grader(request):
    return pipeline.grader_for(request.param)


def answers(grader, nb) -> dict[str, str]:
    return submission.answers_of(nb, grader.answer_ids)


def test_a_correct_notebook_gets_full_marks_from_one_run_as_from_the_per_todo_runs(grader):
    reference = {gid: src + "\n# written by me\n" for gid, src in grader.reference.items()}
    whole = list(grader.whole_notebook(reference).values())
    apart = [grader.grade_task(task, reference[task.answer_id]) for task in grader.tasks]
    assert [v.score for v in whole] == [v.score for v in apart] == [t.points for t in grader.tasks]
    assert [[(r.name, r.passed) for r in v.rules] for v in whole] == [[(r.name, r.passed) for r in v.rules] for v in apart]


def test_every_catalogued_mistake_is_graded_todo_by_todo(grader):
    """The soundness check: the TODO of any one mutant never gets the whole run's full marks."""
    reference = dict(grader.reference)
    taken, others = [], 0
    for m in get(grader.assignment.name).mutants:
        whole = grader.whole_notebook(reference | {m.answer_id: m.apply(reference[m.answer_id])})
        taken += [m.name] if m.answer_id in whole else []
        others += len(whole)
    assert taken == []
    assert others, "positive control: some right TODO beside a mutant is taken from the whole run"


def test_no_catalogued_mistake_is_taken_when_run_together_with_the_reference_for_another_todo(grader):
    """leave_out's soundness: with the reference standing in for any other TODO, a mutant's TODO still fails."""
    reference = dict(grader.reference)
    taken, others = [], 0
    for m in get(grader.assignment.name).mutants:
        wrong = next(t.answer_id for t in grader.order if t.answer_id != m.answer_id)
        rest = [t for t in grader.order if t.answer_id != wrong]
        found = grader.leave_out(reference | {m.answer_id: m.apply(reference[m.answer_id])}, [wrong], rest)
        taken += [m.name] if m.answer_id in found else []
        others += len(found)
    assert taken == []
    assert others, "positive control: the right TODOs beside the mutant are taken"


def _counted(grader, monkeypatch) -> dict[str, int]:
    runs = {"apart": 0, "together": 0}
    apart, together = type(grader)._grade_task, type(grader).leave_out

    def count_apart(self, *args, **kwargs):
        runs["apart"] += 1
        return apart(self, *args, **kwargs)

    def count_together(self, *args, **kwargs):
        runs["together"] += 1
        return together(self, *args, **kwargs)

    monkeypatch.setattr(type(grader), "_grade_task", count_apart)
    monkeypatch.setattr(type(grader), "leave_out", count_together)
    return runs


@pytest.mark.parametrize("name, bugs", [("02_decode_scheduling", ["admits at enqueue"]),
                                        ("02_decode_scheduling", ["admits at enqueue", "serves the largest key first"]),
                                        ("03_batch_scheduling", ["floor instead of ceiling division"]),
                                        ("03_batch_scheduling", ["floor instead of ceiling division", "FCFS order"])])
def test_a_notebook_with_one_or_two_bugs_gets_the_per_todo_verdicts(name, bugs, monkeypatch):
    """The TODOs taken from a run together and those graded apart give exactly what grading every TODO apart gives;
    a bug that fails every TODO's scenarios (enqueue admits at once) costs one run apart and one together, not four."""
    grader = pipeline.grader_for(name)
    notebook = dict(grader.reference)
    mutants = [next(m for m in get(name).mutants if m.name.startswith(bug)) for bug in bugs]
    for m in mutants:   # signed: no verdict of an earlier test is reused
        notebook[m.answer_id] = m.apply(notebook[m.answer_id]) + f"\n# {name} {bugs}\n"
    apart = [type(grader)._grade_task(grader, task, notebook[task.answer_id]) for task in grader.tasks]
    runs = _counted(grader, monkeypatch)
    graded = grader.grade(notebook)
    assert [dataclasses.asdict(v) for v in graded] == [dataclasses.asdict(v) for v in apart]
    assert [v.score < v.points for v in graded] == [t.answer_id in {m.answer_id for m in mutants} for t in grader.tasks]
    if len(bugs) == 1:
        assert runs == {"apart": 1, "together": 1}, runs
    else:   # a run together after each wrong TODO at most; with a wrong step, every TODO may end up apart
        assert runs["together"] <= len(bugs) and runs["apart"] <= len(grader.tasks), runs


@pytest.mark.parametrize("bug", ["ignores max_num_seqs", "admits waiting requests in a step that preempted"])
def test_the_last_wrong_todo_is_judged_from_the_whole_run_once_the_others_are_right(bug, monkeypatch):
    """03's step (TODO 1) calls every other TODO: once they are at full marks, its verdict comes from the whole run,
    exactly the verdict its own run beside the reference would give, with no run of its own."""
    name = "03_batch_scheduling"
    grader = pipeline.grader_for(name)
    mutant = next(m for m in get(name).mutants if m.name.startswith(bug))
    notebook = {gid: src + f"\n# {bug}\n" for gid, src in grader.reference.items()}   # signed: nothing reused
    notebook[mutant.answer_id] = mutant.apply(grader.reference[mutant.answer_id]) + "\n# last wrong\n"
    expected = [type(grader)._grade_task(grader, task, notebook[task.answer_id]) for task in grader.tasks]
    apart, original = [], type(grader)._grade_task
    monkeypatch.setattr(type(grader), "_grade_task", lambda self, task, source: apart.append(task.answer_id) or original(self, task, source))
    graded = grader.grade(notebook)
    assert [dataclasses.asdict(v) for v in graded] == [dataclasses.asdict(v) for v in expected]
    assert graded[0].score < graded[0].points and all(r.snippet for r in graded[0].rules if not r.passed)   # a case to run
    assert mutant.answer_id not in apart and len(apart) < len(grader.tasks) - 1, apart   # only callees its bug failed


def test_a_wrong_todo_is_not_judged_from_the_whole_run_while_another_is_wrong(monkeypatch):
    """The guard matters: with a wrong block count (TODO 2) beside a wrong step (TODO 1), the step's scenarios in the
    whole run fail for both reasons; judged from there anyway, TODO 1 would get another verdict than its own run's."""
    name = "03_batch_scheduling"
    grader = pipeline.grader_for(name)
    notebook = dict(grader.reference)
    for bug in ("ignores max_num_seqs", "floor instead of ceiling division"):
        m = next(m for m in get(name).mutants if m.name.startswith(bug))
        notebook[m.answer_id] = m.apply(notebook[m.answer_id]) + "\n# two wrong\n"
    first = grader.tasks[0]
    expected = type(grader)._grade_task(grader, first, notebook[first.answer_id])
    assert dataclasses.asdict(grader.grade(notebook)[0]) == dataclasses.asdict(expected)
    monkeypatch.setattr(type(grader), "_others_right", lambda self, task, done: True)
    assert dataclasses.asdict(grader.grade(notebook)[0]) != dataclasses.asdict(expected), "the broken guard is caught"


def test_a_todo_whose_cell_raises_is_graded_apart(grader):
    """Its cell raised after defining everything right: the whole run's scenarios pass, but the page must say so."""
    first = grader.answer_ids[0]
    notebook = dict(grader.reference) | {first: grader.reference[first] + "\n\nraise ValueError('after the answer')\n"}
    whole = grader.whole_notebook(notebook)
    assert first not in whole and set(whole) == set(grader.answer_ids) - {first}
    verdict = grader.grade(notebook)[0]
    assert "ValueError" in verdict.note


def test_every_independent_correct_notebook_is_graded_in_one_run(grader):
    corpus = sorted(get(grader.assignment.name).corpus)
    assert corpus
    for path in corpus:
        verdicts = grader.whole_notebook(answers(grader, nbformat.read(path, as_version=4)))
        assert list(verdicts) == grader.answer_ids, path.name
        assert all(v.score == v.points for v in verdicts.values())


def test_a_blank_or_incomplete_notebook_is_graded_todo_by_todo(grader):
    stubs = examples.release_answers(grader.assignment.name)
    assert grader.whole_notebook(stubs) == {}
    missing = dict(grader.reference)
    missing.pop(grader.answer_ids[-1])
    assert grader.whole_notebook(missing) == {}, "a missing answer cell scores 0 on its TODO: no whole run"


def test_a_correct_childs_records_are_the_references_own_not_parsed_again(grader):
    """The protocol's fast path really meets a real child's lines: every observation of a correct run is taken as is."""
    cells = [(gid, grader.reference[gid] + "\n# mine\n") for gid in grader.answer_ids]
    run = grader._run(cells, [sc for task in grader.tasks for sc in grader._named(task)])
    scenarios = [rec for rec in run.records if rec["kind"] == "scenario"]
    assert run.status == "ok" and scenarios
    assert all(rec["obs"] is grader.expected[rec["name"]] for rec in scenarios)


def test_the_benchmark_class_reuses_no_answer():
    """make bench's varied class: no two students share an answer cell, so no verdict can be reused."""
    for name in ("02_decode_scheduling", "03_batch_scheduling"):
        subs = examples.varied_class(name, 24)
        ids = get(name).answer_ids
        sources = [submission.answers_of(nb, ids) for nb in subs.values()]
        for gid in ids:
            texts = [s[gid] for s in sources]
            assert len(set(texts)) == len(texts), gid
        kinds = {sid.split("_", 1)[1] for sid in subs}
        assert {"ref", "blank", "m00"} <= kinds and any(k.startswith("w") for k in kinds)


def test_a_test_cell_at_full_marks_is_not_run_for_the_page_and_one_below_is(tmp_path):
    """Its outputs become the verdict on the page anyway; below full marks it runs, to flag a disagreement."""
    from grader import autograde

    name = "03_batch_scheduling"
    reference = dict(get(name).reference)
    mutant = next(m for m in get(name).mutants if m.answer_id == "todo5")
    nb = examples.filled(name, reference | {mutant.answer_id: mutant.apply(reference[mutant.answer_id])})
    examples.write({"kim": nb}, tmp_path / "subs")
    autograde.run(name, tmp_path / "subs", tmp_path / "out", jobs=1)
    page = (tmp_path / "out" / "feedback" / "kim.html").read_text()
    work = pipeline.run(pipeline.prepare(name), pipeline.Work(path=tmp_path / "subs" / "kim.ipynb"))
    runs = {masters.grade_id(c): c.get("execution_count") for c in work.nb.cells if masters.grade_id(c)}
    assert runs["todo2_tests"] is None and runs["todo4_tests"] is None, runs
    assert runs["todo1_tests"] is not None, "it defines a class a later cell uses (BudgetOnly): it still runs"
    assert runs["todo5_tests"] is not None, "below full marks: run, so a disagreement could be flagged"
    assert "TODO 2: 2 / 2 points" in visible_text(page) and "TODO 5: 2 / 2 points" not in visible_text(page)
    assert not [n for n in work.notes if "todo2_tests" in n], work.notes


def test_answer_cells_that_lean_on_one_another_are_graded_apart_as_before():
    """Graded apart, a TODO sees only the others' exports: a helper of another cell, or an export defined again in
    a later cell, is not there. The whole run would see them; so such a notebook is graded apart, as it always was."""
    from grader import exports

    name = "01_continuous_batching"
    grader = pipeline.grader_for(name)
    reference = dict(grader.reference)
    first, second = grader.answer_ids[0], grader.answer_ids[1]
    helper = reference | {first: reference[first] + "\n\ndef my_helper_x(value):\n    return value\n",
                          second: reference[second] + "\n\nUSED = my_helper_x(1)\n"}
    assert "my_helper_x" in exports.coupling(helper, grader.exports, grader.setup)
    assert grader.whole_notebook(helper) == {}
    export = grader.exports[first][0]
    again = reference | {grader.answer_ids[-1]: reference[grader.answer_ids[-1]] + "\n\n" + reference[first]}
    assert exports.coupling(again, grader.exports, grader.setup), export
    assert grader.whole_notebook(again) == {}
    own = reference | {first: reference[first] + "\n\nimport math\n", second: reference[second] + "\n\nimport math\n"}
    assert exports.coupling(own, grader.exports, grader.setup) == "", "each cell's own import is its own"
    assert list(grader.whole_notebook(own)) == grader.answer_ids


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


def test_grading_threads_build_syntax_trees_one_at_a_time(monkeypatch):
    """CPython 3.11's AST construction is not thread-safe (python/cpython#106905: "AST constructor recursion depth
    mismatch", met in CI with four grading workers): every parse the workers make goes through one lock."""
    import ast
    import threading
    import time

    from grader import exports, notebook_run

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
    work = [lambda: exports.coupling(dict(grader.reference), grader.exports, grader.setup),
            lambda: notebook_run.dependents(nb, ["a"]), lambda: notebook_run.unused_later(nb, 0)] * 3
    threads = [threading.Thread(target=job) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1


def test_a_missing_answer_beside_a_wrong_one_scores_zero_on_its_own_todo_only():
    """Nothing is run together without every answer cell; the missing one scores 0 and the others are graded."""
    name = "02_decode_scheduling"
    grader = pipeline.grader_for(name)
    bug = next(m for m in get(name).mutants if m.name.startswith("admits at enqueue"))
    notebook = dict(grader.reference) | {"todo1": bug.apply(grader.reference["todo1"])}
    notebook.pop("todo4")
    verdicts = {v.answer_id: v for v in grader.grade(notebook)}
    assert verdicts["todo4"].score == 0 and verdicts["todo4"].note == "the answer cell is missing"
    assert verdicts["todo1"].score < verdicts["todo1"].points
    assert verdicts["todo2"].score == verdicts["todo2"].points and verdicts["todo3"].score == verdicts["todo3"].points


def test_a_todo_whose_cell_raises_is_not_taken_when_run_together_either(monkeypatch):
    """TODO 1 is wrong (so the rest run together); TODO 3's cell defines the right answer, then raises."""
    name = "02_decode_scheduling"
    grader = pipeline.grader_for(name)
    bug = next(m for m in get(name).mutants if m.name.startswith("admits at enqueue"))
    notebook = dict(grader.reference) | {"todo1": bug.apply(grader.reference["todo1"]),
                                         "todo3": grader.reference["todo3"] + "\n\nraise ValueError('after the answer')\n"}
    runs = _counted(grader, monkeypatch)
    taken = grader.leave_out(notebook, ["todo1"], [t for t in grader.order if t.answer_id != "todo1"])
    assert set(taken) == {"todo2", "todo4"}, "the raising cell's TODO is graded apart, where its note says so"
    verdicts = {v.answer_id: v for v in grader.grade(notebook)}
    assert "ValueError" in verdicts["todo3"].note and runs["together"] == 2, runs


def test_a_run_together_that_times_out_stops_running_together():
    """A scenario that ran out of time means a hang that would be waited for again: None, and grade() stops."""
    grader = pipeline.grader_for("02_decode_scheduling")
    task = grader.tasks[1]
    names = [grader._key(task, ri, si) for ri, rule in enumerate(task.rules) for si in range(len(rule.scenarios))]
    assert grader._finished(task, {name: [] for name in names})
    assert not grader._finished(task, {name: [] for name in names[1:]})
    assert not grader._finished(task, {name: "timeout" for name in names})
    assert not grader._finished(task, {name: "skipped after 3 timeouts in a row" for name in names})
