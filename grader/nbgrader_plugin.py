"""Our grading inside a standard nbgrader course: `nbgrader autograde` gives the sandboxed per-TODO scores.

An instructor adds two lines to the course's nbgrader_config.py (the repository must be importable,
e.g. `pip install -e <repo>` or PYTHONPATH):

    from grader.nbgrader_plugin import configure
    configure(c)

`configure` puts `SandboxedAutograde` in place of nbgrader's `Execute` in
`c.Autograde.autograde_preprocessors`, puts `RepairCellMetadata` first in `c.Autograde.sanitize_preprocessors`
(so that a scratch cell's nbgrader metadata cannot stop `nbgrader autograde` for the class), adds nbgrader's
`ClearHiddenTests` to `c.GenerateFeedback.preprocessors` and makes `FeedbackTodoExporter` GenerateFeedback's
exporter: our template, set on that class's config section only (formgrader's own HTMLExporter keeps its
template), and pages as inert as `make autograde`'s. Then `nbgrader autograde
<assignment>` stores our verdicts in the course's own gradebook, and formgrader, `nbgrader generate_feedback`
(redacted) and `nbgrader export` work as usual. `make autograde` (a folder of LMS files) runs the same pipeline,
rendering the page in-process.

Each preprocessor is an adapter onto grader/pipeline.py, with the settings of grader/config.py as its traits
(`c.SandboxedAutograde.seed`, `.cell_timeout`, `.budget`, ...): `RepairCellMetadata` runs its repair step,
`SandboxedAutograde` its steps from grade to score. The gradebook keeps the test cells' full source (its
checksums hold); the feedback page shows only their visible part.
"""
from __future__ import annotations

import html

from nbconvert.exporters import HTMLExporter
from traitlets import Dict, Integer

from . import config, feedback, pipeline, sanitize
from .paths import assignment_names
from .runner import LEVELS
from .safe_text import inert

_ANNOUNCED: dict[str, bool] = {}

try:
    from nbgrader.preprocessors import NbGraderPreprocessor as _Base
except ImportError:  # nbgrader absent: the adapters still load, on nbconvert's base class
    from nbconvert.preprocessors import Preprocessor as _Base

# The settings nbgrader has (grader/config.py), as configurable traits of the preprocessors below.
_Settings = type("_Settings", (_Base,), config.traits())


class SandboxedAutograde(_Settings):
    """nbgrader preprocessor, in place of `Execute`: sandboxed per-TODO scores and a sandboxed feedback run."""

    assignment_map = Dict(help="nbgrader assignment name -> our assignment (default: the same name)").tag(config=True)

    def assignment(self, resources) -> pipeline.Prepared:
        """Our assignment for the one nbgrader is grading, prepared with these settings."""
        name = resources.get("nbgrader", {}).get("assignment", "")
        assignment = self.assignment_map.get(name, name)
        if assignment not in assignment_names():
            raise ValueError(f"no grading suite for assignment {assignment!r}; known: {', '.join(assignment_names())} "
                             "(set SandboxedAutograde.assignment_map)")
        prepared = pipeline.prepare(assignment, self.settings())
        if not _ANNOUNCED.get(assignment):   # once per process and assignment, in the log of every command it grades in
            _ANNOUNCED[assignment] = True
            self.log.info("decode-scheduling grading kit: %s graded in sandbox %s (%s)", assignment, prepared.grader.sandbox,
                          LEVELS[prepared.grader.sandbox])
        return prepared

    def settings(self) -> config.Config:
        return config.from_traits(self)

    def warn(self, resources, notes: list[str]) -> None:
        """Notes in nbgrader's log, which prints to the instructor's terminal: nothing of the student's raw."""
        for note in notes:
            self.log.warning("%s: %s", inert(resources.get("nbgrader", {}).get("student", "?")), inert(note, 500))

    def preprocess(self, nb, resources):
        work = pipeline.run(self.assignment(resources), pipeline.Work(nb=nb, nbgrader=True), self.settings(),
                            pipeline.NBGRADER_AUTOGRADE)
        self.warn(resources, work.notes)
        return nb, resources


class RepairCellMetadata(SandboxedAutograde):
    """nbgrader preprocessor, first of `Autograde.sanitize_preprocessors`: nbgrader metadata only where the release
    has it (grader/submission.py:repair_metadata), so one student's scratch cell never stops the class.

    A subclass so that `c.SandboxedAutograde.assignment_map` names the assignment here too."""

    def preprocess(self, nb, resources):
        work = pipeline.run(self.assignment(resources), pipeline.Work(nb=nb, nbgrader=True), self.settings(),
                            pipeline.NBGRADER_SANITIZE)
        self.warn(resources, work.warnings)
        return nb, resources


class FeedbackTodoExporter(HTMLExporter):
    """`nbgrader generate_feedback`'s exporter (`c.GenerateFeedback.exporter_class`): our template, set on this class's
    own config section so that formgrader's HTMLExporter keeps its own, and the page made inert as `make autograde`
    makes its pages (grader/sanitize.py:clean_page: no script, no remote resource, a Content-Security-Policy)."""

    page_cap = Integer(config.DEFAULTS.page_cap, help="bytes of one feedback page; a larger page is replaced by the "
                       "plain one").tag(config=True)

    def from_notebook_node(self, nb, resources=None, **kw):
        page, resources = super().from_notebook_node(nb, resources, **kw)
        clean, why = sanitize.clean_page(page, self.page_cap)
        if clean is None:  # nbgrader writes what we return: never the refused page
            self.log.warning("feedback fell back to a plain page: %s", inert(why, 500))
            clean = plain_page(nb, resources, why)
        return clean, resources


def plain_page(nb, resources, why: str) -> str:
    """A page whose rich form was refused: nbgrader's scores per graded cell and our verdicts, as escaped text."""
    info = (resources or {}).get("nbgrader", {})
    rows, verdicts = [], []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            rows.append(f"<tr><td>{html.escape(str(meta.get('grade_id', '')))}</td>"
                        f"<td>{html.escape(str(meta.get('score', '')))} / {html.escape(str(meta.get('points', '')))}</td></tr>")
            verdicts += [f"<pre>{html.escape(str(o.get('text', '')))}</pre>" for o in cell.get("outputs", [])
                         if o.get("output_type") == "stream"]
    title = html.escape(str(info.get("notebook", "feedback")))
    return (f"<!doctype html><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{sanitize.CSP}\">"
            f"<title>{title}</title><h1>{title}: {html.escape(str(info.get('score', '')))} / "
            f"{html.escape(str(info.get('max_score', '')))}</h1><p>{html.escape(why)}</p>"
            f"<table border=1>{''.join(rows)}</table>{''.join(verdicts)}")


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
    # Not c.HTMLExporter: formgrader renders its submission view with an HTMLExporter of that config (a 500 there).
    # A subclass's section wins over HTMLExporter's, which GenerateFeedback and formgrader's button set to 'feedback'.
    c.GenerateFeedback.exporter_class = FeedbackTodoExporter
    for name, value in feedback.template_settings().items():
        setattr(c.FeedbackTodoExporter, name, value)
