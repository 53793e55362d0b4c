"""Hidden rules of 01_continuous_batching.

TODO 1, 2 and 4 are compared with the reference on seed examples and seeded random schedules
(produced here with the trusted lab.schedule, and with other schedulers that FIFO batching
cannot imitate). TODO 3 is open-ended, so its rules judge properties of the student's workload instead.
Every rule holds a case that each constant answer fails (tests/grader/test_trivial_answers.py).
"""
from __future__ import annotations

import copy
import random

from lab import A_TO_E, FOUR_ON_TWO, NO_GAIN, schedule

from grader.messages import Message, kind_name, lab_text
from grader.child_values import FEEDBACK_BUDGET, Budget, shown
from grader.contract import Rule, named, numbered, scenario, seeded, with_policy, worked_example
from grader.term import cases_seed



def rand_jobs(rng: random.Random, n: int | None = None, spread: int = 12, max_tokens: int = 9) -> list[dict]:
    n = n if n is not None else rng.randint(1, 9)
    ids = rng.sample(range(100), n)
    return [{"id": i, "arrival": rng.randint(0, spread), "tokens": rng.randint(1, max_tokens)} for i in ids]


def trace_case(rng: random.Random, continuous: bool | None = None, spread: int = 12) -> tuple[list, list]:
    jobs, _, trace = sized_trace_case(rng, continuous, spread)
    return jobs, trace


def sized_trace_case(rng: random.Random, continuous: bool | None = None, spread: int = 12) -> tuple[list, int, list]:
    jobs = rand_jobs(rng, spread=spread)
    slots = rng.randint(1, 4)
    result = schedule(jobs, slots, rng.random() < 0.5 if continuous is None else continuous)
    return jobs, slots, result["trace"]


# Admission orders of other schedulers (a key of job and tokens left; smallest first): none of them is FIFO.
ORDERS = {
    "longest first": lambda job, left: (-job["tokens"], job["id"]),
    "newest first": lambda job, left: (-job["arrival"], -job["id"]),
    "shortest remaining first": lambda job, left: (left, job["id"]),
}


def other_trace(jobs: list[dict], slots: int, order: str, continuous: bool = True, preemptive: bool = False,
                pause: int = 0) -> list[dict]:
    """A valid trace of another scheduler: admission by `order`, `pause` idle ticks while the first jobs wait,
    and (preemptive) any running job may be paused for a more urgent one. Never one that lab.schedule makes."""
    key = ORDERS[order]
    left = {job["id"]: job["tokens"] for job in jobs}
    running, trace, clock = [], [], min((job["arrival"] for job in jobs), default=0) + pause
    while any(left.values()):
        ready = [job for job in jobs if left[job["id"]] and job["arrival"] <= clock and job not in running]
        if not running and not ready:  # idle: jump to the next arrival, as schedule does
            clock = min(job["arrival"] for job in jobs if left[job["id"]])
            continue
        running = _admitted(running, ready, slots, lambda job: key(job, left[job["id"]]), continuous, preemptive)
        trace.append({"tick": clock, "served": [job["id"] for job in running]})
        running = _served(running, left)
        clock += 1
    if made_by_fifo(jobs, trace):  # the order happened to be FIFO's: idle ticks while jobs wait, which FIFO never has
        return other_trace(jobs, slots, order, continuous, preemptive, pause + 1)
    return trace


def _admitted(running: list[dict], ready: list[dict], slots: int, urgency, continuous: bool, preemptive: bool) -> list[dict]:
    """The jobs that run this tick, in serving order (`urgency`: other_trace's key of a job, smallest first)."""
    if preemptive:   # every job that has arrived competes for the slots, the running ones too
        return sorted(running + ready, key=urgency)[:slots]
    if continuous or not running:   # a static batch admits only once the one before it has finished
        return running + sorted(ready, key=urgency)[:slots - len(running)]
    return running


def _served(running: list[dict], left: dict) -> list[dict]:
    """Serve each running job one token (`left`: tokens left by id); the jobs still unfinished."""
    for job in running:
        left[job["id"]] -= 1
    return [job for job in running if left[job["id"]]]


