"""The cloud path: only the .ipynb files, in a bare kernel with older pandas/matplotlib/numpy and no `lab`.

`make test` and `make e2e-cloud` build that venv at install time (build/cloud-venv/<versions>/) and set
CLOUD_PYTHON. The set-up cell then installs lab from a local wheelhouse (--no-index): nothing is downloaded.
"""
import json
import os
import re
import shutil
import subprocess

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import FONT_STATES, ROOT
from grader import bundle, course, editions, pins, translation
from grader.assignment import get
from grader.paths import assignment_names
from lab import __version__
from lab.fonts import HIDE_ENV

CLOUD_PYTHON = os.environ.get("CLOUD_PYTHON")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CLOUD_PYTHON, reason="needs the cloud-like venv: run `make e2e-cloud`")]
NAMES = assignment_names()
EDITIONS = [(name, lang) for lang in ("en", "zh") for name in NAMES if lang in translation.languages(name)]
# zh editions run with the CJK fonts as installed and hidden (a Colab or ModelScope image has none); English ones never look.
SOLVED = [(name, lang, fonts) for name, lang in EDITIONS for fonts in (FONT_STATES if lang == "zh" else FONT_STATES[:1])]
PASSED = {"en": r"visible checks? passed", "zh": r"项可见检查(?:全部)?通过"}   # lab.passed: "1 visible check passed."
# The set-up cell speaks its edition's language (grader/course.py SETUP_TEXT): lab.tr cannot run before lab is there.
INSTALLED = {"en": "Installing the course package `lab`", "zh": "安装课程包 `lab`"}
FAILED = {"en": "Could not install the course package `lab`", "zh": "无法从"}


def cloud_pip(*args):
    return subprocess.run([CLOUD_PYTHON, "-m", "pip", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    """A folder holding only the course wheel; its dependencies are already in the cloud venv."""
    house = tmp_path_factory.mktemp("wheelhouse")
    bundle.build_wheel(house)
    return house


@pytest.fixture()
def cloud_kernel(tmp_path, monkeypatch):
    """Returns start(find_links): a kernelspec on the bare venv, with lab uninstalled and pip kept offline."""
    monkeypatch.delenv("PYTHONPATH", raising=False)

    def start(find_links, fonts="installed"):
        cloud_pip("uninstall", "--yes", "--quiet", course.DIST_NAME)
        probe = subprocess.run([CLOUD_PYTHON, "-c", "import lab"], capture_output=True, cwd=tmp_path)
        assert probe.returncode != 0, "the cloud venv must start without lab"
        spec = tmp_path / "jupyter" / "kernels" / "cloud"
        spec.mkdir(parents=True, exist_ok=True)
        env = {course.SOURCE_ENV: f"{course.DIST_NAME}=={__version__}", "PIP_NO_INDEX": "1",
               "PIP_FIND_LINKS": str(find_links), "PYTHONNOUSERSITE": "1",
               "MPLBACKEND": "module://matplotlib_inline.backend_inline", HIDE_ENV: "1" if fonts == "hidden" else "0"}
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [CLOUD_PYTHON, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "cloud-like", "language": "python", "env": env}))
        monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
        return "cloud"
    return start


def only_the_notebook(src, folder):
    """An empty folder with one .ipynb in it, as a Colab upload gives it."""
    folder.mkdir()
    shutil.copy(src, folder)
    assert [p.name for p in folder.iterdir()] == [src.name]
    return nbformat.read(folder / src.name, as_version=4)


