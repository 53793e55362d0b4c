"""The feedback page: nbgrader's feedback template and ours, rendered in process, hidden tests redacted.

The template (grader/templates/feedback_todo) is selected by exporter traits (`template_settings`): here on this
process's own HTMLExporter; in an nbgrader course on the plugin's exporter class, which only `nbgrader
generate_feedback` uses (grader/nbgrader_plugin.py), so formgrader's own HTMLExporter keeps its template.
"""
from __future__ import annotations

import html
import os
import queue
import re
import sys
import time
from pathlib import Path

import nbformat

from . import caches, editions, nbconvert_shim
from .paths import ROOT
from .sanitize import NOT_SHOWN, SOURCES_CAP

TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE_NAME = "feedback_todo"
TEMPLATE_FILE = "feedback_todo.html.j2"
RENDER_SECONDS = 60.0   # a page that takes longer is given up (the student gets the plain page); honest ones take ~1 s


def _nbgrader_templates() -> Path:
    import importlib.util

    return Path(importlib.util.find_spec("nbgrader").origin).parent / "server_extensions" / "formgrader" / "templates"


def template_settings() -> dict:
    """The exporter traits that select our feedback template (and nbgrader's bootstrap CSS, which it includes)."""
    nbgrader = _nbgrader_templates()
    bootstrap = nbgrader.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    return {"template_name": TEMPLATE_NAME, "template_file": TEMPLATE_FILE,
            "extra_template_basedirs": [str(TEMPLATES), str(nbgrader)],
            "extra_template_paths": [str(bootstrap), str(nbgrader)]}


def template_config():
    """nbconvert settings that select our feedback template, for this process's own HTMLExporter."""
    from traitlets.config import Config

    c = Config()
    for name, value in template_settings().items():
        setattr(c.HTMLExporter, name, value)
    return c


# Exporters no render is using. nbconvert's exporters are not written for concurrent use, so each render takes
# its own. A page renders in tens of milliseconds, and an exporter's first page costs several (its templates are
# compiled), so a render waits a little for an idle one before it builds another: a slow page holds up no other
# student's for longer than EXPORTER_WAIT.
_IDLE: queue.SimpleQueue = queue.SimpleQueue()
EXPORTER_WAIT = 0.5
_BUILT = [0]   # exporters built in this process: with none yet, there is none to wait for
# Most of a page is the release's, the same on every page of a class: prose and code are rendered once per text.
_MARKDOWN: dict[str, str] = caches.table("_MARKDOWN", "a markdown cell's source (a cell without attachments)",
                                          "its HTML depends on the text and nbconvert's version alone")
_HIGHLIGHTED: dict[tuple, str] = caches.table("_HIGHLIGHTED", "(code, language)", "its highlighted HTML depends on these and pygments alone")
CACHE_LIMIT = 4096                           # texts kept per cache (a flood of new ones starts it again)
ALT = re.compile(r"<img(?![^>]*\balt=)")


def _cached(cache: dict, key, make):
    """cache[key], made once (renders in other threads share the cache: a clear between a look-up and a read is harmless)."""
    found = cache.get(key)
    if found is None:
        found = make()
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        cache[key] = found
    return found


def _exporter():
    """nbconvert's HTMLExporter with our template; code highlighted once per distinct cell source (most cells are
    the same in every submission), and the page not re-parsed with BeautifulSoup only to add alt text."""
    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters import ansi2html
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor

    class CachedHighlight(Highlight2HTML):
        def __call__(self, source, language=None, metadata=None):
            self.parent.in_time()
            return _cached(_HIGHLIGHTED, (source, language), lambda: super(CachedHighlight, self).__call__(source, language, metadata))

    class FeedbackExporter(HTMLExporter):
        deadline = float("inf")

        def in_time(self) -> None:
            """Called by the filters each cell goes through: a page over its time budget is given up."""
            if time.monotonic() > self.deadline:
                raise TimeoutError(f"the page took more than {RENDER_SECONDS:g} s to render")

        @pass_context
        def markdown2html(self, context, source):
            self.in_time()
            if context.get("cell", {}).get("attachments"):
                return super().markdown2html(context, source)
            return _cached(_MARKDOWN, source, lambda: super(FeedbackExporter, self).markdown2html(context, source))

        def timed_ansi2html(self, text):
            self.in_time()
            return ansi2html(text)

        def from_notebook_node(self, nb, resources=None, **kw):
            resources = nbconvert_shim.page_resources(self, resources)
            self.register_filter("highlight_code", self.cached_highlight)
            self.register_filter("ansi2html", self.timed_ansi2html)
            self.register_filter("filter_data_type", nbconvert_shim.data_type_filter(self, resources))
            page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return ALT.sub('<img alt="No description has been provided for this image"', page), resources

    config = template_config()
    config.HTMLExporter.optimistic_validation = True   # validated once after the preprocessors, not after each one
    exporter = FeedbackExporter(config=config)
    exporter.cached_highlight = CachedHighlight(pygments_lexer="ipython3", parent=exporter)
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor(), enabled=True)
    return exporter


