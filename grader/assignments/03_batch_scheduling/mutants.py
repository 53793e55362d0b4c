"""Broken variants of 03_batch_scheduling's reference answers: each must lose points on its own TODO and no other."""
from grader.contract import Mutant

MUTANTS = [
    Mutant("todo1", "admits waiting requests in a step that preempted", "    if batch.preempted_seq_ids:\n        return batch\n", ""),
    Mutant("todo1", "takes the blocks before making room",
           "        if not self._make_room(seq, num_new_tokens, batch):\n            break  # seq itself was preempted\n"
           "        self.block_manager.append(seq, num_new_tokens)\n",
           "        self.block_manager.append(seq, num_new_tokens)\n"
           "        if not self._make_room(seq, num_new_tokens, batch):\n            break  # seq itself was preempted\n",
           passes_visible=True),
    Mutant("todo1", "steps on by one index after making room",
           "        index = self.running.index(seq) + 1  # victims ahead of seq may have left the list\n", "        index += 1\n"),
    Mutant("todo1", "ignores max_num_seqs", " and len(self.running) < self.max_num_seqs:", ":"),
    Mutant("todo1", "waiting pass ignores the budget already spent",
           "        seq = self._peek_waiting()\n        num_new_tokens = self._num_new_tokens(seq, batch.token_budget)\n",
           "        seq = self._peek_waiting()\n        num_new_tokens = self._num_new_tokens(seq, self.max_num_batched_tokens)\n"),
    Mutant("todo1", "cuts prompts even with chunked prefill off",
           "        if not self.enable_chunked_prefill and seq.num_tokens - seq.num_computed_tokens > batch.token_budget:\n            break\n", ""),
    Mutant("todo1", "chunking off refuses a prompt that exactly fits the budget left",
           "seq.num_tokens - seq.num_computed_tokens > batch.token_budget:",
           "seq.num_tokens - seq.num_computed_tokens >= batch.token_budget:", passes_visible=True),
    Mutant("todo2", "floor instead of ceiling division", "-(-(seq.num_computed_tokens + num_new_tokens) // self.block_size)",
           "(seq.num_computed_tokens + num_new_tokens) // self.block_size"),
    Mutant("todo2", "forgets the blocks already held", "    missing = blocks_in_all - len(seq.block_table)\n", "    missing = blocks_in_all\n"),
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
    # The visible check of a scheduled victim's budget catches it: the batch keeps the victim's decode token.
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

# Bugs no mutant models: each must cost points, and none may be diagnosed as a mutant (tests/grader/test_diagnose.py).
OUTSIDE = [
    Mutant("todo1", "admits one past max_num_seqs", "len(self.running) < self.max_num_seqs", "len(self.running) <= self.max_num_seqs"),
    Mutant("todo2", "one block too many", "-(-(seq.num_computed_tokens + num_new_tokens) // self.block_size)",
           "-(-(seq.num_computed_tokens + num_new_tokens + 1) // self.block_size)"),
    Mutant("todo3", "forgets to count the preemption", "    seq.num_preemptions += 1\n", ""),
    Mutant("todo4", "E2E from the first token", 'e2e_ms = (rec["finish_us"] - rec["arrival_us"]) / 1000',
           'e2e_ms = (rec["finish_us"] - rec["first_token_us"]) / 1000'),
    Mutant("todo4", "attainment over one request too many", "len(met) / len(records)", "len(met) / (len(records) + 1)"),
    Mutant("todo5", "newest first", "return (request.priority * seconds_per_level * 1_000_000 + request.arrival_us,)",
           "return (-request.arrival_us,)"),
]
