"""Autograde a folder of submissions: grades.csv, feedback HTML and a report.

    python -m grader.autograde --assignment 02_decode_scheduling --submissions DIR --out OUT [--jobs N]

DIR holds one <student_id>.ipynb per student (as an LMS download gives them). Each goes through the steps of
grader/pipeline.py in a pool of workers; grader/report.py writes what the run found. The settings (--term-secret,
--cell-timeout, ...) are those of grader/config.py. Where course.toml sets the assignment a due date
(grader/deadline.py), --times gives the submission times and a late student's total is less the late penalty.
"""
from __future__ import annotations

import argparse
import atexit
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import NoReturn

from . import config as settings
from . import class_report, deadline, feedback, messages, pipeline, report, safe_io, submission, term
from .config import DEFAULTS, Config
from .assignment import Assignment, get
from .report import NOTE_CHARS, Outcome
from .runner import LEVELS as SANDBOX_LEVELS, NoSandbox
from .safe_io import say
from .safe_text import inert
from .shard_keys import parse_shard, shard_of, student_key

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")


def student_name(stem: str) -> str:
    """The id a file's student is known by everywhere: the file name if it is a usable id that prints as itself,
    else invalid-<its hash> (stable, and distinct for names that would print alike)."""
    if STUDENT_ID.fullmatch(stem) and inert(stem) == stem and not stem.startswith("invalid-"):
        return stem
    return "invalid-" + student_key(stem)[:12]


def preload() -> None:
    """Import what workers use before the pool starts: a lazy import in a worker thread could see a half-built module.
    It runs in one thread beside the set-up, which imports little of the same (module import locks cover that)."""
    import nbconvert.exporters  # noqa: F401
    import nbconvert.preprocessors  # noqa: F401
    import traitlets.config  # noqa: F401

    feedback.warm()  # and render a page once (its filters and lexers import more)


class Batch:
    """One grading run of one assignment over one folder of submissions."""

    def __init__(self, assignment: Assignment, out: Path, config: Config = DEFAULTS, policy: deadline.Policy | None = None):
        self.assignment, self.out, self.config, self.policy = assignment, out.resolve(), config, policy
        with ThreadPoolExecutor(1) as aside:  # preload while this thread mostly waits for the warm parent and the reference
            preloaded = aside.submit(preload)
            self.prepared = pipeline.prepare(assignment, config)  # the grader nbgrader's preprocessor uses too
            self.grader = self.prepared.grader
            self.head = report.header(assignment.name, self.grader.seed, self.grader.sandbox, self.grader.tasks)
            if policy is not None:
                self.head["deadline"] = policy.describe()
            preloaded.result()  # before the pool starts (see preload); raises what preload raised
        safe_io.private_dir(self.out / "feedback")  # never leave a stale page from an earlier run
        os.chmod(self.out / "feedback", 0o755)

    def grade_one(self, path: Path) -> Outcome:
        """Grade one file; whatever goes wrong is reported for this student and the batch goes on."""
        try:
            outcome = self._grade_one(path)
        except Exception as exc:  # noqa: BLE001 - MemoryError included: this student fails, the batch goes on
            outcome = Outcome(student_name(path.stem), "error", self.zero_scores(),
                              f"internal grading error, please report: {type(exc).__name__}: {exc}")
        outcome.key = student_key(path.stem)
        outcome.late = self.late_of(path)
        outcome.reason = messages.made_inert(outcome.reason, NOTE_CHARS)  # all that follows prints, stores and reports these
        outcome.warnings = [messages.made_inert(w, NOTE_CHARS) for w in outcome.warnings]
        return outcome

    def late_of(self, path: Path) -> deadline.Late | None:
        """The student's lateness under the run's late policy (None without one)."""
        return self.policy.late_of(student_name(path.stem)) if self.policy else None

    def zero_scores(self) -> dict[str, float]:
        return {column: 0.0 for column in self.head["task_columns"]}

    def _grade_one(self, path: Path) -> Outcome:
        started = time.perf_counter()
        student = student_name(path.stem)
        if student != path.stem:
            raw = os.fsencode(path.name)[:100].hex()  # to find the file by, without printing its name
            return Outcome(student, "bad", self.zero_scores(), messages.Message("bad_file_name", {"hex": raw}), language="")
        page = self.out / "feedback" / f"{student}.html"
        work = pipeline.Work(path=path, late=self.late_of(path))  # the page shows the penalty
        try:
            pipeline.run(self.prepared, work, self.config)
        except submission.NotASubmission as exc:  # in the edition's language; "" (each language) if never read
            outcome = Outcome(student, "bad", self.zero_scores(), exc.message, language=work.language if work.nb is not None else "")
        else:
            outcome = Outcome(student, "graded", work.scores, warnings=[*work.warnings, *work.notes],
                              verdicts=work.verdicts, language=work.language, answers=work.answers)
            try:
                if work.page is not None:
                    self.publish(work.page, student)
            except Exception as exc:  # noqa: BLE001 - the scores stand; only the rich feedback is lost
                page.unlink(missing_ok=True)
                outcome.warnings.append(messages.plain_page(exc))
        if outcome.status != "graded" or not page.exists():
            self.publish(report.plain_page(self.assignment.name, self.grader.tasks, outcome), student)
        outcome.seconds = time.perf_counter() - started
        return outcome

    def publish(self, page: str, sid: str) -> None:
        """Write the page of `sid` (a student_name(), so a safe file name)."""
        safe_io.write_new(self.out / "feedback" / f"{sid}.html", page.encode("utf-8", "backslashreplace"))


