"""Answers that read a TODO's text another way, for notebooks 01 and 02 (tests/grader/test_grader.py).

OPEN: readings the text leaves open (it says so): each is a correct answer and must score full marks.
RULED_OUT: readings the text excludes in a sentence: each must lose points on its own TODO, so the stated rule
is really judged; `shown` says that the TODO's visible checks already catch it.
Each entry: (assignment, answer grade_id, what the reading is, source of the answer cell[, shown]).
"""

B, D = "01_continuous_batching", "02_decode_scheduling"

_ENSURE_HEAD = '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 3")
def _ensure_capacity(self, challenger: RequestState) -> int | None:
    """Admit challenger, preempting one lower-priority preemptible request if that makes room."""
    if challenger.admitted:
        challenger.status = "running"
        return None
    if challenger.required_blocks <= self.free_kv_blocks:
        self.free_kv_blocks -= challenger.required_blocks
        challenger.admitted, challenger.status = True, "running"
        return None
    mine = self._effective_priority(challenger)
'''
_ENSURE_TAIL = '''    if victim is None:
        return None
    victim.admitted, victim.status = False, "preempted"
    victim.preemptions += 1
    self.free_kv_blocks += victim.required_blocks - challenger.required_blocks
    challenger.admitted, challenger.status = True, "running"
    return victim.request_id
'''


def _key(constant: str) -> str:
    return f'''@add_to_class(DecodeSchedulerSim)
@todo("TODO 2")
def _schedule_key(self, req: RequestState) -> tuple[int, int, int, int, int, int]:
    """Key of deadline slack, phase, cache, effective priority and stable fields; smaller runs first."""
    if self.policy != "deadline" or req.deadline_step is None:
        deadline_slack = {constant}
    else:
        deadline_slack = req.deadline_step - self.clock - self._remaining_steps(req)
    phase_rank = 0 if req.phase == "prefill" else 1
    cache_rank = 0 if req.cache_hit else 1
    return (deadline_slack, phase_rank, cache_rank, -self._effective_priority(req), req.total_len, req.request_id)
'''


_STEP_HEAD = '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 4")
def step(self) -> Dict[str, int | str] | None:
    """Pick and advance one active request, recording its event and the others' waiting."""
    candidates = [req for req in self.queue if not req.done]
    if not candidates:
        return None
'''
_STEP_TAIL = '''    if chosen is None:
        return None  # nobody fits: this step stalls
    for req in candidates:
        if req is not chosen:
            req.wait_steps += 1
    if chosen.phase == "prefill":
        chosen.phase = "decode"
        action = "prefill_to_decode"
    else:
        chosen.generated_len += 1
        action = "finish" if chosen.done else "decode_one_step"
        if chosen.done and chosen.admitted:
            self.free_kv_blocks += chosen.required_blocks
            chosen.admitted = False
            chosen.status = "finished"
    return self._record_event(chosen, action, preempted_request_id)
'''


OPEN = [
    (B, "todo2", "a message without the id (Counter of serves)", '''@todo("TODO 2")
def check_served_exactly(jobs: list[dict], trace: list[dict]) -> None:
    """Raise ValueError unless every job is served exactly `tokens` times and nothing else is served."""
    from collections import Counter
    served = Counter(job_id for row in trace for job_id in row["served"])
    if served != Counter({job["id"]: job["tokens"] for job in jobs}):
        raise ValueError("the trace does not serve each job exactly its tokens")
'''),
    (B, "todo4", "validates its input, and uses heapq from the set-up cell", '''@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    if type(slots) is not int or slots < 1 or any(type(t) is not int or t < 1 for t in tokens):
        raise ValueError("tokens must be positive ints and slots a positive int")
    if not tokens:
        return 0
    if not continuous:
        return sum(max(tokens[i:i + slots]) for i in range(0, len(tokens), slots))
    free_at = [0] * slots
    for need in tokens:
        heapq.heapreplace(free_at, free_at[0] + need)
    return max(free_at)
'''),
    (B, "todo4", "imports what it needs inside its own cell", '''import bisect


@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    if not continuous:
        return sum(max(tokens[i:i + slots]) for i in range(0, len(tokens), slots))
    free_at = [0] * min(slots, len(tokens))
    for need in tokens:
        start = free_at.pop(0)
        bisect.insort(free_at, start + need)
    return max(free_at, default=0)
'''),
    (D, "todo2", 'float("inf") for the constant', _key('float("inf")')),
    (D, "todo2", "another large constant", _key("10 ** 6")),
    (D, "todo3", "excludes the challenger, does not test done, takes min() of the victims", _ENSURE_HEAD + '''    victims = [req for req in self.queue if req is not challenger and req.admitted and req.preemptible
               and self._effective_priority(req) < mine
               and self.free_kv_blocks + req.required_blocks >= challenger.required_blocks]
    victim = min(victims, key=lambda req: (self._effective_priority(req), -req.required_blocks, req.request_id), default=None)
''' + _ENSURE_TAIL),
]

