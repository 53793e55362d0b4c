"""nbgrader's whole lifecycle in a course with the kit, as an instructor and two students run it: release, fetch,
submit, collect, autograde, export, generate_feedback, release_feedback, fetch_feedback, with a due date that falls
between the first submissions and bob's late resubmission (nbgrader's "zero" late penalty).

The course, the students and the exchange are tests/nbgrader_course.py's (e2e/test_formgrader.py drives the same
course's formgrader in Chromium)."""
import csv
import datetime
import re

import pytest

from grader import editions, sample_submissions
from grader.feedback import visible_text
from grader.assignment import MUTANTS, mutated_answers
from nbgrader_course import NAME, assert_inert, fetched_feedback, released, run, submit

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory):
    course = released(tmp_path_factory.mktemp("lifecycle"), ["alice", "bob"],
                      extra_config='c.LateSubmissionPlugin.penalty_method = "zero"\n')
    mutant = next(m for m in MUTANTS[NAME] if m.passes_visible and m.answer_id == "todo3")
    submit(course, "alice", sample_submissions.filled(NAME, editions.reference_answers(NAME)))
    submit(course, "bob", sample_submissions.release(NAME))  # bob first submits the untouched release

    # The deadline passes now: alice's and bob's first submissions are on time; bob's resubmission is late.
    due = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    run(course.folder, "db", "assignment", "add", NAME, f"--duedate={due}")
    submit(course, "bob", sample_submissions.filled(NAME, mutated_answers(NAME, mutant)))

    logs = run(course.folder, "collect", NAME)
    logs += run(course.folder, "autograde", NAME)
    logs += run(course.folder, "export")
    logs += run(course.folder, "generate_feedback", NAME)
    logs += run(course.folder, "release_feedback", NAME)
    pages = {sid: fetched_feedback(course, sid) for sid in ("alice", "bob")}
    rows = {row["student_id"]: row for row in csv.DictReader(open(course.folder / "grades.csv"))}
    return course.folder, rows, pages, logs


def test_the_scores_and_the_late_penalty_are_nbgraders_with_our_verdicts(lifecycle):
    _, rows, _, _ = lifecycle
    assert float(rows["alice"]["raw_score"]) == 12 and float(rows["alice"]["late_submission_penalty"]) == 0
    bob = float(rows["bob"]["raw_score"])
    assert 9 <= bob < 12  # the late resubmission is graded, not the first (untouched) one; only TODO 3 costs
    assert float(rows["bob"]["late_submission_penalty"]) == pytest.approx(bob) and float(rows["bob"]["score"]) == 0


def test_each_student_fetches_an_inert_page_that_says_what_nbgrader_knows(lifecycle):
    _, rows, pages, _ = lifecycle
    assert len(pages["alice"]) == 1 and len(pages["bob"]) == 1, pages
    alice, bob = pages["alice"][0].read_text(), pages["bob"][0].read_text()
    for page in (alice, bob):
        assert_inert(page)
        assert "TODO 4: 4 / 4 points" in visible_text(page)
    assert "late-penalty" not in re.sub(r"<style.*?</style>", "", alice, flags=re.S)
    raw = float(rows["bob"]["raw_score"])
    shown = visible_text(bob)
    assert f"(Score: 0.0 / 12.0) (the TODOs: {round(raw, 2)}, minus a late penalty of {round(raw, 2)})" in shown
    assert f"Late submission penalty (Score: -{round(raw, 2)})" in shown and "TODO 3:" in shown and "[FAIL]" in shown


def test_the_lifecycle_logs_name_the_kit_and_warn_of_nothing_it_set(lifecycle):
    *_, logs = lifecycle
    assert "graded in sandbox" in logs and "feedback pages made inert" in logs
    assert "not recognized" not in logs and "checksum" not in logs.lower()
