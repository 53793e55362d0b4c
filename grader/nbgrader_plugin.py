"""Our grading inside a standard nbgrader course: `nbgrader autograde` gives the sandboxed per-TODO scores.

An instructor adds two lines to the course's nbgrader_config.py (the repository must be importable,
e.g. `pip install -e <repo>` or PYTHONPATH):

    from grader.nbgrader_plugin import configure
    configure(c)

`configure` puts `SandboxedAutograde` in place of nbgrader's `Execute` in
`c.Autograde.autograde_preprocessors`, puts `RepairCellMetadata` first in `c.Autograde.sanitize_preprocessors`
(so that a scratch cell's nbgrader metadata cannot stop `nbgrader autograde` for the class) and selects our
feedback template (`c.HTMLExporter.template_name`, `extra_template_basedirs`, `extra_template_paths`), with
nbgrader's `ClearHiddenTests` added to `c.GenerateFeedback.preprocessors`. Then `nbgrader autograde
<assignment>` stores our verdicts in the course's own gradebook, and formgrader, `nbgrader generate_feedback`
(redacted) and `nbgrader export` work as usual. `make autograde` (a folder of LMS files) runs `SandboxedAutograde.grade`,
the same code, then renders the page in-process.

What the preprocessor does to each notebook, in order: grade each TODO in its own sandboxed child
(grader/grade.py); run the notebook for feedback in a fork of the warm sandboxed parent, hidden tests
removed first and known hangs skipped (grader/notebook_run.py); reduce the outputs to inert data;
replace each test cell's outputs by the verdict, followed by the score as the cell's result (nbgrader's
partial credit), which nbgrader's SaveAutoGrades then records. The gradebook keeps the test cells' full
source (its checksums hold); the feedback page shows only their visible part.
Nothing the student's kernel printed decides a score.
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from traitlets import Dict, Float, Int

from . import diagnose, feedback, masters, notebook_run, sanitize, submission
from .grade import Grader, TaskVerdict
from .paths import NOTEBOOKS_DIR, ROOT, assignment_names
from .safe_text import inert

try:
    from nbgrader.preprocessors import NbGraderPreprocessor as _Base
except ImportError:  # nbgrader absent: make autograde still works with nbconvert's base class
    from nbconvert.preprocessors import Preprocessor as _Base

_LOCK = threading.Lock()


@dataclass
class Graded:
    """What grading one notebook produced."""

    verdicts: list[TaskVerdict]
    notes: list[str] = field(default_factory=list)     # cells interrupted or not run, disagreements, cuts
    ran: bool = True                                    # the feedback run happened (else only scores can be shown)


@functools.lru_cache(maxsize=None)
def grader_for(assignment: str, seed: int | None = None) -> Grader:
    """One Grader (hidden suite, reference observations, warm parent) per assignment and process."""
    return Grader(assignment, **({"seed": seed} if seed is not None else {}))


@functools.lru_cache(maxsize=None)
def release_of(assignment: str) -> nbformat.NotebookNode:
    """The released student edition (read only: callers copy what they change)."""
    return nbformat.read(NOTEBOOKS_DIR / f"{assignment}.ipynb", as_version=4)


@functools.lru_cache(maxsize=None)
def trusted_markdown(assignment: str) -> frozenset[str]:
    """The release's own prose: kept as written on the page (anything else is cleaned)."""
    return frozenset(c.source for c in release_of(assignment).cells if c.cell_type == "markdown")


@functools.lru_cache(maxsize=None)
def hidden_snippets(assignment: str) -> list[str]:
    return feedback.hidden_snippets(masters.nbgrader_source(assignment))


def answers_of(nb, answer_ids: list[str]) -> dict[str, str]:
    """The last copy of each answer cell, as the kernel ran it last."""
    return {gid: cells[-1].source for gid, cells in masters.cells_by_grade_id(nb).items() if gid in answer_ids}


def grade_notebook(nb, assignment: str, *, seed: int | None = None, cell_wall: float = notebook_run.CELL_WALL,
                   cell_cpu: float = notebook_run.CELL_CPU, budget: float = notebook_run.BUDGET,
                   keep_test_source: bool = False, language: str = "en") -> Graded:
    """Grade `nb` in place: verdicts, a sandboxed feedback run, inert outputs, redacted test cells with scores.

    keep_test_source: leave the test cells' full source (hidden tests included) in `nb`, as nbgrader's gradebook
    expects it (checksums); the run never sees it, and `configure` makes generate_feedback clear it."""
    originals = {i: c.source for i, c in enumerate(nb.cells)} if keep_test_source else {}
    with _LOCK:  # the first call per assignment builds the suite; later calls share it
        grader = grader_for(assignment, seed)
    answer_ids = grader.answer_ids
    verdicts = grader.grade(answers_of(nb, answer_ids))
    diagnose.attach(grader, verdicts)  # the common mistake a failing TODO behaves like, from the same observations
    by_test = {v.test_id: v for v in verdicts}
    for cell in nb.cells:  # the student's kernel never holds hidden tests
        if masters.grade_id(cell) in by_test:
            cell.source = masters.strip_hidden(cell.source)
    hung = {v.answer_id: "ran past its time limit when graded" for v in verdicts if v.hung}
    ran = True
    try:
        notes = notebook_run.execute(grader.warm, nb, answer_ids, hung, cell_wall=cell_wall, cell_cpu=cell_cpu, budget=budget)
        notes += disagreements(nb, verdicts)
    except Exception as exc:  # noqa: BLE001 - the verdicts stand; only the feedback run is lost
        ran, notes = False, [f"the feedback run failed ({type(exc).__name__}: {str(exc)[:200]}); the page shows scores only"]
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
    notes += sanitize.clean_notebook(nb, trusted_markdown(assignment))
    notes += [f"{v.test_id}: {v.note}" for v in verdicts if v.note.startswith("grading error")]  # for the instructor to re-run
    try:
        feedback.redact(nb, verdicts, hidden_snippets(assignment), language)
        nb.metadata["language_edition"] = language  # the feedback template's labels follow it
    except RuntimeError as exc:  # our bug, never the student's: no page, but the scores stand
        ran = False
        notes.append(f"no feedback page: {exc}")
        for cell in nb.cells:
            if masters.grade_id(cell) in by_test:
                cell.source, cell.outputs = masters.strip_hidden(cell.source), []
    for cell in nb.cells:
        verdict = by_test.get(masters.grade_id(cell))
        if verdict is not None:  # nbgrader's partial credit: a test cell whose result is a number scores that number
            cell.outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": f"{verdict.score:g}"},
                                                       execution_count=cell.get("execution_count")))

    feedback.scrub_outputs(nb, [Path("/tmp")])
    for index, cell in enumerate(nb.cells):
        if index in originals and masters.grade_id(cell) in by_test:
            cell.source = originals[index]
    return Graded(verdicts, notes, ran)


