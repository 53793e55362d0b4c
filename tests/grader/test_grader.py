"""The sandboxed grader: verdicts per TODO, broken variants, and code that tries to cheat."""
import dataclasses

import nbformat
import pytest

from conftest import FORMS, ROOT, as_saved
from grader import editions, i18n, reference
from grader.messages import Message
from grader.assignment import load
from grader.config import DEFAULTS
from grader.grade import Grader, explain, first_diff
from grader.observed import CRASH, INVALID, SKIPPED, TIMEOUT, NoValue
from grader.assignment import MUTANTS, mutated_answers
from grader.verdict import Outcome
from grader.runner import CHILD, UID_BASE, UID_COUNT, run_child, sandbox_level
from readings import OPEN, RULED_OUT

NAME = "02_decode_scheduling"
FULL = {"todo1": 2, "todo2": 3, "todo3": 3, "todo4": 4}


@pytest.fixture(scope="module")
def grader():
    return Grader(NAME)


def scores(verdicts):
    return {v.answer_id: v.score for v in verdicts}


@pytest.mark.slow
def test_reference_scores_full_marks(grader):
    verdicts = grader.grade(editions.reference_answers(NAME))
    assert scores(verdicts) == FULL
    assert all(rule.passed for v in verdicts for rule in v.rules)


@pytest.mark.slow
def test_suite_is_large_and_randomized(grader):
    for task in grader.tasks:
        assert len(task.rules) >= 5 and len(task.scenarios) >= 40
        assert all(any("#" in sc["name"] for sc in rule.scenarios) for rule in task.rules), "every rule has random cases"
    assert load(NAME).tasks(1)[2].scenarios != load(NAME).tasks(2)[2].scenarios


def release_answers():
    release = nbformat.read(ROOT / "notebooks" / f"{NAME}.ipynb", as_version=4)
    return {gid: cells[0].source for gid, cells in editions.cells_by_grade_id(release).items() if gid in FULL}


@pytest.mark.slow
def test_untouched_stubs_score_zero_everywhere(grader):
    assert scores(grader.grade(release_answers())) == {gid: 0 for gid in FULL}


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("mutant", MUTANTS[NAME], ids=lambda m: f"{m.answer_id}-{m.name}")
def test_broken_variant_costs_its_own_todo_only(grader, mutant, form, tmp_path):
    got = scores(grader.grade(as_saved(NAME, mutated_answers(NAME, mutant), form, tmp_path)))
    assert got[mutant.answer_id] < FULL[mutant.answer_id]
    assert {k: v for k, v in got.items() if k != mutant.answer_id} == {k: v for k, v in FULL.items() if k != mutant.answer_id}


def test_at_least_three_variants_per_todo():
    for gid in FULL:
        assert sum(m.answer_id == gid for m in MUTANTS[NAME]) >= 3


@pytest.mark.slow
def test_a_hang_costs_only_its_todo_and_is_reported(grader):
    answers = editions.reference_answers(NAME)
    lines = answers["todo3"].splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"""' in line) + 1
    answers["todo3"] = "".join(lines[:at]) + "    while True:\n        pass\n" + "".join(lines[at:])
    verdicts = {v.answer_id: v for v in grader.grade(answers)}
    assert verdicts["todo3"].score == 0 and scores(verdicts.values()) == FULL | {"todo3": 0}
    assert "timeout" in " ".join(r.detail for r in verdicts["todo3"].rules)


@pytest.mark.slow
def test_a_sleeping_hang_is_ended_by_the_wall_clock():
    """time.sleep uses no CPU, so the per-scenario CPU alarm never fires; the child's wall-clock limit does. The other
    TODOs' children live under the same wall: on a machine busy enough to starve them of it, they come out as
    grading errors (re-run, never scored), never as wrong answers."""
    quick = Grader(NAME, DEFAULTS.override(child_wall=30))   # 8 s failed at load 16: a limit, not a deadline to race
    answers = editions.reference_answers(NAME)
    lines = answers["todo1"].splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"""' in line) + 1
    answers["todo1"] = "".join(lines[:at]) + "    import time\n    time.sleep(3600)\n" + "".join(lines[at:])
    verdicts = {v.answer_id: v for v in quick.grade(answers)}
    assert verdicts["todo1"].score == 0 and "grading child timeout" in str(verdicts["todo1"].note)
    assert verdicts["todo1"].status == Outcome.TIMED_OUT
    others = {v.answer_id: v for v in verdicts.values() if v.answer_id != "todo1"}
    assert {a: v.score for a, v in others.items() if v.status != Outcome.GRADING_ERROR} == {
        a: FULL[a] for a, v in others.items() if v.status != Outcome.GRADING_ERROR}


