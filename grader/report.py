"""What a grading run writes: grades.csv, report.json, report.md, and the plain feedback page of a student.

grader/autograde.py writes them for one run, grader/shard.py (report.md) for merged shards.
"""
from __future__ import annotations

import csv
import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from . import class_report, deadline, i18n, messages, sanitize, similarity, term
from .grade import TaskVerdict, verdicts_to_json
from .runner import LEVELS
from .safe_text import csv_cell, inert
from .contract import Task

NOTE_CHARS = 500   # of one reason or warning in the report (a list of cells not run can be long)
ANSWER_CHARS = 20_000   # of one answer cell kept in report.json (grader/similarity.py compares them)


@dataclass
class Outcome:
    student_id: str                   # autograde.student_name(): safe to print as it is
    status: str                       # graded | bad | error
    scores: dict[str, float]
    reason: messages.Note = ""        # a Message is worded in `language` on the student's page, in English elsewhere
    warnings: list[messages.Note] = field(default_factory=list)
    seconds: float = 0.0
    verdicts: list[TaskVerdict] = field(default_factory=list)
    language: str = "en"              # "" if unknown (a file never read as a notebook): its page says it in each
    key: str = ""                     # shard_keys.student_key of the file name: the merge tells students apart by it
    answers: dict[str, str] = field(default_factory=dict)  # answer grade_id -> source, as graded
    late: deadline.Late | None = None  # with a due date (course.toml [deadline]): what lateness costs; scores stay raw

    @property
    def raw_total(self) -> float:
        return round(sum(self.scores.values()), 2)

    @property
    def penalty(self) -> float:
        return self.late.penalty(self.raw_total) if self.late else 0.0

    @property
    def total(self) -> float:
        """What the student gets: the TODOs' scores less the late penalty."""
        return round(self.raw_total - self.penalty, 2)

    def late_note(self) -> messages.Message | None:
        return self.late.note(self.raw_total) if self.late else None


def header(assignment: str, seed: int, sandbox: str, tasks: list[Task]) -> dict:
    """What a run's report says of the run as a whole (shards must agree on all of it to be merged). The term is named
    by its fingerprint (grader/term.py), never by the seed: that would give the held-out material away."""
    return {"assignment": assignment, "term": term.fingerprint(seed), "sandbox": sandbox, "sandbox_means": LEVELS.get(sandbox, ""),
            "task_columns": [t.answer_id for t in tasks],
            "max_total": sum(t.points for t in tasks)}


LATE_COLUMNS = ["raw_total", "late_penalty", "late_reason"]   # grades.csv's, after max_total, when a due date is set


def write_outputs(out: Path, head: dict, outcomes: list[Outcome], total_seconds: float) -> None:
    """grades.csv, report.json and report.md of one run. With a due date (head's "deadline"), total is after the
    late penalty, and grades.csv adds the raw total, the penalty and its reason."""
    columns, late = head["task_columns"], bool(head.get("deadline"))
    with open(out / "grades.csv", "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", *columns, "total", "max_total", *(LATE_COLUMNS if late else [])])
        for o in outcomes:
            row = [csv_cell(inert(o.student_id)), *(f"{o.scores[c]:g}" for c in columns), f"{o.total:g}", f"{head['max_total']:g}"]
            if late:
                row += [f"{o.raw_total:g}", f"{o.penalty:g}", csv_cell(messages.text(o.late_note() or ""))]
            writer.writerow(row)
    report = head | {"students": [student_json(o) for o in outcomes]}
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8", errors="backslashreplace")
    write_report_md(out, report, f"{len(outcomes)} submissions in {total_seconds:.1f} s")
    class_report.write(out, report)  # class-report.html/.md, rules.csv: what the class got wrong


def student_json(o: Outcome) -> dict:
    """A student's entry of report.json: each note in English, with its catalogue key ('' if it has none) to count it by."""
    english = lambda note: inert(messages.text(note), NOTE_CHARS)  # as autograde made the text of a note inert before
    return {"student_id": o.student_id, "key": o.key, "status": o.status, "language": o.language,
            "reason": english(o.reason), "reason_key": messages.key(o.reason),
            "warnings": [english(w) for w in o.warnings], "warning_keys": [messages.key(w) for w in o.warnings],
            "seconds": round(o.seconds, 2), "verdicts": verdicts_to_json(o.verdicts),
            "answers": {gid: similarity.stored(source, ANSWER_CHARS) for gid, source in o.answers.items()}} | (
            {"late": o.late.to_json(o.raw_total)} if o.late else {})


def write_report_md(out: Path, report: dict, headline: str) -> None:
    """report.md from the contents of report.json (so that grader.shard can write it for merged shards)."""
    columns = report["task_columns"]
    lines = [f"# {report['assignment']}: {headline}",
             f"sandbox: {report['sandbox']} ({report.get('sandbox_means', '')}) · term: {report['term']} · max per student: {report['max_total']:g}"
             + (f" · deadline: due {report['deadline']['due']}, penalty {report['deadline']['per_day']:g}/day, "
                f"{report['deadline']['flat']:g} once late, at most {report['deadline']['max_penalty']:g} (fractions of the raw score)"
                if report.get("deadline") else ""), "",
             *([f"**{term.PUBLIC_WARNING}**", ""] if report.get("term") == term.PUBLIC else []),
             "| student | status | " + " | ".join(columns) + " | total | notes |",
             "|---|---|" + "---|" * len(columns) + "---|---|"]
    for o in report["students"]:
        scores = {v["answer_id"]: v["score"] for v in o["verdicts"]}
        late = o.get("late") or {}
        notes = inert("; ".join(filter(None, [o["reason"], late.get("note"), *o["warnings"]])), 4 * NOTE_CHARS)
        total = round(sum(scores.get(c, 0) for c in columns) - late.get("penalty", 0), 2)  # after the late penalty
        lines.append(f"| {inert(o['student_id'])} | {inert(o['status'])} | " + " | ".join(f"{scores.get(c, 0):g}" for c in columns)
                     + f" | {total:g} | {notes} |")
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="backslashreplace")


def plain_page(assignment: str, tasks: list[Task], outcome: Outcome) -> str:
    """The page of a student whose rich page could not be made: scores, verdicts and reasons as escaped text."""
    shown = outcome.language or "en"
    text = i18n.TEXT[shown]
    languages = [outcome.language] if outcome.language else list(messages.TEXT)  # the edition is unknown: each
    rows = "".join(f"<tr><td>{html.escape(t.task_id)}</td><td>{outcome.scores.get(t.answer_id, 0):g} / {t.points:g}</td></tr>"
                   for t in tasks)
    details = "".join(f"<pre>{html.escape(i18n.summary(v, shown))}</pre>" for v in outcome.verdicts)
    late = outcome.late.student_note(outcome.raw_total) if outcome.late else None
    said = dict.fromkeys(messages.text(w, language) for w in [outcome.reason, late, *outcome.warnings] if w for language in languages)
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in said)
    return (f"<!doctype html><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{sanitize.CSP}\"><title>{html.escape(assignment)}: {html.escape(outcome.student_id)}</title>"
            f"<h1>{text['heading'].format(assignment=html.escape(assignment), student=html.escape(outcome.student_id))}</h1>"
            f"<ul>{notes}</ul><table border=1><tr><th>{text['task']}</th><th>{text['score']}</th></tr>{rows}</table>{details}")
