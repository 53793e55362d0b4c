"""The feedback leak bound: what a grading child reports reaches a student's page only within each rule's budget.

A child runs student code next to the reference answers of the other TODOs, so whatever it reports may carry
them out (an attack that was found: a dict of 40-character strings, 59 CJK characters in an exception name). Here every rule
of every suite is given adversarial observations, fed through the real result protocol; the real feedback page
is rendered, and the characters of the child's values found on it are counted, per rule and per TODO note.
"""
import copy
import json
import random

import pytest

from grader import child_values, editions, feedback, i18n, sample_submissions, sanitize
from grader.grade import Grader
from grader.observed import INVALID, NoValue
from grader.paths import assignment_names
from grader.runner import ChildRun, Protocol

MIN_RUN = 5   # a run of this many characters copied from the child's values counts (shorter ones may be ours)
# ... if it holds a letter (Latin or CJK): quotes, commas, braces, spaces and digits are how every rendering of every value
# is written, ours too (a case's `['r17', 'r3']` shares "7', '" with the ascii of ['..\u6587', '..'], a nested dict's
# `': {'` with any other), and carry none of the child's content; a run that does hold a letter counts in full.
# Terminal and markup controls, in words no message of ours contains: a hyperlink, a forged line, an image.
CONTROL = "\x1b[2J\x1b]8;;http://qzx.jk/\x07qzx\x1b]8;;\x07\r[3/3] qzxjk 12/12 qzx\n<img src=x onerror=qzx(1)>"


def text(rng: random.Random, n: int = 40) -> str:
    """A string no message of ours contains: letters, CJK and control characters."""
    return "".join(rng.choice("QXZJKVWqxzjkvw\u4e2d\u6587\x1b\x07\r") for _ in range(n))


def nest(rng: random.Random, depth: int):
    """A chain of dicts `depth` deep, each level under a key of its own, a CJK string at the bottom."""
    value = text(rng, 300)
    for _ in range(depth):
        value = {text(rng): value}
    return value


def _op(expected: list, value=None, **fields) -> list:
    """The expected observations with the first op's replaced (the rest copied: they carry nothing)."""
    first = {k: v for k, v in expected[0].items() if k not in ("value", "error")} | fields
    return [first, *copy.deepcopy(expected[1:])]


def _state(expected: list, rng: random.Random) -> tuple[list, list]:
    key, value = text(rng), nest(rng, 8)
    state = expected[0].get("state")
    extra = {key: value} if not isinstance(state, dict) else {**copy.deepcopy(state), key: value}
    return [{**expected[0], "state": extra}, *copy.deepcopy(expected[1:])], [key, value]


def _tagged_pairs(expected: list, pairs: list) -> tuple[list, list]:
    """A returned dict keyed by 1-tuples of the child's strings, each value a set of one more."""
    value = {"$dict": [[{"$tuple": [key]}, {"$set": [item]}] for key, item in pairs]}
    return _op(expected, value=value), [text for pair in pairs for text in pair]


def _workload(rng: random.Random):
    return [[{"id": text(rng, 400), "arrival": 0, "tokens": 1, text(rng): 1}], 2]


class Ended(list):
    """How a scenario gave no value, as the child reports it ("ended": [how, detail]) in place of an observation."""