def made_by_fifo(jobs: list[dict], trace: list[dict]) -> bool:
    """Whether static or continuous FIFO (lab.schedule) on some number of slots makes this trace."""
    def plain(rows):
        return [(row["tick"], sorted(row["served"])) for row in rows]

    return any(plain(schedule(jobs, slots, continuous)["trace"]) == plain(trace)
               for slots in range(1, len(jobs) + 1) for continuous in (False, True))


def other_case(rng: random.Random, **kwargs) -> tuple[list, list]:
    """Random jobs and another scheduler's trace of them (`kwargs` fix other_trace's choices)."""
    jobs, slots = rand_jobs(rng, spread=kwargs.pop("spread", 12)), rng.randint(1, 4)
    order = kwargs.pop("order", None) or rng.choice(sorted(ORDERS))
    return jobs, other_trace(jobs, slots, order, **kwargs)


def call(fn: str, *args) -> list:
    return [[fn, list(args)]]


def seed_examples(fn: str) -> list[dict]:
    cases = []
    for example in (FOUR_ON_TWO, NO_GAIN, A_TO_E):
        for continuous in (False, True):
            trace = schedule(example.jobs, example.slots, continuous)["trace"]
            cases.append(scenario(worked_example(with_policy(example.name, continuous)), call(fn, example.jobs, trace)))
    return cases


def corrupt(rng: random.Random, how: str, i: int) -> list:
    """A schedule's trace broken in one way, after another scheduler's valid trace of the same jobs: one answer
    must raise on the first and return None on the second. With how="none" the trace stays valid, then one more
    serve of the first job breaks it."""
    jobs, slots, trace = sized_trace_case(rng)
    broken = copy.deepcopy(trace)
    busy = [row for row in broken if row["served"]]
    if how == "drop":
        row = rng.choice(busy)
        row["served"].remove(rng.choice(row["served"]))
    elif how == "extra":
        rng.choice(broken)["served"].append(rng.choice(jobs)["id"])  # one serve more than its tokens
    elif how == "unknown":
        rng.choice(busy)["served"].append(1000 + rng.randint(0, 50))
    elif how == "missing":
        victim = rng.choice(jobs)["id"]
        for row in broken:
            row["served"] = [job_id for job_id in row["served"] if job_id != victim]
    else:
        broken = overserved(jobs, trace)
    order = sorted(ORDERS)[i % len(ORDERS)]  # no draw from rng: the cases drawn before stay as they were
    valid = other_trace(jobs, slots, order, continuous=i % 2 == 0, preemptive=i % 3 == 0, pause=i % 2)
    ops = call("check_served_exactly", jobs, valid) + call("check_served_exactly", jobs, broken)
    return call("check_served_exactly", jobs, trace) + ops if how == "none" else ops


def overserved(jobs: list[dict], trace: list[dict]) -> list[dict]:
    """The trace with one more tick that serves the first job once more."""
    return trace + [{"tick": trace[-1]["tick"] + 1 if trace else 0, "served": [jobs[0]["id"]]}]


def judge_no_gain(observed, sc=None) -> Message | str:
    return _judge_workload(observed, want_ratio=None)


def judge_double_gain(observed, sc=None) -> Message | str:
    return _judge_workload(observed, want_ratio=2)


def _judge_workload(observed, want_ratio) -> Message | str:
    """'' if the workload shows what it must, else why not (a Message: grader/messages.py words it)."""
    refused = _not_a_pair(observed)
    if refused:
        return refused
    jobs, slots = observed[0]["value"]
    too_big = workload_too_big(jobs, slots)
    if too_big:
        return too_big
    try:
        static, cont = schedule(jobs, slots, False), schedule(jobs, slots, True)
    except ValueError as exc:
        return Message("judge_rejected", {"error": _refusal(exc)})
    a, b = static["makespan_ticks"], cont["makespan_ticks"]
    if want_ratio is None:
        return _no_gain_shown(jobs, slots, a, b)
    return "" if a >= want_ratio * b else Message("judge_ratio", {"static": a, "continuous": b, "ratio": f"{a / b:.2f}", "want": want_ratio})


