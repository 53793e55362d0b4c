"""`make autograde` end to end: good, untouched, buggy, bad, hanging, cheating and re-laid-out submissions.

Every batch is run twice: saved by `nbformat.write` (sources as lists of lines, as JupyterLab, Notebook 7
and Colab save them) and saved with one string per source (as some older tools do).
"""
import csv
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from grader import autograde, editions, sample_submissions
from grader.feedback import visible_text
from grader.editions import hidden_snippets

NAME = "02_decode_scheduling"


FULL = {"todo1": 2, "todo2": 3, "todo3": 3, "todo4": 4, "total": 12, "max_total": 12}


@pytest.fixture(scope="module", params=["lines", "string"])
def graded(request, tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    batch = (sample_submissions.demo_submissions(NAME) | sample_submissions.bad_submissions(NAME)
             | sample_submissions.layout_submissions(NAME))
    batch["tom_submitted_notebook_01"] = sample_submissions.filled("01_continuous_batching", editions.reference_answers("01_continuous_batching"))
    sample_submissions.write(batch, subs, form=request.param)
    (subs / "notes.txt").write_text("not a notebook")
    out = tmp_path_factory.mktemp("out")
    autograde.run(NAME, subs, out, jobs=0, cell_timeout=30)  # wall; a hang is caught by CPU limits, so load cannot interrupt an honest cell
    rows = {row["student_id"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    return out, rows, report


def totals(row):
    return {k: float(v) for k, v in row.items() if k != "student_id"}


@pytest.mark.slow
def test_grades_csv_columns(graded):
    out, rows, _ = graded
    assert open(out / "grades.csv").readline().strip() == "student_id,todo1,todo2,todo3,todo4,total,max_total"
    assert len(rows) == 18 and all(row["max_total"] == "12" for row in rows.values())


@pytest.mark.slow
def test_solution_full_marks_and_untouched_zero(graded):
    _, rows, report = graded
    assert totals(rows["alice_solution"]) == FULL
    assert totals(rows["bob_untouched"]) == {"todo1": 0, "todo2": 0, "todo3": 0, "todo4": 0, "total": 0, "max_total": 12}
    assert report["alice_solution"]["warnings"] == []


@pytest.mark.slow
def test_bug_in_todo3_costs_todo3_only(graded):
    _, rows, report = graded
    carol = totals(rows["carol_bug_todo3"])
    assert 0 < carol["todo3"] < 3 and (carol["todo1"], carol["todo2"], carol["todo4"]) == (2, 3, 4)
    assert any("todo3_tests: the in-notebook checks passed" in w for w in report["carol_bug_todo3"]["warnings"])


@pytest.mark.slow
@pytest.mark.parametrize("student, reason", [
    ("dan_bad_json", "unreadable JSON"), ("erin_other_notebook", "some other notebook"),
    ("tom_submitted_notebook_01", "this is 01_continuous_batching, not 02_decode_scheduling"),
])
def test_bad_submissions_score_zero_with_a_reason(graded, student, reason):
    out, rows, report = graded
    assert float(rows[student]["total"]) == 0 and report[student]["status"] == "bad"
    assert reason in report[student]["reason"]
    assert reason in visible_text((out / "feedback" / f"{student}.html").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("student, warning", [
    ("kai_deleted_test_cell", "cell todo4_tests was deleted: restored from the release; this costs nothing"),
    ("lea_duplicated_test_cell", "cell todo1_tests appears 2 times"),
    ("max_edited_test_cell", "cell todo1_tests was edited; the original is used for grading"),
    ("nia_moved_test_cell", None), ("oli_extra_cells", None), ("pia_other_kernel", None),
    ("pim_scratch_nbgrader_metadata", "4 cell(s) had nbgrader metadata the release does not have; it was removed"),
    ("quinn_duplicated_answer_last_wins", "answer cell todo1 appears 2 times; the last copy is graded"),
])
def test_layout_accidents_cost_nothing(graded, student, warning):
    out, rows, report = graded
    assert totals(rows[student]) == FULL, report[student]
    assert report[student]["status"] == "graded"
    if warning:
        assert any(warning in w for w in report[student]["warnings"]), report[student]["warnings"]
    else:
        assert report[student]["warnings"] == []
    page = visible_text((out / "feedback" / f"{student}.html").read_text())
    assert "TODO 4: 4 / 4 points" in page  # the full nbgrader page, not the plain fallback


@pytest.mark.slow
def test_the_last_copy_of_an_answer_is_graded(graded):
    """A stub pasted below the real answer replaces it in the kernel, so it is what the grade sees."""
    _, rows, report = graded
    assert totals(rows["ravi_duplicated_answer_stub_last_todo1"]) == FULL | {"todo1": 0, "total": 10}


@pytest.mark.slow
def test_a_deleted_answer_costs_its_todo_only(graded):
    _, rows, report = graded
    assert totals(rows["sam_deleted_answer_todo4"]) == FULL | {"todo4": 0, "total": 8}
    assert any("answer cell todo4 was deleted: TODO scores 0" in w for w in report["sam_deleted_answer_todo4"]["warnings"])


@pytest.mark.slow
def test_a_hanging_todo_costs_that_todo_and_is_reported(graded):
    out, rows, report = graded
    heidi = totals(rows["heidi_hangs_in_todo3"])
    assert heidi["todo3"] == 0 and heidi["total"] == 9
    # The sandbox already saw the hang: the feedback run does not wait for it again, and the page says why.
    warnings = report["heidi_hangs_in_todo3"]["warnings"]
    skipped = [w for w in warnings if w.endswith("not run: TODO 3 ran past its time limit when graded, and this cell uses it")]
    assert len(skipped) == 1, warnings  # one note, naming the cells
    assert skipped[0].startswith("todo3_tests, todo4_tests, cell ")  # TODO 4's checks and the plots call TODO 3
    page = visible_text((out / "feedback" / "heidi_hangs_in_todo3.html").read_text())
    assert "[not run] not run: TODO 3 ran past its time limit when graded" in page and "TODO 3: 0 / 3 points" in page


@pytest.mark.slow
def test_a_hang_nobody_saw_coming_is_interrupted_and_its_dependents_skipped(tmp_path):
    """A hang the feedback run was not warned of: the cell is interrupted at its CPU limit, and the later cells
    that use the hung TODO are not run into the same limit again."""
    from grader import notebook_run, runner

    nb = sample_submissions.hanging(NAME, "todo1")   # enqueue never returns; the run is not told so in advance
    at = next(i for i, c in enumerate(nb.cells) if editions.grade_id(c) == "todo1_tests")
    answer_ids = editions.answer_ids(editions.nbgrader_source(NAME))
    notes = notebook_run.execute(runner.shared(), nb, answer_ids, cell_cpu=1.5)
    assert notes[0] == "todo1_tests ran past its limit of 1.5 s of CPU time and was interrupted", notes
    assert any(o.get("ename") == "KeyboardInterrupt" for o in nb.cells[at].outputs)
    todo2_tests = next(c for c in nb.cells if editions.grade_id(c) == "todo2_tests")
    assert todo2_tests.outputs and "[not run]" not in str(todo2_tests.outputs)  # does not use TODO 1: still run
    todo4_tests = next(c for c in nb.cells if editions.grade_id(c) == "todo4_tests")
    assert todo4_tests.outputs[0]["text"] == "[not run] not run: TODO 1 ran past its time limit, and this cell uses it\n"
    assert notes[1].startswith("todo3_tests, todo4_tests, cell ") and notes[1].endswith(
        "not run: TODO 1 ran past its time limit, and this cell uses it")


@pytest.mark.slow
def test_silencing_the_kernel_gains_nothing(graded):
    _, rows, report = graded
    ivan = totals(rows["ivan_subverts_kernel"])
    assert ivan["todo2"] == 0 and ivan["total"] == 9
    # Inside his kernel every check "passed"; the sandboxed verdict disagrees, and the report says so.
    assert any(w.startswith("todo2_tests: the in-notebook checks passed") for w in report["ivan_subverts_kernel"]["warnings"])


@pytest.mark.slow
def test_feedback_shows_plots_and_verdicts_but_no_hidden_code(graded):
    out, rows, _ = graded
    snippets = hidden_snippets(editions.nbgrader_source(NAME))
    for page in (out / "feedback").glob("*.html"):
        text = visible_text(page.read_text())
        assert not [s for s in snippets if s in text], page.name
        assert "BEGIN HIDDEN" not in text and "_hidden_" not in text
    carol = (out / "feedback" / "carol_bug_todo3.html").read_text()
    assert carol.count("data:image/png") >= 4  # her own timelines and policy plot
    score = float(rows["carol_bug_todo3"]["todo3"])
    assert 0 < score < 3, "her bug costs part of TODO 3"
    assert "[FAIL]" in visible_text(carol) and f"TODO 3: {score:g} / 3 points" in visible_text(carol)


@pytest.mark.slow
def test_feedback_a_student_can_act_on(graded):
    """TOC by TODO, wrapped verdicts, the failing case as code, and no path of the grading machine."""
    out, _, _ = graded
    carol = (out / "feedback" / "carol_bug_todo3.html").read_text()
    toc = re.findall(r'<li><a href="#todo\d_tests">([^<]*)</a>', carol)
    assert toc == ["TODO 1", "TODO 2", "TODO 3", "TODO 4"] and ">Test cell<" not in carol
    assert "white-space: pre-wrap" in carol
    assert "paste this into a scratch cell and run it:" in visible_text(carol) and "sim = DecodeSchedulerSim(" in visible_text(carol)
    bob = visible_text((out / "feedback" / "bob_untouched.html").read_text())
    assert "NotImplementedError" in bob  # his tracebacks are shown...
    for folder in (ROOT, out, Path.home()):  # ...without the grading machine's folders
        assert str(folder) + "/" not in bob and str(folder.resolve()) + "/" not in bob


@pytest.mark.slow
def test_report_lists_everyone(graded):
    out, _, _ = graded
    report = (out / "report.md").read_text()
    assert re.search(r"18 submissions in [\d.]+ s", report) and "sandbox:" in report
    assert (out / ".work").exists() is False


@pytest.mark.slow
@pytest.mark.parametrize("name, full, cell_timeout, partial_bug, min_plots", [
    ("01_continuous_batching", {"todo1": 2, "todo2": 2, "todo3": 3, "todo4": 3, "total": 10, "max_total": 10}, 10, False, 0),
    ("03_batch_scheduling", {"todo1": 3, "todo2": 2, "todo3": 3, "todo4": 2, "todo5": 2, "total": 12, "max_total": 12}, 20, True, 6),
])
def test_the_other_assignments_end_to_end(tmp_path, name, full, cell_timeout, partial_bug, min_plots):
    """`make autograde ASSIGNMENT=...` works like the decode one: full marks, zero, and a bug that costs its TODO only."""
    subs = tmp_path / "subs"
    sample_submissions.write(sample_submissions.demo_submissions(name), subs)
    autograde.run(name, subs, tmp_path / "out", cell_timeout=cell_timeout)
    rows = {row["student_id"]: totals(row) for row in csv.DictReader(open(tmp_path / "out" / "grades.csv"))}
    assert rows["alice_solution"] == full
    assert rows["bob_untouched"]["total"] == 0
    buggy = next(k for k in rows if k.startswith("carol_bug_"))
    broken = buggy.rsplit("_", 1)[1]
    assert rows[buggy][broken] < full[broken] and (rows[buggy][broken] > 0 or not partial_bug)
    assert {k: v for k, v in rows[buggy].items() if k not in (broken, "total")} == {k: v for k, v in full.items() if k not in (broken, "total")}
    page = (tmp_path / "out" / "feedback" / "alice_solution.html").read_text()
    assert not [s for s in hidden_snippets(editions.nbgrader_source(name)) if s in visible_text(page)]
    assert page.count("data:image/png") >= min_plots


@pytest.mark.parametrize("setup, message", [
    (lambda d: ("03_nope", d), "unknown assignment '03_nope'"),
    (lambda d: (NAME, d / "missing"), "is not a folder of submissions"),
    (lambda d: (NAME, d), "no <student_id>.ipynb files"),
])
def test_clear_errors_for_bad_arguments(tmp_path, setup, message):
    name, submissions = setup(tmp_path)
    with pytest.raises(SystemExit, match=re.escape(message)):
        autograde.run(name, submissions, tmp_path / "out")


@pytest.mark.slow
def test_a_failing_case_that_reads_like_a_hidden_line_keeps_the_rich_page(tmp_path):
    """TODO 4's bug in `make bench`'s class fails on a case whose set-up line, `sim = DecodeSchedulerSim(free_kv_blocks=1)`,
    is also a hidden test's. The page shows it on purpose as the case to paste; it is published (it fell back to a
    plain page before), and it shows no other hidden line."""
    subs = tmp_path / "subs"
    sample_submissions.write({"bug3_todo4": sample_submissions.class_submissions(NAME)["bug3_todo4"]}, subs)
    [outcome] = autograde.run(NAME, subs, tmp_path / "out", jobs=1)
    assert not [w for w in outcome.warnings if "fell back" in str(w)], outcome.warnings
    text = visible_text((tmp_path / "out" / "feedback" / "bug3_todo4.html").read_text())
    on_purpose = {line.strip() for v in outcome.verdicts for rule in v.rules for line in rule.snippet.splitlines()}
    shown = [s for s in hidden_snippets(editions.nbgrader_source(NAME)) if s in text]
    assert shown and set(shown) <= on_purpose  # the coincidence this test is about, and nothing else


@pytest.mark.slow
def test_the_last_lines_say_how_the_verdicts_came_as_make_bench_reads_them(tmp_path, capsys):
    from grader import pipeline, throughput

    answers = editions.reference_answers(NAME)
    sample_submissions.write({"ann": sample_submissions.filled(NAME, answers), "bob": sample_submissions.filled(NAME, answers),
                              "cat": sample_submissions.release(NAME)}, tmp_path / "subs")
    pipeline.forget()  # counters of this run only
    autograde.run(NAME, tmp_path / "subs", tmp_path / "out", jobs=1)
    said = throughput.SAID.search(capsys.readouterr().out)
    # bob's answers are ann's: his four verdicts are hers, reused; cat left all four TODOs as released
    assert said and tuple(map(int, said.groups())) == (4, 4)


@pytest.mark.slow
def test_the_command_ends_with_everything_written_and_no_sandbox_left(tmp_path):
    """`python -m grader.autograde` ends with os._exit (autograde.leave): its output and its files must be complete
    by then; a bad argument still exits with its message."""
    import subprocess
    import sys

    sample_submissions.write({"ann": sample_submissions.filled(NAME, editions.reference_answers(NAME))}, tmp_path / "subs")
    cmd = [sys.executable, "-m", "grader.autograde", "--assignment", NAME, "--submissions", str(tmp_path / "subs")]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(f"class:    {tmp_path / 'out' / 'class-report.html'}")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["students"][0]["student_id"] == "ann"
    assert (tmp_path / "out" / "feedback" / "ann.html").read_text().rstrip().endswith("</html>")
    assert (tmp_path / "out" / "class-report.html").read_text().rstrip().endswith("</html>")
    bad = subprocess.run([*cmd[:4], "03_nope", *cmd[5:], "--out", str(tmp_path / "o2")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode != 0 and "unknown assignment '03_nope'" in bad.stderr


@pytest.mark.slow
def test_the_command_imports_neither_what_it_never_uses_nor_less_than_it_needs():
    """grader/__init__.py keeps jsonschema's IRI grammars and jupytext's Jupyter contents managers (with jupyter_server)
    out of a grading process; nbformat still validates and jupytext still reads a percent-format master."""
    import subprocess
    import sys

    code = ("import sys, grader.autograde, jupytext, nbformat\n"
            "nb = jupytext.reads('# %%\\nx = 1\\n', fmt='py:percent')\n"
            "nbformat.validate(nb)\n"
            "print(sorted(m for m in ('rfc3987_syntax', 'jupyter_server', 'jupytext.sync_contentsmanager') if sys.modules.get(m)),"
            " nb.cells[0].source)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[] x = 1", (done.stdout, done.stderr[-2000:])


@pytest.mark.parametrize("stock, ours, shown", [(51.2, 17.1, "2.99x"), (30.0, 10.0, "3.00x"), (21.5, 6.5, "3.30x"),
                                                (8.0, 9.0, "0.88x")])
def test_the_bench_never_rounds_a_ratio_up_to_a_goal(stock, ours, shown):
    """The bench's goal is a ratio of at least 3: 51.2 s / 17.1 s is 2.994, and must not print as 3.00x."""
    from grader import throughput

    assert throughput.times(stock, ours) == shown


def test_the_bench_reports_the_median_of_alternating_pairs():
    """Stock and ours take turns going first, and the figure is the middle pair by ratio, not the best one."""
    from grader import throughput
    from grader.throughput import Run

    assert throughput.alternated(3) == [("stock", "ours"), ("ours", "stock"), ("stock", "ours")]
    pairs = [(60.0, Run(18.0, 0, 4, "bwrap", 5)), (50.0, Run(20.0, 0, 4, "bwrap", 5)),
             (55.0, Run(16.0, 0, 4, "bwrap", 5))]
    stock, run = throughput.median_pair(pairs)   # ratios 3.33, 2.50, 3.44: the median is 3.33
    assert (stock, run.wall) == (60.0, 18.0)
    with pytest.raises(ValueError):
        throughput.median_pair(pairs[:2])   # two pairs have no single median


def test_the_bench_sets_stocks_cpu_per_submission_beside_ours():
    """On a loaded machine the wall ratio swings with the load; CPU seconds per submission say which side does more
    work, cut down as the ratio is (5.58 / 5.82 is 0.958...)."""
    from grader import throughput

    line = throughput.cpu_versus(5.58, 5.82)
    assert "5.58 CPU s per submission" in line and "ours 5.82" in line and "stock uses 0.95x our CPU" in line