CHEATS = {
    "rewrite assert": "import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})\n",
    "exit early": "import os\nos._exit(0)\n",
    "kill parent": "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept Exception:\n    pass\n",
    "swallow IPython errors": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
    "forge results": "import os, json\nfor fd in range(3, 64):\n    try:\n        os.write(fd, (json.dumps({'kind': 'done'}) + '\\n').encode())\n    except OSError:\n        pass\n",
    "read the reference": "from pathlib import Path\nSRC = [p.read_text() for p in Path('/').glob('**/grader/assignments/*/master.py')]\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("cheat", CHEATS)
def test_cheating_in_a_stub_cell_gains_nothing(grader, cheat, form, tmp_path):
    """A stub TODO 2 plus code that attacks the grader: TODO 2 still scores 0, the others are unaffected."""
    answers = editions.reference_answers(NAME) | {"todo2": CHEATS[cheat] + release_answers()["todo2"]}
    got = scores(grader.grade(as_saved(NAME, answers, form, tmp_path)))
    assert got == FULL | {"todo2": 0}


@pytest.mark.slow
def test_the_child_cannot_see_instructor_files():
    if sandbox_level() != "bwrap":
        pytest.skip("bwrap sandbox unavailable here (needs root and bubblewrap: make sandbox-deps)")
    driver = "def observe(ns, ops):\n    return ns['probe']()\n"
    cell = ("import os\nfrom pathlib import Path\nimport lab\n"
            "def probe():\n    root = Path(lab.__file__).resolve().parents[1]\n"
            "    listing = lambda p: sorted(os.listdir(p)) if p.exists() else []  # absent or empty: both hide it\n"
            "    return [listing(root / 'grader'), listing(root / 'solutions'), os.getuid(), os.listdir('/tmp')]\n")
    run = run_child({"setup": [], "cells": [["c", cell]], "driver": driver,
                     "scenarios": [{"name": "probe", "ops": []}], "scenario_cpu": 5}, dataclasses.replace(CHILD, wall=30))
    assert run.status == "ok", run
    grader_listing, solutions_listing, uid, tmp = run.records[1]["obs"]
    assert grader_listing == [] and solutions_listing == [] and UID_BASE <= uid < UID_BASE + UID_COUNT
    # A fresh /tmp: only the way to the kept .venv and lab, when the repository itself lives under /tmp.
    expected_tmp = [ROOT.resolve().relative_to("/tmp").parts[0]] if ROOT.resolve().is_relative_to("/tmp") else []
    assert tmp == expected_tmp


@pytest.mark.slow
def test_a_child_reports_a_returned_crash_word_as_a_value_and_a_real_crash_as_a_crash():
    """Through a real child and its protocol, with a driver whose observation is what the function returned: a
    function that returns "crash: boom" returned a string (before NoValue, the grader read it as a crash)."""
    driver = "def observe(ns, ops):\n    return ns[ops[0]]()\n"
    cell = "def spells():\n    return 'crash: boom'\n\ndef raises():\n    raise ValueError('boom')\n"
    run = run_child({"setup": [], "cells": [["c", cell]], "driver": driver, "scenario_cpu": 5,
                     "scenarios": [{"name": "spells", "ops": ["spells"]}, {"name": "raises", "ops": ["raises"]}]},
                    dataclasses.replace(CHILD, wall=30))
    assert run.status == "ok", run
    assert [r["obs"] for r in run.records[1:3]] == ["crash: boom", NoValue(CRASH, "ValueError")]
    said = [str(explain([], [], r["obs"], load(NAME).cases)) for r in run.records[1:3]]
    assert said == ["the scenario did not finish: 'crash: boom'", "the scenario did not finish: crash: ValueError"]


PASSES_VISIBLE = [(name, m) for name, mutants in MUTANTS.items() for m in mutants if m.passes_visible]


@pytest.mark.slow
@pytest.mark.parametrize("assignment, mutant", PASSES_VISIBLE, ids=lambda x: x if isinstance(x, str) else x.name)
def test_variants_that_pass_every_visible_check(assignment, mutant):
    """Hidden rules catch what the visible checks cannot (the variant tests give the verdicts)."""
    from grader import reference
    ns = reference.namespace(assignment, mutated_answers(assignment, mutant))
    test_cell = editions.cells_by_grade_id(editions.nbgrader_source(assignment))[f"{mutant.answer_id}_tests"][0]
    exec(compile(editions.strip_hidden(test_cell.source), "<visible checks>", "exec"), ns)


def test_explanations_name_the_first_difference():
    ops = [["new", {}], ["step"]]
    expected = [{"value": None, "state": {"clock": 0}}, {"value": {"request_id": 2}, "state": {"clock": 1}}]
    actual = [{"value": None, "state": {"clock": 0}}, {"value": {"request_id": 1}, "state": {"clock": 1}}]
    assert str(explain(ops, expected, actual, load(NAME).cases)) == "step 2, sim.step(): returned.request_id: expected 2, got 1"
    assert str(explain(ops, expected, NoValue(TIMEOUT), load(NAME).cases)) == "the scenario did not finish: timeout"
    assert str(explain(ops, expected, "timeout", load(NAME).cases)) == "the scenario did not finish: 'timeout'", "a returned str"
    assert str(first_diff({"queue": [{"request_id": 4, "status": "running"}]}, {"queue": [{"request_id": 4, "status": "waiting"}]})) \
        == "queue[request 4].status: expected 'running', got 'waiting'"


# The words the page gave each way a scenario gives no value, in both languages, before NoValue (they must not change).
NO_VALUE_WORDS = [
    (NoValue(CRASH, "ValueError"), "the scenario did not finish: crash: ValueError", "场景没有运行完：崩溃：ValueError"),
    (NoValue(INVALID, Message("problem_string", {"length": 10000})),   # as grader/runner/protocol.py makes it
     "the scenario did not finish: 'invalid observation: a string of 10000 characters'",
     "场景没有运行完：'无效的观测：一个 10000 个字符的字符串'"),
    (NoValue(TIMEOUT), "the scenario did not finish: timeout", "场景没有运行完：超时"),
    (NoValue(SKIPPED), "the scenario did not finish: skipped after 3 timeouts in a row", "场景没有运行完：连续超时 3 次，已跳过"),
]


def test_a_returned_string_that_spells_a_crash_is_a_value_and_a_real_crash_reads_as_before():
    """What a scenario returned is shown as the value it is, whatever it spells; only a NoValue (the protocol's) reads as a
    crash, a timeout or an invalid observation. Before NoValue, a driver's value "crash: boom" read as a crash ("boom")."""
    ops = [["new", {}], ["step"]]
    expected = [{"value": None, "state": {"clock": 0}}, {"value": {"request_id": 2}, "state": {"clock": 1}}]
    cases = load(NAME).cases
    for returned in ("crash: boom", "invalid observation: a string of 10000 characters", "timeout", "skipped after 3 timeouts in a row"):
        said = explain(ops, expected, returned, cases)
        assert said.text("en") == f"the scenario did not finish: {returned!r}", returned
        assert said.text("zh") == f"场景没有运行完：{returned!r}", returned
    for obs, en, zh in NO_VALUE_WORDS:
        said = explain(ops, expected, obs, cases)
        assert (said.text("en"), said.text("zh")) == (en, zh)


BATCHING = "01_continuous_batching"
BATCHING_FULL = {"todo1": 2, "todo2": 2, "todo3": 3, "todo4": 3}


@pytest.fixture(scope="module")
def batching_grader():
    return Grader(BATCHING)


@pytest.mark.slow
def test_batching_reference_full_and_stub_zero(batching_grader):
    assert scores(batching_grader.grade(editions.reference_answers(BATCHING))) == BATCHING_FULL
    release = nbformat.read(ROOT / "notebooks" / f"{BATCHING}.ipynb", as_version=4)
    stubs = {gid: cells[0].source for gid, cells in editions.cells_by_grade_id(release).items() if gid in BATCHING_FULL}
    assert scores(batching_grader.grade(stubs)) == {gid: 0 for gid in BATCHING_FULL}


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("mutant", MUTANTS[BATCHING], ids=lambda m: f"{m.answer_id}-{m.name}")
def test_batching_variant_costs_its_own_todo_only(batching_grader, mutant, form, tmp_path):
    got = scores(batching_grader.grade(as_saved(BATCHING, mutated_answers(BATCHING, mutant), form, tmp_path)))
    assert got[mutant.answer_id] < BATCHING_FULL[mutant.answer_id]
    assert {k: v for k, v in got.items() if k != mutant.answer_id} == {k: v for k, v in BATCHING_FULL.items() if k != mutant.answer_id}
    assert sum(m.answer_id == mutant.answer_id for m in MUTANTS[BATCHING]) >= 3


@pytest.mark.slow
def test_open_ended_todo_is_judged_by_properties(batching_grader):
    """Another correct workload than the reference's still earns full marks."""
    answers = editions.reference_answers(BATCHING)
    answers["todo3"] = answers["todo3"].replace("[8, 1, 1, 1] * 3), 4", "[12, 1, 1, 1] * 3), 4").replace("[4, 4, 1]), 2", "[5, 5, 5, 2]), 3")
    assert scores(batching_grader.grade(answers))["todo3"] == 3


def test_the_visible_size_check_states_the_judges_limits():
    """TODO 3's visible check and text give the same limits as the workload judge."""
    suite = load(BATCHING).suite
    MAX_ARRIVAL, MAX_JOBS, MAX_SLOTS, MAX_TOKENS, MAX_TOTAL_TOKENS = (suite.MAX_ARRIVAL, suite.MAX_JOBS, suite.MAX_SLOTS,
                                                                   suite.MAX_TOKENS, suite.MAX_TOTAL_TOKENS)
    cell = editions.cells_by_grade_id(editions.nbgrader_source(BATCHING))["todo3_tests"][0].source
    for limit in (f"len(jobs) <= {MAX_JOBS}", f"slots <= {MAX_SLOTS}", f"<= {MAX_TOTAL_TOKENS:_}",
                  f'j["tokens"] <= {MAX_TOKENS:_}', f'j["arrival"] <= {MAX_ARRIVAL:_}'):
        assert limit in cell, limit


def _grader_and_full(request, assignment):
    return (request.getfixturevalue("batching_grader"), BATCHING_FULL) if assignment == BATCHING else \
        (request.getfixturevalue("grader"), FULL)


@pytest.mark.slow
@pytest.mark.parametrize("assignment, gid, reading, source", OPEN, ids=[r[2] for r in OPEN])
def test_a_reading_the_text_leaves_open_scores_full_marks(request, assignment, gid, reading, source):
    grader_, full = _grader_and_full(request, assignment)
    assert scores(grader_.grade(editions.reference_answers(assignment) | {gid: source})) == full


@pytest.mark.slow
@pytest.mark.parametrize("assignment, gid, reading, source, shown", RULED_OUT, ids=[r[2] for r in RULED_OUT])
def test_a_reading_the_text_rules_out_loses_points_on_its_todo_only(request, assignment, gid, reading, source, shown):
    from grader import reference
    grader_, full = _grader_and_full(request, assignment)
    answers = editions.reference_answers(assignment) | {gid: source}
    got = scores(grader_.grade(answers))
    assert got[gid] < full[gid] and {k: v for k, v in got.items() if k != gid} == {k: v for k, v in full.items() if k != gid}
    if shown:  # a student who runs the visible checks meets the rule before the grade does
        checks = editions.strip_hidden(editions.cells_by_grade_id(editions.nbgrader_source(assignment))[f"{gid}_tests"][0].source)
        with pytest.raises(AssertionError):
            exec(compile(checks, "<visible checks>", "exec"), reference.namespace(assignment, answers))


@pytest.mark.slow
def test_a_renamed_function_costs_its_todo_only(batching_grader):
    """The hidden tests call a TODO's function by name: renamed, it scores zero, and the other TODOs keep theirs."""
    answers = editions.reference_answers(BATCHING)
    answers["todo1"] = answers["todo1"].replace("def waits_and_flows(", "def my_waits_and_flows(")
    assert scores(batching_grader.grade(answers)) == BATCHING_FULL | {"todo1": 0}


BATCH = "03_batch_scheduling"
BATCH_FULL = {"todo1": 3, "todo2": 2, "todo3": 3, "todo4": 2, "todo5": 2}


@pytest.fixture(scope="module")
def batch_grader():
    return Grader(BATCH)


@pytest.mark.slow
def test_batch_scheduling_reference_full_and_stub_zero(batch_grader):
    verdicts = batch_grader.grade(editions.reference_answers(BATCH))
    assert scores(verdicts) == BATCH_FULL and all(rule.passed for v in verdicts for rule in v.rules)
    release = nbformat.read(ROOT / "notebooks" / f"{BATCH}.ipynb", as_version=4)
    stubs = {gid: cells[0].source for gid, cells in editions.cells_by_grade_id(release).items() if gid in BATCH_FULL}
    assert scores(batch_grader.grade(stubs)) == {gid: 0 for gid in BATCH_FULL}


@pytest.mark.slow
def test_batch_scheduling_suite_cites_vllm_and_is_randomized(batch_grader):
    names = [sc["name"] for task in batch_grader.tasks for sc in task.scenarios]
    assert sum(name.startswith("vLLM test_") for name in set(names)) >= 8
    for task in batch_grader.tasks:
        if any(rule.judge for rule in task.rules):  # TODO 5: five whole traces, judged by the SLO
            continue
        assert len(task.rules) >= 4 and len(task.scenarios) >= 40
    assert load(BATCH).tasks(1)[0].scenarios != load(BATCH).tasks(2)[0].scenarios


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS[BATCH], ids=lambda m: f"{m.answer_id}-{m.name}")
def test_batch_scheduling_variant_costs_its_own_todo_only(batch_grader, mutant):
    got = scores(batch_grader.grade(mutated_answers(BATCH, mutant)))
    assert got[mutant.answer_id] < BATCH_FULL[mutant.answer_id]
    assert {k: v for k, v in got.items() if k != mutant.answer_id} == {k: v for k, v in BATCH_FULL.items() if k != mutant.answer_id}


