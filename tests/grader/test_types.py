"""A value of the wrong type is a wrong answer: observations keep their Python types from the child to the verdict
(grader/runner/driver_common.py encodes, grader/observed.py decodes, grader/compare.py compares), and the page shows both
values as Python prints them, naming the types where they differ.

For every TODO of 01-03, the reference answer changed only in the type of what it returns (or stores) loses points
on that TODO alone; most of these scored full marks while observations crossed as plain JSON.
"""
import functools
import json
import random
import re

import numpy
import pytest
from hypothesis import given, settings, strategies as st

from conftest import ROOT
from grader import child_values, editions, i18n
from grader.compare import same
from grader.grade import Grader
from grader.messages import Message
from grader.observed import INVALID, Instance, Malformed, decode_hook, kind
from grader.runner import ChildRun, Protocol

ENCODER: dict = {}
exec((ROOT / "grader" / "runner" / "driver_common.py").read_text(), ENCODER)  # the drivers' own encoder, as a child runs it


def crossed(value):
    """`value` as the grader gets it: encoded in the child, written as child.py writes a record, decoded here."""
    return json.loads(json.dumps(ENCODER["_plain"](value), default=repr), object_hook=decode_hook)


@functools.lru_cache(maxsize=None)
def grader_of(assignment: str) -> Grader:
    return Grader(assignment)


def variant(assignment: str, answer_id: str, *edits) -> str:
    source = editions.reference_answers(assignment)[answer_id]
    for find, replace in edits:
        assert source.count(find) == 1, find
        source = source.replace(find, replace)
    return source


# (assignment, answer cell, what changed, edits of the reference answer): only the type of a value changes.
WRONG_TYPES = [
    ("01_continuous_batching", "todo1", "keyed by str(job id)", [('return {job["id"]:', 'return {str(job["id"]):')]),
    ("01_continuous_batching", "todo1", "(wait, flow) as a list",
     [('(first[job["id"]] - job["arrival"], last[job["id"]] + 1 - job["arrival"])',
       '[first[job["id"]] - job["arrival"], last[job["id"]] + 1 - job["arrival"]]')]),
    ("01_continuous_batching", "todo2", "False for a valid trace", [
        ('            raise ValueError(f"job {job_id} is served {served[job_id]} times but needs {need}")',
         '            raise ValueError(f"job {job_id} is served {served[job_id]} times but needs {need}")\n    return False')]),
    ("01_continuous_batching", "todo3", "(jobs, slots) as a list", [("return jobs_from_tokens([4, 4, 1]), 2", "return [jobs_from_tokens([4, 4, 1]), 2]")]),
    ("01_continuous_batching", "todo3", "numpy tokens", [(
        "return jobs_from_tokens([4, 4, 1]), 2",
        "import numpy\n    return [dict(job, tokens=numpy.int64(job['tokens'])) for job in jobs_from_tokens([4, 4, 1])], 2")]),
    ("01_continuous_batching", "todo4", "a float makespan", [("    return makespan", "    return float(makespan)")]),
    ("01_continuous_batching", "todo4", "a numpy makespan", [("    return makespan", "    import numpy\n    return numpy.int64(makespan)")]),
    ("02_decode_scheduling", "todo1", "a float priority", [("        priority=priority,", "        priority=float(priority),")]),
    ("02_decode_scheduling", "todo2", "a str slack", [
        ("        deadline_slack = req.deadline_step - self.clock - self._remaining_steps(req)",
         "        deadline_slack = str(req.deadline_step - self.clock - self._remaining_steps(req))")]),
    ("02_decode_scheduling", "todo3", "a float request id", [("    return victim.request_id", "    return float(victim.request_id)")]),
    ("02_decode_scheduling", "todo3", "a numpy request id", [("    return victim.request_id", "    import numpy\n    return numpy.int64(victim.request_id)")]),
    ("02_decode_scheduling", "todo4", "a float preempted id", [(
        "        preempted_request_id = self._ensure_capacity(candidate)",
        "        preempted_request_id = self._ensure_capacity(candidate)\n"
        "        preempted_request_id = None if preempted_request_id is None else float(preempted_request_id)")]),
    ("03_batch_scheduling", "todo1", "status as a str", [("        seq.status = SequenceStatus.RUNNING", '        seq.status = "running"')]),
    ("03_batch_scheduling", "todo2", "numpy blocks needed", [(
        "    return missing if missing > 0 else 0  # max(0, missing), without a call: once or twice per request per step",
        "    import numpy\n    return numpy.int64(missing if missing > 0 else 0)")]),
    ("03_batch_scheduling", "todo2", "numpy can_append", [(
        "    return self.num_blocks_needed(seq, num_new_tokens) <= len(self.free_block_ids)",
        "    import numpy\n    return numpy.bool_(self.num_blocks_needed(seq, num_new_tokens) <= len(self.free_block_ids))")]),
    ("03_batch_scheduling", "todo3", "status as a str", [("    seq.status = SequenceStatus.PREEMPTED", '    seq.status = "preempted"')]),
    ("03_batch_scheduling", "todo4", "rows as a tuple", [("    return rows", "    return tuple(rows)")]),
    ("03_batch_scheduling", "todo5", "a str key", [(
        "    return (request.priority * seconds_per_level * 1_000_000 + request.arrival_us,)",
        "    return (str(request.priority * seconds_per_level * 1_000_000 + request.arrival_us),)")]),
]


