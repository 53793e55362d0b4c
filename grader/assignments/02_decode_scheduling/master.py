# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] key="md-02-decode-scheduling"
# # 02 · Decode Scheduling |
#
# *简体中文版 | Chinese edition:* [zh/02_decode_scheduling.ipynb](zh/02_decode_scheduling.ipynb)
#
# **Level:** intermediate (TODO 3 carries most of the reasoning; the other three TODOs are short) · **Runs on:** CPU only · **Tags:** inference, decoding, scheduling
#
# Notebook 01 served many requests at once and gave each free slot to the next request in arrival order.
# But the requests an engine holds are not alike: some have just finished reading their prompt (*prefill*),
# some are producing one token per step (*decode*), some are about to finish. A **decode scheduler** decides,
# step by step, which request moves next, and what to do when the one it wants does not fit in the KV cache.
#
# In this notebook you build `DecodeSchedulerSim`, a small simulator that answers two questions:
#
# 1. **Ordering.** Under a fixed priority, under *aging* and under *deadlines*, who is served first, who
#    waits, and who starves?
# 2. **Capacity.** When a more urgent request has no KV blocks, may the scheduler *preempt* a less urgent one, and
#    how does the victim resume without losing its progress?
#
# **Before you start** you should know two things. *Prefill* reads the whole prompt in one pass and fills
# the KV cache; *decode* then produces one token per step, each step depending on the token before, so the
# tokens of one request cannot be computed in parallel. And what continuous batching is: notebook
# `01_continuous_batching`.
#
# **How this notebook works.** Read and run the cells in order. The four exercises are marked
# **TODO 1** to **TODO 4**; each is one cell that adds one method to the class, followed by a cell of
# visible checks. When a check fails, its message names the rule that broke and shows the expected and the
# actual value. Your grade comes from hidden tests that replay each TODO on many more scenarios,
# *one TODO at a time*: a bug in TODO 3 costs points on TODO 3 only. So keep each TODO cell
# self-contained: for each TODO the grader runs only the two set-up cells (the first code cell, which imports
# `lab`, `Dict` and the names taken from `lab`, and the cell that defines `DecodeSchedulerSim`) and your TODO
# cell, with the course's reference for the other TODOs. A TODO cell may use those names, but not `pd`, `plt`
# or anything another cell defines; import anything else inside the TODO cell itself.
#
# **What layout changes cost.** Only the TODO cells are graded, found by the `grade_id` that nbgrader keeps in each cell's metadata, not by a cell `id`: code in any other cell is
# not. Scratch cells, moved cells, and a check cell deleted, duplicated or edited cost nothing: the course's own
# checks are used. If a TODO cell appears twice, the copy further down is graded (the kernel ran it last). A
# deleted TODO cell, or a TODO function renamed, scores zero on that TODO only.

# %% [markdown] key="md-glossary"
# **Glossary | 术语表.** The terms of this notebook and those of its Chinese edition.
#
# | English | 中文 | English | 中文 |
# |---|---|---|---|
# | prefill / decode | 预填充 / 解码 | continuous batching | 连续批处理 |
# | waiting / admitted / running | 等待 / 已准入 / 运行中 | preempted / finished | 被抢占 / 已完成 |
# | admission | 准入 | preemption, victim | 抢占、被抢占者（victim） |
# | KV cache block | KV 块 | ordering key | 排序键 |
# | fixed priority / aging | 固定优先级 / 老化 | effective priority | 有效优先级 |
# | deadline slack | 截止时间余量 | starvation | 饥饿 |
# | head-of-line blocking | 队头阻塞 | tie-breaker | 辅助排序字段 |
# | recompute / swap | 重算 / 换出 | slot utilization | 槽位利用率 |
# | prompt | 提示词 | batch / latency | 批 / 时延 |

# %% nbgrader={"grade": false, "grade_id": "setup_imports", "locked": true, "schema_version": 3, "solution": false} tags=["grading-setup"]
# <course set-up: imports lab, installing it if missing>
from typing import Dict

from lab import DecodeSchedulerBase, RequestState, add_to_class, todo
from lab.checks import expect, expect_raises, expect_true, passed

# %% key="code-imports"
import matplotlib.pyplot as plt
import pandas as pd

import lab

lab.set_language("en")  # messages and plot labels of this edition

# %matplotlib inline

# %% [markdown] key="md-step-1-decode"
# ## Step 1: why decode scheduling |
#
# Start with the worked example from `lab`: 4 requests that all arrive at tick 0 and need 1, 4, 2 and 3
# tokens, served on 2 slots. *Static* batching keeps a group until all of it is done; *continuous*
# batching refills a freed slot at the next tick.

# %% key="code-example"
example = lab.FOUR_ON_TWO
print(f"{lab.tr(example.name)} | tokens: {[job['tokens'] for job in example.jobs]} | slots: {example.slots}")
lab.table(lab.compare_policies(example.jobs, example.slots))

# %% key="code-slots"
fig = lab.plot_slots(example.jobs, example.slots)

# %% [markdown] key="md-four-on-two-reading"
# Both policies serve the same 10 tokens. Static batching needs 7 ticks (utilization 10/14 = 5/7), while
# continuous batching needs 6 (10/12 = 5/6): throughput improves by the ratio 7/6, not by the difference
# in percentage points. The hatched cells are idle slot-ticks: request 0 finished after one tick, but its
# slot stayed empty until the whole group was done.
#
# Continuous batching decides *when* a slot is refilled. It does not decide *who* gets it. Once requests
# differ in phase, cache hits, business priority and deadlines, that choice is a policy of its own, and
# it changes waits, completion order and fairness. That is this notebook's subject.
#
# > **Teaching model.** Here one scheduler step advances exactly **one** request by one unit of work
# > (in notebook 01, a tick served every request in a slot).
# > Real engines (vLLM, SGLang, nano-vllm) advance a whole batch per step under budgets on sequences and
# > batched tokens. The ordering and preemption rules you write are the same kind of decision they make;
# > the step counts are not hardware time.

# %% [markdown] key="md-step-2-request"
# ## Step 2: the request lifecycle |
#
# Treat each request as a small state object. The normal path is
# **waiting → admitted → prefill → decode → finished**. Under capacity pressure an admitted request can be
# **preempted**: it gives its KV blocks back and later is **admitted again**, resuming from the phase and
# the number of generated tokens it had saved.

# %% key="code-lifecycle"
fig = lab.plot_lifecycle()

# %% [markdown] key="md-request-fields"
# | Field of `RequestState` | Role in this notebook | Effect on the next choice |
# |---|---|---|
# | `phase`, `cache_hit`, `priority` | the main fields of the ordering key | who gets the next step |
# | `total_len`, `request_id` | stable tie-breakers | order only when everything before is equal |
# | `wait_steps` | how long a request has waited | counted under every policy (the given part of `step` adds 1 to each active request it does not choose); raises priority only under `aging` |
# | `required_blocks`, scheduler's `free_kv_blocks` | capacity need vs capacity left | whether a request can be admitted now |
# | `deadline_step`, `preemptible` | urgency; whether it may be paused | order under `deadline`; who may be preempted |
# | `generated_len`, `status`, `preemptions` | progress and history | explain completion order and fairness |
#
# The active set is the requests that are not `done`. Each step picks **one** of them and advances it:
# a prefill step moves it to decode; a decode step generates one token; the token that reaches
# `max_new_tokens` finishes it and frees its blocks. Everyone else in the active set waits one more step.
#
# `lab.DecodeSchedulerBase` already holds the parts you do not write: the constructor and its checks,
# `_effective_priority`, `_remaining_steps`, event recording and the `run` loop with its `max_steps` guard.
#
# `RequestState` is given, unchanged, in `lab/decode.py`. Its fields, in order, with their
# defaults (the first 3 have none and must be given):