def _not_a_pair(observed) -> Message | str:
    """'' if the answer returned a pair to judge, else why not (a Message)."""
    if not isinstance(observed, list) or not observed or not isinstance(observed[0], dict) or "value" not in observed[0]:
        return Message("judge_no_return", {"value": shown(observed)})
    value = observed[0]["value"]
    if not (type(value) is tuple and len(value) == 2):   # the text's "(jobs, slots) pair" (二元组), a tuple[list[dict], int]
        budget = Budget()   # the child's value and the name of its class, within one message's budget
        said = budget.value(value)
        return Message("judge_not_a_pair", {"value": said, "kind": kind_name(budget.kind(value))})
    return ""


def _no_gain_shown(jobs: list[dict], slots: int, static: int, continuous: int) -> Message | str:
    """'' if a non-trivial workload took as long static as continuous (the makespans given), else why not."""
    tokens = {job["tokens"] for job in jobs}
    if slots < 2 or len(jobs) <= slots or len(tokens) < 2:   # the text's non-trivial: 2+ slots, more jobs, 2+ lengths
        return Message("judge_trivial")
    return "" if static == continuous else Message("judge_not_same", {"static": static, "continuous": continuous})


# The judge simulates the student's workload in the grading process: bound it before it runs.
MAX_JOBS, MAX_TOKENS, MAX_ARRIVAL, MAX_SLOTS, MAX_TOTAL_TOKENS = 200, 1000, 1000, 64, 20_000


def _refusal(exc: ValueError):
    """lab.schedule's refusal as the page shows it: its message quotes the student's ids and keys, so it is shown as a
    child's text is; lab keeps its template and fields (lab.i18n.refused), which lab's own Chinese templates word.
    Any other ValueError is shown in English."""
    phrase = getattr(exc, "phrase", None)
    return lab_text(phrase, FEEDBACK_BUDGET) if phrase is not None else shown(str(exc))


def workload_too_big(jobs, slots) -> Message | str:
    """'' if the workload is small enough to simulate here, else why it is refused (checked before any work)."""
    if type(jobs) not in (list, tuple) or len(jobs) > MAX_JOBS:   # what schedule accepts (an iterator cannot cross)
        return Message("workload_jobs", {"limit": MAX_JOBS})
    if type(slots) is not int or not 0 < slots <= MAX_SLOTS:
        return Message("workload_slots", {"limit": MAX_SLOTS})
    total = 0
    for job in jobs:  # wrong types are left to lab.schedule, which rejects them cheaply
        tokens, arrival = (job.get("tokens"), job.get("arrival")) if isinstance(job, dict) else (None, None)
        if (type(tokens) is int and tokens > MAX_TOKENS) or (type(arrival) is int and arrival > MAX_ARRIVAL):
            return Message("workload_job_size", {"tokens": MAX_TOKENS, "arrival": MAX_ARRIVAL})
        total += tokens if type(tokens) is int and tokens > 0 else 0
    return "" if total <= MAX_TOTAL_TOKENS else Message("workload_total", {"limit": MAX_TOTAL_TOKENS})


def todo1_rules(rng: random.Random, other: random.Random) -> list[Rule]:
    def another(name, count, **kwargs):
        return seeded(name, count, lambda i: call("waits_and_flows", *other_case(other, **kwargs)))

    return [
        Rule("waits and flows on the worked examples", seed_examples("waits_and_flows") + OTHER_EXAMPLES),
        Rule("continuous schedules with staggered arrivals",
             seeded("continuous", 12, lambda i: call("waits_and_flows", *trace_case(rng, True)))
             + another("continuous, another order", 4, continuous=True)),
        Rule("static schedules, where a group holds its slots",
             seeded("static", 12, lambda i: call("waits_and_flows", *trace_case(rng, False)))
             + another("static, another order", 4, continuous=False)),
        Rule("idle gaps: the clock jumps to late arrivals",
             seeded("late arrivals", 10, lambda i: call("waits_and_flows", *trace_case(rng, spread=60)))
             + another("slots idle while jobs wait", 4, spread=60, pause=2)),
        Rule("any valid trace: another order, a job paused and resumed",
             [{"name": "job 0 paused for two shorter jobs", "ops": call("waits_and_flows", PAUSED, PAUSED_TRACE)}]
             + another("paused and resumed", 10, preemptive=True)),
    ]


