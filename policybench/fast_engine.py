"""An event-driven engine for notebook 03's step model: the same rules and records, without stepping every step.

The rules are the contract in `lab/engine/engine.py` (arrivals at step start, running first, head-of-line
admission, recompute preemption with vLLM V1's victims, integer-µs step time `a + b * tokens`). A step in
which every running request decodes one token, nobody is admitted, nobody needs a KV block the pool cannot
give and nobody finishes before the last of them is the same step repeated: only counters change. Such a
run of k steps is applied at once (`_jump`): clock += k * step time, every counter += k, free blocks -= the
block-boundary crossings. Every other step is simulated in full (`_step`). Results are per-request
records identical to `LLMEngine.run(...).records`; a differential test (tests/test_policybench.py) checks it.

Not the teaching engine's code: this module is excluded from the student bundle because it encodes the
answers of notebook 03's TODO 1-3.
"""
from __future__ import annotations

import gc
import heapq

from .decode_group import DecodeGroup
from .policies import DYNAMIC, POLICIES, policy_key

RECORD_KEYS = ("seq_id", "arrival_us", "num_prompt_tokens", "num_output_tokens", "priority", "first_scheduled_step",
               "first_token_step", "finish_step", "first_token_us", "finish_us", "num_preemptions", "num_recomputed_tokens")


class Req:
    """One request's input and progress (flat, slotted: the engine touches these millions of times)."""

    __slots__ = ("seq_id", "arrival_us", "num_prompt_tokens", "max_tokens", "priority", "deadline_us", "out", "comp",
                 "blocks", "preempt_stamp", "arrival_prefill_tokens", "num_preemptions", "num_recomputed_tokens",
                 "first_scheduled_step", "first_token_step", "first_token_us", "finish_step", "finish_us",
                 "in_group", "d0", "phase", "group_finish")  # the last four: decode_group.DecodeGroup's

    def __init__(self, spec: dict):
        get = spec.get
        seq_id, arrival, prompt, max_tokens = get("seq_id"), get("arrival_us"), get("num_prompt_tokens"), get("max_tokens")
        priority, deadline = get("priority", 0), get("deadline_us", 0)
        if not (type(seq_id) is type(arrival) is type(prompt) is type(max_tokens) is type(priority) is type(deadline) is int):
            bad = [name for name in ("seq_id", "arrival_us", "num_prompt_tokens", "max_tokens", "priority", "deadline_us")
                   if type(get(name, 0)) is not int or name not in spec and name not in ("priority", "deadline_us")]
            raise ValueError(f"request {spec!r}: {', '.join(bad)} must be an int")
        if prompt < 1 or max_tokens < 1 or arrival < 0:
            raise ValueError(f"request {seq_id}: needs num_prompt_tokens >= 1, max_tokens >= 1, arrival_us >= 0")
        self.seq_id, self.arrival_us, self.num_prompt_tokens, self.max_tokens = seq_id, arrival, prompt, max_tokens
        self.priority, self.deadline_us = priority, deadline
        self.out = self.comp = self.blocks = self.preempt_stamp = self.arrival_prefill_tokens = 0
        self.num_preemptions = self.num_recomputed_tokens = 0
        self.in_group = False
        self.first_scheduled_step = self.first_token_step = self.first_token_us = None
        self.finish_step = self.finish_us = None

    def record(self) -> dict:
        return {"seq_id": self.seq_id, "arrival_us": self.arrival_us, "num_prompt_tokens": self.num_prompt_tokens,
                "num_output_tokens": self.out, "priority": self.priority, "first_scheduled_step": self.first_scheduled_step,
                "first_token_step": self.first_token_step, "finish_step": self.finish_step,
                "first_token_us": self.first_token_us, "finish_us": self.finish_us,
                "num_preemptions": self.num_preemptions, "num_recomputed_tokens": self.num_recomputed_tokens}


