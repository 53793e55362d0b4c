"""The grading of one submission, step by step: STEPS lists them in the order they run.

    read → identify → repair → grade → strip hidden → execute → sanitise → redact → render → score

`make autograde` (grader/autograde.py) runs all of them on each file. Inside nbgrader
(grader/nbgrader_plugin.py), which reads the file, lays it out and renders the page itself,
`RepairCellMetadata` runs NBGRADER_SANITIZE and `SandboxedAutograde` runs NBGRADER_AUTOGRADE.
What grading an assignment needs is read once per assignment and process (`prepare`); each step
is a short function of (that, the submission's Work, the Config). Nothing the student's kernel
printed decides a score: the verdicts come from grade, before the notebook runs.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import caches, diagnose, editions, feedback, i18n, messages, notebook_run, sanitize, submission, term
from .assignment import Assignment, get
from .config import DEFAULTS, Config
from .grade import Grader, TaskVerdict
from .verdict import Outcome
from .messages import Message, Note
from .paths import assignment_names

_LOCK = threading.Lock()


# --- what is read once per assignment -------------------------------------------------------

@dataclass(frozen=True)
class Prepared:
    """An assignment as grading needs it: the Assignment (read once from its folder) and its Grader."""

    assignment: Assignment                    # master, releases, reference, suite, driver
    grader: Grader                            # hidden suite, reference observations, warm parent
    trusted_markdown: frozenset[str]          # the English release's prose, kept as written on the page
    others: tuple[Assignment, ...]            # the other assignments (a submission of one of them is refused)

    @property
    def name(self) -> str:
        return self.assignment.name

    @property
    def answer_ids(self) -> list[str]:
        return self.grader.answer_ids

    @property
    def hidden_snippets(self) -> list[str]:
        return self.assignment.hidden_snippets

    @property
    def languages(self) -> tuple[str, ...]:
        return self.assignment.languages

    def release(self, language: str) -> nbformat.NotebookNode:
        return self.assignment.release(language)

    def prefix(self, language: str) -> tuple[str, ...]:
        """The release's code cells before its first answer cell (their figures are drawn once: notebook_run._DRAWN)."""
        return _prefix(self.assignment, language)


@caches.cached("(Assignment, the Grader's settings, seed)", "a Grader is built from these alone; its verdicts are of this term's seed")
def _grader(assignment: Assignment, config: Config, seed: int) -> Grader:
    return Grader(assignment, config, seed=seed)


@caches.cached("(Assignment, language)", "the release's cells are fixed while grading (Assignment.release)")
def _prefix(assignment: Assignment, language: str) -> tuple[str, ...]:
    return notebook_run.release_prefix(assignment.release(language), assignment.answer_ids)


def grader_for(assignment: Assignment | str, config: Config = DEFAULTS) -> Grader:
    """One Grader per assignment and grading settings (Grader.SETTINGS) in a process (its set-up takes seconds)."""
    grading = DEFAULTS.override(**{name: getattr(config, name) for name in Grader.SETTINGS})   # the rest is not its
    with _LOCK:  # the first call builds the suite; later calls share it
        assignment = get(assignment)
        seed = term.seed(config.term_secret, assignment.name)   # raises TermSecretError where there is no secret
        return _grader(assignment, grading, seed)


@caches.cached("(Assignment, Config)", "Config is frozen; its Grader comes from _grader")
def _prepare(assignment: Assignment, config: Config) -> Prepared:
    use_sandbox(config.sandbox)
    trusted = frozenset(c.source for c in assignment.release("en").cells if c.cell_type == "markdown")
    others = tuple(get(name) for name in assignment_names() if name != assignment.name)
    return Prepared(assignment, grader_for(assignment, config), trusted, others)


def prepare(assignment: Assignment | str, config: Config = DEFAULTS) -> Prepared:
    """Everything grading reads about `assignment`, read once (an unknown name raises with the known ones)."""
    return _prepare(get(assignment), config)


def forget() -> None:
    """Drop the prepared assignments and Graders (a fresh grader reuses no verdict): every cache (grader/caches.py)."""
    caches.forget()


def use_sandbox(level: str) -> None:
    """'process' or 'userns' asks for that level for this process's runs; 'auto' leaves the probe to decide (or
    GRADER_SANDBOX, where set). The level is probed when the Grader is built, which stops where none isolates."""
    from .runner import sandbox_level

    if level != "auto" and os.environ.get("GRADER_SANDBOX") != level:
        os.environ["GRADER_SANDBOX"] = level
        sandbox_level.cache_clear()


# --- one submission --------------------------------------------------------------------------

