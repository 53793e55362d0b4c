"""Waiting-queue policies: each is one function from a waiting request to its sort key (smallest runs first).

A key reads the request (`seq_id`, `arrival_us`, `priority`, `deadline_us`, `num_prompt_tokens`,
`max_tokens`, `preempt_stamp`, `arrival_prefill_tokens`) and the scheduler (`prefill_tokens`: prefill
tokens computed so far). Adding a policy means adding one function and one line in `POLICIES`.

Victim choice on preemption is vLLM V1's and depends on the policy only through its name: "priority"
evicts the largest (priority, arrival_us, seq_id), every other policy evicts the last admitted request
(`vllm/v1/core/sched/scheduler.py`, `schedule()`, as of November 2026).
"""
from __future__ import annotations

AGING_US = 1_000_000  # aging: one priority level gained per second of waiting


def fcfs(req, sched) -> tuple:
    """vLLM's default (`--scheduling-policy fcfs`, `FCFSRequestQueue` in `vllm/v1/core/sched/request_queue.py`).

    Arrival order, except that a preempted request goes back to the *front* (`prepend_request`):
    the most recently preempted first.
    """
    if req.preempt_stamp:
        return (0, -req.preempt_stamp, 0)
    return (1, req.arrival_us, req.seq_id)


def priority(req, sched) -> tuple:
    """vLLM `--scheduling-policy priority` (`PriorityRequestQueue`): smaller priority first, then arrival."""
    return (req.priority, req.arrival_us, req.seq_id)


def aging(req, sched) -> tuple:
    """Priority minus one level per AGING_US waited. Linear aging is a fixed order: priority*AGING_US + arrival.

    No priority-aging queue in vLLM V1 or SGLang (`schedule_policy.py`) as of November 2026; vLLM's `sjf`
    queue (below) ages by wait time, but over prompt length, not priority. Notebook 02's aging policy.
    """
    return (req.priority * AGING_US + req.arrival_us, req.seq_id)


def edf(req, sched) -> tuple:
    """Earliest deadline first. No counterpart in vLLM V1 or SGLang's schedulers (as of November 2026)."""
    return (req.deadline_us, req.arrival_us, req.seq_id)


def sjf_oracle(req, sched) -> tuple:
    """Shortest job first by the TRUE output length: an oracle, since an engine sees only the max_tokens cap.

    Nearest real rules: none in vLLM's main branch (`SchedulerPolicy = Literal["fcfs", "priority"]` in
    `vllm/config/scheduler.py`; an SJF pull request, #29366, scored shorter *prompt* and longer wait first and
    was closed unmerged), and SGLang's `lof` (longest output first by `max_new_tokens`, the opposite
    direction; `python/sglang/srt/managers/schedule_policy.py`, `_sort_by_longest_output`).
    """
    return (req.max_tokens, req.arrival_us, req.seq_id)


HRRN_MAX_SORTED = 128  # SGLang `_determine_active_policy`: above 128 waiting, hrrn gives way to FCFS


def hrrn(req, sched) -> tuple:
    """SGLang's `hrrn`: highest response ratio next with token-based aging (`_sort_by_hrrn`, as of November 2026).

    ratio - 1 = (prefill tokens processed since arrival) / (prompt tokens to prefill), a wait counted in
    tokens, not in time; ties by id. Like
    SGLang, FCFS order when more than HRRN_MAX_SORTED wait (SGLang keeps the last sorted order instead).
    Ours: no prefix cache, so the whole prompt counts.
    """
    if sched.num_waiting > HRRN_MAX_SORTED:
        return fcfs(req, sched)
    waited = max(0, sched.prefill_tokens - req.arrival_prefill_tokens)
    return (-waited / req.num_prompt_tokens, req.seq_id)


POLICIES = {"fcfs": fcfs, "priority": priority, "aging": aging, "edf": edf, "sjf_oracle": sjf_oracle, "hrrn": hrrn}
# Keys that change while a request waits (they read the scheduler's counters): re-evaluated at every look,
# except above a queue length where they equal a fixed key (the engine then keeps a heap of that key).
DYNAMIC = {"hrrn": (HRRN_MAX_SORTED, fcfs)}


def policy_key(name: str):
    """The key function of a policy name, with a clear error for an unknown one."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose one of {sorted(POLICIES)}")
    return POLICIES[name]
