"""The two tiers: make test runs every test, make test-fast those not marked slow. A test that starts a process is
slow, and tests/conftest.py fails one that is not marked so; these tests show that guard at work (docs/checks.md)."""
import asyncio
import re
import subprocess
import tomllib
import types

import pytest

import conftest
from conftest import ROOT, StartedAProcess


def test_an_unmarked_test_cannot_start_a_process():
    for start in (lambda: subprocess.run(["true"]), lambda: subprocess.Popen(["sleep", "60"]),
                  lambda: asyncio.run(asyncio.create_subprocess_exec("true"))):
        with pytest.raises(StartedAProcess, match="not marked slow"):
            start()
    assert conftest._STARTED == ["true", "sleep 60", "true"]
    conftest._STARTED.clear()   # else this very test fails after its call, as the next test shows


def phase(item, body):
    """Run `body` as conftest's hook runs a test's call phase."""
    steps = conftest._guarded(item, "call")
    next(steps)
    try:
        body()
    except StartedAProcess:
        pass
    with pytest.raises(StopIteration):
        steps.send(None)


def swallowed():
    try:
        subprocess.run(["true"])
    except BaseException:  # noqa: BLE001 - as code under test might
        pass


def test_a_start_that_the_code_under_test_swallows_still_fails_the_test():
    unmarked = types.SimpleNamespace(nodeid="t::unmarked", get_closest_marker=lambda name: None)
    with pytest.raises(pytest.fail.Exception, match="t::unmarked is not marked slow but started a process in its call"):
        phase(unmarked, swallowed)
    phase(unmarked, lambda: None)   # nothing started: passes


@pytest.mark.slow
def test_a_slow_test_runs_programs():
    assert subprocess.run(["true"]).returncode == 0


def test_make_test_fast_selects_the_unmarked_tests_and_the_marker_is_registered():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test-fast:.*\n\t(.+)$", make, re.M)
    assert recipe and '-m pytest tests -m "not slow"' in recipe.group(1)
    assert "test-fast" in re.search(r"^\.PHONY:(.*)$", make, re.M).group(1) and "make test-fast" in make
    pytest_ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert any(m.startswith("slow:") for m in pytest_ini["markers"]) and "--strict-markers" in pytest_ini["addopts"]
