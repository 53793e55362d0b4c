"""Broken variants of the reference answers: each must lose points on its own TODO and no other.

A mutant is (answer grade_id, name, text to find, replacement) applied to the reference answer.
Some are written to pass every visible check, so only the hidden rules can catch them.
"""
from __future__ import annotations

from dataclasses import dataclass

from .masters import reference_answers


@dataclass(frozen=True)
class Mutant:
    answer_id: str
    name: str
    find: str
    replace: str
    passes_visible: bool = False

    def apply(self, source: str) -> str:
        if self.find not in source:
            raise ValueError(f"mutant {self.name!r}: {self.find!r} is not in the reference {self.answer_id}")
        return source.replace(self.find, self.replace, 1)


DECODE_MUTANTS = [
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

BATCHING_MUTANTS = [
    Mutant("todo1", "flow forgets the + 1", 'last[job["id"]] + 1 - job["arrival"]', 'last[job["id"]] - job["arrival"]'),
    Mutant("todo1", "wait counts from tick 0", 'first[job["id"]] - job["arrival"]', 'first[job["id"]]'),
    Mutant("todo1", "start is the last serve", 'first.setdefault(job_id, row["tick"])', 'first[job_id] = row["tick"]'),
    Mutant("todo2", "only catches too few serves", "if served[job_id] != need:", "if served[job_id] < need:"),
    Mutant("todo2", "ignores ids that are not jobs",
           "            if job_id not in tokens:\n                raise ValueError(f\"tick {row['tick']} serves {job_id}, which is not a job\")\n"
           "            served[job_id] += 1\n",
           "            if job_id in tokens:\n                served[job_id] += 1\n"),
    Mutant("todo2", "forgets jobs never served", "served = dict.fromkeys(tokens, 0)", "served = {}"),
    Mutant("todo3", "trivial no-gain case (one slot)", "return jobs_from_tokens([4, 4, 1]), 2", "return jobs_from_tokens([4, 4, 1]), 1"),
    Mutant("todo3", "gain below 2x", "return jobs_from_tokens([8, 1, 1, 1] * 3), 4", "return jobs_from_tokens([2, 6, 3, 2, 4]), 2"),
    Mutant("todo3", "invalid workload (float tokens)", "return jobs_from_tokens([8, 1, 1, 1] * 3), 4",
           "return [{'id': 0, 'arrival': 0, 'tokens': 8.0}], 4"),
    Mutant("todo4", "static uses the mean, not the max", "sum(max(tokens[i:i + slots])",
           "sum(sum(tokens[i:i + slots]) // len(tokens[i:i + slots])"),
    Mutant("todo4", "continuous ignores the slot count", "free_at = [0] * min(slots, len(tokens))", "free_at = [0] * len(tokens)"),
    Mutant("todo4", "continuous assigns slots round-robin",
           "        start = heapq.heappop(free_at)\n        heapq.heappush(free_at, start + need)\n",
           "        start = free_at.pop(0)\n        free_at.append(start + need)\n"),
]

BATCH_SCHEDULING_MUTANTS = [
    Mutant("todo1", "admits waiting requests in a step that preempted", "    if batch.preempted_seq_ids:\n        return batch\n", ""),
    Mutant("todo1", "takes the blocks before making room",
           "        if not self._make_room(seq, num_new_tokens, batch):\n            break  # seq itself was preempted\n"
           "        self.block_manager.append(seq, num_new_tokens)\n",
           "        self.block_manager.append(seq, num_new_tokens)\n"
           "        if not self._make_room(seq, num_new_tokens, batch):\n            break  # seq itself was preempted\n",
           passes_visible=True),
    Mutant("todo1", "ignores max_num_seqs", " and len(self.running) < self.max_num_seqs:", ":"),
    Mutant("todo1", "waiting pass ignores the budget already spent",
           "        seq = self._peek_waiting()\n        num_new_tokens = self._num_new_tokens(seq, batch.token_budget)\n",
           "        seq = self._peek_waiting()\n        num_new_tokens = self._num_new_tokens(seq, self.max_num_batched_tokens)\n"),
    Mutant("todo1", "cuts prompts even with chunked prefill off",
           "        if not self.enable_chunked_prefill and seq.num_tokens - seq.num_computed_tokens > batch.token_budget:\n            break\n", ""),
    Mutant("todo2", "floor instead of ceiling division", "-(-(seq.num_computed_tokens + num_new_tokens) // self.block_size)",
           "(seq.num_computed_tokens + num_new_tokens) // self.block_size"),
    Mutant("todo2", "forgets the blocks already held", "max(0, blocks_in_all - len(seq.block_table))", "blocks_in_all"),
    Mutant("todo2", "deallocate keeps the block table", "    seq.block_table.clear()\n", ""),
    Mutant("todo2", "an exact fit is refused", "return self.num_blocks_needed(seq, num_new_tokens) <= len(self.free_block_ids)",
           "return self.num_blocks_needed(seq, num_new_tokens) < len(self.free_block_ids)", passes_visible=True),
    Mutant("todo3", "FCFS preempts the first admitted", "victim = self.running[-1]", "victim = self.running[0]"),
    Mutant("todo3", "priority ties go to the earliest arrival", "(s.priority, s.arrival_us, s.seq_id)", "(s.priority, -s.arrival_us, s.seq_id)"),
    Mutant("todo3", "full priority ties go to the lowest id", "(s.priority, s.arrival_us, s.seq_id)", "(s.priority, s.arrival_us, -s.seq_id)"),
    Mutant("todo3", "a key-function policy gets priority's victim", 'if self.policy == "priority":', 'if self.policy != "fcfs":'),
    Mutant("todo3", "keeps the KV: no recompute", "    seq.num_computed_tokens = 0\n", ""),
    Mutant("todo3", "victim goes to the back of the queue", "self._prepend_waiting(seq)", "self.waiting.append(seq)"),
    Mutant("todo3", "FCFS spares the request that asks for room while others run", "victim = self.running[-1]",
           "victim = self.running[-2] if self.running[-1] is seq and len(self.running) > 1 else self.running[-1]",
           passes_visible=True),
    # Passes the visible checks too, but what differs (the batch's decode count) is not in a snippet's state line.
    Mutant("todo3", "a scheduled victim leaves the batch after its counters are reset",
           "    if seq.seq_id in batch.num_scheduled_tokens:\n        batch.remove(seq)\n    self.block_manager.deallocate(seq)\n"
           "    seq.num_recomputed_tokens += seq.num_computed_tokens\n    seq.num_computed_tokens = 0\n",
           "    self.block_manager.deallocate(seq)\n    seq.num_recomputed_tokens += seq.num_computed_tokens\n"
           "    seq.num_computed_tokens = 0\n    if seq.seq_id in batch.num_scheduled_tokens:\n        batch.remove(seq)\n"),
    Mutant("todo3", "a scheduled victim keeps its tokens in the batch",
           "    if seq.seq_id in batch.num_scheduled_tokens:\n        batch.remove(seq)\n", ""),
    Mutant("todo4", "TPOT divides by the tokens, not the gaps", 'num_gaps = rec["num_output_tokens"] - 1', 'num_gaps = rec["num_output_tokens"]'),
    Mutant("todo4", "nearest-rank percentile", "return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)", "return ordered[round(rank)]"),
    Mutant("todo4", "goodput checks TTFT only", ' and (row["tpot_ms"] is None or row["tpot_ms"] <= tpot_slo_ms)', ""),
    Mutant("todo4", "an SLO met exactly counts as missed", 'row["ttft_ms"] <= ttft_slo_ms', 'row["ttft_ms"] < ttft_slo_ms'),
    Mutant("todo4", "rounds the interpolation weight to 2 decimals", "* (rank - low)", "* round(rank - low, 2)",
           passes_visible=True),
    Mutant("todo4", "throughput counts requests, not tokens", 'sum(r["num_output_tokens"] for r in records) / span_s', "len(records) / span_s"),
    # Small float bugs: they move a value by far less than a percent, and far more than the tolerance (grader/compare.py).
    Mutant("todo4", "the span is one microsecond too long", 'min(r["arrival_us"] for r in records)) / 1e6',
           'min(r["arrival_us"] for r in records) + 1) / 1e6'),
    Mutant("todo4", "percentile rank off by one", "rank = (len(ordered) - 1) * q / 100", "rank = min(len(ordered) * q / 100, len(ordered) - 1)"),
    Mutant("todo5", "FCFS order", "request.priority * seconds_per_level * 1_000_000 + ", ""),
    Mutant("todo5", "ages too slowly: fixed priority", "seconds_per_level = 4", "seconds_per_level = 60"),
    Mutant("todo5", "aging pointed the wrong way", "request.priority * seconds_per_level", "-request.priority * seconds_per_level"),
    Mutant("todo5", "reads the output length (an oracle)", "+ request.arrival_us,)", "+ request.arrival_us, request.max_tokens)"),
    Mutant("todo5", "tuned to the edge of the window", "seconds_per_level = 4", "seconds_per_level = 2.5", passes_visible=True),
]

MUTANTS = {"02_decode_scheduling": DECODE_MUTANTS, "01_continuous_batching": BATCHING_MUTANTS,
           "03_batch_scheduling": BATCH_SCHEDULING_MUTANTS}


def mutated_answers(assignment: str, mutant: Mutant) -> dict[str, str]:
    """The reference answers with one mutant applied."""
    answers = reference_answers(assignment)
    answers[mutant.answer_id] = mutant.apply(answers[mutant.answer_id])
    return answers
