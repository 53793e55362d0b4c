"""What an answer cell defines, and the stand-in cell that forwards each definition across the bridge."""
from __future__ import annotations

import ast

BRIDGE_NAME = "__bridge__"   # the child's and the server's Bridge, in the notebook namespace


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
    for node in ast.parse(source).body:
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
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        owner = _owner(node)
        export = f"{owner}.{node.name}" if owner else node.name
        lines += [f"@{ast.unparse(deco)}" for deco in node.decorator_list]
        lines += [f"def {node.name}(*args, **kwargs):",
                  f"    return {BRIDGE_NAME}.call({export!r}, args, kwargs)", "", ""]
    return "\n".join(lines)
