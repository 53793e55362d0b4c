"""nbgrader's whole lifecycle in a course with the kit, as an instructor and two students run it: release, fetch,
submit, collect, autograde, export, generate_feedback, release_feedback, fetch_feedback, with a due date that falls
between the first submissions and bob's late resubmission (nbgrader's "zero" late penalty).

The students are this user with `--student=<id>` (nbgrader otherwise names a student by the account) and a folder,
a submission cache and a config of their own (the exchange and the course id, no kit), as separate accounts would
have; the exchange is a local folder."""
import csv
import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from grader import build, examples, masters
from grader.feedback import visible_text
from grader.mutants import MUTANTS, mutated_answers

pytestmark = pytest.mark.slow

NAME = "02_decode_scheduling"
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


def run(folder: Path, *args: str, user: str = "") -> str:
    """An nbgrader command in `folder`, as the instructor or as the student `user`."""
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    student = [f"--student={user}"] if user else []
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, *student], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=1800)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} as {user}:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def student_submits(home: Path, sid: str, nb) -> None:
    """What a student does in JupyterLab: the fetched notebook, answered and saved, then submitted."""
    fetched = home / NAME / f"{NAME}.ipynb"
    assert fetched.exists()
    nbformat.write(nb, fetched)
    run(home, "submit", NAME, user=sid)


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory):
    root = tmp_path_factory.mktemp("lifecycle")
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    shared = f'c.CourseDirectory.course_id = "decode-scheduling"\nc.Exchange.root = "{exchange}"\n'
    course = build.make_course(root / "course", [NAME], with_db=True)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f'\nc.Exchange.root = "{exchange}"\nc.LateSubmissionPlugin.penalty_method = "zero"\n' + PLUGIN_LINES)
    for sid in ("alice", "bob"):
        run(course, "db", "student", "add", sid, f"--first-name={sid.title()}", "--last-name=Student")
    run(course, "release_assignment", NAME)

    mutant = next(m for m in MUTANTS[NAME] if m.passes_visible and m.answer_id == "todo3")
    homes = {}
    for sid in ("alice", "bob"):
        homes[sid] = root / "home" / sid
        homes[sid].mkdir(parents=True)
        # Each student's own submission cache, as their own account's home has (fetch_feedback reads it).
        (homes[sid] / "nbgrader_config.py").write_text(f'c = get_config()\n{shared}c.Exchange.cache = "{homes[sid] / "cache"}"\n')
        run(homes[sid], "fetch_assignment", NAME, user=sid)
    student_submits(homes["alice"], "alice", examples.filled(NAME, masters.reference_answers(NAME)))
    student_submits(homes["bob"], "bob", examples.release(NAME))  # bob first submits the untouched release

    # The deadline passes now: alice's and bob's first submissions are on time; bob's resubmission is late.
    due = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    run(course, "db", "assignment", "add", NAME, f"--duedate={due}")
    student_submits(homes["bob"], "bob", examples.filled(NAME, mutated_answers(NAME, mutant)))

    logs = run(course, "collect", NAME)
    logs += run(course, "autograde", NAME)
    logs += run(course, "export")
    logs += run(course, "generate_feedback", NAME)
    logs += run(course, "release_feedback", NAME)
    for sid in ("alice", "bob"):
        run(homes[sid], "fetch_feedback", NAME, user=sid)
    pages = {sid: sorted((homes[sid] / NAME / "feedback").glob(f"*/{NAME}.html")) for sid in ("alice", "bob")}
    rows = {row["student_id"]: row for row in csv.DictReader(open(course / "grades.csv"))}
    return course, rows, pages, logs


def test_the_scores_and_the_late_penalty_are_nbgraders_with_our_verdicts(lifecycle):
    _, rows, _, _ = lifecycle
    assert float(rows["alice"]["raw_score"]) == 12 and float(rows["alice"]["late_submission_penalty"]) == 0
    bob = float(rows["bob"]["raw_score"])
    assert 9 <= bob < 12  # the late resubmission is graded, not the first (untouched) one; only TODO 3 costs
    assert float(rows["bob"]["late_submission_penalty"]) == pytest.approx(bob) and float(rows["bob"]["score"]) == 0


def test_each_student_fetches_an_inert_page_that_says_what_nbgrader_knows(lifecycle):
    from test_nbgrader_plugin import assert_inert

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
