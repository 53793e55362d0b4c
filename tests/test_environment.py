"""requirements.txt, requirements.lock and environment.yml must pin the same versions."""
import re

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
