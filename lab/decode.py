"""Shared pieces of the decode scheduler (notebook 02) that students do not write.

The assignment adds `enqueue`, `_schedule_key`, `_ensure_capacity` and `step`
to a subclass of `DecodeSchedulerBase`, one notebook cell each.

Teaching model: one step advances exactly one request, and KV capacity is a
block counter. Real engines (vLLM, SGLang, nano-vllm) batch many requests per
step under token and sequence budgets and allocate real KV pages.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import math
import types
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Literal

from .i18n import Phrase, refused, tr

Phase = Literal["prefill", "decode"]
RequestStatus = Literal["waiting", "running", "preempted", "finished"]
PHASES = ("prefill", "decode")
STATUSES = ("waiting", "running", "preempted", "finished")
POLICIES = ("fixed_priority", "aging", "deadline")
ACTIONS = ("prefill_to_decode", "decode_one_step", "finish")
EVENT_KEYS = (
    "request_id", "phase", "action", "prompt_len", "generated_len", "max_new_tokens",
    "wait_steps", "free_kv_blocks", "preempted_request_id", "deadline_missed",
)


@dataclass
class RequestState:
    """The minimal state of one request as it moves through prefill and decode."""

    request_id: int
    prompt_len: int
    max_new_tokens: int
    generated_len: int = 0
    phase: Phase = "prefill"
    priority: int = 0
    cache_hit: bool = False
    wait_steps: int = 0
    required_blocks: int = 1
    admitted: bool = False
    deadline_step: int | None = None
    preemptible: bool = True
    status: RequestStatus = "waiting"
    preemptions: int = 0

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise ValueError(tr("request {id}: {field} must be one of {choices}, got {value}", id=self.request_id, field="phase",
                                 choices=PHASES, value=repr(self.phase)))
        if self.status not in STATUSES:
            raise ValueError(tr("request {id}: {field} must be one of {choices}, got {value}", id=self.request_id, field="status",
                                 choices=STATUSES, value=repr(self.status)))

    @property
    def total_len(self) -> int:
        """Prompt plus generated tokens: the stable tie-breaker after priority."""
        return self.prompt_len + self.generated_len

    @property
    def done(self) -> bool:
        """True once max_new_tokens tokens have been generated."""
        return self.generated_len >= self.max_new_tokens


def _describe(value: Any) -> str:
    """Name a bad value so that the error message explains the rejection."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return f"{value!r} ({type(value).__name__})"


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector for a simulation that makes no reference cycles.

    Its collections would only rescan the simulation's growing output again and again: at 10^5 jobs, half of
    `lab.schedule`'s time. Reference counting still frees everything; the collector resumes afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _require_int(name: str | Phrase, value: Any, minimum: int | None = None) -> None:
    """Reject bool, float, NaN and str where the model needs an int."""
    if type(value) is not int:
        raise refused("{name} must be an int, got {value}", name=name, value=_describe(value))
    if minimum is not None and value < minimum:
        raise refused("{name} must be >= {minimum}, got {value}", name=name, minimum=minimum, value=value)


def _require_bool(name: str, value: Any) -> None:
    if type(value) is not bool:
        raise ValueError(tr("{name} must be True or False, got {value}", name=name, value=repr(value)))