# %% key="code-request-fields"
import dataclasses

pd.DataFrame([{"field": f.name, "default": "required" if f.default is dataclasses.MISSING else repr(f.default)}
              for f in dataclasses.fields(RequestState)]).set_index("field")

# %% nbgrader={"grade": false, "grade_id": "setup_class", "locked": true, "schema_version": 3, "solution": false} tags=["grading-setup"]
class DecodeSchedulerSim(DecodeSchedulerBase):
    """Watch requests move between prefill and decode, one event per step."""


sim = DecodeSchedulerSim(policy="aging", free_kv_blocks=8, aging_interval=4)
demo = RequestState(request_id=7, prompt_len=5, max_new_tokens=3, priority=1, wait_steps=9)
print("effective priority under aging:", sim._effective_priority(demo), "(= 1 + 9 // 4)")
print("remaining steps:", sim._remaining_steps(demo), "(1 prefill + 3 tokens)")

# %% [markdown] key="md-step-3-ordering"
# ## Step 3: the ordering key |
#
# Candidates are sorted by a key; the **smallest key moves first**. Fields earlier in the key decide first:
#
# 1. **phase**: prefill (0) before decode (1), so a new request's prefill runs as early as possible. This
#    order is nano-vllm's *prefill-first* choice; vLLM V1 does the opposite and serves running requests before
#    waiting ones (see *What real engines do*). In this model a prefill step emits no token: the first token
#    comes at the request's first decode step, one step after its prefill at the earliest. That is a
#    simplification of ours: in nano-vllm (`Scheduler.postprocess` in `nanovllm/engine/scheduler.py`) and in
#    vLLM V1, the step that computes a prompt's last token also samples the first output token, as in
#    notebook 03;
# 2. **cache hit**: a hit (0) before a miss (1), because it is cheaper;
# 3. **effective priority, negated**: a **larger** number is more urgent and gives a smaller key, as in
#    SGLang's default. vLLM's priority policy reads it the other way: a smaller number goes first;
# 4. **total length** (`prompt_len + generated_len`), then **request id**: stable tie-breakers.
#
# The three policies differ only in how urgency enters:
#
# | policy | effective priority | extra first field `deadline_slack` |
# |---|---|---|
# | `fixed_priority` | `priority` | a constant: never changes the order |
# | `aging` | `priority + wait_steps // aging_interval` | a constant |
# | `deadline` | `priority` | `deadline_step − clock − remaining steps` for requests with a deadline; a large constant for those without |
#
# A negative slack means the deadline can no longer be met; the event records it as `deadline_missed`.
#
# **Preemption rule.** The scheduler tries the candidates in key order until one is admitted (TODO 4). When
# the candidate being admitted, the *challenger*, needs more KV blocks than are free, the scheduler may
# preempt **one** admitted request, and only if it is `preemptible`, has a **lower effective priority** than
# the challenger, and makes room: its blocks, added to the free ones, cover the challenger's need. So the
# challenger need not be the first in the order: a later candidate may preempt when none before it could be
# admitted. Among several such victims the scheduler takes the lowest effective priority, then the one holding
# the most blocks, then the lowest id. A victim keeps its phase and its `generated_len`: when it is admitted
# again, it resumes where it stopped.
#
# - **Which engine does this.** Preempting a running request to admit a more urgent *waiting* one is what
#   SGLang's priority scheduling does: `PrefillAdder.preempt_to_schedule` in
#   `python/sglang/srt/managers/schedule_policy.py`, switched on by `--enable-priority-scheduling` (as of
#   November 2026). vLLM V1 never preempts for a waiting request; it preempts only when a *running* request
#   cannot get a KV block to grow (see *What real engines do*).
# - **Simplified here:** one victim only (SGLang may take several until the new request fits); no
#   priority-gap threshold (SGLang preempts only when the gap exceeds
#   `--priority-scheduling-preemption-threshold`, default 10, in `python/sglang/srt/server_args.py`); and
#   a running request never grows, so growth never triggers a preemption.
# - **Under `deadline`:** the key orders by slack, but preemption still compares **effective priority**,
#   which ignores slack. The rule "preempt only when the challenger is more urgent" is read as "has a
#   strictly higher effective priority". Slack decides who goes *next* among the requests that fit; it
#   never lets a late request evict running work of a higher business priority.
#
# ### Worked example: reading a key by hand
# Two waiting requests under `aging` with interval 2: request 1 has priority 1 and has waited 6 steps,
# request 2 has priority 3 and has not waited. Their effective priorities are 1 + 6 // 2 = 4 and 3, so
# request 1 sorts first although its business priority is lower. Under `fixed_priority` the same two
# requests sort the other way.

# %% key="code-aging-example"
for policy in ("fixed_priority", "aging"):
    s = DecodeSchedulerSim(policy=policy, aging_interval=2)
    a = RequestState(1, 4, 1, priority=1, cache_hit=True, wait_steps=6)
    b = RequestState(2, 4, 1, priority=3, cache_hit=True)
    print(f"{policy:15s} effective priorities: req1={s._effective_priority(a)}, req2={s._effective_priority(b)}")

# %% [markdown] key="md-step-4-implement"
# ## Step 4: implement the scheduler |
#
# Fill in the four cells below. Each adds one method to `DecodeSchedulerSim` with `@add_to_class`, so one
# TODO is one cell. Leave the signature, the docstring and the given lines as they are, and replace the two
# lines `# YOUR CODE HERE` and `raise NotImplementedError()` with your code: delete the `raise`, since the
# given lines below it run only once it is gone. The checks under each cell run your code on the rules above.
#
# | TODO | method | what it must do | checked by |
# |---|---|---|---|
# | TODO 1 | `enqueue` | build the `RequestState` and add it to the queue | the input contract |
# | TODO 2 | `_schedule_key` | order by fixed priority, aging or deadline | ordering and fairness |
# | TODO 3 | `_ensure_capacity` | admit, or preempt a safe victim | capacity and preemption invariants |
# | TODO 4 | `step` | pick, admit, advance, record | state, capacity, deadline and events |

# %% [markdown] key="md-todo-1-enqueue"
# ### TODO 1 · `enqueue`: register a request
#
# **Build:** inside `enqueue`, create the `RequestState` for the new request and store it in `request`.
# Keep every argument (lengths, priority, cache hit, blocks, deadline, preemptible). An argument the caller
# leaves out takes its default from the signature of `enqueue`. A new request starts as `waiting`, in
# `prefill`, with nothing generated, not admitted. Create a new `RequestState` on every call. The given lines
# above your code already reject bad input with a `ValueError`, before anything is queued; the given line
# below appends your request. Replace `raise NotImplementedError()` with your code: while that line is
# there, the given line below it never runs.
#
# **Check:** run the test cell below. *Worked example:* `RequestState(1, 2, 2)` is request 1 with a
# 2-token prompt that will generate 2 tokens; every other field has the default shown in Step 2.

# %% nbgrader={"grade": false, "grade_id": "todo1", "locked": false, "schema_version": 3, "solution": true}
@add_to_class(DecodeSchedulerSim)
@todo("TODO 1")
def enqueue(self, request_id: int, prompt_len: int, max_new_tokens: int = 2, priority: int = 0,
            cache_hit: bool = False, required_blocks: int = 1, deadline_step: int | None = None,
            preemptible: bool = True) -> None:
    """Validate and register a request; it starts in the prefill phase."""
    self._check_new_request(request_id, prompt_len, max_new_tokens, priority, cache_hit,
                            required_blocks, deadline_step, preemptible)
    ### BEGIN SOLUTION
    request = RequestState(
        request_id=request_id,
        prompt_len=prompt_len,
        max_new_tokens=max_new_tokens,
        priority=priority,
        cache_hit=cache_hit,
        required_blocks=required_blocks,
        deadline_step=deadline_step,
        preemptible=preemptible,
    )
    ### END SOLUTION
    self.queue.append(request)


