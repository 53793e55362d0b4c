"""Broken variants of the reference answers: each must lose points on its own TODO and no other.

A mutant is (answer grade_id, name, text to find, replacement) applied to the reference answer. Each assignment
lists its own in grader/assignments/<name>/mutants.py (MUTANTS). Some are written to pass every visible check,
so only the hidden rules can catch them.
"""
from __future__ import annotations

from dataclasses import dataclass


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


def __getattr__(name: str):
    """MUTANTS: {assignment: its mutants}, for every assignment found (read when first asked for)."""
    if name == "MUTANTS":
        from .assignment import load, names
        return {assignment: load(assignment).mutants for assignment in names()}
    raise AttributeError(name)


def mutated_answers(assignment, mutant: Mutant) -> dict[str, str]:
    """The reference answers of `assignment` (an Assignment or its name) with one mutant applied."""
    from .assignment import get

    answers = dict(get(assignment).reference)
    answers[mutant.answer_id] = mutant.apply(answers[mutant.answer_id])
    return answers
