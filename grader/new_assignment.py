"""`make new-assignment NAME=<name>`: a working two-TODO assignment in grader/assignments/<name>/, from a template.

    python -m grader.new_assignment 04_token_budget [--title "Token Budget"]

It copies grader/assignment_template/ (master, zh catalogue, promises, suite, driver, cases, assignment.toml, one mutant per
TODO with its mistake and hint in mistakes.yml, names_zh, one correct alternative), puts the name in, and records the zh
catalogue's fingerprints. Then it writes a starter corpus: it builds the new student editions (in a temporary folder)
and saves the template's corpus.yml answers into them as a student's Jupyter would, corpus/<entry>.ipynb.
`make notebooks ASSIGNMENTS=<name>` then builds its editions and `make check-assignment NAME=<name>` says what it lacks.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import tempfile
from pathlib import Path

import nbformat
import yaml

from . import editions, translation
from .paths import ASSIGNMENTS_DIR, MASTER

TEMPLATE = Path(__file__).with_name("assignment_template")
CORPUS = "corpus.yml"   # the template's starter corpus: {entry ending in -<language>: {grade_id: answer source}}; not copied
NAME_RE = re.compile(r"(\d\d)_([a-z][a-z0-9]*(?:_[a-z0-9]+)*)")


def create(name: str, title: str | None = None) -> Path:
    """The new assignment's folder, filled from the template; refuses a bad or taken name."""
    match = NAME_RE.fullmatch(name)
    if not match:
        raise SystemExit(f"error: {name!r} is not an assignment name: two digits, an underscore, lower-case words "
                         "joined by underscores (e.g. 04_token_budget)")
    folder = ASSIGNMENTS_DIR / name
    if folder.exists():
        raise SystemExit(f"error: {folder} already exists")
    title = title or match.group(2).replace("_", " ").title()
    fields = {"__NAME__": name, "__NUMBER__": match.group(1), "__TITLE__": title}
    for source in sorted(TEMPLATE.rglob("*")):
        if source.is_dir() or "__pycache__" in source.parts or source == TEMPLATE / CORPUS:
            continue
        target = folder / source.relative_to(TEMPLATE)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        for key, value in fields.items():
            text = text.replace(key, value)
        target.write_text(text, encoding="utf-8")
    for language in translation.TRANSLATED:  # the template's translations match its English: record that
        if (folder / f"{language}.yml").exists():
            keys = list((yaml.safe_load((folder / f"{language}.yml").read_text(encoding="utf-8")) or {})["cells"])
            translation.stamp(name, language, keys)
    assert (folder / MASTER).is_file()
    write_corpus(name, folder / "corpus", yaml.safe_load((TEMPLATE / CORPUS).read_text(encoding="utf-8")))
    return folder


def write_corpus(name: str, corpus: Path, entries: dict[str, dict[str, str]]) -> list[Path]:
    """Each entry's answers typed into the new student edition of its language (the entry name's last word) and
    saved as Jupyter saves (nbformat 4.5, cell ids, nbformat.write): corpus/<entry>.ipynb."""
    from .build import build_release   # nbgrader's generate_assignment, as `make notebooks` runs it

    languages = sorted({entry.rsplit("-", 1)[-1] for entry in entries})
    written = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        for language in languages:
            build_release([name], Path(tmp) / language, Path(tmp) / f"course-{language}", language)
        for entry, answers in entries.items():
            release = nbformat.read(Path(tmp) / entry.rsplit("-", 1)[-1] / f"{name}.ipynb", as_version=4)
            nb = nbformat.v4.upgrade(release, from_version=4, from_minor=release.nbformat_minor)
            unknown = set(answers) - {editions.grade_id(cell) for cell in nb.cells}
            if unknown:
                raise SystemExit(f"error: {CORPUS} entry {entry!r} answers {sorted(unknown)}, not answer cells of {name}")
            for cell in nb.cells:
                if editions.grade_id(cell) in answers:
                    cell.source = answers[editions.grade_id(cell)]
            corpus.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, corpus / f"{entry}.ipynb")
            written.append(corpus / f"{entry}.ipynb")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="NN_words, e.g. 04_token_budget (the notebooks are named after it)")
    parser.add_argument("--title", help="the notebook's title (default: from the name)")
    args = parser.parse_args(argv)
    folder = create(args.name, args.title)
    made = ", ".join(sorted(p.name + "/" * p.is_dir() for p in folder.iterdir()))   # what is there, never a list kept by hand
    print(f"created {folder}: {made}\nnext (docs/authoring.md, the walk-through): make notebooks ASSIGNMENTS={args.name}"
          f" (its editions only), then make check-assignment NAME={args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
