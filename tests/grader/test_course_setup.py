"""course.toml is the one setting: it writes every notebook's set-up code and the badges; bad values are refused."""
import contextlib
import io
import re

import nbformat
import pytest

from conftest import ROOT
from grader import bundle, course, editions, translation
from grader.paths import assignment_names
from lab import __version__

NAMES = assignment_names()


def write_toml(tmp_path, body):
    path = tmp_path / "course.toml"
    path.write_text(body)
    return path


def first_code_cell(path):
    return next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


@pytest.mark.parametrize("name", NAMES)
def test_every_edition_starts_with_the_setup_code(name):
    assert editions.master_path(name).read_text().count(course.SETUP_MARKER) == 1
    for lang in translation.languages(name):
        for folder in ("notebooks", "solutions"):
            path = ROOT / folder / ("" if lang == "en" else lang) / f"{name}.ipynb"
            cell = first_code_cell(path)
            assert cell.source.startswith(course.setup_code(language=lang)), f"{path}: first code cell is not the set-up cell"
            assert "grading-setup" in editions.tags(cell)


def test_the_setup_code_differs_between_editions_in_its_sentences_only():
    """The zh set-up cell runs before lab (and lab.tr) exists, so its sentences are written into it."""
    en, zh = course.setup_code(), course.setup_code(language="zh")
    assert translation.same_code(editions.strip_magics(en), editions.strip_magics(zh))
    assert "正在使用 lab" in zh and "无法从" in zh and "Using lab" not in zh and "Could not" not in zh


def test_setup_code_installs_only_when_lab_is_missing_and_non_editably():
    code = course.setup_code()
    before, _, after = code.partition("except ImportError:")
    assert "import lab" in before and "%pip install" not in before
    (line,) = [line for line in code.splitlines() if "%pip" in line and "install" in line and "`" not in line]
    assert line.strip() == '%pip install --quiet "{LAB_PIP_SOURCE}"'  # no -e: an editable install needs a restart
    assert f'os.environ.get("{course.SOURCE_ENV}")' in code and "make test" not in code


def test_setup_code_runs_as_plain_python_where_lab_is_installed():
    """What the grader replays (magics blanked): it imports lab, prints the version, installs nothing."""
    ns, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(editions.strip_magics(course.setup_code()), "<setup>", "exec"), ns)
    assert ns["lab"].__version__ == __version__
    assert out.getvalue() == f"Using lab {__version__}\n"


def test_default_source_is_the_student_repositorys_wheel_and_badges_follow_the_repo(tmp_path):
    settings = course.load(write_toml(tmp_path, '[student]\nrepo = "acme/sched-course"\nbranch = "fall"\n'))
    wheel_url = f"https://raw.githubusercontent.com/acme/sched-course/fall/dist/decode_scheduling_lab-{__version__}-py3-none-any.whl"
    assert settings.pip_source == wheel_url
    assert f'or "{wheel_url}"' in course.setup_code(settings)
    readme = bundle.student_readme(settings)
    for name in NAMES:
        assert f"(https://colab.research.google.com/github/acme/sched-course/blob/fall/notebooks/{name}.ipynb)" in readme
        assert f"(https://mybinder.org/v2/gh/acme/sched-course/fall?labpath=notebooks%2F{name}.ipynb)" in readme
    assert "your-org" not in readme


def test_an_index_source_overrides_the_wheel(tmp_path):
    settings = course.load(write_toml(tmp_path, '[student]\nrepo = "a/b"\nbranch = "main"\n'
                                                'lab_pip_source = "decode-scheduling-lab==0.1.0"\n'))
    assert 'or "decode-scheduling-lab==0.1.0"' in course.setup_code(settings)


def test_the_committed_editions_use_the_committed_setting():
    settings = course.load()
    for name in NAMES:
        assert f'or "{settings.pip_source}"' in first_code_cell(ROOT / "notebooks" / f"{name}.ipynb").source


@pytest.mark.parametrize("body, complaint", [
    ('[student]\nbranch = "main"\n', "needs repo and branch"),
    ('[student\nrepo = "a/b"', "needs repo and branch"),
    ('[student]\nrepo = "https://github.com/a/b"\nbranch = "main"\n', "owner/name"),
    ('[student]\nrepo = "a/b"\nbranch = "main"\nlab_pip_source = "lab; rm -rf ~"\n', "may not contain spaces"),
    ('[student]\nrepo = "a/b"\nbranch = "main"\nlab_pip_source = "x{y}"\n', "may not contain spaces"),
])
def test_bad_settings_are_refused_with_the_reason(tmp_path, body, complaint):
    with pytest.raises(course.CourseConfigError, match=re.escape(complaint)):
        course.load(write_toml(tmp_path, body))


def test_missing_settings_file_and_missing_marker_are_explained(tmp_path):
    with pytest.raises(course.CourseConfigError, match="missing"):
        course.load(tmp_path / "nope.toml")
    with pytest.raises(course.CourseConfigError, match="must contain the line"):
        course.expand("import lab\n")


def test_student_facing_text_has_no_make_test_advice():
    files = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "lab").glob("*.py")]
    assert len(files) >= 4
    assert not [p for p in files if "make test" in p.read_text()]