class FastEngine:
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
        self.key = policy if callable(policy) else policy_key(policy)
        self.policy = getattr(policy, "__name__", "custom") if callable(policy) else policy
        self.dynamic = not callable(policy) and policy in DYNAMIC
        self.sorted_up_to, self.fixed_key = DYNAMIC.get(policy, (0, None))
        self.num_blocks, self.block_size = num_blocks, block_size
        self.max_num_seqs, self.budget = max_num_seqs, max_num_batched_tokens
        self.threshold, self.chunked = long_prefill_token_threshold, enable_chunked_prefill
        self.a, self.b = step_overhead_us, per_token_us

    # -- the waiting queue: a heap for fixed keys; for a dynamic key an ordered set, scanned at each look
    # while short, plus a lazily cleaned heap of the fixed key it falls back to when long --------------
    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    def _push(self, r: Req) -> None:
        if self.dynamic:
            self.waiting[r] = None
            heapq.heappush(self.fallback, (self.fixed_key(r, self), r.seq_id, r))
        else:
            heapq.heappush(self.waiting, (self.key(r, self), r.seq_id, r))

    def _peek(self) -> Req:
        if not self.dynamic:
            return self.waiting[0][2]
        if len(self.waiting) <= self.sorted_up_to:
            return min(self.waiting, key=lambda r: self.key(r, self))
        heap = self.fallback
        while heap[0][2] not in self.waiting or heap[0][0] != self.fixed_key(heap[0][2], self):
            heapq.heappop(heap)  # stale: admitted, or pushed again with a new key
        return heap[0][2]

    def _pop(self, r: Req) -> None:
        if self.dynamic:
            del self.waiting[r]
        else:
            heapq.heappop(self.waiting)

    def _n(self, r: Req, budget: int) -> int:
        n = r.num_prompt_tokens + r.out - r.comp
        if 0 < self.threshold < n:
            n = self.threshold
        return n if n < budget else budget

    def _admissible(self, r: Req, budget: int) -> bool:
        """Whether waiting request r would be admitted with this much budget left and the current free blocks."""
        if not self.chunked and r.num_prompt_tokens + r.out - r.comp > budget:
            return False
        return -(-self._n(r, budget) // self.block_size) <= self.free

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
        reqs = sorted((Req(r) for r in requests), key=lambda r: (r.arrival_us, r.seq_id))
        if len({r.seq_id for r in reqs}) != len(reqs):
            raise ValueError("duplicate seq_id")
        capacity = self.num_blocks * self.block_size
        for r in reqs:
            if r.num_prompt_tokens + r.max_tokens > capacity:
                raise ValueError(f"sequence {r.seq_id} may grow to {r.num_prompt_tokens + r.max_tokens} tokens; "
                                 f"the pool holds {self.num_blocks} blocks of {self.block_size}")
        self.waiting, self.fallback = ({}, []) if self.dynamic else ([], None)
        self.running, self.free = [], self.num_blocks
        self.clock = self.step = self.prefill_tokens = self.stamp = 0
        self.group = group = DecodeGroup(self.block_size)  # running requests that decode in lockstep
        nxt, total, budget = 0, len(reqs), self.budget
        while nxt < total or self.waiting or self.running:
            if not self.waiting and not self.running and reqs[nxt].arrival_us > self.clock:
                self.clock = reqs[nxt].arrival_us  # idle: jump to the next arrival
            while nxt < total and reqs[nxt].arrival_us <= self.clock:
                self._add(reqs[nxt])
                nxt += 1
            if self.running and group.size == len(self.running) <= budget:  # _jump's preconditions: most calls fail them
                jumped, nxt = self._jump(reqs, nxt)
                if jumped:
                    continue  # back to the top: arrivals and idle time before the next step
            self._step()
        return [r.record() for r in sorted(reqs, key=lambda r: r.seq_id)]

    def _add(self, r: Req) -> None:
        r.arrival_prefill_tokens = self.prefill_tokens
        self._push(r)

    # -- a run of identical decode steps ------------------------------------------------------------------
    def _jump(self, reqs: list, nxt: int) -> tuple[bool, int]:
        """Apply k >= 1 identical decode-only steps if the state allows; return (whether it did, next arrival index).

        The caller has checked that every running request is in the decode group, within the budget."""
        group, num_running = self.group, len(self.running)
        left_budget = self.budget - num_running
        blocked_any = num_running >= self.max_num_seqs or left_budget == 0  # no admission, whoever waits
        if self.waiting and not blocked_any and self._admissible(self._peek(), left_budget):
            return False, nxt
        k = group.steps_to_first_finish()  # the last step before the first finish
        if self.free < num_running * (k // self.block_size + 1):  # the free blocks may not cover k steps
            k = min(k, group.steps_within(self.free))
            if k <= 0:
                return False, nxt
        duration = self.a + self.b * num_running
        # Arrivals during the run: harmless ones join the queue now; one that could be admitted ends the run.
        total = len(reqs)
        while nxt < total and reqs[nxt].arrival_us <= self.clock + (k - 1) * duration:
            r = reqs[nxt]
            crosses = self.dynamic and len(self.waiting) == self.sorted_up_to  # the order switches to the fixed key
            if not blocked_any and (crosses or self._admissible(r, left_budget)):
                k = -(-(r.arrival_us - self.clock) // duration)
                break
            self._add(r)
            nxt += 1
        self.free -= group.crossings(k)
        self.clock += k * duration
        self.step += k
        done = group.advance(k)
        if done:
            self._finish(done, self.step - 1)
        return True, nxt

    def _finish(self, done: list, step: int) -> None:
        """Record the finish of these requests (not none) at `step` (now) and free their blocks."""
        for r in done:
            r.finish_step, r.finish_us = step, self.clock
            self.free += r.blocks
            r.blocks = 0
        self.running = [r for r in self.running if r.finish_us is None]

    # -- one full step --------------------------------------------------------------------------------------
    def _victim(self) -> Req:
        if self.key is POLICIES["priority"]:
            return max(self.running, key=lambda s: (s.priority, s.arrival_us, s.seq_id))
        return self.running[-1]

    def _preempt(self, v: Req, batch: dict) -> int:
        """Recompute preemption; returns the tokens given back to the budget."""
        self.running.remove(v)
        given_back = batch.pop(v, 0)
        self.free += v.blocks
        v.blocks = 0
        v.num_recomputed_tokens += v.comp
        v.comp = 0
        v.num_preemptions += 1
        self.stamp += 1
        v.preempt_stamp = self.stamp
        self._push(v)
        return given_back

    def _step(self) -> None:
        """One step: the running pass (the group in bulk when its outcome does not depend on order, else request
        by request), the waiting pass unless someone was preempted, then the results."""
        in_bulk = self._running_in_bulk() if self.group.size else None
        bulk = in_bulk is not None
        if bulk:
            (batch, budget), preempted = in_bulk, False
        else:
            for r in self.running:
                if r.in_group:
                    self.group.sync(r)
            batch, budget, preempted = self._running_one_by_one()
        if not preempted:
            budget = self._admit(batch, budget)
        if not batch and not preempted and not self.group.size:
            raise RuntimeError(f"step {self.step} scheduled nothing with {len(self.waiting)} waiting and "
                               f"{len(self.running)} running: the scheduler is stuck")
        self.clock += self.a + self.b * (self.budget - budget)
        self._apply(batch)
        done = self.group.advance(1)
        if done:
            self._finish(done, self.step)
        for r in (batch if bulk else self.running):
            if not r.in_group and r.finish_us is None and r.out and r.num_prompt_tokens + r.out - r.comp == 1:
                self.group.add(r)  # decodes from the next step on
        self.step += 1

    def _running_in_bulk(self) -> tuple[dict, int] | None:
        """The running pass when its outcome does not depend on order, or only on the order of the others.

        The group takes one token each (in bulk), the others their next chunk, in running order. That is the
        one-by-one result when the blocks suffice for all (nobody is preempted) and the budget runs out, if at
        all, only at others that no group member follows in the running order (the group is never cut).
        Returns (batch, budget left), or None when that does not hold."""
        bs, running = self.block_size, self.running
        budget, free = self.budget - self.group.size, self.free - self.group.crossings(1)
        if budget < 0:
            return None
        others = [r for r in running if not r.in_group]
        batch, blocks = {}, []
        for index, r in enumerate(others):
            n = self._n(r, budget)
            if n == budget:  # the budget runs out here: this one takes the rest (or none is left), later ones get nothing
                if running[len(running) - len(others) + index:] != others[index:]:
                    # Defensive: a request admitted behind a cut one was admitted when the budget was left over,
                    # and what runs ahead of the cut one only shrinks, so this is not expected to happen.
                    return None  # a group member comes later in the running order: it would go without
            if n == 0:
                break
            held = -(-(r.comp + n) // bs)
            free -= held - r.blocks
            blocks.append(held)
            batch[r] = n
            budget -= n
        if free < 0:
            return None
        for r, held in zip(batch, blocks):
            r.blocks = held
        self.free = free
        return batch, budget

    def _running_one_by_one(self) -> tuple[dict, int, bool]:
        """The running pass request by request, as vLLM's schedule() does it: budget cuts, preemption by recompute."""
        bs, budget, batch, preempted, threshold = self.block_size, self.budget, {}, False, self.threshold
        index, running = 0, self.running
        while index < len(running) and budget > 0:
            r = running[index]
            n = r.num_prompt_tokens + r.out - r.comp  # self._n, inlined: this loop is the hot path
            if 0 < threshold < n:
                n = threshold
            if n > budget:
                n = budget
            need = -(-(r.comp + n) // bs) - r.blocks
            gone = False
            while need > self.free:
                victim = self._victim()
                budget += self._preempt(victim, batch)
                preempted = True
                if victim is r:
                    gone = True
                    break
            if gone:
                break
            if need > 0:
                r.blocks += need
                self.free -= need
            batch[r] = n
            budget -= n
            index = running.index(r) + 1 if preempted else index + 1
        return batch, budget, preempted

    def _admit(self, batch: dict, budget: int) -> int:
        """The waiting pass: admit the head of the queue while it fits (head-of-line); returns the budget left."""
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            r = self._peek()
            if not self._admissible(r, budget):
                break
            n = self._n(r, budget)
            self._pop(r)
            need = -(-n // self.block_size)
            r.blocks = need
            self.free -= need
            self.running.append(r)
            batch[r] = n
            budget -= n
        return budget

    def _apply(self, batch: dict) -> None:
        """The step's results for the requests scheduled one by one (the group's come from its counter)."""
        step, clock, prefill, done = self.step, self.clock, 0, []
        for r, n in batch.items():  # the hot loop: locals, one read and one write per field
            if r.first_scheduled_step is None:
                r.first_scheduled_step = step
            out, comp = r.out, r.comp
            tokens = r.num_prompt_tokens + out
            if not (out and tokens - comp == 1):
                prefill += n  # not a decode token: counts for hrrn's token-based aging
            comp += n
            r.comp = comp
            if comp < tokens:
                continue
            out += 1
            r.out = out
            if r.first_token_step is None:
                r.first_token_step, r.first_token_us = step, clock
            if out >= r.max_tokens:
                done.append(r)
        self.prefill_tokens += prefill
        if done:
            self._finish(done, step)
