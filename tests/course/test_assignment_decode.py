"""Assignment 02: the seed's nine mechanism tests on the solved notebook and the stub; cells below a blank TODO.

The prose-vs-output check of both notebooks lives in test_prose_numbers.py."""
import re

import nbformat
import pytest
from nbclient import NotebookClient

import chapter_mechanism_tests as seed
from conftest import ROOT
from grader import editions, reference

NAME = "02_decode_scheduling"
STUDENT = ROOT / "notebooks" / f"{NAME}.ipynb"
SOLVED = ROOT / "solutions" / f"{NAME}.ipynb"


def code_namespace(path):
    """Run the given cells and the TODO cells of a generated notebook; return its globals."""
    nb = nbformat.read(path, as_version=4)
    ns = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and ("grading-setup" in editions.tags(cell) or cell.source.startswith("@add_to_class(")):
            exec(compile(editions.strip_magics(cell.source), str(path), "exec"), ns)
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


@pytest.mark.slow
def test_cells_below_a_blank_todo_name_it_in_one_line():
    """With every TODO blank, the observe cells fail with one line naming the TODOs,
    not with a KeyError or NameError from a variable an earlier failed cell never set."""
    nb = nbformat.read(STUDENT, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    errors = [(cell, out) for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
              if out.output_type == "error"]
    assert not [out.ename for _, out in errors if out.ename in ("KeyError", "NameError")]
    guarded = [out for cell, out in errors if "lab.require_todos(" in cell.source]
    assert len(guarded) == sum("lab.require_todos(" in c.source for c in nb.cells if c.cell_type == "code") >= 4
    for out in guarded:
        assert out.ename == "TodoNotFinished" and len(out.traceback) == 1, out.traceback
        # TODO 4's check stops at TODO 1 before it calls step(), so only the TODOs seen failing are named
        assert "this cell needs TODO 1 and TODO 2 and TODO 3 first" in out.traceback[0], out.traceback
