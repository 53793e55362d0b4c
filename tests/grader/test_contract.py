"""grader/contract.py: the driver program a grading child gets is the shared prelude, the assignment's driver and the
visible checks' cases, read from grader/runner/ (the labels and visible cases: test_scenario_labels, test_visible_cases)."""
import pytest

from conftest import ROOT
from grader import contract
from grader.assignment import MUTANTS, load, mutated_answers
from grader.paths import assignment_names


@pytest.mark.parametrize("name", assignment_names())
def test_the_driver_is_the_prelude_the_assignments_driver_and_the_visible_cases(name):
    runner = ROOT / "grader" / "runner"
    parts = [runner / "driver_common.py", ROOT / "grader" / "assignments" / name / "driver.py", runner / "driver_visible.py"]
    assert contract.driver_source(load(name).folder) == "\n\n".join(p.read_text() for p in parts) == load(name).driver_source


def test_a_mutant_changes_its_own_answer_once_and_no_other():
    name = assignment_names()[0]
    mutant = MUTANTS[name][0]
    answers, reference = mutated_answers(name, mutant), load(name).reference
    assert answers[mutant.answer_id] == reference[mutant.answer_id].replace(mutant.find, mutant.replace, 1) != reference[mutant.answer_id]
    assert {gid: a for gid, a in answers.items() if gid != mutant.answer_id} == {gid: r for gid, r in reference.items() if gid != mutant.answer_id}
    with pytest.raises(ValueError, match="is not in the reference"):
        contract.Mutant(mutant.answer_id, "absent", "no such text in any answer", "").apply(reference[mutant.answer_id])
