"""The late policy of `make autograde` (grader/deadline.py): course.toml's [deadline], submission times from a CSV
or nbgrader's submitted/ folder, extensions, and what grades.csv, report.json, report.md, the class report and the
feedback page (en and zh) say of it. Bad input stops the run before grading, naming the file and line; a missing
time costs nothing and is flagged."""
import csv
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest

from grader import autograde, class_report, deadline, editions, feedback, report, sample_submissions
from grader.deadline import DeadlineError
from grader.feedback import visible_text
from grader.grade import TaskVerdict
from grader.report import Outcome

NAME = "02_decode_scheduling"
PLUS8 = timezone(timedelta(hours=8))
DUE = datetime(2026, 12, 1, 23, 59, tzinfo=PLUS8)
STUDENT = "[student]\nrepo = \"a/b\"\nbranch = \"main\"\n"


def course(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.toml"
    path.write_text(STUDENT + text, encoding="utf-8")
    return path


def csv_file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def policy(tmp_path, toml: str, times: str = "", extensions: str = "", students=("alice", "bob", "carol", "dave")):
    return deadline.load(NAME, times and csv_file(tmp_path, "times.csv", times),
                         extensions and csv_file(tmp_path, "ext.csv", extensions), list(students), course(tmp_path, toml))


PER_DAY = f"[deadline]\nper_day = 0.1\n[deadline.{NAME}]\ndue = 2026-12-01T23:59:00+08:00\n"


# --- the policy ---------------------------------------------------------------------------------------------------

def test_no_due_date_means_no_policy(tmp_path):
    assert deadline.load(NAME, toml=course(tmp_path, "")) is None
    assert deadline.load(NAME, toml=tmp_path / "missing.toml") is None
    assert deadline.load(NAME, toml=course(tmp_path, '[deadline.01_continuous_batching]\ndue = 2026-12-01T23:59:00Z\n')) is None


def test_course_wide_settings_leave_an_assignment_without_a_due_date_ungraded_by_them(tmp_path):
    # course.toml's and docs/instructors.md's own example: per_day for all, a due date for 02 only; 01 and 03 grade as before
    toml = course(tmp_path, PER_DAY)
    assert deadline.load("01_continuous_batching", toml=toml) is None
    assert deadline.load("03_batch_scheduling", toml=toml) is None
    assert deadline.load(NAME, toml=toml).per_day == 0.1
    with pytest.raises(DeadlineError, match="no due date"):   # the assignment's own settings without a due date
        deadline.load("01_continuous_batching", toml=course(tmp_path, PER_DAY + "[deadline.01_continuous_batching]\nflat = 0.2\n"))


def test_on_time_costs_nothing_and_says_nothing(tmp_path):
    p = policy(tmp_path, PER_DAY, "student_id,timestamp\nalice,2026-12-01T23:59:00+08:00\nbob,2026-12-01T15:00:00Z\n")
    for sid in ("alice", "bob"):  # exactly at the due date, and earlier in another zone
        late = p.late_of(sid)
        assert (late.kind, late.days, late.penalty(12), late.note(12)) == ("on_time", 0, 0, None)


def test_late_per_started_day(tmp_path):
    p = policy(tmp_path, PER_DAY, "student_id,timestamp\nalice,2026-12-02T00:00:00+08:00\n"
                                  "bob,2026-12-03 01:00:00.123456 UTC\n")  # nbgrader's format: 1 day 9 h late
    one, two = p.late_of("alice"), p.late_of("bob")
    assert (one.days, one.fraction, one.penalty(12)) == (1, 0.1, 1.2)
    assert (two.days, two.fraction, two.penalty(12)) == (2, 0.2, 2.4)
    assert str(two.note(12)) == "2 day(s) late (due 2026-12-01 23:59+08:00), 10%/day: -2.4 of 12 points"
    assert two.note(12).text("zh") == "迟交 2 天（截止时间 2026-12-01 23:59+08:00），每天扣 10%：12 分中扣 2.4 分"


def test_a_flat_fraction_a_cap_and_no_penalty(tmp_path):
    times = "student_id,timestamp\nalice,2026-12-02T00:30:00+08:00\nbob,2026-12-09T00:00:00+08:00\n"
    flat = policy(tmp_path, f"[deadline.{NAME}]\ndue = 2026-12-01T23:59:00+08:00\nflat = 0.25\n", times)
    assert flat.late_of("alice").penalty(10) == flat.late_of("bob").penalty(10) == 2.5
    assert str(flat.late_of("bob").note(10)) == "8 day(s) late (due 2026-12-01 23:59+08:00), 25% once late: -2.5 of 10 points"
    capped = policy(tmp_path, PER_DAY + "flat = 0.2\nmax_penalty = 0.5\n", times)
    assert capped.late_of("alice").fraction == 0.3 and capped.late_of("alice").note(10).key == "late_per_day_flat"
    assert capped.late_of("bob").penalty(10) == 5 and capped.late_of("bob").note(10).key == "late_capped"
    free = policy(tmp_path, f"[deadline.{NAME}]\ndue = 2026-12-01T23:59:00+08:00\n", times)
    assert free.late_of("bob").penalty(10) == 0 and "takes no late penalty" in str(free.late_of("bob").note(10))


def test_late_within_an_extension_costs_nothing(tmp_path):
    toml = PER_DAY + 'extensions = {alice = 2, bob = "2026-12-04T12:00:00+08:00"}\n'
    times = ("student_id,timestamp\nalice,2026-12-03T20:00:00+08:00\nbob,2026-12-04T11:00:00+08:00\n"
             "carol,2026-12-02T09:00:00+08:00\ndave,2026-12-05T09:00:00+08:00\n")
    p = policy(tmp_path, toml, times, "student_id,extension\ncarol,1\n")  # the CSV adds carol's
    for sid in ("alice", "bob", "carol"):
        assert (p.late_of(sid).kind, p.late_of(sid).penalty(12)) == ("extension", 0), sid
    assert str(p.late_of("alice").note(12)) == ("submitted after the due date (2026-12-01 23:59+08:00) but within the "
                                                "extension to 2026-12-03 23:59+08:00: no late penalty")
    assert p.late_of("dave").penalty(12) == 4.8  # no extension: 3 days 9 h, 4 started days
    after = policy(tmp_path, toml, "student_id,timestamp\nalice,2026-12-04T00:30:00+08:00\n")
    assert (after.late_of("alice").kind, after.late_of("alice").days) == ("late", 1)  # counted from the extension


def test_a_missing_time_is_graded_with_no_penalty_and_flagged(tmp_path):
    p = policy(tmp_path, PER_DAY, "student_id,timestamp\nalice,2026-12-05T00:00:00+08:00\n")
    late = p.late_of("carol")
    assert (late.kind, late.penalty(12), late.student_note(12)) == ("no_time", 0, None)
    assert str(late.note(12)).startswith("no submission time found while a due date is set (2026-12-01 23:59+08:00)")
    assert late.to_json(12)["note_key"] == "late_no_time" and late.to_json(12)["penalty"] == 0
    lines = deadline.summary(p, ["alice", "carol"])
    assert "no usable submission time for 1 student(s)" in lines[-1]
    unset = deadline.load(NAME, toml=course(tmp_path, PER_DAY))  # a due date, no times at all
    assert unset.late_of("alice").kind == "no_time" and "no submission times given" in deadline.summary(unset, ["alice"])[-1]


def test_nbgrader_submitted_folder(tmp_path):
    root = tmp_path / "course" / "submitted"
    for sid, text in (("alice", "2026-12-02 10:00:00.000001 UTC"), ("bob", "2026-12-01 12:00:00"), ("carol", "yesterday")):
        (root / sid / NAME).mkdir(parents=True)
        (root / sid / NAME / "timestamp.txt").write_text(text + "\n")
    (root / "dave" / NAME).mkdir(parents=True)
    os.symlink("/etc/hostname", root / "dave" / NAME / "timestamp.txt")
    p = deadline.load(NAME, str(tmp_path / "course"), "", ["alice", "bob", "carol", "dave", "erin"], course(tmp_path, PER_DAY))
    assert (p.late_of("alice").kind, p.late_of("alice").days) == ("late", 1)
    assert p.late_of("bob").kind == "on_time"  # no zone: UTC, as nbgrader reads it
    for sid in ("carol", "dave", "erin"):  # unreadable, a symlink, none: flagged, never a crash
        assert p.late_of(sid).kind == "no_time" and p.late_of(sid).penalty(12) == 0, sid
    assert str(p.late_of("carol").note(12)).startswith("the submission time 'yesterday' could not be read")


@pytest.mark.parametrize("toml, times, extensions, message", [
    (f"[deadline.{NAME}]\ndue = 2026-13-01T23:59:00+08:00\n", "", "", "course.toml: Expected newline"),  # TOML refuses it, by line
    (f"[deadline.{NAME}]\ndue = \"next friday\"\n", "", "", "'next friday' is not a date and time"),
    (f"[deadline.{NAME}]\ndue = 2026-12-01T23:59:00\n", "", "", "has no UTC offset"),
    (f"[deadline.{NAME}]\ndue = 2026-12-01\n", "", "", "a date without a time"),
    (PER_DAY.replace("0.1", "10"), "", "", "per_day of 02_decode_scheduling must be a fraction from 0 to 1"),
    (PER_DAY + "penalty = 0.1\n", "", "", "has 'penalty'; the settings are due, per_day"),
    ("[deadline.02_decode_schedulin]\ndue = 2026-12-01T23:59:00Z\n", "", "", "neither a setting"),
    ("[deadline]\nper_day = 0.1\n", "", "", "no due date"),
    ("", "student_id,timestamp\nalice,2026-12-02T00:00:00+08:00\n", "", "sets no due date for 02_decode_scheduling"),
    (PER_DAY, "id,time\nalice,2026-12-02T00:00:00+08:00\n", "", "must name the columns student_id,timestamp"),
    (PER_DAY, "student_id,timestamp\nalice,2026-12-02T00:00:00+08:00\nbob,02/12/2026\n", "", "times.csv, line 3: '02/12/2026'"),
    (PER_DAY, "student_id,timestamp\nalice,2026-12-02T00:00:00\n", "", "times.csv, line 2: 2026-12-02T00:00:00 has no UTC offset"),
    (PER_DAY, "student_id,timestamp\nalice,2026-12-02T00:00:00Z\nalice,2026-12-03T00:00:00Z\n", "", "alice is listed again"),
    (PER_DAY, "student_id,timestamp\nzed,2026-12-02T00:00:00Z\n", "", "gives no time for any of the 4 submission(s)"),
    (PER_DAY, "", "student_id,extension\nalice,soon\n", "ext.csv, line 2: 'soon' is not a date and time"),
    (PER_DAY, "student_id;timestamp\nalice;2026-12-02T00:00:00Z\n", "", "times.csv is separated by ';', not by commas"),
    (PER_DAY, "", "student_id,extension\nalice,-3\n", "-3.0 days is not an extension"),
    # an extension to a date before the due date was ignored without a word: refused
    (PER_DAY, "", "student_id,extension\nalice,2026-11-30T23:59:00+08:00\n", "is before the due date"),
    (PER_DAY + f"[deadline.{NAME}.extensions]\nalice = 2026-11-30T23:59:00+08:00\n", "", "", "extension of alice: "),
])
def test_bad_input_is_a_clear_error(tmp_path, toml, times, extensions, message):
    with pytest.raises(DeadlineError, match=None) as caught:
        policy(tmp_path, toml, times, extensions)
    assert message in str(caught.value)


def test_bad_input_stops_make_autograde_before_grading(tmp_path, monkeypatch):
    monkeypatch.setattr(deadline, "COURSE_TOML", course(tmp_path, PER_DAY))
    subs = tmp_path / "subs"
    sample_submissions.write({"alice": sample_submissions.release(NAME)}, subs)
    times = csv_file(tmp_path, "times.csv", "student_id,timestamp\nalice,2026-12-32T00:00:00+08:00\n")
    monkeypatch.setattr(autograde, "Batch", lambda *a, **k: pytest.fail("grading started"))
    with pytest.raises(SystemExit, match=r"error: .*times.csv, line 2: '2026-12-32T00:00:00\+08:00' is not a date"):
        autograde.main(["--assignment", NAME, "--submissions", str(subs), "--out", str(tmp_path / "out"), "--times", times])
    assert not (tmp_path / "out" / "grades.csv").exists()


# --- what the outputs say -----------------------------------------------------------------------------------------

def outcomes(p) -> list[Outcome]:
    scores = {"todo1": 2.0, "todo2": 3.0, "todo3": 3.0, "todo4": 4.0}
    verdicts = [TaskVerdict(f"TODO {i}", a, f"{a}_tests", s, s) for i, (a, s) in enumerate(scores.items(), 1)]
    return [Outcome(sid, "graded", dict(scores), verdicts=verdicts, late=p.late_of(sid)) for sid in ("alice", "bob", "carol", "dave")]


@pytest.fixture
def written(tmp_path):
    toml = PER_DAY + "extensions = {bob = 3}\n"
    p = policy(tmp_path, toml, "student_id,timestamp\nalice,2026-12-03T09:00:00+08:00\nbob,2026-12-03T09:00:00+08:00\n"
                               "dave,2026-12-01T09:00:00+08:00\n")
    head = report.header(NAME, 1, "process", []) | {"task_columns": ["todo1", "todo2", "todo3", "todo4"], "max_total": 12,
                                                    "deadline": p.describe()}
    out = tmp_path / "out"
    out.mkdir()
    monkey = pytest.MonkeyPatch()
    monkey.setattr(class_report, "write", lambda out, rep: None)  # its figures are test_class_report's
    try:
        report.write_outputs(out, head, outcomes(p), 1.0)
    finally:
        monkey.undo()
    return out


def test_grades_csv_has_the_raw_total_the_penalty_and_the_reason(written):
    rows = {row["student_id"]: row for row in csv.DictReader(open(written / "grades.csv", encoding="utf-8"))}
    assert open(written / "grades.csv").readline().strip() == ("student_id,todo1,todo2,todo3,todo4,total,max_total,"
                                                               "raw_total,late_penalty,late_reason")
    alice = rows["alice"]
    assert (alice["total"], alice["raw_total"], alice["late_penalty"]) == ("9.6", "12", "2.4")
    assert alice["late_reason"] == "2 day(s) late (due 2026-12-01 23:59+08:00), 10%/day: -2.4 of 12 points"
    assert rows["bob"]["total"] == "12" and "within the extension" in rows["bob"]["late_reason"]
    assert rows["carol"]["total"] == "12" and rows["carol"]["late_reason"].startswith("no submission time found")
    assert (rows["dave"]["total"], rows["dave"]["late_penalty"], rows["dave"]["late_reason"]) == ("12", "0", "")


def test_report_json_md_and_the_class_report_say_it(written):
    rep = json.loads((written / "report.json").read_text())
    late = {s["student_id"]: s["late"] for s in rep["students"]}
    assert rep["deadline"]["per_day"] == 0.1 and late["alice"]["penalty"] == 2.4 and late["alice"]["raw_total"] == 12
    assert (late["alice"]["kind"], late["bob"]["kind"], late["carol"]["kind"]) == ("late", "extension", "no_time")
    assert late["carol"]["note_key"] == "late_no_time" and late["carol"]["submitted"] is None
    md = (written / "report.md").read_text()
    assert "| alice | graded | 2 | 3 | 3 | 4 | 9.6 | 2 day(s) late" in md and "deadline: due 2026-12-01T23:59:00+08:00" in md
    summary = class_report.summarize(rep)
    assert summary["totals"]["alice"] == 9.6  # as grades.csv's total
    text = class_report.markdown(summary, {}, "class-report")
    section = text.split("## Late submissions")[1]
    assert "late 1, late within an extension 1, **no usable submission time 1**" in section
    assert "| alice | 2026-12-03T09:00:00+08:00 | 12 | 2.4 | 9.6 | 2 day(s) late" in section
    assert "| carol | unknown | 12 | 0 | 12 | no submission time found" in section and "| dave |" not in section


def test_without_a_due_date_the_outputs_are_as_before(tmp_path):
    head = report.header(NAME, 1, "process", []) | {"task_columns": ["todo1"], "max_total": 2}
    report.write_outputs(tmp_path, head, [Outcome("alice", "graded", {"todo1": 2.0})], 1.0)
    assert open(tmp_path / "grades.csv").read() == "student_id,todo1,total,max_total\nalice,2,2,2\n"
    rep = json.loads((tmp_path / "report.json").read_text())
    assert "deadline" not in rep and "late" not in rep["students"][0]
    assert "Late submissions" not in class_report.markdown(class_report.summarize(rep), {}, "x")


@pytest.mark.parametrize("language, penalty, reason", [
    ("en", "Late submission penalty (Score: -2.4): 2 day(s) late (due 2026-12-01 23:59+08:00), 10%/day: -2.4 of 12 points",
     "(the TODOs: 12.0, minus a late penalty of 2.4)"),
    ("zh", "迟交扣分（得分：-2.4）：迟交 2 天（截止时间 2026-12-01 23:59+08:00），每天扣 10%：12 分中扣 2.4 分",
     "（各 TODO 合计 12.0 分，迟交扣 2.4 分）"),
])
def test_the_feedback_page_shows_the_penalty_and_why_in_its_language(tmp_path, language, penalty, reason):
    p = policy(tmp_path, PER_DAY, "student_id,timestamp\nalice,2026-12-03T09:00:00+08:00\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
    nb.metadata["language_edition"] = language
    verdicts = [TaskVerdict("TODO 1", "todo1", "todo1_tests", 12.0, 12.0)]
    page = visible_text(feedback.render(nb, NAME, verdicts, p.late_of("alice"), language))
    assert penalty in page and reason in page
    plain = feedback.render(nb, NAME, verdicts)  # nbgrader's path and no due date: no penalty, no reason
    assert "Late" not in visible_text(plain) and "迟交" not in visible_text(plain)
    on_time = visible_text(feedback.render(nb, NAME, verdicts, policy(tmp_path, PER_DAY, "student_id,timestamp\nalice,"
                                                                     "2026-12-01T09:00:00+08:00\n").late_of("alice"), language))
    assert "Late" not in on_time and "迟交" not in on_time


def test_the_feedback_page_takes_the_penalty_grades_csv_takes(tmp_path):
    """The page's penalty is the one grades.csv's total is less: both from the TODOs' total rounded to the hundredth
    (an unrounded sum, 3.0999999999999996 here, rounds 0.775 the other way)."""
    toml = f"[deadline.{NAME}]\ndue = 2026-12-01T23:59:00+08:00\nper_day = 0.25\n"
    late = policy(tmp_path, toml, "student_id,timestamp\nalice,2026-12-02T09:00:00+08:00\n").late_of("alice")
    scores = [0.43, 1.0, 1.0, 0.67, 0.0]
    verdicts = [TaskVerdict(f"TODO {k}", f"todo{k}", f"todo{k}_tests", 3.0, s) for k, s in enumerate(scores, 1)]
    outcome = Outcome("alice", "graded", {f"todo{k}": s for k, s in enumerate(scores, 1)}, late=late)
    assert outcome.penalty == 0.78
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
    nb.metadata["language_edition"] = "en"
    page = visible_text(feedback.render(nb, NAME, verdicts, late, "en"))
    assert "(Score: -0.78)" in page and "-0.78 of 3.1 points" in page


def test_the_nbgrader_path_never_reads_the_policy():
    """nbgrader applies its own late penalty (its gradebook's late_submission_penalty): the plugin's pipeline steps
    leave Work.late unset, and the plugin does not import the deadline module."""
    from grader import nbgrader_plugin, pipeline

    source = Path(nbgrader_plugin.__file__).read_text()
    assert "deadline" not in source and "late=" not in source
    assert pipeline.Work().late is None


# --- through make autograde ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_make_autograde_applies_the_policy_to_a_small_class(tmp_path, monkeypatch):
    """Four perfect submissions: late by 2 days, late within an extension, no time, and (zh) late by 1 day."""
    monkeypatch.setattr(deadline, "COURSE_TOML", course(tmp_path, PER_DAY))
    subs = tmp_path / "subs"
    answers = editions.reference_answers(NAME)
    sample_submissions.write({"alice": sample_submissions.filled(NAME, answers), "bob": sample_submissions.filled(NAME, answers),
                              "carol": sample_submissions.filled(NAME, answers),
                              "lin": sample_submissions.filled(NAME, answers, "zh")}, subs)
    times = csv_file(tmp_path, "times.csv", "student_id,timestamp\nalice,2026-12-03T09:00:00+08:00\n"
                                            "bob,2026-12-03T09:00:00+08:00\nlin,2026-12-02T09:00:00+08:00\n")
    ext = csv_file(tmp_path, "ext.csv", "student_id,extension\nbob,2026-12-04T00:00:00+08:00\n")
    out = tmp_path / "out"
    autograde.main(["--assignment", NAME, "--submissions", str(subs), "--out", str(out), "--jobs", "2",
                    "--times", times, "--extensions", ext])
    rows = {row["student_id"]: row for row in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert {sid: (row["raw_total"], row["late_penalty"], row["total"]) for sid, row in rows.items()} == {
        "alice": ("12", "2.4", "9.6"), "bob": ("12", "0", "12"), "carol": ("12", "0", "12"), "lin": ("12", "1.2", "10.8")}
    assert rows["carol"]["late_reason"].startswith("no submission time found")
    page = visible_text((out / "feedback" / "alice.html").read_text())
    assert "Late submission penalty (Score: -2.4): 2 day(s) late" in page and "(Score: 9.6 / 12.0)" in page
    assert "within the extension to 2026-12-04 00:00+08:00" in visible_text((out / "feedback" / "bob.html").read_text())
    lin = visible_text((out / "feedback" / "lin.html").read_text())
    assert "迟交扣分（得分：-1.2）：迟交 1 天" in lin and "（得分：10.8 / 12.0）" in lin
    carol = visible_text((out / "feedback" / "carol.html").read_text())
    assert "Late" not in carol and "(Score: 12.0 / 12.0)" in carol  # a missing time is the instructor's to check
    assert "no usable submission time 1" in (out / "class-report.md").read_text()
