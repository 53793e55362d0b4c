"""Seeded synthetic workloads. Lengths are assumptions for teaching, not fitted to a published trace."""
from __future__ import annotations

import math
import random

from ..decode import _require_int


def _lognormal_int(rng: random.Random, median: int, sigma: float, low: int, high: int) -> int:
    return max(low, min(high, int(round(rng.lognormvariate(math.log(median), sigma)))))


def poisson_requests(num_requests: int, rate_per_s: float, seed: int = 0, prompt_median: int = 256,
                     output_median: int = 64, max_prompt: int = 2048, max_output: int = 512,
                     first_seq_id: int = 0) -> list[dict]:
    """Poisson arrivals at rate_per_s; lognormal prompt and output lengths (sigma 0.8), clipped."""
    _require_int("num_requests", num_requests, minimum=0)
    if not (isinstance(rate_per_s, (int, float)) and rate_per_s > 0):
        raise ValueError(f"rate_per_s must be a positive number, got {rate_per_s!r}")
    rng, clock_s, requests = random.Random(seed), 0.0, []
    for index in range(num_requests):
        clock_s += rng.expovariate(rate_per_s)
        requests.append({"seq_id": first_seq_id + index, "arrival_us": int(clock_s * 1e6),
                         "num_prompt_tokens": _lognormal_int(rng, prompt_median, 0.8, 1, max_prompt),
                         "max_tokens": _lognormal_int(rng, output_median, 0.8, 1, max_output)})
    return requests
