"""Hidden rules of 02_decode_scheduling: op scripts replayed on the student's TODO alone.

Every rule mixes the seed's scenarios with seeded random ones, so code that only
reproduces the visible checks fails it. Expected results are never written here:
the parent runs the same scripts on the reference and compares.
"""
from __future__ import annotations

import random

from grader.messages import Message
from grader.contract import Rule, named, scenario, seeded, worked_example
from grader.term import cases_seed

POLICIES = ("fixed_priority", "aging", "deadline")
BIG = 1_000_000


def new(**kwargs):
    return ["new", kwargs]


def enq(**kwargs):
    return ["enqueue", kwargs]


def rand_request(rng: random.Random, rid: int, clock_bound: int = 0, deadlines: bool = True, full: bool = True) -> dict:
    """Random valid enqueue kwargs; `clock_bound` keeps deadlines after the clock."""
    req = {"request_id": rid, "prompt_len": rng.randint(1, 9), "max_new_tokens": rng.randint(1, 4),
           "priority": rng.randint(0, 6), "cache_hit": rng.random() < 0.35, "required_blocks": rng.randint(1, 3),
           "deadline_step": clock_bound + rng.randint(1, 25) if deadlines and rng.random() < 0.6 else None,
           "preemptible": rng.random() < 0.75}
    if not full:  # leave out some arguments so their defaults are exercised
        optional = ["max_new_tokens", "priority", "cache_hit", "required_blocks", "deadline_step", "preemptible"]
        for name in rng.sample(optional, rng.randint(1, len(optional))):
            req.pop(name)
    return req


def rand_ids(rng: random.Random, n: int) -> list[int]:
    return rng.sample(range(1, 60), n)


def workload(rng: random.Random, policy: str | None = None, tight: bool = False, n: int | None = None) -> list:
    """Arrivals interleaved with steps, then a run to completion."""
    policy = policy or rng.choice(POLICIES)
    blocks = rng.randint(1, 4) if tight else rng.choice([BIG, rng.randint(2, 8)])
    ops, steps = [new(policy=policy, free_kv_blocks=blocks, aging_interval=rng.randint(1, 4))], 0
    for rid in rand_ids(rng, n or rng.randint(2, 6)):
        ops.append(enq(**rand_request(rng, rid, clock_bound=steps)))
        for _ in range(rng.randint(0, 3)):
            ops.append(["step"])
            steps += 1
    ops.append(["run", 60])
    return ops


def queue_state(rng: random.Random, policy: str, n: int, deadlines: bool = False, clock: int = 0) -> list:
    """Requests in random phases and progress, with random waits; no step taken."""
    ops = [new(policy=policy, aging_interval=rng.randint(1, 4))]
    for index, rid in enumerate(rand_ids(rng, n)):
        req = rand_request(rng, rid, deadlines=deadlines)
        req["max_new_tokens"] = rng.randint(2, 6)
        ops.append(enq(**req))
        if rng.random() < 0.5:
            ops.append(["set", index, "phase", "decode"])
            ops.append(["set", index, "generated_len", rng.randint(0, req["max_new_tokens"] - 1)])
        if rng.random() < 0.7:
            ops.append(["set", index, "wait_steps", rng.randint(0, 12)])
    if clock:
        ops.append(["set_sim", "clock", clock])
    return ops


def capacity_state(rng: random.Random, policy: str = "fixed_priority", challenger: dict | None = None,
                   admitted: int | None = None, free: int | None = None) -> list:
    """Some requests admitted and decoding, some blocks free, then _ensure_capacity(challenger)."""
    num_admitted = rng.randint(1, 4) if admitted is None else admitted
    ids = rand_ids(rng, num_admitted + 1)
    reqs = [rand_request(rng, rid, deadlines=False) for rid in ids[:-1]]
    free = rng.randint(0, 2) if free is None else free
    ops = [new(policy=policy, free_kv_blocks=free + sum(r.get("required_blocks", 1) for r in reqs),
               aging_interval=rng.randint(1, 4))]
    for index, req in enumerate(reqs):
        req["max_new_tokens"] = rng.randint(2, 5)
        ops.append(enq(**req))
        ops += [["set", index, "admitted", True], ["set", index, "status", "running"], ["set", index, "phase", "decode"],
                ["set", index, "generated_len", rng.randint(0, req["max_new_tokens"] - 1)]]
        if policy == "aging":
            ops.append(["set", index, "wait_steps", rng.randint(0, 10)])
    ops.append(["set_sim", "free_kv_blocks", free])
    ops.append(enq(**(challenger or rand_request(rng, ids[-1], deadlines=False))))
    ops.append(["ensure", len(reqs)])
    return ops


