"""Notebook 03's TODO 5 on held-out traces: the key sees only the requests that have arrived, never the trace's future.

The grading child gets a held-out trace's requests one at a time over its feed (grader/runner/feed.py), each after it
sent back the key of the one before; the grading process sorts by the keys it received. An attacker key that searches
its process for later requests finds none there, and finds them on the old path (the rows in the payload, or
lab.engine.serving_order called with the whole list), so the search itself works. Nor can it rebuild the trace from
what has arrived: a key that matches the first arrivals against exercise_trace of small seeds finds the old held-out
seeds (5, 13) and not a term's (62-bit, drawn from its secret). Honest keys of every number type get the same order
either way. The grader here is a term's, with a secret of this test's (grader/term.py), as a class is graded."""
import pytest

from grader import editions, i18n, term
from grader.assignment import load
from grader.grade import Grader

BATCH = "03_batch_scheduling"
SUITE = load(BATCH).suite
TERM_SEED = term.seed_for(b"test_online_key's term secret", BATCH)
HELD_OUT = SUITE.held_out_seeds(TERM_SEED)
SEED = HELD_OUT[0]
SAMPLED = 100   # the attacker searches on every 100th request (a search of the whole heap costs milliseconds)

# Searches everything it can reach for request-like things (a RequestInfo, a request's dict, a row of four ints): the
# collector's objects, every frame's locals and globals up the stack, and stdin. A request's dict has a prompt: the
# check cells' example engine records (arrivals at 50 and 100 ms) are not requests, and a trace may begin earlier. Its key tells what it
# found: (-1 if it found a request that arrives later than this one, 1 if it found this one, 1 if it searched).
ATTACKER = '''
import gc, os, sys


def _found(value, arrivals, depth=0, seen=None):
    seen = {} if seen is None else seen
    if depth > 8 or seen.get(id(value), 9) <= depth:   # met before, as near the top: done (met deeper: look again)
        return
    seen[id(value)] = depth
    if type(value).__name__ == "RequestInfo":
        arrivals.append(value.arrival_us)
    elif type(value) is dict:
        if type(value.get("arrival_us")) is int and "seq_id" in value and "num_prompt_tokens" in value:
            arrivals.append(value["arrival_us"])
        for item in list(value.values())[:5000]:
            _found(item, arrivals, depth + 1, seen)
    elif type(value) in (list, tuple):
        if len(value) == 4 and all(type(v) is int for v in value) and 0 <= value[0] < 2000 and value[2] in (0, 1, 2):
            arrivals.append(value[1])   # [seq_id, arrival_us, priority, num_prompt_tokens]
        for item in list(value)[:5000]:
            _found(item, arrivals, depth + 1, seen)
    else:
        try:   # an odd object (a dead weak proxy, an attribute that raises) is skipped, not the search
            inner = vars(value) if not isinstance(value, type) and type(value).__name__ != "module" else None
        except Exception:
            inner = None
        if type(inner) is dict:
            _found(inner, arrivals, depth + 1, seen)


def _search():
    arrivals = []
    seen, held = {}, []
    for obj in gc.get_objects():
        _found(obj, arrivals, 7, seen)   # each tracked object and what it holds directly; one seen for all
    frame = sys._getframe(1)
    while frame is not None:
        held.append(dict(frame.f_locals))    # kept alive, so that no later copy reuses its id while seen holds it
        _found(held[-1], arrivals, 0, seen)
        frame = frame.f_back
    try:
        os.set_blocking(0, False)
        text = os.read(0, 1 << 20).decode("utf-8", "replace")   # the payload, if anything of it is left
    except OSError:
        text = ""
    arrivals += [int(word) for word in text.replace(",", " ").replace("]", " ").split() if word.isdigit()]
    return arrivals


def slo_key(request):
    if request.seq_id % SAMPLED:
        return (0, 0, 0)
    arrivals = _search()
    # found or not, not how many: a request asked again finds the same, so serving_order's check of purity holds
    return (-any(a > request.arrival_us for a in arrivals), int(any(a == request.arrival_us for a in arrivals)), 1)
'''.replace("SAMPLED", str(SAMPLED))


@pytest.fixture(scope="module")
def grader():
    return Grader(BATCH, seed=TERM_SEED)


def _task(grader):
    return next(t for t in grader.tasks if t.answer_id == "todo5")


def _held_out(grader):
    """The held-out rule's scenarios as they travel (named), and the same trace on the old path: rows in the payload."""
    task = _task(grader)
    fed = [sc for sc in grader._named(task) if sc["name"] in grader.feeds]
    assert len(fed) == len(HELD_OUT) and all(sc["ops"] == [["rank"]] for sc in fed), fed
    old = {**{k: v for k, v in SUITE.slo_scenario(SEED).items() if k in ("ops", "cpu_seconds")}, "name": "old path"}
    return task, fed, old


