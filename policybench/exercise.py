"""Notebook 03's SLO exercise (TODO 5) on the fast engine: the grader's judge, and a check of the exercise itself.

The scenario and the SLO are `lab.engine.slo` (14 requests/s, 2000 requests per trace, traces 0-2;
class-0 p99 TTFT <= 700 ms and every wait <= 10 s). FCFS misses the first (interactive requests queue behind
everyone), fixed priority the second (the batch class starves); aging at about 3-7 s per level meets both.
`judge` runs a policy and checks the property, so any key function that meets the SLO passes.
"""
from __future__ import annotations

from lab.engine.slo import SLO_EXERCISE, exercise_trace, slo_metrics, slo_misses

from .fast_engine import FastEngine


def aging_key(seconds_per_level: float):
    """An aging key with its rate as a parameter: one priority level gained per `seconds_per_level` waited."""
    if not seconds_per_level > 0:
        raise ValueError(f"seconds_per_level must be > 0, got {seconds_per_level!r}")
    step_us = int(seconds_per_level * 1e6)

    def aging(req, sched) -> tuple:
        return (req.priority * step_us + req.arrival_us, req.seq_id)

    aging.__name__ = f"aging_{seconds_per_level:g}s"
    return aging


def ranked_policy(ranking: list[int]):
    """The fast engine's key for a fixed serving order (seq_ids, first served first): how the grader runs TODO 5."""
    place = {seq_id: index for index, seq_id in enumerate(ranking)}
    return lambda req, sched: place[req.seq_id]


def slo_rows(policy, seeds=None, exercise: dict = SLO_EXERCISE) -> list[dict]:
    """Per trace: the two numbers the SLO reads."""
    return [{"seed": seed, **slo_metrics(FastEngine(policy=policy).run(exercise_trace(seed, exercise)))}
            for seed in (exercise["seeds"] if seeds is None else seeds)]


def judge(policy, seeds=None, exercise: dict = SLO_EXERCISE) -> str:
    """'' when the policy meets the SLO on every trace, else what it missed (a verdict for a grader's judge rule)."""
    return "; ".join(f"trace {row['seed']}: {miss}" for row in slo_rows(policy, seeds, exercise) for miss in slo_misses(row, exercise))
