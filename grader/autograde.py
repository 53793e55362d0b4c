"""Autograde a folder of submissions: grades.csv, feedback HTML and a report.

    python -m grader.autograde --assignment 02_decode_scheduling --submissions DIR --out OUT [--jobs N]

DIR holds one <student_id>.ipynb per student (as an LMS download gives them).
Scores come from grader.grade (sandboxed, per TODO); nbgrader executes the
notebook for feedback (plots, visible checks) and stores the scores.
"""
from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import masters
from .build import make_course
from .grade import Grader, TaskVerdict, verdicts_to_json
from . import feedback, i18n, submission
from .paths import NOTEBOOKS_DIR, assignment_names, master_path
from .submission import Submission
from .sandbox import run_sandboxed
from .translation import LANGUAGES

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")
TIMEOUT_ERRORS = {"CellTimeoutError", "KeyboardInterrupt", "DeadKernelError"}
NBGRADER_WALL_SECONDS = 600


@dataclass
class Outcome:
    student_id: str
    status: str                       # graded | bad | error
    scores: dict[str, float]
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verdicts: list[TaskVerdict] = field(default_factory=list)
    language: str = "en"


class Batch:
    """One grading run of one assignment over one folder of submissions."""

    def __init__(self, assignment: str, submissions: Path, out: Path, cell_timeout: int, seed: int | None):
        self.assignment, self.submissions, self.out = assignment, submissions.resolve(), out.resolve()
        self.work = self.out / ".work"
        self.cell_timeout = cell_timeout
        source = masters.nbgrader_source(assignment)
        self.answer_ids = masters.answer_ids(source)
        self.release = nbformat.read(NOTEBOOKS_DIR / f"{assignment}.ipynb", as_version=4)
        # Every released language is graded the same way; each keeps its own release and nbgrader course.
        self.languages = tuple(lang for lang in LANGUAGES if submission.release_path(assignment, lang).exists())
        self.releases = {lang: nbformat.read(submission.release_path(assignment, lang), as_version=4) for lang in self.languages}
        self._courses: dict[str, Path] = {}
        self._course_lock = threading.Lock()
        self.other_assignments = [name for name in assignment_names() if name != assignment]
        self.hidden_snippets = feedback.hidden_snippets(source)
        kwargs = {"seed": seed} if seed is not None else {}
        self.grader = Grader(assignment, hide=(self.submissions, self.out), **kwargs)
        self.task_columns = [task.answer_id for task in self.grader.tasks]
        self.max_total = sum(task.points for task in self.grader.tasks)
        shutil.rmtree(self.work, ignore_errors=True)
        shutil.rmtree(self.out / "feedback", ignore_errors=True)  # never leave a stale page from an earlier run
        self.course = self.course_for("en")

    def course_for(self, language: str) -> Path:
        """The nbgrader course of one language, made on first use (a batch may hold no zh submission)."""
        with self._course_lock:
            if language not in self._courses:
                name = "course" if language == "en" else f"course-{language}"
                self._courses[language] = make_course(self.work / name, [self.assignment], with_db=True, language=language)
            return self._courses[language]

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
            return self._grade_one(path)
        except Exception as exc:  # noqa: BLE001
            return Outcome(path.stem, "error", self.zero_scores(), f"internal grading error, please report: {type(exc).__name__}: {exc}")

    def zero_scores(self) -> dict[str, float]:
        return {column: 0.0 for column in self.task_columns}

    def _grade_one(self, path: Path) -> Outcome:
        started = time.perf_counter()
        student = path.stem
        zero = self.zero_scores()
        if not STUDENT_ID.fullmatch(student):
            return Outcome(student, "bad", zero, "file name is not a usable student id (letters, digits, _.@+-)")
        try:
            sub = self.check(path)
        except submission.NotASubmission as exc:
            sub, outcome = None, Outcome(student, "bad", zero, str(exc))
        if sub is not None:
            verdicts = self.grader.grade(sub.answers)
            outcome = Outcome(student, "graded", {v.answer_id: v.score for v in verdicts}, warnings=list(sub.warnings),
                              verdicts=verdicts, language=sub.language)
            try:
                self.feedback_via_nbgrader(sub.notebook, outcome)
            except Exception as exc:  # noqa: BLE001 - the scores stand; only the rich feedback is lost
                (self.out / "feedback" / f"{student}.html").unlink(missing_ok=True)
                outcome.warnings.append(f"feedback fell back to a plain page: {type(exc).__name__}: {exc}")
        if outcome.status != "graded" or not (self.out / "feedback" / f"{student}.html").exists():
            self.write_plain_feedback(outcome)
        outcome.seconds = time.perf_counter() - started
        return outcome

    def feedback_via_nbgrader(self, notebook: nbformat.NotebookNode, outcome: Outcome) -> None:
        """Execute the notebook with nbgrader (sandboxed), store our scores, render redacted feedback."""
        sid, name = outcome.student_id, self.assignment
        course = self.work / sid
        shutil.rmtree(course, ignore_errors=True)
        shutil.copytree(self.course_for(outcome.language), course, ignore=shutil.ignore_patterns("release", "autograded", "feedback", "submitted"))
        submitted = course / "submitted" / sid / name
        submitted.mkdir(parents=True)
        nbformat.write(notebook, submitted / f"{name}.ipynb")
        done = run_sandboxed([sys.executable, "-m", "nbgrader", "autograde", name, "--student", sid, "--force",
                              f"--Execute.timeout={self.cell_timeout}", "--log-level=WARN"],
                             cwd=course, keep=[course], hide=[self.submissions, self.out], timeout=NBGRADER_WALL_SECONDS,
                             loopback=True)
        executed = course / "autograded" / sid / name / f"{name}.ipynb"
        if done.timed_out or not executed.exists():
            why = "ran past the time limit" if done.timed_out else _tail(done.stderr)
            outcome.warnings.append(f"nbgrader could not execute the notebook ({why}); feedback shows scores only")
            return
        nb = nbformat.read(executed, as_version=4)
        outcome.warnings += _timeouts(nb, self.cell_timeout) + _disagreements(nb, outcome.verdicts)
        feedback.redact(nb, outcome.verdicts, self.hidden_snippets, outcome.language)
        nb.metadata["language_edition"] = outcome.language  # the feedback template's labels follow it
        feedback.scrub_outputs(nb, [course])
        nbformat.write(nb, executed)
        self.store_scores(course, sid, outcome.verdicts)
        feedback.generate(course, name, sid)
        page = course / "feedback" / sid / name / f"{name}.html"
        self.publish(page.read_text(encoding="utf-8"), sid)

    def store_scores(self, course: Path, sid: str, verdicts: list[TaskVerdict]) -> None:
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for verdict in verdicts:
                grade = gb.find_grade(verdict.test_id, self.assignment, self.assignment, sid)
                grade.auto_score, grade.manual_score, grade.needs_manual_grade = verdict.score, None, False
            gb.db.commit()

    def publish(self, page: str, sid: str) -> None:
        target = self.out / "feedback" / f"{sid}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")

    def write_plain_feedback(self, outcome: Outcome) -> None:
        text = i18n.TEXT[outcome.language]
        rows = "".join(f"<tr><td>{html.escape(t.task_id)}</td><td>{outcome.scores.get(t.answer_id, 0):g} / {t.points:g}</td></tr>"
                       for t in self.grader.tasks)
        details = "".join(f"<pre>{html.escape(i18n.summary(v, outcome.language))}</pre>" for v in outcome.verdicts)
        notes = "".join(f"<li>{html.escape(w)}</li>" for w in [outcome.reason, *outcome.warnings] if w)
        page = (f"<!doctype html><meta charset='utf-8'><title>{html.escape(self.assignment)}: {html.escape(outcome.student_id)}</title>"
                f"<h1>{html.escape(self.assignment)}: {text['feedback_for']} {html.escape(outcome.student_id)}</h1>"
                f"<ul>{notes}</ul><table border=1><tr><th>{text['task']}</th><th>{text['score']}</th></tr>{rows}</table>{details}")
        self.publish(page, outcome.student_id)


