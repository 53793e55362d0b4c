"""No student-facing text uses the course's internal jargon: "seed 003", "Seed test", "种子教材", "issue 14".

A student does not know what a seed or an issue of this repository is. Student-facing text is every edition
(student and solved, English and 简体中文: prose, comments, string literals and printed outputs), the `lab`
package (docstrings, comments, messages) and the grader's feedback (rule and case names, the feedback page).
The words "seed" and "issue" are allowed only as code: an identifier (`seed=3`, the `seed` of `make_trace`),
a dictionary key, or an f-string placeholder. Everything else that names the words fails, in any case.
"""
import ast
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT

JARGON = re.compile(r"\b(?:seeds?|issues?)\b|种子", re.I)
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")
EDITIONS = sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("notebooks/zh/*.ipynb"),
                   *ROOT.glob("solutions/*.ipynb"), *ROOT.glob("solutions/zh/*.ipynb")])
LAB = sorted((ROOT / "lab").rglob("*.py"))
FEEDBACK = sorted([ROOT / "grader" / "contract.py", *(ROOT / "grader" / "assignments").glob("*/suite.py"),
                   *(ROOT / "grader" / "assignments").glob("*/names_zh.py"), ROOT / "grader" / "feedback.py", ROOT / "grader" / "i18n.py"])
TEMPLATES = sorted(p for p in (ROOT / "grader" / "templates").rglob("*") if p.is_file())


def _docstring_nodes(tree) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def python_text(source: str, docstrings: bool = True, comments: bool = True) -> list[str]:
    """The prose of Python source: string literals (f-string placeholders left out), docstrings, comments.

    A literal that is a bare identifier ("seeds" as a dictionary key) is code, not text."""
    source = re.sub(r"^([ \t]*)%", r"\1#%", source, flags=re.M)  # IPython magics
    tree = ast.parse(source)
    skip = set() if docstrings else _docstring_nodes(tree)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append("".join(v.value for v in node.values if isinstance(v, ast.Constant)))
            for v in node.values:
                skip.add(id(v))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if not IDENTIFIER.match(node.value):
                texts.append(node.value)
    if comments:
        texts += [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                  if tok.type == tokenize.COMMENT]
    return texts


def markdown_text(source: str) -> str:
    """Prose with its code spans left out: `seed` is an identifier there (in markdown, docstrings, comments)."""
    return re.sub(r"`[^`\n]*`", " ", source)


def output_text(cell) -> list[str]:
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            texts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            texts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
        else:
            texts.append(out.get("data", {}).get("text/plain", ""))
    return ["".join(t) if isinstance(t, list) else t for t in texts]


def jargon(texts, where: str) -> list[str]:
    found = []
    for text in map(markdown_text, texts):
        for match in JARGON.finditer(text):
            found.append(f"{where}: {text[max(0, match.start() - 50):match.end() + 30]!r}")
    return found


def notebook_jargon(nb, name: str) -> list[str]:
    found = []
    for index, cell in enumerate(nb.cells):
        where = f"{name} cell {index}"
        if cell.cell_type == "markdown":
            found += jargon([markdown_text(cell.source)], where)
        elif cell.cell_type == "code":
            found += jargon(python_text(cell.source) + output_text(cell), where)
    return found


def source_jargon(path: Path, docstrings: bool = True, comments: bool = True) -> list[str]:
    return jargon(python_text(path.read_text(encoding="utf-8"), docstrings, comments), str(path.relative_to(ROOT)))


@pytest.mark.parametrize("path", EDITIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_editions_have_no_internal_jargon(path):
    assert notebook_jargon(nbformat.read(path, as_version=4), path.name) == []


def test_lab_docstrings_comments_and_messages_have_no_internal_jargon():
    assert [hit for path in LAB for hit in source_jargon(path)] == []


def test_feedback_has_no_internal_jargon():
    """Rule and case names and the feedback page; the grader's own docstrings and comments are for instructors."""
    found = [hit for path in FEEDBACK for hit in source_jargon(path, docstrings=False, comments=False)]
    found += jargon([p.read_text(encoding="utf-8") for p in TEMPLATES], "grader/templates")
    assert found == []


def test_the_editions_exist():
    """Both editions (student, solved) of every assignment in each of its languages."""
    from grader import translation
    from grader.paths import assignment_names
    assert len(EDITIONS) == 2 * sum(len(translation.languages(name)) for name in assignment_names()) >= 12


@pytest.mark.parametrize("planted, kind", [
    ("Seed 003's budgets, in vLLM's names:", "markdown"),
    ("种子教材 003 的论点", "markdown"),
    ('"""Seed test: a new request enters in prefill."""', "code"),
    ("# the fast engine of issue 14", "code"),
    ('print("A-E (seed 003)")', "code"),
])
def test_a_planted_occurrence_is_caught(planted, kind):
    nb = nbformat.read(ROOT / "notebooks" / "03_batch_scheduling.ipynb", as_version=4)
    new = nbformat.v4.new_markdown_cell(planted) if kind == "markdown" else nbformat.v4.new_code_cell(planted)
    nb.cells.insert(5, new)
    found = notebook_jargon(nb, "planted")
    assert len(found) == 1 and found[0].startswith("planted cell 5"), found


def test_identifiers_keys_code_spans_and_placeholders_are_not_jargon():
    code = 'run = make_trace(10, 5, seed=3)\nrows = SLO["seeds"]\nname = f"trace {seed}"\n'
    assert jargon(python_text(code), "code") == []
    assert jargon([markdown_text("traces 0, 1 and 2 (the `seed` of `make_trace`)")], "prose") == []
    assert jargon(python_text('"""Reproducible from an integer `seed` (a random seed)."""'), "docstring") != []
    assert jargon(output_text(nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", text="seed 002\n")])), "out") != []