def run(assignment: Assignment | str, submissions: Path, out: Path, config: Config = DEFAULTS,
        shard: tuple[int, int] | None = None, **changes) -> list[Outcome]:
    """Grade the folder (or, with shard=(k, n), the students grader.shard assigns to shard k of n).

    `changes`: settings of `config` to change for this run, by name (jobs=2, cell_timeout=10)."""
    config = config.override(**changes)
    assignment = get(assignment)  # an unknown name stops here, with the list of known ones
    _refused(lambda: term.seed(config.term_secret, assignment.name))  # never the public cases unless asked for
    paths, skipped = _notebooks(submissions)
    # the whole class's times, before the shard is taken: a run on any shard reads them alike
    policy = _refused(lambda: deadline.load(assignment.name, config.times, config.extensions, [student_name(p.stem) for p in paths]))
    paths = _shard(paths, shard)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    workers = config.jobs or 2 * (os.cpu_count() or 1)  # a worker mostly waits for its sandboxed runs
    say(f"autograding {len(paths)} submission(s) of {assignment.name} with {workers} worker(s)")
    if skipped:
        say(f"  skipping files that are not notebooks: {inert(', '.join(skipped))}")
    for line in deadline.summary(policy, [student_name(p.stem) for p in paths]) if policy else []:
        say(line)
    batch = _refused(lambda: Batch(assignment, out, config, policy))
    say(f"  sandbox: {batch.grader.sandbox} ({SANDBOX_LEVELS[batch.grader.sandbox]})")
    say(f"  {term.PUBLIC_WARNING}" if batch.head["term"] == term.PUBLIC else f"  term: {batch.head['term']}")
    say(f"  hidden suite ready: {sum(len(t.scenarios) for t in batch.grader.tasks)} scenarios")
    outcomes = _grade_all(batch, paths, workers, started)
    g = batch.grader
    say(f"  verdicts: {g.reused} reused from an identical answer graded earlier in the batch; "
        f"{g.as_released} TODO verdict(s) of answers left as released (the stub's, graded once when the assignment was built)")
    say(f"grades:   {out / 'grades.csv'}\nfeedback: {out / 'feedback'}/<student_id>.html\nreport:   {out / 'report.md'}"
        f"\nclass:    {out / 'class-report.html'}")
    return sorted(outcomes.values(), key=lambda o: o.student_id)


def _refused(make):
    """make()'s value; a run the instructor must set up otherwise (no term secret, no sandbox, a bad deadline) stops
    with its reason, before anything is graded."""
    try:
        return make()
    except (term.TermSecretError, deadline.DeadlineError, NoSandbox) as exc:
        raise SystemExit(f"error: {exc}") from None


def _notebooks(submissions: Path) -> tuple[list[Path], list[str]]:
    """The folder's <student_id>.ipynb files, and the names of the other files in it (skipped)."""
    if not submissions.is_dir():
        raise SystemExit(f"error: {submissions} is not a folder of submissions")
    paths = sorted(p for p in submissions.iterdir() if p.suffix == ".ipynb" and not p.name.startswith("."))
    skipped = sorted(p.name for p in submissions.iterdir() if p.is_file() and p.suffix != ".ipynb")
    if not paths:
        raise SystemExit(f"error: no <student_id>.ipynb files in {submissions}")
    return paths, skipped


def _shard(paths: list[Path], shard: tuple[int, int] | None) -> list[Path]:
    """The submissions of shard k of n (all of them without a shard); a shard may be empty: it still writes (empty)
    outputs for the merge."""
    if shard is None:
        return paths
    mine = [p for p in paths if shard_of(p.stem, shard[1]) == shard[0]]
    say(f"shard {shard[0]}/{shard[1]}: {len(mine)} of {len(paths)} submission(s)")
    return mine


def _grade_all(batch: Batch, paths: list[Path], workers: int, started: float) -> dict[Path, Outcome]:
    """Every submission graded, `workers` at a time, one line each as it ends; grades.csv and the report are written
    whatever happened, with every student in them (the run's time counted from `started`)."""
    outcomes: dict[Path, Outcome] = {}
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(batch.grade_one, path): path for path in paths}
            # The class report's matplotlib, imported and warmed by the first worker left without a submission (only
            # this thread's report imports it), so that its figures at the end cost no import and the set-up less.
            pool.submit(class_report.warm)
            for done, future in enumerate(as_completed(futures), 1):
                o = outcomes[futures[future]] = future.result()
                note = inert("; ".join(map(messages.text, filter(None, [o.reason, o.late_note()]))) or "; ".join(map(messages.text, o.warnings)))
                say(f"  [{done}/{len(paths)}] {inert(o.student_id):<24} {o.total:>5g}/{batch.head['max_total']:g}"
                    f"  {o.status:<6} {o.seconds:5.1f} s  {note}")
    finally:
        listed = [outcomes.get(p) or Outcome(student_name(p.stem), "error", batch.zero_scores(), "not graded: the batch was "
                                             "interrupted", key=student_key(p.stem), late=batch.late_of(p)) for p in paths]
        report.write_outputs(batch.out, batch.head, sorted(listed, key=lambda o: o.student_id), time.perf_counter() - started)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="02_decode_scheduling")
    parser.add_argument("--submissions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shard", type=parse_shard, metavar="K/N",
                        help="grade only shard K of N (K from 0; students split by a hash of their id); "
                             "merge the shards' outputs with python -m grader.shard merge")
    settings.add_arguments(parser)
    args = parser.parse_args(argv)
    run(args.assignment, args.submissions, args.out, settings.from_arguments(args), args.shard)
    return 0


def leave(code: int) -> NoReturn:
    """End the process without the interpreter's teardown, which frees a batch's heap object by object (0.4-0.6 s):
    the atexit handlers still run (the warm parent is closed, its uids swept), and stdout and stderr are flushed.
    Every file this run wrote was closed when written."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