# On 1 slot, shortest remaining first: job 0 runs at tick 0, waits while 1 and 2 run, and resumes at tick 4.
PAUSED = [{"id": 0, "arrival": 0, "tokens": 4}, {"id": 1, "arrival": 1, "tokens": 1}, {"id": 2, "arrival": 2, "tokens": 2}]
PAUSED_TRACE = other_trace(PAUSED, 1, "shortest remaining first", preemptive=True)


# The worked examples served by other schedulers.
OTHER_EXAMPLES = [
    scenario(worked_example(f"{A_TO_E.name}, longest first"),
             call("waits_and_flows", A_TO_E.jobs, other_trace(A_TO_E.jobs, A_TO_E.slots, "longest first"))),
    scenario(worked_example(f"{A_TO_E.name} on 1 slot, shortest first"),
             call("waits_and_flows", A_TO_E.jobs, other_trace(A_TO_E.jobs, 1, "shortest remaining first"))),
    scenario(worked_example(with_policy(f"{FOUR_ON_TWO.name}, newest first", False)),
             call("waits_and_flows", FOUR_ON_TWO.jobs, other_trace(FOUR_ON_TWO.jobs, 2, "newest first", continuous=False))),
]


# The text counts serves, not ticks: an id listed twice in one tick is served twice.
TWICE_IN_ONE_TICK = [{"name": "an id listed twice in one tick",
                      "ops": call("check_served_exactly", [{"id": 3, "arrival": 0, "tokens": 2}],
                                  [{"tick": 0, "served": [3]}, {"tick": 2, "served": [3]}])
                      + call("check_served_exactly", [{"id": 3, "arrival": 0, "tokens": 2}],
                             [{"tick": 0, "served": [3, 3]}, {"tick": 1, "served": [3]}])}]


def with_overserved(cases: list[dict]) -> list[dict]:
    """Each valid case followed by its trace with one serve too many."""
    return [dict(case, ops=case["ops"] + call("check_served_exactly", case["ops"][0][1][0],
                                              overserved(*case["ops"][0][1]))) for case in cases]


def todo2_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("valid traces pass", with_overserved(seed_examples("check_served_exactly"))
             + seeded("valid", 12, lambda i: corrupt(rng, "none", i))),
        Rule("a job served too few times is caught", seeded("dropped serve", 10, lambda i: corrupt(rng, "drop", i))),
        Rule("a job served too many times is caught", TWICE_IN_ONE_TICK + seeded("extra serve", 10, lambda i: corrupt(rng, "extra", i))),
        Rule("an id that is not a job is caught", seeded("unknown id", 8, lambda i: corrupt(rng, "unknown", i))),
        Rule("a job never served is caught", seeded("never served", 8, lambda i: corrupt(rng, "missing", i))),
    ]


def todo3_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("no_gain_case: a valid, non-trivial workload where continuous gains nothing",
             [{"name": "no_gain_case()", "ops": call("no_gain_case")}], judge=judge_no_gain),
        Rule("double_gain_case: a valid workload where static takes at least 2x the ticks",
             [{"name": "double_gain_case()", "ops": call("double_gain_case")}], judge=judge_double_gain),
    ]


# Jobs of 10**8 to 10**9 tokens: a tick loop (or schedule) runs for minutes, a pass over the jobs for microseconds.
# Every rule holds one, so an answer that simulates ticks earns nothing.
LONG_JOBS_CPU_SECONDS = 0.5


def long_case(name, tokens: list[int], slots: int, policies=(False, True)) -> dict:
    """`name`: a names_zh name, or a label (grader/contract.py)."""
    ops = [op for c in policies for op in call("predicted_makespan", tokens, slots, c)]
    return scenario(named(name) if isinstance(name, str) else name, ops, cpu_seconds=LONG_JOBS_CPU_SECONDS)


def long_jobs(rng: random.Random, i: int) -> dict:
    tokens = [rng.randint(10**8, 10**9) for _ in range(rng.randint(1, 12))]
    return long_case(numbered("long jobs", i), tokens, rng.randint(1, 6))