# name -> make(expected observations, rng) -> (observation the child reports, the parts of it that are its own)
FAMILIES = {
    "a dict of many 40-character strings": lambda e, r: (v := {text(r): text(r) for _ in range(300)}, [v]),
    "lists of 40-character strings in place of every op": lambda e, r: (v := [[text(r) for _ in range(40)] for _ in e], [v]),
    "a returned dict of lists": lambda e, r: (_op(e, value=(v := {text(r): [text(r)] * 6 for _ in range(30)})), [v]),
    "a CJK exception name": lambda e, r: (_op(e, error=(v := "\u6f22" * 59)), [v]),
    "a 400-character exception name": lambda e, r: (_op(e, error=(v := "E" + "x" * 399)), [v]),
    "a 40-character exception name": lambda e, r: (_op(e, error=(v := "Q" + "".join(r.choice("JKVWXZ") for _ in range(39)))), [v]),
    "a state with a key of its own, nested deep": _state,
    "control characters and markup": lambda e, r: (_op(e, value=CONTROL), [CONTROL]),
    "more observations than ops": lambda e, r: (e + (v := [{"value": text(r)} for _ in range(50)]), v),
    "a crash with a CJK name": lambda e, r: (Ended(["crash", (v := "\u6f22" * 59)]), [v]),
    "a crash with a long name": lambda e, r: (Ended(["crash", (v := "Q" * 300)]), [v]),
    "lists nested twelve deep": lambda e, r: (v := [[[[[[[[[[[[text(r)] * 3]]]]]]]]]]], [v]),
    "a workload whose ids and keys are its own": lambda e, r: (_op(e, value=(v := _workload(r))), [v]),
    # the drivers' tags (grader/runner/driver_common.py): an object's class name and repr, keys and items of its own
    "an object whose class and repr are its own": lambda e, r: (
        _op(e, value={"$obj": [(n := "__graded__." + text(r)), (t := text(r, 400)), None]}), [n, t]),
    "an object named like a class, with a builtin value": lambda e, r: (
        _op(e, value={"$obj": [(n := "__graded__." + "Qxzjk" * 11), (t := text(r, 400)), ["tuple", (v := [text(r)] * 5)]]}),
        [n, t, v]),
    "a dict keyed by tuples, values in sets": lambda e, r: _tagged_pairs(e, [(text(r), text(r)) for _ in range(20)]),
    "a malformed tag": lambda e, r: (_op(e, value={"$obj": [(v := text(r)), 1, None]}), [v]),
}
CELL_ERRORS = ["\u6f22" * 59 + ": QXZJK", "Q" + "Z" * 39 + ": x", "A" * 5000, CONTROL]


def renderings(parts: list) -> str:
    """Every way a message could write the child's values or their pieces."""
    found = []

    def walk(value):
        found.extend([ascii(value), repr(value), str(value), json.dumps(value)])
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key), walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for part in parts:
        walk(part)
    return "\0".join(found)


def copied(line: str, sources: str) -> int:
    """How many characters of `line` lie in runs of at least MIN_RUN copied from `sources` that hold a letter."""
    count, i = 0, 0
    while i < len(line):
        j = i + MIN_RUN
        if j <= len(line) and line[i:j] in sources:
            while j < len(line) and line[i:j + 1] in sources:
                j += 1
            if any(c.isalpha() for c in line[i:j]):
                count, i = count + j - i, j
                continue
        i += 1   # syntax and digits only: a run that starts later may still hold a letter
    return count


def child_run(grader: Grader, family: str, scenarios: list, cell_ids: list) -> tuple[ChildRun, list]:
    """What a hostile child reports for these scenarios, through the real protocol; and the values it made up.

    Each scenario gets the same made-up values (seeded alike), so one set of renderings covers them all."""
    protocol, own = Protocol(cell_ids, [sc["name"] for sc in scenarios]), []
    errors = {gid: CELL_ERRORS[len(family) % len(CELL_ERRORS)] for gid in cell_ids}
    lines = [{"kind": "cells", "errors": errors}]
    for sc in scenarios:  # a candidate of a failing case being cut down (grader/shrink.py) has no stored reference
        template = grader.expected.get(sc["name"]) or [{"value": None, "state": None} for _ in sc["ops"]]
        obs, own = FAMILIES[family](template, random.Random(family))
        lines.append({"kind": "scenario", "name": sc["name"], **({"ended": obs} if type(obs) is Ended else {"obs": obs})})
    for record in [*lines, {"kind": "done"}]:
        assert protocol.feed(json.dumps(record, default=repr).encode()), protocol.error   # a copied object of the reference's: its repr
    accepted = [r["obs"] for r in protocol.records if r["kind"] == "scenario"]
    assert not [o for o in accepted if type(o) is NoValue and o.how == INVALID], "the schema refused the attack itself"
    return ChildRun(protocol.records), own + list(errors.values())


def task_of(grader: Grader, scenarios: list):
    """The task whose named scenarios these are."""
    return next(task for task in grader.tasks if grader._named(task) == scenarios)


def page_lines(assignment: str, verdicts) -> list[str]:
    """The verdict text of the rendered, sanitised feedback page, line by line."""
    nb = sample_submissions.release(assignment)
    feedback.redact(nb, i18n.feedback_texts(verdicts), editions.hidden_snippets(editions.nbgrader_source(assignment)))
    page, why = sanitize.clean_page(feedback.render(nb, assignment, verdicts))
    assert page is not None, why
    return feedback.visible_text(page).splitlines()


