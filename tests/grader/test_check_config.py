"""The instructor's install step (README, "Inside your own nbgrader course") in a fresh venv, and the command that
says whether a course's nbgrader_config.py loads the kit (grader/check_config.py).

No index at test time: the fresh venv sees the test venv's site-packages (nbgrader, setuptools) through a .pth
file, which runs none of that folder's own .pth files, so the kit installed there stays invisible; the README's
step then runs with pip's offline flags added."""
import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT

from grader.build import PLUGIN_LINES  # noqa: E402 - the lines make nbgrader-course writes

pytestmark = pytest.mark.slow   # every test here starts a process or takes seconds (tests/conftest.py)

COURSE_CONFIG = (ROOT / "grader" / "nbgrader_config.py").read_text()


def course(folder: Path, text: str | None) -> Path:
    folder.mkdir(parents=True)
    if text is not None:
        (folder / "nbgrader_config.py").write_text(text)
    return folder


def env(**extra) -> dict:
    """This environment without PYTHONPATH, and without the machine's Jupyter config folders: an instructor's
    /etc/jupyter/nbgrader_config.py (nbgrader's docs put the exchange there) is loaded by every nbgrader command and
    would change what the check finds (test_a_machine_wide_config_counts_and_is_left_out_here)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"JUPYTER_NO_CONFIG": "1"} | extra


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
    return shlex.split(steps[0].replace("<repo>", str(ROOT)))


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
    assert step[:3] == ["pip", "install", "-e"] and step[3] == f"{ROOT}[instructor]", step
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


def test_the_check_fails_on_a_setting_under_its_old_name(tmp_path):
    """nbgrader would load the kit and then stop `nbgrader autograde` on c.SandboxedAutograde.budget: said here first."""
    text = COURSE_CONFIG + PLUGIN_LINES + "\nc.SandboxedAutograde.budget = 45.0\n"
    result = check(sys.executable, course(tmp_path / "course", text), PYTHONPATH=str(ROOT))
    assert result.returncode == 1 and "would stop on its settings" in result.stderr, result.stdout + result.stderr
    assert "c.SandboxedAutograde.budget is now called c.SandboxedAutograde.feedback_wall" in result.stderr
    fixed = check(sys.executable, course(tmp_path / "fixed", text.replace(".budget", ".feedback_wall")), PYTHONPATH=str(ROOT))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_the_check_refuses_a_folder_that_is_not_one(tmp_path):
    result = check(sys.executable, tmp_path, PYTHONPATH=str(ROOT))
    assert result.returncode == 1  # an empty folder: no config file
    missing = subprocess.run([sys.executable, str(ROOT / "grader" / "check_config.py"), str(tmp_path / "nope")],
                             capture_output=True, text=True, timeout=600)
    assert missing.returncode == 2 and "is not a folder" in missing.stderr


def closure(roots: list[str]) -> set[str]:
    """The distributions `roots` (requirement strings, as pyproject.toml states them) install here, with theirs."""
    from importlib.metadata import PackageNotFoundError, requires
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen, done, todo = set(), set(), [(Requirement(r), "") for r in roots]
    while todo:
        req, asked = todo.pop()   # asked: the extra of the requirement that brought this one
        if req.marker and not req.marker.evaluate({"extra": asked}):
            continue
        name = canonicalize_name(req.name)
        seen.add(name)
        for extra in {"", *req.extras} - {e for n, e in done if n == name}:   # each of its extras once
            done.add((name, extra))
            try:
                todo += [(Requirement(r), extra) for r in requires(name) or []]
            except PackageNotFoundError:
                pass
    return seen


PROBE = """
import json, os, sys
import grader.nbgrader_plugin, grader.check_config
from importlib.metadata import packages_distributions

def vendored(module):
    # setuptools' private copies (setuptools/_vendor: jaraco, more_itertools, ...) come with setuptools
    places = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or [])]
    return any(os.sep + "_vendor" + os.sep in str(p) + os.sep for p in places)

tops = {m.split(".")[0] for m, module in list(sys.modules.items()) if module is not None and not vendored(module)}
tops = tops - set(sys.stdlib_module_names) - {"grader", "lab", "policybench"}
owners = packages_distributions()
print(json.dumps(sorted({d for top in tops for d in owners.get(top, [])})))
"""


def plugin_distributions() -> set[str]:
    """The installed distributions whose modules `grader.nbgrader_plugin` and its check import, asked of a fresh
    process (the kit's own packages, the standard library and setuptools' vendored copies left out). The child
    also maps modules to distributions: in a full run this process has imported setuptools, which puts its
    _vendor folder on sys.path, and its private jaraco and more_itertools then looked like requirements."""
    from packaging.utils import canonicalize_name

    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=True)
    return {canonicalize_name(d) for d in json.loads(done.stdout.splitlines()[-1])}


def test_the_install_steps_extra_covers_every_module_the_plugin_imports():
    """An instructor with nbgrader alone ran `pip install -e <repo>` and the plugin failed on `import jupytext`: the
    README's step now names the `instructor` extra, and what it installs (with lab's own dependencies) covers every
    distribution the plugin imports. Shown failing on the extra without jupytext."""
    import tomllib

    import setuptools  # noqa: F401 -- as a full run has by now: its _vendor folder joins sys.path (CI failed so)

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["instructor"]
    needed = plugin_distributions()
    assert {"nbgrader", "jupytext", "nbformat"} <= needed, needed   # the probe sees what the plugin imports
    assert needed <= closure(project["dependencies"] + extra), needed - closure(project["dependencies"] + extra)
    without = [r for r in extra if not r.startswith("jupytext")]
    assert "jupytext" in needed - closure(project["dependencies"] + without)


def test_a_machine_wide_config_counts_and_is_left_out_here(tmp_path):
    """A config folder of the machine's (JUPYTER_CONFIG_PATH stands in for /etc/jupyter) is loaded as nbgrader loads
    it, and named; these tests run without such folders, so no instructor's file changes their answer."""
    machine = tmp_path / "etc-jupyter"
    machine.mkdir()
    (machine / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "elsewhere"\n')
    folder = course(tmp_path / "course", None)
    seen = check(sys.executable, folder, PYTHONPATH=str(ROOT), JUPYTER_NO_CONFIG="", JUPYTER_CONFIG_PATH=str(machine))
    assert seen.returncode == 1 and str(machine / "nbgrader_config.py") in seen.stderr, seen.stderr
    assert "does not call configure(c)" in seen.stderr
    alone = check(sys.executable, folder, PYTHONPATH=str(ROOT), JUPYTER_CONFIG_PATH=str(machine))
    assert alone.returncode == 1 and "no nbgrader_config.py was loaded" in alone.stderr, alone.stderr
