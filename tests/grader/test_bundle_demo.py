"""The student bundle carries no solutions or grader; the demo writes its plots."""
import json
import re
import subprocess
import sys
import zipfile

import pytest

from packaging.version import Version

from conftest import ROOT
from grader import bundle, course, demo, editions
from grader.editions import hidden_snippets
from lab import __version__


@pytest.mark.slow
def test_student_bundle_has_what_students_need_and_nothing_else(capsys):
    bundle.main()
    names = zipfile.ZipFile(bundle.BUNDLE).namelist()
    inner = {n.split("/", 1)[1] for n in names}
    assert {"README.md", "environment.yml", "requirements.txt", "postBuild", "jupyter_student_config.py",
            "lab/__init__.py", f"dist/{course.WHEEL_NAME}", "notebooks/02_decode_scheduling.ipynb",
            "notebooks/03_batch_scheduling.ipynb", "lab/engine/scheduler.py"} <= inner
    assert not [n for n in inner if n.startswith(("solutions/", "grader/", "tests/", ".ci/", "policybench/"))]
    snippets = [s for name in ("02_decode_scheduling", "03_batch_scheduling") for s in hidden_snippets(editions.nbgrader_source(name))]
    with zipfile.ZipFile(bundle.BUNDLE) as zf:
        for name in names:
            if name.endswith((".whl", ".otf")):
                continue
            text = zf.read(name).decode("utf-8")
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN" not in text, name
            assert not [s for s in snippets if s in text], name
        assert zf.read("decode-scheduling/notebooks/02_decode_scheduling.ipynb") == (ROOT / "notebooks" / "02_decode_scheduling.ipynb").read_bytes()
        assert zf.getinfo("decode-scheduling/postBuild").external_attr >> 16 & 0o111, "postBuild must be executable"
        # every file of the course the student README names is in the bundle (it names the font's licence file)
        readme = zf.read("decode-scheduling/README.md").decode()
        named = set(re.findall(r"`((?:lab|dist|notebooks)/[\w./-]+\.\w+)`", readme)) - {f"dist/{course.WHEEL_NAME}"}
        assert "lab/cjk_font/OFL.txt" in named and not named - inner, named - inner
        assert zf.read("decode-scheduling/lab/cjk_font/LabCJKSubset-Regular.otf") == (ROOT / "lab" / "cjk_font" / "LabCJKSubset-Regular.otf").read_bytes()


