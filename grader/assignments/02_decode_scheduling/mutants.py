"""Broken variants of 02_decode_scheduling's reference answers: each must lose points on its own TODO and no other."""
from grader.contract import Mutant

MUTANTS = [
    Mutant("todo1", "forgets preemptible", "        preemptible=preemptible,\n", ""),
    Mutant("todo1", "drops the deadline", "        deadline_step=deadline_step,\n", ""),
    Mutant("todo1", "admits at enqueue", "        preemptible=preemptible,\n", "        preemptible=preemptible,\n        admitted=True,\n"),
    Mutant("todo1", "swaps the two lengths", "        prompt_len=prompt_len,\n        max_new_tokens=max_new_tokens,\n",
           "        prompt_len=max_new_tokens,\n        max_new_tokens=prompt_len,\n"),
    Mutant("todo2", "deadline slack under every policy", 'if self.policy == "deadline" and req.deadline_step is not None:',
           "if req.deadline_step is not None:"),
    Mutant("todo2", "slack ignores the remaining steps", " - self._remaining_steps(req)", ""),
    Mutant("todo2", "requests without a deadline go first", "deadline_slack = 1_000_000_000", "deadline_slack = -1_000_000_000"),
    Mutant("todo2", "hard-codes the visible deadline case", 'if self.policy == "deadline" and req.deadline_step is not None:\n'
           "        deadline_slack = req.deadline_step - self.clock - self._remaining_steps(req)",
           'if self.policy == "deadline" and req.deadline_step == 1:\n        deadline_slack = -1'),
    Mutant("todo3", "preempts non-preemptible requests", " and req.preemptible", ""),
    Mutant("todo3", "compares raw priority, not effective", "and self._effective_priority(req) < challenger_priority",
           "and req.priority < challenger.priority"),
    Mutant("todo3", "resets the victim's progress", "    victim.preemptions += 1\n",
           '    victim.preemptions += 1\n    victim.generated_len = 0\n    victim.phase = "prefill"\n'),
    Mutant("todo3", "prefers the highest id among victims", "-req.required_blocks, req.request_id)",
           "-req.required_blocks, -req.request_id)"),
    Mutant("todo3", "prefers the victim holding the fewest blocks", "-req.required_blocks, req.request_id)",
           "req.required_blocks, req.request_id)"),
    Mutant("todo3", "ranks the victims by raw priority", "victims.sort(key=lambda req: (self._effective_priority(req),",
           "victims.sort(key=lambda req: (req.priority,", passes_visible=True),  # the visible rankings run without aging
    Mutant("todo4", "advances the first candidate even if it was not admitted",
           "    for candidate in sorted(candidates, key=self._schedule_key):\n"
           "        preempted_request_id = self._ensure_capacity(candidate)\n"
           "        if candidate.admitted:\n            chosen = candidate\n            break\n",
           "    chosen = sorted(candidates, key=self._schedule_key)[0]\n"
           "    preempted_request_id = self._ensure_capacity(chosen)\n"),
    Mutant("todo4", "drops the preempted id", "        preempted_request_id = self._ensure_capacity(candidate)\n",
           "        self._ensure_capacity(candidate)\n"),
    Mutant("todo4", "serves the largest key first", "sorted(candidates, key=self._schedule_key)",
           "sorted(candidates, key=self._schedule_key, reverse=True)"),
    Mutant("todo4", "ignores the key (FIFO)", "sorted(candidates, key=self._schedule_key)", "list(candidates)"),
]

# Bugs no mutant models: each must cost points, and none may be diagnosed as a mutant (tests/grader/test_diagnose.py).
OUTSIDE = [
    Mutant("todo1", "drops the priority", "        priority=priority,\n", ""),
    Mutant("todo1", "inverts the cache hit", "cache_hit=cache_hit,", "cache_hit=not cache_hit,"),
    Mutant("todo2", "decode before prefill", 'phase_rank = 0 if req.phase == "prefill" else 1', 'phase_rank = 1 if req.phase == "prefill" else 0'),
    Mutant("todo3", "counts a preemption twice", "    victim.preemptions += 1\n", "    victim.preemptions += 2\n"),
    Mutant("todo4", "waiting counts double", "            req.wait_steps += 1\n", "            req.wait_steps += 2\n"),
]
