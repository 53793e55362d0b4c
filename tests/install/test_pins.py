"""The Python claims agree everywhere, and `make check-pins`' checker names a bad pin. Offline: the checker's pip runs
against a folder of made-up wheels (--no-index); `make check-pins` itself asks the package index, in CI (.ci/run)."""
import os
import re
import subprocess
import sys
import tomllib
import zipfile

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from conftest import ROOT
from grader import bundle, check_pins, pins


def make_wheel(folder, name, version, tag="py3-none-any", requires_python=None, depends=()):
    """A wheel holding only its metadata, enough for pip to resolve it."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += f"Requires-Python: {requires_python}\n" if requires_python else ""
    meta += "".join(f"Requires-Dist: {d}\n" for d in depends)
    path = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{info}/METADATA", meta)
        zf.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n")
        zf.writestr(f"{info}/RECORD", f"{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return path


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """pip arguments for a local index of made-up wheels: cp311-only, one needing 3.11.5, one with a dependency."""
    house = tmp_path_factory.mktemp("wheelhouse")
    make_wheel(house, "good", "1.0")
    make_wheel(house, "oldwheel", "1.0", tag="cp311-none-any")  # like numpy 1.21: no wheel for a newer Python
    make_wheel(house, "patchy", "4.1.3", requires_python=">=3.11.5")  # like soupsieve 4.1.3
    make_wheel(house, "needy", "1.0", depends=["good>=1"])
    return ["--no-index", "--find-links", str(house)]


def lock_file(tmp_path, *lines):
    path = tmp_path / "requirements.lock"
    path.write_text("# a lock\n" + "\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_a_lock_that_resolves_gives_every_pin(index, tmp_path):
    lock = lock_file(tmp_path, "good==1.0", "needy==1.0", "oldwheel==1.0")
    assert check_pins.check_lock("3.11", lock, index) == {"good": "1.0", "needy": "1.0", "oldwheel": "1.0"}


@pytest.mark.slow
def test_a_pin_without_a_wheel_for_a_claimed_python_fails_by_name(index, tmp_path):
    lock = lock_file(tmp_path, "good==1.0", "oldwheel==1.0")
    with pytest.raises(check_pins.PinError) as err:
        check_pins.check_lock("3.13", lock, index)
    assert str(err.value) == "oldwheel==1.0: no wheel for Python 3.13"


@pytest.mark.slow
def test_a_pin_whose_requires_python_excludes_the_oldest_claimed_patch_fails_by_name(index, tmp_path):
    """3.11 means 3.11.0 to pip: a release needing 3.11.5 fails there, as soupsieve 4.1.3 did for Debian 12's 3.11.2."""
    lock = lock_file(tmp_path, "patchy==4.1.3")
    assert check_pins.check_lock("3.12", lock, index) == {"patchy": "4.1.3"}
    for python in ("3.11", "3.11.2"):
        with pytest.raises(check_pins.PinError) as err:
            check_pins.check_lock(python, lock, index)
        assert str(err.value) == f"patchy==4.1.3: cannot install on Python {python} (it requires Python >=3.11.5)"


@pytest.mark.slow
def test_a_lock_missing_a_dependency_fails_naming_it(index, tmp_path):
    lock = lock_file(tmp_path, "needy==1.0")
    with pytest.raises(check_pins.PinError, match=r"does not pin good==1\.0 \(pulled in on Python 3\.12\)"):
        check_pins.check_lock("3.12", lock, index)


# pip's own words, recorded from `make check-pins` runs against the package index (pip 26.3).
SOUPSIEVE = """\
ERROR: Ignored the following yanked versions: 3.0, 3.0.1
ERROR: Ignored the following versions that require a different python version: 3.0.2 Requires-Python >=3.11.5; 4.1.2 Requires-Python >=3.11.5; 4.1.3 Requires-Python >=3.11.5; 9.11.0 Requires-Python >=3.12
ERROR: Could not find a version that satisfies the requirement soupsieve==4.1.3 (from versions: 2.9.2, 2.10)
ERROR: No matching distribution found for soupsieve==4.1.3
"""
NUMPY = """\
ERROR: Ignored the following yanked versions: 2.4.0
ERROR: Could not find a version that satisfies the requirement numpy==1.21.0 (from versions: 2.1.0, 2.1.1, 2.4.6)
ERROR: No matching distribution found for numpy==1.21.0
"""
CONFLICT = """\
ERROR: Cannot install matplotlib==3.8.0 and numpy==2.4.6 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested numpy==2.4.6
    matplotlib 3.8.0 depends on numpy<2 and >=1.21

To fix this you could try to:
1. loosen the range of package versions you've specified
"""


@pytest.mark.parametrize("output, python, said", [
    (SOUPSIEVE, "3.11", "soupsieve==4.1.3: cannot install on Python 3.11 (it requires Python >=3.11.5)"),
    (NUMPY, "3.13", "numpy==1.21.0: no wheel for Python 3.13"),
    (CONFLICT, "3.11", "matplotlib==3.8.0 and numpy==2.4.6 conflict on Python 3.11: The user requested numpy==2.4.6; "
                       "matplotlib 3.8.0 depends on numpy<2 and >=1.21"),
    ("ERROR: something pip never said before\n", "3.12", None),
])
def test_pips_failure_output_is_read_as_what_cannot_install(output, python, said):
    assert check_pins.explain(output, python) == ([said] if said else [])


