"""One full step of the fast engine: the running pass, the waiting pass and the results, as the teaching engine does them.

`FastEngine` (fast_engine.py) jumps over runs of identical decode steps; every other step comes here. The
running requests are two sets, both in running (admission) order: `group`, those that decode in lockstep
(decode_group.py), and `others`, those still prefilling. When only the group runs, group_step.py takes the
step in a few lines. Otherwise the running pass takes the group in bulk when the outcome cannot depend on
order (`_running_in_bulk`), or goes request by request as vLLM's `schedule()` does (`_running_one_by_one`),
leaving group members in the group unless they are preempted or go without a token.
"""
from __future__ import annotations

from .group_step import GroupStep
from .policies import POLICIES


class FullStep(GroupStep):
    """The full-step half of FastEngine (the state is the engine's: running, others, group, free, the queue, the clock)."""

    def _step(self) -> None:
        """One step: the running pass, the waiting pass unless someone was preempted, then the results."""
        if not self.others and (self._group_step() or self._group_preempts()):
            return  # only the group ran (group_step.py)
        group, step = self.group, self.step
        in_bulk = self._running_in_bulk() if self.others else None
        if in_bulk is None:
            batch, budget, preempted, left_out = self._running_one_by_one()
        else:
            (batch, budget), preempted, left_out = in_bulk, False, ()
        admitted = ()
        if not preempted and self.waiting:
            before = budget
            admitted, budget = self._admit(budget)
            self.prefill_tokens += before - budget  # after the pass: hrrn's keys must not see them during it
        if not batch and not admitted and not preempted and not group.size:
            self._stuck()
        clock = self.clock = self.clock + self.a + self.b * (self.budget - budget)
        joining = self._apply(batch) if batch else ()
        if group.size:
            done = group.advance(1)
            if done:
                self._finish(done, step)
        for r in joining:
            group.add(r)  # decodes from the next step on
        for r in left_out:
            group.add(r)  # went without a token this step; back in lockstep from the next
        self._sample(admitted, step, clock)
        self.step = step + 1

    def _stuck(self):
        raise RuntimeError(f"step {self.step} scheduled nothing with {len(self.waiting)} waiting and "
                           f"{len(self.running)} running: the scheduler is stuck")

    def _running_in_bulk(self) -> tuple[dict, int] | None:
        """The running pass when its outcome does not depend on order, or only on the order of the others.

        The group takes one token each (in bulk), the others their next chunk, in running order. That is the
        one-by-one result when the blocks suffice for all (nobody is preempted) and the budget runs out, if at
        all, only at others that no group member follows in the running order (the group is never cut).
        Called with others running. Returns (batch of the others, budget left), or None when that does not hold."""
        group, batch = self.group, {}
        budget = self.budget - group.size
        free = self.free - group.crossings(1) if group.size else self.free
        if budget < 0 or free < 0:
            return None
        bs, blocks = self.block_size, []
        for r in self.others:
            n = self._n(r, budget)
            if n == budget and group.size and self._member_after(r):
                return None  # the budget runs out at r: a group member behind it would go without
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

    def _member_after(self, r) -> bool:
        """Whether a group member follows r in the running order."""
        for s in reversed(self.running):
            if s is r:
                return False
            if s.in_group:
                return True
        return False

    def _running_one_by_one(self) -> tuple[dict, int, bool, list]:
        """The running pass request by request, as vLLM's schedule() does it: budget cuts, preemption by recompute.

        A group member takes one token and, when its computed tokens reach a block boundary, one block; it stays
        in the group. Returns (batch of the others, budget left, whether anyone was preempted, the members that
        went without a token, taken out of the group)."""
        bs, budget, batch, preempted, threshold = self.block_size, self.budget, {}, False, self.threshold
        group, charged = self.group, {}  # charged: group members served this step -> blocks they took (0 or 1)
        crossing = (-group.steps) % bs  # the phase whose members reach a block boundary this step
        order, index = list(self.running), 0
        while index < len(order) and budget > 0:
            r = order[index]
            if r.in_group:
                n, need = 1, (1 if r.phase == crossing else 0)
            else:
                n = r.num_prompt_tokens + r.out - r.comp  # self._n, inlined: this loop is the hot path
                if 0 < threshold < n:
                    n = threshold
                if n > budget:
                    n = budget
                need = -(-(r.comp + n) // bs) - r.blocks
            gone = False
            while need > self.free:
                victim = self._victim()
                budget += self._preempt(victim, batch, charged)
                preempted = True
                where = len(order) - 1 if order[-1] is victim else order.index(victim)  # mostly the last
                del order[where]
                if victim is r:
                    gone = True
                    break
                if where < index:
                    index -= 1  # under "priority" the victim may have run ahead of r
            if gone:
                break
            self.free -= need
            if r.in_group:
                charged[r] = need
            else:
                r.blocks += need
                batch[r] = n
            budget -= n
            index += 1
        left_out = [r for r in order[index:] if r.in_group]  # the pass stopped before them: budget gone, or r preempted
        for r in left_out:
            group.sync(r)
        return batch, budget, preempted, left_out

    def _victim(self):
        """vLLM V1's victim: the largest (priority, arrival) under "priority", else the last admitted."""
        if self.key is POLICIES["priority"]:
            return max(self.running, key=lambda s: (s.priority, s.arrival_us, s.seq_id))
        return next(reversed(self.running))

    def _preempt(self, v, batch: dict, charged: dict) -> int:
        """Recompute preemption; returns the tokens given back to the budget."""
        given_back = batch.pop(v, 0)
        if v.in_group:
            if v in charged:
                self.free += charged.pop(v)
                given_back = 1
            self.group.sync(v)
        else:
            del self.others[v]
        del self.running[v]
        self.free += v.blocks
        v.blocks = 0
        v.num_recomputed_tokens += v.comp
        v.comp = 0
        v.num_preemptions += 1
        self.stamp += 1
        v.preempt_stamp = self.stamp
        self._push(v)
        return given_back

    def _admit(self, budget: int, arrival=None) -> tuple[list, int]:
        """The waiting pass: admit the head of the queue (`arrival`, unqueued, before it) while it fits
        (head-of-line). Returns the admitted, their chunk computed, and the budget left."""
        running, waiting, admission, admitted, step = self.running, self.waiting, self._admission, [], self.step
        while budget > 0 and len(running) < self.max_num_seqs and (arrival is not None or waiting):
            r = self._peek() if arrival is None else arrival
            n = admission(r, budget)
            if not n:
                break
            if arrival is None:
                self._pop(r)
            arrival = None
            r.blocks = need = -(-n // self.block_size)
            self.free -= need
            running[r] = None
            if r.first_scheduled_step is None:
                r.first_scheduled_step = step
            r.comp += n
            admitted.append(r)
            budget -= n
        if arrival is not None:
            self._push(arrival)
        return admitted, budget

    def _sample(self, admitted: list, step: int, clock: int) -> None:
        """The results for this step's admitted requests, after the group advanced: a whole chunk samples a token
        (and the request finishes or joins the group), a partial one leaves it prefilling among the others."""
        group, others = self.group, self.others
        for r in admitted:
            if r.comp < r.num_prompt_tokens + r.out:
                others[r] = None  # admitted last: the others stay in running order
                continue
            r.out += 1
            if r.first_token_step is None:
                r.first_token_step, r.first_token_us = step, clock
            if r.out >= r.max_tokens:
                self._finish((r,), step)
            else:
                group.add(r)  # decodes from the next step on

    def _apply(self, batch: dict) -> list:
        """The step's results for the running others (the group's come from its counter; the admitted's from _sample);
        returns those that now decode."""
        step, clock, prefill, done, joining = self.step, self.clock, 0, [], []
        for r, n in batch.items():  # the hot loop: locals, one read and one write per field (admission set the first step)
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
            (done if out >= r.max_tokens else joining).append(r)
        self.prefill_tokens += prefill
        others = self.others
        for r in joining:
            del others[r]
        if done:
            for r in done:
                del others[r]
            self._finish(done, step)
        return joining

    def _finish(self, done: list, step: int) -> None:
        """Record the finish of these requests (out of the group and the others) at `step`, now; free their blocks."""
        clock, running, free = self.clock, self.running, self.free
        for r in done:
            r.finish_step, r.finish_us = step, clock
            free += r.blocks
            del running[r]
        self.free = free
