"""grader/build.py's `course` command (make nbgrader-course): a new stock nbgrader course that grades with the kit."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from grader import build

NAME = "01_continuous_batching"


def check_config(folder):
    """The README's check that nbgrader will use the kit, as an instructor runs it in the course folder."""
    return subprocess.run([sys.executable, "-m", "grader.check_config", str(folder)], cwd=folder, capture_output=True,
                          text=True, timeout=900, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "JUPYTER_NO_CONFIG": "1",
                                                       "HOME": str(folder)})


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("courses") / "new"
    assert build.main(["course", NAME, "--out", str(folder)]) == 0
    return folder


@pytest.mark.slow
def test_the_course_has_the_source_the_release_a_gradebook_and_the_kits_two_lines(course):
    source = json.loads((course / "source" / NAME / f"{NAME}.ipynb").read_text())
    release = json.loads((course / "release" / NAME / f"{NAME}.ipynb").read_text())
    grade_ids = {c["metadata"].get("nbgrader", {}).get("grade_id") for c in release["cells"]}
    assert {"todo1", "todo1_tests", "todo4"} <= grade_ids
    assert "### BEGIN SOLUTION" in "".join("".join(c["source"]) for c in source["cells"])
    assert "### BEGIN SOLUTION" not in "".join("".join(c["source"]) for c in release["cells"])
    assert (course / "gradebook.db").is_file()
    assert (course / "nbgrader_config.py").read_text().endswith(build.PLUGIN_LINES)


@pytest.mark.slow
def test_the_readmes_check_says_nbgrader_will_use_the_kit(course):
    result = check_config(course)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout + result.stderr


def test_the_readme_gives_the_same_two_lines():
    readme = (ROOT / "README.md").read_text()
    assert "```python" + build.PLUGIN_LINES + "```" in readme


def test_a_folder_with_files_in_it_is_refused_and_left_alone(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(SystemExit, match="is not an empty folder"):
        build.main(["course", NAME, "--out", str(tmp_path)])
    assert [p.name for p in tmp_path.iterdir()] == ["nbgrader_config.py"]
    assert (tmp_path / "nbgrader_config.py").read_text() == "c = get_config()\n"


def test_a_course_without_a_folder_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        build.main(["course", NAME])
    assert stop.value.code == 2 and "--out DIR" in capsys.readouterr().err


@pytest.mark.slow
def test_the_zh_course_is_the_chinese_edition(tmp_path):
    build.main(["course", NAME, "--out", str(tmp_path / "zh"), "--language", "zh"])
    source = json.loads((tmp_path / "zh" / "source" / NAME / f"{NAME}.ipynb").read_text())
    assert "连续批处理" in "".join(source["cells"][0]["source"])


@pytest.mark.slow
def test_make_nbgrader_course_runs_this_command():
    dry = subprocess.run(["make", "-n", "-o", ".venv/.installed", "nbgrader-course", f"NAME={NAME}", "DIR=x", "LANGUAGE=zh"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert f"-m grader.build course {NAME} --out x --language zh" in dry.stdout, dry.stdout + dry.stderr


def test_a_file_in_the_way_is_refused_and_a_failed_build_leaves_nothing(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SystemExit, match="not an empty folder"):
        build.main(["course", NAME, "--out", str(tmp_path / "afile")])

    def broken(*args, **kw):
        raise RuntimeError("generate_assignment failed")
    monkeypatch.setattr(build, "nbgrader", broken)
    with pytest.raises(RuntimeError, match="generate_assignment failed"):
        build.main(["course", NAME, "--out", str(tmp_path / "half")])
    assert not (tmp_path / "half").exists()  # so the next try is not refused as "not empty"


def test_a_course_is_one_edition(capsys):
    with pytest.raises(SystemExit):
        build.main(["course", NAME, "--out", "x", "--language", "en", "--language", "zh"])
    assert "one --language" in capsys.readouterr().err