def tied_victims(rng: random.Random, policy: str) -> list:
    """Two or three holders tie on the lowest effective priority with different block counts, each making room alone."""
    interval, low, free = rng.randint(1, 3), rng.randint(0, 3), rng.randint(0, 1)
    tied = rng.sample(range(1, 5), rng.randint(2, 3))  # distinct block counts: only "most blocks" decides
    holders = [{"priority": low, "required_blocks": b, "wait": 0} for b in tied]
    holders += [{"priority": low + rng.randint(1, 3), "required_blocks": rng.randint(1, 4), "wait": 0}
                for _ in range(rng.randint(0, 2))]
    if policy == "aging":  # equal effective priority from different raw priorities and waits
        for holder in holders[:len(tied)]:
            raw = rng.randint(0, low)
            holder.update(priority=raw, wait=(low - raw) * interval + rng.randint(0, interval - 1))
    rng.shuffle(holders)
    ids = rand_ids(rng, len(holders) + 1)
    ops = [new(policy=policy, free_kv_blocks=free + sum(h["required_blocks"] for h in holders), aging_interval=interval)]
    for index, (rid, holder) in enumerate(zip(ids, holders)):
        ops.append(enq(request_id=rid, prompt_len=rng.randint(1, 9), max_new_tokens=rng.randint(2, 5),
                       priority=holder["priority"], required_blocks=holder["required_blocks"]))
        ops += [["set", index, "admitted", True], ["set", index, "status", "running"], ["set", index, "phase", "decode"],
                ["set", index, "wait_steps", holder["wait"]]]
    ops.append(["set_sim", "free_kv_blocks", free])
    ops.append(enq(request_id=ids[-1], prompt_len=3, priority=low + rng.randint(4, 6),
                   required_blocks=rng.randint(free + 1, free + min(tied))))  # does not fit the free blocks alone
    return ops + [["ensure", len(holders)]]


SEED_ENQUEUE_CONTRACT = [new(), enq(request_id=1, prompt_len=2, max_new_tokens=2, priority=2, cache_hit=True)]
SEED_DECISION_ORDER = [
    [new(), enq(request_id=1, prompt_len=4, max_new_tokens=1, priority=0), enq(request_id=2, prompt_len=4, max_new_tokens=1, priority=9, cache_hit=True),
     ["set", 1, "phase", "decode"], ["order"]],
    [new(), enq(request_id=1, prompt_len=4, max_new_tokens=1, priority=1), enq(request_id=2, prompt_len=4, max_new_tokens=1, priority=1, cache_hit=True), ["order"]],
    [new(), enq(request_id=1, prompt_len=4, max_new_tokens=1, priority=1, cache_hit=True), enq(request_id=2, prompt_len=4, max_new_tokens=1, priority=3, cache_hit=True),
     ["order"], ["step"]],
]
SEED_AGING = [new(policy="aging", aging_interval=2), enq(request_id=1, prompt_len=4, max_new_tokens=1, priority=1, cache_hit=True),
              enq(request_id=2, prompt_len=4, max_new_tokens=1, priority=3, cache_hit=True), ["set", 0, "wait_steps", 6], ["order"]]
SEED_CAPACITY = [new(free_kv_blocks=2), enq(request_id=1, prompt_len=4, max_new_tokens=1, priority=9, required_blocks=3),
                 enq(request_id=2, prompt_len=4, max_new_tokens=1, priority=1, required_blocks=2), ["step"], ["step"]]
SEED_PREEMPTION = [new(free_kv_blocks=2), enq(request_id=1, prompt_len=4, max_new_tokens=2, priority=1, required_blocks=2),
                   ["step"], enq(request_id=2, prompt_len=2, max_new_tokens=1, priority=9, required_blocks=2), ["step"], ["run", 10]]
SEED_NON_PREEMPTIBLE = [new(free_kv_blocks=2), enq(request_id=1, prompt_len=4, max_new_tokens=2, priority=1, required_blocks=2, preemptible=False),
                        ["step"], enq(request_id=2, prompt_len=2, max_new_tokens=1, priority=9, required_blocks=2), ["step"], ["run", 10]]
