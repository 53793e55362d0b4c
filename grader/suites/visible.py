"""Hidden ⊇ visible, by construction: every case of a TODO's visible check cell is a hidden scenario of one of its rules.

A check cell (the test cell under a TODO, its visible part) defines helpers and test functions, then calls them;
each of its top-level calls but `passed(...)` and `print(...)` is a case (`test_todo1_worked_example()`,
`check_small(no_gain_case(), 'no_gain_case')`). An assignment's suite says, in `VISIBLE`, which of the TODO's rules
each case belongs to; Assignment.tasks adds each case to that rule as a scenario of one op, ["visible check", call],
and refuses a suite that leaves a case out (the grader does not start). A case whose checks state several rules is
split among them by its checks' numbers (the op then names the checks its rule takes). `VISIBLE_JUDGED` names the
cases a rule's own scenarios already are (the same inputs, judged by the grader: notebook 03's SLO traces).

The grading child runs every check cell's definitions after the answer cells (payload "checks", on both sides of the
bridge, so that their classes cross it); the driver's prelude (grader/drivers/visible.py) runs a case with the
check's expect helpers recording each check's outcome, judged as in the notebook (lab.checks.same). The grader
compares those records with the reference's: a case fails exactly where the visible check would.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass

from .. import cells
from ..messages import Message
from .base import Rule

OP = "visible check"
NOT_CASES = ("passed", "print")


@dataclass(frozen=True)
class Check:
    """One TODO's visible check cell: its definitions (the cell without its top-level calls) and its cases."""

    answer_id: str
    test_id: str
    definitions: str
    cases: tuple[str, ...]


def _called(node: ast.stmt) -> str | None:
    """The name a top-level call statement calls (None for any other statement)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
        return node.value.func.id
    return None


def check(answer_id: str, test_id: str, source: str) -> Check:
    """A check cell's visible part as definitions and cases."""
    tree = ast.parse(cells.strip_magics(cells.strip_hidden(source)))
    cases = tuple(ast.unparse(node.value) for node in tree.body if _called(node) and _called(node) not in NOT_CASES)
    definitions = ast.Module([node for node in tree.body if not _called(node)], type_ignores=[])
    return Check(answer_id, test_id, ast.unparse(definitions), cases)


def checks(todos, nb) -> list[Check]:
    """Each TODO's visible check cell of a master (`todos`: assignment.todos(nb)), in the notebook's order."""
    by_id = cells.cells_by_grade_id(nb)
    return [check(t.answer_id, t.test_id, by_id[t.test_id][0].source) for t in todos if t.test_id in by_id]


def scenario_name(call: str, number: int | None = None) -> Message:
    """'visible check: test_todo1_worked_example()': the function a case calls (its arguments are in the op), code
    shown as it is."""
    name = re.match(r"\w+", call).group(0) + "()"
    return Message("visible_check", {"name": name if number is None else Message("scenario_counted", {"name": name, "number": number})})


def place(rules: dict[str, list[Rule]], found: list[Check], where: dict[str, str | dict[str, list[int]]],
          judged: dict[str, str], origin: str) -> dict[str, list[Rule]]:
    """`rules` with each case of `found` added, as a scenario, at the end of the rule `where` names for it.

    A case whose checks state several rules names, for each rule, the numbers of its checks (1 for the first `expect`
    the case runs) that rule takes: {rule name: [numbers]}. A case in `judged` is left as that rule's own scenarios
    are. Raises ValueError for a case no rule takes, a rule that is not its TODO's, and a placement of a case that
    no check cell has."""
    rules = {gid: list(found_rules) for gid, found_rules in rules.items()}
    seen = set()
    for cell in found:
        names = [str(scenario_name(call)) for call in cell.cases]
        for position, (call, name) in enumerate(zip(cell.cases, names)):
            seen.add(call)
            placed = where.get(call) or judged.get(call)
            if placed is None:
                raise ValueError(f"{origin}: the visible case {call} of {cell.test_id} is in no hidden rule (VISIBLE)")
            number = names[:position].count(name) if names.count(name) > 1 else None
            _add(rules[cell.answer_id] if cell.answer_id in rules else [], cell, call, placed, number, call in judged, origin)
    stale = sorted((set(where) | set(judged)) - seen)
    if stale:
        raise ValueError(f"{origin}: {stale[0]} is placed in a rule, but no check cell has that case")
    return rules


def _add(todo_rules: list[Rule], cell: Check, call: str, placed: str | dict[str, list[int]], number: int | None,
         judged: bool, origin: str) -> None:
    """Adds one visible case, as a scenario, at the end of each rule of its TODO it is placed in (a judged case is
    only checked to name rules of that TODO)."""
    for rule_name, checks in (placed.items() if isinstance(placed, dict) else [(placed, None)]):
        at = next((i for i, rule in enumerate(todo_rules) if rule.name == rule_name), None)
        if at is None:
            raise ValueError(f"{origin}: {call} is placed in {rule_name!r}, which is not a rule of {cell.answer_id}")
        if judged:
            continue
        op = [OP, call] if checks is None else [OP, call, list(checks)]
        rule = todo_rules[at]
        label = scenario_name(call, number)
        sc = {"name": str(label), "label": label, "ops": [op]}   # as labels.scenario makes it (not imported: the import graph)
        todo_rules[at] = dataclasses.replace(rule, scenarios=[*rule.scenarios, sc])
