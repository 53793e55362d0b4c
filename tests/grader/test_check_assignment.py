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

from grader.contract import Rule as _PlantedRule
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


def _verdict(answer_id, failed=(), held=("kept",), points=4):
    rules = [SimpleNamespace(name=n, passed=False) for n in failed] + [SimpleNamespace(name=n, passed=True) for n in held]
    return SimpleNamespace(answer_id=answer_id, task_id=f"TODO {answer_id[-1]}", rules=rules, points=points,
                           score=points * sum(r.passed for r in rules) / len(rules))


def test_the_mutant_items_list_a_leak_into_another_todo_and_a_bug_failing_several_rules():
    """One bug fails one rule (docs/authoring.md, "Keeping rules independent"): a mutant that fails two rules of its
    own TODO is listed, as advice; one that fails a rule of another TODO, or keeps full marks, fails the item."""
    graded = [
        (SimpleNamespace(answer_id="todo1", name="one rule"), [_verdict("todo1", ["a"]), _verdict("todo2")]),
        (SimpleNamespace(answer_id="todo1", name="two rules"), [_verdict("todo1", ["a", "b"]), _verdict("todo2")]),
        (SimpleNamespace(answer_id="todo2", name="leaks"), [_verdict("todo1", ["a"]), _verdict("todo2", ["c"])]),
        (SimpleNamespace(answer_id="todo2", name="harmless"), [_verdict("todo1"), _verdict("todo2")]),
    ]
    several = check_assignment.mutants_failing_several_rules(None, graded)
    assert several == ["todo1 'two rules': fails 2 rules of TODO 1: ['a', 'b']"]
    assert check_assignment.leaky_mutants(None, graded) == ["todo2 'leaks': fails TODO 1's ['a']",
                                                            "todo2 'harmless': keeps full marks on its own TODO"]
    advice = check_assignment.Item("one bug fails one rule", ["todo1 'two rules': ..."], advice=True)
    assert not advice.ok and not advice.fails and advice.lines()[0] == "! one bug fails one rule"
    assert check_assignment.Item("x", ["y"]).fails and not check_assignment.Item("x", advice=True).fails


def test_advice_is_said_and_does_not_fail_the_checklist(monkeypatch, capsys):
    monkeypatch.setattr(check_assignment, "assignment_dir", lambda name: None)
    monkeypatch.setattr(check_assignment, "checklist", lambda name, **kw: [
        check_assignment.Item("holds"), check_assignment.Item("one bug fails one rule", ["m"], advice=True)])
    assert check_assignment.main(["01_x", "--no-tests"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "01_x: 2 of 2 items hold (0 s); worth a look: one bug fails one rule"
    monkeypatch.setattr(check_assignment, "checklist", lambda name, **kw: [check_assignment.Item("broken", ["x"])])
    assert check_assignment.main(["01_x", "--no-tests"]) == 1


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


def test_a_test_parametrised_by_a_path_is_its_assignments():
    """Issue 44: test_editions_have_no_internal_jargon[notebooks/zh/NAME.ipynb] was left out of --assignment NAME."""
    for path in (ROOT / "notebooks" / "zh" / "01_x.ipynb", "solutions/01_x.ipynb", ROOT / "grader/assignments/01_x/corpus/a.ipynb"):
        assert "01_x" in assignment_of(SimpleNamespace(callspec=SimpleNamespace(params={"path": path})))
    assert "01_x" not in assignment_of(SimpleNamespace(callspec=SimpleNamespace(params={"path": "notebooks/01_xy.ipynb"})))


def collected(*args) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "tests", "--collect-only", "-q", "-m", "not slow",
                           "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True, text=True)
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.slow   # two pytest collections of the whole suite
def test_the_assignment_option_selects_every_test_that_names_it():
    """--assignment NAME (make check-assignment) runs what -k NAME selects: no test parametrised by a path to its
    notebooks, or any other way of naming it, is missed."""
    name = "01_continuous_batching"
    chosen = collected("--assignment", name)
    assert any("[notebooks/zh/01_continuous_batching.ipynb]" in test for test in chosen)
    assert collected("-k", name) - chosen == set()


def test_check_assignment_is_a_make_target():
    makefile = (ROOT / "Makefile").read_text()
    assert "check-assignment" in makefile.split(".PHONY:", 1)[1].splitlines()[0]
    assert "make check-assignment NAME=" in makefile and "$(PY) -m grader.check_assignment $(NAME)" in makefile


@pytest.mark.slow   # reading the assignment runs pandoc --version
def test_a_bad_assignment_toml_is_a_failing_item_not_a_crash(monkeypatch):
    """The corpus item's title read assignment.toml's figures outside the check: a malformed file stopped the
    checklist with a traceback halfway. The checks' own work is stood in for (each would start processes)."""
    from grader import assignment, grade, promises, translation

    def bad(self):
        raise ValueError("assignment.toml: plots must be an integer, not '3'")
    monkeypatch.setattr(assignment.Assignment, "figures", property(bad))
    monkeypatch.setattr(grade, "Grader", lambda name: None)
    for module, name in ((check_assignment, "passing_rules"), (check_assignment, "unquoted_rules"),
                         (check_assignment, "leaky_mutants"), (check_assignment, "mutant_grades"),
                         (promises, "problems"), (check_assignment, "mistakes_file_problems"),
                         (translation, "status")):
        monkeypatch.setattr(module, name, lambda *args: [])
    items = check_assignment.checklist("02_decode_scheduling", tests=False, say=lambda line: None)
    corpus = [item for item in items if "corpus" in item.title]
    assert len(corpus) == 1 and not corpus[0].ok and "plots must be an integer" in corpus[0].missing[0]


def test_a_corpus_still_the_templates_is_a_failing_item(tmp_path):
    """Issue 44: the corpus item held while the trial's corpus was still the template's starter notebooks (answering
    total_tokens and fcfs_order, not the trial's pick_next and serve). Read, not graded."""
    import jupytext
    import nbformat
    import yaml

    from grader import editions
    from grader.new_assignment import CORPUS, TEMPLATE

    starters = yaml.safe_load((TEMPLATE / CORPUS).read_text(encoding="utf-8"))
    template = dict(editions.reference_of(jupytext.read(TEMPLATE / "master.py")))
    for entry, answers in starters.items():
        cells = [nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"grade_id": gid, "solution": True}})
                 for gid, source in answers.items()]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / f"{entry}.ipynb")
    corpus = sorted(tmp_path.glob("*.ipynb"))

    def problems(reference):
        return check_assignment.template_corpus(SimpleNamespace(reference=reference, corpus=corpus))

    assert problems(template) == []   # the scaffold as make new-assignment writes it: its corpus answers its TODOs
    renamed = template | {"todo1": 'def pick_next(waiting, now, max_wait):\n    """Whom to serve."""\n    return None\n'}
    assert len(found := problems(renamed)) == len(corpus) and all("does not define todo1 ['pick_next']" in f for f in found)
    same_names = template | {"todo2": template["todo2"].replace('"""', '"""Changed. ', 1)}
    assert len(found := problems(same_names)) == len(corpus) and all("as the template's corpus.yml" in f for f in found)