SEED_DEADLINE = [new(policy="deadline"), enq(request_id=1, prompt_len=4, max_new_tokens=4, priority=9, deadline_step=20),
                 enq(request_id=2, prompt_len=2, max_new_tokens=1, priority=0, deadline_step=1), ["step"], ["run", 20]]
SEED_PROGRESSION = [new(), enq(request_id=1, prompt_len=2, max_new_tokens=2, priority=2, cache_hit=True),
                    enq(request_id=2, prompt_len=3, max_new_tokens=3, priority=1), ["run", 20], ["step"]]
# Under aging the victims rank by effective priority: request 1 (priority 1, waited 3 steps, interval 1) ranks
# as 4, above request 2 (priority 2), so request 2 is the victim although its business priority is higher.
AGING_VICTIMS = [new(policy="aging", free_kv_blocks=4, aging_interval=1),
                 enq(request_id=1, prompt_len=4, max_new_tokens=3, priority=1, required_blocks=2),
                 enq(request_id=2, prompt_len=4, max_new_tokens=3, priority=2, required_blocks=2),
                 *[["set", i, field, value] for i in (0, 1) for field, value in (("admitted", True), ("status", "running"),
                                                                                ("phase", "decode"))],
                 ["set", 0, "wait_steps", 3], ["set_sim", "free_kv_blocks", 0],
                 enq(request_id=99, prompt_len=3, max_new_tokens=1, priority=5, required_blocks=2), ["ensure", 2]]
# Request 1 and request 2 tie on priority and each makes room alone: request 2 holds more blocks, so it is the
# victim although its id is higher (choosing the fewest blocks, or the lowest id first, takes request 1).
MOST_BLOCKS_VICTIM = [new(free_kv_blocks=4), enq(request_id=1, prompt_len=4, max_new_tokens=3, priority=1, required_blocks=1),
                      enq(request_id=2, prompt_len=4, max_new_tokens=3, priority=1, required_blocks=3),
                      *[["set", i, field, value] for i in (0, 1) for field, value in (("admitted", True), ("status", "running"),
                                                                                     ("phase", "decode"))],
                      ["set_sim", "free_kv_blocks", 0],
                      enq(request_id=99, prompt_len=3, max_new_tokens=1, priority=5, required_blocks=1), ["ensure", 2]]
# An answer that only returns None must fail these: the first call admits, then a victim appears.
ADMITTED_BY_FIRST_CALL = [new(free_kv_blocks=4), enq(request_id=1, prompt_len=2, priority=2, required_blocks=3),
                          ["ensure", 0], ["ensure", 0]]  # the second call keeps it running, charges nothing
NO_VICTIM_UNTIL_LOWER = [new(free_kv_blocks=2), enq(request_id=1, prompt_len=4, max_new_tokens=3, priority=3, required_blocks=2),
                         *[["set", 0, field, value] for field, value in (("admitted", True), ("status", "running"), ("phase", "decode"))],
                         ["set_sim", "free_kv_blocks", 0], enq(request_id=2, prompt_len=2, priority=3, required_blocks=2),
                         ["ensure", 1],  # equal priority: no victim, nothing changes
                         ["set", 0, "priority", 1], ["ensure", 1]]  # strictly lower now: request 1 is preempted
SEED_GUARDS = [new(), enq(request_id=1, prompt_len=0), enq(request_id=1, prompt_len=1, max_new_tokens=0),
               enq(request_id=1, prompt_len=1, required_blocks=0), enq(request_id=1, prompt_len=1, max_new_tokens=3),
               ["run", 2], ["run", -1]]


def _seed(name: str, *scripts) -> list[dict]:
    counted = len(scripts) > 1
    return [scenario(worked_example(Message("scenario_counted", {"name": named(name), "number": i}) if counted else name), ops)
            for i, ops in enumerate(scripts)]


