"""What a student controls reaches the instructor's terminal, report.md and grades.csv only as inert text.

File names (student ids) and cells carry terminal escapes (ESC/OSC), carriage returns, a forged progress line,
Markdown and HTML, spreadsheet formulas and a 2 MB grade_id; `make autograde` grades them beside a perfect and
a blank control.
"""
import csv
import json
import os

import nbformat
import pytest
from hypothesis import given, strategies as st

from grader import autograde, editions, safe_text, sample_submissions

NAME = "02_decode_scheduling"
FORGED = "\x1b[1A\x1b[2K  [1/1] alice_solution            12/12  graded"  # cursor up, erase, a line of ours
OSC_LINK = "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07"
IN_A_NAME = str.maketrans("/", "\u2215")  # a file name has no slash: one that looks like it
HOSTILE_IDS = ['=HYPERLINK("http:evil","click")', "<img src=x onerror=alert(1)>", "+cmd", "@SUM(A1)",
               f"{OSC_LINK}\r{FORGED}".translate(IN_A_NAME), "# heading [link](http:evil) ![img](http:evil)",
               "www.evil.example"]
HUGE_ID = "\x1b]0;owned\x07" + "g" * (2 << 20)


def labelled() -> nbformat.NotebookNode:
    """The perfect notebook with a hanging cell whose first line forges a progress line, and a 2 MB grade_id."""
    nb = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    hang = nbformat.v4.new_code_cell(f"# {FORGED}{OSC_LINK} | x | <img src=x> |\nimport time\ntime.sleep(600)")
    huge = nbformat.v4.new_code_cell("x = 1")
    huge.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "grade_id": HUGE_ID, "schema_version": 3}
    nb.cells += [hang, huge]
    return nb


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    subs, out = tmp_path_factory.mktemp("subs"), tmp_path_factory.mktemp("out")
    perfect = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    files = {"alice_solution": perfect, "bob_untouched": sample_submissions.release(NAME), "mallory_labels": labelled()}
    files |= {sid: perfect for sid in HOSTILE_IDS}
    sample_submissions.write(files, subs)
    (subs / f"{OSC_LINK}notes.txt".translate(IN_A_NAME)).write_text("not a notebook")
    capture = pytest.MonkeyPatch()
    printed = []
    capture.setattr(autograde, "say", lambda line: printed.append(line))
    try:
        autograde.run(NAME, subs, out, jobs=2, cell_timeout=8)
    finally:
        capture.undo()
    return out, "\n".join(printed), files


@pytest.mark.slow
def test_the_controls_keep_their_exact_scores(batch):
    out, _, _ = batch
    rows = {row["student_id"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert rows["alice_solution"]["total"] == "12" and rows["bob_untouched"]["total"] == "0"
    assert rows["mallory_labels"]["total"] == "12"  # her own hanging cell costs her nothing


@pytest.mark.slow
def test_the_terminal_gets_one_printable_line_per_student(batch):
    _, printed, files = batch
    assert printed.isascii() and "\x1b" not in printed and "\r" not in printed
    assert all(line.isprintable() for line in printed.splitlines())
    progress = [line for line in printed.splitlines() if line.lstrip().startswith("[")]
    assert sorted(line.split("]")[0] for line in progress) == sorted(f"  [{k}/{len(files)}" for k in range(1, len(files) + 1))
    assert all(len(line) < 400 for line in progress)  # a 2 MB grade_id makes no 2 MB line
    mallory = next(line for line in progress if "mallory_labels" in line)
    assert "ran past its limit" in mallory and "(# \\x1b&#91;1A\\x1b&#91;2K  &#91;1/1" in mallory  # shown, as text


@pytest.mark.slow
def test_an_invalid_id_never_appears_raw(batch):
    out, printed, _ = batch
    grades, report_md = (out / "grades.csv").read_text(), (out / "report.md").read_text()
    report = json.loads((out / "report.json").read_text())
    invalid = {autograde.student_name(sid) for sid in HOSTILE_IDS}
    assert len(invalid) == len(HOSTILE_IDS) and all(name.startswith("invalid-") for name in invalid)
    for sid in HOSTILE_IDS:
        assert sid not in grades and sid not in report_md and sid not in printed and sid not in json.dumps(report)
    assert invalid <= {s["student_id"] for s in report["students"]}
    reasons = [s["reason"] for s in report["students"] if s["student_id"] in invalid]
    assert all("is not a usable student id" in r for r in reasons)  # with the name, inert, to find the file by


@pytest.mark.slow
def test_grades_csv_holds_no_formula(batch):
    out, _, files = batch
    rows = list(csv.reader(open(out / "grades.csv")))
    assert len(rows) == len(files) + 1
    assert not [cell for row in rows for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]


@pytest.mark.slow
def test_report_md_gains_no_heading_link_image_or_tag(batch):
    out, _, files = batch
    text = (out / "report.md").read_text()
    lines = text.splitlines()
    assert all(line.isascii() and line.isprintable() for line in lines[2:]) and "\r" not in text  # [1]: our "·"
    assert [line for line in lines if line.startswith("#")] == [lines[0]]  # the headline only
    assert "](" not in text and "<img" not in text and "http://" not in text
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| student")]
    assert len(rows) == len(files) and all(row.count(" | ") == 7 for row in rows)  # no cell split by a student's |
    assert len(text) < 20_000  # the 2 MB grade_id is not in it


@given(st.text(max_size=300), st.integers(10, 400))
def test_inert_text_is_printable_ascii_markup_free_bounded_and_stable(text, limit):
    shown = safe_text.inert(text, limit)
    assert shown.isascii() and shown.isprintable() and len(shown) <= limit
    assert not set(shown) & set(safe_text.MARKUP) and "://" not in shown
    assert safe_text.inert(shown, limit) == shown


def test_inert_does_little_work_on_a_huge_text():
    assert safe_text.inert(HUGE_ID, 64).startswith("\\x1b&#93;0;owned\\x07ggg") and len(safe_text.inert(HUGE_ID, 64)) == 64
    assert safe_text.inert("alice_solution") == "alice_solution" and safe_text.csv_cell("=1+1") == "'=1+1"
    assert safe_text.inert(os.fsdecode(b"dup2\xff")) == safe_text.inert("dup2\\xff")  # hence the hashed keys
