"""Notebook 03's SLO exercise (TODO 5): the stated scenario, the two numbers its SLO reads, and what was missed.

Shared by the notebook's check, the grader's judge and the policy benchmark, so all three read the same SLO.
It holds no answer: which policy meets it is the exercise.
"""
from __future__ import annotations

import numpy as np

from ..i18n import Phrase, tr
from .workloads import make_trace

# 14 requests/s (Poisson), make_trace's three priority classes, 2000 requests per trace, traces 0, 1 and 2.
SLO_EXERCISE = {"rate_req_s": 14, "num_requests": 2000, "seeds": (0, 1, 2),
                "class0_p99_ttft_ms": 700, "max_wait_ms": 10_000}


def exercise_trace(seed: int, exercise: dict = SLO_EXERCISE) -> list[dict]:
    """One trace of the exercise: request dicts for the engine (make_trace's deadlines left out: the SLO has none)."""
    return [{k: v for k, v in r.items() if k != "deadline_us"}
            for r in make_trace(exercise["num_requests"], exercise["rate_req_s"], seed=seed)]


def slo_metrics(records: list[dict]) -> dict:
    """The SLO's two numbers (ms): p99 TTFT of priority class 0, and the longest wait (TTFT) of any request."""
    if not records or any(r.get("first_token_us") is None for r in records):
        raise ValueError(tr("the SLO needs the record of every request, each with a first token"))
    ttft_ms = np.array([(r["first_token_us"] - r["arrival_us"]) / 1000 for r in records])
    interactive = ttft_ms[np.array([r["priority"] == 0 for r in records])]
    if not len(interactive):
        raise ValueError(tr("no request of priority class 0 in these records"))
    return {"class0_p99_ttft_ms": float(np.percentile(interactive, 99)), "max_wait_ms": float(ttft_ms.max())}


def slo_misses(metrics: dict, exercise: dict = SLO_EXERCISE) -> list[str]:
    """What a run's metrics miss of the SLO, in words (empty when it is met)."""
    return [str(phrase) for phrase in slo_miss_phrases(metrics, exercise)]


def slo_miss_phrases(metrics: dict, exercise: dict = SLO_EXERCISE) -> list[Phrase]:
    """slo_misses' messages as Phrases (a template and its fields), which the grader words in the page's language."""
    missed = []
    if metrics["class0_p99_ttft_ms"] > exercise["class0_p99_ttft_ms"]:
        missed.append(Phrase("class-0 p99 TTFT {value} ms > {limit} ms", value=f"{metrics['class0_p99_ttft_ms']:.0f}",
                             limit=exercise["class0_p99_ttft_ms"]))
    if metrics["max_wait_ms"] > exercise["max_wait_ms"]:
        missed.append(Phrase("max wait {value} ms > {limit} ms", value=f"{metrics['max_wait_ms']:.0f}", limit=exercise["max_wait_ms"]))
    return missed
