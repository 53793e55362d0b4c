"""Synthetic workloads, reproducible from an integer `seed`. Lengths are assumptions for teaching, not fitted to a published trace.

`poisson_requests`: notebook 03's experiments. `make_trace`: its SLO exercise (TODO 5) and the policy
benchmark (`policybench/`): Poisson or bursty (gamma) arrivals, lognormal lengths, priority classes,
deadlines. Provenance of `make_trace`, honestly:
- Gamma inter-arrival times for bursty traffic follow BurstGPT (Wang et al., "BurstGPT: A Real-World
  Workload Dataset to Optimize LLM Serving Systems", arXiv 2401.17644), which models the burstiness of
  Azure OpenAI GPT traffic with a Gamma distribution. Our shape (cv) is an ASSUMPTION, not their fit.
- Lengths: lognormal with medians 256 (prompt) / 64 (output) tokens and sigma 0.8 are ASSUMPTIONS, the same
  as notebook 03's `poisson_requests`. BurstGPT fits Zipf distributions to token lengths; we did not fit
  any published trace, and nothing is downloaded.
- Priority classes (0 interactive, 1 standard, 2 batch) with shares 20/50/30 % are ASSUMPTIONS.
- Deadline = arrival + slack * ideal latency, where ideal latency is the request alone on the engine
  (prefill in ceil(prompt / budget) steps, then one step per further output token) under the time model.
"""
from __future__ import annotations

import math
import random

import numpy as np

from ..decode import _require_int
from ..i18n import tr


def _lognormal_int(rng: random.Random, median: int, sigma: float, low: int, high: int) -> int:
    return max(low, min(high, int(round(rng.lognormvariate(math.log(median), sigma)))))


def poisson_requests(num_requests: int, rate_per_s: float, seed: int = 0, prompt_median: int = 256,
                     output_median: int = 64, max_prompt: int = 2048, max_output: int = 512,
                     first_seq_id: int = 0) -> list[dict]:
    """Poisson arrivals at rate_per_s; lognormal prompt and output lengths (sigma 0.8), clipped."""
    _require_int("num_requests", num_requests, minimum=0)
    if not (isinstance(rate_per_s, (int, float)) and rate_per_s > 0):
        raise ValueError(tr("rate_per_s must be a positive number, got {value}", value=repr(rate_per_s)))
    rng, clock_s, requests = random.Random(seed), 0.0, []
    for index in range(num_requests):
        clock_s += rng.expovariate(rate_per_s)
        requests.append({"seq_id": first_seq_id + index, "arrival_us": int(clock_s * 1e6),
                         "num_prompt_tokens": _lognormal_int(rng, prompt_median, 0.8, 1, max_prompt),
                         "max_tokens": _lognormal_int(rng, output_median, 0.8, 1, max_output)})
    return requests


CLASS_SHARES = (0.2, 0.5, 0.3)  # priority 0, 1, 2
CLASS_SLACK = (4.0, 8.0, 30.0)   # deadline = arrival + slack * ideal latency, per class


def ideal_latency_us(num_prompt_tokens: int, max_tokens: int, max_num_batched_tokens: int = 2048,
                     step_overhead_us: int = 8_000, per_token_us: int = 100) -> int:
    """Latency of a request alone on the engine, under the linear time model."""
    prefill_steps = -(-num_prompt_tokens // max_num_batched_tokens)
    return (prefill_steps * step_overhead_us + per_token_us * num_prompt_tokens
            + (max_tokens - 1) * (step_overhead_us + per_token_us))


def make_trace(num_requests: int, rate_per_s: float, seed: int = 0, arrival: str = "poisson", cv: float = 3.0,
               prompt_median: int = 256, output_median: int = 64, sigma: float = 0.8, max_prompt: int = 2048,
               max_output: int = 512, class_shares=CLASS_SHARES, class_slack=CLASS_SLACK,
               max_num_batched_tokens: int = 2048, step_overhead_us: int = 8_000, per_token_us: int = 100) -> list[dict]:
    """A list of request dicts (seq_id, arrival_us, num_prompt_tokens, max_tokens, priority, deadline_us)."""
    if type(num_requests) is not int or num_requests < 0:
        raise ValueError(tr("num_requests must be an int >= 0, got {value}", value=repr(num_requests)))
    if not (isinstance(rate_per_s, (int, float)) and rate_per_s > 0):
        raise ValueError(tr("rate_per_s must be a positive number, got {value}", value=repr(rate_per_s)))
    if arrival not in ("poisson", "gamma"):
        raise ValueError(tr("arrival must be 'poisson' or 'gamma', got {value}", value=repr(arrival)))
    if arrival == "gamma" and not cv > 0:
        raise ValueError(tr("cv must be > 0, got {value}", value=repr(cv)))
    if len(class_shares) != len(class_slack) or abs(sum(class_shares) - 1) > 1e-9:
        raise ValueError(tr("class_shares must sum to 1 and match class_slack in length"))
    rng = np.random.default_rng(seed)
    if arrival == "poisson":
        gaps = rng.exponential(1 / rate_per_s, num_requests)
    else:  # gamma with mean 1/rate and coefficient of variation cv: shape 1/cv^2 (cv > 1 is burstier than Poisson)
        shape = 1 / cv ** 2
        gaps = rng.gamma(shape, 1 / (rate_per_s * shape), num_requests)
    arrivals = (np.cumsum(gaps) * 1e6).astype(np.int64)
    prompts = np.clip(np.rint(rng.lognormal(np.log(prompt_median), sigma, num_requests)), 1, max_prompt).astype(np.int64)
    outputs = np.clip(np.rint(rng.lognormal(np.log(output_median), sigma, num_requests)), 1, max_output).astype(np.int64)
    classes = rng.choice(len(class_shares), size=num_requests, p=list(class_shares))
    trace = []
    for i in range(num_requests):
        p, o, c = int(prompts[i]), int(outputs[i]), int(classes[i])
        ideal = ideal_latency_us(p, o, max_num_batched_tokens, step_overhead_us, per_token_us)
        trace.append({"seq_id": i, "arrival_us": int(arrivals[i]), "num_prompt_tokens": p, "max_tokens": o,
                      "priority": c, "deadline_us": int(arrivals[i]) + int(class_slack[c] * ideal)})
    return trace