def test_batch_scheduling_variants_per_todo():
    for gid in BATCH_FULL:
        assert sum(m.answer_id == gid for m in MUTANTS[BATCH]) >= 3
        assert any(m.answer_id == gid and m.passes_visible for m in MUTANTS[BATCH])




# ------------------------------------------------------------------ TODO 5 of 03: judged by the SLO
@pytest.mark.slow
def test_slo_todo_is_judged_by_the_property_not_the_formula(batch_grader):
    """Other keys that meet the SLO earn full marks: another aging rate, and an aging step per class."""
    answers = editions.reference_answers(BATCH)
    for body in ("(request.priority * 6_000_000 + request.arrival_us,)",
                 "({0: 0, 1: 4_000_000, 2: 6_000_000}[request.priority] + request.arrival_us, request.num_prompt_tokens)"):
        other = answers["todo5"].replace("(request.priority * seconds_per_level * 1_000_000 + request.arrival_us,)", body)
        assert other != answers["todo5"]
        assert scores(batch_grader.grade(answers | {"todo5": other}))["todo5"] == 2


@pytest.mark.parametrize("observed, says", [
    (NoValue(TIMEOUT), "took more than"),
    (NoValue(SKIPPED), "was not run"),
    ("timeout", "was not run"),   # a str the key's run returned as its whole observation is a value, not a timeout
    ([{"error": "NameError", "state": {}}], "no slo_key function"),
    ([{"error": "AttributeError", "state": {}}], "raised AttributeError"),
    ([{"value": "abc", "state": {}}], "one place per request"),
    ([{"value": list(range(1999)), "state": {}}], "one place per request"),
    ([{"value": [0] * 2000, "state": {}}], "one place per request"),
    ([{"value": [str(i) for i in range(2000)], "state": {}}], "one place per request"),
    ([{"value": list(range(2000)), "state": {}}], "class-0 p99 TTFT"),          # arrival order = FCFS on trace 0
    ([{"value": list(range(2000))[::-1], "state": {}}], "class-0 p99 TTFT"),    # newest first
])
def test_the_slo_judge_catches_broken_and_failing_orders(observed, says):
    judge_slo, slo_scenario = load(BATCH).suite.judge_slo, load(BATCH).suite.slo_scenario
    assert says in str(judge_slo(observed, slo_scenario(0)))