def todo1_rules(rng: random.Random) -> list[Rule]:
    def bad_input(i):
        ops = [new()] + [enq(**rand_request(rng, rid)) for rid in (1, 2)]
        bad = [dict(request_id=1, prompt_len=3), dict(request_id=9, prompt_len=0), dict(request_id=9, prompt_len=2, max_new_tokens=0),
               dict(request_id=9, prompt_len=2, required_blocks=0), dict(request_id=9, prompt_len=2, deadline_step=0),
               dict(request_id=9, prompt_len=True)]
        return ops + [enq(**bad[i % len(bad)]), enq(**rand_request(rng, 30 + i))]

    def shared_state(i):
        ops = [new()] + [enq(**rand_request(rng, rid)) for rid in rand_ids(rng, rng.randint(2, 5))]
        return ops + [["set", 0, "wait_steps", 5], ["set", 1, "generated_len", 1], ["order"]]

    return [
        Rule("stores every argument; a new request is waiting, in prefill, not admitted",
             _seed("enqueue contract", SEED_ENQUEUE_CONTRACT)
             + seeded("random requests", 12, lambda i: [new()] + [enq(**rand_request(rng, rid)) for rid in rand_ids(rng, rng.randint(1, 6))])),
        Rule("omitted arguments keep the signature's defaults",
             seeded("partial arguments", 10, lambda i: [new()] + [enq(**rand_request(rng, rid, full=False)) for rid in rand_ids(rng, 3)])),
        Rule("one new object per request, appended in order",
             seeded("independent requests", 8, shared_state)),
        Rule("bad input raises ValueError and leaves the queue unchanged",
             _seed("input guards", SEED_GUARDS[:5]) + seeded("bad input", 6, bad_input)),
        Rule("requests enqueued by TODO 1 run correctly to the end",
             _seed("state progression", SEED_PROGRESSION) + seeded("workload", 10, lambda i: workload(rng))),
    ]


def todo2_rules(rng: random.Random) -> list[Rule]:
    def ties(i):
        ops = [new(policy=POLICIES[i % 3])]
        for index, rid in enumerate(rand_ids(rng, 4)):
            ops.append(enq(request_id=rid, prompt_len=rng.randint(1, 3), max_new_tokens=4, priority=2))
            if rng.random() < 0.5:
                ops += [["set", index, "phase", "decode"], ["set", index, "generated_len", 0]]
        return ops + [["order"]]

    return [
        Rule("phase, then cache hit, then priority decide the order",
             _seed("decision order", *SEED_DECISION_ORDER[:2])
             + seeded("random queue", 12, lambda i: queue_state(rng, "fixed_priority", rng.randint(2, 6)) + [["order"]])),
        Rule("wait_steps changes nothing outside aging",
             seeded("waits ignored", 10, lambda i: queue_state(rng, rng.choice(["fixed_priority", "deadline"]), rng.randint(2, 6)) + [["order"]])),
        Rule("aging adds wait_steps // aging_interval to the priority",
             _seed("aging", SEED_AGING) + seeded("aging queue", 10, lambda i: queue_state(rng, "aging", rng.randint(2, 6)) + [["order"]])),
        Rule("deadline slack comes first under the deadline policy, and only there",
             seeded("deadline queue", 15, lambda i: queue_state(rng, POLICIES[i % 3], rng.randint(2, 6), deadlines=True, clock=rng.randint(0, 6)) + [["order"]])),
        Rule("ties fall to total length, then request id",
             seeded("ties", 6, ties)),
        Rule("whole runs follow the key under every policy",
             _seed("key picks the step", SEED_DECISION_ORDER[2], SEED_DEADLINE)
             + seeded("workload", 12, lambda i: workload(rng, policy=POLICIES[i % 3]))),
    ]


