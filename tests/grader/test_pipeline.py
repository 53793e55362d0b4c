"""grader/pipeline.py's steps through its public names, up to grading and with no process started: a saved answer
goes through read, edition, identify and repair; another assignment's notebook is refused; disagreements names the
test cells that passed in the student's kernel only. Whole runs are tested in test_autograde_e2e.py and the
nbgrader tests; the step order in test_config.py."""
import types

import nbformat
import pytest

from grader import editions, pipeline, sample_submissions, submission
from grader.assignment import get
from grader.grade import TaskVerdict
from grader.paths import assignment_names

NAME = "02_decode_scheduling"


def prepared(name=NAME):
    """What prepare() reads, but with a stand-in Grader (a real one starts its warm parent: slow)."""
    assignment = get(name)
    return pipeline.Prepared(assignment, types.SimpleNamespace(answer_ids=assignment.answer_ids), frozenset(),
                             tuple(get(n) for n in assignment_names() if n != name))


def saved(name, folder):
    return sample_submissions.write({"student": sample_submissions.filled(name, editions.reference_answers(name))}, folder)[0]


def test_a_saved_answer_is_read_identified_and_laid_out_before_grading(tmp_path):
    steps = pipeline.STEPS[:pipeline.STEPS.index(pipeline.grade)]
    assert [s.__name__ for s in steps] == ["read", "edition", "identify", "repair"]
    work = pipeline.run(prepared(), pipeline.Work(path=saved(NAME, tmp_path)), steps=steps)
    assert work.language == "en" and work.verdicts == [] and work.page is None
    ids = [editions.grade_id(c) for c in work.nb.cells if editions.grade_id(c)]
    assert [i for i in ids if i in get(NAME).answer_ids] == get(NAME).answer_ids   # each answer once, in release order


def test_another_assignments_notebook_is_refused_at_identify(tmp_path):
    other = next(n for n in assignment_names() if n != NAME)
    with pytest.raises(submission.NotASubmission):
        pipeline.run(prepared(), pipeline.Work(path=saved(other, tmp_path)), steps=pipeline.STEPS[:3])


def test_disagreements_are_test_cells_that_passed_in_the_kernel_but_not_in_the_sandbox():
    def test_cell(grade_id, outputs):
        cell = nbformat.v4.new_code_cell("check()", execution_count=1, outputs=outputs)
        cell.metadata["nbgrader"] = {"grade_id": grade_id, "grade": True}
        return cell

    nb = nbformat.v4.new_notebook(cells=[test_cell("t1", []), test_cell("t2", [nbformat.v4.new_output("error", ename="E", evalue="", traceback=[])]),
                                         test_cell("t3", [])])
    verdicts = [TaskVerdict("a1", "todo1", "t1", 2, 1), TaskVerdict("a2", "todo2", "t2", 2, 0),
                TaskVerdict("a3", "todo3", "t3", 2, 0, note="the wording decides nothing", status="grading_error")]
    assert pipeline.disagreements(nb, verdicts) == ["t1: the in-notebook checks passed but the hidden rules gave 1/2"]
