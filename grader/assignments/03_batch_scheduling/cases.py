"""A failing case of 03_batch_scheduling as code: the Scheduler, BlockManager and metric calls its driver replays."""
from grader.snippets import function_call, kwargs, literal

from .driver import KEY_POLICIES  # the driver's own list: a scenario's policy means the same in both

KIND = "engine"  # the shape of its ops, as grader/shrink.py knows it


def _config(args: dict) -> str:
    """Scheduler keyword arguments; a key-function policy (the driver's KEY_POLICIES) is named, not quoted."""
    policy = args.get("policy")
    if policy in KEY_POLICIES:
        return kwargs({k: v for k, v in args.items() if k != "policy"}) + f", policy={policy}"
    return kwargs(args)


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


def call(op: list) -> str:
    """One op of the engine driver as code; `step` counts engine steps as the driver does."""
    kind, *args = op
    simple = {
        "sched": lambda: f"sched, step = Scheduler({_config(args[0])}), 0",
        "add": lambda: f"sched.add(Sequence({kwargs(args[0])}))",
        "schedule": lambda: "batch = sched.schedule()",
        "update": lambda: "done = sched.update_from_batch(batch, step, step + 1); step += 1",
        "step": lambda: _STEP,
        "run": lambda: (f"steps = []\nfor _ in range({args[0]}):\n    if sched.has_unfinished():\n        {_STEP}\n"
                        "        steps.append((batch, [s.seq_id for s in done]))"),
        "running": lambda: f"add_running({args[3]!r}, {args[1]!r}, {args[2]!r}, {kwargs(args[0])})",
        "batch": lambda: f"batch = ScheduledBatch(token_budget={args[0]!r})",
        "batch_add": lambda: f"batch.add({_find(args[0])}, {args[1]!r})",
        "make_room": lambda: f"sched._make_room({_find(args[0])}, {args[1]!r}, batch)",
        "preempt": lambda: f"sched._preempt({_find(args[0])}, batch)",
        "pool": lambda: f"pool, seqs = BlockManager({kwargs(args[0])}), []",
        "seq": lambda: f"seqs.append(Sequence({kwargs(args[0])}))",
        "set_seq": lambda: f"seqs[{args[0]}].{args[1]} = {args[2]!r}",
        "engine": lambda: f"run = LLMEngine(Scheduler({_config(args[0])}), TimeModel({kwargs(args[2])})).run({literal(args[1])})",
        "call": lambda: function_call([args[0], args[1]]),
    }
    if kind in simple:
        return simple[kind]()
    if kind in ("num_blocks_needed", "can_append", "append", "deallocate", "can_allocate", "allocate"):
        return f"pool.{kind}({', '.join([f'seqs[{args[0]}]', *(repr(a) for a in args[1:])])})"
    raise ValueError(f"unknown engine op {kind!r}")


# What to show after a failing op that is a statement, so that a notebook cell displays the differing value.
SHOW = {"schedule": "batch", "update": "done", "step": "batch, done", "sched": "sched", "pool": "pool", "run": "steps",
        "engine": _RUN_VALUE}
_SEQ_STATES = ("seq_states = {s.seq_id: [s.status, s.num_computed_tokens, s.num_output_tokens, s.num_preemptions,\n"
               "                       s.num_recomputed_tokens, len(s.block_table)] for s in (*sched.running, *sched.waiting, *sched.finished)}\n")


def state(ops: list, part: str | None = None) -> str:
    """Code that shows the part of the state that differs (all of it if unknown), ending in an expression."""
    if part == "pool" or part is None and any(op[0] == "pool" for op in ops):
        return "pool.num_free_blocks, [len(s.block_table) for s in seqs]"
    if part == "batch":
        return "batch"
    # as the driver's snapshot: running, waiting order, free blocks, and each request's counters
    return (_SEQ_STATES + "[s.seq_id for s in sched.running], [s.seq_id for s in sched.waiting_order()], "
            "sched.block_manager.num_free_blocks, seq_states")


def result(shown: list, lines: list[str]) -> list[str]:
    """After a failing statement, the value it set."""
    return [*lines, SHOW[shown[-1][0]]] if shown and shown[-1][0] in SHOW else lines


def helpers(shown: list) -> list[str]:
    """Definitions the case's lines use."""
    return [_ADD_RUNNING] if any(op[0] == "running" for op in shown) else []