def _timeouts(nb, cell_timeout: int) -> list[str]:
    """One message per cell that nbgrader had to interrupt."""
    found = []
    for index, cell in enumerate(nb.cells):
        if any(o.get("output_type") == "error" and o.get("ename") in TIMEOUT_ERRORS for o in cell.get("outputs", [])):
            first_line = cell.source.strip().splitlines()[0][:40] if cell.source.strip() else ""
            label = masters.grade_id(cell) or f"cell {index} ({first_line})"
            found.append(f"{label} ran past the {cell_timeout} s limit and was interrupted")
    return found


def _disagreements(nb, verdicts: list[TaskVerdict]) -> list[str]:
    """Test cells that passed inside the student's kernel while the sandboxed rules did not."""
    passed_in_kernel = {masters.grade_id(c) for c in nb.cells if masters.grade_id(c)
                        and not any(o.get("output_type") == "error" for o in c.get("outputs", []))}
    return [f"{v.test_id}: the in-notebook checks passed but the hidden rules gave {v.score:g}/{v.points:g}"
            for v in verdicts if v.test_id in passed_in_kernel and v.score < v.points]


def _tail(stderr: bytes) -> str:
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def write_outputs(batch: Batch, outcomes: list[Outcome], total_seconds: float) -> None:
    out = batch.out
    with open(out / "grades.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", *batch.task_columns, "total", "max_total"])
        for o in outcomes:
            total = round(sum(o.scores.values()), 2)
            writer.writerow([o.student_id, *(f"{o.scores[c]:g}" for c in batch.task_columns), f"{total:g}", f"{batch.max_total:g}"])
    details = [{"student_id": o.student_id, "status": o.status, "language": o.language, "reason": o.reason, "warnings": o.warnings,
                "seconds": round(o.seconds, 2), "verdicts": verdicts_to_json(o.verdicts)} for o in outcomes]
    (out / "report.json").write_text(json.dumps({"assignment": batch.assignment, "seed": batch.grader.seed,
                                                  "sandbox": batch.grader.sandbox, "students": details}, indent=1))
    lines = [f"# {batch.assignment}: {len(outcomes)} submissions in {total_seconds:.1f} s",
             f"sandbox: {batch.grader.sandbox} · seed: {batch.grader.seed} · max per student: {batch.max_total:g}", "",
             "| student | status | " + " | ".join(batch.task_columns) + " | total | notes |",
             "|---|---|" + "---|" * len(batch.task_columns) + "---|---|"]
    for o in outcomes:
        notes = "; ".join(filter(None, [o.reason, *o.warnings])).replace("|", "/")
        lines.append(f"| {o.student_id} | {o.status} | " + " | ".join(f"{o.scores[c]:g}" for c in batch.task_columns)
                     + f" | {sum(o.scores.values()):g} | {notes} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")