def test_the_slo_judge_passes_the_reference_order_and_sees_only_arrival_fields():
    suite = load(BATCH).suite
    judge_slo, slo_scenario = suite.judge_slo, suite.slo_scenario
    from lab.engine import RequestInfo, serving_order
    from grader import term
    ns = reference.namespace(BATCH)
    # the public held-out traces and a term's (drawn from its secret, then kept where the reference meets them)
    for seed in (0, *suite.PUBLIC_HELD_OUT, *suite.held_out_seeds(term.seed_for(b"a term of test_grader's", BATCH))):
        scenario = slo_scenario(seed)
        (kind, rows), = scenario["ops"]
        assert kind == "rank" and all(len(row) == len(RequestInfo.__dataclass_fields__) for row in rows)
        order = serving_order(ns["slo_key"], [RequestInfo(*row) for row in rows])
        assert judge_slo([{"value": order, "state": {}}], scenario) == ""


def test_the_masters_hidden_test_runs_the_terms_held_out_traces_and_names_none(monkeypatch):
    """The master's hidden TODO 5 test (for stock nbgrader runs) reads the term's held-out traces where it runs
    (grader.term.held_out_traces, from the course's secret): the master, and so the repository, names none."""
    import re

    from grader import term
    suite = load(BATCH).suite
    cell = editions.cells_by_grade_id(editions.nbgrader_source(BATCH))["todo5_tests"][0].source
    hidden = cell[cell.index("### BEGIN HIDDEN TESTS"):]
    assert "held_out_traces(\"03_batch_scheduling\")" in hidden
    assert not re.search(r"\d{6,}", hidden)
    assert term.held_out_traces(BATCH) == suite.PUBLIC_HELD_OUT   # the tests' LAB_TERM_SECRET: public
    monkeypatch.setenv(term.SECRET_ENV, "a term of test_grader's")
    assert term.held_out_traces(BATCH) == suite.held_out_seeds(term.seed_for(b"a term of test_grader's", BATCH))