def render(nb, assignment: str, verdicts, late=None, language: str = "en") -> str:
    """The page `nbgrader generate_feedback` renders with our template, from our verdicts, in this process.

    The scores nbgrader's GetGrades would read from a gradebook are set from the verdicts directly (the
    same numbers nbgrader's gradebook holds), so no course folder or database is built per student. `late`
    (make autograde's deadline.Late) sets the late penalty as GetGrades does (the score is after it) and its
    reason, in `language`; without it the penalty is 0."""

    by_test, code = {v.test_id: v for v in verdicts}, SOURCES_CAP
    for cell in nb.cells:
        if cell.cell_type == "code":  # highlighting costs time per character: the page shows this much code
            code -= len(cell.source)
            cell.source = cell.source if code >= 0 else NOT_SHOWN
        meta = cell.get("metadata", {}).get("nbgrader")
        if not meta:
            continue
        if meta.get("solution") or meta.get("task"):
            meta["comment"] = None
        if meta.get("grade"):
            verdict = by_test.get(meta.get("grade_id"))
            meta["score"] = verdict.score if verdict else 0.0
            meta["points"] = verdict.points if verdict else meta.get("points", 0)
    # to the hundredth, as report.Outcome's raw_total: the penalty (rounded from it) is then grades.csv's
    score, max_score = round(sum(v.score for v in verdicts), 2), sum(v.points for v in verdicts)
    penalty, said = (late.penalty(score), late.student_note(score)) if late is not None else (0, None)
    resources = {"nbgrader": {"notebook": assignment, "assignment": assignment, "score": score - penalty, "max_score": max_score,
                              "late_penalty": penalty, "late_reason": html.escape(said.text(language)) if said else ""}}
    mine = exporter()
    try:
        mine.deadline = time.monotonic() + RENDER_SECONDS
        page, _ = mine.from_notebook_node(nb, resources=resources)
    finally:
        _IDLE.put(mine)
    return page


def exporter():
    """A feedback exporter no other render is using, built when none is idle (give it back with _IDLE.put)."""
    try:
        return _IDLE.get(timeout=EXPORTER_WAIT if _BUILT[0] else 0)
    except queue.Empty:
        _BUILT[0] += 1
        return _exporter()


def _forget_exporters() -> None:
    """Drop the idle exporters (one in use is given back after its page, as before)."""
    while True:
        try:
            _IDLE.get_nowait()
        except queue.Empty:
            break
    _BUILT[0] = 0


caches.register("_IDLE", "nothing (a pool of idle exporters)", "an exporter is built from our templates and nbconvert's, "
                "fixed while grading; a render takes one no other render is using", _forget_exporters)


def warm() -> None:
    """Render a small page once: what a render imports is imported now, before worker threads start."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("*x*"), nbformat.v4.new_code_cell(
        "x = 1", outputs=[nbformat.v4.new_output("stream", name="stdout", text="x\n")])])
    render(nb, "warm", [])


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


def redact(nb, shown: dict[str, str], hidden: list[str]) -> None:
    """Test cells lose their hidden region; their outputs become `shown[test grade_id]`, the sandboxed verdict as
    i18n.feedback_texts writes it in the page's language."""
    for cell in nb.cells:
        gid = editions.grade_id(cell)
        if gid in shown:
            cell.source = editions.strip_hidden(cell.source)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=shown[gid])]
            # The guard reads the source only: the verdict is built from scenario data, whose failing case is
            # shown on purpose and may coincide with a line of a hidden test (a bare constructor call, say).
            leaked = [line for line in hidden if line in cell.source]
            if leaked:  # a bug of ours, never the student's: stop before anything is rendered
                raise RuntimeError(f"redaction failed, {gid} would show hidden test code: {leaked[0]!r}")


def visible_text(page: str) -> str:
    """What a reader of an HTML page sees: tags (syntax highlighting) removed, entities decoded."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", page))
