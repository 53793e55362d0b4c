"""Read a submitted notebook the way Jupyter does, and restore the layout grading needs.

JupyterLab, Notebook 7, Colab, VS Code and `nbformat.write` save each cell's source as a
list of lines; older tools save one string. Both are read with nbformat's own reader,
which joins the lines, so nothing downstream ever sees a list. The verdict depends on
the answer cells alone (found by grade_id); accidents of layout are repaired, with a
warning, so that they cost nothing.
"""
from __future__ import annotations

import copy
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import validator

from . import caches, editions, safe_io
from .messages import Message, Refusal

# Besides the file size (safe_io.MAX_SUBMISSION), counted before nbformat parses and validates, and we sanitise
# and render (work that grows with each): an honest notebook has a few hundred cells; 200,000 empty ones in an
# 8 MiB file once cost 143 s and 1.7 GiB.
MAX_CELLS = 2_000
MAX_OUTPUTS = 20_000
MAX_CONTAINERS = 500_000   # JSON objects and arrays, counted by their opening bytes before json parses them


class NotASubmission(Refusal):
    """The file cannot be graded as this assignment at all; its Message says why (str() is the English)."""


@dataclass
class Submission:
    """What grading needs from one file: the answers, a repaired notebook and what was repaired."""

    answers: dict[str, str]                 # answer grade_id -> source (the last copy, as the kernel saw it)
    notebook: nbformat.NotebookNode         # layout restored: every graded cell once, in release order
    warnings: list[Message] = field(default_factory=list)
    language: str = "en"                    # the edition it was filled in (feedback only; scores ignore it)


def parse(data: bytes) -> nbformat.NotebookNode:
    """Any nbformat 4.x file (lines or strings, BOM, CRLF, extra metadata) as a valid 4.5 notebook."""
    if len(data) > safe_io.MAX_SUBMISSION:
        raise NotASubmission("file_too_large", size=len(data) >> 20, limit=safe_io.MAX_SUBMISSION >> 20)
    if data.count(b"{") + data.count(b"[") > MAX_CONTAINERS:  # brackets inside strings count too: an upper bound
        raise NotASubmission("too_many_containers", limit=MAX_CONTAINERS)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotASubmission("not_utf8", why=exc.reason, at=exc.start) from None
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:   # JSONDecodeError, and an integer of more than 4300 digits
        raise NotASubmission("bad_json", error=str(exc)) from None
    if not isinstance(raw, dict) or raw.get("nbformat") != 4:
        found = raw.get("nbformat") if isinstance(raw, dict) else type(raw).__name__
        raise NotASubmission("not_nbformat_4", found=repr(str(found)[:40]))
    _check_counts(raw)
    try:
        with warnings.catch_warnings():  # missing cell ids are added below
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4, capture_validation_error={})  # joins line lists
        nb = _upgrade_minor(nb)
        _, repaired = validator.normalize(nb, relax_add_props=True, strip_invalid_metadata=True)
        nb = nbformat.from_dict(repaired)
        nbformat.validate(nb, relax_add_props=True)
    except Exception as exc:  # noqa: BLE001 - any schema problem is the student's to fix
        raise NotASubmission("invalid_notebook", error=str(exc).splitlines()[0][:200]) from None
    for cell in nb.cells:
        cell.source = cell.source.replace("\r\n", "\n").replace("\r", "\n")
    return nb


def _check_counts(raw: dict) -> None:
    """Refuse a notebook with more cells or outputs than grading will work through."""
    cells = raw.get("cells") if isinstance(raw.get("cells"), list) else []
    if len(cells) > MAX_CELLS:
        raise NotASubmission("too_many_cells", count=len(cells), limit=MAX_CELLS)
    outputs = sum(len(c["outputs"]) for c in cells if isinstance(c, dict) and isinstance(c.get("outputs"), list))
    if outputs > MAX_OUTPUTS:
        raise NotASubmission("too_many_outputs", count=outputs, limit=MAX_OUTPUTS)


def _upgrade_minor(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """4.0–4.4 files become 4.5: cell ids added (dropped first where an older minor had them)."""
    if nb.get("nbformat_minor", 0) < 5:
        for cell in nb.cells:
            cell.pop("id", None)
        nb = nbformat.v4.upgrade(nb, from_version=4, from_minor=nb.get("nbformat_minor", 0))
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):  # duplicated ids (a copied cell in some editors) are made unique
        if not isinstance(cell.get("id"), str) or cell["id"] in seen:
            cell["id"] = f"cell-{index}"
        seen.add(cell["id"])
    return nb


def read(path: Path) -> nbformat.NotebookNode:
    """parse() a file, refusing links and anything that is not a regular file (checked on the open file)."""
    try:
        return parse(safe_io.read_regular(path))
    except safe_io.Refused as exc:
        raise NotASubmission(exc.message.key, **exc.message.params) from None


@caches.cached("an Assignment (by identity)", "its released editions are read once per Assignment (Assignment.release)")
def _release_cells(assignment) -> tuple[frozenset[str], ...]:
    """Distinctive sources of each released edition of an Assignment (code and prose)."""
    return tuple(frozenset(c.source.strip() for c in assignment.release(lang).cells if len(c.source.strip()) >= 40)
                 for lang in assignment.languages)


def language_of(nb, assignment) -> str:
    """The edition `nb` was filled in: the mark the build gives every non-English edition (notebook metadata, kept by
    Jupyter), else the released edition it shares the most cells with (English on a tie). Not cells alone: a notebook
    fetched before an edition's prose was reworded shares little of it (01's zh corpus read as English)."""
    said = nb.metadata.get("language_edition")
    if said in assignment.languages:
        return said
    mine = {c.source.strip() for c in nb.cells}
    scores = {language: len(mine & cells) for language, cells in zip(assignment.languages, _release_cells(assignment))}
    return max(assignment.languages, key=lambda language: (scores[language], language == "en"))


