"""A failing hidden scenario as code a student can paste into a scratch cell and run.

Each observation driver (grader/drivers/) replays ops of its own shape; this turns the same ops
into the calls they stand for, so feedback shows a case, not just a verdict.
"""
from __future__ import annotations

from .drivers.engine import KEY_POLICIES  # the driver's own list: a scenario's policy means the same in both

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


def _config(args: dict) -> str:
    """Scheduler keyword arguments; a key-function policy (the driver's KEY_POLICIES) is named, not quoted."""
    policy = args.get("policy")
    if policy in KEY_POLICIES:
        return _kwargs({k: v for k, v in args.items() if k != "policy"}) + f", policy={policy}"
    return _kwargs(args)


def _find(seq_id) -> str:
    return f"next(s for s in (*sched.running, *sched.waiting) if s.seq_id == {seq_id!r})"


_STEP = "batch = sched.schedule(); done = sched.update_from_batch(batch, step, step + 1); step += 1"


def engine_call(op: list) -> str:
    """One op of the engine driver (notebook 03) as code; `step` counts engine steps as the driver does."""
    kind, *args = op
    simple = {
        "sched": lambda: f"sched, step = Scheduler({_config(args[0])}), 0",
        "add": lambda: f"sched.add(Sequence({_kwargs(args[0])}))",
        "schedule": lambda: "batch = sched.schedule()",
        "update": lambda: "done = sched.update_from_batch(batch, step, step + 1); step += 1",
        "step": lambda: _STEP,
        "run": lambda: f"for _ in range({args[0]}):\n    if sched.has_unfinished():\n        {_STEP}",
        "running": lambda: (f"seq = Sequence({_kwargs(args[0])}); seq.status = SequenceStatus.RUNNING\n"
                            f"seq.num_computed_tokens, seq.num_output_tokens = {args[1]!r}, {args[2]!r}\n"
                            f"seq.block_table = [sched.block_manager.free_block_ids.popleft() for _ in range({args[3]!r})]\n"
                            "sched.running.append(seq)"),
        "batch": lambda: f"batch = ScheduledBatch(token_budget={args[0]!r})",
        "batch_add": lambda: f"batch.add({_find(args[0])}, {args[1]!r})",
        "make_room": lambda: f"sched._make_room({_find(args[0])}, {args[1]!r}, batch)",
        "preempt": lambda: f"sched._preempt({_find(args[0])}, batch)",
        "pool": lambda: f"pool, seqs = BlockManager({_kwargs(args[0])}), []",
        "seq": lambda: f"seqs.append(Sequence({_kwargs(args[0])}))",
        "set_seq": lambda: f"seqs[{args[0]}].{args[1]} = {args[2]!r}",
        "engine": lambda: f"LLMEngine(Scheduler({_config(args[0])}), TimeModel({_kwargs(args[2])})).run({args[1]!r})",
        "call": lambda: function_call([args[0], args[1]]),
    }
    if kind in simple:
        return simple[kind]()
    if kind in ("num_blocks_needed", "can_append", "append", "deallocate", "can_allocate", "allocate"):
        return f"pool.{kind}({', '.join([f'seqs[{args[0]}]', *(repr(a) for a in args[1:])])})"
    raise ValueError(f"unknown engine op {kind!r}")


CALLS = {"decode": decode_call, "batching": function_call, "engine": engine_call}
# What to show after a failing op that is a statement, so that a notebook cell displays the differing value.
SHOW = {"schedule": "batch", "update": "done", "step": "batch, done", "sched": "sched", "pool": "pool"}


def describe(driver: str, op: list, limit: int = 120) -> str:
    """One op, shortened for a one-line explanation."""
    text = CALLS[driver](op)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def state_expression(driver: str, ops: list) -> str | None:
    """An expression that shows the state the driver observes, for a case where the state differs."""
    if driver == "decode":
        return "sim.clock, sim.free_kv_blocks, [vars(r) for r in sim.queue]"
    if driver == "engine" and any(op[0] == "pool" for op in ops):
        return "pool.num_free_blocks, [len(s.block_table) for s in seqs]"
    if driver == "engine":
        return ("[s.seq_id for s in sched.running], [s.seq_id for s in sched.waiting_order()], "
                "sched.block_manager.num_free_blocks")
    return None


def snippet(driver: str, ops: list, upto: int | None = None, state: bool = False) -> str:
    """The scenario up to op `upto` as code; it ends with the value (or, with `state`, the state) that differs."""
    shown = ops if upto is None else ops[: upto + 1]
    lines = [CALLS[driver](op) for op in shown]
    if state and state_expression(driver, shown):
        lines.append(state_expression(driver, shown))
    elif driver == "engine" and shown and shown[-1][0] in SHOW:
        lines.append(SHOW[shown[-1][0]])
    text = "\n".join(lines)
    if len(text) > MAX_CHARS:
        return f"(this case is {len(text)} characters of code, too long to show; its name identifies it)"
    return text
