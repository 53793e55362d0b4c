"""LMS gradebook files (Canvas, Moodle) from a run's grades.csv and a roster that maps student ids to LMS users.

    python -m grader.lms canvas OUT/grades.csv roster.csv [--per-todo] [--out FILE]     (make gradebook LMS=canvas ...)
    python -m grader.lms moodle OUT/grades.csv roster.csv [--moodle-field email|idnumber|username] [--per-todo]

What it reads. grades.csv (grader/report.py), by column name: `student_id`, `total` (the final total: with a late
penalty, the total after it), `max_total`, and in per-TODO mode each TODO's column (`todo1`, ...); other columns are
ignored. The assignment (whose TODOs, points and name the columns use) is report.json's beside grades.csv, or
--assignment. The roster is a CSV with a `student_id` column (the kit's id, the notebook's file name) and the LMS
identity: for Canvas the columns of Canvas's own gradebook export (`Student`, `ID`, `SIS User ID`, `SIS Login ID`,
`Section`; at least one of the three ids on every row), so Canvas's export with a `student_id` column added is a
roster; for Moodle the column --moodle-field names (`email`, `idnumber` or `username`, Moodle's user fields).

What it refuses, naming the students or columns, before writing anything: a grades.csv student with no roster row
(a grade that would not reach anyone), a roster student with no grades.csv row (unless --absent zero or omit), a
student id twice in either file, two roster rows with the same LMS identity, a missing column, a score that is not
a number, below 0 or above its points, a max_total that is not the assignment's, and in per-TODO mode a total that
is not the sum of its TODOs (a late penalty applies to the total only: upload the total then).

Numbers: rounded to 2 decimal places, half up (Canvas's export shows 2 places), written with a dot and no thousands
separator, trailing zeros dropped (12, 10.5, 2.67): Canvas's importer reads a dot or a comma as the decimal mark
(its decimal_comma_to_period converter, which would also turn 1,200.5 into 1200.5 but 1,200 into 1.200).

Canvas (checked against Canvas's importer, instructure/canvas-lms app/models/gradebook_importer.rb, and the guide
https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades,
which follows Canvas's https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807):
header `Student,ID,SIS User ID,SIS Login ID,Section,<assignment>...`; the importer needs a first cell with "Student",
a second with "ID" and "Section" as the last student column. Then a `Points Possible` row (first cell
"Points Possible", each assignment's points: a new assignment gets them), then one row per student. A student is found
by `ID` (Canvas's user id), else `SIS User ID`, else `SIS Login ID`, else by name. An assignment column named
`Title (123)` updates assignment 123 (--canvas-id), a bare title updates the assignment of that title or creates
one. Titles holding a column Canvas reads as no assignment (`Current Score`, `Final Grade`, ...) are refused.

Moodle (checked against https://docs.moodle.org/311/en/Grade_import and Moodle's reader, moodle/moodle
grade/import/csv/classes/load_data.php and lib/csvlib.class.php): a header row, then one row per student; on import the instructor maps
the identity column ("Map from" `email`, "Map to" Email address, i.e. useremail; idnumber -> useridnumber,
username -> username) and each grade column to a grade item or a new one. A row whose user is not found stops the
whole import; a grade is read by unformat_float(value, strict), a non-number stops it. Cells hold no comma, quote
or line break: some Moodle versions' CSV reader splits lines at the separator without undoing quotes.

Spreadsheets. Both files are often opened in a spreadsheet first, where a cell beginning with = + - @ is a formula
(=HYPERLINK(...), -2+3+cmd|...). A roster's names (Canvas's Student and Section) are written through
safe_text.csv_cell, a leading ' making them text; an id the LMS finds a student by (Canvas's ID, SIS User ID, SIS
Login ID; Moodle's field) and a column title are refused instead, since the quote would change what the LMS matches.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

from .safe_text import csv_cell, inert

LMSS = ("canvas", "moodle")
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_IDS = ["ID", "SIS User ID", "SIS Login ID"]           # how Canvas finds the student, in its order
CANVAS_POINTS_ROW = "Points Possible"
# Header text Canvas's importer takes for no assignment (gradebook_importer.rb: reserved and non-assignment columns,
# the latter matched anywhere in a title).
CANVAS_RESERVED = {"Student", "LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Section", "Integration ID",
                   "Root Account"}
CANVAS_NOT_ASSIGNMENTS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points",
                          "Final Grade", "Override Score", "Override Grade", "Override Status")
MOODLE_FIELDS = {"email": "useremail", "idnumber": "useridnumber", "username": "username"}  # roster column: Map to
ABSENT = ("error", "zero", "omit")
CENT = Decimal("0.01")
SHOWN = 20   # names listed in one error at most


class GradebookError(SystemExit):
    """Bad input: the message names what is wrong; nothing was written."""

    def __init__(self, message: str):
        super().__init__(f"error: {message}")


def listed(names) -> str:
    names = sorted(inert(n, 80) for n in names)
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def number(text: str, where: str) -> Decimal:
    """A score of grades.csv as a Decimal (its exact text: no binary rounding before ours)."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise GradebookError(f"{where}: {inert(text, 40)!r} is not a number") from None
    if not value.is_finite():
        raise GradebookError(f"{where}: {inert(text, 40)!r} is not a number")
    return value


