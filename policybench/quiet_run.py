"""The quiet regime in one loop: nobody waits, nothing prefills, and the KV blocks are plenty.

Then only two events change anything: an arrival, admitted whole at the first step after it, and a finish.
Between them every step is the same decode step. `_quiet_run` goes from event to event with the engine's
and the group's counters in local variables: the jumps, the admission step and the finishes are the ones
fast_engine.py, group_step.py (`_group_step`) and decode_group.py (`add`, `advance`, `crossings`) do,
written out here because this loop carries most requests of a run below saturation. It returns, at a step
boundary and with every counter written back, as soon as anything else would happen: two arrivals for one
step, an arrival that is not admitted whole, blocks that may run short, the end of the trace. The general
loop takes it from there. tests/policybench/test_policybench.py checks the records with and without this loop.
"""
from __future__ import annotations

from heapq import heappop, heappush

from .decode_group import NEVER


class QuietRun:
    """The quiet-regime loop of FastEngine (the state is the engine's and its group's)."""

    def _quiet_run(self, reqs: list, arrival_us: list, nxt: int) -> int:
        """Run while nobody waits and nothing prefills; return the index of the next arrival not yet taken."""
        group, running, total = self.group, self.running, len(reqs)
        finishes, count, bs = group.finishes, group.phase_count, self.block_size
        a, b, budget, threshold, max_num_seqs = self.a, self.b, self.budget, self.threshold, self.max_num_seqs
        clock, free, step, prefill = self.clock, self.free, self.step, self.prefill_tokens
        steps, size, next_finish = group.steps, group.size, group.next_finish
        while True:
            arrival, r = arrival_us[nxt], None
            if size:
                k = next_finish - steps  # the run's last step is the first finish
                if free < size * (k // bs + 1):
                    break  # the blocks may run short on the way
                duration = a + b * size
                if arrival <= clock:
                    j = 0  # it arrived during the last step: its step is next
                elif arrival <= clock + (k - 1) * duration:
                    j = -(-(arrival - clock) // duration)  # to the first step after it
                else:
                    j = k
                if j:  # the jump (to the arrival's step, or to the finish)
                    first = -steps % bs + bs  # crossings(j): the phases that cross, counting down from `first`
                    free -= j // bs * size + sum(count[first - j % bs + 1:first + 1])
                    steps, step, clock = steps + j, step + j, clock + j * duration
                if j < k:
                    r = reqs[nxt]
            elif nxt == total:
                break
            else:
                clock, r = max(clock, arrival), reqs[nxt]  # idle until it arrives
            if r is not None:  # r's step: admitted whole if alone and it fits, as the group decodes
                n = r.num_prompt_tokens
                need, cross = -(-n // bs), count[-steps % bs]
                if (arrival_us[nxt + 1] <= clock or n > budget - size or 0 < threshold < n or need > free - cross
                        or size >= max_num_seqs):
                    break
                r.arrival_prefill_tokens, prefill = prefill, prefill + n
                free -= cross + need
                clock += a + b * (size + n)
                r.blocks, r.comp, r.out = need, n, 1
                r.first_scheduled_step = r.first_token_step = step
                r.first_token_us = clock
                running[r] = None
                nxt, steps, step = nxt + 1, steps + 1, step + 1
            if steps >= next_finish:  # finishers leave, on step `step - 1`, at `clock`
                while finishes and finishes[0][0] <= steps:
                    done = heappop(finishes)[2]
                    if not (done.in_group and done.group_finish <= steps):
                        group.num_stale -= 1
                        continue
                    done.out, done.in_group = done.max_tokens, False
                    free += -(-(done.comp + steps - done.d0) // bs)
                    count[done.phase] -= 1
                    count[done.phase + bs] -= 1
                    size -= 1
                    done.finish_step, done.finish_us = step - 1, clock
                    del running[done]
                if group.num_stale:
                    group.steps, group.size = steps, size
                    group._drop_stale()
                next_finish = finishes[0][0] if finishes else NEVER
            if r is not None:  # r joins the group, or finishes at once
                if r.max_tokens == 1:
                    r.finish_step, r.finish_us = step - 1, clock
                    free += r.blocks
                    del running[r]
                    continue
                r.in_group, r.d0, phase = True, steps, (n - steps) % bs
                r.phase = phase
                count[phase] += 1
                count[phase + bs] += 1
                size += 1
                r.group_finish = finish = steps + r.max_tokens - 1
                heappush(finishes, (finish, r.seq_id, r))
                if finish < next_finish:
                    next_finish = finish
        self.clock, self.free, self.step, self.prefill_tokens = clock, free, step, prefill
        group.steps, group.size, group.next_finish = steps, size, next_finish
        return nxt
