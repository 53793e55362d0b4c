"""The class report (grader/class_report.py): written by make autograde, its figures agree with grades.csv,
the page is inert, rules.csv is tidy, and the feedback names a diagnosed mistake in the submission's language."""
import base64
import csv
import html
import json
import re
import statistics
from collections import Counter

import pytest

from grader import autograde, class_report, diagnose, editions, sample_submissions, sanitize, similarity
from grader.feedback import visible_text
from grader.assignment import MUTANTS

NAME = "02_decode_scheduling"
SAME_BUG = "serves the largest key first"
OTHER_BUG = "drops the preempted id"


def mutant(name):
    return next(m for m in MUTANTS[NAME] if m.name == name)


def answers_with(name, source=None):
    reference, m = editions.reference_answers(NAME), mutant(name)
    return reference | {m.answer_id: source or m.apply(reference[m.answer_id])}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    subs, folder = tmp_path_factory.mktemp("subs"), tmp_path_factory.mktemp("class") / "out"
    todo4 = editions.reference_answers(NAME)["todo4"]
    outside = todo4.replace("            req.wait_steps += 1\n", "            req.wait_steps += 2\n")
    assert outside != todo4
    batch = {"alice": sample_submissions.filled(NAME, editions.reference_answers(NAME)),
             "bob_blank": sample_submissions.release(NAME),
             "cat_en": sample_submissions.filled(NAME, answers_with(SAME_BUG)),
             "dao_zh": sample_submissions.filled(NAME, answers_with(SAME_BUG), language="zh"),
             "eve": sample_submissions.filled(NAME, answers_with(OTHER_BUG)),
             "fay_outside": sample_submissions.filled(NAME, answers_with(SAME_BUG, outside)),
             "gus_bad": '{"cells": [ not json'}
    sample_submissions.write(batch, subs)
    autograde.run(NAME, subs, folder, cell_timeout=10)
    return folder


def report_of(out):
    return json.loads((out / "report.json").read_text())


def grades(out):
    with open(out / "grades.csv", newline="") as handle:
        return {row.pop("student_id"): {k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)}


