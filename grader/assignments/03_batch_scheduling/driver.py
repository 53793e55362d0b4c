# Observation driver for 03_batch_scheduling. Runs inside a grading child: replays an op script on the
# Scheduler / BlockManager / metric functions the notebook cells defined and reports, after each op, the
# return value and the state. It judges nothing: the parent compares with the reference.
# `_plain` comes from grader/runner/driver_common.py, which driver_source() prepends; FEED (TODO 5's requests,
# one at a time) from child.py.
SEQ_FIELDS = ("num_computed_tokens", "num_output_tokens", "num_preemptions", "num_recomputed_tokens")


def _seq_state(seq):
    return [seq.status] + [getattr(seq, name, None) for name in SEQ_FIELDS] + [len(seq.block_table)]


def _batch(batch):
    return {"tokens": [[k, v] for k, v in batch.num_scheduled_tokens.items()], "decode": batch.num_decode_tokens,
            "budget": batch.token_budget, "preempted": list(batch.preempted_seq_ids)}


# Ops that call the BlockManager method of that name on one of the pool's sequences.
POOL_METHODS = ("num_blocks_needed", "can_append", "append", "deallocate", "can_allocate", "allocate")
KEY_POLICIES = ("aging_1s",)  # key functions a scenario may name as its policy: defined by the notebook's given cells


def _config(ns, config):
    """A scheduler configuration; a policy named in KEY_POLICIES becomes that function of the notebook."""
    if config.get("policy") in KEY_POLICIES:
        return {**config, "policy": ns[config["policy"]]}
    return config


class _Replay:
    """The objects an op script builds up, and each op's handler."""

    def __init__(self, ns):
        self.ns, self.sched, self.batch, self.step, self.pool, self.seqs = ns, None, None, 0, None, []

    def snapshot(self):
        try:
            state = {}
            if self.sched is not None:
                everyone = [*self.sched.running, *self.sched.waiting, *self.sched.finished]
                state["sched"] = {"running": [s.seq_id for s in self.sched.running],
                                  "waiting": [s.seq_id for s in self.sched.waiting_order()],
                                  "free": self.sched.block_manager.num_free_blocks,
                                  "seqs": {str(s.seq_id): _seq_state(s) for s in sorted(everyone, key=lambda s: s.seq_id)}}
            if self.batch is not None:
                state["batch"] = _batch(self.batch)
            if self.pool is not None:
                state["pool"] = {"free": self.pool.num_free_blocks, "tables": [len(s.block_table) for s in self.seqs]}
            return _plain(state)
        except Exception as exc:  # noqa: BLE001
            return f"unreadable state: {type(exc).__name__}"

    def _find(self, seq_id):
        return next(s for s in (*self.sched.running, *self.sched.waiting) if s.seq_id == seq_id)

    def apply(self, kind, args):
        """What one op returns: its handler in OPS, or a BlockManager method called on one of the pool's sequences."""
        if kind in POOL_METHODS:
            return getattr(self.pool, kind)(self.seqs[args[0]], *args[1:])
        if kind not in self.OPS:
            raise ValueError(f"unknown op {kind}")
        return self.OPS[kind](self, args)

    # The scheduler under test, one call at a time.
    def _sched(self, args):
        """A new Scheduler of this configuration, with no batch yet."""
        self.sched, self.batch, self.step = self.ns["Scheduler"](**_config(self.ns, args[0])), None, 0

    def _add(self, args):
        """What add returns for a new Sequence of these fields."""
        return self.sched.add(self.ns["Sequence"](**args[0]))

    def _schedule(self, args):
        """One schedule() call: the batch it returns, kept for the next update."""
        self.batch = self.sched.schedule()
        return _batch(self.batch)

    def _update(self, args):
        """update_from_batch on the last batch (step k ends at time k + 1): the seq_ids it finished."""
        done = self.sched.update_from_batch(self.batch, self.step, self.step + 1)
        self.step += 1
        return [s.seq_id for s in done]

    def _step(self, args):
        """One schedule and its update."""
        return [self.apply("schedule", []), self.apply("update", [])]

    def _run(self, args):
        """Up to args[0] steps, while any request is unfinished."""
        return [self.apply("step", []) for _ in range(args[0]) if self.sched.has_unfinished()]

    def _running(self, args):
        """A running sequence set up by hand: args are its kwargs, computed tokens, outputs and blocks."""
        ns, seq = self.ns, self.ns["Sequence"](**args[0])
        seq.status, seq.num_computed_tokens, seq.num_output_tokens = ns["SequenceStatus"].RUNNING, args[1], args[2]
        seq.block_table = [self.sched.block_manager.free_block_ids.popleft() for _ in range(args[3])]
        self.sched.running.append(seq)

    # One batch and the scheduler's helpers that fill it.
    def _new_batch(self, args):
        """An empty batch of this token budget, for the helpers below."""
        self.batch = self.ns["ScheduledBatch"](token_budget=args[0])

    def _batch_add(self, args):
        """What batch.add returns for the sequence of this seq_id and these tokens."""
        return self.batch.add(self._find(args[0]), args[1])

    def _make_room(self, args):
        """What the scheduler's _make_room returns for the sequence of this seq_id."""
        return self.sched._make_room(self._find(args[0]), args[1], self.batch)

    def _preempt(self, args):
        """What the scheduler's _preempt returns for the sequence of this seq_id."""
        return self.sched._preempt(self._find(args[0]), self.batch)

    # A BlockManager alone, with sequences of its own.
    def _pool(self, args):
        """A new BlockManager of this configuration, with no sequences yet."""
        self.pool, self.seqs = self.ns["BlockManager"](**args[0]), []

    def _seq(self, args):
        """One more Sequence of the pool's, of these fields."""
        self.seqs.append(self.ns["Sequence"](**args[0]))

    def _set_seq(self, args):
        """Set one field of one of the pool's sequences."""
        setattr(self.seqs[args[0]], args[1], args[2])

    # Whole runs and plain functions of the notebook.
    def _engine(self, args):
        """A whole LLMEngine run: its records and, per step, batched tokens, decode tokens and preempted."""
        ns = self.ns
        run = ns["LLMEngine"](ns["Scheduler"](**_config(ns, args[0])), ns["TimeModel"](**args[2])).run(args[1])
        return {"records": run.records, "steps": [[s["num_batched_tokens"], s["num_decode_tokens"], s["preempted"]] for s in run.steps]}

    def _call(self, args):
        """What a notebook function returns: [name, args], or [name, args, keys] (of a dict, only those keys are judged)."""
        value = self.ns[args[0]](*args[1])
        if len(args) > 2 and isinstance(value, dict):
            return {key: value[key] for key in args[2] if key in value}
        return value

    def _rank(self, args):
        """TODO 5: the order slo_key gives a trace's requests; the grader runs the engine."""
        return _ranking(self.ns, args[0]) if args else _keys(self.ns)

    OPS = {"sched": _sched, "add": _add, "schedule": _schedule, "update": _update, "step": _step, "run": _run,
           "running": _running, "batch": _new_batch, "batch_add": _batch_add, "make_room": _make_room, "preempt": _preempt,
           "pool": _pool, "seq": _seq, "set_seq": _set_seq, "engine": _engine, "call": _call, "rank": _rank}


