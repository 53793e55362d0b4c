"""The generated sections of docs/: each sits between markers, is written here, and is never edited by hand.

    python -m grader.docs layout      # docs/architecture.md's module list, from the modules' docstrings
    python -m grader.docs settings    # docs/instructors.md's table of settings, from grader/config.py
    python -m grader.docs deadline    # docs/instructors.md's table of course.toml's [deadline], from grader/deadline.py
    python -m grader.docs caches      # docs/architecture.md's table of the grader's caches, from grader/caches.py
    python -m grader.docs             # all of them
    python -m grader.docs check       # exit 1, naming each section, if one is not what it would be written as

A section is `<!-- NAME: ... -->`, the generated text, `<!-- /NAME -->`; what lies outside the markers is prose.
tests/grader/test_docs.py checks every section against what this module writes.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lab", "grader", "policybench")
# Assignment folders: their files are an assignment's parts (master, suite, driver, ...), listed in docs/authoring.md.
NOT_MODULES = ("grader/assignments/", "grader/assignment_template/")


def modules() -> list[str]:
    """Every module of the packages, as a path from the repository's root, in order."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "__pycache__" not in path.parts and not rel.startswith(NOT_MODULES):
                found.append(rel)
    return found


def _first_sentence(text: str) -> str:
    paragraph = " ".join(line.strip() for line in text.strip().split("\n\n")[0].splitlines())
    end = re.search(r"[.!?](?=\s+[A-Z`])", paragraph)
    return paragraph[:end.end()] if end else paragraph


def summary(path: Path) -> str:
    """The first sentence of a module's docstring; a file sent as text to a sandbox has none, so its leading comment."""
    source = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source))
    if doc:
        return _first_sentence(doc)
    comment = []
    for line in source.splitlines():
        if not line.startswith("#") or line.strip() == "#":
            break
        comment.append(line.lstrip("#").strip())
    return _first_sentence("\n".join(comment))


def layout() -> str:
    """The module list: one row per module, its first sentence, which a module without one leaves empty."""
    rows = ["| module | what it is |", "|---|---|"]
    for rel in modules():
        rows.append(f"| `{rel}` | {summary(ROOT / rel).replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def settings() -> str:
    from grader import config
    return config.markdown_table()


def deadline() -> str:
    """course.toml's [deadline] settings: one row per key of grader/deadline.py's KEYS, with its default."""
    from grader.deadline import DEFAULTS, KEYS
    rows = ["| `[deadline]` key | default | meaning |", "|---|---|---|"]
    rows += [f"| `{name}` | {DEFAULTS.get(name, '')} | {meaning} |" for name, meaning in KEYS.items()]
    return "\n".join(rows)


def caches() -> str:
    """The caches a grading process keeps: grader/caches.py's describe(), one row per registered cache."""
    from grader import caches
    return caches.markdown()


SECTIONS = {  # name: (the file that holds it, what writes it)
    "layout": ("docs/architecture.md", layout),
    "caches": ("docs/architecture.md", caches),
    "settings": ("docs/instructors.md", settings),
    "deadline": ("docs/instructors.md", deadline),
}


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:[^\n]*-->\n)(.*?)(\n<!-- /{name} -->)", re.S)


def section(text: str, name: str) -> str | None:
    """The text between a section's markers, None if they are missing."""
    found = _pattern(name).search(text)
    return found[2] if found else None


def section_problems(name: str, text: str) -> list[str]:
    """How the section `name` of `text` (its file's content) differs from what would be written, row by row."""
    file, make = SECTIONS[name]
    current = section(text, name)
    if current is None:
        return [f"{file}: no <!-- {name}: ... --> ... <!-- /{name} --> markers"]
    ours, theirs = make().splitlines(), current.splitlines()
    found = [f"{file}: not generated: {line}" for line in theirs if line not in ours]
    found += [f"{file}: missing: {line}" for line in ours if line not in theirs]
    if not found and current != make():
        found.append(f"{file}: the {name} section's rows are out of order")
    return found + ([f"  run `python -m grader.docs {name}`"] if found else [])


def problems() -> list[str]:
    """Every generated section that is not what would be written, and every module without a summary."""
    found = [p for name, (file, _) in SECTIONS.items() for p in section_problems(name, (ROOT / file).read_text(encoding="utf-8"))]
    return found + [f"{rel}: no docstring (or leading comment) to list it by" for rel in modules() if not summary(ROOT / rel)]


def write(name: str) -> bool:
    """Rewrite one section in place; True if it changed."""
    file, make = SECTIONS[name]
    path = ROOT / file
    text = path.read_text(encoding="utf-8")
    if section(text, name) is None:
        raise SystemExit(section_problems(name, text)[0])
    new = _pattern(name).sub(lambda m: m[1] + make() + m[3], text, count=1)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    if argv == ["check"]:
        found = problems()
        for problem in found:
            print(problem, file=sys.stderr)
        return 1 if found else 0
    for name in argv or list(SECTIONS):
        if name not in SECTIONS:
            print(f"unknown section {name!r}: {', '.join(SECTIONS)}, or check", file=sys.stderr)
            return 2
        print(f"{SECTIONS[name][0]}: {name} {'rewritten' if write(name) else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
