"""The instructor's install step (README, "Inside your own nbgrader course") in a fresh venv, and the command that
says whether a course's nbgrader_config.py loads the kit (grader/check_config.py).

No index at test time: the fresh venv sees the test venv's site-packages (nbgrader, setuptools) through a .pth
file, which runs none of that folder's own .pth files, so the kit installed there stays invisible; the README's
step then runs with pip's offline flags added."""
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT

PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"
COURSE_CONFIG = (ROOT / "grader" / "nbgrader_config.py").read_text()


def course(folder: Path, text: str | None) -> Path:
    folder.mkdir(parents=True)
    if text is not None:
        (folder / "nbgrader_config.py").write_text(text)
    return folder


def env(**extra) -> dict:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | extra


def check(python, folder: Path, **extra) -> subprocess.CompletedProcess:
    """The README's check command, as a script so that it runs even where the kit is not installed."""
    return subprocess.run([str(python), str(ROOT / "grader" / "check_config.py"), str(folder)], cwd=folder,
                          capture_output=True, text=True, env=env(**extra), timeout=900)


def readme_install_step() -> list[str]:
    """The one `pip install -e <repo>` line of the README's nbgrader section, <repo> filled in."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Inside your own nbgrader course"):]
    section = section[:section.index("\n### ", 10)]
    steps = re.findall(r"^pip install .*$", section, re.M)
    assert len(steps) == 1, steps
    return steps[0].replace("<repo>", str(ROOT)).split()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True, timeout=600)
    python = folder / "venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "instructor_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, folder


def test_the_readme_install_step_makes_a_course_load_the_kit_in_a_fresh_venv(fresh):
    python, folder = fresh
    kit = course(folder / "course", COURSE_CONFIG + PLUGIN_LINES)
    before = check(python, kit)
    assert before.returncode == 1, before.stdout + before.stderr
    assert "No module named 'grader'" in before.stderr and "pip install -e" in before.stderr
    assert "grade with stock nbgrader" in before.stderr

    step = readme_install_step()
    assert step[:3] == ["pip", "install", "-e"]
    pip = [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps", *step[2:]]
    installed = subprocess.run(pip, cwd=folder, capture_output=True, text=True, env=env(), timeout=900)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    after = check(python, kit)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "ok: nbgrader in" in after.stdout and "FeedbackTodoExporter" in after.stdout and str(ROOT) in after.stdout
    imported = subprocess.run([str(python), "-P", "-c", "import grader.nbgrader_plugin, lab; print(lab.__file__)"],
                              cwd=folder, capture_output=True, text=True, env=env(), timeout=600)
    assert imported.returncode == 0 and imported.stdout.startswith(str(ROOT)), imported.stderr


@pytest.mark.parametrize("config, says", [
    (COURSE_CONFIG, "does not call configure(c)"),                                           # stock nbgrader
    (COURSE_CONFIG + PLUGIN_LINES.replace("grader.", "grader_typo."), "ignores a config file that raises"),
    (COURSE_CONFIG + "\nc.Autograde.autograde_preprocessors = []\n" + PLUGIN_LINES[:PLUGIN_LINES.index("configure(c)")], "configure(c)"),
    (None, "no nbgrader_config.py was loaded"),
])
def test_the_check_fails_with_a_reason_where_nbgrader_would_grade_stock(tmp_path, config, says):
    result = check(sys.executable, course(tmp_path / "course", config), PYTHONPATH=str(ROOT))
    assert result.returncode == 1 and says in result.stderr, result.stdout + result.stderr
    assert "would grade with stock nbgrader" in result.stderr and not result.stdout


def test_the_check_passes_where_the_kit_is_importable(tmp_path):
    result = check(sys.executable, course(tmp_path / "course", COURSE_CONFIG + PLUGIN_LINES), PYTHONPATH=str(ROOT))
    assert result.returncode == 0 and "SandboxedAutograde in place of Execute" in result.stdout, result.stderr


def test_the_check_refuses_a_folder_that_is_not_one(tmp_path):
    result = check(sys.executable, tmp_path, PYTHONPATH=str(ROOT))
    assert result.returncode == 1  # an empty folder: no config file
    missing = subprocess.run([sys.executable, str(ROOT / "grader" / "check_config.py"), str(tmp_path / "nope")],
                             capture_output=True, text=True, timeout=600)
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
