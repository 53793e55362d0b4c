"""Every assignment: generated editions in sync, clean runs, no leaks, one task id everywhere."""
import json
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import FONT_STATES, ROOT, font_env, selected_assignments, stand_in_cjk_font_env
from grader import course, editions, translation
from grader.assignment import get
from grader.editions import hidden_snippets
from grader.paths import assignment_names

NAMES = assignment_names()
EDITIONS = [(name, lang) for lang in ("en", "zh") for name in NAMES if lang in translation.languages(name)]
ZH_NAMES = [name for name, lang in EDITIONS if lang == "zh"]
# The zh solved editions are rebuilt with the CJK fonts as installed and hidden; English ones never look at fonts.
SOLVED = [(name, lang, fonts) for name, lang in EDITIONS for fonts in (FONT_STATES if lang == "zh" else FONT_STATES[:1])]
PASSED = {"en": r"visible checks? passed", "zh": r"项可见检查(?:全部)?通过"}   # lab.passed: "1 visible check passed."


def edition(lang):
    return "" if lang == "en" else f"{lang}/"


def student_path(name, lang="en"):
    return ROOT / "notebooks" / f"{edition(lang)}{name}.ipynb"


def solved_path(name, lang="en"):
    return ROOT / "solutions" / f"{edition(lang)}{name}.ipynb"


def build(out, *args, env):
    """`python -m grader.build ARGS --out OUT` in `env`; returns OUT."""
    subprocess.run([sys.executable, "-m", "grader.build", *args, "--out", str(out)], check=True, cwd=ROOT, capture_output=True, env=env)
    return out


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory, request):
    """Every edition rebuilt (of --assignment's one only, with that option), with the CJK fonts as installed."""
    return build(tmp_path_factory.mktemp("regen"), "all", *selected_assignments(request.config), env=font_env("installed"))


@pytest.fixture(scope="module")
def regenerated_fonts_hidden(tmp_path_factory, request):
    """The zh solved editions rebuilt as on a fresh machine: no CJK font to be found (LAB_HIDE_CJK_FONTS=1)."""
    return build(tmp_path_factory.mktemp("regen-hidden"), "solutions", *selected_assignments(request.config), "--language", "zh",
                 env=font_env("hidden"))


@pytest.fixture(scope="module")
def stand_in_font(tmp_path_factory):
    """An environment with a CJK font on any machine (conftest.stand_in_cjk_font_env)."""
    return stand_in_cjk_font_env(tmp_path_factory.mktemp("stand-in-font"))


@pytest.fixture(scope="module")
def regenerated_with_a_cjk_font(tmp_path_factory, stand_in_font, request):
    """The zh solved editions rebuilt where lab finds a CJK font, whatever this machine has installed."""
    return build(tmp_path_factory.mktemp("regen-cjk"), "solutions", *selected_assignments(request.config), "--language", "zh",
                 env=stand_in_font)


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


def test_every_assignment_is_found_and_generated():
    """An assignment is a folder of grader/assignments/ with a master (no list to keep); each has its editions,
    and every notebook the README links to is one of them."""
    assert NAMES and NAMES == sorted(p.parent.name for p in (ROOT / "grader" / "assignments").glob("*/master.py"))
    for name in NAMES:
        assert student_path(name).exists() and solved_path(name).exists()
    linked = set(re.findall(r"notebooks/(?:zh/)?(\d\d_\w+)\.ipynb", (ROOT / "README.md").read_text()))
    assert linked and linked <= set(NAMES), linked - set(NAMES)


@pytest.mark.slow
@pytest.mark.parametrize("name,lang", EDITIONS)
def test_student_edition_has_not_drifted(regenerated, name, lang):
    assert (regenerated / "notebooks" / f"{edition(lang)}{name}.ipynb").read_text() == student_path(name, lang).read_text(), \
        "notebooks/ is stale: run `make notebooks` and commit"