@pytest.mark.slow
def test_which_takes_the_oldest_working_interpreter_of_that_version(tmp_path, monkeypatch):
    """pyenv's shim for a version it has not selected fails to run: such a candidate does not count."""
    def fake(version, works=True):
        path = tmp_path / "versions" / version / "bin" / f"python{version.rsplit('.', 1)[0]}"
        path.parent.mkdir(parents=True)
        path.write_text(f"#!/bin/sh\necho {version}\n" if works else "#!/bin/sh\nexit 127\n")
        path.chmod(0o755)
        return str(path)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    fake("3.98.3", works=False)
    assert pins.which("3.98") is None
    newer, older = fake("3.99.10"), fake("3.99.2")
    assert pins.which("3.99") == (older, "3.99.2") and newer != older
    mine = "%d.%d" % sys.version_info[:2]
    path, version = pins.which(mine)
    assert version.startswith(mine + ".") and pins.version_of(path) == version


@pytest.mark.slow
@pytest.mark.parametrize("faked", ["3.10.12", "3.14.0"])
def test_make_venv_refuses_an_unsupported_python_and_says_which_it_takes(faked, tmp_path):
    """The interpreter reports another version (a sitecustomize on its path); make stops before making a venv."""
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "sitecustomize.py").write_text(
        f"import sys\nsys.version_info = ({', '.join(faked.split('.'))}, 'final', 0)\nsys.version = '{faked} (faked)'\n")
    venv = tmp_path / "venv"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    proc = subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "venv", f"PYTHON={sys.executable}",
                           f"VENV={venv}", "CLOUD_BASE=unused"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert f"make venv needs Python 3.11, 3.12 or 3.13; {sys.executable} is Python {faked}." in proc.stderr, proc.stderr
    assert not venv.exists()


def makefile_list(name):
    return tuple(re.search(rf"^{name} := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split())


def test_every_place_that_names_the_pythons_names_the_checked_ones():
    assert makefile_list("INSTRUCTOR_PYTHONS") == pins.INSTRUCTOR_PYTHONS
    assert makefile_list("STUDENT_PYTHONS") == pins.STUDENT_PYTHONS
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == f">={pins.STUDENT_PYTHONS[0]}"
    readme = (ROOT / "README.md").read_text()
    instructor, student = ", ".join(pins.INSTRUCTOR_PYTHONS[:-1]) + f" or {pins.INSTRUCTOR_PYTHONS[-1]}", bundle.python_range()
    assert f"Python {instructor}" in readme and f"Python {student}" in readme
    assert not re.search(r"Python 3\.\d+ (or newer|and newer|or later)", readme)
    assert f"Python {student}" in bundle.student_readme() and f"Python {student}" in bundle.student_requirements()
    conda = re.findall(r"^\s*-\s*python=(\S+)\s*$", (ROOT / "environment.yml").read_text(), re.M)
    assert conda and conda[0] in pins.INSTRUCTOR_PYTHONS
    assert re.search(rf"^  - python={re.escape(bundle.CONDA_PYTHON)}$", bundle.student_environment(), re.M)
    assert bundle.CONDA_PYTHON in pins.STUDENT_PYTHONS
    assert "3.11.0" in (ROOT / "requirements.lock").read_text().splitlines()[0]  # the lock says what it was resolved for


def student_ranges():
    return {pins.normalise(r.name): r for r in map(Requirement, pins.student_lines())}


def test_student_ranges_run_from_the_cloud_pins_to_the_instructor_pins():
    """The floor is what make e2e-cloud runs the notebooks on, the ceiling what make test runs on; both inclusive."""
    cloud = dict(p.split("==") for p in re.search(r"^CLOUD_PINS \?= (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split())
    ours = pins.pins(pins.REQUIREMENTS)
    ranges = student_ranges()
    assert set(ranges) == {"numpy", "pandas", "matplotlib", "ipykernel", "jupyterlab"}
    for name, req in ranges.items():
        floors = [Version(s.version) for s in req.specifier if s.operator == ">="]
        ceilings = [Version(s.version) for s in req.specifier if s.operator == "<="]
        assert len(floors) == len(ceilings) == 1 and len(req.specifier) == 2, req
        assert ceilings[0] == Version(ours[name]), (req, ours[name])
        if name in cloud:
            assert floors[0] == Version(cloud[name]), (req, cloud[name])
        assert req.specifier.contains(ours[name]) and (name not in cloud or req.specifier.contains(cloud[name]))
    assert set(cloud) == set(ranges) - {"jupyterlab"}


def test_labs_own_floors_are_the_student_floors():
    """lab's metadata allows what the cloud kernel has (pip must not upgrade a running kernel); no ceiling there."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    ranges = student_ranges()
    for dep in map(Requirement, project["dependencies"]):
        (spec,) = dep.specifier
        assert spec.operator == ">=" and Version(spec.version) == Version(next(iter(
            s.version for s in ranges[dep.name].specifier if s.operator == ">="))), dep


def test_ci_runs_the_check_after_its_planted_pin():
    """`make check-pins` starts with `grader.check_pins planted`: numpy 1.21.0 has no wheel for 3.13, a claimed Python."""
    pin, python = check_pins.PLANTED
    assert python in pins.STUDENT_PYTHONS and python in pins.INSTRUCTOR_PYTHONS and pin.startswith("numpy==")
    assert "$(PY) -m grader.check_pins planted" in (ROOT / "Makefile").read_text()
    assert "make check-pins" in (ROOT / ".ci" / "run").read_text()