def shown(value: Decimal) -> str:
    """2 decimal places, half up, a dot, no exponent or thousands separator, trailing zeros dropped: 12, 10.5, 2.67."""
    text = format(value.quantize(CENT, rounding=ROUND_HALF_UP), "f")
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def read_csv(path: Path, what: str) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV (UTF-8, a BOM allowed); a row with other than the header's cell count is refused."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        raise GradebookError(f"no {what} at {path}") from None
    except UnicodeDecodeError as exc:
        raise GradebookError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not rows:
        raise GradebookError(f"{path} is empty: the {what} needs a header row")
    header = [cell.strip() for cell in rows[0]]
    twice = [c for c, n in Counter(header).items() if n > 1]
    if twice:
        raise GradebookError(f"{path}: the column {listed(twice)} comes twice in the header")
    body = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        if len(row) != len(header):
            raise GradebookError(f"{path} line {line}: {len(row)} cells, but the header has {len(header)}")
        body.append(dict(zip(header, row)))
    return header, body


def need(header: list[str], columns: list[str], path: Path, why: str = "") -> None:
    missing = [c for c in columns if c not in header]
    for mark in (";", "\t"):
        if missing and len(header) == 1 and mark in header[0]:
            raise GradebookError(f"{path} is separated by {mark!r}, not by commas (Excel saves CSV so in some locales): save "
                                 "it as \"CSV UTF-8 (comma delimited)\", or change the separator, and run again")
    if missing:
        raise GradebookError(f"{path} has no column {listed(missing)}{why} (its columns: {', '.join(header)})")


def unique(ids: list[str], path: Path, what: str) -> None:
    twice = [i for i, n in Counter(ids).items() if n > 1]
    if twice:
        raise GradebookError(f"{path}: {what} on more than one row: {listed(twice)}")


def assignment_of(grades: Path, name: str | None) -> tuple[str, list[tuple[str, str, Decimal]], Decimal]:
    """The assignment's name, its TODOs (column, task id, points) and its points, from report.json beside grades.csv
    or the name given (both: they must agree)."""
    from .assignment import get, names
    report = grades.parent / "report.json"
    known = None
    if report.is_file():
        known = json.loads(report.read_text(encoding="utf-8")).get("assignment")
    if name and known and name != known:
        raise GradebookError(f"--assignment {name}, but {report} says these grades are of {known}")
    name = name or known
    if not name:
        raise GradebookError(f"no report.json beside {grades} to say which assignment it grades: give --assignment")
    if name not in names():
        raise GradebookError(f"no assignment {inert(name, 80)!r}; known: {', '.join(names())}")
    todos = get(name).todos
    return name, [(t.answer_id, t.task_id, Decimal(str(t.points))) for t in todos], sum((Decimal(str(t.points)) for t in todos), Decimal(0))


