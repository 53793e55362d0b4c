"""`make check-assignment NAME=...` (grader/check_assignment.py): a checklist of what one assignment still lacks,
read from each check's own result, and a non-zero exit when an item fails; `--assignment` selects its tests."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from conftest import ROOT, assignment_of
from grader import check_assignment
from grader.paths import assignment_names
from test_new_assignment import copy_repository

# Appended to a copy's suite.py: its first TODO gets a judged rule that holds whatever the answer does.
PLANTED = "planted: holds for anything"
PLANT = f'''

from grader.suites.base import Rule as _PlantedRule
_planted_build = build


def build(seed):
    rules = _planted_build(seed)
    first = next(iter(rules))
    rules[first].append(_PlantedRule({PLANTED!r}, rules[first][0].scenarios[:1], judge=lambda observations, scenario: ""))
    return rules
'''


@pytest.mark.slow
def test_a_planted_trivial_pass_rule_is_a_failing_item(tmp_path):
    name = assignment_names()[0]
    copy = tmp_path / "repo"
    copy_repository(copy)
    suite = copy / "grader" / "assignments" / name / "suite.py"
    suite.write_text(suite.read_text(encoding="utf-8") + PLANT, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader.check_assignment", name, "--no-tests"], cwd=copy, text=True,
                          capture_output=True, env=os.environ | {"PYTHONPATH": str(copy)}, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    at = next(i for i, line in enumerate(lines) if line.startswith("✗ no rule holds for a trivial answer"))
    assert lines[at + 1].startswith("    - TODO 1 `") and lines[at + 1].endswith(f": {PLANTED}"), lines[at:at + 3]
    assert any(line.startswith("✗ every rule quotes a sentence") for line in lines)    # it has no quote either
    assert f"    - en TODO 1 / {PLANTED}" in lines
    assert any(line.startswith("✓ every mutant loses points on its own TODO") for line in lines), done.stdout
    assert lines[-1].startswith(f"{name}: ") and "still missing: no rule holds for a trivial answer" in lines[-1]


def test_an_item_holds_only_without_anything_missing():
    assert check_assignment.Item("x").lines() == ["✓ x"]
    item = check_assignment.Item("x", [f"rule {i}" for i in range(15)])
    assert not item.ok and item.lines()[:2] == ["✗ x", "    - rule 0"] and item.lines()[-1] == "    ... and 3 more"


def test_failing_tests_are_read_from_the_junit_report(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text('<testsuites><testsuite><testcase classname="tests.a" name="ok[01]"/>'
                      '<testcase classname="tests.a" name="bad[01]"><failure message="x"/></testcase>'
                      '<testcase classname="tests.b" name="broken[01]"><error message="y"/></testcase>'
                      '<testcase classname="tests.b" name="skipped[01]"><skipped/></testcase></testsuite></testsuites>')
    assert check_assignment.failing_tests(report) == (3, ["tests.a::bad[01]: failure", "tests.b::broken[01]: error"])


def test_an_item_is_the_assignments_whose_name_is_among_its_parameters():
    item = SimpleNamespace(callspec=SimpleNamespace(params={"name": "01_x", "lang": "zh", "n": 3}))
    assert assignment_of(item) == {"01_x", "zh"}
    assert assignment_of(SimpleNamespace(callspec=SimpleNamespace(params={"case": ("02_y", "todo1", object())}))) >= {"02_y"}
    assert assignment_of(SimpleNamespace()) == set()


def test_check_assignment_is_a_make_target():
    makefile = (ROOT / "Makefile").read_text()
    assert "check-assignment" in makefile.split(".PHONY:", 1)[1].splitlines()[0]
    assert "make check-assignment NAME=" in makefile and "$(PY) -m grader.check_assignment $(NAME)" in makefile


@pytest.mark.slow   # reading the assignment runs pandoc --version
def test_a_bad_assignment_toml_is_a_failing_item_not_a_crash(monkeypatch):
    """The corpus item's title read assignment.toml's figures outside the check: a malformed file stopped the
    checklist with a traceback halfway. The checks' own work is stood in for (each would start processes)."""
    from grader import assignment, diagnose, grade, promises, translation

    def bad(self):
        raise ValueError("assignment.toml: plots must be an integer, not '3'")
    monkeypatch.setattr(assignment.Assignment, "figures", property(bad))
    monkeypatch.setattr(grade, "Grader", lambda name: None)
    for module, name in ((check_assignment, "passing_rules"), (check_assignment, "unquoted_rules"),
                         (check_assignment, "leaky_mutants"), (promises, "problems"), (diagnose, "problems"),
                         (translation, "status")):
        monkeypatch.setattr(module, name, lambda *args: [])
    items = check_assignment.checklist("02_decode_scheduling", tests=False, say=lambda line: None)
    corpus = [item for item in items if "corpus" in item.title]
    assert len(corpus) == 1 and not corpus[0].ok and "plots must be an integer" in corpus[0].missing[0]
