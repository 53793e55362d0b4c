"""A failing case of 02_decode_scheduling as code: the DecodeSchedulerSim calls its driver replays."""
from grader.snippets import kwargs

KIND = "decode"  # the shape of its ops, as grader/shrink.py knows it


def call(op: list) -> str:
    """One op of the decode driver as the Python call it stands for."""
    kind, *args = op
    if kind == "new":
        return f"sim = DecodeSchedulerSim({kwargs(args[0])})"
    if kind == "enqueue":
        return f"sim.enqueue({kwargs(args[0])})"
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


def state(ops: list, part: str | None = None) -> str:
    """Code that shows the state the driver observes, ending in an expression."""
    return "sim.clock, sim.free_kv_blocks, len(sim.timeline), [vars(r) for r in sim.queue]"


def result(shown: list, lines: list[str]) -> list[str]:
    """run() returns nothing: show the events it added."""
    if shown and shown[-1][0] == "run":
        return [*lines[:-1], "start = len(sim.timeline)", lines[-1], "sim.timeline[start:]"]
    return lines
