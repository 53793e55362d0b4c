"""The step-by-step teaching engine (notebook 03, reference answers) under any policy of `policies.POLICIES`.

For "fcfs" and "priority" it is notebook 03's Scheduler unchanged. For the others a subclass replaces only
the waiting queue (the policy key decides who is next) and counts prefill tokens for hrrn; the victim rule
stays vLLM's (last admitted). Used by the differential test and `make bench`; needs the grader's reference.
"""
from __future__ import annotations

from functools import lru_cache

from .policies import policy_key


@lru_cache(maxsize=1)
def _namespace() -> dict:
    from grader import reference
    return reference.namespace("03_batch_scheduling")


def scheduler_class(policy: str):
    """The teaching Scheduler class for a policy (the reference's own for fcfs and priority)."""
    ns = _namespace()
    base = ns["Scheduler"]
    if policy in ("fcfs", "priority"):
        return base
    key = policy_key(policy)

    class PolicyScheduler(base):
        def __init__(self, **config):
            super().__init__(policy="fcfs", **config)
            self.prefill_tokens, self.stamp = 0, 0

        @property
        def num_waiting(self):
            return len(self.waiting)

        def _waiting_key(self, seq):
            return key(seq, self)

        def waiting_order(self):
            return sorted(self.waiting, key=self._waiting_key)

        def _peek_waiting(self):
            return min(self.waiting, key=self._waiting_key)

        def _prepend_waiting(self, seq):
            self.stamp += 1
            seq.preempt_stamp = self.stamp
            self.waiting.append(seq)

        def add(self, seq):
            super().add(seq)
            seq.arrival_prefill_tokens = self.prefill_tokens

        def update_from_batch(self, batch, step, now_us):
            self.prefill_tokens += batch.num_prefill_tokens
            return super().update_from_batch(batch, step, now_us)

    PolicyScheduler.__name__ = f"Scheduler_{policy}"
    return PolicyScheduler


def teaching_records(requests: list[dict], policy: str = "fcfs", step_overhead_us: int = 8_000,
                     per_token_us: int = 100, max_steps: int = 10_000_000, **config) -> list[dict]:
    """Run the teaching engine; per-request records sorted by seq_id."""
    from lab.engine import LLMEngine, Sequence, TimeModel
    seqs = []
    for spec in requests:
        seq = Sequence(**{k: spec[k] for k in ("seq_id", "num_prompt_tokens", "max_tokens", "arrival_us", "priority") if k in spec})
        seq.deadline_us, seq.preempt_stamp, seq.arrival_prefill_tokens = spec.get("deadline_us", 0), 0, 0
        seqs.append(seq)
    sched = scheduler_class(policy)(**config) if policy not in ("fcfs", "priority") else scheduler_class(policy)(policy=policy, **config)
    return LLMEngine(sched, TimeModel(step_overhead_us, per_token_us)).run(seqs, max_steps=max_steps).records
