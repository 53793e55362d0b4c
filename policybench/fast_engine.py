"""An event-driven engine for notebook 03's step model: the same rules and records, without stepping every step.

The rules are the contract in `lab/engine/engine.py` (arrivals at step start, running first, head-of-line
admission, recompute preemption with vLLM V1's victims, integer-µs step time `a + b * tokens`). A step in
which every running request decodes one token, nobody is admitted, nobody needs a KV block the pool cannot
give and nobody finishes before the last of them is the same step repeated: only counters change. Such a
run of k steps is applied at once (a jump, in `_simulate` or quiet_run.py): clock += k * step time, every
counter += k, free blocks -= the block-boundary crossings. While nobody waits and nothing prefills,
quiet_run.py takes the run event by event (most steps below saturation). Every other step is simulated in
full: by group_step.py when only the decode group runs, else by full_step.py. Results are per-request records identical to
`LLMEngine.run(...).records`; differential tests (tests/policybench/test_policybench.py) check it.

The parts, one role per file: request.py (a request, its record), waiting_queue.py (the queue per policy),
decode_group.py (the decoders in lockstep), quiet_run.py (the decode-only loop), group_step.py and
full_step.py (full steps), this file (the general loop and its jumps).

Not the teaching engine's code: this package is excluded from the student bundle because it encodes the
answers of notebook 03's TODO 1-3.
"""
from __future__ import annotations

import gc
from operator import attrgetter

from .decode_group import NEVER, DecodeGroup
from .full_step import FullStep
from .quiet_run import QuietRun
from .policies import DYNAMIC, POLICIES, policy_key
from .request import Req
from .waiting_queue import DynamicQueue, FCFSQueue, HeapQueue