# %% nbgrader={"grade": true, "grade_id": "todo1_tests", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def test_todo1_enqueue_contract():
    """A new request enters in prefill and keeps its input contract."""
    sim = DecodeSchedulerSim()
    sim.enqueue(request_id=1, prompt_len=2, max_new_tokens=2, priority=2, cache_hit=True)
    req = sim.queue[0]
    expect((req.phase, req.generated_len), ("prefill", 0), "TODO 1: a new request starts in prefill with nothing generated")
    expect((req.prompt_len, req.max_new_tokens), (2, 2), "TODO 1: prompt_len and max_new_tokens are kept")
    expect((req.required_blocks, req.admitted), (1, False), "TODO 1: default blocks, not admitted yet")


def test_todo1_keeps_every_argument():
    sim = DecodeSchedulerSim()
    sim.enqueue(5, 7, max_new_tokens=3, priority=4, cache_hit=True, required_blocks=2, deadline_step=9, preemptible=False)
    got = sim.queue[-1]
    want = RequestState(5, 7, 3, priority=4, cache_hit=True, required_blocks=2, deadline_step=9, preemptible=False)
    expect(got, want, "TODO 1: every argument is stored and the rest keep their defaults")
    expect(got.status, "waiting", "TODO 1: a new request is waiting")


def test_todo1_defaults_and_new_objects():
    sim = DecodeSchedulerSim()
    sim.enqueue(3, 4)
    sim.enqueue(8, 1, priority=2)
    expect(sim.queue[0], RequestState(3, 4, 2), "TODO 1: left-out arguments take enqueue's defaults (max_new_tokens=2)")
    expect([req.request_id for req in sim.queue], [3, 8], "TODO 1: requests are appended in the order they arrive")
    expect_true(sim.queue[0] is not sim.queue[1], "TODO 1: every call creates a new RequestState")


def test_todo1_input_guards():
    """Bad requests are rejected before TODO 1 runs."""
    sim = DecodeSchedulerSim()
    for kwargs in ({"request_id": 1, "prompt_len": 0}, {"request_id": 1, "prompt_len": 1, "max_new_tokens": 0},
                   {"request_id": 1, "prompt_len": 1, "required_blocks": 0}):
        expect_raises(ValueError, lambda: sim.enqueue(**kwargs), f"TODO 1: enqueue({kwargs}) must raise ValueError")
    sim.enqueue(1, 1)
    expect_raises(ValueError, lambda: sim.enqueue(1, 1), "TODO 1: a duplicate request_id must raise ValueError")
    expect(len(sim.queue), 1, "TODO 1: rejected requests are not queued")


test_todo1_enqueue_contract()
test_todo1_keeps_every_argument()
test_todo1_defaults_and_new_objects()
test_todo1_input_guards()
passed("TODO 1", 4)
### BEGIN HIDDEN TESTS
def test_todo1_hidden_order_and_identity():
    sim = DecodeSchedulerSim(free_kv_blocks=3)
    for rid in (9, 2, 5):
        sim.enqueue(rid, rid + 1, max_new_tokens=rid, priority=-rid)
    assert [r.request_id for r in sim.queue] == [9, 2, 5]
    assert [r.priority for r in sim.queue] == [-9, -2, -5]
    assert all(r.preemptions == 0 and r.wait_steps == 0 and r.deadline_step is None for r in sim.queue)
    assert len({id(r) for r in sim.queue}) == 3 and sim.free_kv_blocks == 3


test_todo1_hidden_order_and_identity()
### END HIDDEN TESTS

# %% [markdown] key="md-todo-2-schedule"
# ### TODO 2 · `_schedule_key`: fixed priority, aging and deadline
#
# **Build:** compute `deadline_slack`, the first field of the key; the scheduler runs the request with the
# smallest key first. Under the `deadline` policy, for a request with a `deadline_step`, it is
# `deadline_step − clock − remaining steps` (use `self._remaining_steps`). Otherwise it is one constant, larger
# than the slack of any request in the course's scenarios, so that it does not change the order: use
# `1_000_000_000`, the reference's constant, an int, as the key's return annotation (a tuple of ints) says (not
# `float("inf")`). The hidden tests compare only the order your keys give, and with this constant it is the
# reference's order even for a deadline so far ahead that its slack exceeds the constant (`_check_new_request`
# accepts any deadline after the clock): that request then sorts after those without a deadline, as in the
# reference. The rest of the key is given: phase (prefill first), then cache hit (a hit first), then
# effective priority (larger first; `self._effective_priority` adds `wait_steps // aging_interval` under
# `aging` and nothing under the other policies), then total length (shorter first) and request id (lower
# first) break the remaining ties. Replace `raise NotImplementedError()` with your code: while that line is
# there, the given lines below it never run.
#
# **Check:** the test cell below; it builds its requests with `RequestState(...)` directly, so it needs this
# TODO only. *Worked example:* under `deadline`, at clock 0, a request in prefill with 1 token to generate
# and `deadline_step=1` has slack 1 − 0 − 2 = −1: it is already late, and it sorts before a request with
# slack 15.

# %% nbgrader={"grade": false, "grade_id": "todo2", "locked": false, "schema_version": 3, "solution": true}
@add_to_class(DecodeSchedulerSim)
@todo("TODO 2")
def _schedule_key(self, req: RequestState) -> tuple[int, int, int, int, int, int]:
    """Key of deadline slack, phase, cache, effective priority and stable fields; smaller runs first."""
    ### BEGIN SOLUTION
    deadline_slack = 1_000_000_000
    if self.policy == "deadline" and req.deadline_step is not None:
        deadline_slack = req.deadline_step - self.clock - self._remaining_steps(req)
    ### END SOLUTION
    phase_rank = 0 if req.phase == "prefill" else 1
    cache_rank = 0 if req.cache_hit else 1
    return (deadline_slack, phase_rank, cache_rank, -self._effective_priority(req), req.total_len, req.request_id)


# %% nbgrader={"grade": true, "grade_id": "todo2_tests", "locked": true, "points": 3, "schema_version": 3, "solution": false}
def sim_with(*requests, **sim_kwargs):
    """A scheduler holding these RequestStates, built directly so that this check needs TODO 2 only."""
    sim = DecodeSchedulerSim(**sim_kwargs)
    sim.queue.extend(requests)
    return sim


def test_todo2_decision_order():
    """Phase beats cache and priority; cache beats priority; then priority."""
    sim = sim_with(RequestState(1, 4, 1, priority=0, cache_hit=False),
                   RequestState(2, 4, 1, priority=9, cache_hit=True, phase="decode"))
    expect_true(sim._schedule_key(sim.queue[0]) < sim._schedule_key(sim.queue[1]),
                "TODO 2: a prefill request sorts before a decode request, whatever its cache or priority",
                (sim._schedule_key(sim.queue[0]), sim._schedule_key(sim.queue[1])))
    sim = sim_with(RequestState(1, 4, 1, priority=1, cache_hit=False), RequestState(2, 4, 1, priority=1, cache_hit=True))
    expect_true(sim._schedule_key(sim.queue[1]) < sim._schedule_key(sim.queue[0]),
                "TODO 2: with equal phase, a cache hit sorts first")
    sim = sim_with(RequestState(1, 4, 1, priority=1, cache_hit=True), RequestState(2, 4, 1, priority=3, cache_hit=True))
    expect_true(sim._schedule_key(sim.queue[1]) < sim._schedule_key(sim.queue[0]),
                "TODO 2: with equal phase and cache, the higher priority sorts first")