@pytest.mark.slow
def test_the_wheel_holds_lab_only_and_declares_what_the_cloud_test_runs(tmp_path):
    wheel = bundle.build_wheel(tmp_path)
    assert wheel.name == f"decode_scheduling_lab-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        files = zf.namelist()
        meta = zf.read(f"decode_scheduling_lab-{__version__}.dist-info/METADATA").decode()
    assert sorted(f for f in files if not f.startswith("decode_scheduling_lab-")) == sorted({  # the CJK subset and its licence too
        p.relative_to(ROOT).as_posix() for p in [*(ROOT / "lab").rglob("*.py"), *(ROOT / "lab" / "cjk_font").glob("*.otf"),
                                                 ROOT / "lab" / "cjk_font" / "OFL.txt"]})
    assert {"lab/cjk_font/LabCJKSubset-Regular.otf", "lab/cjk_font/OFL.txt"} <= set(files)
    floors = dict(re.findall(r"^Requires-Dist: (\w+)>=([\d.]+)$", meta, re.M))
    assert set(floors) == {"numpy", "pandas", "matplotlib"}
    cloud = dict(re.findall(r"(\w+)==([\d.]+)", re.search(r"^CLOUD_PINS \?= (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)))
    for name, floor in floors.items():  # the declared floor is the release that make e2e-cloud runs
        assert Version(cloud[name]) == Version(floor), (name, floor, cloud[name])
    assert re.search(r"^Requires-Python: >=3\.10$", meta, re.M)


def test_student_environment_has_no_grader_tools_and_the_student_ranges():
    req, env = bundle.student_requirements(), bundle.student_environment()
    for text in (req, env):
        assert not re.search(r"nbgrader|pytest|hypothesis|jupytext|setuptools|-e \.", text)
    ranges = [line for line in (ROOT / "requirements-student.txt").read_text().splitlines() if line and line[0] != "#"]
    assert {line.split(">=")[0] for line in ranges} == {"jupyterlab", "ipykernel", "pandas", "matplotlib", "numpy"}
    assert [line for line in req.splitlines() if line[0] != "#"] == ranges + [f"./dist/{course.WHEEL_NAME}"]
    assert re.findall(r"^      - (.*)$", env, re.M) == ranges


@pytest.mark.slow
def test_student_config_switches_off_the_nbgrader_teacher_ui_only(tmp_path):
    """Run the bundle's script on a prefix where nbgrader has enabled itself, read it back as jupyter_server does."""
    from jupyter_server.config_manager import BaseJSONConfigManager
    from jupyter_server.extension.config import ExtensionConfigManager
    config = tmp_path / "etc" / "jupyter"
    (config / "jupyter_server_config.d").mkdir(parents=True)
    shipped = ROOT / ".venv" / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgrader.json"
    enabled = {f"nbgrader.server_extensions.{e}": True for e in ("formgrader", "course_list", "assignment_list", "validate_assignment")}
    (config / "jupyter_server_config.d" / "nbgrader.json").write_text(
        shipped.read_text() if shipped.exists() else json.dumps({"ServerApp": {"jpserver_extensions": enabled}}))

    def state():
        return ExtensionConfigManager(read_config_path=[str(config)]).get_jpserver_extensions()
    assert state()["nbgrader.server_extensions.formgrader"] is True  # the teacher UI is on before
    script = tmp_path / "jupyter_student_config.py"
    script.write_text(bundle.JUPYTER_STUDENT_CONFIG)
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)  # idempotent
    after = state()
    assert after["nbgrader.server_extensions.formgrader"] is False and after["nbgrader.server_extensions.course_list"] is False
    assert after["nbgrader.server_extensions.assignment_list"] is True  # students keep their own tools
    page = BaseJSONConfigManager(config_dir=str(config / "labconfig")).get("page_config")
    assert page["disabledExtensions"] == {"@jupyter/nbgrader:formgrader": True, "@jupyter/nbgrader:create-assignment": True,
                                          "@jupyter/nbgrader:course-list": True}


@pytest.mark.slow
def test_demo_worked_examples_write_pngs(tmp_path, capsys):
    written = demo.worked_examples(tmp_path)
    assert len(written) == 8 and all(p.suffix == ".png" and p.stat().st_size > 5000 for p in written)
    printed = capsys.readouterr().out
    assert "4 requests on 2 slots" in printed and "preemption and resume" in printed
    assert "engine step model" in printed and "p99_ttft_ms=" in printed


def test_bundle_refuses_notebooks_written_from_another_setting(monkeypatch):
    other = course.Course("acme/elsewhere", "main", "")
    monkeypatch.setattr(course, "load", lambda *a, **k: other)
    try:
        bundle.main()
    except SystemExit as exc:
        assert "run `make notebooks` first" in str(exc)
    else:
        raise AssertionError("a bundle with stale set-up cells was written")


def test_an_old_setuptools_is_named_before_pip_fails_on_the_licence(tmp_path, monkeypatch):
    # pip install -e "<repo>[instructor]" into a venv with setuptools 65 (an instructor's Python 3.11): pip's own
    # error there is "project.license must be valid exactly by one definition", which names no version.
    assert bundle.setuptools_problem() is None  # this venv's setuptools builds the wheel (test above)
    import importlib.metadata
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "65.5.0")
    problem = bundle.setuptools_problem()
    assert "setuptools>=77" in problem and "found 65.5.0" in problem and "make student-bundle" in problem
    with pytest.raises(RuntimeError, match="found 65.5.0"):
        bundle.build_wheel(tmp_path / "dist")
    assert not (tmp_path / "dist").exists()  # refused before anything was written