SLOW_KEY = """
@todo("TODO 5")
def slo_key(request):
    spin = sum(range(8_000))  # about half a millisecond of CPU a call: slow, but within what the task allows
    return (request.priority * 4_000_000 + request.arrival_us + spin * 0,)
"""
STATEFUL_KEY = """
calls = []


@todo("TODO 5")
def slo_key(request):
    calls.append(request.seq_id)  # remembers earlier calls: not a function of the request alone
    return (request.priority * 4_000_000 + request.arrival_us + len(calls),)
"""
SWEEP_THEN_KEY = """
for rate in range(150):  # a sweep in the answer cell, before the definition: runs past the cell's time limit
    sum(range(2_000_000))


@todo("TODO 5")
def slo_key(request):
    return (request.priority * 4_000_000 + request.arrival_us,)
"""


@pytest.mark.slow
@pytest.mark.parametrize("source, score, says", [
    (SLOW_KEY, 2, ""),
    (STATEFUL_KEY, 0, "raised ValueError"),
    (SWEEP_THEN_KEY, 0, "there is no slo_key function"),
])
def test_slo_keys_the_grader_must_read_fairly(batch_grader, source, score, says):
    verdict = batch_grader.grade(editions.reference_answers(BATCH) | {"todo5": source})[-1]
    assert verdict.score == score, i18n.summary(verdict)
    assert says in i18n.summary(verdict)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["02_decode_scheduling", "03_batch_scheduling"])