def test_todo2_wait_steps_is_observation_not_priority():
    """Under fixed_priority, waiting does not change the key."""
    first, second = RequestState(1, 4, 1, priority=1, cache_hit=True), RequestState(2, 4, 1, priority=1, cache_hit=True)
    sim = sim_with(first, second)
    key_before = sim._schedule_key(first)
    first.wait_steps, second.wait_steps = 50, 0
    expect(sim._schedule_key(first), key_before, "TODO 2: wait_steps must not change the key under fixed_priority")
    expect_true(sim._schedule_key(first) < sim._schedule_key(second), "TODO 2: ties fall back to length, then id")


def test_todo2_ties_fall_to_length_then_id():
    sim = sim_with(RequestState(1, 6, 1), RequestState(2, 4, 1), RequestState(3, 4, 1))
    expect([req.request_id for req in sorted(sim.queue, key=sim._schedule_key)], [2, 3, 1],
           "TODO 2: with all else equal, the shorter request sorts first, then the lower id")


def test_todo2_aging_changes_effective_priority():
    """Aging lifts a request that has waited."""
    sim = sim_with(RequestState(1, 4, 1, priority=1, cache_hit=True, wait_steps=6),
                   RequestState(2, 4, 1, priority=3, cache_hit=True), policy="aging", aging_interval=2)
    expect(sim._effective_priority(sim.queue[0]), 4, "TODO 2: effective priority under aging is 1 + 6 // 2")
    expect_true(sim._schedule_key(sim.queue[0]) < sim._schedule_key(sim.queue[1]),
                "TODO 2: under aging, the request that waited now sorts first")


def test_todo2_deadline_slack_orders_first_only_under_deadline():
    for policy, urgent_first in (("deadline", True), ("fixed_priority", False)):
        sim = sim_with(RequestState(1, 4, 4, priority=9, deadline_step=20),
                       RequestState(2, 2, 1, priority=0, deadline_step=1), policy=policy)
        urgent_sorts_first = sim._schedule_key(sim.queue[1]) < sim._schedule_key(sim.queue[0])
        expect(urgent_sorts_first, urgent_first,
               f"TODO 2: under {policy}, does the request with the tighter deadline sort first?")
    sim = sim_with(RequestState(2, 2, 1, deadline_step=1), policy="deadline")
    expect(sim._schedule_key(sim.queue[0])[0], -1, "TODO 2: slack = deadline_step - clock - remaining steps")
    sim = sim_with(RequestState(1, 3, 2, priority=9), RequestState(2, 3, 50, deadline_step=900), policy="deadline")
    expect_true(sim._schedule_key(sim.queue[1]) < sim._schedule_key(sim.queue[0]),
                "TODO 2: under deadline, a request without a deadline sorts after any request with one")


test_todo2_decision_order()
test_todo2_wait_steps_is_observation_not_priority()
test_todo2_ties_fall_to_length_then_id()
test_todo2_aging_changes_effective_priority()
test_todo2_deadline_slack_orders_first_only_under_deadline()
passed("TODO 2", 5)
### BEGIN HIDDEN TESTS
def test_todo2_hidden_no_deadline_sorts_after_any_deadline():
    sim = sim_with(RequestState(1, 3, 2, priority=9), RequestState(2, 3, 50, priority=0, deadline_step=900),
                   policy="deadline")
    sim.clock = 5
    assert sim._schedule_key(sim.queue[1]) < sim._schedule_key(sim.queue[0])
    sim.queue[1].phase = "decode"
    assert sim._schedule_key(sim.queue[1])[0] == 900 - 5 - 50


test_todo2_hidden_no_deadline_sorts_after_any_deadline()
### END HIDDEN TESTS

# %% [markdown] key="md-todo-3-ensure"
# ### TODO 3 · `_ensure_capacity`: admit, or preempt a safe victim
#
# **Build:** make room for `challenger` and return the `request_id` you preempted, or `None`.
#
# 1. An already admitted challenger just keeps running: set its status to `"running"`, return `None`.
# 2. If its `required_blocks` fit in `free_kv_blocks` (an exact fit counts), admit it: take the blocks, set
#    `admitted=True` and status `"running"`, return `None`.
# 3. Otherwise look for a victim. A victim is an admitted request that is `preemptible`, has a strictly lower
#    effective priority than the challenger (`self._effective_priority`, under every policy), and makes
#    room: the free blocks plus the victim's own blocks cover the challenger's `required_blocks`. Among
#    several victims, take the lowest effective priority, then the one holding the most blocks, then the
#    lowest `request_id`. If there is none, change nothing and return `None` (the challenger stays out).
# 4. Preempt the victim: `admitted=False`, status `"preempted"`, `preemptions += 1`, its blocks go back
#    to the pool. Do **not** touch its `phase` or `generated_len`. Then admit the challenger as in 2.
#
# The challenger itself is never a victim, since it is not admitted. Nor is a finished request: `step` gives
# back a request's blocks and clears `admitted` when it finishes, so testing `done` as well changes nothing.
# Look for victims in `self.queue` only: every request enqueued stays in it, so every admitted request is there.
# Effective priorities are compared as they are when `step` calls this method, before the given lines of `step`
# add this step's waits: under `aging`, this step's extra waited step does not count yet.
#
# **Check:** the test cell below; it builds and admits its requests by hand with `RequestState(...)`, so
# it needs this TODO only. *Worked example:* with 2 free blocks, request 1 (priority 1, 2 blocks) is
# admitted and holds both. Request 2 (priority 9, 2 blocks) arrives: 0 blocks are free, request 1 is
# preemptible and less urgent, and giving back its 2 blocks makes room, so it is the victim.

# %% nbgrader={"grade": false, "grade_id": "todo3", "locked": false, "schema_version": 3, "solution": true}
@add_to_class(DecodeSchedulerSim)
@todo("TODO 3")
def _ensure_capacity(self, challenger: RequestState) -> int | None:
    """Admit challenger, preempting one lower-priority preemptible request if that makes room."""
    ### BEGIN SOLUTION
    if challenger.admitted:
        challenger.status = "running"
        return None
    if challenger.required_blocks <= self.free_kv_blocks:
        self.free_kv_blocks -= challenger.required_blocks
        challenger.admitted = True
        challenger.status = "running"
        return None
    challenger_priority = self._effective_priority(challenger)
    victims = [req for req in self.queue
               if req.admitted and not req.done and req.preemptible
               and self._effective_priority(req) < challenger_priority]
    victims.sort(key=lambda req: (self._effective_priority(req), -req.required_blocks, req.request_id))
    victim = next((req for req in victims
                   if self.free_kv_blocks + req.required_blocks >= challenger.required_blocks), None)
    if victim is None:
        return None
    victim.admitted = False
    victim.status = "preempted"
    victim.preemptions += 1
    self.free_kv_blocks += victim.required_blocks - challenger.required_blocks
    challenger.admitted = True
    challenger.status = "running"
    return victim.request_id
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo3_tests", "locked": true, "points": 3, "schema_version": 3, "solution": false}
def admitted_sim(free_kv_blocks, *running, **sim_kwargs):
    """A scheduler whose `running` RequestStates are already admitted and decoding, built without TODO 1 or 4."""
    sim = DecodeSchedulerSim(free_kv_blocks=free_kv_blocks, **sim_kwargs)
    for req in running:
        req.admitted, req.status, req.phase = True, "running", "decode"
        sim.free_kv_blocks -= req.required_blocks
        sim.queue.append(req)
    return sim


def arrive(sim, req):
    """Add a waiting request to the queue; return it."""
    sim.queue.append(req)
    return req


