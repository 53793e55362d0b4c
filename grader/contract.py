"""What an assignment's folder gives the grader: rules, scenario labels, visible cases, mutants, driver text.

An assignment's folder (grader/assignment.py lists its files) is written against this module:

- suite.py builds, for a seed, {answer grade_id: [Rule, ...]}; Assignment.tasks makes a Task of each TODO from them.
- A scenario is labelled where it is made (named, scenario, numbered, worked_example, with_policy, seeded).
- Every case of a TODO's visible check cell is a hidden scenario of one of its rules (check, checks, place).
- mutants.py lists Mutants: broken variants of the reference answers, each must lose points on its own TODO only.
- driver.py is program text: driver_source sends it to a grading child between grader/runner/driver_common.py and
  grader/runner/driver_visible.py.

Nothing here loads an assignment: MUTANTS (every assignment's mutants) and mutated_answers (a reference answer with
one applied) are grader/assignment.py's, which stands on this module (the import graph has no cycle).
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import cells
from .messages import Message, Named

# --- a hidden suite: tasks (one per TODO), each a list of named rules ---


@dataclass(frozen=True)
class Rule:
    """A behaviour, checked by replaying every scenario and comparing with the reference.

    With a `judge`, open-ended answers are checked instead: judge(observations, scenario) runs in the
    grading process (trusted) and returns "" when the property holds, else what is wrong.
    `allows`: the looser types its TODO's text allows (grader/compare.py's ALLOWANCES), read from promises.yml by
    Assignment.tasks; none in a suite.
    """

    name: str
    scenarios: list[dict]
    judge: Callable[[object, dict], str] | None = None
    allows: frozenset = frozenset()


@dataclass(frozen=True)
class Task:
    """One TODO: the answer cell it grades, the test cell its points belong to, and its rules.

    Built by Assignment.tasks: the name, grade_ids and points from the master, the rules from the suite."""

    task_id: str
    answer_id: str
    test_id: str
    points: float
    rules: list[Rule]

    @property
    def scenarios(self) -> list[dict]:
        return [sc for rule in self.rules for sc in rule.scenarios]


# --- a hidden scenario's label: a Message around its own name, worded in the page's language where it is shown ---
# Its own name is a Named key of its assignment's names_zh.SCENARIOS (or lab's names), which grader/i18n.py looks up
# exactly, or code, shown as it is; its number, policy and prefix are the Message's. The scenario's "name" is the
# label's English, which tests, snippets and mistakes quote. A scenario made as a plain {"name": ...} is labelled
# Named(name) where it is graded (label()). The child sees neither: Grader._named sends it only a key, the ops and
# cpu_seconds.


def named(name: str) -> Named:
    """A scenario's own name (a key of its assignment's names_zh.SCENARIOS, or lab's names), worded by exact lookup."""
    return Named(name, "scenario")


def scenario(label: Message | Named, ops: list, **more) -> dict:
    """A scenario labelled `label`, its "name" the label's English."""
    return {"name": str(label), "label": label, "ops": ops, **more}


def label(sc: dict) -> Message | Named:
    """A scenario's label (one made before labels: its name)."""
    return sc.get("label") or named(sc["name"])


def _own(name: str | Message | Named) -> Message | Named:
    """A name inside a composed label: a plain name is looked up exactly (named), a label is kept as it is."""
    return named(name) if isinstance(name, str) else name


def numbered(name: str | Message | Named, number: int) -> Message:
    """'<name> #<number>'."""
    return Message("scenario_numbered", {"name": _own(name), "number": number})


def worked_example(name: str | Message | Named) -> Message:
    """'worked example: <name>'."""
    return Message("worked_example", {"name": _own(name)})


def with_policy(name: str | Message | Named, continuous: bool) -> Message:
    """'<name>, continuous' or '<name>, static'."""
    return Message("scenario_continuous" if continuous else "scenario_static", {"name": _own(name)})


def seeded(name: str, count: int, make) -> list[dict]:
    """`count` scenarios named '<name> #i', with ops from make(i) (which draws from a seeded rng)."""
    return [scenario(numbered(name, i), make(i)) for i in range(count)]


# --- hidden ⊇ visible, by construction: each case of a visible check cell is a hidden scenario of one rule ---
# A check cell (the test cell under a TODO, its visible part) defines helpers and test functions, then calls them;
# each of its top-level calls but `passed(...)` and `print(...)` is a case (`test_todo1_worked_example()`,
# `check_small(no_gain_case(), 'no_gain_case')`). An assignment's suite says, in `VISIBLE`, which of the TODO's rules
# each case belongs to; Assignment.tasks adds each case to that rule as a scenario of one op, ["visible check", call],
# and refuses a suite that leaves a case out (the grader does not start). A case whose checks state several rules is
# split among them by its checks' numbers (the op then names the checks its rule takes). `VISIBLE_JUDGED` names the
# cases a rule's own scenarios already are (the same inputs, judged by the grader: notebook 03's SLO traces).
#
# The grading child runs every check cell's definitions after the answer cells (payload "checks", on both sides of the
# bridge, so that their classes cross it); grader/runner/driver_visible.py, appended to the driver, runs a case with
# the check's expect helpers recording each check's outcome, judged as in the notebook (lab.checks.same). The grader
# compares those records with the reference's: a case fails exactly where the visible check would.

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
    for rule_name, check_numbers in (placed.items() if isinstance(placed, dict) else [(placed, None)]):
        at = next((i for i, rule in enumerate(todo_rules) if rule.name == rule_name), None)
        if at is None:
            raise ValueError(f"{origin}: {call} is placed in {rule_name!r}, which is not a rule of {cell.answer_id}")
        if judged:
            continue
        op = [OP, call] if check_numbers is None else [OP, call, list(check_numbers)]
        rule = todo_rules[at]
        todo_rules[at] = dataclasses.replace(rule, scenarios=[*rule.scenarios, scenario(scenario_name(call, number), [op])])


# --- mutants: broken variants of the reference answers, each must lose points on its own TODO and no other ---
# A mutant is (answer grade_id, name, text to find, replacement) applied to the reference answer. Each assignment
# lists its own in grader/assignments/<name>/mutants.py (MUTANTS). Some are written to pass every visible check,
# so only the hidden rules can catch them.


@dataclass(frozen=True)
class Mutant:
    answer_id: str
    name: str
    find: str
    replace: str
    passes_visible: bool = False

    def apply(self, source: str) -> str:
        if self.find not in source:
            raise ValueError(f"mutant {self.name!r}: {self.find!r} is not in the reference {self.answer_id}")
        return source.replace(self.find, self.replace, 1)


# --- the observation driver: its *source text* is sent to grading children (see grader/runner/child.py) ---
# Each assignment's driver is grader/assignments/<name>/driver.py; grader/runner/driver_common.py is the prelude all
# of them share, and grader/runner/driver_visible.py, appended to each, replays the cases of the visible check cells
# (above). Both are program text, never imported here.

_DRIVER_DIR = Path(__file__).parent / "runner"   # beside the other programs sent as text


def driver_source(folder: Path) -> str:
    """The shared prelude, the assignment's driver and the visible checks' cases, as one script for a child."""
    parts = (_DRIVER_DIR / "driver_common.py", folder / "driver.py", _DRIVER_DIR / "driver_visible.py")
    return "\n\n".join(path.read_text() for path in parts)
