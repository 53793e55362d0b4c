"""Our grading inside a standard nbgrader course: `nbgrader autograde` gives the sandboxed per-TODO scores.

An instructor adds two lines to the course's nbgrader_config.py (the repository must be importable,
e.g. `pip install -e "<repo>[instructor]"` or PYTHONPATH):

    from grader.nbgrader_plugin import configure
    configure(c)

`configure` puts `SandboxedAutograde` in place of nbgrader's `Execute` in
`c.Autograde.autograde_preprocessors`, puts `RepairCellMetadata` first in `c.Autograde.sanitize_preprocessors`
(so that a scratch cell's nbgrader metadata cannot stop `nbgrader autograde` for the class) and makes
`FeedbackTodoExporter` GenerateFeedback's exporter: hidden tests cleared (nbgrader's `ClearHiddenTests`), our
template, set on that class's config section only (formgrader's own HTMLExporter keeps its template), and pages as
inert as `make autograde`'s. Each command it changes says so once in its log (`announce`): the kit's version and
folder, the sandbox level (autograde) and the feedback template. Then `nbgrader autograde
<assignment>` stores our verdicts in the course's own gradebook, and formgrader, `nbgrader generate_feedback`
(redacted) and `nbgrader export` work as usual. `make autograde` (a folder of LMS files) runs the same pipeline,
rendering the page in-process.

Each preprocessor is an adapter onto grader/pipeline.py, with the settings of grader/config.py as its traits
named as its fields (`c.SandboxedAutograde.term_secret`, `.cell_timeout`, `.feedback_wall`, ...; a name a setting had
before, such as `.budget`, stops the preprocessor with the new one): `RepairCellMetadata` runs its repair step,
`SandboxedAutograde` its steps from grade to score. The gradebook keeps the test cells' full source (its
checksums hold); the feedback page shows only their visible part.
"""
from __future__ import annotations

import copy
import html
import weakref
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from traitlets import Dict, TraitError

from . import config, feedback, messages, pipeline, sanitize
from .paths import assignment_names
from .runner import LEVELS
from .safe_text import inert

# The nbgrader commands (converters) that have said which kit changes them, and about what: once per command run,
# so each press of a formgrader button logs it too (its log is shown with the result).
_ANNOUNCED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

try:
    from nbgrader.converters.base import BaseConverter as _Command
    from nbgrader.preprocessors import NbGraderPreprocessor as _Base
except ImportError:  # nbgrader absent: the adapters still load, on nbconvert's base class
    from nbconvert.preprocessors import Preprocessor as _Base
    _Command = ()

# The settings nbgrader has (grader/config.py), as configurable traits of the preprocessors below.
_Settings = type("_Settings", (_Base,), config.traits())


class SandboxedAutograde(_Settings):
    """nbgrader preprocessor, in place of `Execute`: sandboxed per-TODO scores and a sandboxed feedback run."""

    assignment_map = Dict(help="nbgrader assignment name -> our assignment (default: the same name)").tag(config=True)

    def _load_config(self, cfg, section_names=None, traits=None):
        # A setting under its old name would only be logged as unknown by traitlets, and grading would go on without it.
        renamed = config.renamed(self._find_my_config(cfg))
        if renamed:
            raise TraitError("; ".join(renamed))
        super()._load_config(cfg, section_names, traits)

    def assignment(self, resources) -> pipeline.Prepared:
        """Our assignment for the one nbgrader is grading, prepared with these settings."""
        name = resources.get("nbgrader", {}).get("assignment", "")
        assignment = self.assignment_map.get(name, name)
        if assignment not in assignment_names():
            raise ValueError(f"no grading suite for assignment {assignment!r}; known: {', '.join(assignment_names())} "
                             "(set SandboxedAutograde.assignment_map)")
        prepared = pipeline.prepare(assignment, self.settings())
        level = prepared.grader.sandbox
        announce(self, f"{assignment} graded in sandbox {level} ({LEVELS[level]})")
        return prepared

    def settings(self) -> config.Config:
        return config.from_traits(self)

    def warn(self, resources, notes: list[messages.Note]) -> None:
        """Notes in nbgrader's log, which prints to the instructor's terminal: nothing of the student's raw."""
        for note in notes:
            self.log.warning("%s: %s", inert(resources.get("nbgrader", {}).get("student", "?")), inert(messages.text(note), 500))

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

    page_cap = config.traits()["page_cap"]   # the setting's own trait (its default and help): c.FeedbackTodoExporter.page_cap

    def from_notebook_node(self, nb, resources=None, **kw):
        announce(self, f"feedback pages made inert (no script, no remote resource, a CSP); page cap {self.page_cap} bytes")
        nb = self.without_hidden_tests(nb, resources)
        page, resources = super().from_notebook_node(nb, resources, **kw)
        clean, why = sanitize.clean_page(page, self.page_cap)
        if clean is None:  # nbgrader writes what we return: never the refused page
            self.log.warning("%s", messages.plain_page(inert(why, 500)))
            clean = plain_page(nb, resources, why)
        return clean, resources

    def _preprocess(self, nb, resources):
        nb, resources = super()._preprocess(nb, resources)  # GetGrades: the gradebook's scores, a manual one included
        note_manual_scores(nb)
        return nb, resources

    def without_hidden_tests(self, nb, resources):
        """A copy of `nb` without hidden tests: nbgrader's ClearHiddenTests, with the course's settings for it.

        Not one of this exporter's preprocessors: an HTMLExporter's defaults set `display_data_priority`, which
        nbgrader's preprocessors declare but do not accept as a setting (a warning per page)."""
        from nbgrader.preprocessors import ClearHiddenTests

        settings = self.parent.config if self.parent is not None else self.config.__class__()
        nb, _ = ClearHiddenTests(config=settings, log=self.log).preprocess(copy.deepcopy(nb), dict(resources or {}))
        return nb


