# Observation driver for 02_decode_scheduling. Runs inside a grading child: it replays an op script on
# the DecodeSchedulerSim the notebook cells defined and reports, after each op, the return value and the
# scheduler's state. It judges nothing: the parent compares with the reference.
# `_plain` comes from grader/runner/driver_common.py, which driver_source() prepends.
FIELDS = ("request_id", "prompt_len", "max_new_tokens", "generated_len", "phase", "priority", "cache_hit",
          "wait_steps", "required_blocks", "admitted", "deadline_step", "preemptible", "status", "preemptions")
MISSING = "<missing>"


def snapshot(sim):
    try:
        queue = [{name: _plain(getattr(req, name, MISSING)) for name in FIELDS} for req in sim.queue]
        return {"clock": _plain(sim.clock), "free_kv_blocks": _plain(sim.free_kv_blocks),
                "events": len(sim.timeline), "queue": queue}
    except Exception as exc:  # noqa: BLE001
        return f"unreadable state: {type(exc).__name__}"


def _apply(sim, cls, kind, args):
    if kind == "new":
        return cls(**args[0]), None
    if kind == "enqueue":
        return sim, sim.enqueue(**args[0])
    if kind == "set":
        setattr(sim.queue[args[0]], args[1], args[2])
        return sim, None
    if kind == "set_sim":
        setattr(sim, args[0], args[1])
        return sim, None
    if kind == "order":
        return sim, [req.request_id for req in sorted(sim.queue, key=sim._schedule_key)]
    if kind == "ensure":
        return sim, sim._ensure_capacity(sim.queue[args[0]])
    if kind == "step":
        return sim, sim.step()
    if kind == "run":
        before = len(sim.timeline)
        sim.run(max_steps=args[0])
        return sim, sim.timeline[before:]
    raise ValueError(f"unknown op {kind}")


def observe(namespace, ops):
    cls = namespace["DecodeSchedulerSim"]
    sim, observed = None, []
    for kind, *args in ops:
        try:
            sim, value = _apply(sim, cls, kind, args)
            observed.append({"value": _plain(value), "state": snapshot(sim)})
        except Exception as exc:  # noqa: BLE001
            observed.append({"error": type(exc).__name__, "state": snapshot(sim) if sim is not None else None})
    return observed
