"""Assignment 02: generated editions, task ids, the seed tests and what students can see."""
import json
import re
import subprocess
import sys

import nbformat
import pytest

import seed000_mechanism_tests as seed
from conftest import ROOT
from grader import masters, reference
from grader.autograde import _hidden_snippets

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


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("regen")
    subprocess.run([sys.executable, "-m", "grader.build", "all", NAME, "--out", str(out)], check=True, cwd=ROOT,
                   capture_output=True)
    return out


def comparable(path, with_outputs):
    nb = json.loads(path.read_text())
    cells = []
    for cell in nb["cells"]:
        item = {"type": cell["cell_type"], "source": cell["source"], "metadata": cell["metadata"]}
        if with_outputs:
            item["outputs"] = [{k: v for k, v in o.items() if k != "data"} | {"data": {m: d for m, d in o.get("data", {}).items() if m != "image/png"}}
                               for o in cell.get("outputs", [])]
        cells.append(item)
    return cells


def test_student_edition_has_not_drifted(regenerated):
    assert comparable(regenerated / "notebooks" / f"{NAME}.ipynb", False) == comparable(STUDENT, False), \
        "notebooks/ is stale: run `make notebooks` and commit"
    assert (regenerated / "notebooks" / f"{NAME}.ipynb").read_text() == STUDENT.read_text()


def test_solved_edition_has_not_drifted(regenerated):
    assert comparable(regenerated / "solutions" / f"{NAME}.ipynb", True) == comparable(SOLVED, True), \
        "solutions/ is stale: run `make notebooks` and commit"


def test_solved_edition_ran_clean_with_plots():
    nb = nbformat.read(SOLVED, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 6
    texts = "".join(o.get("text", "") for o in outputs)
    for task in ("TODO 1", "TODO 2", "TODO 3", "TODO 4"):
        assert f"{task}:" in texts and "visible checks passed" in texts


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


def test_student_edition_has_no_solution_or_hidden_code():
    text = STUDENT.read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN", "_hidden_", "Explanations of TODO"):
        assert marker not in text
    snippets = _hidden_snippets(masters.nbgrader_source(NAME))
    assert len(snippets) >= 8
    for line in snippets:
        assert json.dumps(line)[1:-1] not in text, f"hidden test code leaks: {line}"
    for gid, answer in masters.reference_answers(NAME).items():
        distinctive = [line.strip() for line in answer.splitlines() if "victim" in line or "deadline_slack =" in line
                       or "request = RequestState(" in line or "for candidate in sorted" in line]
        assert distinctive or gid == "todo1"
        for line in distinctive:
            assert json.dumps(line)[1:-1] not in text, f"{gid} leaks: {line}"


def test_solved_edition_has_no_hidden_tests():
    text = SOLVED.read_text()
    assert "HIDDEN" not in text and "_hidden_" not in text
    assert not [line for line in _hidden_snippets(masters.nbgrader_source(NAME)) if json.dumps(line)[1:-1] in text]


def test_one_task_id_everywhere():
    """Heading, grade_id, decorator, test names and stub message agree for every TODO."""
    nb = masters.read_master(NAME)
    student = nbformat.read(STUDENT, as_version=4)
    student_cells = masters.cells_by_grade_id(student)
    headings = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("### TODO")]
    for n in range(1, 5):
        assert any(h.startswith(f"### TODO {n} ") for h in headings)
        answer = student_cells[f"todo{n}"][0].source
        assert f'@todo("TODO {n}")' in answer and "raise NotImplementedError()" in answer
        tests = student_cells[f"todo{n}_tests"][0].source
        names = re.findall(r"def (test_\w+)", tests)
        assert names and all(name.startswith(f"test_todo{n}_") for name in names)
        assert re.findall(r"\"(TODO \d)", tests) and set(re.findall(r"\"(TODO \d)", tests)) == {f"TODO {n}"}


def test_stub_matches_reference_outside_the_solution():
    """Sync: the starter keeps the reference's signature, docstring and given lines."""
    student = masters.cells_by_grade_id(nbformat.read(STUDENT, as_version=4))
    source = masters.cells_by_grade_id(masters.nbgrader_source(NAME))
    for gid in masters.answer_ids(masters.nbgrader_source(NAME)):
        expected = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION\n",
                          lambda m: f"{m.group(1)}# YOUR CODE HERE\n{m.group(1)}raise NotImplementedError()\n",
                          source[gid][0].source + "\n", flags=re.S).rstrip("\n")
        assert student[gid][0].source == expected


def test_reference_namespace_is_the_solution():
    ns = reference.namespace(NAME)
    sim = ns["DecodeSchedulerSim"](free_kv_blocks=2)
    sim.enqueue(1, 2, 2)
    assert [e["action"] for e in sim.run()] == ["prefill_to_decode", "decode_one_step", "finish"]
