"""Autograde a folder of submissions: grades.csv, feedback HTML and a report.

    python -m grader.autograde --assignment 02_decode_scheduling --submissions DIR --out OUT [--jobs N]

DIR holds one <student_id>.ipynb per student (as an LMS download gives them).
Scores come from grader.grade (sandboxed, per TODO); nbgrader executes the
notebook for feedback (plots, visible checks) and stores the scores.
"""
from __future__ import annotations

import argparse
import copy
import csv
import html
import json
import os
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import class_report, feedback, i18n, masters, nbgrader_plugin, notebook_run, safe_io, sanitize, submission
from .grade import TaskVerdict, verdicts_to_json
from .paths import NOTEBOOKS_DIR, assignment_names, master_path
from .safe_io import say
from .safe_text import csv_cell, inert
from .shard import parse_shard, shard_of, student_key
from .submission import Submission
from .translation import LANGUAGES

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")
NOTE_CHARS = 500   # of one reason or warning in the report (a list of cells not run can be long)
NBGRADER_WALL_SECONDS = notebook_run.BUDGET


def student_name(stem: str) -> str:
    """The id a file's student is known by everywhere: the file name if it is a usable id that prints as itself,
    else invalid-<its hash> (stable, and distinct for names that would print alike)."""
    if STUDENT_ID.fullmatch(stem) and inert(stem) == stem and not stem.startswith("invalid-"):
        return stem
    return "invalid-" + student_key(stem)[:12]


def preload() -> None:
    """Import what workers use before the pool starts: a lazy import in a thread can see a half-built module."""
    import nbconvert.exporters  # noqa: F401
    import nbconvert.preprocessors  # noqa: F401
    import traitlets.config  # noqa: F401

    feedback.warm()  # and render a page once (its filters and lexers import more)


@dataclass
class Outcome:
    student_id: str                   # student_name(): safe to print as it is
    status: str                       # graded | bad | error
    scores: dict[str, float]
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verdicts: list[TaskVerdict] = field(default_factory=list)
    language: str = "en"
    key: str = ""                     # shard.student_key of the file name: the merge tells students apart by it


