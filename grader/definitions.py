"""What an answer cell defines, and the stand-in cell that forwards each definition across the bridge."""
from __future__ import annotations

import ast
import re
import threading

BRIDGE_NAME = "__bridge__"   # the child's and the server's Bridge, in the notebook namespace

# CPython 3.11 builds AST objects with a per-interpreter recursion counter that two threads can corrupt
# ("SystemError: AST constructor recursion depth mismatch", python/cpython#106905): grading threads parse in turn.
_PARSING = threading.Lock()


def words(source: str) -> set[str]:
    """Every identifier-like word of `source` (in code, comments and strings alike: an over-approximation of its names)."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))


def parse(source: str) -> ast.Module:
    """ast.parse, one thread at a time."""
    with _PARSING:
        return ast.parse(source)


def _owner(node: ast.FunctionDef) -> str | None:
    """'Cls' for a function decorated with @add_to_class(Cls), else None."""
    for deco in node.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "add_to_class" and len(deco.args) == 1:
            return ast.unparse(deco.args[0])
    return None


def exports(source: str) -> list[str]:
    """The names an answer cell defines: 'fn' for a function, 'Cls.fn' for a method added with add_to_class.

    Only function definitions may carry an answer: any other top-level statement (an assignment, a class)
    could not be stood in for, so it is refused here, when the grader starts, not met by a student."""
    names = []
    for node in parse(source).body:
        if isinstance(node, ast.FunctionDef):
            owner = _owner(node)
            names.append(f"{owner}.{node.name}" if owner else node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        else:
            raise ValueError(f"an answer cell may define only functions; line {node.lineno} is a {type(node).__name__}")
    return names


def stand_in(source: str) -> str:
    """The cell that defines the same names as `source`, each forwarding its call across the bridge.

    It keeps the decorators (given lines the student edition shows) and none of the body."""
    lines = []
    for node in parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        owner = _owner(node)
        export = f"{owner}.{node.name}" if owner else node.name
        lines += [f"@{ast.unparse(deco)}" for deco in node.decorator_list]
        lines += [f"def {node.name}(*args, **kwargs):",
                  f"    return {BRIDGE_NAME}.call({export!r}, args, kwargs)", "", ""]
    return "\n".join(lines)


def bound(tree: ast.Module) -> set[str]:
    """Every top-level name a module binds (functions, classes, assignments, imports), and 'Cls.fn' for add_to_class."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            owner = _owner(node) if isinstance(node, ast.FunctionDef) else None
            names |= {f"{owner}.{node.name}"} if owner else set()
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        else:
            names |= _stored(node)
    return names


def _stored(node: ast.AST) -> set[str]:
    """The names `node` stores to in its scope: not a comprehension's own variables (a walrus in one still binds here)."""
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return {n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr)}
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return {node.id}
    return set().union(*map(_stored, ast.iter_child_nodes(node)))