@pytest.mark.slow
@pytest.mark.parametrize("assignment, answer_id, what, edits", WRONG_TYPES, ids=[f"{a[:2]}-{g}-{w}" for a, g, w, _ in WRONG_TYPES])
def test_a_wrong_type_loses_points_on_its_todo_alone(assignment, answer_id, what, edits):
    grader = grader_of(assignment)
    answers = editions.reference_answers(assignment) | {answer_id: variant(assignment, answer_id, *edits)}
    verdicts = {v.answer_id: v for v in grader.grade(answers)}
    assert verdicts[answer_id].score < verdicts[answer_id].points, (what, i18n.summary(verdicts[answer_id]))
    assert all(v.score == v.points for gid, v in verdicts.items() if gid != answer_id), what


@pytest.mark.slow
def test_the_control_the_reference_keeps_full_marks_and_an_allowed_type_too():
    """The variants above fail for their types alone: the reference scores full marks, and 03's TODO 4, whose text
    allows numpy numbers and an int where a float is expected, keeps them with numpy floats and int percentiles."""
    for assignment in ("01_continuous_batching", "02_decode_scheduling", "03_batch_scheduling"):
        assert all(v.score == v.points for v in grader_of(assignment).grade(editions.reference_answers(assignment)))
    allowed = variant("03_batch_scheduling", "todo4",
                      ("    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)",
                       "    import numpy\n    value = ordered[low] + (ordered[high] - ordered[low]) * (rank - low)\n"
                       "    return int(value) if value == int(value) else numpy.float64(value)"))
    verdicts = grader_of("03_batch_scheduling").grade(editions.reference_answers("03_batch_scheduling") | {"todo4": allowed})
    assert all(v.score == v.points for v in verdicts), [i18n.summary(v) for v in verdicts if v.score < v.points]


@pytest.mark.slow
def test_a_str_keyed_todo1_loses_points_with_a_message_that_names_the_key_type():
    answers = editions.reference_answers("01_continuous_batching") | {"todo1": variant("01_continuous_batching", "todo1", WRONG_TYPES[0][3][0])}
    verdict = grader_of("01_continuous_batching").grade(answers)[0]
    assert verdict.score == 0
    details = [rule.detail for rule in verdict.rules]
    assert all(re.search(r"returned: expected \{\d+: \(\d+, \d+\).*\} \(int keys\), got \{'\d+': \(\d+, \d+\).*\} \(str keys\)$", d)
               for d in details), details
    zh = i18n.summary(verdict, "zh")
    assert "（键的类型为 int），实际为 {'" in zh and "（键的类型为 str）" in zh


# ------------------------------------------------------------------ the page's values are Python's repr
@pytest.mark.slow
def test_the_pages_values_are_the_repr_of_what_the_code_returned():
    """Both sides of a difference as Python prints them (ascii(): the same for ASCII text), the types named."""
    grader = grader_of("01_continuous_batching")
    answers = editions.reference_answers("01_continuous_batching") | {"todo1": variant("01_continuous_batching", "todo1", WRONG_TYPES[1][3][0])}
    rule = grader.grade(answers)[0].rules[0]
    ns = {"__name__": "__main__"}
    exec("from lab import *\nimport heapq\nfrom lab import todo\n" + editions.reference_answers("01_continuous_batching")["todo1"], ns)
    ours = eval(rule.snippet, ns)   # noqa: S307 - the grader's own snippet, run on the reference
    exec(answers["todo1"], ns)
    theirs = eval(rule.snippet, ns)   # noqa: S307
    key = next(iter(ours))   # every value is a list where a tuple belongs: the first key is where they first differ
    assert rule.detail.endswith(f"returned[{key!r}]: expected {ours[key]!r} (tuple), got {theirs[key]!r} (list)"), rule.detail


VALUES = [{0: (0, 1)}, {"0": (0, 1)}, [1, 1.0, True, None, "s"], (1, [2, (3,)]), {(0, 1): frozenset({2})}, {1, 2},
          numpy.int64(3), numpy.float32(0.5), numpy.bool_(True), numpy.float64(2.5), {"$tuple": [1]}, float("inf")]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_value_crosses_with_its_type_and_prints_as_python_prints_it(value):
    got = crossed(value)
    assert repr(got) == repr(value) and kind(got) == kind(value) and same(value, got) and child_values.problem(got) == ""


