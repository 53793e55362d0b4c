"""The import graph of grader/ and lab/: no cycle, and grader has at most 8 levels (issue 41 item 8).

A module sits one level above the highest module of the project it imports, at the top of the file or inside a
function (both run). `from . import x` imports the module x, not its package's __init__. The assignments' folders
are data the grader loads with importlib, so they are left out, as the import-graph drawing in docs/architecture.md
leaves them out."""
import ast
import functools
from pathlib import Path

import pytest

from conftest import ROOT

# grader's levels at most: a module that needs a ninth level imports a layer it should be handed instead
GRADER_LEVELS = 8


def modules(root: Path, packages=("grader", "lab")) -> dict[str, Path]:
    """{dotted name: file} of every module of `packages` (the assignments' folders aside)."""
    found = {}
    for path in sorted(root.glob("*/**/*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[0] in packages and "assignments" not in parts and "assignment_template" not in parts:
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports(name: str, source: str, known, is_package: bool = False) -> set[str]:
    """The modules of `known` that module `name` imports."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = (package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else [])
            module = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names}
    return {m for m in found if m in known and m != name}


def graph(root: Path = ROOT, packages=("grader", "lab")) -> dict[str, set[str]]:
    files = modules(root, packages)
    return {n: imports(n, p.read_text(encoding="utf-8"), files, p.name == "__init__.py") for n, p in files.items()}


def levels(edges: dict[str, set[str]]) -> dict[str, int]:
    """Each module's level (1 = imports no module of the graph); ValueError naming a cycle if there is one."""
    @functools.cache
    def level(name, path=()):
        if name in path:
            raise ValueError("cycle: " + " -> ".join(path[path.index(name):] + (name,)))
        return 1 + max((level(m, path + (name,)) for m in edges[name]), default=0)
    return {name: level(name) for name in edges}


def longest_chain(edges, level) -> list[str]:
    name = max(level, key=level.get)
    chain = [name]
    while edges[name]:
        name = max(edges[name], key=level.get)
        chain.append(name)
    return chain


def test_grader_and_lab_import_no_cycle():
    levels(graph())   # raises on a cycle, naming it
    with pytest.raises(ValueError, match="cycle: lab.fonts -> lab.i18n -> lab.fonts"):
        levels({"lab.fonts": {"lab.i18n"}, "lab.i18n": {"lab.fonts"}})   # the cycle lab had until font_subset


def test_grader_has_at_most_eight_levels():
    edges = graph(packages=("grader",))
    level = levels(edges)
    assert len(edges) > 40 and "grader.runner.bridge" in edges
    assert max(level.values()) <= GRADER_LEVELS, " -> ".join(longest_chain(edges, level))
    # the count can fail: one more module on top of the longest chain is one level more
    top = max(level, key=level.get)
    assert max(levels({**edges, "grader.planted": {top}}).values()) == max(level.values()) + 1


def test_imports_are_read_as_python_reads_them():
    known = {"grader", "grader.runner", "grader.runner.warm", "grader.runner.sandbox", "grader.paths", "lab.fonts"}
    assert imports("grader.runner.warm", "from . import sandbox\nfrom ..paths import ROOT\n", known) == \
        {"grader.runner.sandbox", "grader.paths"}
    assert imports("grader.runner", "from .warm import start\n", known, is_package=True) == {"grader.runner.warm"}
    assert imports("grader.paths", "def f():\n    from lab.fonts import x\n", known) == {"lab.fonts"}   # in a function too