class DecodeSchedulerBase:
    """Constructor, priority helpers, event recording and the `run` loop."""

    def __init__(self, policy: str = "fixed_priority", free_kv_blocks: int = 1_000_000, aging_interval: int = 4):
        if policy not in POLICIES:
            raise ValueError(tr("policy must be one of {choices}, got {value}", choices=POLICIES, value=repr(policy)))
        _require_int("free_kv_blocks", free_kv_blocks, minimum=0)
        _require_int("aging_interval", aging_interval, minimum=1)
        self.policy = policy
        self.free_kv_blocks = free_kv_blocks
        self.aging_interval = aging_interval
        self.clock = 0
        self.queue: List[RequestState] = []
        self.timeline: List[Dict[str, int | str]] = []

    def _check_new_request(self, request_id: int, prompt_len: int, max_new_tokens: int, priority: int,
                           cache_hit: bool, required_blocks: int, deadline_step: int | None,
                           preemptible: bool) -> None:
        """Validate `enqueue` arguments; raise ValueError naming the bad one."""
        _require_int("request_id", request_id)
        if request_id in {item.request_id for item in self.queue}:
            raise ValueError(tr("duplicate request_id: {id}", id=request_id))
        _require_int("prompt_len", prompt_len, minimum=1)
        _require_int("max_new_tokens", max_new_tokens, minimum=1)
        _require_int("required_blocks", required_blocks, minimum=1)
        _require_int("priority", priority)
        _require_bool("cache_hit", cache_hit)
        _require_bool("preemptible", preemptible)
        if deadline_step is not None:
            _require_int("deadline_step", deadline_step)
            if deadline_step <= self.clock:
                raise ValueError(tr("deadline_step must be later than the clock ({clock}), got {value}", clock=self.clock, value=deadline_step))

    def _effective_priority(self, req: RequestState) -> int:
        """Business priority, plus wait_steps // aging_interval under aging."""
        return req.priority + (req.wait_steps // self.aging_interval if self.policy == "aging" else 0)

    def _remaining_steps(self, req: RequestState) -> int:
        """Steps still needed: one for prefill if pending, then one per token."""
        return (1 if req.phase == "prefill" else 0) + max(req.max_new_tokens - req.generated_len, 0)

    def _record_event(self, chosen: RequestState, action: str, preempted_request_id: int | None) -> Dict[str, Any]:
        """Append the event of this step to the timeline and tick the clock."""
        event = {
            "request_id": chosen.request_id,
            "phase": "prefill" if action == "prefill_to_decode" else "decode",
            "action": action,
            "prompt_len": chosen.prompt_len,
            "generated_len": chosen.generated_len,
            "max_new_tokens": chosen.max_new_tokens,
            "wait_steps": chosen.wait_steps,
            "free_kv_blocks": self.free_kv_blocks,
            "preempted_request_id": preempted_request_id,
            "deadline_missed": chosen.deadline_step is not None
            and self.clock + 1 + self._remaining_steps(chosen) > chosen.deadline_step,
        }
        self.timeline.append(event)
        self.clock += 1
        return event

    def step(self) -> Dict[str, int | str] | None:
        """Advance one request; the assignment's TODO 4 supplies it."""
        raise NotImplementedError(tr("TODO 4 (step) is not implemented yet"))

    def run(self, max_steps: int = 100) -> List[Dict[str, int | str]]:
        """Step until every request is done, a step stalls, or max_steps is reached."""
        _require_int("max_steps", max_steps, minimum=0)
        steps = 0
        while steps < max_steps:
            if self.step() is None:
                break
            steps += 1  # a loop guard, not a scheduling policy
        return self.timeline


def add_to_class(cls: type) -> Callable[[Callable], Callable]:
    """Decorator (after d2l): attach the function as a method of `cls`."""
    def register(fn: Callable) -> Callable:
        setattr(cls, fn.__name__, fn)
        return fn
    return register


# Task ids whose current stub raised its bare NotImplementedError in this kernel. Cells below a
# check consult it, so they can name the unfinished TODO instead of failing on a missing variable.
_BLANK_TODOS: set[str] = set()


class TodoNotFinished(RuntimeError):
    """A cell needs a TODO that is still blank; Jupyter shows it as one line."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]  # IPython prints this instead of the traceback


def todo(task_id: str) -> Callable[[Callable], Callable]:
    """Decorator: an unfilled stub's bare NotImplementedError names its task."""
    def decorate(fn: Callable) -> Callable:
        _BLANK_TODOS.discard(task_id)  # a new definition has not failed yet
        if isinstance(fn, types.FunctionType) and not _names(fn.__code__, "NotImplementedError"):
            fn.task_id = task_id  # an answer with no stub left in it runs as written: no wrapper on every call
            return fn

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except NotImplementedError as exc:
                if exc.args:
                    raise
                _BLANK_TODOS.add(task_id)
                raise NotImplementedError(tr(
                    "{task_id} ({name}) is not implemented yet: in the answer cell under the heading '{task_id}', "
                    "replace `raise NotImplementedError()` with your code.",
                    task_id=task_id, name=fn.__name__)) from None
        wrapper.task_id = task_id
        return wrapper
    return decorate


def _names(code: types.CodeType, name: str) -> bool:
    """True if `code`, or a function or comprehension nested in it, uses the global or attribute `name`."""
    return name in code.co_names or any(_names(c, name) for c in code.co_consts if isinstance(c, types.CodeType))


def require_todos(*task_ids: str) -> None:
    """Raise TodoNotFinished, in one line, if any of these TODOs is still a blank stub."""
    blank = [task_id for task_id in task_ids if task_id in _BLANK_TODOS]
    if blank:
        cells = tr("its answer cell and run its check" if len(blank) == 1 else "their answer cells and run their checks")
        raise TodoNotFinished(tr("this cell needs {todos} first: fill in {cells}, then run this cell again.",
                                 todos=tr(" and ").join(blank), cells=cells))