def run(assignment: str, submissions: Path, out: Path, jobs: int = 0, cell_timeout: int = 30,
        seed: int | None = None, keep_work: bool = False) -> list[Outcome]:
    master_path(assignment)  # an unknown assignment stops here, with the list of known ones
    if not submissions.is_dir():
        raise SystemExit(f"error: {submissions} is not a folder of submissions")
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb" and not p.name.startswith("."))
    skipped = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix != ".ipynb")
    if not paths:
        raise SystemExit(f"error: no <student_id>.ipynb files in {submissions}")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(f"autograding {len(paths)} submission(s) of {assignment} with {jobs or os.cpu_count()} worker(s)", flush=True)
    if skipped:
        print(f"  skipping files that are not notebooks: {', '.join(skipped)}", flush=True)
    batch = Batch(assignment, submissions, out, cell_timeout, seed)
    print(f"  hidden suite ready: {sum(len(t.scenarios) for t in batch.grader.tasks)} scenarios, sandbox: {batch.grader.sandbox}", flush=True)
    outcomes = []
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
        futures = {pool.submit(batch.grade_one, path): path for path in paths}
        for done, future in enumerate(as_completed(futures), 1):
            o = future.result()
            outcomes.append(o)
            note = o.reason or "; ".join(o.warnings)
            print(f"  [{done}/{len(paths)}] {o.student_id:<24} {sum(o.scores.values()):>5g}/{batch.max_total:g}"
                  f"  {o.status:<6} {o.seconds:5.1f} s  {note}", flush=True)
    outcomes.sort(key=lambda o: o.student_id)
    write_outputs(batch, outcomes, time.perf_counter() - started)
    if not keep_work:
        shutil.rmtree(batch.work, ignore_errors=True)
    print(f"grades:   {out / 'grades.csv'}\nfeedback: {out / 'feedback'}/<student_id>.html\nreport:   {out / 'report.md'}")
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="02_decode_scheduling")
    parser.add_argument("--submissions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=0, help="parallel workers (0: one per core)")
    parser.add_argument("--cell-timeout", type=int, default=30, help="seconds before nbgrader interrupts a cell")
    parser.add_argument("--seed", type=int, help="random seed of the hidden scenarios")
    parser.add_argument("--keep-work", action="store_true", help="keep OUT/.work (the per-student nbgrader courses)")
    args = parser.parse_args(argv)
    run(args.assignment, args.submissions, args.out, args.jobs, args.cell_timeout, args.seed, args.keep_work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
