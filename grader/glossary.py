"""One Chinese term per concept (glossary.zh.yml): find the forbidden variants, and rewrite the mechanical ones.

python -m grader.glossary check                          every variant a zh student can read, or nothing
python -m grader.glossary fix [--skip-todo|--todo-only]  rewrite the Chinese side of the zh catalogues,
                                                         lab/i18n.py, grader/i18n.py, grader/messages.py and
                                                         the masters' glossaries

Only Chinese text is rewritten: the English a catalogue entry translates, and so its fingerprint, stay as they
are. After `fix`, run `make notebooks` so the generated editions follow.
"""
from __future__ import annotations

import ast
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import caches
from .paths import NOTEBOOKS_DIR, ROOT, SOLUTIONS_DIR, assignment_dir, assignment_names, master_path

GLOSSARY = Path(__file__).with_name("glossary.zh.yml")
PY_CATALOGUES = (ROOT / "lab" / "i18n.py", ROOT / "grader" / "i18n.py", ROOT / "grader" / "messages.py",
                 *sorted((ROOT / "grader" / "assignments").glob("*/names_zh.py")))
HANZI = re.compile(r"[\u4e00-\u9fff]")
TODO_HEADING = re.compile(r"^### TODO \d", re.M)


@dataclass(frozen=True)
class Variant:
    term: str  # the English concept
    zh: str  # its one Chinese term
    pattern: re.Pattern
    why: str
    fix: str | None  # a re.sub replacement, or None when a human must rewrite it


@caches.cached("the glossary file's path", "the glossary is data of the checkout, read once per process")
def variants(path: Path = GLOSSARY) -> tuple[Variant, ...]:
    """The forbidden variants of the glossary, in the order their fixes apply."""
    terms = yaml.safe_load(path.read_text(encoding="utf-8"))["terms"]
    return tuple(Variant(t["en"], t["zh"], re.compile(v["pattern"], re.M), v["why"], v.get("fix"))
                 for t in terms for v in t["forbid"])


def sections(english: str | None) -> set[str]:
    """Numbers the English calls "Step N" (a notebook section) and never "step N" (an engine step)."""
    if not english:
        return set()
    return set(re.findall(r"\bStep (\d+)\b", english)) - set(re.findall(r"\bstep (\d+)\b", english))


def _quote(text: str, start: int, end: int) -> str:
    return "…" + text[max(0, start - 12):end + 12].replace("\n", " ") + "…"


def allowed(name: str) -> tuple[str, ...]:
    """The variants one assignment's zh text may use (its assignment.toml's zh_allowed, read once per process)."""
    from .assignment import load
    return load(name).declared.zh_allowed


def violations(text: str, english: str | None = None, allow: tuple[str, ...] = ()) -> list[str]:
    """Each forbidden variant in `text`, quoted with its reason; `english` (what it translates) adds section checks;
    `allow`: variants the text's assignment may use (allowed(name))."""
    found = [f"{_quote(text, *m.span())}: {m.group()!r}: {v.why}" for v in variants() for m in v.pattern.finditer(text)
             if m.group() not in allow]
    for n in sorted(sections(english)):
        found += [f"{_quote(text, *m.span())}: the English says Step {n}, a section: write 第 {n} 节"
                  for m in re.finditer(rf"第 {n} 步", text)]
    return found


def fix(text: str, english: str | None = None) -> str:
    """`text` with every mechanical variant replaced by the glossary's term."""
    for v in variants():
        if v.fix is not None:
            text = v.pattern.sub(v.fix, text)
    for n in sections(english):
        text = text.replace(f"第 {n} 步", f"第 {n} 节")
    return text


def _fix_line(line: str, english: str | None) -> str:
    """Fix one line of a block, leaving its indentation alone (so ^ in a pattern means the start of the text)."""
    indent = line[:len(line) - len(line.lstrip())]
    return indent + fix(line[len(indent):], english)


# --- the zh catalogues ------------------------------------------------------------------------------------

def _master_cells(name: str) -> list:
    import jupytext

    return jupytext.read(master_path(name)).cells


def todo_keys(name: str) -> set[str]:
    """The keys of the TODO sections: from each "### TODO k" heading cell through its `todok_tests` cell."""
    from .translation import cell_key

    keys, inside = set(), False
    for cell in _master_cells(name):
        key = cell_key(cell)
        inside = inside or (cell.cell_type == "markdown" and bool(TODO_HEADING.search(cell.source)))
        if inside:
            keys.add(key)
        if re.fullmatch(r"todo\d+_tests", key or ""):
            inside = False
    return keys


def catalogue_texts(name: str) -> list[tuple[str, str, str]]:
    """(key, Chinese text, the master cell's English) for every markdown, translated string and comment of a catalogue."""
    from .translation import cell_key, load_catalogue

    english = {cell_key(c): c.source for c in _master_cells(name)}
    found = []
    for key, entry in load_catalogue(name, "zh").items():
        pairs = [*(entry.get("strings") or []), *(entry.get("comments") or [])]
        texts = [entry["markdown"]] if "markdown" in entry else [pair["to"] for pair in pairs]
        found += [(key, text, english.get(key)) for text in texts]
    return found


