"""Late submissions in `make autograde`: the due date, penalty and extensions of course.toml's [deadline], each
student's submission time, and what lateness costs.

    [deadline]                          # every assignment (a key of [deadline.<assignment>] wins for that one)
    per_day = 0.1                       # 10% of the raw score per started day late
    [deadline.02_decode_scheduling]
    due = 2026-12-01T23:59:00+08:00     # with its UTC offset; no due date: no late policy
    extensions = {alice = 2, bob = 2026-12-04T12:00:00+08:00}   # days added, or a new due date

Submission times come from `--times`: a CSV `student_id,timestamp` or nbgrader's `submitted/` folder
(<student>/<assignment>/timestamp.txt, as nbgrader submit writes it); extensions may come from `--extensions`, a CSV
`student_id,extension`. Settings and files the instructor wrote are checked before anything is graded
(DeadlineError); a student whose time is missing or unreadable is graded with no penalty and flagged. The nbgrader
path (grader/nbgrader_plugin.py) never reads any of this: nbgrader applies its own late penalty there.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from . import safe_io
from .messages import Message
from .paths import ROOT
from .safe_text import inert

COURSE_TOML = ROOT / "course.toml"
DAY = timedelta(days=1)
TIMESTAMP_BYTES = 4096
# course.toml's [deadline] settings: one name each, and what it means (docs/instructors.md, Deadlines, is written from it)
KEYS = {
    "due": "the due date and time with its UTC offset (2026-12-01T23:59:00+08:00, or Z for UTC); without it, no late policy",
    "per_day": "fraction of the raw score taken per started day late (0.1: 10%/day); 0: none",
    "flat": "fraction of the raw score taken once from any late submission (0.2: 20%), added to per_day's",
    "max_penalty": "the largest fraction taken in all (1: the whole score)",
    "extensions": "a table student_id = days added to the due date (a number), or = the student's own due date; "
                  "never before the due date (an earlier one is refused); late within it costs nothing (--extensions FILE "
                  "adds to it and wins)",
}
DEFAULTS = {"per_day": 0.0, "flat": 0.0, "max_penalty": 1.0}
TIMES_COLUMNS = ("student_id", "timestamp")
EXTENSION_COLUMNS = ("student_id", "extension")


class DeadlineError(ValueError):
    """A deadline setting, times file or extensions file that cannot be used: grading does not start."""


def parse_time(value, what: str, naive_utc: bool = False) -> datetime:
    """An aware datetime from TOML's datetime, ISO 8601 text (2026-12-01T23:59:00+08:00, a Z) or nbgrader's
    timestamp ("2026-12-01 23:59:00.123456 UTC"). Without an offset it is refused, unless `naive_utc` (nbgrader's
    timestamp.txt, which nbgrader itself reads as UTC)."""
    if isinstance(value, datetime):
        found = value
    elif isinstance(value, date):
        raise DeadlineError(f"{what}: {value} is a date without a time: write {value}T23:59:00+08:00 (your time and UTC offset)")
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            found = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            found = _nbgrader_time(text, what)
    else:
        raise DeadlineError(f"{what}: {value!r} is not a date and time (write 2026-12-01T23:59:00+08:00)")
    if found.tzinfo is None or found.utcoffset() is None:
        if naive_utc:
            return found.replace(tzinfo=timezone.utc)
        raise DeadlineError(f"{what}: {value} has no UTC offset: write it as {found.isoformat()}+08:00 (your offset), or Z for UTC")
    return found


def _nbgrader_time(text: str, what: str) -> datetime:
    """nbgrader's default timestamp format, '%Y-%m-%d %H:%M:%S.%f %Z', read as nbgrader.utils.parse_utc reads it."""
    parts = text.split(" ")
    if len(parts) == 3:
        from dateutil import tz

        try:
            when = datetime.fromisoformat(" ".join(parts[:2]))
        except ValueError:
            when = None
        zone = tz.UTC if parts[2].upper() in ("UTC", "Z", "GMT") else tz.gettz(parts[2])
        if when is not None and zone is not None:
            return when.replace(tzinfo=zone)
    raise DeadlineError(f"{what}: {text!r} is not a date and time (write 2026-12-01T23:59:00+08:00)")


