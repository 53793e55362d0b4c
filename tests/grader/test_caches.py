"""grader/caches.py: every cache of grader/ is registered there, forget() clears them all, and docs/architecture.md's
Caches section is describe()."""
import ast

from conftest import ROOT
from grader import caches, docs

GRADER = ROOT / "grader"


def _sources():
    for path in sorted(GRADER.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def unregistered() -> list[str]:
    """Where grader/ makes an lru_cache (or functools.cache) itself, outside grader/caches.py and caches.OUTSIDE."""
    found = []
    for rel, tree in _sources():
        if rel == "grader/caches.py" or rel in caches.OUTSIDE:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("lru_cache", "cache") and \
                    isinstance(node.value, ast.Name) and node.value.id == "functools":
                found.append(f"{rel}:{node.lineno}: functools.{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module == "functools":
                found += [f"{rel}:{node.lineno}: from functools import {a.name}" for a in node.names if a.name in ("lru_cache", "cache")]
    return found


def registrations() -> list[str]:
    """Every caches.cached / caches.table / caches.register call in grader/."""
    return [f"{rel}:{node.lineno}" for rel, tree in _sources() if rel != "grader/caches.py" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "caches" and node.func.attr in ("cached", "table", "register")]


def test_no_cache_is_made_outside_the_registry():
    assert unregistered() == [], "make it with grader/caches.py's cached/table/register (it then has a row in the docs)"


def test_the_check_sees_a_cache_made_directly():
    planted = GRADER / "_planted_cache.py"
    planted.write_text('"""A module with its own cache."""\nfrom functools import lru_cache\nimport functools\n\n\n'
                       '@functools.cache\ndef f():\n    return 1\n', encoding="utf-8")
    try:
        assert unregistered() == ["grader/_planted_cache.py:2: from functools import lru_cache",
                                  "grader/_planted_cache.py:6: functools.cache"]
    finally:
        planted.unlink()


def test_every_registration_is_described_once():
    described = caches.describe()
    assert len(described) == len(registrations()), (sorted(e.name for e in described), registrations())
    assert len({e.name for e in described}) == len(described)
    assert all(e.keys and e.why and e.clears for e in described)


def test_forget_clears_every_cache():
    from grader import assignment, child_values, diagnose, feedback, glossary, notebook_run
    import numpy

    before = assignment.load("01_continuous_batching")
    assignment.load("01_continuous_batching").edition("en")
    glossary.variants()
    diagnose.texts("01_continuous_batching")
    feedback._MARKDOWN["x"] = "<p>x</p>"
    notebook_run._DRAWN[("x",)] = []
    assert child_values.numpy_types() and numpy
    caches.forget()
    assert assignment.load("01_continuous_batching") is not before
    caches.forget()
    for function in (assignment.load, assignment.Assignment.edition, glossary.variants, diagnose.texts):
        assert function.cache_info().currsize == 0
    assert feedback._MARKDOWN == {} and notebook_run._DRAWN == {} and child_values._NUMPY_TYPES is None


def test_the_docs_list_every_cache():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert docs.section_problems("caches", text) == []
    listed = docs.section(text, "caches")
    assert all(f"| `{e.name}` |" in listed for e in caches.describe())
