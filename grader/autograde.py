"""Autograde a folder of submissions: grades.csv, feedback HTML and a report.

    python -m grader.autograde --assignment 02_decode_scheduling --submissions DIR --out OUT [--jobs N]

DIR holds one <student_id>.ipynb per student (as an LMS download gives them).
Scores come from grader.grade (sandboxed, per TODO); nbgrader executes the
notebook for feedback (plots, visible checks) and stores the scores.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import html
import json
import os
import re
import shutil
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import feedback, masters, safe_io, sanitize, submission
from .feedback_run import execute_in_sandbox, make_feedback_course
from .grade import Grader, TaskVerdict, verdicts_to_json
from .paths import NOTEBOOKS_DIR, assignment_names, master_path
from .safe_io import printable, say
from .submission import Submission

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")
TIMEOUT_ERRORS = {"CellTimeoutError", "KeyboardInterrupt", "DeadKernelError"}
NBGRADER_WALL_SECONDS = 600


def preload() -> None:
    """Import what workers use before the pool starts: a lazy import in a thread can see a half-built module."""
    import nbconvert.exporters  # noqa: F401
    import nbgrader.api  # noqa: F401
    import nbgrader.converters  # noqa: F401
    import nbgrader.coursedir  # noqa: F401
    import traitlets.config  # noqa: F401


@dataclass
class Outcome:
    student_id: str
    status: str                       # graded | bad | error
    scores: dict[str, float]
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verdicts: list[TaskVerdict] = field(default_factory=list)


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
        self.other_assignments = [name for name in assignment_names() if name != assignment]
        self.trusted_markdown = frozenset(c.source for c in self.release.cells if c.cell_type == "markdown")
        self.hidden_snippets = feedback.hidden_snippets(source)
        kwargs = {"seed": seed} if seed is not None else {}
        self.grader = Grader(assignment, **kwargs)
        self.task_columns = [task.answer_id for task in self.grader.tasks]
        self.max_total = sum(task.points for task in self.grader.tasks)
        preload()
        safe_io.private_dir(self.work)
        safe_io.private_dir(self.out / "feedback")  # never leave a stale page from an earlier run
        os.chmod(self.out / "feedback", 0o755)
        self.students = self.work / "students"   # one folder per student id, apart from the template
        self.students.mkdir()
        self.course = make_feedback_course(self.work / "template", assignment)

    def check(self, path: Path) -> Submission:
        """The submission read as Jupyter reads it; raises NotASubmission with the reason it cannot be graded."""
        nb = submission.read(path)
        submission.identify(nb, self.assignment, self.other_assignments)
        return submission.prepare(nb, self.release, self.answer_ids)

    def grade_one(self, path: Path) -> Outcome:
        """Grade one file; whatever goes wrong is reported for this student and the batch goes on."""
        try:
            outcome = self._grade_one(path)
        except Exception as exc:  # noqa: BLE001 - MemoryError included: this student fails, the batch goes on
            outcome = Outcome(path.stem, "error", self.zero_scores(), f"internal grading error, please report: {type(exc).__name__}: {str(exc)[:300]}")
        outcome.student_id = printable(outcome.student_id)
        return outcome

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
            outcome = Outcome(student, "graded", {v.answer_id: v.score for v in verdicts}, warnings=list(sub.warnings), verdicts=verdicts)
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
        """Execute the notebook with nbgrader (sandboxed), store our scores, render an inert, redacted page."""
        sid, name = outcome.student_id, self.assignment
        home = safe_io.private_dir(self.students / sid)
        nb, why = execute_in_sandbox(self.course, home / "run", nbformat.writes(notebook).encode("utf-8"), name, sid,
                                     self.cell_timeout, self.feedback_wall)
        if nb is None:
            outcome.warnings.append(f"nbgrader could not execute the notebook ({why}); feedback shows scores only")
            return
        outcome.warnings += _timeouts(nb, self.cell_timeout) + _disagreements(nb, outcome.verdicts)
        outcome.warnings += sanitize.clean_notebook(nb, self.trusted_markdown)
        feedback.redact(nb, outcome.verdicts, self.hidden_snippets)
        course = home / "render"  # a fresh copy only the grader writes: nothing here came from a sandbox's disk
        shutil.copytree(self.course, course)
        feedback.scrub_outputs(nb, [Path("/tmp/course"), Path("/inputs/course"), course])
        executed = course / "autograded" / sid / name / f"{name}.ipynb"
        executed.parent.mkdir(parents=True)
        nbformat.write(nb, executed)
        self.store_scores(course, sid, outcome.verdicts)
        feedback.generate(course, name, sid)
        page = (course / "feedback" / sid / name / f"{name}.html").read_text(encoding="utf-8")
        if [line for line in self.hidden_snippets if line in feedback.visible_text(page)]:
            raise RuntimeError("the page would show hidden test code")  # the kernel never holds them: never publish
        page, why = sanitize.clean_page(page)
        if page is None:
            raise RuntimeError(why)
        self.publish(page, sid)

    def store_scores(self, course: Path, sid: str, verdicts: list[TaskVerdict]) -> None:
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbgrader's add_submission trips SQLAlchemy's autoflush warnings
            gb.update_or_create_student(sid)
            gb.add_submission(self.assignment, sid)
            for verdict in verdicts:
                grade = gb.find_grade(verdict.test_id, self.assignment, self.assignment, sid)
                grade.auto_score, grade.manual_score, grade.needs_manual_grade = verdict.score, None, False
            gb.db.commit()

    def publish(self, page: str, sid: str) -> None:
        if not STUDENT_ID.fullmatch(sid):  # a name that is no student id still gets a page, under a safe name
            sid = "invalid-id-" + hashlib.sha256(sid.encode("utf-8", "backslashreplace")).hexdigest()[:12]
        safe_io.write_new(self.out / "feedback" / f"{sid}.html", page.encode("utf-8", "backslashreplace"))

    def write_plain_feedback(self, outcome: Outcome) -> None:
        rows = "".join(f"<tr><td>{html.escape(t.task_id)}</td><td>{outcome.scores.get(t.answer_id, 0):g} / {t.points:g}</td></tr>"
                       for t in self.grader.tasks)
        details = "".join(f"<pre>{html.escape(v.summary())}</pre>" for v in outcome.verdicts)
        notes = "".join(f"<li>{html.escape(w)}</li>" for w in [outcome.reason, *outcome.warnings] if w)
        page = (f"<!doctype html><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{sanitize.CSP}\"><title>{html.escape(self.assignment)}: {html.escape(outcome.student_id)}</title>"
                f"<h1>{html.escape(self.assignment)}: feedback for {html.escape(outcome.student_id)}</h1>"
                f"<ul>{notes}</ul><table border=1><tr><th>task</th><th>score</th></tr>{rows}</table>{details}")
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


def write_outputs(batch: Batch, outcomes: list[Outcome], total_seconds: float) -> None:
    out = batch.out
    with open(out / "grades.csv", "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", *batch.task_columns, "total", "max_total"])
        for o in outcomes:
            total = round(sum(o.scores.values()), 2)
            writer.writerow([o.student_id, *(f"{o.scores[c]:g}" for c in batch.task_columns), f"{total:g}", f"{batch.max_total:g}"])
    details = [{"student_id": o.student_id, "status": o.status, "reason": o.reason, "warnings": o.warnings,
                "seconds": round(o.seconds, 2), "verdicts": verdicts_to_json(o.verdicts)} for o in outcomes]
    (out / "report.json").write_text(json.dumps({"assignment": batch.assignment, "seed": batch.grader.seed,
                                                  "sandbox": batch.grader.sandbox, "students": details}, indent=1),
                                      encoding="utf-8", errors="backslashreplace")
    lines = [f"# {batch.assignment}: {len(outcomes)} submissions in {total_seconds:.1f} s",
             f"sandbox: {batch.grader.sandbox} · seed: {batch.grader.seed} · max per student: {batch.max_total:g}", "",
             "| student | status | " + " | ".join(batch.task_columns) + " | total | notes |",
             "|---|---|" + "---|" * len(batch.task_columns) + "---|---|"]
    for o in outcomes:
        notes = html.escape("; ".join(filter(None, [o.reason, *o.warnings])).replace("|", "/"), quote=False)
        lines.append(f"| {o.student_id} | {o.status} | " + " | ".join(f"{o.scores[c]:g}" for c in batch.task_columns)
                     + f" | {sum(o.scores.values()):g} | {notes} |")
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="backslashreplace")


def run(assignment: str, submissions: Path, out: Path, jobs: int = 0, cell_timeout: int = 30,
        seed: int | None = None, keep_work: bool = False, feedback_wall: float = NBGRADER_WALL_SECONDS) -> list[Outcome]:
    master_path(assignment)  # an unknown assignment stops here, with the list of known ones
    if not submissions.is_dir():
        raise SystemExit(f"error: {submissions} is not a folder of submissions")
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb" and not p.name.startswith("."))
    skipped = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix != ".ipynb")
    if not paths:
        raise SystemExit(f"error: no <student_id>.ipynb files in {submissions}")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    say(f"autograding {len(paths)} submission(s) of {assignment} with {jobs or os.cpu_count()} worker(s)")
    if skipped:
        say(f"  skipping files that are not notebooks: {', '.join(printable(name) for name in skipped)}")
    batch = Batch(assignment, submissions, out, cell_timeout, seed, feedback_wall)
    say(f"  hidden suite ready: {sum(len(t.scenarios) for t in batch.grader.tasks)} scenarios, sandbox: {batch.grader.sandbox}")
    outcomes: dict[Path, Outcome] = {}
    try:
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
            futures = {pool.submit(batch.grade_one, path): path for path in paths}
            for done, future in enumerate(as_completed(futures), 1):
                o = outcomes[futures[future]] = future.result()
                note = o.reason or "; ".join(o.warnings)
                say(f"  [{done}/{len(paths)}] {o.student_id:<24} {sum(o.scores.values()):>5g}/{batch.max_total:g}"
                    f"  {o.status:<6} {o.seconds:5.1f} s  {note}")
    finally:  # grades.csv and the report are written whatever happened, with every student in them
        listed = [outcomes.get(p) or Outcome(printable(p.stem), "error", batch.zero_scores(), "not graded: the batch was interrupted")
                  for p in paths]
        write_outputs(batch, sorted(listed, key=lambda o: o.student_id), time.perf_counter() - started)
    if not keep_work:
        shutil.rmtree(batch.work, ignore_errors=True)
    say(f"grades:   {out / 'grades.csv'}\nfeedback: {out / 'feedback'}/<student_id>.html\nreport:   {out / 'report.md'}")
    return sorted(outcomes.values(), key=lambda o: o.student_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="02_decode_scheduling")
    parser.add_argument("--submissions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=0, help="parallel workers (0: one per core)")
    parser.add_argument("--cell-timeout", type=int, default=30, help="seconds before nbgrader interrupts a cell")
    parser.add_argument("--seed", type=int, help="random seed of the hidden scenarios")
    parser.add_argument("--keep-work", action="store_true", help="keep OUT/.work (the per-student nbgrader courses)")
    parser.add_argument("--feedback-wall", type=float, default=NBGRADER_WALL_SECONDS,
                        help="seconds the sandboxed feedback run of one notebook may take in all")
    args = parser.parse_args(argv)
    run(args.assignment, args.submissions, args.out, args.jobs, args.cell_timeout, args.seed, args.keep_work,
        args.feedback_wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