def _selected(key: str, todo: set[str], scope: str) -> bool:
    return scope == "all" or (key in todo) == (scope == "todo")


def fix_catalogue(name: str, scope: str = "all") -> list[str]:
    """Rewrite the Chinese of `name`.zh.yml in place (scope: all, todo or rest); the keys it changed."""
    from .translation import catalogue_path, cell_key

    path = catalogue_path(name, "zh")
    english = {cell_key(c): c.source for c in _master_cells(name)}
    todo = todo_keys(name)
    before = yaml.safe_load(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join(_fixed_lines(path.read_text(encoding="utf-8").split("\n"), english, todo, scope))
    after = yaml.safe_load(text)["cells"]
    _same_but_fixed(before, after, {k: english.get(k) if _selected(k, todo, scope) else False for k in before})
    path.write_text(text, encoding="utf-8")
    return [k for k in before if before[k] != after[k]]


def _fixed_lines(lines: list[str], english: dict[str, str], todo: set[str], scope: str) -> list[str]:
    """The catalogue's lines with fix() applied to the Chinese (markdown and to, inline or block) of the selected keys."""
    key, field, indent, block = None, None, 0, False
    for i, line in enumerate(lines):
        depth = len(line) - len(line.lstrip(" "))
        if block and (not line.strip() or depth > indent):  # a line of a block scalar
            if field in ("markdown", "to") and _selected(key, todo, scope):
                lines[i] = _fix_line(line, english.get(key))
            continue
        if m := re.match(r"^  ([\w-]+):", line):
            key, field, block = m[1], None, False
        elif m := re.match(r"^(\s*(?:- )?)(\w+):(?: (.*))?$", line):
            field, indent, value = m[2], len(m[1]), m[3] or ""
            block = value.startswith(("|", ">"))
            if not block and field in ("markdown", "to") and _selected(key, todo, scope):
                lines[i] = m[1] + field + ": " + fix(value, english.get(key))
    return lines


def _same_but_fixed(before: dict, after: dict, english: dict) -> None:
    """Raise unless `after` is `before` with fix() applied to the Chinese of the selected keys only."""
    def expect(text, key):
        return text if english[key] is False else fix(text, english[key])

    assert list(before) == list(after), "the fixer changed the catalogue's keys"
    for key, old in before.items():
        new = dict(old)
        if "markdown" in old:
            new["markdown"] = expect(old["markdown"], key)
        for field in ("strings", "comments"):
            if old.get(field):
                new[field] = [{**pair, "to": expect(pair["to"], key)} for pair in old[field]]
        assert after[key] == new, f"the fixer changed more than the Chinese of {key!r}"


# --- lab/i18n.py, grader/i18n.py, grader/messages.py and the masters' glossaries -------------------------

def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def python_strings(source: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, literal, key or None) of every string token holding Chinese; the key is the string key of the
    dict entry the token is (part of) the value of. In lab/i18n.py and the names_zh.py files that key is the English
    it translates, so violations() also checks "Step n" against it; in grader/messages.py and grader/i18n.py it is a
    catalogue key ("file_too_large"), which says no Step, so only the glossary's variants are checked there."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(row, col):
        return offsets[row - 1] + col

    spans = []  # the span of each dict value that has a string key
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    spans.append((at(v.lineno, _char_col(lines[v.lineno - 1], v.col_offset)),
                                  at(v.end_lineno, _char_col(lines[v.end_lineno - 1], v.end_col_offset)), k.value))
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in kinds and HANZI.search(tok.string):
            start, end = at(*tok.start), at(*tok.end)
            key = next((k for s, e, k in spans if s <= start < e), None)
            found.append((start, end, tok.string, key))
    return found


def fix_python(path: Path) -> int:
    """Rewrite the Chinese string literals of a catalogue module in place; how many changed."""
    source = path.read_text(encoding="utf-8")
    edits = [(s, e, fix(text, key)) for s, e, text, key in python_strings(source) if fix(text, key) != text]
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    ast.parse(source)  # still Python
    path.write_text(source, encoding="utf-8")
    return len(edits)


def master_glossary_lines(name: str) -> list[tuple[int, str]]:
    """(index, line) of the Chinese lines of a master's md-glossary cell (its Chinese columns)."""
    lines = master_path(name).read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("# %%") and 'key="md-glossary"' in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%"))
    return [(i, lines[i]) for i in range(start + 1, end) if HANZI.search(lines[i])]


def fix_master_glossary(name: str) -> bool:
    """Fix the Chinese columns of a master's glossary; restamp its zh entry if it was current before."""
    from .translation import stamp, status

    path = master_path(name)
    lines = path.read_text(encoding="utf-8").split("\n")
    changed = {i: fix(line) for i, line in master_glossary_lines(name) if fix(line) != line}
    if not changed:
        return False
    was_current = not any("'md-glossary'" in p for p in status(name, "zh"))
    for i, line in changed.items():
        lines[i] = line
    path.write_text("\n".join(lines), encoding="utf-8")
    if was_current:
        stamp(name, "zh", ["md-glossary"])
    return True


# --- what a zh student reads --------------------------------------------------------------------------------

def notebook_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) of every markdown cell and printed output of a generated notebook."""
    found = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            found.append((f"cell {index}", source))
        for output in cell.get("outputs", []):
            texts = [output.get("text", ""), output.get("evalue", "")]
            texts += [output.get("data", {}).get(kind, "") for kind in ("text/plain", "text/html", "text/markdown")]
            found += [(f"cell {index} output", "".join(t) if isinstance(t, list) else t) for t in texts if t]
    return found


def zh_notebooks() -> list[Path]:
    return sorted([*(NOTEBOOKS_DIR / "zh").glob("*.ipynb"), *(SOLUTIONS_DIR / "zh").glob("*.ipynb")])


def zh_names() -> list[str]:
    return [name for name in assignment_names() if (assignment_dir(name) / "zh.yml").exists()]


def promise_lines(name: str) -> list[tuple[int, str]]:
    """The Chinese quotes of an assignment's promises file (grader/promises.py), as (line index, line)."""
    path = assignment_dir(name) / "promises.yml"
    lines, found, zh = path.read_text(encoding="utf-8").splitlines() if path.exists() else [], [], False
    for i, line in enumerate(lines):
        if line.strip().endswith(":") and not line.lstrip().startswith("-"):
            zh = line.strip() == "zh:"
        elif zh:
            found.append((i, line))
    return found