def read_grades(path: Path, todos, max_points: Decimal, per_todo: bool) -> dict[str, dict[str, Decimal]]:
    """student_id -> {'total': .., and each TODO column in per-TODO mode}, every value checked."""
    header, rows = read_csv(path, "grades.csv")
    columns = [c for c, _, _ in todos] if per_todo else []
    need(header, ["student_id", "total", *columns], path)
    unique([r["student_id"] for r in rows], path, "student_id")
    return {row["student_id"]: _scores(path, row, todos, columns, max_points, per_todo) for row in rows}


def _scores(path: Path, row: dict, todos, columns: list[str], max_points: Decimal, per_todo: bool) -> dict[str, Decimal]:
    """One row of grades.csv: its total and TODO columns, each within its points, and the TODOs summing to the total."""
    sid = row["student_id"]
    if not sid.strip():
        raise GradebookError(f"{path}: a row with no student_id")
    where = f"{path}, student {inert(sid, 80)}"
    scores = {"total": number(row["total"], f"{where}, total")}
    if "max_total" in row and number(row["max_total"], f"{where}, max_total") != max_points:
        raise GradebookError(f"{where}: max_total is {inert(row['max_total'], 40)}, but the assignment's TODOs are worth {shown(max_points)}")
    for column in columns:
        scores[column] = number(row[column], f"{where}, {column}")
    limits = {"total": max_points} | {c: p for c, _, p in todos if c in scores}
    for column, value in scores.items():
        if not 0 <= value <= limits[column]:
            raise GradebookError(f"{where}: {column} is {inert(row[column], 40)}, outside 0..{shown(limits[column])}")
    if per_todo:
        summed = sum((scores[c] for c in columns), Decimal(0))
        if abs(summed - scores["total"]) > CENT:  # grades.csv rounds the total to 2 places, each TODO to 6 digits
            raise GradebookError(f"{where}: the TODOs sum to {shown(summed)} but total is {inert(row['total'], 40)} (a late "
                                 "penalty?): per-TODO columns would not add up to the total; upload the total instead")
    return scores


def read_roster(path: Path, lms: str, moodle_field: str) -> dict[str, dict[str, str]]:
    """student_id -> the roster row (stripped cells), each LMS identity present and used once."""
    header, rows = read_csv(path, "roster")
    need(header, ["student_id"], path)
    identity = _identity(path, header, lms, moodle_field)
    kept = [row for row in (_roster_row(path, row, lms, identity) for row in rows) if row is not None]
    unique([row["student_id"] for row in kept], path, "student_id")
    for column in identity:
        unique([row[column] for row in kept if row[column]], path, f"the same {column}")
    return {row["student_id"]: row for row in kept}


def _identity(path: Path, header: list[str], lms: str, moodle_field: str) -> list[str]:
    """The roster's columns that identify a student in the LMS (Canvas's id columns present, or Moodle's field)."""
    if lms == "canvas":
        need(header, ["Student"], path, " (Canvas's name column; it may be empty)")
        if not any(c in header for c in CANVAS_IDS):
            raise GradebookError(f"{path} has none of Canvas's id columns {', '.join(CANVAS_IDS)} (its columns: {', '.join(header)})")
        return [c for c in CANVAS_IDS if c in header]
    need(header, [moodle_field], path, f" (--moodle-field {moodle_field})")
    return [moodle_field]


def _roster_row(path: Path, row: dict, lms: str, identity: list[str]) -> dict[str, str] | None:
    """A roster row with its cells stripped, checked; None for the second row of Canvas's own export."""
    row = {k: v.strip() for k, v in row.items()}
    if lms == "canvas" and CANVAS_POINTS_ROW in row["Student"]:
        return None
    sid = row["student_id"]
    if not sid:
        raise GradebookError(f"{path}: a row with no student_id ({', '.join(f'{c}={row[c]!r}' for c in identity)})")
    if not any(row[c] for c in identity):
        raise GradebookError(f"{path}, student {inert(sid, 80)}: no {' or '.join(identity)} to find them in {lms.title()} by")
    if lms == "canvas" and row.get("ID") and not row["ID"].isdigit():
        raise GradebookError(f"{path}, student {inert(sid, 80)}: ID {row['ID']!r} is not Canvas's numeric user id")
    return row


