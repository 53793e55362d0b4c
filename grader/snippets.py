"""A failing hidden scenario as code a student can paste into a scratch cell and run.

Each observation driver (grader/drivers/) replays ops of its own shape; this turns the same ops
into the calls they stand for, so feedback shows a case, not just a verdict. A case longer than
MAX_LINES or MAX_CHARS is first cut down by grader/shrink.py; whatever is left is shown as it is.
"""
from __future__ import annotations

import builtins
import re
import textwrap

from .drivers.engine import KEY_POLICIES  # the driver's own list: a scenario's policy means the same in both

MAX_LINES = 25      # a case longer than this is cut down before it is shown
MAX_CHARS = 2500
WIDTH = 100         # a list whose code is longer than this is written one item per line


def fits(code: str) -> bool:
    """Short enough to show as it is."""
    return len(code.splitlines()) <= MAX_LINES and len(code) <= MAX_CHARS


def _literal(value) -> str:
    """A value as code; a long list one item per line, so that a student reads (and edits) it item by item."""
    text = repr(value)
    if len(text) <= WIDTH or type(value) is not list or len(value) < 2:
        return text
    return "[\n" + "".join(f"    {item!r},\n" for item in value) + "]"


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
    return f"{name}({', '.join(_literal(a) for a in args)})"


def _config(args: dict) -> str:
    """Scheduler keyword arguments; a key-function policy (the driver's KEY_POLICIES) is named, not quoted."""
    policy = args.get("policy")
    if policy in KEY_POLICIES:
        return _kwargs({k: v for k, v in args.items() if k != "policy"}) + f", policy={policy}"
    return _kwargs(args)


def _find(seq_id) -> str:
    return f"next(s for s in (*sched.running, *sched.waiting) if s.seq_id == {seq_id!r})"


_STEP = "batch = sched.schedule(); done = sched.update_from_batch(batch, step, step + 1); step += 1"
# A running request set up by hand (the driver's "running" op): defined once at the top of a case that has one.
_ADD_RUNNING = ("def add_running(blocks, computed, outputs, **request):  # a running request, set up by hand\n"
                "    seq = Sequence(**request); seq.status = SequenceStatus.RUNNING\n"
                "    seq.num_computed_tokens, seq.num_output_tokens = computed, outputs\n"
                "    seq.block_table = [sched.block_manager.free_block_ids.popleft() for _ in range(blocks)]\n"
                "    sched.running.append(seq)")
_RUN_VALUE = ('{"records": run.records, '
              '"steps": [[s["num_batched_tokens"], s["num_decode_tokens"], s["preempted"]] for s in run.steps]}')


def engine_call(op: list) -> str:
    """One op of the engine driver (notebook 03) as code; `step` counts engine steps as the driver does."""
    kind, *args = op
    simple = {
        "sched": lambda: f"sched, step = Scheduler({_config(args[0])}), 0",
        "add": lambda: f"sched.add(Sequence({_kwargs(args[0])}))",
        "schedule": lambda: "batch = sched.schedule()",
        "update": lambda: "done = sched.update_from_batch(batch, step, step + 1); step += 1",
        "step": lambda: _STEP,
        "run": lambda: (f"steps = []\nfor _ in range({args[0]}):\n    if sched.has_unfinished():\n        {_STEP}\n"
                        "        steps.append((batch, [s.seq_id for s in done]))"),
        "running": lambda: f"add_running({args[3]!r}, {args[1]!r}, {args[2]!r}, {_kwargs(args[0])})",
        "batch": lambda: f"batch = ScheduledBatch(token_budget={args[0]!r})",
        "batch_add": lambda: f"batch.add({_find(args[0])}, {args[1]!r})",
        "make_room": lambda: f"sched._make_room({_find(args[0])}, {args[1]!r}, batch)",
        "preempt": lambda: f"sched._preempt({_find(args[0])}, batch)",
        "pool": lambda: f"pool, seqs = BlockManager({_kwargs(args[0])}), []",
        "seq": lambda: f"seqs.append(Sequence({_kwargs(args[0])}))",
        "set_seq": lambda: f"seqs[{args[0]}].{args[1]} = {args[2]!r}",
        "engine": lambda: f"run = LLMEngine(Scheduler({_config(args[0])}), TimeModel({_kwargs(args[2])})).run({_literal(args[1])})",
        "call": lambda: function_call([args[0], args[1]]),
    }
    if kind in simple:
        return simple[kind]()
    if kind in ("num_blocks_needed", "can_append", "append", "deallocate", "can_allocate", "allocate"):
        return f"pool.{kind}({', '.join([f'seqs[{args[0]}]', *(repr(a) for a in args[1:])])})"
    raise ValueError(f"unknown engine op {kind!r}")