class Batch:
    """One grading run of one assignment over one folder of submissions."""

    def __init__(self, assignment: str, submissions: Path, out: Path, cell_timeout: int, seed: int | None,
                 feedback_wall: float = NBGRADER_WALL_SECONDS):
        self.assignment, self.submissions, self.out = assignment, submissions.resolve(), out.resolve()
        self.work = self.out / ".work"
        self.cell_timeout, self.feedback_wall = cell_timeout, feedback_wall
        source = masters.nbgrader_source(assignment)
        self.answer_ids = masters.answer_ids(source)
        self.release = nbformat.read(NOTEBOOKS_DIR / f"{assignment}.ipynb", as_version=4)
        # Every released language is graded the same way; each keeps its own release and nbgrader course.
        self.languages = tuple(lang for lang in LANGUAGES if submission.release_path(assignment, lang).exists())
        self.releases = {lang: nbformat.read(submission.release_path(assignment, lang), as_version=4) for lang in self.languages}
        self.other_assignments = [name for name in assignment_names() if name != assignment]
        self.trusted_markdown = frozenset(c.source for c in self.release.cells if c.cell_type == "markdown")
        self.hidden_snippets = feedback.hidden_snippets(source)
        self.seed = seed
        self.grader = nbgrader_plugin.grader_for(assignment, seed)  # the grader nbgrader's preprocessor uses too
        self.task_columns = [task.answer_id for task in self.grader.tasks]
        self.max_total = sum(task.points for task in self.grader.tasks)
        preload()
        safe_io.private_dir(self.work)
        safe_io.private_dir(self.out / "feedback")  # never leave a stale page from an earlier run
        os.chmod(self.out / "feedback", 0o755)

    def check(self, path: Path) -> Submission:
        """The submission read as Jupyter reads it; raises NotASubmission with the reason it cannot be graded."""
        nb = submission.read(path)
        submission.identify(nb, self.assignment, self.other_assignments)
        language = submission.language_of(nb, self.assignment, self.languages)
        sub = submission.prepare(nb, self.releases[language], self.answer_ids)
        sub.language = language
        return sub

    def grade_one(self, path: Path) -> Outcome:
        """Grade one file; whatever goes wrong is reported for this student and the batch goes on."""
        try:
            outcome = self._grade_one(path)
        except Exception as exc:  # noqa: BLE001 - MemoryError included: this student fails, the batch goes on
            outcome = Outcome(student_name(path.stem), "error", self.zero_scores(),
                              f"internal grading error, please report: {type(exc).__name__}: {exc}")
        outcome.key = student_key(path.stem)
        outcome.reason = inert(outcome.reason, NOTE_CHARS)  # all that follows prints, stores and reports these
        outcome.warnings = [inert(w, NOTE_CHARS) for w in outcome.warnings]
        return outcome

    def zero_scores(self) -> dict[str, float]:
        return {column: 0.0 for column in self.task_columns}

    def _grade_one(self, path: Path) -> Outcome:
        started = time.perf_counter()
        student = student_name(path.stem)
        zero = self.zero_scores()
        if student != path.stem:
            raw = os.fsencode(path.name)[:100].hex()  # to find the file by, without printing its name
            return Outcome(student, "bad", zero, "file name is not a usable student id (letters, digits, _.@+-; "
                                                 f"not invalid-...); the name's bytes in hex: {raw}")
        try:
            sub = self.check(path)
        except submission.NotASubmission as exc:
            sub, outcome = None, Outcome(student, "bad", zero, str(exc))
        if sub is not None:
            nb = copy.deepcopy(sub.notebook)
            graded = nbgrader_plugin.grade_notebook(nb, self.assignment, seed=self.seed, cell_wall=self.cell_timeout,
                                                    budget=self.feedback_wall, language=sub.language)
            outcome = Outcome(student, "graded", {v.answer_id: v.score for v in graded.verdicts},
                              warnings=list(sub.warnings) + graded.notes, verdicts=graded.verdicts, language=sub.language)
            try:
                if graded.ran:
                    self.publish_page(nb, outcome)
            except Exception as exc:  # noqa: BLE001 - the scores stand; only the rich feedback is lost
                (self.out / "feedback" / f"{student}.html").unlink(missing_ok=True)
                outcome.warnings.append(f"feedback fell back to a plain page: {type(exc).__name__}: {exc}")
        if outcome.status != "graded" or not (self.out / "feedback" / f"{student}.html").exists():
            self.write_plain_feedback(outcome)
        outcome.seconds = time.perf_counter() - started
        return outcome

    def publish_page(self, nb: nbformat.NotebookNode, outcome: Outcome) -> None:
        """Render the graded notebook (executed in the sandbox, inert, redacted) as nbgrader's feedback page."""
        feedback.scrub_outputs(nb, [Path(self.work)])
        page = feedback.render(nb, self.assignment, outcome.verdicts)
        # A verdict's failing case is shown on purpose (built from scenario data) and may coincide with a line of a
        # hidden test, a bare constructor call say: as in feedback.redact, such a line is no leak.
        on_purpose = {line.strip() for v in outcome.verdicts for rule in v.rules for line in rule.snippet.splitlines()}
        if [line for line in self.hidden_snippets if line not in on_purpose and line in feedback.visible_text(page)]:
            raise RuntimeError("the page would show hidden test code")  # the kernel never holds them: never publish
        page, why = sanitize.clean_page(page)
        if page is None:
            raise RuntimeError(why)
        self.publish(page, outcome.student_id)

    def publish(self, page: str, sid: str) -> None:
        """Write the page of `sid` (a student_name(), so a safe file name)."""
        safe_io.write_new(self.out / "feedback" / f"{sid}.html", page.encode("utf-8", "backslashreplace"))

    def write_plain_feedback(self, outcome: Outcome) -> None:
        text = i18n.TEXT[outcome.language]
        rows = "".join(f"<tr><td>{html.escape(t.task_id)}</td><td>{outcome.scores.get(t.answer_id, 0):g} / {t.points:g}</td></tr>"
                       for t in self.grader.tasks)
        details = "".join(f"<pre>{html.escape(i18n.summary(v, outcome.language))}</pre>" for v in outcome.verdicts)
        notes = "".join(f"<li>{html.escape(w)}</li>" for w in [outcome.reason, *outcome.warnings] if w)
        page = (f"<!doctype html><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{sanitize.CSP}\"><title>{html.escape(self.assignment)}: {html.escape(outcome.student_id)}</title>"
                f"<h1>{text['heading'].format(assignment=html.escape(self.assignment), student=html.escape(outcome.student_id))}</h1>"
                f"<ul>{notes}</ul><table border=1><tr><th>{text['task']}</th><th>{text['score']}</th></tr>{rows}</table>{details}")
        self.publish(page, outcome.student_id)


def write_outputs(batch: Batch, outcomes: list[Outcome], total_seconds: float) -> None:
    out = batch.out
    with open(out / "grades.csv", "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", *batch.task_columns, "total", "max_total"])
        for o in outcomes:
            total = round(sum(o.scores.values()), 2)
            writer.writerow([csv_cell(inert(o.student_id)), *(f"{o.scores[c]:g}" for c in batch.task_columns), f"{total:g}", f"{batch.max_total:g}"])
    details = [{"student_id": o.student_id, "key": o.key, "status": o.status, "language": o.language, "reason": o.reason, "warnings": o.warnings,
                "seconds": round(o.seconds, 2), "verdicts": verdicts_to_json(o.verdicts)} for o in outcomes]
    report = {"assignment": batch.assignment, "seed": batch.grader.seed, "sandbox": batch.grader.sandbox,
              "task_columns": batch.task_columns, "max_total": batch.max_total, "students": details}
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8", errors="backslashreplace")
    write_report_md(out, report, f"{len(outcomes)} submissions in {total_seconds:.1f} s")
    class_report.write(out, report)  # class-report.html/.md, rules.csv: what the class got wrong


