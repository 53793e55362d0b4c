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
(redacted) and `nbgrader export` work as usual. `make autograde` (a folder of LMS files) runs the same pipeline,
rendering the page in-process.

Each preprocessor is an adapter onto grader/pipeline.py, with the settings of grader/config.py as its traits
(`c.SandboxedAutograde.seed`, `.cell_timeout`, `.budget`, ...): `RepairCellMetadata` runs its repair step,
`SandboxedAutograde` its steps from grade to score. The gradebook keeps the test cells' full source (its
checksums hold); the feedback page shows only their visible part.
"""
from __future__ import annotations

from traitlets import Dict

from . import config, feedback, pipeline
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
