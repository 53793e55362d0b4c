"""Hidden rules of 03_batch_scheduling: op scripts replayed on the student's TODO alone (TODO 5: judged).

Seed scenarios are vLLM V1's own scheduler tests (tests/v1/core/test_scheduler.py), ported as
op scripts; every rule adds seeded random ones. Expected results are never written here: the
parent runs the same scripts on the reference and compares.
"""
from __future__ import annotations

import math
import numbers
import random
from fractions import Fraction

from lab.engine.slo import SLO_EXERCISE, exercise_trace, slo_metrics, slo_miss_phrases, slo_misses
from policybench.exercise import ranked_policy
from policybench.fast_engine import FastEngine

from grader import caches
from grader.messages import Joined, Message, error_words, lab_text
from grader.observed import TIMEOUT, NoValue
from grader.child_values import error_name, shown
from grader.contract import Rule, seeded, scenario as labelled
from grader.term import PUBLIC_SEED, cases_seed, derive



def sched(**config):
    return ["sched", config]


def add(seq_id, prompt, max_tokens=16, priority=0, arrival_us=0):
    return ["add", {"seq_id": seq_id, "num_prompt_tokens": prompt, "max_tokens": max_tokens, "priority": priority,
                    "arrival_us": arrival_us}]


def _vllm(name: str, ops: list) -> dict:
    return labelled(Message("vllm_test", {"name": name}), ops)   # vLLM's test name is code: shown as it is


# vLLM V1 scenarios (tests/v1/core/test_scheduler.py), in this model's terms.
VLLM_SCHEDULE = _vllm("test_schedule", [sched(), *[add(i, 10) for i in range(10)], ["schedule"]])
VLLM_PARTIAL = _vllm("test_schedule_concurrent_partial_requests",
                     [sched(max_num_batched_tokens=1024, long_prefill_token_threshold=400), *[add(i, 800) for i in range(3)],
                      ["step"], ["step"], ["step"]])
VLLM_ORDER = [_vllm(f"test_schedule_order (chunked={chunked})",
                    [sched(max_num_batched_tokens=1024, max_num_seqs=3, enable_chunked_prefill=chunked),
                     add(1, 800), add(2, 800), add(3, 10), add(4, 10), ["schedule"]]) for chunked in (True, False)]
VLLM_PRIORITY_ORDER = [_vllm(f"test_priority_scheduling_{name}",
                             [sched(policy="priority", max_num_seqs=seqs),
                              *[add(i, 10, priority=p, arrival_us=a) for i, (p, a) in enumerate(zip(prios, arrivals))],
                              ["schedule"]])
                       for name, prios, arrivals, seqs in (
                           ("basic_ordering", [2, 0, 1], [1, 2, 3], 16), ("arrival_time_tiebreaker", [1, 1, 1], [3, 1, 2], 16),
                           ("mixed_priority_and_arrival", [2, 1, 1, 0], [1, 3, 2, 4], 16),
                           ("preemption_victim_selection", [3, 2, 0], [1, 2, 3], 1),
                           ("equal_priority_preemption", [2, 2, 2], [3, 1, 2], 1),
                           ("waiting_queue_order", [3, 1, 2, 0], [1, 2, 3, 4], 1),
                           ("fcfs_fallback", [1, 1, 1, 1], [4, 1, 3, 2], 16),
                           ("with_limited_slots", [3, 1, 2, 0], [1, 2, 3, 4], 2))]
VLLM_HEAP = _vllm("test_priority_scheduling_heap_property",
                  [sched(policy="priority", max_num_seqs=1),
                   *[add(i, 10, max_tokens=1, priority=p, arrival_us=i) for i, p in enumerate([5, 1, 8, 3, 2, 7, 4, 6])], ["run", 20]])
VLLM_PREEMPTION = _vllm("test_priority_scheduling_preemption",
                        [sched(policy="priority", num_blocks=5, max_num_seqs=3, max_num_batched_tokens=200),
                         add(1, 32, priority=5, arrival_us=1), ["step"], add(2, 32, priority=0, arrival_us=2), ["step"], ["schedule"]])
VLLM_NO_PREEMPTION = _vllm("test_priority_scheduling_no_preemption_when_space_available",
                           [sched(policy="priority", max_num_seqs=3, max_num_batched_tokens=200),
                            add(1, 30, priority=5, arrival_us=1), add(2, 30, priority=5, arrival_us=2), ["step"],
                            add(3, 30, priority=0, arrival_us=3), ["schedule"]])
