"""Every hidden rule is stated by its TODO's text, in both editions (grader/promises.py)."""
import copy

import pytest

from grader import promises
from grader.assignment import load
from grader.paths import assignment_names


@pytest.mark.parametrize("assignment", assignment_names())
def test_every_rule_quotes_its_todo_text_in_both_editions(assignment):
    assert promises.problems(load(assignment)) == []


def test_the_check_catches_a_missing_quote_a_stale_quote_and_an_unknown_rule():
    assignment = assignment_names()[0]
    recorded = copy.deepcopy(load(assignment).promises)
    task = next(iter(recorded))
    rule = next(iter(recorded[task]))
    recorded[task][rule]["en"] = ["a sentence that no edition contains"]
    other = list(recorded[task])[1]
    del recorded[task][other]["zh"]
    recorded[task]["a rule the suite does not have"] = {"en": ["x"], "zh": ["x"]}
    found = "\n".join(promises.problems(load(assignment), recorded))
    assert "not in the edition: 'a sentence that no edition contains'" in found
    assert f"zh {task} / {other}: no sentence of the text states it" in found
    assert "a rule the suite does not have: no such rule in the suite" in found
