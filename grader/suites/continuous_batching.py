"""Hidden rules of 01_continuous_batching.

TODO 1, 2 and 4 are compared with the reference on seed examples and seeded random schedules
(produced here with the trusted lab.schedule). TODO 3 is open-ended, so its rules judge
properties of the student's workload instead.
"""
from __future__ import annotations

import copy
import random

from lab import A_TO_E, FOUR_ON_TWO, NO_GAIN, schedule

from ..schema import shown
from .base import Rule, Task, seeded

DRIVER = "batching"


def rand_jobs(rng: random.Random, n: int | None = None, spread: int = 12, max_tokens: int = 9) -> list[dict]:
    n = n if n is not None else rng.randint(1, 9)
    ids = rng.sample(range(100), n)
    return [{"id": i, "arrival": rng.randint(0, spread), "tokens": rng.randint(1, max_tokens)} for i in ids]


def trace_case(rng: random.Random, continuous: bool | None = None, spread: int = 12) -> tuple[list, list]:
    jobs = rand_jobs(rng, spread=spread)
    slots = rng.randint(1, 4)
    result = schedule(jobs, slots, rng.random() < 0.5 if continuous is None else continuous)
    return jobs, result["trace"]


def call(fn: str, *args) -> list:
    return [[fn, list(args)]]


def seed_examples(fn: str) -> list[dict]:
    cases = []
    for example in (FOUR_ON_TWO, NO_GAIN, A_TO_E):
        for continuous in (False, True):
            trace = schedule(example.jobs, example.slots, continuous)["trace"]
            cases.append({"name": f"worked example: {example.name}, {'continuous' if continuous else 'static'}",
                          "ops": call(fn, example.jobs, trace)})
    return cases


def corrupt(rng: random.Random, how: str) -> list:
    """A schedule's trace broken in one way (or left valid)."""
    jobs, trace = trace_case(rng)
    trace = copy.deepcopy(trace)
    busy = [row for row in trace if row["served"]]
    if how == "drop":
        row = rng.choice(busy)
        row["served"].remove(rng.choice(row["served"]))
    elif how == "extra":
        rng.choice(trace)["served"].append(rng.choice(jobs)["id"])  # one serve more than its tokens
    elif how == "unknown":
        rng.choice(busy)["served"].append(1000 + rng.randint(0, 50))
    elif how == "missing":
        victim = rng.choice(jobs)["id"]
        for row in trace:
            row["served"] = [i for i in row["served"] if i != victim]
    return call("check_served_exactly", jobs, trace)


def judge_no_gain(observed, scenario=None) -> str:
    return _judge_workload(observed, want_ratio=None)


def judge_double_gain(observed, scenario=None) -> str:
    return _judge_workload(observed, want_ratio=2)


def _judge_workload(observed, want_ratio) -> str:
    if not isinstance(observed, list) or not observed or not isinstance(observed[0], dict) or "value" not in observed[0]:
        return f"the function did not return: {shown(observed)}"
    value = observed[0]["value"]
    if not (isinstance(value, list) and len(value) == 2):
        return f"expected a (jobs, slots) pair, got {shown(value)}"
    jobs, slots = value
    too_big = workload_too_big(jobs, slots)
    if too_big:
        return too_big
    try:
        static, cont = schedule(jobs, slots, False), schedule(jobs, slots, True)
    except ValueError as exc:
        return f"lab.schedule rejects the workload: {shown(str(exc))}"  # its message quotes the student's ids and keys
    a, b = static["makespan_ticks"], cont["makespan_ticks"]
    if want_ratio is None:
        tokens = {job["tokens"] for job in jobs}
        if slots < 2 or len(jobs) <= slots or len(tokens) < 2:
            return "make it non-trivial: at least 2 slots, more jobs than slots, and not all the same length"
        return "" if a == b else f"static takes {a} ticks and continuous {b}: not the same"
    return "" if a >= want_ratio * b else f"static {a} / continuous {b} = {a / b:.2f}, below {want_ratio}"


# The judge simulates the student's workload in the grading process: bound it before it runs.
MAX_JOBS, MAX_TOKENS, MAX_ARRIVAL, MAX_SLOTS, MAX_TOTAL_TOKENS = 200, 1000, 1000, 64, 20_000