def run(nb, folder, kernel, allow_errors):
    # a wall limit for a hang only: the heaviest cell (03, aging rates) needs ~20 s alone, far more on a loaded machine
    NotebookClient(nb, timeout=900, kernel_name=kernel, allow_errors=allow_errors,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def errors(nb):
    """(cell index, grade_id, ename, evalue) of each cell that raised."""
    return [(i, editions.grade_id(c), o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.outputs if o.output_type == "error"]


def text_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs)


def setup_cell(nb):
    """The first code cell (tests/grader/test_course_setup.py checks that it holds the set-up code)."""
    return next(c for c in nb.cells if c.cell_type == "code")


def test_cloud_venv_is_older_than_our_pins_and_has_no_grader_tools():
    versions = dict(line.split("==") for line in cloud_pip("freeze").split() if "==" in line)
    versions = {k.lower(): v for k, v in versions.items()}
    ours = pins.pins(pins.REQUIREMENTS)
    for name in ("pandas", "matplotlib", "numpy"):
        assert tuple(map(int, versions[name].split(".")[:2])) < tuple(map(int, ours[name].split(".")[:2])), name
    assert not {"nbgrader", "pytest", "hypothesis", "jupytext", course.DIST_NAME} & set(versions)


@pytest.mark.parametrize("name", NAMES)
def test_student_notebook_alone_runs_to_its_todos(name, wheelhouse, cloud_kernel, tmp_path):
    """Every cell runs as in the instructor's kernel; the set-up cell installed lab; blank TODOs fail with a TODO's message."""
    folder = tmp_path / "alone"
    nb = run(only_the_notebook(ROOT / "notebooks" / f"{name}.ipynb", folder), folder, cloud_kernel(wheelhouse), True)
    first = setup_cell(nb)
    assert not [o for o in first.outputs if o.output_type == "error"]
    assert INSTALLED["en"] in text_of(first) and f"Using lab {__version__}" in text_of(first)
    local = run(nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4), tmp_path, "python3", True)
    assert errors(nb) == errors(local), "the cloud kernel must behave exactly like the instructor's"
    checks = editions.test_ids(editions.nbgrader_source(name))
    failed = {gid: (ename, evalue) for _, gid, ename, evalue in errors(nb)}
    for gid in checks:
        ename, evalue = failed[gid]
        assert ename == "NotImplementedError" and "is not implemented yet" in evalue and "TODO " in evalue, (gid, evalue)
    first_check = min(i for i, c in enumerate(nb.cells) if editions.grade_id(c) in checks)
    assert all(i >= first_check for i, *_ in errors(nb)), "a given cell before the first TODO check failed"


def printed_lines(nb) -> list[str]:
    """What the code cells after the set-up cell print (stdout), line by line."""
    cells = [c for c in nb.cells if c.cell_type == "code"][1:]
    return "".join(o.get("text", "") for c in cells for o in c.outputs if o.get("name") == "stdout").splitlines()


@pytest.mark.parametrize("name, lang, fonts", SOLVED)
def test_solved_notebook_alone_runs_clean(name, lang, fonts, wheelhouse, cloud_kernel, tmp_path):
    """Both editions: a zh student on Colab or ModelScope opens notebooks/zh/ in the same bare kernel, and reads
    what the committed edition prints, with a CJK font or without."""
    folder = tmp_path / "alone"
    path = ROOT / "solutions" / ("" if lang == "en" else lang) / f"{name}.ipynb"
    nb = run(only_the_notebook(path, folder), folder, cloud_kernel(wheelhouse, fonts), False)
    assert not errors(nb)
    committed = printed_lines(nbformat.read(path, as_version=4))
    assert printed_lines(nb) == committed, "printed differently from the committed edition"
    assert INSTALLED[lang] in text_of(setup_cell(nb))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= get(name).figures.plots   # its assignment.toml
    assert sum(bool(re.search(PASSED[lang], "".join(o.get("text", "")))) for o in outputs) >= len(get(name).todos)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_the_wheelhouse_the_setup_cell_fails_with_one_clear_message(lang, cloud_kernel, tmp_path):
    empty = tmp_path / "empty-wheelhouse"
    empty.mkdir()
    folder = tmp_path / "alone"
    nb = only_the_notebook(ROOT / "notebooks" / ("" if lang == "en" else lang) / f"{NAMES[-1]}.ipynb", folder)
    first = setup_cell(nb)
    nb.cells = nb.cells[:nb.cells.index(first) + 1]
    with pytest.raises(Exception) as info:
        run(nb, folder, cloud_kernel(empty), False)
    assert FAILED[lang] in str(info.value) and "ImportError" in str(info.value)
    (error,) = [o for o in first.outputs if o.output_type == "error"]
    assert error.ename == "ImportError" and error.evalue.startswith(FAILED[lang])
    if lang == "zh":  # a Chinese student reads Chinese, from the first line the cell prints to its error
        from english import english_sentences
        assert INSTALLED["zh"] in text_of(first) and english_sentences(error.evalue) == []
    assert course.SOURCE_ENV not in error.evalue and f"{course.DIST_NAME}==" in error.evalue  # names the source tried
    trace = "\n".join(error.traceback)
    assert "During handling of the above exception" not in trace and "make test" not in trace