@pytest.mark.slow
@pytest.mark.parametrize("name,lang,fonts", SOLVED)
def test_solved_edition_has_not_drifted(request, name, lang, fonts):
    """The committed outputs, PNGs aside, are what a build gives with the CJK fonts installed and hidden alike."""
    regenerated = request.getfixturevalue("regenerated" if fonts == "installed" else "regenerated_fonts_hidden")
    fresh, committed = comparable(regenerated / "solutions" / f"{edition(lang)}{name}.ipynb", True), comparable(solved_path(name, lang), True)
    assert fresh == committed, f"solutions/ is stale (run `make notebooks` and commit): {first_difference(fresh, committed)}"


def printed(path) -> list:
    """Per code cell, what a reader sees besides figures: printed text, tables, errors (stderr and PNGs left out)."""
    return [cell["outputs"] for cell in comparable(path, True) if cell["type"] == "code"]


def lines_of(outputs: list) -> list[str]:
    """The lines of a cell's outputs: streams, text of rich outputs, errors."""
    def text(value):  # a saved notebook holds a multi-line text as one string or as a list of lines
        return "".join(value) if isinstance(value, list) else str(value)

    texts = [text(o.get("text", "")) + "".join(map(text, o.get("data", {}).values())) + o.get("evalue", "") for o in outputs]
    return "\n".join(texts).splitlines()


def font_dependent(without_font, with_font) -> list[str]:
    """The code cells whose printed output differs between a run without a CJK font and one with, and their lines."""
    found = []
    for index, (a, b) in enumerate(zip(printed(without_font), printed(with_font))):
        if a != b:
            only_a, only_b = [x for x in lines_of(a) if x not in lines_of(b)], [x for x in lines_of(b) if x not in lines_of(a)]
            found.append(f"code cell {index}: without a CJK font {only_a}, with one {only_b}" if only_a or only_b else
                         f"code cell {index}: {json.dumps(a)[:200]} vs {json.dumps(b)[:200]}")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", ZH_NAMES)
def test_zh_printed_output_does_not_depend_on_fonts(regenerated_fonts_hidden, regenerated_with_a_cjk_font, name):
    """Only figures may change with the fonts: each printed line of a zh edition is the same with a CJK font and without."""
    without, with_font = (folder / "solutions" / "zh" / f"{name}.ipynb" for folder in (regenerated_fonts_hidden, regenerated_with_a_cjk_font))
    assert font_dependent(without, with_font) == []
    assert len(printed(without)) == len(printed(with_font)) >= get(name).figures.printed_cells   # its assignment.toml


@pytest.mark.slow
def test_the_font_check_fails_when_printed_text_goes_through_label(tmp_path, stand_in_font):
    """The check above can fail: a printed lab.label(...) (figure text, English where no font can draw it) is reported.
    With the installed fonts hidden, lab's shipped subset still draws Chinese, so the run without any font also takes
    the shipped file away (its first cell, which prints nothing)."""
    cells = ['import lab\nlab.set_language("zh")', 'print(lab.tr("aging, 1 s per level"))', 'print(lab.label("aging, 1 s per level"))']
    no_font = 'import pathlib, lab.fonts\nlab.fonts.SHIPPED_FONT = pathlib.Path("/no-such-font.otf")\n'
    runs = {}
    for state, env in (("hidden", font_env("hidden")), ("cjk", stand_in_font)):
        sources = [no_font + cells[0], *cells[1:]] if state == "hidden" else cells
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
        NotebookClient(nb, timeout=60, kernel_name="python3").execute(env=env)
        nbformat.write(nb, tmp_path / f"{state}.ipynb")
        runs[state] = tmp_path / f"{state}.ipynb"
    [difference] = font_dependent(runs["hidden"], runs["cjk"])
    assert difference.startswith("code cell 2:") and "aging, 1 s per level" in difference and "aging_1s（老化，每级 1 s）" in difference


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
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= get(name).figures.plots   # its assignment.toml
    texts = "".join(o.get("text", "") for o in outputs)
    for task in editions.answer_ids(editions.nbgrader_source(name)):
        assert re.search(f"TODO {task[-1]}[:：]", texts) and re.search(PASSED[lang], texts)


