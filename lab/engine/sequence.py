"""One request in the engine-step model (nano-vllm's Sequence, with vLLM V1's counters).

Token accounting follows vLLM V1 (`vllm/v1/request.py`): `num_tokens` is prompt plus output,
and each step the scheduler lets `num_computed_tokens` catch up with it. A step that
catches up samples one output token. Preemption by recompute sets `num_computed_tokens`
back to 0, so the prompt *and* the tokens already generated are prefilled again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..decode import _require_int
from ..i18n import tr


class SequenceStatus(str, Enum):
    """Where a sequence is: waiting (new), running, preempted (waiting again) or finished."""

    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED = "finished"


@dataclass(eq=False)  # identity, not value: two requests with equal fields are still two requests
class Sequence:
    """A request: its input, its progress and the per-request record the metrics read."""

    seq_id: int
    num_prompt_tokens: int
    max_tokens: int = 16
    arrival_us: int = 0
    priority: int = 0  # vLLM convention: a smaller number is more urgent
    # progress
    status: SequenceStatus = SequenceStatus.WAITING
    num_computed_tokens: int = 0
    num_output_tokens: int = 0
    block_table: list[int] = field(default_factory=list)
    # the per-request record (steps are 0-based engine steps; times in microseconds)
    num_preemptions: int = 0
    num_recomputed_tokens: int = 0
    first_scheduled_step: int | None = None
    first_token_step: int | None = None
    finish_step: int | None = None
    first_token_us: int | None = None
    finish_us: int | None = None

    def __post_init__(self) -> None:
        _require_int("seq_id", self.seq_id)
        _require_int("num_prompt_tokens", self.num_prompt_tokens, minimum=1)
        _require_int("max_tokens", self.max_tokens, minimum=1)
        _require_int("arrival_us", self.arrival_us, minimum=0)
        _require_int("priority", self.priority)
        self.status = SequenceStatus(self.status)

    @property
    def num_tokens(self) -> int:
        """Prompt plus generated tokens: what num_computed_tokens must catch up with."""
        return self.num_prompt_tokens + self.num_output_tokens

    @property
    def num_blocks(self) -> int:
        """KV blocks held now."""
        return len(self.block_table)

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    @property
    def is_decode(self) -> bool:
        """True when the next step computes exactly the last sampled token."""
        # num_tokens written out (here and in the scheduler's per-sequence paths): read for every request every step
        return self.num_output_tokens > 0 and self.num_prompt_tokens + self.num_output_tokens - self.num_computed_tokens == 1

    def info(self) -> "RequestInfo":
        """What a waiting-queue policy may read about this request."""
        return RequestInfo(self.seq_id, self.arrival_us, self.priority, self.num_prompt_tokens)

    def record(self) -> dict:
        """The per-request record: what the metrics read, and what a faster engine with the same rules must reproduce."""
        return {"seq_id": self.seq_id, "arrival_us": self.arrival_us, "num_prompt_tokens": self.num_prompt_tokens,
                "num_output_tokens": self.num_output_tokens, "priority": self.priority,
                "first_scheduled_step": self.first_scheduled_step, "first_token_step": self.first_token_step,
                "finish_step": self.finish_step, "first_token_us": self.first_token_us, "finish_us": self.finish_us,
                "num_preemptions": self.num_preemptions, "num_recomputed_tokens": self.num_recomputed_tokens}


@dataclass(frozen=True)
class RequestInfo:
    """A request as a policy sees it: what an engine knows on arrival (not its output length, not its progress)."""

    seq_id: int
    arrival_us: int
    priority: int
    num_prompt_tokens: int

    def __getattr__(self, name: str):
        # only reached for a missing field: name what a policy may read instead of a bare AttributeError
        raise AttributeError(tr("a policy reads only seq_id, arrival_us, priority and num_prompt_tokens, not {name}: "
                                "what an engine knows when a request arrives (not its output length, not its progress)",
                                name=repr(name)))