RULED_OUT = [
    (B, "todo2", "counts the ticks a job is served in, not its serves", '''@todo("TODO 2")
def check_served_exactly(jobs: list[dict], trace: list[dict]) -> None:
    """Raise ValueError unless every job is served exactly `tokens` times and nothing else is served."""
    ticks = {job["id"]: set() for job in jobs}
    for row in trace:
        for job_id in row["served"]:
            if job_id not in ticks:
                raise ValueError(f"{job_id} is not a job")
            ticks[job_id].add(row["tick"])
    for job in jobs:
        if len(ticks[job["id"]]) != job["tokens"]:
            raise ValueError(f"job {job['id']}")
''', True),
    (B, "todo4", "uses pd, which a cell the grader does not run imports", '''@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    if not continuous:
        return int(sum(pd.Series(tokens[i:i + slots]).max() for i in range(0, len(tokens), slots)))
    free_at = [0] * min(slots, len(tokens))
    for need in tokens:
        heapq.heapreplace(free_at, free_at[0] + need)
    return max(free_at, default=0)
''', False),  # the notebook imports pd in a cell the grader does not run: only the text can say so
    (D, "todo3", "the victim's blocks alone must cover the challenger", _ENSURE_HEAD + '''    victims = [req for req in self.queue if req.admitted and not req.done and req.preemptible
               and self._effective_priority(req) < mine and req.required_blocks >= challenger.required_blocks]
    victim = min(victims, key=lambda req: (self._effective_priority(req), -req.required_blocks, req.request_id), default=None)
''' + _ENSURE_TAIL, True),
    (D, "todo3", "the best victim by the tie-breaks, then gives up if it makes no room", _ENSURE_HEAD + '''    victims = [req for req in self.queue if req.admitted and not req.done and req.preemptible
               and self._effective_priority(req) < mine]
    victim = min(victims, key=lambda req: (self._effective_priority(req), -req.required_blocks, req.request_id), default=None)
    if victim is not None and self.free_kv_blocks + victim.required_blocks < challenger.required_blocks:
        victim = None
''' + _ENSURE_TAIL, True),
    # Two readings of "call self._ensure_capacity on each" that the visible checks once missed (issue 39).
    (D, "todo4", "the chosen request waits one more step too", _STEP_HEAD + '''    chosen = None
    preempted_request_id = None
    for candidate in sorted(candidates, key=self._schedule_key):
        preempted_request_id = self._ensure_capacity(candidate)
        if candidate.admitted:
            chosen = candidate
            chosen.wait_steps += 1
            break
''' + _STEP_TAIL, True),
    (D, "todo4", "_ensure_capacity on every candidate, then the first admitted", _STEP_HEAD + '''    ordered = sorted(candidates, key=self._schedule_key)
    returned = {req.request_id: self._ensure_capacity(req) for req in ordered}
    chosen = next((req for req in ordered if req.admitted), None)
    preempted_request_id = returned[chosen.request_id] if chosen is not None else None
''' + _STEP_TAIL, True),
]
