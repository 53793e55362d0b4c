"""The running requests that decode in lockstep, advanced by one shared counter instead of one by one.

A request that decodes takes one token per step and samples one token per step, so after `k` more steps
its counters have grown by exactly `k`. The group keeps, per member, its counters as of the step it joined
(`d0`) and the shared count `steps` of lockstep steps since the run began; a member's true counters are
`comp + steps - d0` and `out + steps - d0`. What the engine needs from the whole group comes from two
summaries, so no step touches every member:

- KV blocks: a member needs a new block on the step where its computed tokens cross a multiple of
  `block_size`, so it crosses once every `block_size` steps at a fixed phase. `phase_count[p]` counts the
  members of phase `p` (stored twice over, so that the phases crossing in the next `k` steps are one slice);
  the blocks needed over those steps follow from it (`crossings`).
- finishes: a heap of the step count at which each member reaches `max_tokens`; `next_finish` is its first
  live entry (a member that leaves early leaves a stale entry behind, counted in `num_stale`).

`sync` makes a member's fields exact and takes it out (before anything reads them: a preemption, a step
it goes without); `advance` takes finishers out with their output and blocks exact (a finished request's
computed-token count is never read again). Used by `fast_engine.FastEngine`; `tests/policybench/test_policybench.py` checks the result against the
step-by-step teaching engine.
"""
from __future__ import annotations

from bisect import bisect_right
from heapq import heappop, heappush
from itertools import accumulate


NEVER = float("inf")


class DecodeGroup:
    """Lockstep decoders: per-member counters as of joining, plus phase counts and a finish heap."""

    def __init__(self, block_size: int):
        self.block_size = block_size
        self.steps = 0                       # the lockstep step counter (only differences of it matter)
        self.size = 0
        self.phase_count = [0] * (2 * block_size)  # members per phase, written twice: a window is one slice
        self.finishes: list = []             # (steps at which it finishes, seq_id, request); stale entries skipped
        self.next_finish = NEVER             # the earliest finish of a member (the heap's first live entry)
        self.num_stale = 0                   # heap entries of members that left before finishing

    def add(self, r) -> None:
        """Take in r, which decodes next step; its fields are exact now and it holds ceil(comp / block_size) blocks."""
        steps, bs, count = self.steps, self.block_size, self.phase_count
        r.in_group, r.d0 = True, steps
        phase = r.phase = (r.comp - steps) % bs
        count[phase] += 1
        count[phase + bs] += 1
        self.size += 1
        finish = r.group_finish = steps + r.max_tokens - r.out
        heappush(self.finishes, (finish, r.seq_id, r))
        if finish < self.next_finish:
            self.next_finish = finish

    def sync(self, r) -> None:
        """Make r's counters and blocks exact and take it out of the group (before its finish: its heap entry goes stale)."""
        delta = self.steps - r.d0
        comp = r.comp = r.comp + delta
        r.out += delta
        r.blocks = -(-comp // self.block_size)
        r.in_group = False
        self.phase_count[r.phase] -= 1
        self.phase_count[r.phase + self.block_size] -= 1
        self.size -= 1
        self.num_stale += 1
        if r.group_finish == self.next_finish:
            self._drop_stale()

    def _drop_stale(self) -> None:
        """Pop the finish entries of members that left; next_finish from the first live one."""
        heap = self.finishes
        while self.num_stale and heap and not (heap[0][2].in_group and heap[0][2].group_finish == heap[0][0]):
            heappop(heap)
            self.num_stale -= 1
        self.next_finish = heap[0][0] if heap else NEVER

    def crossings(self, k: int) -> int:
        """KV blocks the members need for the next k steps."""
        if k == 1:  # a full step: the members of the phase that crosses next
            return self.phase_count[-self.steps % self.block_size]
        bs = self.block_size
        first = -self.steps % bs + bs  # the phase that crosses on the next step; later steps count down from it
        if k < bs:
            return sum(self.phase_count[first - k + 1:first + 1])
        cycles, part = divmod(k, bs)
        return cycles * self.size + sum(self.phase_count[first - part + 1:first + 1])

    def steps_within(self, free: int) -> int:
        """The most steps whose block crossings `free` blocks cover (the group must not be empty)."""
        bs = self.block_size
        cycles, spare = divmod(free, self.size)  # whole cycles of bs steps (every member crosses once in each), then
        first = -self.steps % bs + bs            # the phases in the order they cross, as running totals
        return cycles * bs + bisect_right(list(accumulate(self.phase_count[first:first - bs:-1])), spare)

    def advance(self, k: int) -> list | tuple:
        """Apply k lockstep steps; return the members that finished on the last of them (synced, out of the group)."""
        steps = self.steps = self.steps + k
        if steps < self.next_finish:
            return ()  # most steps: nobody finishes
        done, heap, bs, count = [], self.finishes, self.block_size, self.phase_count
        while heap and heap[0][0] <= steps:
            r = heappop(heap)[2]
            if not (r.in_group and r.group_finish <= steps):
                self.num_stale -= 1
                continue
            # as sync, for a finisher (the hot path): it decoded every step since it joined, up to its last token
            r.out, r.in_group = r.max_tokens, False
            r.blocks = -(-(r.comp + steps - r.d0) // bs)
            count[r.phase] -= 1
            count[r.phase + bs] -= 1
            done.append(r)
        self.size -= len(done)
        if self.num_stale:
            self._drop_stale()
        else:
            self.next_finish = heap[0][0] if heap else NEVER
        return done