def _ranking(ns, rows):
    """seq_ids, first served first, under the student's slo_key (lab's serving_order, as the notebook's check)."""
    from lab.engine import RequestInfo, serving_order
    if not callable(ns.get("slo_key")):
        raise NameError("slo_key is not defined")
    return serving_order(ns["slo_key"], [RequestInfo(*row) for row in rows])


def _keys(ns):
    """A held-out trace: slo_key's checked key of each request the grader feeds (FEED: grader/runner/child.py), sent
    back one at a time, in arrival order: the child never holds the trace, only the requests that have arrived."""
    from lab.engine import RequestInfo, checked_key
    if not callable(ns.get("slo_key")):
        raise NameError("slo_key is not defined")
    for row in FEED.items():  # noqa: F821 - the child's feed, set before this driver loads
        parts, _ = checked_key(ns["slo_key"], RequestInfo(*row))   # raises as serving_order does: not a finite number
        FEED.reply(_plain(tuple(map(_key_part, parts))))  # noqa: F821
    return None


def _key_part(part):
    """One number of a key as it crosses, so that the grader compares as the child would: int, float and numpy scalars
    as themselves (_plain's tags), a Fraction as [numerator, denominator], any other real number as its float."""
    if _numpy_scalar(type(part)) and part.dtype.kind in "iuf" and part.dtype.itemsize <= 8:  # noqa: F821
        return part
    if isinstance(part, numbers.Integral):
        return int(part)
    if isinstance(part, numbers.Rational):
        return [int(part.numerator), int(part.denominator)]
    return float(part)


def observe(namespace, ops):
    replay, observed = _Replay(namespace), []
    for kind, *args in ops:
        try:
            value = replay.apply(kind, args)
            observed.append({"value": _plain(value), "state": replay.snapshot()})  # full precision: grader/compare.py
        except Exception as exc:  # noqa: BLE001
            observed.append({"error": type(exc).__name__, "state": replay.snapshot()})
    return observed
