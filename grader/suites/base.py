"""The shape of a hidden suite: tasks (one per TODO), each a list of named rules."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


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