def test_todo3_admits_when_blocks_are_free():
    sim = admitted_sim(3)
    req = arrive(sim, RequestState(1, 4, 2, required_blocks=2))
    expect(sim._ensure_capacity(req), None, "TODO 3: admitting without preemption returns None")
    expect((req.admitted, req.status, sim.free_kv_blocks), (True, "running", 1),
           "TODO 3: admission takes required_blocks and sets admitted/running")
    expect(sim._ensure_capacity(req), None, "TODO 3: an admitted request just keeps running")
    expect(sim.free_kv_blocks, 1, "TODO 3: an admitted request is not charged twice")
    exact = arrive(sim, RequestState(2, 4, 2, required_blocks=1))
    expect((sim._ensure_capacity(exact), exact.admitted, sim.free_kv_blocks), (None, True, 0),
           "TODO 3: an exact fit is admitted: 1 block needed, 1 free")


def test_todo3_preempts_lower_priority_and_keeps_progress():
    victim = RequestState(1, 4, 3, priority=1, required_blocks=2, generated_len=1)
    sim = admitted_sim(2, victim)
    challenger = arrive(sim, RequestState(2, 2, 1, priority=9, required_blocks=2))
    expect(sim._ensure_capacity(challenger), 1, "TODO 3: returns the id of the preempted request")
    expect((victim.admitted, victim.status, victim.preemptions), (False, "preempted", 1),
           "TODO 3: the victim is marked preempted and counted")
    expect((victim.phase, victim.generated_len), ("decode", 1), "TODO 3: the victim keeps its phase and progress")
    expect((challenger.admitted, challenger.status, sim.free_kv_blocks), (True, "running", 0),
           "TODO 3: the victim's blocks go to the challenger")


def test_todo3_protects_non_preemptible_and_more_urgent():
    sim = admitted_sim(2, RequestState(1, 4, 3, priority=1, required_blocks=2, preemptible=False))
    challenger = arrive(sim, RequestState(2, 2, 1, priority=9, required_blocks=2))
    expect(sim._ensure_capacity(challenger), None, "TODO 3: a non-preemptible request is never a victim")
    expect((sim.queue[0].admitted, challenger.admitted, sim.free_kv_blocks), (True, False, 0),
           "TODO 3: when no victim exists, nothing changes")
    sim = admitted_sim(2, RequestState(1, 4, 3, priority=9, required_blocks=2))
    challenger = arrive(sim, RequestState(2, 2, 1, priority=9, required_blocks=2))
    expect(sim._ensure_capacity(challenger), None, "TODO 3: only a strictly lower effective priority may be preempted")


def test_todo3_free_blocks_count_towards_room():
    sim = admitted_sim(2, RequestState(1, 4, 3, priority=1, required_blocks=1))
    challenger = arrive(sim, RequestState(2, 2, 1, priority=9, required_blocks=2))
    expect(sim._ensure_capacity(challenger), 1, "TODO 3: 1 free block plus the victim's 1 block make room for 2")
    expect(sim.free_kv_blocks, 0, "TODO 3: 1 free + 1 given back - 2 taken = 0 free")


def victim_among(*holders, need=2, **sim_kwargs):
    """The id `_ensure_capacity` returns for challenger 99 (priority 5, `need` blocks) when only `holders` hold blocks."""
    sim = admitted_sim(sum(req.required_blocks for req in holders), *holders, **sim_kwargs)
    return sim._ensure_capacity(arrive(sim, RequestState(99, 2, 1, priority=5, required_blocks=need)))


def test_todo3_tie_breaks_between_two_victims():
    expect(victim_among(RequestState(1, 4, 3, priority=2, required_blocks=2), RequestState(2, 4, 3, priority=1, required_blocks=2)),
           2, "TODO 3: of two victims, the lower effective priority goes")
    expect(victim_among(RequestState(1, 4, 3, priority=1, required_blocks=2), RequestState(2, 4, 3, priority=1, required_blocks=3)),
           2, "TODO 3: with equal priority, the victim holding more blocks goes")
    expect(victim_among(RequestState(7, 4, 3, priority=1, required_blocks=2), RequestState(4, 4, 3, priority=1, required_blocks=2)),
           4, "TODO 3: with equal priority and blocks, the lower request_id goes")
    expect(victim_among(RequestState(1, 4, 3, priority=0, required_blocks=1), RequestState(2, 4, 3, priority=1, required_blocks=2)),
           2, "TODO 3: request 1 has the lowest priority but its 1 block makes no room for 2, so request 2 goes")


def test_todo3_effective_priority_under_aging():
    def waited():
        return RequestState(1, 4, 3, priority=1, required_blocks=2, wait_steps=6)
    expect(victim_among(waited(), policy="fixed_priority"), 1, "TODO 3: under fixed_priority, priority 1 is below 5: preempted")
    expect(victim_among(waited(), policy="aging", aging_interval=1), None,
           "TODO 3: under aging, effective priority 1 + 6 // 1 = 7 is not below 5: no victim")


test_todo3_admits_when_blocks_are_free()
test_todo3_preempts_lower_priority_and_keeps_progress()
test_todo3_protects_non_preemptible_and_more_urgent()
test_todo3_free_blocks_count_towards_room()
test_todo3_tie_breaks_between_two_victims()
test_todo3_effective_priority_under_aging()
passed("TODO 3", 6)
### BEGIN HIDDEN TESTS
def test_todo3_hidden_victim_choice():
    sim = admitted_sim(6, RequestState(1, 2, 4, priority=2, required_blocks=1),
                       RequestState(2, 2, 4, priority=1, required_blocks=1),
                       RequestState(3, 2, 4, priority=1, required_blocks=3))
    arrive(sim, RequestState(4, 2, 1, priority=5, required_blocks=3))
    assert sim._ensure_capacity(sim.queue[3]) == 3  # lowest priority, most blocks, and it makes room
    assert sim.free_kv_blocks == 1 and sim.queue[2].status == "preempted"


test_todo3_hidden_victim_choice()
### END HIDDEN TESTS

# %% [markdown] key="md-todo-4-step"
# ### TODO 4 · `step`: pick, admit, advance, record
#
# **Build:** choose this step's request. The candidates are the list `candidates` of the given lines above
# your code: every request of `self.queue` that is not done, admitted ones included (when an admitted one's turn
# comes, `_ensure_capacity` admits nothing and returns `None`, so it is `chosen`). Try the candidates one at a time, in the order of
# `self._schedule_key`: call `self._ensure_capacity(candidate)`, and if the candidate is then `admitted`, set
# `chosen` to it and `preempted_request_id` to the value that call returned. Stop at the first candidate
# admitted: `_ensure_capacity` is not called on the candidates after it, so nobody else is admitted or
# preempted in this step. If no candidate can be admitted, set `chosen = None` yourself (the given lines do not
# define `chosen` beforehand): the given lines then return `None` (the step stalls). When every request is done, the given lines above your code already return
# `None`. Leave `wait_steps` alone: everything after your code is given: it adds one to the `wait_steps` of
# every candidate but `chosen` (the chosen request's `wait_steps` does not change), advances the chosen
# request, gives a finished request's blocks back and records the event. Replace `raise NotImplementedError()`
# with your code: while that line is there, the given lines below it never run.
#
# **A choice real engines do not make.** Trying the next candidate when one does not fit lets a smaller
# request run while a blocked urgent one waits. vLLM V1 and nano-vllm stop instead at the first waiting
# request that does not fit (*head-of-line blocking*): in vLLM's `Scheduler.schedule`
# (`vllm/v1/core/sched/scheduler.py`) the loop over waiting requests ends with `break` when
# `allocate_slots` fails, and nano-vllm's `Scheduler.schedule` (`nanovllm/engine/scheduler.py`) breaks at
# the first waiting sequence that `can_allocate` rejects (as of November 2026). Stopping keeps the queue's
# order and lets the blocked request in as soon as blocks free up; skipping, as here, uses the free blocks
# at once but can bypass a large request for as long as small ones keep arriving. The *Observe* section
# shows it.
#
# **Check:** the test cell below runs the course's whole-scheduler mechanism tests, so unlike the checks of
# TODO 1–3 it also needs TODO 1–3. *Worked example:* a resumed victim is already in `decode`, so its next
# step generates a token; it does **not** redo its prefill.