@pytest.mark.slow
def test_an_attacker_key_finds_no_later_request_of_a_held_out_trace_in_its_sandboxed_child(grader):
    task, fed, old = _held_out(grader)
    run, server = grader._run_bridged(task, ATTACKER, fed[:1])
    assert run.status == "ok" and server.status == "ok", (run, server)
    replies = run.fed[fed[0]["name"]].replies[:2000]
    searched = {row[0]: reply for row, reply in zip(grader.feeds[fed[0]["name"]]["items"], replies) if reply[2] == 1}
    assert len(searched) == 2000 // SAMPLED, searched
    assert all(later == 0 for later, _, _ in searched.values()), searched          # nothing of the future
    assert all(this >= 1 for _, this, _ in searched.values()), searched            # the search works: it sees its request
    # Positive control in the same kind of child: with the trace's rows in the payload (the old path), every searched
    # request finds later ones (even the last, 1900), so its key (negative) puts it before all the others.
    run, _ = grader._run_bridged(task, ATTACKER, [old])
    (observed,) = run.records[1]["obs"]
    assert run.records[1]["name"] == "old path" and set(observed["value"][: len(searched)]) == set(searched), observed


@pytest.mark.slow
def test_the_same_attacker_finds_the_future_when_serving_order_gets_the_whole_list():
    from lab.engine import RequestInfo, checked_key, serving_order
    namespace = {}
    exec(ATTACKER, namespace)
    infos = [RequestInfo(*row) for row in SUITE.slo_scenario(SEED, held_out=True)["feed"]["items"]]
    keys = []

    def key(info):
        keys.append(checked_key(namespace["slo_key"], info)[0])
        return keys[-1]

    serving_order(key, infos)
    searched = [k for k in keys[:len(infos)] if k[2]]
    assert len(searched) == len(infos) // SAMPLED and all(later < 0 and this == 1 for later, this, _ in searched), searched


FIRST, SEARCHED = 8, 2001   # the key matches a trace's first 8 requests against exercise_trace of seeds 0..2000

# Remembers the first FIRST requests of a trace, then looks for the seed whose trace starts with them: the arrivals of
# each seed first (numpy's generator draws make_trace's gaps first: about 20 us a seed), then the whole rows from
# exercise_trace itself. Its key tells the seed it found (-1: none) from the FIRST-th request on, the same when asked
# again, so it is pure as the feed checks it. A key that found its seed could run the rest of the trace and tune itself.
SEED_SEARCH = """
import numpy as np
from lab.engine import SLO_EXERCISE, exercise_trace

seen, found = [], []


def _seed_of(rows):
    arrivals = [row[1] for row in rows]
    for seed in range(SEARCHED):
        gaps = np.random.default_rng(seed).exponential(1 / SLO_EXERCISE["rate_req_s"], FIRST)
        if (np.cumsum(gaps) * 1e6).astype(np.int64).tolist() == arrivals:
            trace = exercise_trace(seed)[:FIRST]
            if [[r["seq_id"], r["arrival_us"], r["priority"], r["num_prompt_tokens"]] for r in trace] == rows:
                return seed
    return -1


def slo_key(request):
    if request.seq_id == 0:   # a trace begins: exercise_trace's first arrival is request 0
        seen.clear()
        found.clear()
    if len(seen) < FIRST:
        seen.append([request.seq_id, request.arrival_us, request.priority, request.num_prompt_tokens])
        if len(seen) == FIRST:
            found.append(_seed_of(seen))
    return (found[0] if found else -2, request.arrival_us)
""".replace("SEARCHED", str(SEARCHED)).replace("FIRST", str(FIRST))
OLD_SEEDS = (5, 13)   # the held-out seeds before they were drawn from 2^62


@pytest.mark.slow
def test_a_key_that_searches_small_seeds_for_the_trace_it_sees_finds_no_held_out_trace(grader, monkeypatch):
    assert all(2**40 < seed < 2**62 for seed in (*HELD_OUT, *SUITE.PUBLIC_HELD_OUT)), (HELD_OUT, SUITE.PUBLIC_HELD_OUT)
    assert [sc["feed"]["items"] for sc in _task(grader).rules[1].scenarios] == [
        SUITE.slo_scenario(seed, held_out=True)["feed"]["items"] for seed in HELD_OUT]   # the term's, not the public ones
    task, fed, _ = _held_out(grader)
    # Positive control in the same child: the old seeds' traces, fed the same way, are found.
    controls = []
    for seed in OLD_SEEDS:
        scenario = SUITE.slo_scenario(seed, held_out=True)
        monkeypatch.setitem(grader.feeds, f"old seed {seed}", scenario["feed"])
        controls.append({"name": f"old seed {seed}", "ops": scenario["ops"], "cpu_seconds": scenario["cpu_seconds"]})
    run, server = grader._run_bridged(task, SEED_SEARCH, fed + controls)
    assert run.status == "ok" and server.status == "ok", (run, server)
    found = {sc["name"]: {reply[0] for reply in run.fed[sc["name"]].replies[FIRST - 1:]} for sc in fed + controls}
    assert found == {**{sc["name"]: {-1} for sc in fed}, **{f"old seed {seed}": {seed} for seed in OLD_SEEDS}}, found