def todo4_rules(rng: random.Random, other: random.Random) -> list[Rule]:
    def random_case(continuous):
        return call("predicted_makespan", [rng.randint(1, 12) for _ in range(rng.randint(1, 14))], rng.randint(1, 5), continuous)

    seeds = [scenario(worked_example(with_policy(e.name, c)), call("predicted_makespan", [j["tokens"] for j in e.jobs], e.slots, c))
             for e in (FOUR_ON_TWO, A_TO_E) for c in (False, True)]
    billion = 10**9
    return [
        Rule("the worked examples",
             seeds + [long_case(worked_example(f"{A_TO_E.name}, each job 10**8 times longer"), [2 * 10**8, 6 * 10**8, 3 * 10**8, 2 * 10**8, 4 * 10**8], 2)]),
        Rule("static: each group lasts as long as its longest job", seeded("static", 14, lambda i: random_case(False))
             + [long_case("static, a billion tokens", [billion, 1, 1, billion, 7], 2, (False,))]),
        Rule("continuous: a freed slot takes the next job at once", seeded("continuous", 14, lambda i: random_case(True))
             + [long_case("continuous, a billion tokens", [7 * 10**8, billion, 1, 3 * 10**8, 5], 2, (True,))]),
        Rule("edges: one job, more slots than jobs, no jobs",
             [{"name": "one job", "ops": call("predicted_makespan", [5], 3, True) + call("predicted_makespan", [5], 3, False)},
              {"name": "more slots than jobs", "ops": call("predicted_makespan", [3, 1, 2], 8, False) + call("predicted_makespan", [3, 1, 2], 8, True)},
              {"name": "no jobs", "ops": call("predicted_makespan", [], 2, True) + call("predicted_makespan", [], 2, False)},
              long_case("one job of a billion tokens", [billion], 3), long_case("more slots than long jobs", [billion, 1, 5 * 10**8], 8)]),
        Rule("long jobs: computed from the lengths, not tick by tick", [long_jobs(other, i) for i in range(6)]),
    ]


# Each case of the visible check cells, and the hidden rule it is a scenario of (grader/contract.py's place): a case whose
# checks state several rules gives each rule the numbers of its checks (1 for the first check the case runs).
VISIBLE = {
    "test_todo1_worked_example()": "waits and flows on the worked examples",
    "test_todo1_matches_schedule_records()": "waits and flows on the worked examples",
    "test_todo1_late_arrival()": "idle gaps: the clock jumps to late arrivals",
    "test_todo1_staggered_arrivals()": "continuous schedules with staggered arrivals",
    "test_todo1_another_scheduler()": "any valid trace: another order, a job paused and resumed",
    "test_todo2_valid_trace_passes()": "valid traces pass",
    "test_todo2_another_scheduler_passes()": "valid traces pass",
    # too few, too many, an id that is no job, never served, twice in one tick
    "test_todo2_catches_each_break()": {"a job served too few times is caught": [1], "a job served too many times is caught": [2, 5],
                                        "an id that is not a job is caught": [3], "a job never served is caught": [4]},
    "check_small(no_gain_case(), 'no_gain_case')": "no_gain_case: a valid, non-trivial workload where continuous gains nothing",
    "check_small(double_gain_case(), 'double_gain_case')": "double_gain_case: a valid workload where static takes at least 2x the ticks",
    "test_todo3_no_gain()": "no_gain_case: a valid, non-trivial workload where continuous gains nothing",
    "test_todo3_double_gain()": "double_gain_case: a valid workload where static takes at least 2x the ticks",
    "test_todo4_worked_examples()": "the worked examples",
    # four workloads, static then continuous, then no jobs: [5, 1, 1, 1, 1] on 2, [3, 3, 3] on 5, [7] on 1, 1..6 on 3
    "test_todo4_agrees_with_schedule()": {"static: each group lasts as long as its longest job": [1, 7],
                                          "continuous: a freed slot takes the next job at once": [2, 8],
                                          "edges: one job, more slots than jobs, no jobs": [3, 4, 5, 6, 9]},
    "test_todo4_long_jobs()": "long jobs: computed from the lengths, not tick by tick",
}


def build(seed: int) -> dict[str, list[Rule]]:
    cases = cases_seed(seed)   # never the term's seed itself (grader/term.py)
    rng = random.Random(cases)
    other = random.Random(f"{cases} other schedulers")  # new cases draw here, so the older ones stay as they were
    return {
        "todo1": todo1_rules(rng, other),
        "todo2": todo2_rules(rng),
        "todo3": todo3_rules(rng),
        "todo4": todo4_rules(rng, other),
    }