def workload_too_big(jobs, slots) -> str:
    """'' if the workload is small enough to simulate here, else why it is refused (checked before any work)."""
    if not isinstance(jobs, list) or len(jobs) > MAX_JOBS:
        return f"expected a list of at most {MAX_JOBS} jobs"
    if type(slots) is not int or not 0 < slots <= MAX_SLOTS:
        return f"slots must be an int from 1 to {MAX_SLOTS}"
    total = 0
    for job in jobs:  # wrong types are left to lab.schedule, which rejects them cheaply
        tokens, arrival = (job.get("tokens"), job.get("arrival")) if isinstance(job, dict) else (None, None)
        if (type(tokens) is int and tokens > MAX_TOKENS) or (type(arrival) is int and arrival > MAX_ARRIVAL):
            return f"keep it small: at most {MAX_TOKENS} tokens and arrival at most {MAX_ARRIVAL} per job"
        total += tokens if type(tokens) is int and tokens > 0 else 0
    return "" if total <= MAX_TOTAL_TOKENS else f"keep it small: at most {MAX_TOTAL_TOKENS} tokens in all"


def todo1_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("waits and flows on the worked examples", seed_examples("waits_and_flows")),
        Rule("continuous schedules with staggered arrivals",
             seeded("continuous", 12, lambda i: call("waits_and_flows", *trace_case(rng, True)))),
        Rule("static schedules, where a group holds its slots",
             seeded("static", 12, lambda i: call("waits_and_flows", *trace_case(rng, False)))),
        Rule("idle gaps: the clock jumps to late arrivals",
             seeded("late arrivals", 10, lambda i: call("waits_and_flows", *trace_case(rng, spread=60)))),
    ]


# The text counts serves, not ticks: an id listed twice in one tick is served twice.
TWICE_IN_ONE_TICK = [{"name": "an id listed twice in one tick",
                      "ops": call("check_served_exactly", [{"id": 3, "arrival": 0, "tokens": 2}],
                                  [{"tick": 0, "served": [3, 3]}, {"tick": 1, "served": [3]}])}]


def todo2_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("valid traces pass", seed_examples("check_served_exactly")
             + seeded("valid", 12, lambda i: corrupt(rng, "none"))),
        Rule("a job served too few times is caught", seeded("dropped serve", 10, lambda i: corrupt(rng, "drop"))),
        Rule("a job served too many times is caught", TWICE_IN_ONE_TICK + seeded("extra serve", 10, lambda i: corrupt(rng, "extra"))),
        Rule("an id that is not a job is caught", seeded("unknown id", 8, lambda i: corrupt(rng, "unknown"))),
        Rule("a job never served is caught", seeded("never served", 8, lambda i: corrupt(rng, "missing"))),
    ]


def todo3_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("no_gain_case: a valid, non-trivial workload where continuous gains nothing",
             [{"name": "no_gain_case()", "ops": call("no_gain_case")}], judge=judge_no_gain),
        Rule("double_gain_case: a valid workload where static takes at least 2x the ticks",
             [{"name": "double_gain_case()", "ops": call("double_gain_case")}], judge=judge_double_gain),
    ]


def todo4_rules(rng: random.Random) -> list[Rule]:
    def random_case(continuous):
        return call("predicted_makespan", [rng.randint(1, 12) for _ in range(rng.randint(1, 14))], rng.randint(1, 5), continuous)

    seeds = [{"name": f"worked example: {e.name}, {'continuous' if c else 'static'}",
              "ops": call("predicted_makespan", [j["tokens"] for j in e.jobs], e.slots, c)}
             for e in (FOUR_ON_TWO, A_TO_E) for c in (False, True)]
    return [
        Rule("the worked examples", seeds),
        Rule("static: each group lasts as long as its longest job", seeded("static", 14, lambda i: random_case(False))),
        Rule("continuous: a freed slot takes the next job at once", seeded("continuous", 14, lambda i: random_case(True))),
        Rule("edges: one job, more slots than jobs, no jobs",
             [{"name": "one job", "ops": call("predicted_makespan", [5], 3, True) + call("predicted_makespan", [5], 3, False)},
              {"name": "more slots than jobs", "ops": call("predicted_makespan", [3, 1, 2], 8, False) + call("predicted_makespan", [3, 1, 2], 8, True)},
              {"name": "no jobs", "ops": call("predicted_makespan", [], 2, True) + call("predicted_makespan", [], 2, False)}]),
    ]


def build(seed: int) -> list[Task]:
    rng = random.Random(seed)
    return [
        Task("TODO 1", "todo1", "todo1_tests", 2, todo1_rules(rng)),
        Task("TODO 2", "todo2", "todo2_tests", 2, todo2_rules(rng)),
        Task("TODO 3", "todo3", "todo3_tests", 3, todo3_rules(rng)),
        Task("TODO 4", "todo4", "todo4_tests", 3, todo4_rules(rng)),
    ]
