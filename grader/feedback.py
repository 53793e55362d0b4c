"""The feedback page: nbgrader's own converter, with hidden tests redacted and our template.

The template (grader/templates/feedback_todo) is set through nbgrader's configuration point,
`HTMLExporter.template_name`, so a course running stock `nbgrader generate_feedback` can use it too.
"""
from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import nbformat

from . import masters
from .paths import ROOT

TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE_NAME = "feedback_todo"
_LOCK = threading.Lock()


def _nbgrader_templates() -> Path:
    import nbgrader

    return Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"


def template_config():
    """nbgrader/nbconvert settings that select our feedback template."""
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.template_name = TEMPLATE_NAME
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(_nbgrader_templates())]
    return c


def generate(course: Path, assignment: str, student: str) -> None:
    """nbgrader's feedback converter, in this process: its import alone costs seconds per subprocess."""
    with _LOCK:  # nbgrader's converters are not written for concurrent use; a first import from two threads at
        # once can fail too (nbconvert's exporters import each other: "partially initialized module")
        from nbgrader.converters import GenerateFeedback
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(root=str(course))
        coursedir.assignment_id, coursedir.student_id = assignment, student
        converter = GenerateFeedback(coursedir=coursedir, config=template_config())
        # Our template extends nbgrader's 'feedback/index.html.j2'; nbgrader's __init__ resets this search path.
        paths = converter.config.HTMLExporter.extra_template_paths
        converter.config.HTMLExporter.extra_template_paths = [*paths, str(_nbgrader_templates())]
        converter.force = True
        converter.log.setLevel("WARNING")
        converter.start()


def _prefixes(extra: list[Path]) -> list[tuple[str, str]]:
    """(path prefix, what a student sees instead), most specific first, in absolute and ~ forms."""
    home = str(Path.home())
    named = [(p, "") for p in extra] + [
        (Path(sys.prefix), "<python>"), (Path(sys.base_prefix), "<python>"), (ROOT, "<course>")]
    pairs = []
    for path, label in named:
        for form in {str(path), str(path.resolve())}:
            pairs.append((form + os.sep, f"{label}/" if label else ""))
            if home != "/" and form.startswith(home + os.sep):
                pairs.append(("~" + form[len(home):] + os.sep, f"{label}/" if label else ""))
    return sorted(set(pairs), key=lambda pair: -len(pair[0]))


def scrub_paths(text: str, extra: list[Path] = ()) -> str:
    """Remove the grading machine's folders from tracebacks and messages."""
    for prefix, label in _prefixes(list(extra)):
        text = text.replace(prefix, label)
    return text


def scrub_outputs(nb, extra: list[Path] = ()) -> None:
    """scrub_paths over every text output and traceback of the notebook, in place."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = scrub_paths(output["text"], extra)
            if "traceback" in output:
                output["traceback"] = [scrub_paths(line, extra) for line in output["traceback"]]
            if "evalue" in output:
                output["evalue"] = scrub_paths(output["evalue"], extra)


def hidden_snippets(source) -> list[str]:
    """Lines found only in hidden-test regions (long enough to be distinctive)."""
    hidden, visible = set(), set()
    for cell in source.cells:
        for region in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", cell.source, re.S):
            hidden |= {line.strip() for line in region.splitlines()}
        visible |= {line.strip() for line in masters.strip_hidden(cell.source).splitlines()}
    return sorted(line for line in hidden - visible if len(line) >= 20)


def redact(nb, verdicts, hidden: list[str], language: str = "en") -> None:
    """Test cells lose their hidden region; their outputs become the sandboxed verdict, in `language`."""
    from . import i18n

    by_test = {v.test_id: v for v in verdicts}
    for cell in nb.cells:
        gid = masters.grade_id(cell)
        if gid in by_test:
            cell.source = masters.strip_hidden(cell.source)
            text = i18n.summary(by_test[gid], language) + f"\n\n{i18n.TEXT[language]['graded_outside']}\n"
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            shown = cell.source + text
            leaked = [line for line in hidden if line in shown]
            if leaked:  # a bug of ours, never the student's: stop before anything is rendered
                raise RuntimeError(f"redaction failed, {gid} would show hidden test code: {leaked[0]!r}")


def visible_text(page: str) -> str:
    """What a reader of an HTML page sees: tags (syntax highlighting) removed, entities decoded."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", page))
