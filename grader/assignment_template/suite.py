"""Hidden rules of __NAME__: calls replayed on the student's TODO alone, compared with the reference.

Each rule mixes a hand-written case with seeded random ones, so code that only reproduces the visible checks
fails it. Expected results are never written here: the grader runs the same calls on the reference.
"""
from __future__ import annotations

import random

from grader.contract import Rule, seeded
from grader.term import cases_seed


def requests(rng: random.Random, n: int, arrivals: int = 20) -> list[dict]:
    """`n` requests with distinct ids, in random order; arrivals drawn from range(arrivals)."""
    return [{"id": rid, "arrival": rng.randrange(arrivals), "prompt": rng.randint(1, 50), "output": rng.randint(1, 50)}
            for rid in rng.sample(range(1, 100), n)]


def distinct_arrivals(rng: random.Random, n: int) -> list[dict]:
    queue = requests(rng, n)
    for request, arrival in zip(queue, rng.sample(range(100), n)):
        request["arrival"] = arrival
    return queue


def todo1_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("every request counts its prompt and its output tokens",
             # First, a case too long for the page: when it fails, it is cut down before it is shown (grader/shrink.py).
             seeded("a long queue", 1, lambda i: [["total_tokens", [requests(rng, 60)]]])
             + seeded("random requests", 20, lambda i: [["total_tokens", [requests(rng, rng.randint(1, 8))]]])),
        # An empty queue's 0 alone would let `return 0` pass this rule: one request's own tokens refute every constant.
        Rule("no requests need no tokens, one request its own", [{"name": "no requests", "ops": [["total_tokens", [[]]]]}]
             + seeded("one request", 5, lambda i: [["total_tokens", [requests(rng, 1)]]])),
    ]


def todo2_rules(rng: random.Random) -> list[Rule]:
    return [
        Rule("earlier arrivals come first",
             seeded("distinct arrivals", 20, lambda i: [["fcfs_order", [distinct_arrivals(rng, rng.randint(1, 8))]]])),
        Rule("equal arrivals go by the lower id",
             seeded("ties", 20, lambda i: [["fcfs_order", [requests(rng, rng.randint(2, 8), arrivals=2)]]])),
    ]


# Each case of the visible check cells, and the hidden rule it is a scenario of (grader/contract.py's place): a case whose
# checks state several rules gives each rule the numbers of its checks (1 for the first check the case runs).
VISIBLE = {
    "test_todo1_two_requests()": "every request counts its prompt and its output tokens",
    "test_todo2_three_requests()": "equal arrivals go by the lower id",
}


def build(seed: int) -> dict[str, list[Rule]]:
    """Each TODO's rules (by its answer cell's grade_id), for one random seed."""
    rng = random.Random(cases_seed(seed))   # never the term's seed itself (grader/term.py)
    return {"todo1": todo1_rules(rng), "todo2": todo2_rules(rng)}
