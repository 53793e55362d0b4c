"""A failing hidden scenario as code a student can paste into a scratch cell and run.

Each observation driver (grader/drivers/) replays ops of its own shape; this turns the same ops
into the calls they stand for, so feedback shows a case, not just a verdict.
"""
from __future__ import annotations

MAX_CHARS = 2500


def _kwargs(args: dict) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in args.items())


def decode_call(op: list) -> str:
    """One op of the decode driver as the Python call it stands for."""
    kind, *args = op
    if kind == "new":
        return f"sim = DecodeSchedulerSim({_kwargs(args[0])})"
    if kind == "enqueue":
        return f"sim.enqueue({_kwargs(args[0])})"
    if kind == "set":
        return f"sim.queue[{args[0]}].{args[1]} = {args[2]!r}"
    if kind == "set_sim":
        return f"sim.{args[0]} = {args[1]!r}"
    if kind == "order":
        return "[r.request_id for r in sorted(sim.queue, key=sim._schedule_key)]"
    if kind == "ensure":
        return f"sim._ensure_capacity(sim.queue[{args[0]}])"
    if kind == "step":
        return "sim.step()"
    if kind == "run":
        return f"sim.run(max_steps={args[0]})"
    raise ValueError(f"unknown decode op {kind!r}")


def function_call(op: list) -> str:
    """One op of the function-call driver: [name, [args...]]."""
    name, args = op
    return f"{name}({', '.join(repr(a) for a in args)})"


CALLS = {"decode": decode_call, "batching": function_call}


def describe(driver: str, op: list, limit: int = 120) -> str:
    """One op, shortened for a one-line explanation."""
    text = CALLS[driver](op)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def snippet(driver: str, ops: list, upto: int | None = None) -> str:
    """The scenario up to op `upto` as code; its last line is the call whose result differs."""
    text = "\n".join(CALLS[driver](op) for op in (ops if upto is None else ops[: upto + 1]))
    if len(text) > MAX_CHARS:
        return f"(this case is {len(text)} characters of code, too long to show; its name identifies it)"
    return text