def todo3_rules(rng: random.Random) -> list[Rule]:
    # The tied-victims scenarios came later: they draw from their own generator, so the other scenarios stay as they were.
    tie_rng = random.Random(hash(rng.getstate()[1]) ^ 0x71E5)

    def already_admitted(i):
        ops = capacity_state(rng)
        return ops[:-1] + [["ensure", 0], ["ensure", 0]]

    def no_victim(i):
        kind = i % 3
        ops = capacity_state(rng, free=0, admitted=1 if kind == 1 else None,
                             challenger={"request_id": 99, "prompt_len": 2, "priority": 0 if kind == 0 else 3,
                                         "required_blocks": 1 if kind == 1 else 4 + (kind == 2) * 4})
        if kind == 1:  # the only holder would make room, but its priority is not strictly lower
            ops.insert(-2, ["set", 0, "priority", 3])
        return ops

    def non_preemptible(i):
        ops = capacity_state(rng, free=0, challenger={"request_id": 99, "prompt_len": 2, "priority": 9, "required_blocks": 2})
        targets = sorted({op[1] for op in ops if op[0] == "set" and op[2] == "admitted"})
        return ops[:-2] + [["set", t, "preemptible", False] for t in targets if rng.random() < 0.7] + ops[-2:]

    return [
        Rule("an admitted challenger keeps running and is not charged again",
             [{"name": "admitted by the first call, then called again", "ops": ADMITTED_BY_FIRST_CALL}]
             + seeded("admitted", 8, already_admitted)),
        Rule("a challenger whose blocks fit is admitted", seeded("fits", 8, lambda i: capacity_state(rng, free=rng.randint(3, 6)))),
        Rule("with no legal victim nothing changes and None is returned",
             [{"name": "no victim at equal priority, then one at a lower priority", "ops": NO_VICTIM_UNTIL_LOWER}]
             + seeded("no victim", 9, no_victim)),
        Rule("non-preemptible requests are never victims", seeded("protected", 8, non_preemptible)),
        Rule("the victim has the lowest effective priority, then most blocks, then lowest id, and makes room",
             seeded("victim choice", 16, lambda i: capacity_state(rng, admitted=rng.randint(2, 5), free=rng.randint(0, 1),
                                                                   challenger={"request_id": 99, "prompt_len": 3, "priority": rng.randint(3, 7),
                                                                               "required_blocks": rng.randint(1, 4)}))
             + [{"name": "equal priority, the holder of more blocks goes though its id is higher", "ops": MOST_BLOCKS_VICTIM}]
             + seeded("equal priority, different blocks", 9, lambda i: tied_victims(tie_rng, POLICIES[i % 3]))),
        Rule("aging counts: effective priority decides who may be preempted",
             [{"name": "two victims ranked by effective priority", "ops": AGING_VICTIMS}]
             + seeded("aging victims", 8, lambda i: capacity_state(rng, policy="aging", free=0,
                                                                  challenger={"request_id": 99, "prompt_len": 3, "priority": rng.randint(2, 6),
                                                                              "required_blocks": rng.randint(1, 3)}))),
        Rule("a victim keeps its phase and progress, and resumes in whole runs",
             _seed("preemption and resume", SEED_PREEMPTION, SEED_NON_PREEMPTIBLE, SEED_CAPACITY)
             + seeded("tight workload", 12, lambda i: workload(rng, tight=True))),
    ]


def todo4_rules(rng: random.Random) -> list[Rule]:
    def one_step(i):
        return queue_state(rng, POLICIES[i % 3], rng.randint(1, 6), deadlines=True) + [["step"]]

    def stall(i):
        blocks = rng.randint(1, 3)
        ops = [new(free_kv_blocks=blocks)] + [enq(**dict(rand_request(rng, rid), required_blocks=blocks + rng.randint(1, 3)))
                                              for rid in rand_ids(rng, rng.randint(1, 3))]
        return ops + [["step"], ["run", 5]]

    return [
        Rule("the request with the smallest key is served",
             _seed("key picks the step", SEED_DECISION_ORDER[2]) + seeded("one step", 12, one_step)),
        Rule("every candidate not chosen waits one more step",
             seeded("waits", 8, lambda i: queue_state(rng, POLICIES[i % 3], rng.randint(2, 5)) + [["step"], ["step"], ["step"]])),
        Rule("step returns None when all are done or nothing can be admitted",
             _seed("exhaustion", SEED_PROGRESSION) + seeded("stall", 6, stall)),
        Rule("a blocked urgent request lets a smaller one run; finishing frees blocks",
             _seed("capacity admission and release", SEED_CAPACITY)
             + seeded("tight", 10, lambda i: workload(rng, policy="fixed_priority", tight=True))),
        Rule("preemptions are recorded in the event and the victim resumes without redoing work",
             _seed("preemption", SEED_PREEMPTION, SEED_NON_PREEMPTIBLE)
             + seeded("tight priorities", 10, lambda i: workload(rng, policy=rng.choice(["fixed_priority", "aging"]), tight=True))),
        Rule("deadline order and deadline_missed in events",
             _seed("deadline", SEED_DEADLINE) + seeded("deadline workload", 10, lambda i: workload(rng, policy="deadline"))),
        Rule("random workloads with arrivals during the run match the reference",
             _seed("step limit", SEED_GUARDS) + seeded("workload", 16, lambda i: workload(rng, n=rng.randint(3, 8)))),
    ]