def disagreements(nb, verdicts: list[TaskVerdict]) -> list[str]:
    """Test cells that passed inside the student's kernel while the sandboxed rules did not."""
    passed_in_kernel = {masters.grade_id(c) for c in nb.cells if masters.grade_id(c) and c.cell_type == "code"
                        and c.get("execution_count") is not None
                        and not any(o.get("output_type") == "error" for o in c.get("outputs", []))}
    return [f"{v.test_id}: the in-notebook checks passed but the hidden rules gave {v.score:g}/{v.points:g}"
            for v in verdicts if v.test_id in passed_in_kernel and v.score < v.points and not v.note.startswith("grading error")]


class SandboxedAutograde(_Base):
    """nbgrader preprocessor, in place of `Execute`: sandboxed per-TODO scores and a sandboxed feedback run."""

    assignment_map = Dict(help="nbgrader assignment name -> our assignment (default: the same name)").tag(config=True)
    seed = Int(None, allow_none=True, help="seed of the hidden scenarios (default: grader.grade.DEFAULT_SEED)").tag(config=True)
    cell_timeout = Float(notebook_run.CELL_WALL, help="wall seconds per cell of the feedback run").tag(config=True)
    budget = Float(notebook_run.BUDGET, help="wall seconds for the whole feedback run of one notebook").tag(config=True)

    def assignment(self, resources) -> str:
        """Our assignment for the one nbgrader is grading."""
        name = resources.get("nbgrader", {}).get("assignment", "")
        assignment = self.assignment_map.get(name, name)
        if assignment not in assignment_names():
            raise ValueError(f"no grading suite for assignment {assignment!r}; known: {', '.join(assignment_names())} "
                             "(set SandboxedAutograde.assignment_map)")
        return assignment

    def warn(self, resources, notes: list[str]) -> None:
        """Notes in nbgrader's log, which prints to the instructor's terminal: nothing of the student's raw."""
        for note in notes:
            self.log.warning("%s: %s", inert(resources.get("nbgrader", {}).get("student", "?")), inert(note, 500))

    def preprocess(self, nb, resources):
        graded = grade_notebook(nb, self.assignment(resources), seed=self.seed, cell_wall=self.cell_timeout,
                                budget=self.budget, keep_test_source=True)
        self.warn(resources, graded.notes)
        return nb, resources


class RepairCellMetadata(SandboxedAutograde):
    """nbgrader preprocessor, first of `Autograde.sanitize_preprocessors`: nbgrader metadata only where the release
    has it (grader/submission.py:repair_metadata), so one student's scratch cell never stops the class.

    A subclass so that `c.SandboxedAutograde.assignment_map` names the assignment here too."""

    def preprocess(self, nb, resources):
        self.warn(resources, submission.repair_metadata(nb, release_of(self.assignment(resources))))
        return nb, resources


def configure(c) -> None:
    """The settings an instructor adds to nbgrader_config.py (see the module docstring)."""
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.preprocessors import ClearHiddenTests, Execute, GetGrades

    defaults = Autograde.class_traits()["autograde_preprocessors"].default()
    c.Autograde.autograde_preprocessors = [SandboxedAutograde if step is Execute else step for step in defaults]
    # Stock nbgrader checks the metadata as it reads a submission (CheckCellMetadata, last of these): repair first.
    c.Autograde.sanitize_preprocessors = [RepairCellMetadata, *Autograde.class_traits()["sanitize_preprocessors"].default()]
    steps = GenerateFeedback.class_traits()["preprocessors"].default()  # the page never shows a hidden test
    c.GenerateFeedback.preprocessors = [p for step in steps for p in ([step, ClearHiddenTests] if step is GetGrades else [step])]
    templates = feedback._nbgrader_templates()
    c.HTMLExporter.template_name = feedback.TEMPLATE_NAME
    c.HTMLExporter.template_file = feedback.TEMPLATE_FILE
    c.HTMLExporter.extra_template_basedirs = [str(feedback.TEMPLATES), str(templates)]
    c.HTMLExporter.extra_template_paths = [str(templates)]


def repository() -> Path:
    """Where this package lives (for the PYTHONPATH line of the README)."""
    return ROOT