# %% nbgrader={"grade": false, "grade_id": "todo4", "locked": false, "schema_version": 3, "solution": true}
@add_to_class(DecodeSchedulerSim)
@todo("TODO 4")
def step(self) -> Dict[str, int | str] | None:
    """Pick and advance one active request, recording its event and the others' waiting."""
    candidates = [req for req in self.queue if not req.done]
    if not candidates:
        return None
    ### BEGIN SOLUTION
    chosen = None
    preempted_request_id = None
    for candidate in sorted(candidates, key=self._schedule_key):
        preempted_request_id = self._ensure_capacity(candidate)
        if candidate.admitted:
            chosen = candidate
            break
    ### END SOLUTION
    if chosen is None:
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


# %% nbgrader={"grade": true, "grade_id": "todo4_tests", "locked": true, "points": 4, "schema_version": 3, "solution": false}
def test_todo4_capacity_admission_and_release():
    """A request that does not fit waits; a finished one frees its blocks."""
    sim = DecodeSchedulerSim(free_kv_blocks=2)
    sim.enqueue(1, 4, 1, priority=9, required_blocks=3)
    sim.enqueue(2, 4, 1, priority=1, required_blocks=2)
    expect(sim.step()["request_id"], 2, "TODO 4: request 1 needs 3 blocks of 2, so request 2 goes first")
    expect(sim.free_kv_blocks, 0, "TODO 4: admission takes the blocks")
    expect(sim.step()["action"], "finish", "TODO 4: request 2 finishes on its first decode step")
    expect(sim.free_kv_blocks, 2, "TODO 4: a finished request frees its blocks")


def test_todo4_preemption_and_resume_preserve_progress():
    """A higher priority preempts; the victim resumes with its phase and progress."""
    sim = DecodeSchedulerSim(free_kv_blocks=2)
    sim.enqueue(1, 4, 2, priority=1, required_blocks=2, preemptible=True)
    expect(sim.step()["request_id"], 1, "TODO 4: the only request runs")
    victim = sim.queue[0]
    expect((victim.phase, victim.admitted), ("decode", True), "TODO 4: after prefill the request is admitted, decoding")
    sim.enqueue(2, 2, 1, priority=9, required_blocks=2)
    event = sim.step()
    expect((event["request_id"], event["preempted_request_id"]), (2, 1), "TODO 4: request 2 preempts request 1")
    expect((victim.status, victim.phase, victim.generated_len), ("preempted", "decode", 0),
           "TODO 4: the victim keeps its phase and progress")
    sim.run(max_steps=10)
    expect((victim.done, victim.preemptions), (True, 1), "TODO 4: the victim resumes and finishes")


def test_todo4_non_preemptible_and_deadline_policy():
    """A non-preemptible request is protected; deadline slack orders and misses are recorded."""
    sim = DecodeSchedulerSim(free_kv_blocks=2)
    sim.enqueue(1, 4, 2, priority=1, required_blocks=2, preemptible=False)
    sim.step()
    sim.enqueue(2, 2, 1, priority=9, required_blocks=2)
    event = sim.step()
    expect((event["request_id"], event["preempted_request_id"]), (1, None),
           "TODO 4: request 1 cannot be preempted, so it keeps running")
    deadline_sim = DecodeSchedulerSim(policy="deadline")
    deadline_sim.enqueue(1, 4, 4, priority=9, deadline_step=20)
    deadline_sim.enqueue(2, 2, 1, priority=0, deadline_step=1)
    event = deadline_sim.step()
    expect((event["request_id"], event["deadline_missed"]), (2, True),
           "TODO 4: the tightest deadline goes first, and its miss is recorded")


def test_todo4_state_progression_and_step_limit():
    """Prefill -> decode -> finish, waits accumulate, and max_steps bounds run()."""
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 2, 2, priority=2, cache_hit=True)
    sim.enqueue(2, 3, 3, priority=1, cache_hit=False)
    events = sim.run(max_steps=20)
    expect(len(events), 7, "TODO 4: 2 prefills + 5 tokens = 7 steps")
    expect_true(all(req.done for req in sim.queue), "TODO 4: every request finishes")
    expect_true(any(e["wait_steps"] > 0 for e in events), "TODO 4: requests not chosen accumulate wait_steps")
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 1, 3)
    expect(len(sim.run(max_steps=2)), 2, "TODO 4: run(max_steps=2) stops after 2 events")
    expect_raises(ValueError, lambda: sim.run(max_steps=-1), "TODO 4: a negative max_steps is rejected")


def test_todo4_stall_and_exhaustion():
    """Nobody fits: the step stalls and changes nothing. Everyone done: nothing to do."""
    sim = DecodeSchedulerSim(free_kv_blocks=2)
    sim.enqueue(1, 2, 1, required_blocks=3)
    expect((sim.step(), sim.clock, sim.queue[0].wait_steps), (None, 0, 0), "TODO 4: nobody can be admitted: None, nothing changes")
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 2, 1)
    sim.run()
    expect(sim.step(), None, "TODO 4: when every request is done, step returns None")


def test_todo4_schedule_key_picks_the_step():
    """The step follows the key (the end of the decision-order test)."""
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 4, 1, priority=1, cache_hit=True)
    sim.enqueue(2, 4, 1, priority=3, cache_hit=True)
    expect(sim.step()["request_id"], 2, "TODO 4: the smallest key is served first")


def test_todo4_one_admission_per_step():
    """The first candidate admitted is chosen; the candidates after it are not tried."""
    sim = DecodeSchedulerSim(free_kv_blocks=4)
    sim.enqueue(1, 4, 2, priority=9, required_blocks=2)
    sim.enqueue(2, 4, 2, priority=1, required_blocks=2)
    expect(sim.step()["request_id"], 1, "TODO 4: request 1 has the smallest key and fits, so it is chosen")
    expect((sim.queue[1].admitted, sim.free_kv_blocks), (False, 2),
           "TODO 4: request 2 is not tried in this step: it is not admitted and its 2 blocks stay free")


def test_todo4_the_chosen_request_does_not_wait():
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 4, 2, priority=9)
    sim.enqueue(2, 4, 2, priority=1)
    sim.step()
    expect([req.wait_steps for req in sim.queue], [0, 1],
           "TODO 4: the given lines add 1 to the wait of the request not chosen, and the chosen one's does not change")


test_todo4_capacity_admission_and_release()
test_todo4_preemption_and_resume_preserve_progress()
test_todo4_non_preemptible_and_deadline_policy()
test_todo4_state_progression_and_step_limit()
test_todo4_stall_and_exhaustion()
test_todo4_schedule_key_picks_the_step()
test_todo4_one_admission_per_step()
test_todo4_the_chosen_request_does_not_wait()
passed("TODO 4", 8)
### BEGIN HIDDEN TESTS
def test_todo4_hidden_stall_and_exhaustion():
    sim = DecodeSchedulerSim(free_kv_blocks=1)
    sim.enqueue(1, 2, 1, required_blocks=2)
    assert sim.step() is None and sim.clock == 0 and sim.queue[0].wait_steps == 0
    sim = DecodeSchedulerSim()
    sim.enqueue(1, 2, 1)
    assert [e["action"] for e in sim.run()] == ["prefill_to_decode", "finish"]
    assert sim.step() is None and sim.free_kv_blocks == 1_000_000