# The reference's key is a function of the simulator and the request it is given, and writes nothing: when TODO 4's
# child calls it across the bridge, the server answers for every request at once (grader/runner/bridge.py, Batch).
PURE = ("DecodeSchedulerSim._schedule_key",)

# The references append to the timeline (the given _record_event, which their step calls) and never read it: the grading
# child keeps it, and the bridge carries only what is appended (grader/runner/bridge.py, Sink), not the whole timeline at
# every call.
LOGS = ("DecodeSchedulerSim.timeline",)


# Each case of the visible check cells, and the hidden rule it is a scenario of (grader/contract.py's place): a case whose
# checks state several rules gives each rule the numbers of its checks (1 for the first check the case runs).
VISIBLE = {
    "test_todo1_enqueue_contract()": "stores every argument; a new request is waiting, in prefill, not admitted",
    "test_todo1_keeps_every_argument()": "stores every argument; a new request is waiting, in prefill, not admitted",
    "test_todo1_defaults_and_new_objects()": {"omitted arguments keep the signature's defaults": [1],
                                              "one new object per request, appended in order": [2, 3]},
    "test_todo1_input_guards()": "bad input raises ValueError and leaves the queue unchanged",
    "test_todo2_decision_order()": "phase, then cache hit, then priority decide the order",
    "test_todo2_wait_steps_is_observation_not_priority()": {"wait_steps changes nothing outside aging": [1],
                                                            "ties fall to total length, then request id": [2]},
    "test_todo2_ties_fall_to_length_then_id()": "ties fall to total length, then request id",
    "test_todo2_aging_changes_effective_priority()": "aging adds wait_steps // aging_interval to the priority",
    "test_todo2_deadline_slack_orders_first_only_under_deadline()": "deadline slack comes first under the deadline policy, and only there",
    "test_todo3_admits_when_blocks_are_free()": {"a challenger whose blocks fit is admitted": [1, 2, 5],
                                                 "an admitted challenger keeps running and is not charged again": [3, 4]},
    "test_todo3_preempts_lower_priority_and_keeps_progress()": {
        "the victim has the lowest effective priority, then most blocks, then lowest id, and makes room": [1, 2, 4],
        "a victim keeps its phase and progress, and resumes in whole runs": [3]},
    "test_todo3_protects_non_preemptible_and_more_urgent()": {"non-preemptible requests are never victims": [1, 2],
                                                              "with no legal victim nothing changes and None is returned": [3]},
    "test_todo3_free_blocks_count_towards_room()":
        "the victim has the lowest effective priority, then most blocks, then lowest id, and makes room",
    "test_todo3_tie_breaks_between_two_victims()":
        "the victim has the lowest effective priority, then most blocks, then lowest id, and makes room",
    "test_todo3_effective_priority_under_aging()": "aging counts: effective priority decides who may be preempted",
    "test_todo4_capacity_admission_and_release()": "a blocked urgent request lets a smaller one run; finishing frees blocks",
    "test_todo4_preemption_and_resume_preserve_progress()":
        "preemptions are recorded in the event and the victim resumes without redoing work",
    "test_todo4_non_preemptible_and_deadline_policy()": {
        "preemptions are recorded in the event and the victim resumes without redoing work": [1],
        "deadline order and deadline_missed in events": [2]},
    "test_todo4_state_progression_and_step_limit()": {"every candidate not chosen waits one more step": [3],
                                                      "random workloads with arrivals during the run match the reference": [1, 2, 4, 5]},
    "test_todo4_stall_and_exhaustion()": "step returns None when all are done or nothing can be admitted",
    "test_todo4_schedule_key_picks_the_step()": "the request with the smallest key is served",
    "test_todo4_one_admission_per_step()": "the request with the smallest key is served",
    "test_todo4_the_chosen_request_does_not_wait()": "every candidate not chosen waits one more step",
}


def build(seed: int) -> dict[str, list[Rule]]:
    """Each TODO's rules (by its answer cell's grade_id), for one random seed."""
    rng = random.Random(cases_seed(seed))   # never the term's seed itself (grader/term.py)
    return {
        "todo1": todo1_rules(rng),
        "todo2": todo2_rules(rng),
        "todo3": todo3_rules(rng),
        "todo4": todo4_rules(rng),
    }
