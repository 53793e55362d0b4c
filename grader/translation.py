"""Other-language editions from one master: a catalogue beside it, keyed by cell, checked for drift.

grader/assignments/<name>/<lang>.yml maps each cell key (grade_id, or the `key` in the cell's jupytext
header) to the translated markdown, or to the translated string literals of a code cell, together with
`en`, a fingerprint of the English it was translated from. A code cell's entry may also translate its comments
(`comments`, pairs of the text after `# `, a run of whole-line comments as one multi-line text), fingerprinted
apart in `en_comments` so that the strings' `en` stays as it was. Code never changes, only strings and comments.
"""
from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from pathlib import Path

import yaml

from .paths import assignment_dir

LANGUAGES = ("en", "zh")
TRANSLATED = ("zh",)


class TranslationError(ValueError):
    """A catalogue is missing a cell, is stale, or does not match the master's code."""


def cell_key(cell) -> str | None:
    """The stable key of a master cell: its grade_id, else the `key` of its header metadata."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or cell.get("metadata", {}).get("key")


def catalogue_path(name: str, language: str) -> Path:
    return assignment_dir(name) / f"{language}.yml"


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


def comment_blocks(source: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, text, indent) of each comment a translator may rewrite: a run of whole-line `# ` comments
    at one column (indent: the whitespace before them), or one trailing comment (indent None). Markers such as
    `### BEGIN SOLUTION` and magics are not comments to translate."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    blocks, last = [], None  # last: (row, col) of the previous whole-line comment of the open block
    for tok in tokenize.generate_tokens(io.StringIO(_code_lines(source)).readline):
        if tok.type != tokenize.COMMENT or not (tok.string == "#" or tok.string.startswith("# ")):
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                last = None
            continue
        (row, col), text = tok.start, tok.string[2:]
        start, end = offsets[row - 1] + col, offsets[row - 1] + tok.end[1]
        whole_line = not lines[row - 1][:col].strip()
        if whole_line and last == (row - 1, col):
            s, _, joined, indent = blocks[-1]
            blocks[-1] = (s, end, joined + "\n" + text, indent)
        else:
            blocks.append((start, end, text, lines[row - 1][:col] if whole_line else None))
        last = (row, col) if whole_line else None
    return blocks


def comments_fingerprint(cell) -> str:
    """What a comment translation depends on: the text of a code cell's comments (see comment_blocks)."""
    text = "\x00".join(text for _, _, text, _ in comment_blocks(cell.source))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _replace_comments(source: str, comments: dict[str, str], key: str) -> str:
    """Rewrite the comment blocks found in `comments`, each line `# `-prefixed at the block's indentation."""
    found, edits = set(), []
    for start, end, text, indent in comment_blocks(source):
        if text not in comments:
            continue
        new = comments[text].rstrip("\n").split("\n")
        if indent is None and len(new) > 1:
            raise TranslationError(f"cell {key!r}: a trailing comment must stay on one line: {new[0][:80]}")
        edits.append((start, end, ("\n" + (indent or "")).join(f"# {line}".rstrip() for line in new)))
        found.add(text)
    unused = [c for c in comments if c not in found]
    if unused:
        raise TranslationError(f"cell {key!r}: translated comment not in the master cell: {unused[0][:80]}")
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    return source


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
    """Raise unless `entry` exists and was translated from this cell's current English. A code cell with no string
    literals has nothing a translation depends on: it needs no entry (a set-up cell left as the template wrote it,
    `setup_imports:` with nothing under it), unless the entry translates its comments."""
    if not entry and cell.cell_type == "code" and not string_tokens(cell.source):
        return
    if entry is None:
        raise TranslationError(f"cell {key!r} has no translation: add it to the catalogue")
    if "en" not in entry:
        raise TranslationError(f"cell {key!r}: no `en` fingerprint of the English it was translated from")
    if entry["en"] != fingerprint(cell):
        raise TranslationError(f"cell {key!r}: the English changed since it was translated "
                               f"(fingerprint {entry.get('en')} in the catalogue, {fingerprint(cell)} now); "
                               "update the translation, then its `en` fingerprint")
    if entry.get("comments") or "en_comments" in entry:
        now = comments_fingerprint(cell)
        if entry.get("en_comments") != now:
            raise TranslationError(f"cell {key!r}: the English comments changed since they were translated "
                                   f"(en_comments {entry.get('en_comments')} in the catalogue, {now} now); "
                                   "update the translated comments, then their `en_comments` fingerprint")


# A heading that ends in " |" takes the other language's heading as its subtitle ("## Step 1: ... | 第 1 节：..."),
# so the two editions' headings agree by construction; the first heading of each side pairs with the first.
SUBTITLED = re.compile(r"^(#+ )(.*?) \|[ \t]*$", re.M)
SHARED_PREFIX = re.compile(r"^(\S+(?: \d+)? · )")  # "01 · ", "TODO 3 · ": said once, before the title


def subtitled(own: str, other: str | None, key: str) -> str:
    """`own` markdown with each heading marked " |" followed by the matching heading of `other` (None: no other
    edition, the marks are dropped)."""
    mine = SUBTITLED.findall(own)
    theirs = None if other is None else [title for _, title in SUBTITLED.findall(other)]
    if theirs is not None and len(theirs) != len(mine):
        raise TranslationError(f"cell {key!r}: {len(mine)} heading(s) marked ' |' in one language, {len(theirs)} in the other")
    titles = iter(theirs or [])

    def fill(match):
        hashes, title = match.groups()
        if theirs is None:
            return hashes + title
        subtitle, prefix = next(titles), SHARED_PREFIX.match(title)
        if prefix and subtitle.startswith(prefix.group(1)):
            subtitle = subtitle[len(prefix.group(1)):]
        return f"{hashes}{title} | {subtitle}"

    return SUBTITLED.sub(fill, own)


