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
- finishes: a heap of the step count at which each member reaches `max_tokens`.

`sync` makes a member's fields exact and takes it out (before anything reads them: preemption, its
record). Used by `fast_engine.FastEngine`; `tests/test_policybench.py` checks the result against the
step-by-step teaching engine.
"""
from __future__ import annotations

import heapq


class DecodeGroup:
    """Lockstep decoders: per-member counters as of joining, plus phase counts and a finish heap."""

    def __init__(self, block_size: int):
        self.block_size = block_size
        self.steps = 0                       # lockstep steps applied to the group since the run began
        self.size = 0
        self.phase_count = [0] * (2 * block_size)  # members per phase, written twice: a window is one slice
        self.finishes: list = []             # (steps at which it finishes, seq_id, request); stale entries skipped

    def add(self, r) -> None:
        """Take in r, which decodes next step; its fields are exact now and it holds ceil(comp / block_size) blocks."""
        r.in_group, r.d0 = True, self.steps
        r.phase = (r.comp - self.steps) % self.block_size
        self.phase_count[r.phase] += 1
        self.phase_count[r.phase + self.block_size] += 1
        self.size += 1
        r.group_finish = self.steps + r.max_tokens - r.out
        heapq.heappush(self.finishes, (r.group_finish, r.seq_id, r))

    def sync(self, r) -> None:
        """Make r's counters and blocks exact and take it out of the group."""
        delta = self.steps - r.d0
        r.comp += delta
        r.out += delta
        r.blocks = -(-r.comp // self.block_size)
        r.in_group = False
        self.phase_count[r.phase] -= 1
        self.phase_count[r.phase + self.block_size] -= 1
        self.size -= 1

    def crossings(self, k: int) -> int:
        """KV blocks the members need for the next k steps."""
        bs = self.block_size
        cycles, part = divmod(k, bs)
        first = (-self.steps) % bs + bs  # the phase that crosses on the next step; later steps count down from it
        return cycles * self.size + sum(self.phase_count[first - part + 1:first + 1])

    def steps_within(self, free: int) -> int:
        """The most steps whose block crossings `free` blocks cover (the group must not be empty)."""
        cycles, spare = divmod(free, self.size)
        base, used = cycles * self.block_size, 0
        for j in range(self.block_size):
            used += self.phase_count[(-(self.steps + base + j)) % self.block_size]
            if used > spare:
                return base + j
        return base + self.block_size  # not reached: spare < size, and every member crosses once per cycle

    def steps_to_first_finish(self) -> int:
        """Steps until the first member samples its last token (>= 1)."""
        heap = self.finishes
        while not (heap[0][2].in_group and heap[0][2].group_finish == heap[0][0]):
            heapq.heappop(heap)  # stale: the member left (synced) since
        return heap[0][0] - self.steps

    def advance(self, k: int) -> list:
        """Apply k lockstep steps; return the members that finished on the last of them (synced, out of the group)."""
        self.steps += k
        done, heap = [], self.finishes
        while heap and heap[0][0] <= self.steps:
            _, _, r = heapq.heappop(heap)
            if r.in_group and r.group_finish <= self.steps:
                self.sync(r)
                done.append(r)
        return done
