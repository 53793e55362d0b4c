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


def test_only_rules_whose_text_allows_a_looser_type_have_one():
    """03's TODO 4 says numpy numbers and an int where a float is expected are fine; every other rule is strict."""
    for assignment in assignment_names():
        for task in load(assignment).tasks(1):
            for rule in task.rules:
                loose = assignment == "03_batch_scheduling" and task.task_id == "TODO 4"
                assert rule.allows == (frozenset({"number"}) if loose else frozenset()), (assignment, task.task_id, rule.name)


def test_the_allowance_check_catches_an_unknown_one_an_unquoted_sentence_one_that_does_not_say_it_and_a_judged_rule():
    assignment = load("03_batch_scheduling")
    recorded = copy.deepcopy(assignment.promises)
    rules = list(recorded["TODO 4"])
    first, second, third = (recorded["TODO 4"][name] for name in rules[:3])
    first["allows"]["anything"] = first["allows"]["number"]
    second["zh"] = [q for q in second["zh"] if q != second["allows"]["number"]["zh"]]
    third["allows"]["number"]["en"] = third["en"][0]   # a quote of the rule, but not the sentence that allows numbers
    judged = next(iter(recorded["TODO 5"]))
    recorded["TODO 5"][judged]["allows"] = copy.deepcopy(first["allows"])
    found = "\n".join(promises.problems(assignment, recorded))
    assert f"TODO 4 / {rules[0]}: allows 'anything', which is not one of" in found
    assert f"TODO 4 / {rules[1]}: allows number, but its zh sentence is not one of the rule's quotes" in found
    assert f"TODO 4 / {rules[2]}: allows number, but its en sentence does not say 'numpy'" in found
    assert f"TODO 5 / {judged}: a judged rule allows nothing" in found