@dataclass
class Work:
    """One submission on its way through the steps."""

    path: Path | None = None                # the file (make autograde); None when nbgrader has read it
    nb: nbformat.NotebookNode | None = None
    nbgrader: bool = False                  # in nbgrader: its gradebook keeps the test cells' full source
    language: str = "en"                    # the edition it was filled in (the page's language; scores ignore it)
    warnings: list[Message] = field(default_factory=list)   # what repair changed
    verdicts: list[TaskVerdict] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)     # cells interrupted or not run, disagreements, cuts
    ran: bool = True                        # the feedback run happened (else only scores can be shown)
    originals: dict[int, str] = field(default_factory=dict)   # test cells' full source, for nbgrader's checksums
    page: str | None = None                 # the rendered feedback page
    scores: dict[str, float] = field(default_factory=dict)
    late: object = None                     # make autograde's deadline.Late of the student (never in nbgrader: its own penalty)
    answers: dict[str, str] = field(default_factory=dict)     # answer grade_id -> the source graded (the class report's)


def read(a: Prepared, w: Work, c: Config) -> None:
    """The file as Jupyter reads it (raises NotASubmission)."""
    if w.nb is None:
        w.nb = submission.read(w.path)


def edition(a: Prepared, w: Work, c: Config) -> None:
    """The edition the notebook was filled in: its verdicts, page and any refusal are worded in that language."""
    w.language = submission.language_of(w.nb, a.assignment)


def identify(a: Prepared, w: Work, c: Config) -> None:
    """A notebook of this assignment, not of another one."""
    try:
        submission.identify(w.nb, a.assignment, list(a.others))
    except submission.NotASubmission:  # worded in the edition it was filled in, of whichever assignment; "" if none
        w.language = submission.refusal_language(w.nb, [a.assignment, *a.others])
        raise


def repair(a: Prepared, w: Work, c: Config) -> None:
    """nbgrader metadata only where the release has it; outside nbgrader also each graded cell once, in release order."""
    release = a.release(w.language)
    if w.nbgrader:  # nbgrader restores the layout itself
        w.warnings += submission.repair_metadata(w.nb, release)
        restore_hidden(a, w.nb)
        return
    sub = submission.prepare(w.nb, release, a.answer_ids)
    w.nb, w.warnings = sub.notebook, w.warnings + sub.warnings


def restore_hidden(a: Prepared, nb) -> None:
    """Test cells left as released get back the hidden region the release removed (in nbgrader, before its checks).

    nbgrader's gradebook checksums a test cell before generate_assignment clears its hidden tests
    (jupyter/nbgrader#1961), so OverwriteCells warned "checksum has changed" for every test cell of every student.
    A cell the student did change still differs, and is still reported (and overwritten) by nbgrader."""
    full = _full_tests(a.assignment)
    for cell in nb.cells:
        cell.source = full.get((editions.grade_id(cell), cell.source), cell.source)


@caches.cached("an Assignment", "the nbgrader sources are rebuilt with the release (make notebooks), not while grading")
def _full_tests(assignment: Assignment) -> dict[tuple[str, str], str]:
    """(grade_id, the released source) -> the source with its hidden region, for each edition's test cells."""
    full = {}
    for language in assignment.languages:
        source = {editions.grade_id(c): c.source for c in editions.nbgrader_source(assignment.name, language).cells}
        for cell in assignment.release(language).cells:
            gid = editions.grade_id(cell)
            if gid and source.get(gid, cell.source) != cell.source and editions.strip_hidden(source[gid]) != source[gid]:
                full[gid, cell.source] = source[gid]
    return full


def grade(a: Prepared, w: Work, c: Config) -> None:
    """One verdict per TODO, each from its own sandboxed child (grader/grade.py)."""
    w.answers = submission.answers_of(w.nb, a.answer_ids)
    w.verdicts = a.grader.grade(w.answers)
    diagnose.attach(a.grader, w.verdicts)  # the common mistake a failing TODO behaves like, from the same observations


def _tests(w: Work) -> dict[str, TaskVerdict]:
    return {v.test_id: v for v in w.verdicts}


def strip_hidden(a: Prepared, w: Work, c: Config) -> None:
    """The student's kernel never holds hidden tests: they leave the test cells before the run."""
    tests = _tests(w)
    if w.nbgrader:
        w.originals = {i: cell.source for i, cell in enumerate(w.nb.cells)}
    for cell in w.nb.cells:
        if editions.grade_id(cell) in tests:
            cell.source = editions.strip_hidden(cell.source)


def execute(a: Prepared, w: Work, c: Config) -> None:
    """The notebook run for feedback in a fork of the warm sandboxed parent; known hangs are skipped."""
    hung = {v.answer_id for v in w.verdicts if v.hung}
    # A test cell's outputs become its verdict (redact), and at full marks there is no disagreement to flag: not run.
    full = frozenset(v.test_id for v in w.verdicts if v.score == v.points) if not w.nbgrader else frozenset()
    try:
        w.notes += notebook_run.execute(a.grader.warm, w.nb, a.answer_ids, hung, unneeded=full, prefix=a.prefix(w.language),
                                        cell_cpu=c.cell_cpu, cell_timeout=c.cell_timeout, feedback_wall=c.feedback_wall,
                                        language=w.language)
        w.notes += disagreements(w.nb, w.verdicts)
    except Exception as exc:  # noqa: BLE001 - the verdicts stand; only the feedback run is lost
        w.ran = False
        w.notes += [f"the feedback run failed ({type(exc).__name__}: {str(exc)[:200]}); the page shows scores only"]
        for cell in w.nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None