VLLM_RESUME = _vllm("test_priority_scheduling_preemption_and_resumption_when_out_of_kv",
                    [sched(policy="priority", num_blocks=4, max_num_seqs=2, max_num_batched_tokens=200),
                     add(0, 30, priority=1, arrival_us=0), ["step"], add(1, 32, max_tokens=2, priority=0, arrival_us=1),
                     ["step"], ["step"], ["step"]])


# vLLM test_schedule_order's numbers, chunking off, but the second prompt is exactly the 224 tokens left: it is admitted.
EXACT_FIT = {"name": "chunking off, a prompt exactly the size of the budget left is admitted",
             "ops": [sched(max_num_batched_tokens=1024, max_num_seqs=3, enable_chunked_prefill=False),
                     add(1, 800), add(2, 224), add(3, 10), ["schedule"]]}


def exact_fit_script(rng: random.Random) -> list:
    """Chunking off: some requests decode, then waiting prompts add up to exactly the budget left, then one more."""
    budget, decoding = rng.randint(12, 80), rng.randint(0, 3)
    left = budget - decoding
    cuts = sorted(rng.sample(range(1, left), rng.randint(0, min(2, left - 1))))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, left])]
    ops = [sched(max_num_batched_tokens=budget, max_num_seqs=decoding + len(parts) + rng.randint(1, 2),
                 enable_chunked_prefill=False, policy=rng.choice(["fcfs", "priority"]))]
    ops += [add(sid, rng.randint(1, budget // 4), max_tokens=8, arrival_us=sid) for sid in range(decoding)]
    if decoding:
        ops.append(["step"])  # they are decoding now: one token each in the next step's running pass
    ops += [add(decoding + k, part, max_tokens=3, arrival_us=100 + k) for k, part in enumerate(parts)]
    ops.append(add(90, rng.randint(1, budget), max_tokens=3, arrival_us=200))
    return ops + [["step"]] * 3


def rand_requests(rng: random.Random, n: int, max_prompt: int = 40, max_out: int = 6, priorities: bool = False) -> list[dict]:
    ids = rng.sample(range(1, 90), n)
    return [{"seq_id": sid, "num_prompt_tokens": rng.randint(1, max_prompt), "max_tokens": rng.randint(1, max_out),
             "priority": rng.randint(0, 3) if priorities else 0, "arrival_us": 10 * index} for index, sid in enumerate(ids)]


def rand_config(rng: random.Random, requests: list[dict], tight: bool, policy: str | None = None) -> dict:
    block_size = rng.choice([2, 4, 8, 16])
    longest = max(r["num_prompt_tokens"] + r["max_tokens"] for r in requests)
    # Ample: every request fits at once, twice over (a pool of thousands would cross the bridge in every call).
    ample = 2 * sum(-(-(r["num_prompt_tokens"] + r["max_tokens"]) // block_size) for r in requests) + 4
    num_blocks = -(-longest // block_size) + rng.randint(0, 3) if tight else ample
    chunked = rng.random() < 0.85
    return {"num_blocks": num_blocks, "block_size": block_size, "max_num_seqs": rng.randint(1, 6),
            "max_num_batched_tokens": rng.randint(6, 80), "policy": policy or rng.choice(["fcfs", "priority"]),
            "long_prefill_token_threshold": rng.choice([0, 0, rng.randint(3, 30)]) if chunked else 0,
            "enable_chunked_prefill": chunked}


def step_script(rng: random.Random, tight: bool = False, policy: str | None = None, n: int | None = None) -> list:
    """Arrivals between steps, each step observed, then a run to the end."""
    requests = rand_requests(rng, n or rng.randint(2, 6), priorities=True)
    ops = [sched(**rand_config(rng, requests, tight, policy))]
    for request in requests:
        ops.append(["add", request])
        ops += [["step"]] * rng.randint(0, 2)
    return ops + [["run", 120]]


def engine_script(rng: random.Random, tight: bool, policy: str | None = None) -> list:
    requests = rand_requests(rng, rng.randint(3, 10), max_prompt=60, max_out=8, priorities=True)
    for r in requests:
        r["arrival_us"] = rng.randint(0, 40_000)
    time_model = {"step_overhead_us": rng.randint(0, 9000), "per_token_us": rng.randint(0, 200)}
    return [["engine", rand_config(rng, requests, tight, policy), requests, time_model]]


# Under priority, a running request that needs a block makes room by preempting the least urgent running request,
# which may stand before it in `running`; the pass goes on from the request's new position, so the one after it is
# still scheduled (an answer that steps on by one index skips it). Every block is held; request 2 needs a new one.
VICTIM_AHEAD = {"name": "priority: the victim stood before the request that made room",
                "ops": [sched(policy="priority", num_blocks=3, block_size=4, max_num_batched_tokens=100),
                        ["running", {"seq_id": 1, "num_prompt_tokens": 3, "max_tokens": 4, "priority": 3, "arrival_us": 0}, 3, 1, 1],
                        ["running", {"seq_id": 2, "num_prompt_tokens": 4, "max_tokens": 4, "priority": 0, "arrival_us": 5}, 4, 1, 1],
                        ["running", {"seq_id": 3, "num_prompt_tokens": 2, "max_tokens": 4, "priority": 0, "arrival_us": 10}, 2, 1, 1],
                        ["schedule"], ["update"], ["step"], ["step"]]}


def victim_ahead_script(rng: random.Random) -> list:
    """As VICTIM_AHEAD, drawn: 3 to 5 running requests (block size 4, every block held), one of them needs a new
    block, the least urgent one stands before it and at least one request comes after it."""
    n = rng.randint(3, 5)
    grower = rng.randint(1, n - 2)
    victim = rng.randint(0, grower - 1)
    running = []
    for k, seq_id in enumerate(rng.sample(range(1, 60), n)):
        prompt = 4 * rng.randint(1, 3) if k == grower else 4 * rng.randint(0, 2) + rng.randint(1, 3)
        request = {"seq_id": seq_id, "num_prompt_tokens": prompt, "max_tokens": rng.randint(2, 6),
                   "priority": 3 if k == victim else rng.randint(0, 2), "arrival_us": 10 * k}
        running.append(["running", request, prompt, 1, -(-prompt // 4)])
    ops = [sched(policy="priority", num_blocks=sum(op[4] for op in running), block_size=4, max_num_batched_tokens=rng.randint(20, 100))]
    return ops + running + [["schedule"], ["update"], ["step"]]


def todo1_rules(rng: random.Random) -> list[Rule]:
    # The exact-fit and victim-ahead scenarios came later: they draw from their own generators, so the other scenarios
    # stay as they were.
    fit_rng = random.Random(hash(rng.getstate()[1]) ^ 0xF17)
    ahead_rng = random.Random(hash(rng.getstate()[1]) ^ 0xA4EAD)

    def ample(i):
        return step_script(rng, tight=False)

    def seqs_bound(i):
        requests = rand_requests(rng, rng.randint(3, 7), max_prompt=8)
        return [sched(max_num_seqs=rng.randint(1, 3), max_num_batched_tokens=200)] + [["add", r] for r in requests] + [["step"]] * 4

    def head_of_line(i):
        # the head of the queue needs more blocks than are free, a smaller one behind it would fit
        block_size = 4
        ops = [sched(num_blocks=6, block_size=block_size, max_num_batched_tokens=100, policy=rng.choice(["fcfs", "priority"])),
               add(1, rng.randint(13, 16), max_tokens=8), ["step"], add(2, rng.randint(9, 16), max_tokens=4),
               add(3, rng.randint(1, 4), max_tokens=4)]
        return ops + [["step"]] * 3

    return [
        Rule("vLLM's budget scenarios: one step, chunked prefill with a threshold, chunking on and off",
             [VLLM_SCHEDULE, VLLM_PARTIAL, *VLLM_ORDER]),
        Rule("vLLM's priority queue order: priority, then arrival; max_num_seqs holds the rest back",
             [*VLLM_PRIORITY_ORDER, VLLM_HEAP]),
        Rule("running requests first, then the waiting ones, under the token budget (ample KV)", seeded("ample KV", 14, ample)),
        Rule("max_num_seqs bounds the running set", seeded("max_num_seqs", 8, seqs_bound)),
        Rule("the first waiting request that does not fit ends admission",
             seeded("head-of-line", 8, head_of_line) + [EXACT_FIT]
             + seeded("chunking off, exact fit", 8, lambda i: exact_fit_script(fit_rng))),
        Rule("under KV pressure: nobody is admitted in a step that preempted",
             [VLLM_PREEMPTION, VLLM_RESUME] + seeded("tight KV", 14, lambda i: step_script(rng, tight=True))
             + [VICTIM_AHEAD] + seeded("priority, victim ahead", 8, lambda i: victim_ahead_script(ahead_rng))),
        Rule("whole engine runs match the reference", seeded("engine run", 8, lambda i: engine_script(rng, tight=rng.random() < 0.5))),
    ]


def todo2_rules(rng: random.Random) -> list[Rule]:
    def needed(i):
        block_size = rng.choice([1, 2, 3, 4, 16])
        ops = [["pool", {"num_blocks": 64, "block_size": block_size}], ["seq", {"seq_id": 1, "num_prompt_tokens": 50}]]
        for _ in range(6):
            ops += [["set_seq", 0, "num_computed_tokens", rng.randint(0, 40)], ["num_blocks_needed", 0, rng.randint(0, 20)]]
        return ops

    def growth(i):
        block_size = rng.choice([2, 4, 8])
        ops = [["pool", {"num_blocks": rng.randint(4, 12), "block_size": block_size}], ["seq", {"seq_id": 1, "num_prompt_tokens": 30}]]
        computed = 0
        for _ in range(rng.randint(3, 8)):
            n = rng.choice([1, 1, rng.randint(1, 10)])
            ops += [["can_append", 0, n], ["append", 0, n]]
            computed += n
            ops.append(["set_seq", 0, "num_computed_tokens", computed])
        return ops + [["deallocate", 0]]

    def refused(i):
        ops = [["pool", {"num_blocks": rng.randint(1, 5), "block_size": rng.choice([2, 4])}]]
        for index in range(3):
            ops += [["seq", {"seq_id": index, "num_prompt_tokens": 40}], ["can_append", index, rng.randint(1, 12)],
                    ["append", index, rng.randint(1, 12)]]
        return ops + [["can_allocate", 2, 1], ["deallocate", 0], ["allocate", 2, rng.randint(1, 8)]]

    def freeing(i):
        ops = [["pool", {"num_blocks": 16, "block_size": rng.choice([1, 2, 4])}]]
        for index in range(4):
            ops += [["seq", {"seq_id": index, "num_prompt_tokens": 10}], ["append", index, rng.randint(0, 6)]]
        for index in rng.sample(range(4), 4):
            ops.append(["deallocate", index])
        return ops + [["append", 0, 3], ["deallocate", 0], ["deallocate", 0]]

    return [
        Rule("blocks needed = ceil((computed + new) / block_size) - held, never negative", seeded("blocks needed", 12, needed)),
        Rule("a growing sequence gets a block only when it crosses a block boundary", seeded("growth", 12, growth)),
        Rule("what does not fit is refused: can_append is False, append raises RuntimeError and changes nothing",
             seeded("refused", 10, refused)),
        Rule("deallocate returns every block and empties the table", seeded("freeing", 8, freeing)),
        Rule("whole runs under KV pressure match the reference",
             [VLLM_PREEMPTION, VLLM_RESUME] + seeded("tight KV", 8, lambda i: step_script(rng, tight=True))
             + seeded("engine run", 4, lambda i: engine_script(rng, tight=True))),
    ]


def running_setup(rng: random.Random, policy: str, n: int, spare: int = 0) -> tuple[list, list[int]]:
    """A scheduler (block_size 4) whose pool is filled by n running sequences set up by hand."""
    specs, ids = [], rng.sample(range(1, 60), n)
    for sid in ids:
        computed = rng.randint(1, 14)
        specs.append((sid, computed, -(-computed // 4)))
    ops = [sched(num_blocks=sum(s[2] for s in specs) + spare, block_size=4, policy=policy)]
    for sid, computed, blocks in specs:
        kwargs = {"seq_id": sid, "num_prompt_tokens": computed, "max_tokens": 30, "priority": rng.randint(0, 3),
                  "arrival_us": rng.choice([0, 5, 10, 15])}
        ops.append(["running", kwargs, computed, 1, blocks])
    return ops + [["batch", 200]], ids


def todo3_rules(rng: random.Random) -> list[Rule]:
    # The key-function rule came later: it draws from its own generator, so the other scenarios stay as they were.
    # Only the state's ints: they hash the same in every process (the None in getstate() hashes by address in 3.11).
    key_rng = random.Random(hash(rng.getstate()[1]) ^ 0x5EED)

    def grow(policy, scheduled=False, source=rng):
        def make(i):
            ops, ids = running_setup(source, policy, source.randint(2, 5), spare=source.randint(0, 1))
            if scheduled:
                ops += [["batch_add", sid, 1] for sid in ids if source.random() < 0.6]
            return ops + [["make_room", source.choice(ids[:2]), source.randint(1, 9)]]
        return make

    def self_victim(i):
        ops, ids = running_setup(rng, "fcfs", rng.randint(1, 3))
        return ops + [["make_room", ids[-1], rng.randint(3, 20)]]

    def preempt_direct(i):
        ops, ids = running_setup(rng, rng.choice(["fcfs", "priority"]), rng.randint(1, 4))
        ops.append(add(99, 1, max_tokens=1))
        target = rng.choice(ids)
        if rng.random() < 0.5:
            ops.append(["batch_add", target, 1])
        return ops + [["preempt", target]]

    return [
        Rule("FCFS: the last admitted running request is preempted, one at a time until the blocks fit",
             seeded("fcfs victims", 12, grow("fcfs"))),
        Rule("priority: the largest (priority, arrival, id) is preempted", seeded("priority victims", 12, grow("priority"))),
        Rule("a key-function policy (Step 6) preempts the last admitted, as FCFS does",
             seeded("key-function victims", 8, grow("aging_1s", source=key_rng))),
        Rule("recompute: blocks freed, computed tokens reset and counted, back to the front of the queue",
             seeded("preempt", 10, preempt_direct)),
        Rule("a victim already in this step's batch leaves it and gives its tokens back",
             seeded("scheduled victims", 10, grow("priority", scheduled=True))),
        Rule("a request that is its own victim cannot run: False", seeded("self victim", 6, self_victim)),
        Rule("vLLM's preemption scenarios, step by step", [VLLM_PREEMPTION, VLLM_RESUME, VLLM_NO_PREEMPTION]),
        Rule("whole runs under KV pressure match the reference",
             seeded("tight KV", 12, lambda i: step_script(rng, tight=True))
             + seeded("engine run", 6, lambda i: engine_script(rng, tight=True))),
    ]


def rand_records(rng: random.Random, n: int, single_token: bool = False) -> list[dict]:
    records = []
    for sid in rng.sample(range(1, 500), n):
        arrival = rng.randint(0, 2_000_000)
        first = arrival + rng.randint(1_000, 900_000)
        outputs = 1 if single_token or rng.random() < 0.15 else rng.randint(2, 300)
        finish = first if outputs == 1 else first + rng.randint(outputs, 60_000 * outputs)
        preemptions = rng.choice([0, 0, 0, rng.randint(1, 4)])
        records.append({"seq_id": sid, "arrival_us": arrival, "first_token_us": first, "finish_us": finish,
                        "num_output_tokens": outputs, "num_preemptions": preemptions,
                        "num_recomputed_tokens": rng.randint(1, 900) * preemptions})
    return records


def call(fn: str, *args) -> list:
    return [["call", fn, list(args)]]


# The keys TODO 4's text lists for latency_summary: only these are judged, so a summary may carry more (span_s).
SUMMARY_KEYS = [f"p{q}_{metric}" for metric in ("ttft_ms", "tpot_ms", "e2e_ms") for q in (50, 95, 99)] + [
    "throughput_tok_s", "goodput_req_s", "slo_attainment", "num_preemptions", "num_recomputed_tokens"]


def summary(*args) -> list:
    return [["call", "latency_summary", list(args), SUMMARY_KEYS]]


def todo4_rules(rng: random.Random) -> list[Rule]:
    def slo():
        return rng.choice([50, 200, 500, 1000]), rng.choice([5, 20, 50, 200])

    def values():
        return [rng.choice([rng.randint(0, 1000), rng.random() * 100]) for _ in range(rng.randint(1, 40))]

    return [
        Rule("per request: TTFT, TPOT (None for one token) and E2E in ms",
             seeded("latencies", 12, lambda i: call("request_latencies", rand_records(rng, rng.randint(1, 12))))),
        Rule("percentiles interpolate linearly between closest ranks",
             seeded("percentile", 14, lambda i: call("percentile", values(), rng.choice([0, 50, 90, 95, 99, 100, rng.random() * 100])))
             + [{"name": "no values", "ops": call("percentile", [], 50)}]),
        Rule("summary: p50/p95/p99, throughput, goodput, SLO attainment, preemption cost",
             seeded("summary", 14, lambda i: summary(rand_records(rng, rng.randint(1, 30)), *slo()))),
        Rule("edges: single-token requests only, one request, SLO boundaries",
             seeded("single tokens", 4, lambda i: summary(rand_records(rng, rng.randint(1, 5), single_token=True), *slo()))
             + [{"name": "SLO met exactly", "ops": summary([
                 {"seq_id": 1, "arrival_us": 0, "first_token_us": 200_000, "finish_us": 300_000, "num_output_tokens": 3,
                  "num_preemptions": 0, "num_recomputed_tokens": 0}], 200, 50)}]),
    ]


# TODO 5 is open-ended: the child reports only what slo_key says of each trace's requests (a key reads a request's
# arrival fields, so the order it gives is all of it); this process runs the fast engine on that order and checks the
# SLO. The student's code never touches the engine or the metrics it is judged by.
# - Traces 0-2 are the notebook's own (lab.engine.exercise_trace makes them): the child gets their rows and reports
#   the order lab.engine.serving_order gives, as the notebook's check computes it.
# - The held-out traces never reach the child whole: their requests come one at a time, in arrival order, over the
#   feed (grader/runner/feed.py), each once the key of the one before has come back, as an online scheduler meets
#   them; the last RECHECKED are then asked again, in reverse, as serving_order asks them (a key that remembers
#   earlier calls gives other values). This process sorts the requests by the keys it received. So a key cannot read
#   a held-out trace's future in its process and tune itself to it by simulating.
# Traces of the same kind the notebook does not name, drawn from the term's secret (grader/term.py): another term,
# other traces, and the repository names none of them. In public mode (tests, demos) they are PUBLIC_HELD_OUT, the
# ones this repository always graded on: aging at whole seconds from 3 to 7 s per level meets them, as it meets
# traces 0-2; 2.5 s meets 0-2 but misses the first (tests/policybench). A term's are the first of its keyed draws on
# which the reference's rule (aging at 4 s per level) and a second either side of it meet the SLO: the reference
# meets them, as the notebook says, and not at the edge (some traces no key meets: the notebook's trace 17).
# Their seeds are 62-bit, so a key cannot find its trace by matching the first arrivals against exercise_trace of
# small seeds (tests/grader/test_online_key.py): the first arrivals of a seed cost about 18 us (numpy's generator,
# no trace), so 5.5e4 seeds/s on a core, and 2^62 = 4.6e18 seeds take 8e13 s, 2.6 million core-years; a key has
# 5 s of CPU per trace (3e5 seeds). Nor can it know them: they are a keyed hash of the secret.
PUBLIC_HELD_OUT = (3651099849820810806, 3528831060266509965)
HELD_OUT_COUNT = 2
VETTING_RATES = (3, 4, 5)   # seconds per level: the reference's key (master, TODO 5) and a second either side


KEY_CPU_SECONDS = 5.0  # per trace: 2000 requests and 200 asked again; the notebook tells students to keep keys fast
RECHECKED = 200        # serving_order's num_rechecked


@caches.cached("the number exercise_trace draws from", "a trace is a pure function of that number (lab.engine.slo)")
def _trace(seed: int) -> tuple:
    """A trace of the exercise in arrival order, made once per process: every verdict on TODO 5 reads the same five."""
    return tuple(sorted(exercise_trace(seed), key=lambda r: (r["arrival_us"], r["seq_id"])))


def slo_scenario(seed: int, name: Message | None = None, held_out: bool = False) -> dict:
    """One trace's scenario: ["rank", rows] (RequestInfo's fields), or, held out, ["rank"] and the rows in its feed."""
    rows = [[r["seq_id"], r["arrival_us"], r["priority"], r["num_prompt_tokens"]] for r in _trace(seed)]
    scenario = labelled(name or Message("trace", {"number": seed}), [["rank", rows]], seed=seed, cpu_seconds=KEY_CPU_SECONDS)
    if held_out:
        again = list(reversed(range(max(0, len(rows) - RECHECKED), len(rows))))
        scenario.update(ops=[["rank"]], feed={"items": rows, "again": again})
    return scenario


IMPURE, NOT_A_KEY = "impure", "not a key"


def fed_ranking(scenario: dict) -> list[int] | str | None:
    """The order of a held-out trace's requests under the keys this process received on its feed (smallest first, then
    seq_id, as serving_order sorts), or why there is none: IMPURE (a request asked again got another key), NOT_A_KEY
    (a reply that is not a tuple of finite numbers: the child checks each key as lab's checked_key does, so only a
    child that skipped that sends one), None (not every request was answered)."""
    spec, fed = scenario["feed"], scenario.get("fed")
    count = len(spec["items"])
    if fed is None or not fed.complete or len(fed.replies) != count + len(spec["again"]):
        return None
    keys = [_key(reply) for reply in fed.replies]
    if any(k is None for k in keys):
        return NOT_A_KEY
    if any(keys[count + j] != keys[index] for j, index in enumerate(spec["again"])):
        return IMPURE
    return [seq_id for _, seq_id in sorted(zip(keys, (row[0] for row in spec["items"])))]


def _key(reply) -> tuple | None:
    """A reply as the key it stands for (the driver's _key_part wrote each number), or None if it is none."""
    if type(reply) is not tuple or not reply:
        return None
    parts = tuple(_part(p) for p in reply)
    return None if any(p is None for p in parts) else parts


def _part(value):
    if type(value) is list and len(value) == 2 and all(type(v) is int for v in value) and value[1] > 0:
        return Fraction(*value)   # a Fraction crosses as its numerator and denominator: exactly
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return value if math.isfinite(value) else None
    except OverflowError:
        return None


def judge_slo(observed, scenario) -> Message | str:
    """'' when the order the key gave meets the SLO on the scenario's trace, else what it missed (a Message)."""
    if observed == NoValue(TIMEOUT):   # the child's word that it ran out of time, never a value the key returned
        return Message("slo_key_slow", {"seconds": f"{KEY_CPU_SECONDS:g}", "count": 2000})
    if not isinstance(observed, list) or len(observed) != 1 or not isinstance(observed[0], dict):
        return Message("slo_key_not_run", {"value": shown(observed)})
    ranking = _given_order(observed[0], scenario)
    if "error" in observed[0] or ranking in (IMPURE, NOT_A_KEY):
        return _key_raised(observed[0])
    trace = _trace(scenario["seed"])
    if not _one_place_per_request(ranking, trace):
        return Message("slo_order_invalid")
    return _slo_met(ranking, trace)


def _given_order(result: dict, scenario: dict):
    """The order the key gave: the child's value, or for a held-out trace the order of the keys on its feed."""
    if "error" not in result and "feed" in scenario:
        return fed_ranking(scenario)
    return result.get("value")


def _key_raised(result: dict) -> Message:
    """Why the key gave no order: slo_key is not defined, or it raised (or its feed's keys were impure or none)."""
    error = error_name(result["error"]) if "error" in result else "ValueError"   # what serving_order raises
    if error == "NameError":
        return Message("slo_key_missing")
    return Message("slo_key_raised", {"error": error_words(error)})


def _one_place_per_request(ranking, trace) -> bool:
    """Whether `ranking` is a list of int seq_ids that names each request of the trace once."""
    return (isinstance(ranking, list) and all(type(seq_id) is int for seq_id in ranking)
            and sorted(ranking) == sorted(r["seq_id"] for r in trace))


def _slo_met(ranking: list[int], trace) -> Message | str:
    """'' if serving the trace in `ranking`'s order meets the SLO, else what it missed (a Message)."""
    missed = slo_miss_phrases(slo_metrics(FastEngine(policy=ranked_policy(ranking)).run(trace)))
    # lab's messages (numbers of ours only) as their templates and fields, worded by lab's own Chinese templates
    parts = [part for i, miss in enumerate(missed) for part in [Message("semicolon")] * bool(i) + [lab_text(miss)]]
    return Message("slo_misses", {"misses": Joined(tuple(parts))}) if missed else ""


def _met_with_margin(seed: int) -> bool:
    """Aging at each of VETTING_RATES meets the SLO on the trace, run as judge_slo runs a key."""
    from lab.engine import RequestInfo, serving_order

    trace = _trace(seed)
    infos = [RequestInfo(r["seq_id"], r["arrival_us"], r["priority"], r["num_prompt_tokens"]) for r in trace]
    for rate in VETTING_RATES:
        order = serving_order(lambda r, rate=rate: (r.priority * rate * 1_000_000 + r.arrival_us,), infos)
        if slo_misses(slo_metrics(FastEngine(policy=ranked_policy(order)).run(trace))):
            return False
    return True


@caches.cached("the term's number (grader/term.py)", "the draws depend on it, the SLO and the engine alone (code: a new process)")
def held_out_seeds(seed: int) -> tuple[int, ...]:
    """The held-out traces of the term whose seed (grader/term.py) is `seed`: PUBLIC_HELD_OUT in public mode, else the
    first HELD_OUT_COUNT of its keyed draws that the reference meets with a margin (_met_with_margin)."""
    if seed == PUBLIC_SEED:
        return PUBLIC_HELD_OUT
    found: list[int] = []
    for i in range(200):   # most draws pass (all of 12 tried); 200 failing in a row means the SLO or the engine changed
        candidate = derive(seed, f"03_batch_scheduling held-out trace {i}")
        if _met_with_margin(candidate):
            found.append(candidate)
            if len(found) == HELD_OUT_COUNT:
                return tuple(found)
    raise RuntimeError("no held-out trace of this term meets the SLO under the reference's key: has the SLO changed?")


def todo5_rules(seed: int) -> list[Rule]:
    stated = ", ".join(map(str, SLO_EXERCISE["seeds"]))
    return [
        Rule(f"meets the SLO on the notebook's traces {stated}", [slo_scenario(s) for s in SLO_EXERCISE["seeds"]], judge=judge_slo),
        Rule("meets it on two held-out traces of the same kind (not tuned to the three)",
             [slo_scenario(s, Message("held_out_trace", {"letter": "AB"[i]}), held_out=True) for i, s in enumerate(held_out_seeds(seed))],
             judge=judge_slo),
    ]


# Each case of the visible check cells, and the hidden rule it is a scenario of (grader/contract.py's place): a case whose
# checks state several rules gives each rule the numbers of its checks (1 for the first check the case runs).
VISIBLE = {
    "test_todo1_chunked_prefill_under_the_token_budget()":
        "vLLM's budget scenarios: one step, chunked prefill with a threshold, chunking on and off",
    "test_todo1_running_first_then_waiting()": "running requests first, then the waiting ones, under the token budget (ample KV)",
    "test_todo1_max_num_seqs_and_unchunked_head_of_line()": {
        "max_num_seqs bounds the running set": [1, 2],
        "vLLM's budget scenarios: one step, chunked prefill with a threshold, chunking on and off": [3, 4]},
    "test_todo1_queue_order_and_head_of_line()": {
        "vLLM's priority queue order: priority, then arrival; max_num_seqs holds the rest back": [1, 2],
        "the first waiting request that does not fit ends admission": [3]},
    "test_todo1_preemption_inside_schedule()": "under KV pressure: nobody is admitted in a step that preempted",
    "test_todo1_in_a_whole_engine_run()": "whole engine runs match the reference",
    "test_todo2_ceil_division_and_growth()": {
        "blocks needed = ceil((computed + new) / block_size) - held, never negative": [1, 2, 5, 6, 8],
        "a growing sequence gets a block only when it crosses a block boundary": [3, 4, 7, 9]},
    "test_todo2_refuses_what_does_not_fit()":
        "what does not fit is refused: can_append is False, append raises RuntimeError and changes nothing",
    "test_todo2_deallocate_returns_everything()": "deallocate returns every block and empties the table",
    "test_todo3_fcfs_preempts_the_last_admitted()": {
        "FCFS: the last admitted running request is preempted, one at a time until the blocks fit": [1, 2],
        "recompute: blocks freed, computed tokens reset and counted, back to the front of the queue": [3, 4, 5]},
    "test_todo3_priority_victim_and_its_budget()": {
        "priority: the largest (priority, arrival, id) is preempted": [1, 2],
        "a victim already in this step's batch leaves it and gives its tokens back": [3, 4],
        "a request that is its own victim cannot run: False": [5, 6]},
    "test_todo3_one_victim_at_a_time_to_the_front_of_the_queue()": {
        "FCFS: the last admitted running request is preempted, one at a time until the blocks fit": [1, 2, 4],
        "recompute: blocks freed, computed tokens reset and counted, back to the front of the queue": [3]},
    "test_todo3_priority_full_tie_and_key_function_victims()": {
        "priority: the largest (priority, arrival, id) is preempted": [1],
        "a key-function policy (Step 6) preempts the last admitted, as FCFS does": [2]},
    "test_todo3_vllm_priority_preemption_on_your_engine()": "vLLM's preemption scenarios, step by step",
    "test_todo4_per_request_latencies()": "per request: TTFT, TPOT (None for one token) and E2E in ms",
    "test_todo4_percentiles_interpolate()": "percentiles interpolate linearly between closest ranks",
    "test_todo4_summary_and_goodput()": "summary: p50/p95/p99, throughput, goodput, SLO attainment, preemption cost",
    "test_todo4_slo_edges()": "edges: single-token requests only, one request, SLO boundaries",
}
# TODO 5's visible cases are its first rule's scenarios by construction: the key's order of the same traces
# (lab.engine.SLO_EXERCISE["seeds"]), one place per request and the SLO judged here, on this process's engine.
VISIBLE_JUDGED = {
    "test_todo5_is_a_pure_key_function()": f"meets the SLO on the notebook's traces {', '.join(map(str, SLO_EXERCISE['seeds']))}",
    "test_todo5_meets_the_slo_on_traces_0_1_2()": f"meets the SLO on the notebook's traces {', '.join(map(str, SLO_EXERCISE['seeds']))}",
}


def build(seed: int) -> dict[str, list[Rule]]:
    """Each TODO's rules (by its answer cell's grade_id), for one term's seed (grader/term.py)."""
    rng = random.Random(cases_seed(seed))   # never the term's seed itself (grader/term.py)
    return {
        "todo1": todo1_rules(rng),
        "todo2": todo2_rules(rng),
        "todo3": todo3_rules(rng),
        "todo4": todo4_rules(rng),
        "todo5": todo5_rules(seed),
    }