def announce(step, subject: str) -> None:
    """One log line per nbgrader command and subject: this kit's version and folder, the subject (the sandbox
    level, for autograde), the feedback template. `step` is a preprocessor or exporter of that command."""
    import lab

    command = step
    while getattr(command, "parent", None) is not None and not isinstance(command, _Command):
        command = command.parent
    said = _ANNOUNCED.setdefault(command, set())
    if subject in said:
        return
    said.add(subject)
    step.log.info("decode-scheduling grading kit %s (%s): %s; feedback template %s (%s)", lab.__version__,
                  Path(__file__).parent, subject, feedback.TEMPLATE_NAME, feedback.TEMPLATES / feedback.TEMPLATE_NAME)


def note_manual_scores(nb) -> None:
    """A test cell whose gradebook score (a grader's manual one) is not the hidden rules' says so above the verdict,
    and its result is the score that counts. The rules' score is the cell's result as autograde left it
    (pipeline.redact), which nbgrader's SaveAutoGrades recorded."""
    from .i18n import SUMMARY

    text = SUMMARY.get(nb.metadata.get("language_edition", "en"), SUMMARY["en"])["manual"]
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        results = [o for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"]
        if not meta.get("grade") or meta.get("solution") or meta.get("score") is None or not results:
            continue
        try:
            auto, score = float(results[-1]["data"]["text/plain"]), float(meta["score"])
        except (KeyError, TypeError, ValueError):
            continue
        if abs(auto - score) < 1e-9:
            continue
        task = str(meta.get("grade_id", "")).replace("_tests", "").replace("todo", "TODO ")
        note = text.format(task=task, score=score, points=float(meta.get("points", 0)), auto=auto)
        cell.outputs.insert(0, nbformat.v4.new_output("stream", name="stdout", text=note + "\n\n"))
        results[-1]["data"]["text/plain"] = f"{score:g}"


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
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    defaults = Autograde.class_traits()["autograde_preprocessors"].default()
    c.Autograde.autograde_preprocessors = [SandboxedAutograde if step is Execute else step for step in defaults]
    # Stock nbgrader checks the metadata as it reads a submission (CheckCellMetadata, last of these): repair first.
    c.Autograde.sanitize_preprocessors = [RepairCellMetadata, *Autograde.class_traits()["sanitize_preprocessors"].default()]
    # The page never shows a hidden test: the exporter clears them. Its template is set on its own section, not on
    # c.HTMLExporter: formgrader renders its submission view with an HTMLExporter of this config (a 500 there). A
    # subclass's section wins over HTMLExporter's, which GenerateFeedback and formgrader's button set to 'feedback'.
    c.GenerateFeedback.exporter_class = FeedbackTodoExporter
    for name, value in feedback.template_settings().items():
        setattr(c.FeedbackTodoExporter, name, value)