def fix_promises(name: str) -> int:
    """Apply the fixes to the Chinese quotes, so that they still match the fixed editions."""
    path = assignment_dir(name) / "promises.yml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True) if path.exists() else []
    changed = 0
    for i, _ in promise_lines(name):
        fixed = fix(lines[i])
        changed += fixed != lines[i]
        lines[i] = fixed
    if changed:
        path.write_text("".join(lines), encoding="utf-8")
    return changed


def mistakes_problems(name: str) -> list[str]:
    """Forbidden variants in the Chinese of <name>/mistakes.yml (grader/diagnose.py checks the rest of the file)."""
    path = assignment_dir(name) / "mistakes.yml"
    said = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    return [f"{mutant}: zh {part}: {v}" for mutant, entry in said.items() if isinstance(entry, dict)
            for part, text in (entry.get("zh") or {}).items() if isinstance(text, str) for v in violations(text, allow=allowed(name))]


def check_all(notebooks: bool = True) -> list[str]:
    """Every forbidden variant in the catalogues, the masters' glossaries and (optionally) the zh notebooks."""
    found = []
    for name in zh_names():
        found += _assignment_problems(name)
    for path in PY_CATALOGUES:
        found += [f"{path.relative_to(ROOT)}: {v}" for _, _, text, key in python_strings(path.read_text(encoding="utf-8"))
                  for v in violations(text, key)]
    for path in zh_notebooks() if notebooks else []:
        ok = allowed(path.stem) if path.stem in assignment_names() else ()
        found += [f"{path.relative_to(ROOT)} {where}: {v}" for where, text in notebook_texts(path) for v in violations(text, allow=ok)]
    return found


def _assignment_problems(name: str) -> list[str]:
    """Every forbidden variant in one assignment's catalogue, master glossary, promises and mistakes."""
    ok = allowed(name)
    return ([f"{name}.zh.yml [{key}]: {v}" for key, text, en in catalogue_texts(name) for v in violations(text, en, ok)]
            + [f"{name}.py glossary line {i + 1}: {v}" for i, line in master_glossary_lines(name) for v in violations(line, allow=ok)]
            + [f"{name}.promises.yml line {i + 1}: {v}" for i, line in promise_lines(name) for v in violations(line, allow=ok)]
            + [f"{name}/mistakes.yml: {p}" for p in mistakes_problems(name)])


def main(argv: list[str] | None = None) -> int:
    """python -m grader.glossary check | fix [--skip-todo | --todo-only]"""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["fix"]:
        scope = {"--skip-todo": "rest", "--todo-only": "todo"}.get(args[1] if len(args) > 1 else "", "all")
        for name in zh_names():
            keys = fix_catalogue(name, scope)
            print(f"{name}.zh.yml: {len(keys)} entries rewritten{': ' + ', '.join(keys) if keys else ''}")
            if scope != "todo" and fix_master_glossary(name):
                print(f"{name}.py: glossary fixed")
            if scope != "rest":
                print(f"{name}.promises.yml: {fix_promises(name)} quotes rewritten")
        for path in PY_CATALOGUES if scope != "todo" else ():
            print(f"{path.relative_to(ROOT)}: {fix_python(path)} strings rewritten")
        print("then: make notebooks")
    elif args[:1] != ["check"]:
        print(main.__doc__)
        return 2
    left = check_all(notebooks=args[:1] == ["check"])
    print("\n".join(left) or "no forbidden variant")
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main())