@pytest.fixture(scope="module", params=assignment_names())
def graded(request):
    """Every rule of the suite under every family of attack: the page lines and the child's parts."""
    grader, results = Grader(request.param, warm=False), []
    for round_, family in enumerate(FAMILIES):
        parts = []

        def run(task, scenarios=None, family=family, parts=parts):
            done, own = child_run(grader, family, grader._named(task) if scenarios is None else scenarios, grader.answer_ids)
            parts[:] = own  # alike for every TODO
            return done

        # The student's child is what reports; with a reference server beside it (main's bridge), that too.
        if hasattr(grader, "_run_bridged"):
            grader._run_bridged = lambda task, source, scenarios=None, timeout=None, run=run: (run(task, scenarios), ChildRun())
        else:
            grader._run = lambda cells, scenarios, run=run: run(task_of(grader, scenarios))
        verdicts = grader.grade({gid: f"# attack {round_}\n" for gid in grader.answer_ids})
        results.append((family, verdicts, renderings(parts), page_lines(request.param, verdicts)))
    return grader, results


@pytest.mark.slow
def test_every_rule_shows_at_most_its_budget_of_the_childs_values(graded):
    grader, results = graded
    worst, attacked = 0, set()
    for family, verdicts, own, lines in results:
        for verdict in verdicts:
            for rule in verdict.rules:
                if rule.passed:  # a judged rule holds for a copy of the reference's own value
                    continue
                attacked.add(rule.name)
                shown = [line for line in lines if line.strip() == rule.detail.strip()]
                assert shown, (family, rule.detail)  # the detail is on the page as built
                count = copied(shown[0], own)
                assert count <= child_values.FEEDBACK_BUDGET, (family, rule.name, shown[0])
                assert shown[0].isascii() and shown[0].isprintable(), (family, shown[0])
                worst = max(worst, count)
            note = [line for line in lines if line.strip() == f"note: {verdict.note}"]
            assert note and copied(note[0], own) <= child_values.NAME_CHARS, (family, verdict.note)
            assert note[0].isascii() and note[0].isprintable()
    assert attacked == {rule.name for task in grader.tasks for rule in task.rules}
    cut = sum("cut down to a smaller case" in rule.detail for _, verdicts, _, _ in results for v in verdicts for rule in v.rules)
    print(f"\nrules whose failing case was cut down under attack (its values shown within the same budget): {cut}")
    assert cut, "the attacks reach the cases cut down by a second run too (grader/shrink.py), and the bound holds there"
    print(f"\nmost characters of a child's values shown by one rule: {worst}")
    assert worst > child_values.FEEDBACK_BUDGET // 2  # the attacks do reach the page: the bound is what holds them


def test_the_count_finds_a_value_shown_in_full():
    """Positive control: the old feedback ("did not finish: {actual}", cut at 400) counts far above the budget."""
    rng = random.Random(1)
    value = {text(rng): text(rng) for _ in range(300)}
    old = f"the scenario did not finish: {value}"[:400]
    assert copied(old, renderings([value])) > 3 * child_values.FEEDBACK_BUDGET
    assert copied(f"got {child_values.shown(value)}", renderings([value])) <= child_values.FEEDBACK_BUDGET


def test_the_count_leaves_out_runs_of_syntax_and_digits_only():
    """The trial assignment 05_round_robin's cases were counted as leaked: `['r17', 'r3']` shares "7', '" with the
    ascii of the attack's strings that end in \u6587, and `{'r1': {'` shares "': {'" with its nested dicts. Such
    runs are every value's syntax, not the child's content; a run of the child's letters still counts, in full."""
    rng = random.Random(1)
    value = [[text(rng) for _ in range(40)] for _ in range(3)] + [{text(rng): {text(rng): text(rng)}}]
    sources = renderings([value])
    assert "7', '" in sources and "': {'" in sources    # the two runs the old count took for the child's
    assert copied("pick_next(dict(queue=['r17', 'r3'], remaining={'r1': {'tokens': 3}}))", sources) == 0
    leaked = ascii(value[0][5])[1:-1]   # one of the child's strings, as an escaped repr would write it
    assert copied(f"got ['r17', '{leaked}']", sources) >= len(leaked)
    assert copied(f"got {value[0][5][:MIN_RUN]} here", sources) == MIN_RUN   # five of its letters are enough
