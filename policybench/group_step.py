"""The commonest full steps, taken without the general passes: only the decode group runs (nothing prefills).

Then the running pass is the group's, in bulk: every member decodes one token and those at a block boundary
take a block. Two cases, each returning False (having changed nothing) when it does not apply (an arrival
admitted whole while nobody waits is quiet_run.py's):

- `_group_step(arrival)`: the blocks suffice; the waiting pass admits whom it can (full_step.FullStep._admit);
- `_group_preempts()`: the blocks fall short and the victim is the last admitted (every policy but
  "priority"): vLLM's pass preempts from the tail until the rest fit, which leaves the shortest tail whose
  freed blocks cover the others' needs (the one-by-one pass finds that same tail); nobody is admitted.

Everything else is full_step.FullStep._step's. tests/policybench/test_policybench.py checks each case against the
general passes and all of them against the teaching engine.
"""
from __future__ import annotations

from .policies import POLICIES


class GroupStep:
    """The group-only steps of FastEngine (the state is the engine's)."""

    def _group_step(self, arrival=None) -> bool:
        """The group decodes in bulk if its blocks suffice, then the waiting pass (with `arrival` first: a request
        that arrived for this step while nobody waited, not queued; queued here unless admitted)."""
        group = self.group
        free = self.free - group.crossings(1)
        if free < 0 or group.size > self.budget:
            return False
        self.free, step = free, self.step
        admitted, budget = self._admit(self.budget - group.size, arrival)
        if not admitted and not group.size:
            self._stuck()
        self.prefill_tokens += self.budget - group.size - budget  # an admitted request computes prefill tokens only
        clock = self.clock = self.clock + self.a + self.b * (self.budget - budget)
        done = group.advance(1)
        if done:
            self._finish(done, step)
        self._sample(admitted, step, clock)
        self.step = step + 1
        return True

    def _group_preempts(self) -> bool:
        """The group's blocks fall short: preempt from the tail, in bulk (not under "priority", whose victims differ)."""
        group = self.group
        need, crossing = group.crossings(1), -group.steps % self.block_size
        if need <= self.free or self.key is POLICIES["priority"] or group.size > self.budget:
            return False
        while need > self.free:
            victim = self._victim()  # the last admitted
            need -= victim.phase == crossing  # it no longer needs this step's block
            self._preempt(victim, {}, {})
        self.free -= need
        self.clock += self.a + self.b * group.size
        done = group.advance(1)
        if done:
            self._finish(done, self.step)
        self.step += 1
        return True