def rules_rows(out):
    with open(out / "rules.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def page_problems(page: str) -> list[str]:
    """Why an HTML page is not self-contained and inert ([] when it is)."""
    found = []
    if re.search(r"<\s*script", page, re.I):
        found.append("a script element")
    if re.search(r"\son[a-z]+\s*=", page, re.I):
        found.append("an event handler attribute")
    if f'content="{sanitize.CSP}"' not in page:
        found.append("not the feedback pages' CSP")
    for src in re.findall(r'\b(?:src|href)\s*=\s*"([^"]*)"', page, re.I):
        if not src.startswith("data:image/png;base64,"):
            found.append(f"a reference to {src[:40]!r}")
        elif not base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG"):
            found.append("an image that is not a PNG")
    return found


@pytest.mark.slow
def test_make_autograde_writes_the_class_report(out):
    for name in ("class-report.html", "class-report.md", "rules.csv"):
        assert (out / name).is_file(), name
    pngs = {p.name for p in (out / "class-report").glob("*.png")}
    assert {"totals.png", "todo-scores.png", "misconceptions.png"} | {f"rules-todo{i}.png" for i in range(1, 5)} <= pngs
    assert all((out / "class-report" / name).read_bytes().startswith(b"\x89PNG") for name in pngs)
    page = (out / "class-report.html").read_text()
    assert page.count("<img ") == len(pngs), "every figure is embedded in the page"


@pytest.mark.slow
def test_the_page_is_inert_and_self_contained(out):
    page = (out / "class-report.html").read_text()
    assert page_problems(page) == []
    broken = page.replace("</body>", '<script>alert(1)</script><img src="https://example.org/x.png"></body>')
    assert page_problems(broken) == ["a script element", "a reference to 'https://example.org/x.png'"]
    assert page_problems(page.replace(sanitize.CSP, "default-src *")) == ["not the feedback pages' CSP"]


@pytest.mark.slow
def test_the_figures_agree_with_grades_csv(out):
    table, summary = grades(out), class_report.summarize(report_of(out))
    assert summary["totals"] == {sid: row["total"] for sid, row in table.items()}
    for column in summary["columns"]:
        assert {sid: by[column] for sid, by in summary["scores"].items()} == {sid: row[column] for sid, row in table.items()}
    totals = [row["total"] for row in table.values()]
    top = next(iter(table.values()))["max_total"]
    bins = class_report.histogram(totals, top)
    assert bins == summary["histogram"] and sum(n for *_, n in bins) == len(table)
    md = (out / "class-report.md").read_text()
    assert f"{len(table)} students; max {top:g} points; mean total {statistics.mean(totals):.2f}, median {statistics.median(totals):g}" in md
    for i, (lo, hi, n) in enumerate(bins):
        assert re.search(rf"^\| {lo:g} to {hi:g}( \(incl\.\))? \| {n} \|$", md, re.M), (lo, hi, n)
    for column, task in summary["tasks"].items():
        scores = [row[column] for row in table.values()]
        row = (f"| {task['task']} | {task['points']:g} | {statistics.mean(scores):.2f} | {sum(s >= task['points'] for s in scores)} "
               f"| {scores.count(0)} | 1 |")  # bob left every TODO as given
        assert row in md


@pytest.mark.slow
def test_rules_csv_has_one_row_per_student_todo_and_rule(out):
    report, rows = report_of(out), rules_rows(out)
    summary = class_report.summarize(report)
    per_student = sum(len(t["rules"]) for t in summary["tasks"].values())
    assert list(rows[0]) == ["student_id", "todo", "rule", "passed", "misconception", "left_blank"]
    assert {r["left_blank"] for r in rows if r["student_id"] == "bob_blank"} == {"1"}
    assert {r["left_blank"] for r in rows if r["student_id"] == "cat_en"} == {"0"}
    assert len(rows) == per_student * len(report["students"])
    assert Counter(r["student_id"] for r in rows) == {s["student_id"]: per_student for s in report["students"]}
    assert {r["passed"] for r in rows if r["student_id"] == "gus_bad"} == {""}, "a file that was not graded has no verdicts"
    md = (out / "class-report.md").read_text()
    for (todo, rule), stats in summary["rules"].items():
        mine = [r for r in rows if r["todo"] == todo and r["rule"] == rule and r["passed"] != "" and r["left_blank"] == "0"]
        failed = sum(r["passed"] == "0" for r in mine)
        assert (failed, len(mine)) == (len(stats.failed), stats.judged)
        assert f"| {rule} | {failed} of {len(mine)} |" in md
    named = {(r["student_id"], r["todo"]): r["misconception"] for r in rows if r["misconception"]}
    assert named == {("cat_en", "todo4"): SAME_BUG, ("dao_zh", "todo4"): SAME_BUG, ("eve", "todo4"): OTHER_BUG}


@pytest.mark.slow
def test_misconceptions_are_counted_with_their_students(out):
    md = (out / "class-report.md").read_text()
    line = next(line for line in md.splitlines() if line.startswith(f"| TODO 4 | {SAME_BUG}:"))
    assert "| 2 |" in line and "cat_en, dao_zh" in line and "fay_outside" not in line
    assert diagnose.texts(NAME)[SAME_BUG]["en"]["hint"] in line
    assert "## What to reteach" in md and f'misconception "{SAME_BUG}"' in md.split("## Scores")[0]
    ops = md.split("## Operations")[1]
    assert "status: bad 1, graded 6" in ops and "language of the graded submissions: en 5, zh 1" in ops
    assert "gus_bad (unreadable JSON" in ops


@pytest.mark.slow
def test_a_failing_case_is_shown_as_code_in_the_markdown(out):
    """Its code in a fenced block, as a student can copy it: not `&#91;` for every bracket (an instructor reading
    class-report.md as text saw those), and still inert (test_safe_text: no link or tag gets out)."""
    md = (out / "class-report.md").read_text()
    cases = re.findall(r"^A failing case \(of .*\):\n\n(`{3,})python\n(.*)\n\1$", md, re.M)
    assert cases, md
    assert all("&#" not in code for _, code in cases) and any("[" in code or "(" in code for _, code in cases)


@pytest.mark.slow
def test_the_feedback_names_the_mistake_in_the_submissions_language(out):
    said = diagnose.texts(NAME)[SAME_BUG]
    page = lambda sid: " ".join(visible_text((out / "feedback" / f"{sid}.html").read_text()).split())  # noqa: E731
    assert f"Your answer behaves like a common mistake: {said['en']['mistake']}" in page("cat_en")
    assert f"Hint: {said['en']['hint']}" in page("cat_en")
    assert said["zh"]["mistake"] in page("dao_zh") and f"提示：{said['zh']['hint']}" in page("dao_zh")
    assert said["en"]["hint"] not in page("dao_zh")
    for sid in ("alice", "bob_blank", "fay_outside"):
        assert "common mistake" not in page(sid) and "常见错误" not in page(sid), sid


@pytest.mark.slow
def test_written_again_from_report_json_it_is_the_same(out, tmp_path):
    (tmp_path / "report.json").write_text((out / "report.json").read_text())
    assert class_report.main([str(tmp_path)]) == 0
    for name in ("class-report.html", "class-report.md", "rules.csv"):
        assert (tmp_path / name).read_text() == (out / name).read_text(), name


def test_operations_sort_what_went_wrong():
    verdict = {"task_id": "TODO 1", "answer_id": "todo1", "points": 2, "score": 0, "rules": [], "hung": False, "note": ""}
    students = [
        {"student_id": "a", "status": "graded", "language": "zh", "reason": "", "seconds": 2.0,
         "warnings": ["cell todo1 was edited; the original is used for grading, so this costs nothing", "cell 3 ran past its limit"],
         "warning_keys": ["cell_edited", ""],
         "verdicts": [verdict | {"hung": True}]},
        {"student_id": "b", "status": "graded", "language": "en", "reason": "", "seconds": 1.0, "warnings": [],
         "verdicts": [verdict | {"status": "grading_error", "note": "the wording does not count: the status does"}]},
        {"student_id": "c", "status": "graded", "language": "en", "reason": "", "seconds": 1.0, "warnings": [],
         "verdicts": [verdict | {"status": "raised", "note": "grading error, in words only"}]},
        {"student_id": "d", "status": "bad", "language": "en", "reason": "unreadable JSON", "seconds": 0.1, "warnings": [], "verdicts": []},
    ]
    ops = class_report.operations(students)
    assert ops["timeouts"] == [("a", "TODO 1")] and ops["grading_errors"] == [("b", "TODO 1")] and ops["crashes"] == [("c", "TODO 1")]
    assert [s for s, _ in ops["layout"]] == ["a"] and [s for s, _ in ops["other_notes"]] == ["a"]
    assert ops["language"] == {"en": 2, "zh": 1} and ops["not_graded"] == [("d", "unreadable JSON")]


@pytest.mark.slow
def test_the_figures_drawn_on_two_cores_are_those_drawn_on_one(out, capfd):
    summary = class_report.summarize(json.loads((out / "report.json").read_text(encoding="utf-8")))
    both = class_report.figures(summary)
    assert "run again here" not in capfd.readouterr().err  # the forked child's half was used
    one = {name: (alt, draw()) for name, alt, draw in class_report._drawings(summary)}
    assert both == one and len(both) >= 3


def test_a_deleted_answer_cell_is_not_counted_as_a_free_layout_warning():
    """It scores its TODO 0: the line "layout warnings (cost nothing)" must not count it (review B6)."""
    student = {"student_id": "a", "status": "graded", "language": "en", "reason": "", "seconds": 1.0, "verdicts": [],
               "warnings": ["cell todo1_tests was deleted: restored from the release; this costs nothing",
                            "answer cell todo4 was deleted: TODO scores 0"],
               "warning_keys": ["cell_deleted", "answer_deleted"]}
    ops = class_report.operations([student])
    assert [w for _, w in ops["layout"]] == [student["warnings"][0]]
    assert ops["answer_deleted"] == [("a", student["warnings"][1])] and ops["other_notes"] == []
    summary = {"assignment": NAME, "columns": [], "tasks": {}, "rules": {}, "mistakes": [], "operations": ops,
               "sandbox": "x", "max_total": 0, "totals": {}, "scores": {}, "histogram": [], "blank": {}}
    lines = next(block[1] for heading, blocks in class_report.sections(summary, {}) if heading == "Operations" for block in blocks)
    assert "layout warnings (cost nothing): 1 in 1 submission(s)" in lines
    assert any(line.startswith("answer cells deleted (that TODO scores 0): a (answer cell todo4") for line in lines), lines


def test_warnings_are_counted_by_key_never_by_their_words():
    """A warning's kind is its catalogue key: the words decide nothing, and one without a key (a report.json of an
    older grader, a short list) is counted with the other notes, never dropped."""
    old = {"student_id": "a", "status": "graded", "language": "en", "reason": "", "seconds": 1.0, "verdicts": [],
           "warnings": ["cell todo1_tests was edited; the original is used for grading, so this costs nothing",
                        "answer cell todo1 appears 2 times; the last copy is graded, as the kernel ran it last",
                        "answer cell todo4 was deleted: TODO scores 0",
                        "todo2_tests: the in-notebook checks passed but the hidden rules gave 0/2"]}
    ops = class_report.operations([old])
    assert [w for _, w in ops["other_notes"]] == old["warnings"] and not ops["layout"] and not ops["answer_deleted"]
    keyed = old | {"warning_keys": ["answer_deleted", "cell_edited", "cell_edited", ""]}  # keys, whatever the words
    ops = class_report.operations([keyed])
    assert [w for _, w in ops["answer_deleted"]] == old["warnings"][:1] and [w for _, w in ops["layout"]] == old["warnings"][1:3]
    short = old | {"warning_keys": ["cell_edited"]}  # fewer keys than warnings: none is dropped
    assert sum(map(len, (class_report.operations([short])[k] for k in ("layout", "answer_deleted", "other_notes")))) == 4


@pytest.mark.slow
def test_report_json_keeps_the_answers_and_the_class_report_shows_those_to_look_at(out):
    """Every graded student but bob has the reference's TODO 1 (each mutant is in TODO 4): one group of the same code,
    shown side by side; bob's TODOs, left as given, are compared with nobody."""
    students = {s["student_id"]: s for s in report_of(out)["students"]}
    reference = editions.reference_answers(NAME)
    assert students["alice"]["answers"] == reference and students["gus_bad"]["answers"] == {}
    section = (out / "class-report.md").read_text().split("## Answers to look at", 1)[1].split("\n## ", 1)[0]
    same = [s for s, entry in students.items() if entry["answers"].get("todo1") == reference["todo1"]]
    # the reference's TODO 1 is the solved edition's: listed with it, which is not counted as a student
    assert len(same) >= 3 and (f"({len(same)} students, and the solved edition's answer): "
                               f"{similarity.SOLVED}, {', '.join(sorted(same))}.") in section
    assert "bob_blank" not in section and "not a finding about anyone" in section
    assert "<td><pre>" in (out / "class-report.html").read_text()


def test_answers_to_look_at_reach_the_html_inert():
    """"Trojan Source": an answer's bidi overrides (U+202E, U+2066-2069) and control characters (ESC) reached
    class-report.html as they were (html.escape leaves them), where the page then shows code other than the code
    compared. The HTML's side-by-side block and failing case show each line as the Markdown's do (inert())."""
    from grader.grade import RuleResult, TaskVerdict, verdicts_to_json
    trojan = "# access = \u202e'user' != 'admin'\u2066 \u2067\u2068\u2069 \x1b[2J\x07\n"
    answer = trojan + editions.reference_answers(NAME)["todo1"]

    def student(sid):
        verdict = TaskVerdict("TODO 1", "todo1", "todo1_tests", 2, 1.0,
                              [RuleResult("r1", True), RuleResult("r2", False, "got \u202eevil\x1b[31m")])
        return {"student_id": sid, "status": "graded", "language": "en", "reason": "", "warnings": [], "warning_keys": [],
                "verdicts": verdicts_to_json([verdict]), "answers": {"todo1": answer}}

    report = {"assignment": NAME, "max_total": 2, "task_columns": ["todo1"], "sandbox": "bwrap",
              "students": [student("ann"), student("ben")]}
    summary = class_report.summarize(report)
    assert summary["similar"]["todo1"].clusters == [[similarity.SOLVED, "ann", "ben"]]   # shown side by side (the solved edition's too)
    page, markdown = class_report.page(summary, {}), class_report.markdown(summary, {}, "class-report")
    for text in (page, markdown):
        assert not re.search("[\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x1f\x7f]", text)
        assert r"# access = \u202e'user' != 'admin'\u2066" in html.unescape(text)   # the line, written as escapes
        assert r"got \u202eevil\x1b[31m" in text


def test_the_similarity_reads_the_courses_stubs_and_solved_answers_or_none():
    from grader.assignment import get
    name = "01_continuous_batching"
    stubs, solved = class_report.course_answers(name)
    assert stubs == get(name).stubs and set(stubs) == set(get(name).answer_ids) and all(stubs.values())
    assert solved == get(name).reference
    # a report.json of an assignment this course does not have is compared among its students only; before, the
    # lookup stopped the run with "unknown assignment" (SystemExit)
    assert class_report.course_answers("09_not_in_this_course") == ({}, {})