CALLS = {"decode": decode_call, "batching": function_call, "engine": engine_call}
# What to show after a failing op that is a statement, so that a notebook cell displays the differing value.
SHOW = {"schedule": "batch", "update": "done", "step": "batch, done", "sched": "sched", "pool": "pool", "run": "steps",
        "engine": _RUN_VALUE}


def describe(driver: str, op: list, limit: int = 120) -> str:
    """One op, shortened for a one-line explanation."""
    text = CALLS[driver](op)  # one line: lists written item by item are joined again
    for pattern, joined in ((r",\n\s*\]", "]"), (r"\[\n\s*", "["), (r",\n\s*", ", "), (r":\n\s*", ": "), (r"\n\s*", "; ")):
        text = re.sub(pattern, joined, text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_SEQ_STATES = ("seq_states = {s.seq_id: [s.status.value, s.num_computed_tokens, s.num_output_tokens, s.num_preemptions,\n"
               "                       s.num_recomputed_tokens, len(s.block_table)] for s in (*sched.running, *sched.waiting, *sched.finished)}\n")


def state_expression(driver: str, ops: list, part: str | None = None) -> str | None:
    """Code that shows the state the driver observes (its `part` that differs, for the engine), ending in an expression."""
    if driver == "decode":
        return "sim.clock, sim.free_kv_blocks, len(sim.timeline), [vars(r) for r in sim.queue]"
    if driver == "engine" and (part == "pool" or part is None and any(op[0] == "pool" for op in ops)):
        return "pool.num_free_blocks, [len(s.block_table) for s in seqs]"
    if driver == "engine" and part == "batch":
        return "batch"
    if driver == "engine":  # as the driver's snapshot: running, waiting order, free blocks, and each request's counters
        return (_SEQ_STATES + "[s.seq_id for s in sched.running], [s.seq_id for s in sched.waiting_order()], "
                "sched.block_manager.num_free_blocks, seq_states")
    return None


def _suppressed(line: str, error: str) -> str:
    """An op the reference raises on, wrapped so that the cell goes on to the ops after it."""
    error = error if isinstance(getattr(builtins, error, None), type) else "Exception"
    if "\n" not in line:
        return f"with suppress({error}): {line}"
    return f"with suppress({error}):\n" + textwrap.indent(line, "    ")


def snippet(driver: str, ops: list, upto: int | None = None, state: bool | str = False, errors: list | None = None) -> str:
    """The scenario up to op `upto` as code; it ends with the value (or, with `state`, the state) that differs.

    `state` may name the part of the state that differs (a key of the driver's snapshot).
    `errors`: the exception each op raised on the reference (or None); those ops are wrapped in suppress(), so
    the cell runs on past them as the replay does. Always code, however long: the grader cuts a long case down
    first (grader/shrink.py)."""
    shown = ops if upto is None else ops[: upto + 1]
    lines = [CALLS[driver](op) for op in shown]
    last = len(shown) - 1 if state else len(shown) - 2  # the op that differs raises as it is, unless its state is shown
    wrapped = [i for i, error in enumerate((errors or [])[: last + 1]) if error]
    for i in wrapped:
        lines[i] = _suppressed(lines[i], errors[i])
    part = state if isinstance(state, str) else None
    if state and state_expression(driver, shown, part):
        lines.append(state_expression(driver, shown, part))
    elif driver == "engine" and shown and shown[-1][0] in SHOW:
        lines.append(SHOW[shown[-1][0]])
    elif driver == "decode" and shown and shown[-1][0] == "run":  # run() returns nothing: show the events it added
        lines[-1:] = ["start = len(sim.timeline)", lines[-1], "sim.timeline[start:]"]
    helpers = (["from contextlib import suppress"] if wrapped else []) + (
        [_ADD_RUNNING] if driver == "engine" and any(op[0] == "running" for op in shown) else [])
    return "\n".join(helpers + lines)