def test_an_object_crosses_as_its_type_its_repr_and_its_builtin_value():
    from collections import defaultdict, namedtuple

    from lab.engine import SequenceStatus
    point = namedtuple("Point", "x y")(1, 2)
    for value, base in ((point, (1, 2)), (defaultdict(int, {1: 2}), {1: 2}), (SequenceStatus.RUNNING, "running"),
                        (numpy.array([1, 2]), None), ((x for x in ()), None)):
        got = crossed(value)
        assert type(got) is Instance and got.base == base and type(got.base) is type(base)
        assert re.sub(r" at 0x\w+", "", repr(got)) == re.sub(r" at 0x\w+", "", repr(value))
    assert same((1, 2), crossed(point)) and not same([1, 2], crossed(point))        # a namedtuple is a tuple
    assert same("running", crossed(SequenceStatus.RUNNING))                            # where a str is expected
    assert not same(crossed(SequenceStatus.RUNNING), "running")                        # where the reference set the enum


leaves = (st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.floats() | st.text(max_size=6)
          | st.integers(-2 ** 63, 2 ** 63 - 1).map(numpy.int64) | st.booleans().map(numpy.bool_))
hashables = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4), lambda inner: st.tuples(inner, inner), max_leaves=4)
typed = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner) | st.sets(hashables, max_size=3)
                     | st.dictionaries(hashables, inner, max_size=3), max_leaves=16)


@pytest.mark.slow
@given(typed)
@settings(max_examples=300, deadline=None)
def test_every_value_crosses_unchanged_in_type_and_value(value):
    got = crossed(value)
    assert same(value, got) and same(got, value)   # same() compares types strictly (tests/grader/test_compare.py)


# ------------------------------------------------------------------ a hostile child: decoding is total
tags = st.sampled_from(["$tuple", "$set", "$frozenset", "$dict", "$numpy", "$obj", "$", "$x", "tuple"])
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3) | tags, inner, max_size=2)
                           | st.builds(lambda tag, value: {tag: value}, tags, inner), max_leaves=12)


@pytest.mark.slow
@given(json_values)
@settings(max_examples=500, deadline=None)
def test_decoding_anything_a_child_writes_gives_a_value_or_malformed_never_a_crash(value):
    line = json.dumps(value)
    try:
        got = json.loads(line, object_hook=decode_hook)
    except Malformed:
        return
    child_values.problem(got)   # total too
    ascii(got), kind(got)


MALFORMED = ['{"$tuple": 1}', '{"$dict": [[[1], 2]]}', '{"$dict": [[1, 2], [1, 3]]}', '{"$numpy": ["int8", 300]}',
             '{"$numpy": ["object", 1]}', '{"$numpy": ["int64", 1.5]}', '{"$obj": ["x", "y", ["int", true]]}', '{"$obj": ["", "y", null]}',
             '{"$obj": ["x", 3, null]}', '{"$set": [[1]]}', '{"$eval": "__import__(\'os\')"}', '{"$frozenset": [1, 1]}']


@pytest.mark.slow
@pytest.mark.parametrize("obs", MALFORMED)
def test_a_malformed_tag_is_an_invalid_observation_and_a_wrong_answer_not_a_crash(obs):
    grader = grader_of("01_continuous_batching")
    task = grader.tasks[0]
    names = [sc["name"] for sc in grader._named(task)]
    protocol = Protocol(grader.answer_ids, names)
    lines = [b'{"kind": "cells", "errors": {}}'] + [
        f'{{"kind": "scenario", "name": "{name}", "obs": [{{"value": {obs}}}]}}'.encode() for name in names] + [b'{"kind": "done"}']
    assert all(protocol.feed(line) for line in lines), protocol.error
    assert {(r["obs"].how, str(r["obs"].detail)) for r in protocol.records if r["kind"] == "scenario"} <= {(INVALID, m) for m in (
        "a malformed $tuple tag", "a malformed $dict tag", "a dict with a key twice", "a malformed $numpy tag",
        "a numpy scalar of an unknown kind", "an object's builtin value of the wrong kind", "an object's type name of the wrong length",
        "a malformed $obj tag", "a malformed $set tag", "an unknown tag", "a frozenset with an item twice")}
    run = ChildRun(protocol.records, lines=protocol.lines)
    verdict = grader._verdict(task, "# hostile", run)
    assert verdict.score == 0 and all("invalid observation" in rule.detail for rule in verdict.rules)
    assert all(rule.detail in i18n.summary(verdict) for rule in verdict.rules)


def test_a_malformed_tag_in_the_cells_record_or_out_of_place_garbles_the_run():
    protocol = Protocol(["todo1"], ["a"])
    assert not protocol.feed(b'{"kind": "cells", "errors": {"$tuple": 1}}') and protocol.error == Message("record_cells_malformed")
    protocol = Protocol(["todo1"], ["a"])
    assert protocol.feed(b'{"kind": "cells", "errors": {}}')
    assert not protocol.feed(b'{"kind": "scenario", "name": {"$tuple": ["a"]}, "obs": 1}')


def test_an_objects_name_and_repr_reach_the_page_only_within_the_budget_and_printable():
    rng = random.Random(4)
    text = "".join(rng.choice("QXZ\u4e2d\x1b\r\n") for _ in range(380))
    value = Instance("__graded__." + "Q" * 100, text, None)
    budget = child_values.Budget()
    shown = f"{budget.value(value)} ({budget.kind(value)})"
    assert shown.isascii() and shown.isprintable() and "an object" in shown and len(shown) < child_values.FEEDBACK_BUDGET + 20
