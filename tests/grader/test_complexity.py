"""No function in grader/ above cyclomatic complexity 15 (issue 41), counted as radon counts it (`radon cc`), from the
AST alone: radon is not in the project's environment. A function that could not be brought down yet is in ALLOWED
with its figure and why: it may not grow, and its entry goes when it is brought down."""
import ast
import functools
from pathlib import Path

import pytest

from conftest import ROOT

LIMIT = 15

# "path::qualified name": (its complexity when it was allowed, why). Empty since every function of grader/ came down to
# LIMIT (issue 41 item 2); it only shrinks: a function newly above LIMIT is split, never added here.
ALLOWED: dict[str, tuple[int, str]] = {}

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)


def _branches(node: ast.AST) -> int:
    """What one node adds, as radon's ComplexityVisitor counts it (with and lambda add nothing)."""
    if isinstance(node, (ast.If, ast.IfExp, ast.Assert)):
        return 1
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return 1 + bool(node.orelse)
    if isinstance(node, ast.Try):
        return len(node.handlers) + bool(node.orelse)
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    if isinstance(node, ast.Match):
        wildcard = any(getattr(case.pattern, "pattern", False) is None for case in node.cases)
        return max(0, len(node.cases) - wildcard)
    return 0


def _inside(node: ast.AST) -> int:
    """The branches of a node and everything in it, apart from the functions and classes defined in it (counted on
    their own) and what is inside an assert (radon does not look in there)."""
    total = _branches(node)
    if not isinstance(node, ast.Assert):
        total += sum(_inside(child) for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))
    return total


def complexity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Its cyclomatic complexity: 1 plus the branches of its body (decorators and defaults are not counted)."""
    return 1 + sum(_inside(statement) for statement in function.body if not isinstance(statement, _SCOPES))


def functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function in `tree`, methods and nested functions too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, _SCOPES):
            name = prefix + node.name
            if isinstance(node, _FUNCTIONS):
                yield name, node
            yield from functions(node, name + ".")
        else:
            yield from functions(node, prefix)


@functools.cache
def figures(root: Path = ROOT) -> dict[str, int]:
    """{"path::qualified name": complexity} of every function of grader/ (read once: a second of parsing)."""
    out = {}
    for path in sorted((root / "grader").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for name, node in functions(ast.parse(path.read_text(encoding="utf-8"), rel)):
            out[f"{rel}::{name}"] = complexity(node)
    return out


def test_no_function_in_grader_is_above_the_limit():
    over = {name: n for name, n in figures().items() if n > ALLOWED.get(name, (LIMIT, ""))[0]}
    assert not over, (f"above cyclomatic complexity {LIMIT} (or above its figure in ALLOWED): {over}; "
                      "split it into short functions of one job each")


def test_the_allowed_list_holds_only_functions_still_above_the_limit():
    found = figures()
    stale = {name: found.get(name) for name in ALLOWED if found.get(name, 0) <= LIMIT}
    assert not stale, f"no longer above {LIMIT} (or gone): take these out of ALLOWED: {stale}"


# (source, what `radon cc` says of its function f), radon 6.0.1
RADON = [
    ("def f():\n    return 1\n", 1),
    ("def f(x):\n    if x:\n        return 1\n    elif x > 2:\n        return 2\n    else:\n        return 3\n", 3),
    ("def f(a, b, c):\n    return a and b or c\n", 3),
    ("def f(xs):\n    for x in xs:\n        pass\n    else:\n        pass\n    while xs:\n        break\n", 4),
    ("def f(xs):\n    return [x for x in xs if x if x > 1] + [y for y in xs]\n", 5),
    ("def f(x):\n    try:\n        pass\n    except ValueError:\n        pass\n    except KeyError:\n        pass\n"
     "    else:\n        pass\n    finally:\n        pass\n", 4),
    ("def f(x):\n    with open(x) as h:\n        return h.read() if x else None\n", 2),
    ("def f(x):\n    assert x and x > 1\n    g = lambda y: y if y else 0\n    return g\n", 3),
    ("def f(x):\n    def g(y):\n        if y:\n            return 1\n    return g\n", 1),
    ("def f(x):\n    match x:\n        case 1:\n            pass\n        case 2:\n            pass\n        case _:\n"
     "            pass\n", 3),
    ("def f(x):\n    match x:\n        case 1:\n            pass\n        case [y]:\n            pass\n", 3),
]


@pytest.mark.parametrize("source, expected", RADON)
def test_the_count_agrees_with_radon(source, expected):
    assert complexity(ast.parse(source).body[0]) == expected


def test_a_function_above_the_limit_is_caught(tmp_path):
    branches = "".join(f"        if x == {i}:\n            return {i}\n" for i in range(LIMIT))
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "big.py").write_text(f"class C:\n    def f(self, x):\n{branches}")
    assert figures(tmp_path) == {"grader/big.py::C.f": LIMIT + 1}
