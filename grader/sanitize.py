"""Make a feedback page inert: nothing a student wrote can run in the instructor's browser.

Two steps. Before rendering, the executed notebook keeps only plain outputs (text, PNG/JPEG
images), each capped, and its Markdown is cleaned with bleach (an allow-list of tags and
attributes). After rendering, the page loses every <script>, gains a Content-Security-Policy that
forbids scripts and remote loads, and is audited: an event handler, a script or a javascript: URL
anywhere means the page is refused (the caller falls back to a plain page), as does a page over
the byte cap.
"""
from __future__ import annotations

import re
import time
from html.parser import HTMLParser

import bleach
import nbformat

from .config import DEFAULTS

TEXT_CAP = 20_000             # characters of one text output
IMAGE_CAP = 2 << 20           # bytes (base64) of one image
SOURCES_CAP = 2 << 20         # characters of Markdown, and of code, on one page (both cost time per character)
NOT_SHOWN = f"[not shown: a page shows {SOURCES_CAP >> 20} MiB of cell sources at most]"
KEPT_MIMES = ("text/plain", "image/png", "image/jpeg")
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
       "base-uri 'none'; form-action 'none'")
MARKDOWN_TAGS = {"a", "abbr", "b", "blockquote", "del", "br", "code", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6",
                 "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table", "tbody",
                 "td", "th", "thead", "tr", "ul"}
MARKDOWN_ATTRS = {"a": ["href", "title"], "td": ["colspan", "rowspan"], "th": ["colspan", "rowspan"]}


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def clean_output(output: dict) -> dict:
    """One output, reduced to inert plain data."""
    kind = output.get("output_type")
    if kind == "stream":
        return {"output_type": "stream", "name": output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout",
                "text": _cap(_text(output.get("text", "")), TEXT_CAP)}
    if kind == "error":
        return {"output_type": "error", "ename": _cap(str(output.get("ename", "")), 200),
                "evalue": _cap(str(output.get("evalue", "")), 2000),
                "traceback": [_cap(str(line), 2000) for line in list(output.get("traceback", []))[:60]]}
    data = output.get("data", {}) if isinstance(output.get("data"), dict) else {}
    kept = {}
    for mime in KEPT_MIMES:
        value = _text(data.get(mime, ""))
        if not value:
            continue
        if mime == "text/plain":
            kept[mime] = _cap(value, TEXT_CAP)
        elif len(value) <= IMAGE_CAP and re.fullmatch(r"[A-Za-z0-9+/=\s]*", value):
            kept[mime] = value
    dropped = sorted(set(data) - set(kept))
    if not kept:
        kept = {"text/plain": f"[{', '.join(dropped) or 'empty output'} not shown on the feedback page]"}
    cleaned = {"output_type": "display_data", "data": kept, "metadata": {}}
    if kind == "execute_result":
        cleaned.update(output_type="execute_result", execution_count=output.get("execution_count"))
    return cleaned


def _text(value) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def clean_markdown(source: str) -> str:
    """A student's Markdown rendered here, its HTML reduced to an allow-list (disallowed tags shown as text)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return bleach.clean(markdown2html_mistune(source), tags=MARKDOWN_TAGS, attributes=MARKDOWN_ATTRS,
                        protocols=["http", "https", "mailto"], strip=False, strip_comments=True)


def clean_notebook(nb, trusted_markdown: frozenset[str] = frozenset(), clean_seconds: float = DEFAULTS.clean_seconds,
                   outputs_cap: int = DEFAULTS.outputs_cap) -> list[str]:
    """Reduce an executed notebook (in place) to inert content; returns notes on what was cut.

    Markdown cells whose source is in `trusted_markdown` (the release's own prose) are kept as written.
    Past `clean_seconds` (an honest notebook needs well under a second), the remaining cells keep neither outputs nor prose (a budget, so cleaning stays cheap).
    """
    notes, budget, prose, late = [], outputs_cap, SOURCES_CAP, False
    deadline = time.monotonic() + clean_seconds
    nb.metadata.pop("widgets", None)
    for index, cell in enumerate(nb.cells):
        if not late and time.monotonic() > deadline:
            late = True
            notes.append(f"cell {index} and later: no outputs or prose shown, cleaning the page took over {clean_seconds:g} s")
        cell.pop("attachments", None)
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if not re.fullmatch(r"[A-Za-z0-9_-]{0,64}", str(grade_id)):  # the page's table of contents prints it raw
            cell.metadata.pop("nbgrader")
        if cell.cell_type in ("markdown", "raw") and cell.source not in trusted_markdown:
            prose -= len(cell.source)
            cell.source = clean_markdown(cell.source) if prose >= 0 and not late else NOT_SHOWN
        if cell.cell_type == "raw":
            cell.cell_type = "markdown"
            cell.pop("outputs", None), cell.pop("execution_count", None)
        if cell.cell_type != "code":
            continue
        if late:
            cell.outputs = []
            continue
        outputs = []
        for output in cell.get("outputs", []):
            cleaned = clean_output(output)
            size = len(str(cleaned))
            if size > budget:
                notes.append(f"cell {index}: outputs beyond the page's {outputs_cap >> 20} MiB budget were not shown")
                break
            budget -= size
            outputs.append(nbformat.from_dict(cleaned))
        cell.outputs = outputs
    return notes


class _Audit(HTMLParser):
    """Finds anything in a page that could run: scripts, event handlers, script URLs, frames."""

    ACTIVE = {"script", "iframe", "frame", "object", "embed", "applet", "base", "form", "svg", "math", "link"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.ACTIVE:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = re.sub(r"[\s\x00-\x1f]", "", value or "").lower()
            if name.startswith("on") or name in ("srcdoc", "formaction", "xlink:href"):
                self.found.append(f"{tag}[{name}]")
            elif name in ("href", "src", "action", "data", "poster") and value.startswith(("javascript:", "vbscript:")):
                self.found.append(f"{tag}[{name}=script URL]")
            elif name == "src" and not value.startswith("data:image/"):
                self.found.append(f"{tag}[src=remote]")
            elif name == "http-equiv" and value == "refresh":
                self.found.append("meta refresh")

    handle_startendtag = handle_starttag


def clean_page(page: str, page_cap: int = DEFAULTS.page_cap) -> tuple[str | None, str]:
    """(the inert page, '') or (None, why it was refused: over `page_cap` bytes, or active content)."""
    page = re.sub(r"<script\b.*?</script\s*>", "", page, flags=re.S | re.I)
    page = re.sub(r"<link\b[^>]*>", "", page, flags=re.I)
    page = re.sub(r"<head\b[^>]*>", lambda m: m.group(0) + f'\n<meta http-equiv="Content-Security-Policy" content="{CSP}">',
                  page, count=1, flags=re.I)
    if "Content-Security-Policy" not in page:
        page = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n' + page
    size = len(page.encode("utf-8"))
    if size > page_cap:
        return None, f"the page would be {size >> 20} MiB, above the {page_cap >> 20} MiB cap"
    audit = _Audit()
    audit.feed(page)
    audit.close()
    if audit.found:
        return None, f"active content left on the page: {', '.join(sorted(set(audit.found))[:5])}"
    return page, ""