class FastEngine(QuietRun, FullStep):
    """Runs a request list under one configuration and policy; `run()` returns the per-request records."""

    def __init__(self, num_blocks: int = 1024, block_size: int = 16, max_num_seqs: int = 256,
                 max_num_batched_tokens: int = 2048, long_prefill_token_threshold: int = 0,
                 enable_chunked_prefill: bool = True, policy="fcfs",
                 step_overhead_us: int = 8_000, per_token_us: int = 100):
        for name, value, low in (("num_blocks", num_blocks, 1), ("block_size", block_size, 1), ("max_num_seqs", max_num_seqs, 1),
                                 ("max_num_batched_tokens", max_num_batched_tokens, 1),
                                 ("long_prefill_token_threshold", long_prefill_token_threshold, 0),
                                 ("step_overhead_us", step_overhead_us, 0), ("per_token_us", per_token_us, 0)):
            if type(value) is not int or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if long_prefill_token_threshold and not enable_chunked_prefill:
            raise ValueError("long_prefill_token_threshold needs enable_chunked_prefill=True")
        # A policy is a name from POLICIES, or your own key function key(req, sched) -> tuple that must not
        # change while a request waits (read only the request's fields); its victims are the last admitted.
        # (A function of POLICIES passed as itself behaves as its name: its queue, its victims.)
        self.key = policy if callable(policy) else policy_key(policy)
        self.policy = getattr(policy, "__name__", "custom") if callable(policy) else policy
        self.dynamic = not callable(policy) and policy in DYNAMIC
        self.sorted_up_to, self.fixed_key = DYNAMIC.get(policy, (0, None))
        self.num_blocks, self.block_size = num_blocks, block_size
        self.max_num_seqs, self.budget = max_num_seqs, max_num_batched_tokens
        self.threshold, self.chunked = long_prefill_token_threshold, enable_chunked_prefill
        self.a, self.b = step_overhead_us, per_token_us

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    def _new_queue(self):
        """The waiting queue for this policy (waiting_queue.py); the engine calls it through _push, _peek, _pop."""
        if self.dynamic:
            queue = DynamicQueue(self, self.key, self.sorted_up_to, self.fixed_key)
        else:
            queue = (FCFSQueue if self.key is POLICIES["fcfs"] else HeapQueue)(self, self.key)
        self._push, self._peek, self._pop = queue.push, queue.peek, queue.pop
        return queue

    def _n(self, r: Req, budget: int) -> int:
        """The tokens r would compute this step with this much budget left (its next chunk)."""
        n = r.num_prompt_tokens + r.out - r.comp
        if 0 < self.threshold < n:
            n = self.threshold
        return n if n < budget else budget

    def _admission(self, r: Req, budget: int) -> int:
        """The chunk waiting request r would be admitted with (budget > 0 left, the current free blocks), or 0."""
        n = r.num_prompt_tokens + r.out - r.comp
        if n > budget and not self.chunked:
            return 0
        if 0 < self.threshold < n:
            n = self.threshold
        if n > budget:
            n = budget
        return n if -(-n // self.block_size) <= self.free else 0

    # -- the run ------------------------------------------------------------------------------------------
    def run(self, requests) -> list[dict]:
        """Simulate until every request finishes; records sorted by seq_id."""
        # The run allocates no reference cycles, so Python's cyclic GC would only rescan the growing heap of
        # requests and records again and again (a cost that grows faster than the trace); pause it.
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._run(requests)
        finally:
            if paused:
                gc.enable()

    def _run(self, requests) -> list[dict]:
        reqs = list(map(Req, requests))
        reqs.sort(key=attrgetter("arrival_us", "seq_id"))
        if len({r.seq_id for r in reqs}) != len(reqs):
            raise ValueError("duplicate seq_id")
        capacity = self.num_blocks * self.block_size
        for r in reqs:
            if r.num_prompt_tokens + r.max_tokens > capacity:
                raise ValueError(f"sequence {r.seq_id} may grow to {r.num_prompt_tokens + r.max_tokens} tokens; "
                                 f"the pool holds {self.num_blocks} blocks of {self.block_size}")
        self.waiting = self._new_queue()
        self.running, self.others = {}, {}  # in running order; others: the running requests outside the group
        self.free = self.num_blocks
        self.clock = self.step = self.prefill_tokens = self.stamp = 0
        self.group = DecodeGroup(self.block_size)  # running requests that decode in lockstep
        self._simulate(reqs)
        return list(map(Req.record, sorted(reqs, key=attrgetter("seq_id"))))

    def _add(self, r: Req) -> None:
        r.arrival_prefill_tokens = self.prefill_tokens
        self._push(r)

    def _simulate(self, reqs: list) -> None:
        """The loop: arrivals, then a run of identical decode steps at once (a jump) when the state allows, else a full step."""
        group, total, bs, waiting, budget = self.group, len(reqs), self.block_size, self.waiting, self.budget
        running, others, admission, peek, a, b = self.running, self.others, self._admission, self._peek, self.a, self.b
        arrival_us = [r.arrival_us for r in reqs] + [NEVER, NEVER]  # the sentinels end every scan for arrivals
        nxt, full_step_next = 0, False  # locals: this loop turns once per event
        while True:
            if not waiting and not others:
                nxt = self._quiet_run(reqs, arrival_us, nxt)  # most of a run below saturation (quiet_run.py)
                full_step_next = False  # a hint only (a full step is always exact): the loop above may have used it up
            clock = self.clock
            if arrival_us[nxt] <= clock:
                if not waiting and not others and arrival_us[nxt + 1] > clock:
                    # One arrival for this step and nobody waiting: it enters the queue only if not admitted.
                    r = reqs[nxt]
                    nxt, r.arrival_prefill_tokens, full_step_next = nxt + 1, self.prefill_tokens, False
                    if not self._group_step(r):
                        self._push(r)
                        self._step()
                    continue
                while arrival_us[nxt] <= clock:
                    self._add(reqs[nxt])
                    nxt += 1
            if not waiting and not running:
                if nxt == total:
                    return
                self.clock = arrival_us[nxt]  # idle: jump to the next arrival
                continue
            # Identical decode steps need: everyone running decodes (in the group) within the budget, nobody can be
            # admitted, the free blocks cover the block crossings; they last until the first finish.
            num_running = group.size
            left_budget = budget - num_running
            if others or not num_running or left_budget < 0:
                self._step()
                continue
            blocked_any = num_running >= self.max_num_seqs or left_budget == 0  # no admission, whoever waits
            if full_step_next or waiting and not blocked_any and admission(peek(), left_budget):
                full_step_next = False
                self._step()
                continue
            k = group.next_finish - group.steps  # the last step before the first finish
            if self.free < num_running * (k // bs + 1):  # the free blocks may not cover k steps
                k = min(k, group.steps_within(self.free))
                if k <= 0:
                    self._step()
                    continue
            duration = a + b * num_running
            # Arrivals during the run: harmless ones join the queue now; one that could be admitted ends the run (when
            # nobody waits, any one does: it is almost surely admitted, and if not, the full step is still right).
            last_start = clock + (k - 1) * duration
            while arrival_us[nxt] <= last_start:
                r = reqs[nxt]
                crosses = self.dynamic and len(waiting) == self.sorted_up_to  # the order switches to the fixed key
                if not blocked_any and (not waiting or crosses or admission(r, left_budget)):
                    k, full_step_next = -(-(r.arrival_us - clock) // duration), True
                    break
                self._add(r)
                nxt += 1
            # The jump: k identical decode steps at once; members that finish do so on the last.
            self.free -= group.crossings(k)
            self.clock = clock + k * duration
            self.step += k
            done = group.advance(k)
            if done:
                self._finish(done, self.step - 1)