def _subtitle_english(nb, name: str) -> None:
    """The English edition's headings, subtitled from the first translation (none: the marks are dropped)."""
    translated = languages(name)[1:]
    catalogue = load_catalogue(name, translated[0]) if translated else {}
    for cell in nb.cells:
        if cell.cell_type == "markdown" and SUBTITLED.search(cell.source):
            entry = catalogue.get(cell_key(cell))
            cell.source = subtitled(cell.source, entry["markdown"] if entry and "markdown" in entry else None, cell_key(cell))


def translate(nb, name: str, language: str, catalogue: dict | None = None):
    """The master `nb` in `language`, in place; every cell must have a current translation."""
    if language == "en":
        _subtitle_english(nb, name)
        return nb
    catalogue = load_catalogue(name, language) if catalogue is None else catalogue
    keys = [cell_key(cell) for cell in nb.cells]
    for index, (cell, key) in enumerate(zip(nb.cells, keys)):
        if key is None:
            raise TranslationError(f"{name}: cell {index} has no key (add key=\"...\" to its # %% header)")
        entry = catalogue.get(key)
        check_entry(cell, entry, key)
        entry = entry or {}   # a code cell with nothing to translate
        if cell.cell_type == "markdown":
            cell.source = subtitled(entry["markdown"].rstrip("\n"), cell.source, key)
        elif entry.get("strings"):
            strings = {pair["from"]: pair["to"] for pair in entry["strings"]}
            cell.source = _replace_strings(cell.source, strings, key)
        if cell.cell_type == "code" and entry.get("comments"):
            comments = {pair["from"]: pair["to"] for pair in entry["comments"]}
            cell.source = _replace_comments(cell.source, comments, key)
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


def title_problems(name: str, language: str) -> list[str]:
    """The notebook's title (its first `# ` heading) left as the English in `language`'s catalogue: equal to the
    English title, or with no character of the language (make new-assignment scaffolds it from the English name)."""
    import jupytext

    from .paths import master_path

    nb, catalogue = jupytext.read(master_path(name)), load_catalogue(name, language)
    first = next((c for c in nb.cells if c.cell_type == "markdown" and re.search(r"^# ", c.source, re.M)), None)
    if first is None:
        return []
    english = re.search(r"^# (.+)$", first.source, re.M).group(1).strip().rstrip("|").strip()
    found = re.search(r"^# (.+)$", ((catalogue.get(cell_key(first)) or {}).get("markdown") or ""), re.M)
    title = found.group(1).strip().rstrip("|").strip() if found else ""
    if title and (title == english or (language == "zh" and not re.search(r"[\u4e00-\u9fff]", title))):
        return [f"{cell_key(first)!r}: the title {title!r} is not translated (a {language} title is written in {language})"]
    return []


def _yaml_hex(value: str) -> str:
    """A hex fingerprint of digits only (or like 1e5) would load as a number: quote it then."""
    return value if yaml.safe_load(value) == value else f"'{value}'"


def stamp(name: str, language: str, keys: list[str]) -> None:
    """After updating the translation of `keys`, record the English they now match (a translator's step);
    an entry that translates comments gets its `en_comments` restamped too, on the line after `en`."""
    import jupytext

    from .paths import master_path

    cells = {cell_key(c): c for c in jupytext.read(master_path(name)).cells}
    path = catalogue_path(name, language)
    text = path.read_text(encoding="utf-8")
    entries, lines = (yaml.safe_load(text) or {}).get("cells", {}), text.split("\n")
    for key in keys:
        at = lines.index(f"  {key}:") if f"  {key}:" in lines else lines.index(f"  {key}: {{}}")
        lines[at] = f"  {key}:"
        value = _yaml_hex(fingerprint(cells[key]))
        if at + 1 < len(lines) and lines[at + 1].startswith("    en: "):
            lines[at + 1] = f"    en: {value}"
        else:
            lines.insert(at + 1, f"    en: {value}")
        if (entries.get(key) or {}).get("comments"):
            end = next((i for i in range(at + 1, len(lines)) if re.match(r"  \S", lines[i])), len(lines))
            lines[at + 2:end] = [line for line in lines[at + 2:end] if not line.startswith("    en_comments: ")]
            lines.insert(at + 2, f"    en_comments: {_yaml_hex(comments_fingerprint(cells[key]))}")
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """python -m grader.translation status [NAME ...] | stamp NAME LANG KEY ..."""
    import argparse

    from .paths import assignment_names

    parser = argparse.ArgumentParser(prog="python -m grader.translation",
                                     description="Whether each translation matches its English master, and recording that it does.")
    commands = parser.add_subparsers(dest="command", required=True)
    said = commands.add_parser("status", help="list each cell whose translation is missing or stale (exit 1 if any)")
    said.add_argument("names", nargs="*", metavar="NAME", help="assignments (default: every one)")
    stamped = commands.add_parser("stamp", help="after translating KEYs anew, record the English they now match")
    stamped.add_argument("name", metavar="NAME", help="e.g. 03_batch_scheduling")
    stamped.add_argument("language", metavar="LANG", help="e.g. zh")
    stamped.add_argument("keys", nargs="+", metavar="KEY", help="cell keys, e.g. md-explanations")
    args = parser.parse_args(argv)
    if args.command == "stamp":
        stamp(args.name, args.language, args.keys)
        return 0
    problems = [f"{name}.{lang}: {p}" for name in (args.names or assignment_names()) for lang in languages(name)[1:]
                for p in status(name, lang) + title_problems(name, lang)]
    print("\n".join(problems) or "every translation is current")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
