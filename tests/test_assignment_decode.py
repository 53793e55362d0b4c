"""Assignment 02: the seed's nine mechanism tests on the solved notebook and on the stub."""
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
            exec(compile(cell.source, str(path), "exec"), ns)
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