NUMBER_TYPES = {
    "numpy": "import numpy\n\ndef slo_key(r):\n    return (numpy.float32(r.priority * 4.0 + r.arrival_us / 1e6), numpy.int64(r.seq_id % 3))\n",
    "fraction": "from fractions import Fraction\n\ndef slo_key(r):\n    return Fraction(r.arrival_us, 7) + r.priority * Fraction(4_000_000, 7)\n",
    "big ints and a subclass": ("class Level(int):\n    pass\n\n\ndef slo_key(r):\n"
                                "    return (Level(r.priority) * 10**30 + r.arrival_us, -r.num_prompt_tokens)\n"),
    "ties": "def slo_key(r):\n    return (r.priority, float(r.num_prompt_tokens // 100))\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", NUMBER_TYPES)
def test_honest_keys_of_every_number_type_give_the_order_serving_order_gives(grader, name):
    task, fed, old = _held_out(grader)
    run, _ = grader._run_bridged(task, NUMBER_TYPES[name], [fed[0], old])
    assert run.status == "ok", run
    assert "error" not in run.records[-2]["obs"][0], run.records[-2]
    ranking = SUITE.fed_ranking({**SUITE.slo_scenario(SEED, held_out=True), "fed": run.fed[fed[0]["name"]]})
    assert ranking == run.records[-2]["obs"][0]["value"]


IMPURE = '''
calls = []


def slo_key(request):
    calls.append(1)   # a counter: a request asked again gets another key
    return (request.priority * 4_000_000 + request.arrival_us + len(calls),)
'''


@pytest.mark.slow
@pytest.mark.parametrize("source, says", [
    (IMPURE, "raised ValueError"),                                                    # found by the grading process
    ("def slo_key(request):\n    return float('nan')\n", "raised ValueError"),       # checked in the child, as today
    ("def slo_key(request):\n    return 1 // (request.seq_id - 1500)\n", "raised ZeroDivisionError"),
])
def test_a_key_that_is_not_a_pure_function_of_numbers_fails_the_held_out_rule_as_before(grader, source, says):
    verdict = grader.grade_task(_task(grader), source)
    held_out = verdict.rules[1]
    assert not held_out.passed and says in held_out.detail, i18n.summary(verdict)


def test_the_judge_of_a_held_out_trace_reads_only_what_the_feed_received():
    from grader.runner.feed import Fed
    from lab.engine import RequestInfo, checked_key

    from grader import reference
    scenario = SUITE.slo_scenario(SEED, held_out=True)
    spec, key = scenario["feed"], reference.namespace(BATCH)["slo_key"]
    keys = [checked_key(key, RequestInfo(*row))[0] for row in spec["items"]]
    good = Fed(keys + [keys[i] for i in spec["again"]], True)
    judge = lambda *args: str(SUITE.judge_slo(*args))  # noqa: E731 - a Message's English (grader/messages.py)
    ok = [{"value": None, "state": {}}]
    assert judge(ok, {**scenario, "fed": good}) == ""
    assert judge([{"value": list(range(2000)), "state": {}}], {**scenario, "fed": None}) == "the order given is not one place per request"
    assert "one place" in judge(ok, {**scenario, "fed": Fed(good.replies, False)})
    assert "one place" in judge(ok, {**scenario, "fed": Fed(good.replies[:-1], True)})
    changed = Fed(good.replies[:-1] + [(0,)], True)
    assert "raised ValueError" in judge(ok, {**scenario, "fed": changed})
    for bad in ((float("inf"),), (True,), ("1",), (), [1, 0], ([1, 0],), 3):
        assert "raised ValueError" in judge(ok, {**scenario, "fed": Fed([bad] + good.replies[1:], True)}), bad
    # the reference's order is judged on the trace, and a key that serves newest first misses
    newest = Fed([(-k[0],) for k in keys] + [(-keys[i][0],) for i in spec["again"]], True)
    assert "class-0 p99 TTFT" in judge(ok, {**scenario, "fed": newest})


@pytest.mark.slow
def test_the_reference_answer_passes_both_rules_through_the_feed(grader):
    verdict = grader.grade_task(_task(grader), editions.reference_answers(BATCH)["todo5"] + "\n# through the feed\n")
    assert [rule.passed for rule in verdict.rules] == [True, True], i18n.summary(verdict)