def disagreements(nb, verdicts: list[TaskVerdict]) -> list[str]:
    """Test cells that passed inside the student's kernel while the sandboxed rules did not."""
    passed_in_kernel = {editions.grade_id(c) for c in nb.cells if editions.grade_id(c) and c.cell_type == "code"
                        and c.get("execution_count") is not None
                        and not any(o.get("output_type") == "error" for o in c.get("outputs", []))}
    return [f"{v.test_id}: the in-notebook checks passed but the hidden rules gave {v.score:g}/{v.points:g}"
            for v in verdicts if v.test_id in passed_in_kernel and v.score < v.points and v.status != Outcome.GRADING_ERROR]


def sanitise(a: Prepared, w: Work, c: Config) -> None:
    """Outputs reduced to inert data, prose not the release's cleaned; grading errors noted for a re-run."""
    w.notes += sanitize.clean_notebook(w.nb, a.trusted_markdown, clean_seconds=c.clean_seconds, outputs_cap=c.outputs_cap)
    w.notes += [f"{v.test_id}: {v.note}" for v in w.verdicts if v.status == Outcome.GRADING_ERROR]


def redact(a: Prepared, w: Work, c: Config) -> None:
    """Each test cell shows its visible part, the verdict, then the score as its result (nbgrader's partial credit)."""
    tests = _tests(w)
    try:
        feedback.redact(w.nb, i18n.feedback_texts(w.verdicts, w.language), list(a.hidden_snippets))
        w.nb.metadata["language_edition"] = w.language  # the feedback template's labels follow it
    except RuntimeError as exc:  # our bug, never the student's: no page, but the scores stand
        w.ran = False
        w.notes.append(f"no feedback page: {exc}")
        for cell in w.nb.cells:
            if editions.grade_id(cell) in tests:
                cell.source, cell.outputs = editions.strip_hidden(cell.source), []
    for cell in w.nb.cells:
        verdict = tests.get(editions.grade_id(cell))
        if verdict is not None:  # a test cell whose result is a number scores that number
            cell.outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": f"{verdict.score:g}"},
                                                       execution_count=cell.get("execution_count")))
    feedback.scrub_outputs(w.nb, [Path("/tmp")])


def render(a: Prepared, w: Work, c: Config) -> None:
    """The feedback page (nbgrader renders its own); a page that cannot be made leaves the plain one to the caller."""
    if w.nbgrader or not w.ran:
        return
    try:
        w.page = page_of(a, w, c.page_cap)
    except Exception as exc:  # noqa: BLE001 - the scores stand; only the rich feedback is lost
        w.notes.append(messages.plain_page(exc))


def page_of(a: Prepared, w: Work, page_cap: int) -> str:
    """The graded notebook (executed in the sandbox, inert, redacted) as nbgrader's feedback page, cleaned."""
    page = feedback.render(w.nb, a.name, w.verdicts, w.late, w.language)
    # A verdict's failing case is shown on purpose (built from scenario data) and may coincide with a line of a
    # hidden test, a bare constructor call say: as in feedback.redact, such a line is no leak.
    on_purpose = {line.strip() for v in w.verdicts for rule in v.rules for line in rule.snippet.splitlines()}
    seen = feedback.visible_text(page)
    if [line for line in a.hidden_snippets if line not in on_purpose and line in seen]:
        raise RuntimeError("the page would show hidden test code")  # the kernel never holds them: never publish
    page, why = sanitize.clean_page(page, page_cap)
    if page is None:
        raise RuntimeError(why)
    return page


def score(a: Prepared, w: Work, c: Config) -> None:
    """The score per TODO; in nbgrader the test cells get their full source back (its gradebook checksums them)."""
    w.scores = {v.answer_id: v.score for v in w.verdicts}
    tests = _tests(w)
    for index, cell in enumerate(w.nb.cells):
        if index in w.originals and editions.grade_id(cell) in tests:
            cell.source = w.originals[index]


STEPS = (read, edition, identify, repair, grade, strip_hidden, execute, sanitise, redact, render, score)
NBGRADER_SANITIZE = (edition, repair,)                                              # before nbgrader's own checks
NBGRADER_AUTOGRADE = (edition, grade, strip_hidden, execute, sanitise, redact, score)  # in place of nbgrader's Execute


def run(a: Prepared, w: Work, c: Config = DEFAULTS, steps: tuple = STEPS) -> Work:
    """Run `steps` on `w` in order; NotASubmission from read, identify or repair means it cannot be graded."""
    for step in steps:
        step(a, w, c)
    return w


def grade_notebook(nb, assignment: Assignment | str, config: Config = DEFAULTS) -> Work:
    """Grade a notebook already laid out, in place, in its edition's language: verdicts, the feedback run, inert
    outputs, redacted test cells."""
    return run(prepare(assignment, config), Work(nb=nb), config, NBGRADER_AUTOGRADE)
