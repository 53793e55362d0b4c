"""The verdict types: one hidden rule's result, one TODO's verdict, and what grading the TODO came to (its Outcome).

grader/grade.py makes them; report.json keeps them as dataclasses.asdict writes them, and they are read back
(a stored verdict, the class report) with their Messages and Outcome restored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .messages import Joined, Message, from_json


@dataclass
class RuleResult:
    """One hidden rule on one answer: whether it holds, and if not, the first failing case and what it shows."""

    name: str
    passed: bool
    detail: str = ""
    snippet: str = ""       # the first failing case as code the student can run
    quotes: dict[str, list[str]] = field(default_factory=dict)  # a failing rule: the sentences of the text that state it, per language
    seen: str = ""          # a failing rule: what the answer did at its first departure (grader/diagnose.py)
    message: Message | None = None  # `detail` as a Message (worded per language; the values in it as they are), if it is one

    def __post_init__(self):  # read back from report.json or a stored verdict
        if isinstance(self.message, dict):
            self.message = from_json(self.message)


class Outcome(str, Enum):
    """What grading one TODO's answer came to (the first that applies, top down); report.json keeps its value."""

    GRADING_ERROR = "grading_error"  # the grader's side failed twice: not scored, never reused; re-run it
    MISSING = "missing"              # the submission has no answer cell for the TODO: 0
    TIMED_OUT = "timed_out"          # the grading child ran out of time: scored as far as it got, never reused
    CRASHED = "crashed"              # the grading child ended otherwise (killed, a broken record): likewise
    RAISED = "raised"                # the answer cell raised; the rules judged what it had defined
    GRADED = "graded"                # the child ran to the end

    @property
    def ran(self) -> bool:
        """The verdict says what the answer does (its child ran to the end): it may be reused and diagnosed."""
        return self in (Outcome.GRADED, Outcome.RAISED)


@dataclass
class TaskVerdict:
    """One TODO of one submission: its score from its rules, what grading it came to, and a note for the student."""

    task_id: str
    answer_id: str
    test_id: str
    points: float
    score: float
    rules: list[RuleResult] = field(default_factory=list)
    note: Message | Joined | str = ""  # what the student should know beyond the rules (worded at the edge; '' if nothing)
    hung: bool = False      # the answer ran past a time limit: the feedback run does not wait for it again
    mistake: dict = field(default_factory=dict)  # the common mistake it behaves like, if any (grader/diagnose.py)
    status: Outcome = Outcome.GRADED

    def __post_init__(self):  # read back from report.json or a stored verdict
        self.note, self.status = from_json(self.note), Outcome(self.status)