def _fraction(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise DeadlineError(f"{what} must be a fraction from 0 to 1 (0.1 for 10%), not {value!r}")
    return float(value)


def _extension(value, due: datetime, what: str) -> datetime:
    """A student's own due date: `value` days after `due`, or the date and time `value` names, never before `due`
    (an extension moves a due date later only: an earlier one is refused, not silently ignored)."""
    own = _own_due(value, due, what)
    if own < due:
        raise DeadlineError(f"{what}: {_shown(own)} is before the due date {_shown(due)}; an extension can only move "
                            "the due date later (give the days added, or a later date and time)")
    return own


def _own_due(value, due: datetime, what: str) -> datetime:
    """The date and time an extension's `value` names: a number of days after `due`, or a date and time."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return parse_time(value, what)
    if isinstance(value, bool) or not isinstance(value, (int, float, datetime, date)):
        raise DeadlineError(f"{what}: {value!r} is neither a number of days nor a date and time")
    if isinstance(value, (int, float)):
        if not 0 <= value <= 366 or math.isnan(value):
            raise DeadlineError(f"{what}: {value!r} days is not an extension (0 to 366)")
        return due + timedelta(days=value)
    return parse_time(value, what)


@dataclass(frozen=True)
class Late:
    """One student's lateness: `kind` is on_time, late, extension (late, but within the student's extension) or
    no_time (no usable submission time: no penalty, flagged)."""

    kind: str
    due: datetime                       # the due date in force for this student (an extension's, if any)
    submitted: datetime | None = None
    days: int = 0                       # started days past `due`
    fraction: float = 0.0               # of the raw score taken
    rule: tuple = (0.0, 0.0, 1.0)       # per_day, flat, max_penalty
    original: datetime | None = None    # the course's due date when an extension is in force
    why: str = ""                       # of a no_time: the time that could not be read

    def penalty(self, raw: float) -> float:
        return round(raw * self.fraction, 2)

    def note(self, raw: float) -> Message | None:
        """What the reports say (English there, the student's language on a page); None when on time."""
        due = _shown(self.due)
        if self.kind == "no_time":
            return Message("late_bad_time", {"due": due, "time": inert(self.why, 80)}) if self.why else Message("late_no_time", {"due": due})
        if self.kind == "extension":
            return Message("late_extension", {"due": _shown(self.original), "extended": due})
        if self.kind != "late":
            return None
        per_day, flat, cap = self.rule
        values = {"days": self.days, "due": due, "points": f"{self.penalty(raw):g}", "raw": f"{raw:g}",
                  "per_day": _percent(per_day), "flat": _percent(flat), "percent": _percent(self.fraction)}
        if not self.fraction:
            return Message("late_no_penalty", values)
        if self.fraction < round(per_day * self.days + flat, 6):
            return Message("late_capped", values)
        return Message("late_per_day_flat" if per_day and flat else "late_per_day" if per_day else "late_flat", values)

    def student_note(self, raw: float) -> Message | None:
        """What the student's page says: a penalty and an extension; a missing time is the instructor's to check."""
        return None if self.kind == "no_time" else self.note(raw)

    def to_json(self, raw: float) -> dict:
        """report.json's "late" of a student (the note in English, with its catalogue key)."""
        note = self.note(raw)
        return {"kind": self.kind, "due": self.due.isoformat(), "original_due": self.original.isoformat() if self.original else None,
                "submitted": self.submitted.isoformat() if self.submitted else None, "days": self.days,
                "fraction": self.fraction, "raw_total": round(raw, 2), "penalty": self.penalty(raw),
                "note": note.text("en") if note else "", "note_key": note.key if note else ""}


def _shown(when: datetime | None) -> str:
    return when.isoformat(sep=" ", timespec="minutes") if when else ""


def _percent(fraction: float) -> str:
    return f"{round(100 * fraction, 4):g}"


@dataclass
class Policy:
    """The late policy of one assignment for one run."""

    assignment: str
    due: datetime
    per_day: float = 0.0
    flat: float = 0.0
    max_penalty: float = 1.0
    extensions: dict[str, datetime] = field(default_factory=dict)    # student_id -> the student's own due date
    submitted: dict[str, datetime | str] = field(default_factory=dict)   # student_id -> submitted (a str: unreadable)
    times: str = ""                                                   # the setting `times` (--times) given ("" if none)

    def late_of(self, student: str) -> Late:
        """The lateness of `student` (a student_name())."""
        rule = (self.per_day, self.flat, self.max_penalty)
        own = self.extensions.get(student)
        due, original = (own, self.due) if own is not None and own > self.due else (self.due, None)
        submitted = self.submitted.get(student)
        if not isinstance(submitted, datetime):
            return Late("no_time", due, rule=rule, original=original, why=submitted or "")
        if submitted <= due:
            kind = "extension" if original is not None and submitted > original else "on_time"
            return Late(kind, due, submitted, rule=rule, original=original)
        days = math.ceil((submitted - due) / DAY)
        fraction = round(min(self.max_penalty, self.per_day * days + self.flat), 6)
        return Late("late", due, submitted, days, fraction, rule, original)

    def describe(self) -> dict:
        """report.json's "deadline": the policy the run applied (shards to be merged must agree on it)."""
        return {"due": self.due.isoformat(), "per_day": self.per_day, "flat": self.flat, "max_penalty": self.max_penalty,
                "extensions": len(self.extensions), "times": self.times}


def settings(assignment: str, toml: Path) -> dict:
    """The [deadline] settings of `assignment` in course.toml: [deadline]'s, then [deadline.<assignment>]'s over them
    (extensions merged, the assignment's winning per student). {} when there are none."""
    from .course import tomllib

    try:
        table = tomllib.loads(toml.read_text(encoding="utf-8")).get("deadline", {})
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise DeadlineError(f"{toml}: {exc}") from None
    if not isinstance(table, dict):
        raise DeadlineError(f"{toml}: deadline must be a table ([deadline])")
    from .assignment import names

    known = names()
    for name, value in table.items():
        if name not in KEYS and not (isinstance(value, dict) and name in known):
            raise DeadlineError(f"{toml}: [deadline] has {name!r}, which is neither a setting ({', '.join(KEYS)}) "
                                f"nor an assignment ({', '.join(known)})")
    own = table.get(assignment, {})
    for name in own:
        if name not in KEYS:
            raise DeadlineError(f"{toml}: [deadline.{assignment}] has {name!r}; the settings are {', '.join(KEYS)}")
    found = {k: v for k, v in table.items() if k in KEYS} | own
    extensions = {**_table(table.get("extensions", {}), toml, "[deadline] extensions"),
                  **_table(own.get("extensions", {}), toml, f"[deadline.{assignment}] extensions")}
    return found | ({"extensions": extensions} if extensions else {})


def _deadline_table(toml: Path) -> dict:
    """course.toml's [deadline] table as read (settings() has checked it)."""
    from .course import tomllib
    return tomllib.loads(toml.read_text(encoding="utf-8")).get("deadline", {})


def _own_settings(assignment: str, toml: Path) -> bool:
    """Whether [deadline.<assignment>] sets anything."""
    return bool(_deadline_table(toml).get(assignment))


def _any_due(toml: Path) -> bool:
    """Whether [deadline] or some [deadline.<assignment>] sets a due date."""
    table = _deadline_table(toml)
    return "due" in table or any(isinstance(v, dict) and "due" in v for v in table.values())


def _table(value, toml: Path, what: str) -> dict:
    if not isinstance(value, dict):
        raise DeadlineError(f"{toml}: {what} must be a table of student_id = days or date")
    return value


def _rows(path: Path, columns: tuple[str, ...], assignment: str) -> list[tuple[int, dict]]:
    """The rows of a CSV with (at least) `columns` in its header, as (line number, row); a row naming another
    assignment in an `assignment` column is left out; a student listed twice is refused."""
    rows = [(line, row) for line, row in _read_rows(path, columns) if any(row.values()) and row.get("assignment", assignment) in ("", assignment)]
    seen: dict[str, int] = {}
    for line, row in rows:
        if not row["student_id"]:
            raise DeadlineError(f"{path}, line {line}: no student_id")
        if row["student_id"] in seen:
            raise DeadlineError(f"{path}, line {line}: {row['student_id']} is listed again (first on line {seen[row['student_id']]})")
        seen[row["student_id"]] = line
    return rows


def _read_rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    """Every row of a UTF-8 CSV whose header names `columns`, as (line number, {column: stripped cell})."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            reader.fieldnames = _header(path, reader, columns)
            return [(reader.line_num, {k: (v or "").strip() for k, v in row.items() if k is not None}) for row in reader]
    except OSError as exc:
        raise DeadlineError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DeadlineError(f"{path}: not a UTF-8 CSV file ({exc})") from None


def _header(path: Path, reader: csv.DictReader, columns: tuple[str, ...]) -> list[str]:
    """The CSV's column names, stripped; refused unless they include `columns` (saying so when ';' separates them)."""
    header = [name.strip() for name in reader.fieldnames or []]
    if not set(columns) <= set(header) and len(header) == 1 and ";" in header[0]:
        raise DeadlineError(f"{path} is separated by ';', not by commas (Excel saves CSV so in some locales): "
                            "save it as \"CSV UTF-8 (comma delimited)\", or change the separator")
    if not set(columns) <= set(header):
        raise DeadlineError(f"{path}: the first line must name the columns {','.join(columns)} (found {','.join(header) or 'nothing'})")
    return header


def read_times(source: Path, assignment: str, students: list[str]) -> dict[str, datetime | str]:
    """student_id -> submission time, from a CSV (student_id,timestamp) or nbgrader's submitted/ folder. A
    timestamp.txt that cannot be read maps to its text (that student is flagged); a bad CSV row stops the run."""
    if source.is_dir():
        root = source / "submitted" if (source / "submitted").is_dir() else source
        found: dict[str, datetime | str] = {}
        for student in students:
            path = root / student / assignment / "timestamp.txt"
            if not path.is_file():
                continue
            try:
                text = safe_io.read_regular(path, TIMESTAMP_BYTES).decode("utf-8", "replace").strip()
            except safe_io.Refused as exc:
                found[student] = str(exc)[:80]
                continue
            try:
                found[student] = parse_time(text, str(path), naive_utc=True)
            except DeadlineError:
                found[student] = repr(text[:60]) if text else "(empty)"
        return found
    return {row["student_id"]: parse_time(row["timestamp"], f"{source}, line {line}")
            for line, row in _rows(source, TIMES_COLUMNS, assignment)}


def load(assignment: str, times: str = "", extensions: str = "", students: list[str] = (),
         toml: Path | None = None) -> Policy | None:
    """The late policy of this run, None if course.toml gives `assignment` no due date (and nothing asks for one)."""
    toml = toml or COURSE_TOML
    found = settings(assignment, toml)
    if "due" not in found:
        _check_no_due(assignment, found, times, extensions, toml)
        return None
    where = f"{toml}: [deadline] due of {assignment}"
    due = parse_time(found["due"], where)
    rule = {name: _fraction(found.get(name, default), f"{toml}: [deadline] {name} of {assignment}") for name, default in DEFAULTS.items()}
    granted = {str(sid): _extension(value, due, f"{toml}: extension of {sid}") for sid, value in found.get("extensions", {}).items()}
    if extensions:
        path = Path(extensions)
        granted |= {row["student_id"]: _extension(row["extension"], due, f"{path}, line {line}")
                    for line, row in _rows(path, EXTENSION_COLUMNS, assignment)}
    policy = Policy(assignment, due, extensions=granted, times=times, **rule)
    if times:
        policy.submitted = _times(times, assignment, students)
    return policy


def _check_no_due(assignment: str, found: dict, times: str, extensions: str, toml: Path) -> None:
    """With no due date for `assignment`: refuses --times, --extensions, and [deadline] settings meant for it."""
    if times or extensions:
        raise DeadlineError(f"{'--times' if times else '--extensions'} was given, but {toml} sets no due date for "
                            f"{assignment}: add due = ... under [deadline] or [deadline.{assignment}] (docs/instructors.md, Deadlines)")
    if found and (_own_settings(assignment, toml) or not _any_due(toml)):  # [deadline]'s per_day etc. may be for
        # the assignments that have a due date: the others are graded as without a policy
        raise DeadlineError(f"{toml}: [deadline] settings for {assignment} but no due date (due = 2026-12-01T23:59:00+08:00)")


def _times(times: str, assignment: str, students: list[str]) -> dict[str, datetime | str]:
    """The submission times --times gives, which must include one of `students` (when there are any)."""
    path = Path(times)
    if not path.exists():
        raise DeadlineError(f"--times {times}: no such file or folder (a CSV student_id,timestamp, or nbgrader's submitted/)")
    found = read_times(path, assignment, list(students))
    if students and not set(found) & set(students):
        raise DeadlineError(f"--times {times} gives no time for any of the {len(students)} submission(s) "
                            f"(ids such as {', '.join(sorted(students)[:3])})")
    return found


def summary(policy: Policy, students: list[str]) -> list[str]:
    """The lines `make autograde` prints about the policy before grading."""
    lines = [f"  deadline: due {_shown(policy.due)}; penalty {_percent(policy.per_day)}%/day, {_percent(policy.flat)}% once late, "
             f"at most {_percent(policy.max_penalty)}%; {len(policy.extensions)} extension(s)"]
    if not policy.times:
        lines.append("  deadline: no submission times given (--times, make autograde TIMES=file or folder): "
                     "no late penalty is applied, and every student is flagged in the report")
    else:
        missing = [s for s in students if not isinstance(policy.submitted.get(s), datetime)]
        if missing:
            lines.append(f"  deadline: no usable submission time for {len(missing)} student(s): graded with no penalty, flagged in the report")
    return lines