test_todo4_hidden_stall_and_exhaustion()
### END HIDDEN TESTS

# %% [markdown] key="md-observe-timelines-your"
# ## Observe: timelines of your scheduler |
#
# The cells below run **your** `DecodeSchedulerSim` on the course's scenarios and draw one lane per request:
# hatched = prefill step, solid = decode step, pale = waiting. ✕ marks a preemption, ▶ the resume and | the
# finish. A red ▼ marks the first step at which the request **ran while already late**: from then on it
# cannot finish by its deadline. The flag is the `deadline_missed` field of the step's event, which
# describes only the request that moves in that step; a request that becomes late while it waits is
# flagged only when it next runs. (Under `fixed_priority` in the overload below, request 2 runs its prefill
# early and then waits; its deadline becomes unreachable while it waits, long before its next step flags
# it.) These cells need all four TODOs.

# %% key="code-timelines"
lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
timelines = {}
for name, scenario in lab.DECODE_SCENARIOS.items():
    sim = DecodeSchedulerSim(**scenario["sim"])
    timelines[name], arrivals = lab.play(sim, scenario["script"])
    blocks = scenario["sim"].get("free_kv_blocks")
    fig = lab.plot_timeline(timelines[name], arrivals, title=lab.label(
        "{name} ({policy}, {kv})", name=lab.label(name), policy=sim.policy,
        kv=lab.label("{blocks} KV blocks", blocks=blocks) if blocks else lab.label("ample KV blocks")))
    plt.show()

# %% key="code-events-frame"
lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
lab.table(lab.events_frame(timelines["preemption and resume"]))

# %% key="code-request-summary"
lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
lab.table(pd.concat({lab.tr(name): lab.request_summary(events) for name, events in timelines.items()}, names=["scenario"]))

# %% [markdown] key="md-skipping-request-does"
# In *preemption and resume*, request 1 (priority 1) is prefilled at step 0 and generates its first token
# at step 1. Request 2 (priority 9) then arrives while request 1 holds both blocks: at step 2 request 1 is
# preempted (`preempted_request_id` 1), waits while request 2 runs, and at step 5 resumes **in decode**
# with `generated_len` going from 1 to 2: it kept the token it had. In *non-preemptible request*, the same
# arrival waits until request 1 finishes at step 3. In *deadline*, request 2's slack is −1 at enqueue time:
# it goes first and is still recorded as missed.
#
# ### Skipping a request that does not fit: the bypass
#
# Your `step` tries the next candidate when the first does not fit (TODO 4). Here a large, urgent request
# (id 1: priority 9, both KV blocks) arrives at step 1 while small, non-preemptible requests (priority 1,
# one block, one token each) arrive one per step. Each step, request 1 sorts first but does not fit; a small
# request that fits runs instead, and while one small request holds a block, request 1 never fits.

# %% key="code-bypass-run"
def bypass_run(num_small):
    """Urgent request 1 (2 blocks of 2) arrives at step 1; `num_small` small requests arrive one per step."""
    sim = DecodeSchedulerSim(free_kv_blocks=2)
    for t in range(3 * num_small + 5):
        if t == 1:
            sim.enqueue(1, 8, 2, priority=9, required_blocks=2)
        if t < num_small:
            sim.enqueue(100 + t, 2, 1, priority=1, required_blocks=1, preemptible=False)
        sim.step()
    summary = lab.request_summary(sim.timeline)
    return {"urgent request: first step": summary.loc[1, "first_step"], "urgent request: wait": summary.loc[1, "total_wait"],
            "small requests: max wait": summary.drop(index=1)["total_wait"].max()}


lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
pd.DataFrame({num_small: bypass_run(num_small) for num_small in (4, 8, 16)}).rename_axis(columns="small requests")

# %% [markdown] key="md-fixed-priority-aging"
# The urgent request waits 7, 15 and 31 steps behind streams of 4, 8 and 16 small requests: it gets in only
# when the stream stops, so a longer stream delays it without bound. Under head-of-line blocking (vLLM V1,
# nano-vllm) it would stop admission instead: the small requests already running would finish, free their
# blocks, and request 1 would be admitted next, at the price of the small requests behind it waiting.
# Neither order is free; they move the wait from one class of request to the other.
#
# ### Fixed priority vs aging vs deadline
#
# A small overload: a low-priority request (id 1, deadline at step 40) and a medium one (id 2, deadline at
# step 14) arrive first; then a high-priority request arrives every 3 steps, each needing 3 steps of work.
# The system is saturated, so someone has to wait.

# %% key="code-policy-run"
def policy_run(policy, horizon=60, arrival_every=3, last_arrival=33):
    """Run the overload workload under one policy; return its per-request summary."""
    sim = DecodeSchedulerSim(policy=policy, aging_interval=4)
    sim.enqueue(1, 6, 4, priority=0, deadline_step=40)
    sim.enqueue(2, 6, 3, priority=2, deadline_step=14)
    for t in range(horizon):
        if t % arrival_every == 0 and t <= last_arrival:
            sim.enqueue(100 + t, 4, 2, priority=5, deadline_step=t + 12)
        if sim.step() is None:
            break
    return lab.request_summary(sim.timeline)


def policy_summary(summary):
    """One row per policy: what happened to the low, the medium and the high-priority requests."""
    high = summary[summary.index >= 100]
    return {"low (1) wait": summary.loc[1, "total_wait"], "medium (2) wait": summary.loc[2, "total_wait"],
            "high: max wait": high["total_wait"].max(), "high: mean wait": round(high["total_wait"].mean(), 1),
            "deadlines missed": int(summary["deadline_missed"].sum()), "of": len(summary)}


lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
runs = {policy: policy_run(policy) for policy in ("fixed_priority", "aging", "deadline")}
lab.table(pd.DataFrame.from_dict({policy: policy_summary(summary) for policy, summary in runs.items()}, orient="index"))

# %% key="code-wait-plot"
lab.require_todos("TODO 1", "TODO 2", "TODO 3", "TODO 4")
fig, ax = plt.subplots(figsize=(8, 3))
for policy, summary in runs.items():
    ax.plot(summary.index.astype(str), summary["total_wait"], marker="o", label=policy)
ax.set_xlabel(lab.label("request id (1 = low priority, 2 = medium, 100+ = high, in arrival order)"))
ax.set_ylabel(lab.label("total wait (steps)"))
ax.set_title(lab.label("Who waits under each policy"))
ax.legend(title=lab.label("policy"))
ax.tick_params(axis="x", labelrotation=90)
fig.tight_layout()

# %% [markdown] key="md-policy-reading"
# Read the table and the plot together (the numbers are those of the reference solution; yours should match).
#
# - **`fixed_priority`**: the high-priority requests wait least (at most 6 steps), but the low and the medium
#   request wait 40 and 37 steps, until the stream of arrivals stops. Their wait is set by the workload, not
#   by the scheduler: a longer stream would starve them for longer.
# - **`aging`**: every 4 waited steps add one to a request's effective priority, so the low and medium
#   requests outrank new arrivals sooner (waits 32 and 20). The later high-priority requests pay for it
#   (max wait 12), and since aging knows nothing of deadlines, more deadlines are missed (4 of 14).
# - **`deadline`**: the request closest to missing its deadline goes first. The medium request is served in
#   time (wait 5) and, on this workload, no deadline is missed; the low request still waits 35 steps because
#   its deadline leaves room. Under a heavier stream, some deadline would have to be missed, and the
#   policy would only decide whose.