def test_the_references_observations_are_the_same_from_a_fresh_child_and_a_warm_fork(name):
    """03's set-up imports what the warm parent has imported, so its reference runs in a fork of that parent; 02's in a
    fresh child beside it. Either way the scenarios observe the same: each is independent of the process it runs in."""
    from grader import definitions, pipeline
    from grader.grade import PRELOADED

    warm = pipeline.grader_for(name)
    assert bool(definitions.words("\n".join(warm.setup)) & PRELOADED) == (name == "03_batch_scheduling")
    assert Grader(name, warm=False).expected == warm.expected


def test_the_words_a_child_reports_for_a_scenario_that_ran_out_are_those_the_grader_reads():
    import re

    from grader import grade
    from grader.observed import CHILD_ENDINGS
    from grader.runner.cold import PROGRAMS

    child = PROGRAMS["grade"]
    said = re.findall(r'"ended": \["(\w+)"', child) + re.findall(r'ended = \["(\w+)"', child)
    assert sorted(set(said)) == sorted(CHILD_ENDINGS)
    assert [grade.ran_out(NoValue(how)) for how in said] == [how != CRASH for how in said]
    assert not any(grade.ran_out(v) for v in ("timeout", "skipped after 3 timeouts in a row", ["timeout"], None, 0)), \
        "values a scenario returned"