def match(grades: dict, roster: dict, absent: str, grades_path: Path, roster_path: Path) -> list[str]:
    """The student ids to write, in roster order: every graded student must have a roster row; a roster student with
    no grade is an error, a 0 or left out as `absent` says."""
    unmapped = [sid for sid in grades if sid not in roster]
    if unmapped:
        raise GradebookError(f"{len(unmapped)} student(s) of {grades_path} have no row in {roster_path}, so their grade "
                             f"would reach no one: {listed(unmapped)}. Add them to the roster (or, for a file that "
                             "is no student's, delete its row from a copy of grades.csv)")
    ungraded = [sid for sid in roster if sid not in grades]
    if ungraded and absent == "error":
        raise GradebookError(f"{len(ungraded)} roster student(s) have no row in {grades_path} (no submission?): "
                             f"{listed(ungraded)}. Give --absent zero to upload 0 for them, or --absent omit to leave "
                             "them out of the file (their LMS grade is then left as it is)")
    return [sid for sid in roster if sid in grades or absent == "zero"]


def columns_of(name: str, title: str | None, todos, per_todo: bool) -> list[tuple[str, str | None, Decimal]]:
    """(LMS column title, grades.csv column or None for the total, points) for each grade column written."""
    base = title or name
    if per_todo:
        return [(f"{base} {task}", column, points) for column, task, points in todos]
    return [(base, None, sum((p for _, _, p in todos), Decimal(0)))]


def check_canvas_titles(titles: list[str], canvas_ids: list[str]) -> list[str]:
    if canvas_ids and len(canvas_ids) != len(titles):
        raise GradebookError(f"{len(canvas_ids)} --canvas-id given for {len(titles)} grade column(s) ({', '.join(titles)})")
    for title in titles:
        bad = [word for word in CANVAS_NOT_ASSIGNMENTS if word in title]
        if title in CANVAS_RESERVED or bad:
            raise GradebookError(f"Canvas reads a column titled {title!r} as no assignment: give another --title")
        if re.search(r"\(\d+\)\s*$", title):
            raise GradebookError(f"Canvas reads the '(number)' ending {title!r} as an assignment id: give ids with --canvas-id")
    if any(not i.isdigit() for i in canvas_ids):
        raise GradebookError(f"--canvas-id takes Canvas's numeric assignment ids, not {', '.join(canvas_ids)}")
    return [f"{t} ({i})" for t, i in zip(titles, canvas_ids)] if canvas_ids else titles


def not_a_formula(cell: str, what: str) -> str:
    """An identity or a title as it is, refused if a spreadsheet would read it as a formula (a leading = + - @):
    csv_cell's quote would change what the LMS matches the student or the assignment by."""
    if csv_cell(cell) != cell:
        raise GradebookError(f"{what} {inert(cell, 80)!r} begins with {cell[:1]!r}, which a spreadsheet opening the "
                             "file reads as a formula; quoting it would change what the LMS matches: change it")
    return cell


def canvas_rows(order, grades, roster, columns, canvas_ids) -> list[list[str]]:
    """Canvas's rows. A roster's cells are text, never a formula for a spreadsheet that opens the file: the names
    (Student, Section) through csv_cell (a leading = + - @ quoted), the ids Canvas finds a student by refused."""
    titles = check_canvas_titles([not_a_formula(t, "the column title") for t, _, _ in columns], canvas_ids)
    rows = [CANVAS_STUDENT_COLUMNS + titles,
            [CANVAS_POINTS_ROW] + [""] * (len(CANVAS_STUDENT_COLUMNS) - 1) + [shown(p) for _, _, p in columns]]
    for sid in order:
        person = roster[sid]
        cells = [not_a_formula(person.get(c, ""), f"student {inert(sid, 80)}'s {c}") if c in CANVAS_IDS
                 else csv_cell(person.get(c, "")) for c in CANVAS_STUDENT_COLUMNS]
        rows.append(cells + scores_of(grades.get(sid), columns))
    return rows


