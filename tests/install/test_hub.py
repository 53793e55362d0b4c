"""The JupyterHub images (deploy/, README "JupyterHub images") without docker: the students' wheel holds lab only, the
images' pins agree with the repository's, and fresh venvs installed as each Dockerfile installs give what it promises.

The venv tests (slow) install deploy/*/requirements.txt from the package index or pip's cache: install time, which
the brief for this test allows; everything they then run is offline. Each check is shown failing on a broken input.
"""
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from grader import check_pins, course, hub, pins
from grader.bundle import released
from grader.paths import assignment_names
from lab import __version__

SETUP_MARK = f'LAB_PIP_SOURCE = os.environ.get("{course.SOURCE_ENV}")'
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


# --- the wheel -------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return hub.build_student_wheel(tmp_path_factory.mktemp("hub"))


def doctored(wheel, folder, add=(), drop=(), change=None):
    """A copy of `wheel` with members added (name, text), dropped, or METADATA changed by `change`."""
    out = folder / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name in drop:
                continue
            if change and name.endswith(".dist-info/METADATA"):
                data = change(data.decode()).encode()
            dst.writestr(name, data)
        for name, text in add:
            dst.writestr(name, text)
    return out


@pytest.mark.slow
def test_the_student_wheel_holds_lab_and_nothing_of_the_kit(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "lab/__init__.py" in names and "lab/engine/scheduler.py" in names
    assert sorted(n for n in names if n.startswith("lab/")) == sorted({   # the sources, the CJK subset and its licence
        p.relative_to(ROOT).as_posix() for p in [*(ROOT / "lab").rglob("*.py"), *(ROOT / "lab" / "cjk_font").glob("*.otf"),
                                                 ROOT / "lab" / "cjk_font" / "OFL.txt"]})
    assert {"lab/cjk_font/LabCJKSubset-Regular.otf", "lab/cjk_font/OFL.txt"} <= set(names)
    assert not [n for n in names if n.startswith(("grader/", "policybench/", "solutions/", "notebooks/"))]
    assert not [n for n in names if re.search(r"solution|reference|master|suite\.py|mutants", n, re.I)]
    assert hub.wheel_problems(wheel) == []


@pytest.mark.slow
@pytest.mark.parametrize("add, drop, change, says", [
    ([("grader/__init__.py", "")], (), None, "grader/__init__.py: outside lab/"),
    ([("grader/assignments/01_continuous_batching/suite.py", "HIDDEN = 1\n")], (), None, "suite.py: outside lab/"),
    ([("lab/solutions.py", "def answer(): pass\n")], (), None, "lab/solutions.py: the kit's or an answer's name"),
    ([("lab/assignments/x.py", "")], (), None, "the kit's or an answer's name"),
    ([("lab/extra.py", "print('not in lab/')\n")], (), None, "lab/extra.py: not this checkout's"),
    ((), ("lab/__init__.py",), None, "has no lab/__init__.py"),
    ((), (), lambda meta: meta + "Requires-Dist: nbgrader>=0.9\n", "requires nbgrader"),
])
def test_the_wheel_check_refuses_a_wheel_that_may_not_go_to_students(wheel, tmp_path, add, drop, change, says):
    bad = doctored(wheel, tmp_path, add, drop, change)
    problems = hub.wheel_problems(bad)
    assert any(says in p for p in problems), problems
    cli = subprocess.run([sys.executable, "-m", "grader.hub", "check-wheel", str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert cli.returncode == 1 and says in cli.stderr, cli.stdout + cli.stderr


@pytest.mark.slow
def test_the_wheel_check_passes_the_built_wheel_and_refuses_what_is_not_one(wheel, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "grader.hub", "check-wheel", str(wheel)], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0 and "holds lab only" in ok.stdout, ok.stderr
    (tmp_path / "x.whl").write_text("not a zip")
    bad = subprocess.run([sys.executable, "-m", "grader.hub", "check-wheel", str(tmp_path / "x.whl")], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "not a wheel" in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "grader.hub", "check-wheel", str(tmp_path / "no.whl")], capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 2 and "is not a file" in missing.stderr


@pytest.mark.slow
def test_a_plain_wheel_of_the_repository_would_hold_grader(tmp_path):
    """Why the image's wheel comes from grader/bundle.py: `pip wheel <repo>` packs both lab and grader (pyproject.toml).
    Built from a copy, as pip builds in the source tree."""
    src = tmp_path / "src"
    for folder in ("lab", "grader"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
                           "--wheel-dir", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (plain,) = (tmp_path / "dist").glob("*.whl")
    problems = hub.wheel_problems(plain)
    assert "grader/__init__.py: outside lab/" in problems and "grader/nbgrader_plugin.py: outside lab/" in problems


# --- the pins --------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_images_pins_agree_with_the_repository():
    assert hub.pin_problems() == []
    cli = subprocess.run([sys.executable, "-m", "grader.hub", "pins"], cwd=ROOT, capture_output=True, text=True)
    assert cli.returncode == 0 and cli.stdout.startswith("ok"), cli.stderr


@pytest.fixture()
def deploy_copy(tmp_path, monkeypatch):
    """A copy of deploy/ that pin_problems reads instead."""
    copy = tmp_path / "deploy"
    shutil.copytree(ROOT / "deploy", copy)
    monkeypatch.setattr(hub, "DEPLOY", copy)
    monkeypatch.setattr(hub, "HUB_LOCK", copy / "hub.lock")
    return copy


def edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("file, old, new, says", [
    ("student/requirements.txt", "numpy==2.4.6", "numpy==2.4.5", "numpy==2.4.5, but the repository pins numpy==2.4.6"),
    ("student/requirements.txt", "jupyterlab==4.6.6\n", "jupyterlab==4.6.6\nnbgrader==0.9.6\n", "nbgrader is not for students"),
    ("student/requirements.txt", "pandas==3.1.1\n", "", "no pandas (requirements-student.txt has it)"),
    ("student/requirements.txt", "-c ../hub.lock\n", "", "its options must be"),
    ("student/requirements.txt", "jupyterhub==6.1.1", "jupyterhub==6.0.0", "jupyterhub==6.0.0, but the repository pins"),
    ("student/requirements.txt", "jupyterlab==4.6.6", "jupyterlab>=4", "is not a name==version pin"),
    ("instructor/requirements.txt", "nbgrader==0.9.6\n", "", "no nbgrader"),
    ("instructor/requirements.txt", "jupyterhub==6.1.1\n", "jupyterhub==6.1.1\nleftpad==1.0\n", "leftpad==1.0 is pinned by no lock"),
    ("hub.lock", "jupyterhub==6.1.1\n", "jupyterhub==6.1.1\nnumpy==2.4.6\n", "hub.lock pins numpy, which requirements.lock pins too"),
    ("student/Dockerfile", "ARG PYTHON=3.11", "ARG PYTHON=3.10", "Python 3.10 is not one the lock is checked on"),
    ("instructor/Dockerfile", "ARG PYTHON=3.11", "ARG PYTHON=3.9", "Python 3.9 is not one the lock is checked on"),
])
def test_the_pin_check_names_a_pin_that_disagrees(deploy_copy, file, old, new, says):
    edit(deploy_copy / file, old, new)
    problems = hub.pin_problems()
    assert any(says in p for p in problems), problems


@pytest.mark.slow
def test_make_check_pins_resolves_both_images_and_names_what_no_lock_pins(tmp_path):
    """check_pins.check_image against a folder of made-up wheels: a dependency the locks leave out fails by name."""
    from test_pins import make_wheel  # tests/install/ is on sys.path when pytest collects it
    house = tmp_path / "house"
    house.mkdir()
    make_wheel(house, "good", "1.0")
    make_wheel(house, "hubby", "1.0", depends=["extra>=1"])
    make_wheel(house, "extra", "2.0")
    index = ["--no-index", "--find-links", str(house)]
    (tmp_path / "requirements.lock").write_text("good==1.0\n")
    (tmp_path / "deploy" / "student").mkdir(parents=True)
    req = tmp_path / "deploy" / "student" / "requirements.txt"
    req.write_text("-c ../../requirements.lock\n-c ../hub.lock\ngood==1.0\nhubby==1.0\n")
    locks = (tmp_path / "requirements.lock", tmp_path / "deploy" / "hub.lock")
    locks[1].write_text("hubby==1.0\n")
    with pytest.raises(check_pins.PinError, match=r"do not pin extra==2\.0 \(pulled in by student/requirements.txt on Python 3\.12\)"):
        check_pins.check_image(req, "3.12", locks=locks, index=index)
    locks[1].write_text("hubby==1.0\nextra==2.0\n")
    assert check_pins.check_image(req, "3.12", locks=locks, index=index) == {"good": "1.0", "hubby": "1.0", "extra": "2.0"}
    assert "check_image, hub.requirements(image)" in (ROOT / "grader" / "check_pins.py").read_text()  # make check-pins runs it


# --- the Dockerfiles and their build contexts ------------------------------------------------------------------------

def ignore_patterns(image):
    lines = (ROOT / "deploy" / image / "Dockerfile.dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def in_context(path: str, patterns) -> bool:
    """Does docker send `path` (relative, /-separated) with these .dockerignore patterns? The last match wins."""
    parts = path.split("/")
    keep = True
    for pattern in patterns:
        negate, pat = pattern.startswith("!"), pattern.lstrip("!")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if any(fnmatch.fnmatchcase(p, pat) or (pat.startswith("**/") and fnmatch.fnmatchcase(p.split("/")[-1], pat[3:]))
               for p in prefixes):
            keep = negate
    return keep


def checkout_files():
    skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files:
            if name in skip or name.endswith(".pyc"):  # a worktree's .git is a file
                continue
            yield (Path(folder) / name).relative_to(ROOT).as_posix()


def copies(image):
    """The sources of each COPY of deploy/<image>/Dockerfile, build args filled in."""
    text = (ROOT / "deploy" / image / "Dockerfile").read_text().replace("${LAB_WHEEL}", course.WHEEL_NAME)
    return [src for line in re.findall(r"^COPY (.+)$", text, re.M) for src in line.split()[:-1]]


def test_the_students_build_context_holds_the_pins_and_the_wheel_only():
    patterns = ignore_patterns("student")
    sent = sorted(f for f in [*checkout_files(), f"build/hub/{course.WHEEL_NAME}"] if in_context(f, patterns))
    assert sent == sorted(["requirements.lock", "deploy/hub.lock", "deploy/student/requirements.txt", f"build/hub/{course.WHEEL_NAME}"])
    assert sorted(copies("student")) == sent  # every COPY finds its file, and nothing else is sent
    assert not in_context("grader/assignments/01_continuous_batching/suite.py", patterns)
    assert not in_context("solutions/01_continuous_batching.ipynb", patterns)
    assert in_context("grader/suite.py", ["*", "!grader"])  # the matcher admits what a pattern lets back in


def test_the_instructors_build_context_is_the_checkout_without_builds():
    patterns = ignore_patterns("instructor")
    assert all(in_context(f, patterns) for f in checkout_files())
    for left_out in (".venv/bin/python", "build/hub/x.whl", "dist/x.whl", "grader/__pycache__/x.pyc", ".git"):
        assert not in_context(left_out, patterns), left_out
    assert "." in copies("instructor")


def test_the_makefile_builds_the_images_from_the_checked_wheel():
    make = (ROOT / "Makefile").read_text()
    target = make[make.index("\nhub-images:"):make.index("\nclean:")]
    assert "-m grader.hub pins" in target and "-m grader.hub wheel --out build/hub" in target
    assert "decode_scheduling_lab-$(LAB_VERSION)-py3-none-any.whl" in target and course.WHEEL_NAME.startswith("decode_scheduling_lab-")
    assert str(hub.WHEEL_DIR.relative_to(ROOT)) == "build/hub"
    for image in hub.IMAGES:
        assert f"-f deploy/{image}/Dockerfile" in target
        assert re.search(r"^CMD \[\"jupyterhub-singleuser\"\]$", (ROOT / "deploy" / image / "Dockerfile").read_text(), re.M)
    readme = (ROOT / "README.md").read_text()
    assert "### JupyterHub images" in readme and "make hub-images" in readme


# --- fresh venvs, installed as the images are (slow) ----------------------------------------------------------------

def image_python(image):
    found = pins.which(hub.dockerfile_python(image))
    if not found:
        pytest.skip(f"no Python {hub.dockerfile_python(image)} here (the image's, deploy/{image}/Dockerfile)")
    return found[0]


def clean_env(**extra):
    drop = {"PYTHONPATH", course.SOURCE_ENV}
    return {k: v for k, v in os.environ.items() if k not in drop} | {"PYTHONNOUSERSITE": "1", "MPLBACKEND": "Agg"} | extra


def run(cmd, cwd, timeout=1800, **extra):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, env=clean_env(**extra), timeout=timeout)


def venv(folder, base):
    made = run([base, "-m", "venv", folder], cwd=folder.parent)
    assert made.returncode == 0, made.stderr
    return folder / "bin" / "python"


def pip_install(python, *args):
    proc = run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args], cwd=python.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# Runs a notebook's set-up cell in IPython (as the kernel does) with %pip replaced: a call is recorded, and fails.
SETUP_RUNNER = r'''
import json, sys
from IPython.core.interactiveshell import InteractiveShell
calls = []
def pip(line):
    calls.append(line)
    raise RuntimeError("the set-up cell tried to install lab")
shell = InteractiveShell.instance()
shell.register_magic_function(pip, "line", "pip")
result = shell.run_cell(open(sys.argv[1], encoding="utf-8").read())
lab = sys.modules.get("lab")
print("\n" + json.dumps({"pip": calls, "error": repr(result.error_in_exec) if result.error_in_exec else None,
                         "lab": getattr(lab, "__file__", None)}))
'''


def setup_cell(notebook):
    (cell,) = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code" and SETUP_MARK in c.source]
    return cell.source


def run_setup_cell(python, notebook, folder):
    (folder / "setup_cell.py").write_text(setup_cell(notebook), encoding="utf-8")
    (folder / "runner.py").write_text(SETUP_RUNNER)
    proc = run([python, "-P", folder / "runner.py", folder / "setup_cell.py"], cwd=folder, timeout=600, PIP_NO_INDEX="1")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout


@pytest.mark.slow
def test_the_students_image_imports_lab_from_the_wheel_and_nothing_of_the_kit(wheel, tmp_path):
    python = venv(tmp_path / "student", image_python("student"))
    away = tmp_path / "away"  # outside the checkout: nothing of it on sys.path
    away.mkdir()
    pip_install(python, "-r", ROOT / "deploy" / "student" / "requirements.txt")

    # before the wheel, the set-up cell tries course.toml's source: the check below would see it
    placeholder = course.load().pip_source
    first = released()[0]
    assert f'or "{placeholder}"' in setup_cell(first)
    before, _ = run_setup_cell(python, first, away)
    assert len(before["pip"]) == 1 and placeholder in before["pip"][0], before
    assert before["lab"] is None and "tried to install lab" in (before["error"] or ""), before

    pip_install(python, "--no-deps", wheel)  # as the Dockerfile does, then pip check
    check = run([python, "-m", "pip", "check"], cwd=away)
    assert check.returncode == 0, check.stdout + check.stderr
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=away).stdout.strip()
    imported = run([python, "-P", "-c", "import lab; print(lab.__version__, lab.__file__)"], cwd=away)
    assert imported.returncode == 0 and imported.stdout.split() == [__version__, f"{site}/lab/__init__.py"], imported.stderr
    for name in hub.NOT_FOR_STUDENTS:
        proc = run([python, "-P", "-c", f"import {name}"], cwd=away)
        assert proc.returncode == 1 and f"No module named '{name}'" in proc.stderr, (name, proc.stderr)
    singleuser = run([python.parent / "jupyterhub-singleuser", "--help"], cwd=away, timeout=600)
    assert singleuser.returncode == 0, singleuser.stderr

    for notebook in released():  # every edition's set-up cell: lab is there, nothing is installed
        ran, shown = run_setup_cell(python, notebook, away)
        assert ran == {"pip": [], "error": None, "lab": f"{site}/lab/__init__.py"}, (notebook, ran, shown)
        assert __version__ in shown and "your-org" not in shown, shown


def kit_copy(folder):
    """The checkout as the instructor's image gets it (COPY . with deploy/instructor/Dockerfile.dockerignore)."""
    names = [p.removeprefix("**/") for p in ignore_patterns("instructor")]
    shutil.copytree(ROOT, folder, ignore=shutil.ignore_patterns(*names), symlinks=True)
    return folder


@pytest.mark.slow
def test_the_instructors_image_loads_the_kit_in_a_generated_course(tmp_path):
    kit = kit_copy(tmp_path / "kit")
    python = venv(tmp_path / "instructor", image_python("instructor"))
    pip_install(python, "-r", kit / "deploy" / "instructor" / "requirements.txt")
    course_dir = tmp_path / "course"
    course_dir.mkdir()
    (course_dir / "nbgrader_config.py").write_text((ROOT / "grader" / "nbgrader_config.py").read_text() + PLUGIN_LINES)

    before = run([python, kit / "grader" / "check_config.py", course_dir], cwd=course_dir)  # nbgrader, no kit yet
    assert before.returncode == 1 and "No module named 'grader'" in before.stderr, before.stdout + before.stderr

    pip_install(python, "--no-deps", "--no-build-isolation", "-e", kit)  # as the Dockerfile does
    check = run([python, "-m", "pip", "check"], cwd=course_dir)
    assert check.returncode == 0, check.stdout + check.stderr
    shutil.rmtree(course_dir)
    names = assignment_names()
    made = run([python, "-P", "-c", "import sys; from pathlib import Path; from grader import build; "
                "build.make_course(Path(sys.argv[1]), sys.argv[2:], with_db=False)", course_dir, *names], cwd=tmp_path, timeout=1800)
    assert made.returncode == 0, made.stderr
    assert all((course_dir / "release" / n / f"{n}.ipynb").is_file() for n in names)
    with open(course_dir / "nbgrader_config.py", "a") as config:
        config.write(PLUGIN_LINES)

    ok = run([python, "-m", "grader.check_config", course_dir], cwd=course_dir)
    assert ok.returncode == 0 and "ok: nbgrader in" in ok.stdout and f"({kit}/grader)" in ok.stdout, ok.stdout + ok.stderr
    # what grading imports in the course folder: every assignment's hidden suite (03's uses policybench)
    suites = run([python, "-P", "-c", "import importlib, sys\nfor n in sys.argv[1:]: importlib.import_module(f'grader.assignments.{n}.suite')\n"
                  "import grader.autograde, grader.nbgrader_plugin, bleach, yaml, jupytext; print('imported')", *names], cwd=course_dir)
    assert suites.returncode == 0 and suites.stdout.strip() == "imported", suites.stderr
    for tool in ("pytest", "hypothesis", "ruff"):  # the image has no test tools
        assert run([python, "-P", "-c", f"import {tool}"], cwd=course_dir).returncode == 1, tool
