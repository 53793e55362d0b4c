"""requirements.txt, requirements.lock and environment.yml pin the same versions; the pinned linter works as CI runs it."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip().lstrip("- ").strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_matches_requirements():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    env = pins((ROOT / "environment.yml").read_text().splitlines())
    assert req, "requirements.txt pins nothing"
    assert env == req


def test_lock_agrees_with_requirements():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    lock = pins((ROOT / "requirements.lock").read_text().splitlines())
    assert {name: lock.get(name) for name in req} == req


def test_environment_yml_python_is_311():
    assert re.search(r"^\s*-\s*python=3\.11\s*$", (ROOT / "environment.yml").read_text(), re.M)


@pytest.mark.slow
def test_the_linter_ci_runs_catches_a_planted_error(tmp_path):
    """`make lint` (ruff, pinned above) with the project's configuration: a clean file passes, an unused import fails."""
    ruff = Path(sys.executable).with_name("ruff")
    config = ["--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    clean, planted = tmp_path / "clean.py", tmp_path / "planted.py"
    clean.write_text("import os\n\nprint(os.sep)\n")
    planted.write_text("import os\n\nprint('no use of os')\n")
    assert subprocess.run([ruff, "check", *config, clean], capture_output=True).returncode == 0
    found = subprocess.run([ruff, "check", *config, planted], capture_output=True, text=True)
    assert found.returncode == 1 and "F401" in found.stdout, found.stdout