@pytest.mark.slow
@pytest.mark.parametrize("name,lang", EDITIONS)
def test_student_edition_has_no_solution_or_hidden_code(name, lang):
    text = student_path(name, lang).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN", "_hidden_", "Explanations of TODO"):
        assert marker not in text
    snippets = hidden_snippets(editions.nbgrader_source(name))
    assert len(snippets) >= len(get(name).todos)
    assert not [line for line in snippets if json.dumps(line)[1:-1] in text]
    for gid, answer in editions.reference_answers(name).items():
        body = re.search(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", editions.cells_by_grade_id(editions.read_master(name, lang))[gid][0].source, re.S)
        solution_lines = [line.strip() for line in body.group(1).splitlines() if len(line.strip()) > 25]
        assert not [line for line in solution_lines if json.dumps(line)[1:-1] in text], f"{gid} leaks its solution"


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_solved_edition_has_no_hidden_tests(name, lang):
    text = solved_path(name, lang).read_text()
    assert "HIDDEN" not in text and "_hidden_" not in text
    assert not [line for line in hidden_snippets(editions.nbgrader_source(name)) if json.dumps(line)[1:-1] in text]


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_one_task_id_everywhere(name, lang):
    """Heading, grade_id, decorator, test names and checks' messages agree for every TODO."""
    nb = editions.read_master(name, lang)
    student = editions.cells_by_grade_id(nbformat.read(student_path(name, lang), as_version=4))
    headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("### TODO")]
    answers = editions.answer_ids(nb)
    assert answers == [f"todo{n}" for n in range(1, len(answers) + 1)]
    for n in range(1, len(answers) + 1):
        assert any(h.startswith(f"### TODO {n} ") for h in headings)
        answer = student[f"todo{n}"][0].source
        assert f'@todo("TODO {n}")' in answer and "raise NotImplementedError()" in answer
        tests = student[f"todo{n}_tests"][0].source
        names = re.findall(r"def (test_\w+)", tests)
        assert names and all(name.startswith(f"test_todo{n}_") for name in names)
        assert set(re.findall(r"\"(TODO \d)", tests)) == {f"TODO {n}"}


@pytest.mark.slow
@pytest.mark.parametrize("name,lang", EDITIONS)
def test_stub_matches_reference_outside_the_solution(name, lang):
    """Sync: the starter keeps the reference's signature, docstring and given lines."""
    student = editions.cells_by_grade_id(nbformat.read(student_path(name, lang), as_version=4))
    source = editions.cells_by_grade_id(editions.nbgrader_source(name, lang))
    for gid in editions.answer_ids(editions.nbgrader_source(name)):
        expected = re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION\n",
                          lambda m: f"{m.group(1)}# YOUR CODE HERE\n{m.group(1)}raise NotImplementedError()\n",
                          source[gid][0].source + "\n", flags=re.S).rstrip("\n")
        assert student[gid][0].source == expected


@pytest.mark.parametrize("name,lang", EDITIONS)
def test_notebooks_download_nothing_outside_the_setup_code(name, lang):
    """Only the set-up code may install (and only when lab is missing); no other cell touches the network."""
    setup = course.setup_code(language=lang)
    for path in (student_path(name, lang), solved_path(name, lang)):
        sources = [c.source for c in nbformat.read(path, as_version=4).cells]
        assert sum(setup in s for s in sources) == 1, f"{path}: the set-up code must appear exactly once"
        text = "\n".join(sources).replace(setup, "")
        assert not re.search(r"pip install|urlopen|requests\.get|https?://|wget|curl ", text), path
    assert not re.search(r"pip install|https?://", editions.master_path(name).read_text())
