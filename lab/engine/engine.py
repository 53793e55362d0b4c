"""The step loop and its time model: arrivals in, one scheduled batch per step, records out.

Time model (a model, not a measurement): a step that computes `n` tokens lasts
`step_overhead_us + per_token_us * n` microseconds: an affine cost, not a roofline (a roofline
takes the larger of memory time and compute time; this adds them). The defaults are back-of-envelope
figures for an 8B-parameter model in bf16 on one A100-80GB (datasheet figures: about 2.0 TB/s
HBM bandwidth, 312 TFLOP/s dense bf16): reading 16 GB of weights once per step takes about
8 ms, and each token costs 2 x 8e9 FLOP at half the peak, about 0.1 ms. Decode also reads the KV of
every earlier token, a cost that grows with context length; it is left out. Change the two numbers to
model another GPU.

All times are integer microseconds, so two engines that follow the same rules agree exactly.

The loop, as a contract for any faster engine that must reproduce these results: at the start of a
step every request with `arrival_us <= clock` is added (in `(arrival_us, seq_id)` order); if nothing
is waiting or running, the clock first jumps to the next arrival. The step's batch then runs from
`clock` to `clock + step_us(batched tokens)`; tokens sampled in it are stamped with the end time and
the 0-based step index. Per request, `Sequence.record()` keeps arrival, first scheduled step, first
token step and time, finish step and time, preemptions and recomputed tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..decode import _require_int, gc_paused
from ..i18n import tr
from .scheduler import SchedulerBase
from .sequence import Sequence


@dataclass(frozen=True)
class TimeModel:
    """Step duration = step_overhead_us + per_token_us * batched tokens."""

    step_overhead_us: int = 8_000
    per_token_us: int = 100

    def __post_init__(self) -> None:
        _require_int("step_overhead_us", self.step_overhead_us, minimum=0)
        _require_int("per_token_us", self.per_token_us, minimum=0)

    def step_us(self, num_batched_tokens: int) -> int:
        return self.step_overhead_us + self.per_token_us * num_batched_tokens


@dataclass
class EngineRun:
    """What a run leaves behind: one record per request and one row per step."""

    records: list[dict] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)


def as_sequence(request) -> Sequence:
    """A Sequence from a Sequence or a dict of Sequence's input fields."""
    if isinstance(request, Sequence):
        return request
    if isinstance(request, dict):
        return Sequence(**request)
    raise ValueError(tr("a request is a dict or a Sequence, got {kind}", kind=type(request).__name__))


class LLMEngine:
    """Runs a scheduler on a list of requests: admit arrivals, schedule, advance the clock, apply."""

    def __init__(self, scheduler: SchedulerBase, time_model: TimeModel | None = None):
        self.scheduler = scheduler
        self.time_model = time_model or TimeModel()

    def run(self, requests, max_steps: int = 100_000) -> EngineRun:
        """Run until every request has finished; raise if the scheduler stalls or max_steps is reached."""
        _require_int("max_steps", max_steps, minimum=1)
        pending = sorted((as_sequence(r) for r in requests), key=lambda s: (s.arrival_us, s.seq_id))
        for seq in pending:  # refused before the first step, not found stuck after many
            self.scheduler.check_fits_one_step(seq)
        with gc_paused():  # requests, batches and step rows form no cycles: the collector would only rescan them
            return self._run(pending, max_steps)

    def _run(self, pending: list[Sequence], max_steps: int) -> EngineRun:
        """The loop of run(): pending is sorted by (arrival_us, seq_id)."""
        sched, run, clock, step = self.scheduler, EngineRun(), 0, 0
        num_added = 0  # pending[:num_added] have arrived (a cursor: no list.pop(0))
        while num_added < len(pending) or sched.has_unfinished():
            if not sched.has_unfinished() and pending[num_added].arrival_us > clock:
                clock = pending[num_added].arrival_us  # idle: jump to the next arrival
            while num_added < len(pending) and pending[num_added].arrival_us <= clock:
                sched.add(pending[num_added])
                num_added += 1
            if step >= max_steps:
                raise RuntimeError(tr("stopped after max_steps={max_steps} with {waiting} waiting, {running} running",
                                      max_steps=max_steps, waiting=len(sched.waiting), running=len(sched.running)))
            batch = sched.schedule()
            if not batch.num_scheduled_tokens and not batch.preempted_seq_ids:
                raise RuntimeError(tr("step {step} scheduled nothing with {waiting} waiting and {running} running: "
                                      "the scheduler is stuck", step=step, waiting=len(sched.waiting), running=len(sched.running)))
            num_batched_tokens = batch.num_batched_tokens  # a sum over the batch: taken once per step
            start, clock = clock, clock + self.time_model.step_us(num_batched_tokens)
            used = sched.block_manager.num_used_blocks
            sched.update_from_batch(batch, step, clock)
            run.steps.append({"step": step, "start_us": start, "end_us": clock, "num_seqs": len(batch.num_scheduled_tokens),
                              "num_decode_tokens": batch.num_decode_tokens,
                              "num_prefill_tokens": num_batched_tokens - batch.num_decode_tokens,
                              "num_batched_tokens": num_batched_tokens, "max_num_batched_tokens": sched.max_num_batched_tokens,
                              "num_used_blocks": used, "num_blocks": sched.block_manager.num_blocks,
                              "preempted": list(batch.preempted_seq_ids), "num_waiting": len(sched.waiting),
                              "num_running": len(sched.running)})
            step += 1
        run.records = [seq.record() for seq in sorted(sched.finished, key=lambda s: s.seq_id)]
        return run
