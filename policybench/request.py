"""One request in the fast engine: its input, its progress, and its record (the teaching engine's keys)."""
from __future__ import annotations

from operator import itemgetter

_INPUTS = itemgetter("seq_id", "arrival_us", "num_prompt_tokens", "max_tokens")
_INT_FIELDS = ("seq_id", "arrival_us", "num_prompt_tokens", "max_tokens", "priority", "deadline_us")


class Req:
    """One request's input and progress (flat, slotted: the engine touches these millions of times)."""

    __slots__ = ("seq_id", "arrival_us", "num_prompt_tokens", "max_tokens", "priority", "deadline_us", "out", "comp",
                 "blocks", "preempt_stamp", "arrival_prefill_tokens", "num_preemptions", "num_recomputed_tokens",
                 "first_scheduled_step", "first_token_step", "first_token_us", "finish_step", "finish_us",
                 "in_group", "d0", "phase", "group_finish")  # the last four: decode_group.DecodeGroup's

    def __init__(self, spec: dict):
        try:
            seq_id, arrival, prompt, max_tokens = _INPUTS(spec)
        except KeyError as missing:
            raise ValueError(f"request {spec!r}: needs {missing}") from None
        priority = spec["priority"] if "priority" in spec else 0
        deadline = spec["deadline_us"] if "deadline_us" in spec else 0
        if not (seq_id.__class__ is arrival.__class__ is prompt.__class__ is max_tokens.__class__ is priority.__class__
                is deadline.__class__ is int):  # exactly int, as the teaching engine asks (no bool, no float)
            bad = [name for name in _INT_FIELDS if type(spec.get(name, 0)) is not int]
            raise ValueError(f"request {spec!r}: {', '.join(bad)} must be an int")
        if prompt < 1 or max_tokens < 1 or arrival < 0:
            raise ValueError(f"request {seq_id}: needs num_prompt_tokens >= 1, max_tokens >= 1, arrival_us >= 0")
        self.seq_id, self.arrival_us, self.num_prompt_tokens, self.max_tokens = seq_id, arrival, prompt, max_tokens
        self.priority, self.deadline_us = priority, deadline
        self.out = self.comp = self.preempt_stamp = self.num_preemptions = self.num_recomputed_tokens = 0
        self.in_group = False
        self.first_scheduled_step = self.first_token_step = self.first_token_us = None
        # Set before they are read, so not here: blocks (at admission), arrival_prefill_tokens (at arrival),
        # finish_step and finish_us (every request finishes); the group's four (on joining it).

    def record(self) -> dict:
        """The per-request record, as `lab.engine.Sequence.record()` gives it."""
        return {"seq_id": self.seq_id, "arrival_us": self.arrival_us, "num_prompt_tokens": self.num_prompt_tokens,
                "num_output_tokens": self.out, "priority": self.priority, "first_scheduled_step": self.first_scheduled_step,
                "first_token_step": self.first_token_step, "finish_step": self.finish_step,
                "first_token_us": self.first_token_us, "finish_us": self.finish_us,
                "num_preemptions": self.num_preemptions, "num_recomputed_tokens": self.num_recomputed_tokens}
