"""Other-language editions from one master: a catalogue beside it, keyed by cell, checked for drift.

grader/assignments/<name>.<lang>.yml maps each cell key (grade_id, or the `key` in the cell's jupytext
header) to the translated markdown, or to the translated string literals of a code cell, together with
`en`, a fingerprint of the English it was translated from. Code never changes, only its strings.
"""
from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from pathlib import Path

import yaml

from .paths import ASSIGNMENTS_DIR

LANGUAGES = ("en", "zh")
TRANSLATED = ("zh",)


class TranslationError(ValueError):
    """A catalogue is missing a cell, is stale, or does not match the master's code."""


def cell_key(cell) -> str | None:
    """The stable key of a master cell: its grade_id, else the `key` of its header metadata."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or cell.get("metadata", {}).get("key")


def catalogue_path(name: str, language: str) -> Path:
    return ASSIGNMENTS_DIR / f"{name}.{language}.yml"


def languages(name: str) -> list[str]:
    """English, plus every language with a catalogue beside the master (not every assignment has one yet)."""
    return ["en", *(lang for lang in TRANSLATED if catalogue_path(name, lang).exists())]


def load_catalogue(name: str, language: str, path: Path | None = None) -> dict:
    """key -> entry of the catalogue; raises if the file is missing."""
    path = path or catalogue_path(name, language)
    if not path.exists():
        raise TranslationError(f"{path.name}: no {language} catalogue for {name}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return data.get("cells", {})


def _code_lines(source: str) -> str:
    """IPython magics (%matplotlib) become comments, so the tokenizer and ast can read the cell."""
    return re.sub(r"^([ \t]*)%", r"\1#%", source, flags=re.M)


def string_tokens(source: str) -> list[str]:
    """The string literals of a code cell, exactly as written (prefix and quotes included)."""
    tokens = tokenize.generate_tokens(io.StringIO(_code_lines(source)).readline)
    return [tok.string for tok in tokens if tok.type == tokenize.STRING]


def fingerprint(cell) -> str:
    """What a translation depends on: a markdown cell's text, or a code cell's string literals."""
    text = cell.source if cell.cell_type == "markdown" else "\x00".join(string_tokens(cell.source))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _replace_strings(source: str, strings: dict[str, str], key: str) -> str:
    """Replace string tokens found in `strings`, by position, leaving everything else byte for byte."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found, edits = set(), []
    for tok in tokenize.generate_tokens(io.StringIO(_code_lines(source)).readline):
        if tok.type == tokenize.STRING and tok.string in strings:
            start = offsets[tok.start[0] - 1] + tok.start[1]
            end = offsets[tok.end[0] - 1] + tok.end[1]
            edits.append((start, end, strings[tok.string]))
            found.add(tok.string)
    unused = [s for s in strings if s not in found]
    if unused:
        raise TranslationError(f"cell {key!r}: translated string not in the master cell: {unused[0][:80]}")
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    return source


def check_entry(cell, entry: dict | None, key: str) -> None:
    """Raise unless `entry` exists and was translated from this cell's current English."""
    if entry is None:
        raise TranslationError(f"cell {key!r} has no translation: add it to the catalogue")
    if "en" not in entry:
        raise TranslationError(f"cell {key!r}: no `en` fingerprint of the English it was translated from")
    if entry["en"] != fingerprint(cell):
        raise TranslationError(f"cell {key!r}: the English changed since it was translated "
                               f"(fingerprint {entry.get('en')} in the catalogue, {fingerprint(cell)} now); "
                               "update the translation, then its `en` fingerprint")


def translate(nb, name: str, language: str, catalogue: dict | None = None):
    """The master `nb` in `language`, in place; every cell must have a current translation."""
    if language == "en":
        return nb
    catalogue = load_catalogue(name, language) if catalogue is None else catalogue
    keys = [cell_key(cell) for cell in nb.cells]
    for index, (cell, key) in enumerate(zip(nb.cells, keys)):
        if key is None:
            raise TranslationError(f"{name}: cell {index} has no key (add key=\"...\" to its # %% header)")
        entry = catalogue.get(key)
        check_entry(cell, entry, key)
        if cell.cell_type == "markdown":
            cell.source = entry["markdown"].rstrip("\n")
        elif entry.get("strings"):
            strings = {pair["from"]: pair["to"] for pair in entry["strings"]}
            cell.source = _replace_strings(cell.source, strings, key)
    extra = sorted(set(catalogue) - set(keys))
    if extra:
        raise TranslationError(f"{name}.{language}: translations for cells the master no longer has: {', '.join(extra)}")
    nb.metadata["language_edition"] = language
    return nb


class _BlankStrings(ast.NodeTransformer):
    """Every str constant becomes ''; an f-string keeps only its expressions, in any order (word order differs)."""

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(""), node) if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):
        self.generic_visit(node)
        fields = [v for v in node.values if isinstance(v, ast.FormattedValue)]
        return ast.copy_location(ast.JoinedStr(sorted(fields, key=ast.dump)), node)


def code_shape(source: str) -> str:
    """The cell's AST with strings blanked and comments gone: what translation may not change."""
    tree = ast.parse(_code_lines(source))
    return ast.dump(_BlankStrings().visit(tree), include_attributes=False)


def same_code(english: str, other: str) -> bool:
    return code_shape(english) == code_shape(other)


def status(name: str, language: str) -> list[str]:
    """One line per cell whose translation is missing or stale (empty when the catalogue is current)."""
    import jupytext

    from .paths import master_path

    nb, catalogue = jupytext.read(master_path(name)), load_catalogue(name, language)
    problems = []
    for cell in nb.cells:
        try:
            check_entry(cell, catalogue.get(cell_key(cell)), cell_key(cell))
        except TranslationError as exc:
            problems.append(str(exc))
    return problems


def stamp(name: str, language: str, keys: list[str]) -> None:
    """After updating the translation of `keys`, record the English they now match (a translator's step)."""
    import jupytext

    from .paths import master_path

    current = {cell_key(c): fingerprint(c) for c in jupytext.read(master_path(name)).cells}
    path = catalogue_path(name, language)
    lines = path.read_text(encoding="utf-8").split("\n")
    for key in keys:
        at = lines.index(f"  {key}:") if f"  {key}:" in lines else lines.index(f"  {key}: {{}}")
        lines[at] = f"  {key}:"
        # a hex fingerprint of digits only (or like 1e5) would load as a number: quote it then
        value = current[key] if yaml.safe_load(current[key]) == current[key] else f"'{current[key]}'"
        if at + 1 < len(lines) and lines[at + 1].startswith("    en: "):
            lines[at + 1] = f"    en: {value}"
        else:
            lines.insert(at + 1, f"    en: {value}")
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """python -m grader.translation status [NAME ...] | stamp NAME LANG KEY ..."""
    import sys

    from .paths import assignment_names

    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["stamp"]:
        if len(args) < 4:
            print("usage: python -m grader.translation stamp NAME LANG KEY ...  (e.g. stamp 03_batch_scheduling zh md-explanations)")
            return 2
        stamp(args[1], args[2], args[3:])
        return 0
    problems = [f"{name}.{lang}: {p}" for name in (args[1:] or assignment_names()) for lang in languages(name)[1:]
                for p in status(name, lang)]
    print("\n".join(problems) or "every translation is current")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