def refusal_language(nb, assignments: list) -> str:
    """The language a refusal of `nb` is worded in: that of the released edition, among those of all `assignments`,
    that `nb` shares the most cells with; "" (each language) when none shares a cell or two languages tie. The
    build's mark comes first, as in language_of."""
    said = nb.metadata.get("language_edition")
    if any(said in assignment.languages for assignment in assignments):
        return said
    mine = {c.source.strip() for c in nb.cells}
    scores: dict[str, int] = {}
    for assignment in assignments:
        for language, cells in zip(assignment.languages, _release_cells(assignment)):
            scores[language] = max(scores.get(language, 0), len(mine & cells))
    best = max(scores.values(), default=0)
    found = [language for language, score in scores.items() if score == best]
    return found[0] if best and len(found) == 1 else ""


def resemblance(nb, assignment) -> int:
    """How many released cells of the Assignment appear verbatim in `nb` (best edition)."""
    mine = {c.source.strip() for c in nb.cells}
    return max((len(mine & cells) for cells in _release_cells(assignment)), default=0)


def identify(nb, assignment, others: list) -> None:
    """Raise unless `nb` is a notebook of the Assignment rather than of one of the `others` (grade_ids are shared)."""
    if not editions.cells_by_grade_id(nb):
        raise NotASubmission("no_graded_cells", assignment=assignment.name)
    ours = resemblance(nb, assignment)
    best = max(others, key=lambda o: resemblance(nb, o), default=None)
    if best is not None and resemblance(nb, best) > ours:
        raise NotASubmission("other_assignment", found=best.name, assignment=assignment.name)
    if ours == 0:
        raise NotASubmission("no_given_cells", assignment=assignment.name)


def repair_metadata(nb, release: nbformat.NotebookNode) -> list[Message]:
    """nbgrader metadata only where the release has it, as it has it, once per grade_id (in place); the warnings.

    Stock nbgrader's checks raise on a scratch cell with nbgrader metadata of its own (no schema_version, an
    unknown grade_id), which would stop `nbgrader autograde` for every later student; here it costs nothing.
    Of a duplicated graded cell the last copy keeps its metadata, as the kernel ran it last."""
    released = {gid: cells[0].metadata["nbgrader"] for gid, cells in editions.cells_by_grade_id(release).items()}
    answer_ids, foreign, warnings = editions.answer_ids(release), 0, []
    for cell in nb.cells:
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        gid = editions.grade_id(cell)
        if gid not in released:
            foreign += 1
            _unmark(cell)
        elif cell.metadata["nbgrader"] != released[gid]:
            cell.metadata["nbgrader"] = copy.deepcopy(released[gid])
            warnings.append(Message("metadata_changed", {"gid": gid}))
    if foreign:
        warnings.append(Message("foreign_metadata", {"count": foreign}))
    for gid, cells in editions.cells_by_grade_id(nb).items():
        if len(cells) > 1:
            warnings.append(Message("answer_repeated" if gid in answer_ids else "cell_repeated", {"gid": gid, "count": len(cells)}))
            for extra in cells[:-1]:  # still run in place, but no longer graded
                _unmark(extra)
    return warnings


def _unmark(cell) -> None:
    for key in ("nbgrader", "deletable", "editable"):
        cell.metadata.pop(key, None)


def answers_of(nb, answer_ids: list[str]) -> dict[str, str]:
    """The last copy of each answer cell, as the kernel ran it last."""
    return {gid: cells[-1].source for gid, cells in editions.cells_by_grade_id(nb).items() if gid in answer_ids}


def prepare(nb, release: nbformat.NotebookNode, answer_ids: list[str]) -> Submission:
    """The answers, and a notebook in which every graded cell of the release appears exactly once."""
    warnings = repair_metadata(nb, release)
    found = editions.cells_by_grade_id(nb)
    released = editions.cells_by_grade_id(release)
    answers = answers_of(nb, answer_ids)  # repaired: only the last copy of each is still marked
    for gid, cells in found.items():
        if gid not in answer_ids and _edited(cells[0], released[gid][0]):
            warnings.append(Message("cell_edited", {"gid": gid}))
    for gid in released:
        if gid not in found:
            warnings.append(Message("answer_deleted" if gid in answer_ids else "cell_deleted", {"gid": gid}))
    notebook = _restore(nb, release)
    notebook.metadata["kernelspec"] = copy.deepcopy(release.metadata.get("kernelspec", {}))
    return Submission(answers, notebook, warnings)


def _edited(cell, original) -> bool:
    return cell.source.strip() != original.source.strip()


def _restore(nb, release) -> nbformat.NotebookNode:
    """A copy of `nb` with each missing graded cell of the release put back after its release predecessor."""
    out = copy.deepcopy(nb)
    present = set(editions.cells_by_grade_id(out))
    previous: str | None = None
    for cell in release.cells:
        gid = editions.grade_id(cell)
        if not gid:
            continue
        if gid not in present:
            at = _index_after(out, previous)
            restored = copy.deepcopy(cell)
            restored["id"] = f"restored-{gid}"
            out.cells.insert(at, restored)
            present.add(gid)
        previous = gid
    return out


def _index_after(nb, gid: str | None) -> int:
    """Index just after the (last) cell carrying `gid`, or 0."""
    if gid is None:
        return 0
    positions = [i for i, c in enumerate(nb.cells) if editions.grade_id(c) == gid]
    return positions[-1] + 1 if positions else len(nb.cells)
