"""Assignment 02: the seed's nine mechanism tests on the solved notebook and the stub; prose vs output."""
import re

import nbformat
import pytest

import seed000_mechanism_tests as seed
from conftest import ROOT
from grader import masters, reference

NAME = "02_decode_scheduling"
STUDENT = ROOT / "notebooks" / f"{NAME}.ipynb"
SOLVED = ROOT / "solutions" / f"{NAME}.ipynb"


def code_namespace(path):
    """Run the given cells and the TODO cells of a generated notebook; return its globals."""
    nb = nbformat.read(path, as_version=4)
    ns = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and ("grading-setup" in masters.tags(cell) or cell.source.startswith("@add_to_class(")):
            exec(compile(masters.strip_magics(cell.source), str(path), "exec"), ns)
    return ns


@pytest.mark.parametrize("test", seed.SEED_TESTS, ids=lambda t: t.__name__)
def test_seed_mechanism_tests_pass_on_solved_notebook(test):
    seed.DecodeSchedulerSim = code_namespace(SOLVED)["DecodeSchedulerSim"]
    test()


def test_seed_mechanism_tests_fail_on_the_stub():
    seed.DecodeSchedulerSim = code_namespace(STUDENT)["DecodeSchedulerSim"]
    failures = 0
    for test in seed.SEED_TESTS:
        try:
            test()
        except NotImplementedError as exc:
            assert re.match(r"TODO [1-4] \(\w+\) is not implemented yet", str(exc)), str(exc)
            failures += 1
    assert failures == len(seed.SEED_TESTS)


def test_reference_namespace_is_the_solution():
    ns = reference.namespace(NAME)
    sim = ns["DecodeSchedulerSim"](free_kv_blocks=2)
    sim.enqueue(1, 2, 2)
    assert [e["action"] for e in sim.run()] == ["prefill_to_decode", "decode_one_step", "finish"]


def test_policy_prose_matches_the_executed_table():
    """The Observe section quotes numbers; they must be the ones the solved notebook prints."""
    nb = nbformat.read(SOLVED, as_version=4)
    table_cell = next(c for c in nb.cells if c.cell_type == "code" and "policy_summary(summary) for policy" in c.source)
    html = table_cell.outputs[0]["data"]["text/html"]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        head, cells = re.findall(r"<th>(.*?)</th>", row), re.findall(r"<td>(.*?)</td>", row)
        if head and cells:
            rows[head[0]] = [float(x) for x in cells]
    # columns: low wait, medium wait, high max wait, high mean wait, deadlines missed, of
    assert rows["fixed_priority"][:3] == [40, 37, 6] and rows["aging"][:3] == [32, 20, 12] and rows["deadline"][:2] == [35, 5]
    assert rows["aging"][4] == 4 and rows["deadline"][4] == 0 and rows["aging"][5] == 14
    prose = next(c.source for c in nb.cells if c.cell_type == "markdown" and "Read the table and the plot together" in c.source)
    for quoted in ("at most 6 steps", "40 and 37 steps", "waits 32 and 20", "max wait 12", "(4 of 14)", "(wait 5)", "waits 35 steps"):
        assert quoted in prose
