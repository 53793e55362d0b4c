"""Every assignment: generated editions in sync, clean runs, no leaks, one task id everywhere."""
import json
import re
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from grader import course, masters, translation
from grader.feedback import hidden_snippets
from grader.paths import assignment_names

NAMES = assignment_names()
EDITIONS = [(name, lang) for lang in ("en", "zh") for name in NAMES if lang in translation.languages(name)]
PASSED = {"en": "visible checks passed", "zh": "项可见检查全部通过"}


def edition(lang):
    return "" if lang == "en" else f"{lang}/"


def student_path(name, lang="en"):
    return ROOT / "notebooks" / f"{edition(lang)}{name}.ipynb"


def solved_path(name, lang="en"):
    return ROOT / "solutions" / f"{edition(lang)}{name}.ipynb"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("regen")
    subprocess.run([sys.executable, "-m", "grader.build", "all", "--out", str(out)], check=True, cwd=ROOT, capture_output=True)
    return out


def comparable(path, with_outputs):
    """Cells as the source determines them. PNG bytes and stderr (warnings, cache notices) depend on the
    machine, not the source, so they are left out; test_committed_notebooks_have_no_stderr keeps them out."""
    nb = json.loads(path.read_text())
    cells = []
    for cell in nb["cells"]:
        item = {"type": cell["cell_type"], "source": cell["source"], "metadata": cell["metadata"]}
        if with_outputs:
            item["outputs"] = [{k: v for k, v in o.items() if k != "data"}
                               | {"data": {m: d for m, d in o.get("data", {}).items() if m != "image/png"}}
                               for o in cell.get("outputs", []) if o.get("name") != "stderr"]
        cells.append(item)
    return cells


def first_difference(a, b):
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"cell {index}: regenerated {json.dumps(x)[:300]} vs committed {json.dumps(y)[:300]}"
    return f"{len(a)} vs {len(b)} cells"


def test_every_assignment_is_listed_and_generated():
    assert NAMES == ["01_continuous_batching", "02_decode_scheduling", "03_batch_scheduling"]
    readme = (ROOT / "README.md").read_text()
    for name in NAMES:
        assert student_path(name).exists() and solved_path(name).exists()
        assert f"notebooks/{name}.ipynb" in readme


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_student_edition_has_not_drifted(regenerated, name, lang):
    assert (regenerated / "notebooks" / f"{edition(lang)}{name}.ipynb").read_text() == student_path(name, lang).read_text(), \
        "notebooks/ is stale: run `make notebooks` and commit"


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_solved_edition_has_not_drifted(regenerated, name, lang):
    fresh, committed = comparable(regenerated / "solutions" / f"{edition(lang)}{name}.ipynb", True), comparable(solved_path(name, lang), True)
    assert fresh == committed, f"solutions/ is stale (run `make notebooks` and commit): {first_difference(fresh, committed)}"


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_committed_notebooks_have_no_stderr(name, lang):
    for path in (solved_path(name, lang), student_path(name, lang)):
        nb = json.loads(path.read_text())
        assert not [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("name") == "stderr"], path


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_solved_edition_ran_clean_with_plots(name, lang):
    nb = nbformat.read(solved_path(name, lang), as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3
    texts = "".join(o.get("text", "") for o in outputs)
    for task in masters.answer_ids(masters.nbgrader_source(name)):
        assert re.search(f"TODO {task[-1]}[:：]", texts) and PASSED[lang] in texts


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_student_edition_has_no_solution_or_hidden_code(name, lang):
    text = student_path(name, lang).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN", "_hidden_", "Explanations of TODO"):
        assert marker not in text
    snippets = hidden_snippets(masters.nbgrader_source(name))
    assert len(snippets) >= 4
    assert not [line for line in snippets if json.dumps(line)[1:-1] in text]
    for gid, answer in masters.reference_answers(name).items():
        body = re.search(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", masters.cells_by_grade_id(masters.read_master(name, lang))[gid][0].source, re.S)
        solution_lines = [line.strip() for line in body.group(1).splitlines() if len(line.strip()) > 25]
        assert not [line for line in solution_lines if json.dumps(line)[1:-1] in text], f"{gid} leaks its solution"


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_solved_edition_has_no_hidden_tests(name, lang):
    text = solved_path(name, lang).read_text()
    assert "HIDDEN" not in text and "_hidden_" not in text
    assert not [line for line in hidden_snippets(masters.nbgrader_source(name)) if json.dumps(line)[1:-1] in text]


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_one_task_id_everywhere(name, lang):
    """Heading, grade_id, decorator, test names and checks' messages agree for every TODO."""
    nb = masters.read_master(name, lang)
    student = masters.cells_by_grade_id(nbformat.read(student_path(name, lang), as_version=4))
    headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("### TODO")]
    answers = masters.answer_ids(nb)
    assert answers == [f"todo{n}" for n in range(1, len(answers) + 1)]
    for n in range(1, len(answers) + 1):
        assert any(h.startswith(f"### TODO {n} ") for h in headings)
        answer = student[f"todo{n}"][0].source
        assert f'@todo("TODO {n}")' in answer and "raise NotImplementedError()" in answer
        tests = student[f"todo{n}_tests"][0].source
        names = re.findall(r"def (test_\w+)", tests)
        assert names and all(name.startswith(f"test_todo{n}_") for name in names)
        assert set(re.findall(r"\"(TODO \d)", tests)) == {f"TODO {n}"}


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_stub_matches_reference_outside_the_solution(name, lang):
    """Sync: the starter keeps the reference's signature, docstring and given lines."""
    student = masters.cells_by_grade_id(nbformat.read(student_path(name, lang), as_version=4))
    source = masters.cells_by_grade_id(masters.nbgrader_source(name, lang))
    for gid in masters.answer_ids(masters.nbgrader_source(name)):
        expected = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION\n",
                          lambda m: f"{m.group(1)}# YOUR CODE HERE\n{m.group(1)}raise NotImplementedError()\n",
                          source[gid][0].source + "\n", flags=re.S).rstrip("\n")
        assert student[gid][0].source == expected


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_notebooks_download_nothing_outside_the_setup_code(name, lang):
    """Only the set-up code may install (and only when lab is missing); no other cell touches the network."""
    setup = course.setup_code()
    for path in (student_path(name, lang), solved_path(name, lang)):
        sources = [c.source for c in nbformat.read(path, as_version=4).cells]
        assert sum(setup in s for s in sources) == 1, f"{path}: the set-up code must appear exactly once"
        text = "\n".join(sources).replace(setup, "")
        assert not re.search(r"pip install|urlopen|requests\.get|https?://|wget|curl ", text), path
    assert not re.search(r"pip install|https?://", masters.master_path(name).read_text())
