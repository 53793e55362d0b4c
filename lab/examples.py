"""The course's worked examples, as data, with the numbers they must give."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction


def jobs_from_tokens(tokens: list[int], arrival: int = 0) -> list[dict]:
    """Jobs 0..n-1 that all arrive at `arrival`, with the given token counts."""
    return [{"id": i, "arrival": arrival, "tokens": n} for i, n in enumerate(tokens)]


@dataclass(frozen=True)
class BatchingExample:
    """A worked example: its jobs, slots and the numbers the course states for it."""

    name: str
    jobs: list[dict]
    slots: int
    makespan: dict[str, int]            # policy -> makespan_ticks
    utilization: dict[str, Fraction]    # policy -> utilization, measured from tick 0
    extra: dict = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)


FOUR_ON_TWO = BatchingExample(
    name="4 requests on 2 slots",
    jobs=jobs_from_tokens([1, 4, 2, 3]),
    slots=2,
    makespan={"static": 7, "continuous": 6},
    utilization={"static": Fraction(5, 7), "continuous": Fraction(5, 6)},
    extra={"busy_slots": 10, "continuous_finish": [1, 4, 3, 6], "continuous_wait": [0, 0, 1, 3]},
)

NO_GAIN = BatchingExample(
    name="no gain: two 4-token jobs arriving at t=3",
    jobs=jobs_from_tokens([4, 4], arrival=3),
    slots=2,
    makespan={"static": 7, "continuous": 7},
    utilization={"static": Fraction(8, 14), "continuous": Fraction(8, 14)},
    extra={"utilization_from_first_arrival": Fraction(1)},
)

A_TO_E = BatchingExample(
    name="A-E",
    jobs=jobs_from_tokens([2, 6, 3, 2, 4]),
    slots=2,
    makespan={"static": 13, "continuous": 10},
    utilization={"static": Fraction(17, 26), "continuous": Fraction(17, 20)},
    extra={"rounded_percent": {"static": 65, "continuous": 85}},
    labels={0: "A", 1: "B", 2: "C", 3: "D", 4: "E"},
)

BATCHING_EXAMPLES = (FOUR_ON_TWO, NO_GAIN, A_TO_E)

# Decode-scheduler scenarios (notebook 02): each is constructor kwargs, then a
# script of ("enqueue", kwargs) and ("run", max_steps) / ("step", None) actions.
DECODE_SCENARIOS = {
    "preemption and resume": {
        "sim": {"free_kv_blocks": 2},
        "script": [
            ("enqueue", {"request_id": 1, "prompt_len": 4, "max_new_tokens": 3, "priority": 1, "required_blocks": 2}),
            ("step", None),  # prefill
            ("step", None),  # one decode token, so the resume visibly keeps it
            ("enqueue", {"request_id": 2, "prompt_len": 2, "max_new_tokens": 2, "priority": 9, "required_blocks": 2}),
            ("run", 20),
        ],
    },
    "non-preemptible request": {
        "sim": {"free_kv_blocks": 2},
        "script": [
            ("enqueue", {"request_id": 1, "prompt_len": 4, "max_new_tokens": 3, "priority": 1, "required_blocks": 2, "preemptible": False}),
            ("step", None),
            ("step", None),
            ("enqueue", {"request_id": 2, "prompt_len": 2, "max_new_tokens": 2, "priority": 9, "required_blocks": 2}),
            ("run", 20),
        ],
    },
    "deadline": {
        "sim": {"policy": "deadline"},
        "script": [
            ("enqueue", {"request_id": 1, "prompt_len": 4, "max_new_tokens": 4, "priority": 9, "deadline_step": 20}),
            ("enqueue", {"request_id": 2, "prompt_len": 2, "max_new_tokens": 1, "priority": 0, "deadline_step": 1}),
            ("enqueue", {"request_id": 3, "prompt_len": 3, "max_new_tokens": 2, "priority": 5, "deadline_step": 6}),
            ("run", 30),
        ],
    },
}


def play(sim, script) -> tuple[list[dict], dict[int, int]]:
    """Apply a DECODE_SCENARIOS script; return (timeline, arrival step per request)."""
    arrivals: dict[int, int] = {}
    for action, arg in script:
        if action == "enqueue":
            sim.enqueue(**arg)
            arrivals[arg["request_id"]] = sim.clock
        elif action == "step":
            sim.step()
        elif action == "run":
            sim.run(max_steps=arg)
        else:
            raise ValueError(f"unknown script action {action!r}")
    return sim.timeline, arrivals