def moodle_rows(order, grades, roster, columns, field) -> list[list[str]]:
    """Moodle's rows: the identity and the titles refused if a spreadsheet would read them as a formula (the
    identity is what Moodle matches; csv_cell's quote would change it)."""
    rows = [[field] + [not_a_formula(t, "the column title") for t, _, _ in columns]]
    rows += [[not_a_formula(roster[sid][field], f"student {inert(sid, 80)}'s {field}")] + scores_of(grades.get(sid), columns)
             for sid in order]
    for row in rows:
        for cell in row:
            if re.search(r"[,\"\r\n]", cell) or cell != cell.strip():
                raise GradebookError(f"Moodle cell {cell!r} holds a comma, quote, line break or edge spaces, which "
                                     "some Moodle versions' CSV reader does not read back: change it (or --title)")
    return rows


def scores_of(scores: dict | None, columns) -> list[str]:
    """A student's cells: a missing student (--absent zero) scores 0."""
    return [shown(scores[column or "total"]) if scores else "0" for _, column, _ in columns]


def gradebook(lms: str, grades_path: Path, roster_path: Path, out: Path | None = None, per_todo: bool = False,
              assignment: str | None = None, title: str | None = None, absent: str = "error",
              moodle_field: str = "email", canvas_ids: list[str] | None = None) -> Path:
    """Check everything, then write the LMS's file (whole, or not at all); returns its path."""
    if lms not in LMSS:
        raise GradebookError(f"LMS {lms!r}: one of {', '.join(LMSS)}")
    if absent not in ABSENT:
        raise GradebookError(f"--absent {absent!r}: one of {', '.join(ABSENT)}")
    if moodle_field not in MOODLE_FIELDS:
        raise GradebookError(f"--moodle-field {moodle_field!r}: one of {', '.join(MOODLE_FIELDS)}")
    name, todos, max_points = assignment_of(grades_path, assignment)
    grades = read_grades(grades_path, todos, max_points, per_todo)
    roster = read_roster(roster_path, lms, moodle_field)
    order = match(grades, roster, absent, grades_path, roster_path)
    columns = columns_of(name, title, todos, per_todo)
    if lms == "canvas":
        rows = canvas_rows(order, grades, roster, columns, canvas_ids or [])
    else:
        rows = moodle_rows(order, grades, roster, columns, moodle_field)
    out = out or grades_path.parent / f"{lms}-gradebook{'-per-todo' if per_todo else ''}.csv"
    if out.resolve() in (grades_path.resolve(), roster_path.resolve()):
        raise GradebookError(f"--out {out} is an input file")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    os.replace(partial, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lms", choices=LMSS)
    parser.add_argument("grades", type=Path, help="grades.csv of make autograde (or of a shard merge)")
    parser.add_argument("roster", type=Path, help="CSV: student_id and the LMS identity columns")
    parser.add_argument("--out", type=Path, help="default: <lms>-gradebook[-per-todo].csv beside grades.csv")
    parser.add_argument("--per-todo", action="store_true", help="one grade column per TODO instead of the total")
    parser.add_argument("--assignment", help="default: report.json's beside grades.csv")
    parser.add_argument("--title", help="the LMS column's title (per TODO: '<title> TODO k'); default: the assignment's name")
    parser.add_argument("--absent", choices=ABSENT, default="error", help="a roster student with no grade (default: error)")
    parser.add_argument("--moodle-field", choices=list(MOODLE_FIELDS), default="email",
                        help="the roster column Moodle finds users by (default: email)")
    parser.add_argument("--canvas-id", action="append", default=[], dest="canvas_ids",
                        help="Canvas assignment id of a grade column (once per column, in order)")
    args = parser.parse_args(argv)
    out = gradebook(args.lms, args.grades, args.roster, args.out, args.per_todo, args.assignment, args.title,
                    args.absent, args.moodle_field, args.canvas_ids)
    rows = sum(1 for _ in open(out, encoding="utf-8")) - (2 if args.lms == "canvas" else 1)
    print(f"{args.lms}: {rows} students -> {out}")
    if args.lms == "moodle":
        print(f"  Moodle: Import > CSV file; Map from '{args.moodle_field}' to {MOODLE_FIELDS[args.moodle_field]}, "
              "then each grade column to its grade item (or a new one)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