def write_report_md(out: Path, report: dict, headline: str) -> None:
    """report.md from the contents of report.json (so that grader.shard can write it for merged shards)."""
    columns = report["task_columns"]
    lines = [f"# {report['assignment']}: {headline}",
             f"sandbox: {report['sandbox']} · seed: {report['seed']} · max per student: {report['max_total']:g}", "",
             "| student | status | " + " | ".join(columns) + " | total | notes |",
             "|---|---|" + "---|" * len(columns) + "---|---|"]
    for o in report["students"]:
        scores = {v["answer_id"]: v["score"] for v in o["verdicts"]}
        notes = inert("; ".join(filter(None, [o["reason"], *o["warnings"]])), 4 * NOTE_CHARS)
        lines.append(f"| {inert(o['student_id'])} | {inert(o['status'])} | " + " | ".join(f"{scores.get(c, 0):g}" for c in columns)
                     + f" | {sum(scores.get(c, 0) for c in columns):g} | {notes} |")
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="backslashreplace")


def run(assignment: str, submissions: Path, out: Path, jobs: int = 0, cell_timeout: int = 30,
        seed: int | None = None, keep_work: bool = False, feedback_wall: float = NBGRADER_WALL_SECONDS,
        shard: tuple[int, int] | None = None) -> list[Outcome]:
    """Grade the folder (or, with shard=(k, n), the students grader.shard assigns to shard k of n)."""
    master_path(assignment)  # an unknown assignment stops here, with the list of known ones
    if not submissions.is_dir():
        raise SystemExit(f"error: {submissions} is not a folder of submissions")
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb" and not p.name.startswith("."))
    skipped = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix != ".ipynb")
    if not paths:
        raise SystemExit(f"error: no <student_id>.ipynb files in {submissions}")
    if shard is not None:  # a shard may be empty: it still writes (empty) outputs for the merge
        everyone = len(paths)
        paths = [p for p in paths if shard_of(p.stem, shard[1]) == shard[0]]
        say(f"shard {shard[0]}/{shard[1]}: {len(paths)} of {everyone} submission(s)")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    workers = jobs or 2 * (os.cpu_count() or 1)  # a worker mostly waits for its sandboxed runs
    say(f"autograding {len(paths)} submission(s) of {assignment} with {workers} worker(s)")
    if skipped:
        say(f"  skipping files that are not notebooks: {inert(', '.join(skipped))}")
    batch = Batch(assignment, submissions, out, cell_timeout, seed, feedback_wall)
    say(f"  hidden suite ready: {sum(len(t.scenarios) for t in batch.grader.tasks)} scenarios, sandbox: {batch.grader.sandbox}")
    outcomes: dict[Path, Outcome] = {}
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(batch.grade_one, path): path for path in paths}
            for done, future in enumerate(as_completed(futures), 1):
                o = outcomes[futures[future]] = future.result()
                note = inert(o.reason or "; ".join(o.warnings))
                say(f"  [{done}/{len(paths)}] {inert(o.student_id):<24} {sum(o.scores.values()):>5g}/{batch.max_total:g}"
                    f"  {o.status:<6} {o.seconds:5.1f} s  {note}")
    finally:  # grades.csv and the report are written whatever happened, with every student in them
        listed = [outcomes.get(p) or Outcome(student_name(p.stem), "error", batch.zero_scores(),
                                             "not graded: the batch was interrupted", key=student_key(p.stem)) for p in paths]
        write_outputs(batch, sorted(listed, key=lambda o: o.student_id), time.perf_counter() - started)
    if batch.grader.reused:
        say(f"  {batch.grader.reused} TODO verdict(s) reused from an identical answer graded earlier in the batch")
    if not keep_work:
        shutil.rmtree(batch.work, ignore_errors=True)
    say(f"grades:   {out / 'grades.csv'}\nfeedback: {out / 'feedback'}/<student_id>.html\nreport:   {out / 'report.md'}"
        f"\nclass:    {out / 'class-report.html'}")
    return sorted(outcomes.values(), key=lambda o: o.student_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="02_decode_scheduling")
    parser.add_argument("--submissions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=0, help="parallel workers (0: two per core)")
    parser.add_argument("--cell-timeout", type=int, default=30, help="seconds before nbgrader interrupts a cell")
    parser.add_argument("--seed", type=int, help="random seed of the hidden scenarios")
    parser.add_argument("--keep-work", action="store_true", help="keep OUT/.work (the per-student nbgrader courses)")
    parser.add_argument("--feedback-wall", type=float, default=NBGRADER_WALL_SECONDS,
                        help="seconds the sandboxed feedback run of one notebook may take in all")
    parser.add_argument("--shard", type=parse_shard, metavar="K/N",
                        help="grade only shard K of N (K from 0; students split by a hash of their id); "
                             "merge the shards' outputs with python -m grader.shard merge")
    args = parser.parse_args(argv)
    run(args.assignment, args.submissions, args.out, args.jobs, args.cell_timeout, args.seed, args.keep_work,
        args.feedback_wall, args.shard)
    return 0


if __name__ == "__main__":
    sys.exit(main())