# %% [markdown] key="md-real-engines-do"
# ## What real engines do |
#
# Every rule here is a simplification. Compare it with what serving engines do, as their source files read
# as of November 2026 (these files change often; each claim names the file to check):
#
# - **One request per step vs a batch per step.** vLLM, SGLang and nano-vllm advance many sequences per
#   step, bounded by a cap on sequences (`max_num_seqs` in vLLM's and nano-vllm's `scheduler.py`,
#   `--max-running-requests` in SGLang's `python/sglang/srt/server_args.py`), a token budget
#   (`max_num_batched_tokens`) and the free KV blocks.
# - **Prefill first, or running first.** nano-vllm is prefill-first: `Scheduler.schedule` in
#   `nanovllm/engine/scheduler.py` admits waiting sequences first and, if it admitted any, returns a
#   prefill-only step; decoding happens only in steps that admit nobody. vLLM V1 goes the other way:
#   `Scheduler.schedule` in `vllm/v1/core/sched/scheduler.py` first gives every *running* request its
#   tokens, then admits waiting requests with the token budget left, so decode tokens and prefill tokens
#   share one step, a long prompt split into chunks (`enable_chunked_prefill`, on by default in
#   `vllm/config/scheduler.py`). Our key's `phase` field follows nano-vllm, not vLLM.
# - **Preemption by recompute.** vLLM V1's `Scheduler._preempt_request` frees the victim's KV blocks, resets
#   its `num_computed_tokens` to 0 and puts it back in the waiting queue (at the front under FCFS); nano-vllm's
#   `Scheduler.preempt` frees its blocks and puts it at the front of `waiting`. Both recompute: the prompt
#   and the tokens generated so far are prefilled again, except, with prefix caching (on by default in vLLM
#   V1), the victim's blocks that were not evicted meanwhile. (vLLM's old V0 scheduler, `vllm/core/scheduler.py`,
#   could also swap KV to CPU memory, `PreemptionMode.SWAP`; that file was deleted with the rest of V0, pull
#   request #25321, and V1's scheduler has no swap path.) Our victim keeps its progress for free; in a real
#   engine the resume costs that new prefill.
# - **When, and whom, vLLM preempts.** Only while it schedules *running* requests: when
#   `kv_cache_manager.allocate_slots` cannot give a running request blocks for its new tokens, `schedule()`
#   preempts the **last** request of `self.running` under FCFS (the last admitted), or under the priority
#   policy the running request with the largest `(priority, arrival_time)`: the least urgent, the latest
#   arrival on ties. It repeats until the request fits or has preempted itself. A *waiting* request that
#   does not fit ends the loop over waiting requests (`break`): it never preempts anyone, and a step that
#   preempted admits no waiting request at all. TODO 3 models the opposite trigger, SGLang's (Step 3).
#   nano-vllm does the same as vLLM's FCFS case: its decode loop preempts the tail of `running` when
#   `can_append` fails.
# - **Priority direction.** In vLLM a **smaller** `priority` is served first: `PriorityRequestQueue` in
#   `vllm/v1/core/sched/request_queue.py` orders by `(priority, arrival_time)`, and `SchedulerConfig.policy`
#   in `vllm/config/scheduler.py` defaults to `"fcfs"`. SGLang with `--enable-priority-scheduling` serves a
#   **larger** value first by default, and `--schedule-low-priority-values-first` flips it
#   (`server_args.py`). Here larger is more urgent.
# - **Aging and deadlines.** vLLM's FCFS and priority queues order by arrival and by
#   `(priority, arrival_time)`: neither lifts a request that has waited, and neither knows deadlines. SGLang's
#   `hrrn` policy ("highest response ratio next, token-based aging", `CacheAwarePolicy` in
#   `python/sglang/srt/managers/schedule_policy.py`) *is* a form of aging, with the wait counted in prefill
#   tokens processed since arrival, not in time (`_sort_by_hrrn`), so "no aging" holds for vLLM only.
#   None of the policies in these files orders by deadline, as our `deadline` policy does.
# - **Cache-aware ordering.** SGLang can order the waiting queue by longest prefix match (`lpm`) to raise
#   cache hits; its default `--schedule-policy` is `fcfs`. When more than 128 requests wait,
#   `SchedulePolicy._determine_active_policy` (`schedule_policy.py`) switches `lpm` and `hrrn` back to FCFS
#   because prefix matching and sorting a long queue cost time ("Turn off the expensive prefix matching and
#   sorting when the #queue is large"). That requests which never hit the cache can starve under cache-first
#   ordering is this course's argument, not SGLang's stated reason. Our `cache_hit` field plays the prefix hit.
# - **When preemptions pile up.** An occasional preemption is normal; frequent ones mean the configuration
#   does not fit the load. vLLM counts them per request (`num_preemptions`, incremented in
#   `_preempt_request`). The usual remedies: lower `max_num_seqs`, raise `gpu_memory_utilization` so more
#   memory holds KV blocks, allow a shorter context (`max_model_len`), or quantize the KV cache so that each
#   token takes less room.
#
# So what can be concluded here? The *order* of service and the *mechanics* of admission, preemption and
# resume. What cannot: latency in milliseconds, throughput on a GPU, or the cost of recompute.

# %% [markdown] key="md-explanations-todo-1" tags=["solution-edition"]
# ## Explanations of TODO 1–4 (solved edition) |
#
# **TODO 1: building the request state.** `RequestState` stores the input length, the generation limit,
# the phase, the priority, the KV blocks, the deadline and whether the request may be paused. Passing
# every argument by name keeps it readable and safe against reordered fields; the defaults give a fresh
# request: `prefill`, `waiting`, `generated_len = 0`, not admitted, no preemptions.
#
# **TODO 2: the ordering key.** Only the first field depends on the policy. Under `deadline`, a request with
# a deadline gets `deadline_step − clock − remaining steps`; everyone else gets one large constant, so the
# remaining fields decide exactly as under the other policies. Aging needs no code here: it lives in
# `_effective_priority`, which the key already uses. Length and id only break ties, which makes the order
# reproducible.
#
# **TODO 3: admission and safe preemption.** An admitted request is never charged twice. If the blocks fit,
# admit. Otherwise the only legal victims are admitted, unfinished, `preemptible` requests with a strictly
# lower effective priority, and of those only the ones whose blocks, added to the free ones, make room. Preemption changes
# `admitted`, `status`, `preemptions` and the block ledger, never `phase` or `generated_len`: that is what
# makes the resume lossless in this model.
#
# **TODO 4: choosing and advancing.** Trying candidates in key order and stopping at the first one that is
# admitted means a blocked urgent request does not stall the whole system: a smaller request that fits runs
# instead (the capacity test of TODO 4). That is a choice, not a law: vLLM V1 and nano-vllm stop at the first
# waiting request that does not fit, and the bypass table shows what skipping costs the blocked request. The given lines then charge a waiting step to everyone else, move the
# chosen request one phase or one token forward, and free its blocks when it finishes.
#
# **How the tests locate a bug.** The input-contract checks catch bad lengths, deadlines, blocks and
# duplicate ids; the ordering checks separate phase, cache, priority, aging and deadline; the capacity checks
# catch double charging, unsafe victims and lost progress; the event checks catch wrong choices, missing
# preemption ids and wrong deadline flags. The hidden tests replay each TODO alone against a reference for the
# other three, on the course's scenarios and on randomized ones.
#
# **Checking on real hardware.** A tick simulation cannot show queueing delay in milliseconds, tail
# latency or recompute cost. A real experiment fixes the model, the arrival trace, the input/output lengths
# and the KV budget on one serving backend, swaps only the selection policy, and records queue wait, TTFT,
# TPOT, P95/P99, starvation and rejected requests.
#
# **Further reading:** the Orca paper (iteration-level scheduling); vLLM's scheduler
# (`vllm/v1/core/sched/scheduler.py`, with its queues in `request_queue.py`); nano-vllm's
# `nanovllm/engine/scheduler.py`; SGLang's `python/sglang/srt/managers/schedule_policy.py`.
