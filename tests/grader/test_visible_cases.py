"""Hidden ⊇ visible: every case of a visible check cell is a hidden scenario of its TODO's rule (grader/contract.py).

The cases are read here from the student editions themselves (the calls at the end of each check cell), not from
the grader's own parse, so a case the grader missed fails these tests.
"""
import ast
import json

import pytest

from grader import editions, pipeline, reference
from grader.assignment import get
from grader.observed import decode_hook
from grader.paths import assignment_names
from grader import contract


def released_cases(name: str, language: str = "en") -> dict[str, list[str]]:
    """{answer grade_id: the calls its check cell makes at top level, passed() and print() aside}, from the edition."""
    a = get(name)
    cells = editions.cells_by_grade_id(a.release(language))
    found = {}
    for todo in a.todos:
        tree = ast.parse(editions.strip_magics(cells[todo.test_id][-1].source))
        found[todo.answer_id] = [ast.unparse(node.value) for node in tree.body if isinstance(node, ast.Expr)
                                 and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") not in ("passed", "print")]
    return found


@pytest.mark.parametrize("name", assignment_names())
def test_every_visible_case_is_a_hidden_scenario_of_its_todo(name):
    a = get(name)
    tasks = {t.answer_id: t for t in a.tasks(1)}
    judged = getattr(a.suite, "VISIBLE_JUDGED", {})
    total = 0
    for gid, cases in released_cases(name).items():
        assert cases, f"{name} {gid}: a check cell without cases"
        placed = {op[1]: rule.name for rule in tasks[gid].rules for sc in rule.scenarios for op in sc["ops"] if op[0] == contract.OP}
        for case in cases:
            total += 1
            if case in judged:
                assert judged[case] in [r.name for r in tasks[gid].rules], (name, case)
                continue
            assert case in placed, f"{name} {gid}: the visible case {case} is no hidden scenario"
    assert total >= len(tasks)


@pytest.mark.parametrize("name", assignment_names())
def test_a_suite_that_leaves_a_visible_case_out_is_refused(name, monkeypatch):
    a = get(name)
    left_out = dict(a.suite.VISIBLE)
    dropped = left_out.popitem()[0]
    for where, says in ((left_out, "is in no hidden rule"), (left_out | {dropped: "no such rule"}, "which is not a rule of"),
                        (a.suite.VISIBLE | {"test_gone()": "x"}, "no check cell has that case")):
        monkeypatch.setattr(a.suite, "VISIBLE", where)
        with pytest.raises(ValueError, match=says):
            a.tasks(1)


def _logs(name: str, answers: dict[str, str] | None = None) -> tuple[dict, dict]:
    """(the driver's namespace, the notebook's) in this process: the answers, then the check cells' definitions."""
    a = get(name)
    ns = reference.namespace(a, answers)
    for definitions in a.check_definitions:
        exec(compile(definitions, "<check cell>", "exec"), ns)
    driver = {"__name__": "__driver__"}
    exec(compile(a.driver_source, "<driver>", "exec"), driver)
    return driver, ns


@pytest.mark.slow
@pytest.mark.parametrize("name", assignment_names())
def test_the_reference_holds_every_visible_case_and_a_split_case_gives_every_check_a_rule(name):
    a = get(name)
    driver, ns = _logs(name)
    for check in a.checks:
        for case in check.cases:
            log = driver["_visible"](ns, case)
            assert log and all(record == {"held": True} for record in log), (name, case, log)
            placed = a.suite.VISIBLE.get(case)
            if isinstance(placed, dict):
                numbers = sorted(n for checks in placed.values() for n in checks)
                assert numbers == list(range(1, len(log) + 1)), (name, case, numbers, len(log))


@pytest.mark.slow
def test_a_case_records_the_checks_a_wrong_answer_fails_and_the_rules_take_them():
    """03 TODO 1 stepping on by one index after making room: the visible case fails its second check, and so does the
    rule it is placed in; the same rule's hidden scenarios with the reference TODO 3 under priority catch it too."""
    name = "03_batch_scheduling"
    a = get(name)
    mutant = next(m for m in a.mutants if m.name == "steps on by one index after making room")
    driver, ns = _logs(name, dict(a.reference) | {"todo1": mutant.apply(a.reference["todo1"])})
    log = driver["_visible"](ns, "test_todo1_preemption_inside_schedule()")
    assert [r["held"] for r in log] == [True, False, True, True], log
    seen = json.loads(json.dumps(log[1]["seen"]), object_hook=decode_hook)   # the child's tags, as the grader reads them
    assert seen == ({1: 1, 3: 1}, [0]), "request 2 was skipped: 1 and 3 got a token"
    grader = pipeline.grader_for(name)
    task = next(t for t in grader.tasks if t.answer_id == "todo1")
    verdict = grader.grade_task(task, mutant.apply(a.reference["todo1"]) + "\n# mine\n")
    failed = {r.name: r.detail for r in verdict.rules if not r.passed}
    assert list(failed) == ["under KV pressure: nobody is admitted in a step that preempted"], failed
    rule = next(r for r in task.rules if r.name in failed)
    names = [sc["name"] for sc in rule.scenarios]
    assert "visible check: test_todo1_preemption_inside_schedule()" in names
    assert "priority: the victim stood before the request that made room" in names


@pytest.mark.slow
def test_a_visible_case_in_a_judged_rule_is_compared_with_the_reference():
    """01 TODO 3's rules judge a workload by its properties; its visible cases are compared with the reference's record
    by record (the reference holds every check): a workload too large for the visible check fails them."""
    from grader import grade

    grader = pipeline.grader_for("01_continuous_batching")
    task = next(t for t in grader.tasks if t.answer_id == "todo3")
    rule = task.rules[0]
    cases = [(grader._key(task, 0, si), sc) for si, sc in enumerate(rule.scenarios) if grade.visible(sc)]
    assert rule.judge is not None and cases
    named = [{"name": key, "ops": sc["ops"]} for key, sc in cases]
    small = grader.reference["todo3"].replace("[4, 4, 1]), 2", "[4, 4, 1] * 100), 2") + "\n# mine\n"   # 300 jobs: too many
    for answer, held in ((grader.reference["todo3"] + "\n# mine\n", True), (small, False)):
        run, _ = grader._run_bridged(task, answer, named)
        observed = grade.observations(run)
        assert [observed[key] == grader.expected[key] for key, _ in cases][0] is held, observed
    assert "no_gain_case" in [r.name for r in grader.grade_task(task, small).rules if not r.passed][0]


@pytest.mark.slow
def test_the_check_cells_definitions_run_on_both_sides_of_the_bridge():
    """A visible case of 03 TODO 3 runs your schedule (TODO 1) on the reference server, which calls your _make_room back:
    the check's classes and the case cross the bridge (graded apart, a correct TODO 3 holds it)."""
    name = "03_batch_scheduling"
    grader = pipeline.grader_for(name)
    task = next(t for t in grader.tasks if t.answer_id == "todo3")
    verdict = grader.grade_task(task, grader.reference["todo3"] + "\n# bridged\n")
    assert verdict.score == verdict.points, [r for r in verdict.rules if not r.passed]
    assert any(sc["name"] == "visible check: test_todo3_vllm_priority_preemption_on_your_engine()" for sc in task.scenarios)


def test_the_zh_edition_has_the_same_cases():
    for name in assignment_names():
        if "zh" in get(name).languages:
            assert released_cases(name, "zh").keys() == released_cases(name).keys()
            assert [len(v) for v in released_cases(name, "zh").values()] == [len(v) for v in released_cases(name).values()]


def test_place_splits_a_case_by_its_checks_and_names_repeated_calls():
    rules = {"t1": [contract.Rule("a", []), contract.Rule("b", [])]}
    cell = contract.Check("t1", "t1_tests", "", ("f(1)", "f(2)", "g()"))
    placed = contract.place(rules, [cell], {"f(1)": "a", "f(2)": {"a": [1], "b": [2]}, "g()": "b"}, {}, "here")
    assert [(sc["name"], sc["ops"]) for sc in placed["t1"][0].scenarios] == [
        ("visible check: f() (0)", [[contract.OP, "f(1)"]]), ("visible check: f() (1)", [[contract.OP, "f(2)", [1]]])]
    assert [sc["ops"] for sc in placed["t1"][1].scenarios] == [[[contract.OP, "f(2)", [2]]], [[contract.OP, "g()"]]]
    assert rules["t1"][0].scenarios == [], "the suite's own rules are not changed"
