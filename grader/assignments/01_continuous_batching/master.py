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

# %% [markdown] key="md-01-continuous-batching"
# # 01 · Continuous Batching |
#
# *简体中文版 | Chinese edition:* [zh/01_continuous_batching.ipynb](zh/01_continuous_batching.ipynb)
#
# **Subtitle:** state, timelines and a falsifiable simulation | 状态、时间轴与可证伪模拟
#
# A decode step serves every request in the batch one token. The more requests share a step, the better the
# weights loaded for that step are used. But LLM requests differ wildly in length: one asks "how many days of
# leave do I get?" and is answered in 5 tokens, another asks for a summary of a whole handbook and needs 800.
# How a server groups them decides how much of its capacity sits idle.
#
# This notebook builds that question into a **tick simulation** small enough to check by hand, and
# **falsifiable**: it states its invariants and checks them on every run, so a wrong result cannot hide.
# It is the prerequisite of `02_decode_scheduling`, which decides *who* runs next.
#
# **How this notebook works.** Read and run the cells in order. The four exercises, **TODO 1** to **TODO 4**,
# are one cell each, followed by a cell of visible checks. Your grade comes from hidden tests that replay each
# TODO on its own with many more cases, so keep each TODO cell self-contained: for each TODO the grader runs
# only the set-up cell (the first code cell, which imports `heapq`, `lab` and the names taken from `lab`) and
# your TODO cell, with the course's reference for the other TODOs. A TODO cell may use those names, but not
# `pd` or anything another cell defines; import anything else inside the TODO cell itself.
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
# | static batching | 静态批处理 | continuous batching | 连续批处理 |
# | slot | 槽位 | slot utilization | 槽位利用率 |
# | tick (unit of simulated time) | tick（模拟时间单位） | makespan | 最大完工时间（makespan） |
# | wait / flow time | 等待时间 / 流程时间 | work conservation | 工作量守恒 |
# | invariant | 不变量 | metamorphic check | 蜕变检查 |
# | prefill / decode | 预填充 / 解码 | chunked prefill | 分块预填充 |
# | admission | 准入 | preemption / recompute | 抢占 / 重算 |
# | KV cache block | KV 块 | starvation | 饥饿 |
# | prompt | 提示词 | batch / latency | 批 / 时延 |

# %% nbgrader={"grade": false, "grade_id": "setup_imports", "locked": true, "schema_version": 3, "solution": false} tags=["grading-setup"]
# <course set-up: imports lab, installing it if missing>
import heapq

import lab
from lab import ScheduleInvariantError, check_schedule, jobs_from_tokens, schedule, todo
from lab.checks import expect, expect_raises, expect_true, passed

# %% key="code-imports"
import pandas as pd

lab.set_language("en")  # messages and plot labels of this edition

# %matplotlib inline

# %% [markdown] key="md-static-continuous-batching"
# ## Static vs continuous batching, and why LLM requests need it |
#
# **Static batching** collects a group of requests, runs them together, and takes the next group only when
# *every* member has finished. That suits image classification, where each request costs the same. With LLM
# requests it wastes capacity in two ways:
#
# - **short requests ride along**: a request that finished after 5 tokens keeps its place in the batch, empty,
#   until the 800-token request beside it is done;
# - **new requests wait**: requests that arrive while a group runs queue outside, even when the batch has
#   free places.
#
# **Continuous batching** (the Orca paper's *iteration-level scheduling*) regroups at every step: finished
# requests leave, and waiting ones take their places at the next step. vLLM, SGLang and nano-vllm all work
# this way: their schedulers rebuild the batch at every step.

# %% [markdown] key="md-tick-model-leaves"
# ## The tick model, and what it leaves out |
#
# Each job has a unique integer `id`, an arrival tick `arrival` and a number of tokens to serve, `tokens`.
# There are `slots` parallel places. In one **tick**, every active job is served exactly one token.
# Slots work in parallel, but the tokens of one job do not: each token of an autoregressive model depends
# on the one before, so a job of *g* tokens needs *g* ticks however many slots are free.
#
# What the model leaves out, on purpose: **no prefill** (a prompt costs nothing), **no network**, **known
# lengths** (real servers only know an upper bound; EOS comes when it comes), and **a tick that costs the
# same whatever the batch size** (on a GPU a larger batch can reuse weights better *and* make each step
# slower). Both policies see exactly the same inputs and the same unit of service.
#
# Known lengths are a convenience of the simulation, not information a server has. FIFO needs none of it:
# it frees a slot only when a job finishes. A policy that *predicts* lengths (to serve short jobs first,
# say) must be simulated with its predictions, errors included, and with a bound on the longest wait, and be
# compared with a baseline that uses no future information; feeding it the true lengths would report a
# result no server can reach.
#
# So what may be concluded? Only the difference in **slot use** between the two policies, inside this
# model. What may not: a speedup on real hardware. A tick is an abstract unit, not a millisecond, and
# multiplying ticks by an average step time does not give end-to-end latency.

# %% [markdown] key="md-state-tick-transition"
# ## The state and the one-tick transition |
#
# The state is: the waiting jobs not yet admitted, the active jobs with their remaining tokens, the
# completion records, and the clock. One tick does, in this order:
#
# 1. **reclaim** the slots of jobs that finished in the previous tick;
# 2. **admit** arrived waiting jobs, in (arrival, id) order, into free slots. Static FIFO admits only
#    when the whole previous group is done;
# 3. **serve** every active job one token;
# 4. a job whose remaining tokens reach zero **finishes at tick + 1**.
#
# A job that arrives exactly at a tick boundary may join that tick. When nothing runs and the next job
# has not arrived, the clock **jumps** to that arrival. The idle stretch still belongs to the interval we
# observe, which always **starts at 0**, so utilization counts it. The order of admission uses only the
# fields fixed in advance: no quietly preferring short jobs to make the numbers look good.
#
# `lab.schedule(jobs, slots, continuous)` implements exactly this. It returns `makespan_ticks`,
# `busy_slots`, `utilization = busy_slots / (slots × makespan_ticks)`, one `completed` record per job
# (`start`, `finish`, `wait`, `flow`), and the `trace`: for every tick that ran, the ids served.

# %% key="code-example"
example = lab.FOUR_ON_TWO
result = schedule(example.jobs, example.slots, continuous=True)
lab.table(pd.DataFrame(result["trace"]).set_index("tick"))

# %% [markdown] key="md-worked-example-1"
# ## Worked example 1: 4 requests on 2 slots |
#
# Requests 0–3 arrive at tick 0 and need 1, 4, 2 and 3 tokens. **Static:** 0 and 1 run first; 0 is done after
# one tick, but its slot stays empty for 3 ticks until 1 finishes at tick 4. Then 2 and 3 run: 2 finishes
# at 6, 3 at 7. **Continuous:** at tick 1 job 2 takes job 0's slot, finishes at 3, and job 3 takes over until 6.
# Job 1 finishes at 4.

# %% key="code-describe"
from IPython.display import display


def describe(example):
    """Print an example's workload, then show both policies' summary as a table."""
    tokens, arrivals = [job["tokens"] for job in example.jobs], sorted({job["arrival"] for job in example.jobs})
    print(f"{lab.tr(example.name)} | tokens: {tokens} | arrivals: {arrivals} | slots: {example.slots}")
    display(lab.table(lab.compare_policies(example.jobs, example.slots)))


def start_and_finish(example):
    """Start and finish tick of every job under both policies."""
    columns = {}
    for continuous in (False, True):
        result = schedule(example.jobs, example.slots, continuous)
        for key in ("start", "finish"):
            columns[f"{result['policy']} {key}"] = {rec["id"]: rec[key] for rec in result["completed"]}
    return pd.DataFrame(columns).rename_axis("job")


describe(example)
fig = lab.plot_slots(example.jobs, example.slots)
lab.table(start_and_finish(example))

# %% [markdown] key="md-worked-example-2"
# Both serve 10 tokens. Static takes 7 ticks on 2 slots: utilization 10/14 = 5/7. Continuous takes 6:
# 10/12 = 5/6. Throughput goes from 10/7 to 10/6 tokens per tick, a **ratio of 7/6**. Do not read the
# difference of the two utilizations in percentage points as the gain. The static chart has 14 − 10 = 4
# hatched (idle) slot-ticks: 3 are the waste the short job 0 leaves behind while job 1 runs, and 1 is job 2's
# slot waiting for job 3 at the end.
#
# ## Worked example 2: continuous batching can gain nothing |
#
# Two jobs of 4 tokens both arrive at tick 3, on 2 slots. They start at 3 and finish at 7 under both policies:
# no slot is freed early, so there is nothing to refill.

# %% key="code-no-gain"
no_gain = lab.NO_GAIN
describe(no_gain)
fig = lab.plot_slots(no_gain.jobs, no_gain.slots)

# %% [markdown] key="md-worked-example-3"
# Utilization is **8/14** measured from tick 0, and **1** measured from the first arrival: two honest numbers
# with two different denominators. Always say which one you report, and never pick the larger one without saying
# so. This negative result falsifies "continuous batching is always faster". It also checks that the idle
# jump did not erase the 3 idle ticks at the start.
#
# ## Worked example 3: A–E |
#
# Five requests, A to E, need 2, 6, 3, 2 and 4 tokens, all at tick 0, on 2 slots.

# %% key="code-a-to-e"
a_to_e = lab.A_TO_E
describe(a_to_e)
fig = lab.plot_slots(a_to_e.jobs, a_to_e.slots, labels=a_to_e.labels)

# %% [markdown] key="md-a-to-e-reading"
# Static batching needs **13** ticks (17/26 ≈ 65% of slot-ticks busy), continuous **10** (17/20 = 85%).
# Both serve the same 17 tokens; the difference is only whether a freed slot is refilled in time. This is not a
# GPU prediction: there is no prefill, no KV limit, no step time that grows with the batch, and no preemption.

# %% [markdown] key="md-waiting-flow-fairness"
# ## Waiting, flow and fairness |
#
# For job *i* with arrival *a*, first service *s* and finish *f*, define the **wait** $w_i = s_i - a_i$
# and the **flow time** $r_i = f_i - a_i$. (Here *f* is the completion, not the first token.) Every tick a
# job is active serves it, and nothing preempts it, so in this model $r_i = w_i + g_i$, with $g_i$ its tokens.
#
# A mean can hide a maximum: one request that waited very long is diluted by many that did not. And FIFO only
# fixes the **order** of admission; it promises no bound on waiting. If work arrives faster than the slots can
# serve it, the queue grows without limit, whatever the utilization. Raising utilization cannot beat that
# conservation law.

# %% key="code-overload"
def overload(num_jobs, slots=2, every=1, tokens=3):
    """One job per `every` ticks, each needing `tokens`: more work arrives than 2 slots can serve."""
    jobs = [{"id": i, "arrival": i * every, "tokens": tokens} for i in range(num_jobs)]
    waits = [rec["wait"] for rec in schedule(jobs, slots, continuous=True)["completed"]]
    return {"jobs": num_jobs, "mean wait": sum(waits) / len(waits), "max wait": max(waits)}


pd.DataFrame([overload(n) for n in (10, 20, 40, 80)]).set_index("jobs")

# %% [markdown] key="md-todo-1-waits"
# Each doubling of the stream roughly doubles the maximum wait: under overload FIFO alone bounds nothing.
#
# ### TODO 1 · `waits_and_flows`: read waits and flow times off a trace
#
# **Build:** given the `jobs` and a `trace` laid out like that of a `schedule` result (and nothing else),
# return a dict `{job id: (wait, flow)}`. A job starts at the first tick it is served and finishes one tick
# after the last. Its wait is its start minus its arrival, and its flow is its finish minus its arrival. Count
# from the job's own arrival, not from the start of the run: after an idle jump the trace skips ticks, and a
# job that runs as soon as it arrives waits zero ticks. The trace may come from static or continuous batching:
# read it the same way. It may also come from another scheduler, not FIFO: jobs served in another order, slots
# left idle while jobs wait, a job paused and resumed later. Every job of `jobs` is served somewhere in `trace`.
#
# **Check:** the test cell below compares with the `completed` records that `schedule` computes itself, on
# static and continuous runs, with staggered arrivals and after an idle jump, and reads a trace of another
# scheduler written by hand.
# *Worked example:* in the continuous 4-on-2 run above, job 3 arrives at 0, is first served at tick 3 and
# last at tick 5, so it has wait 3 and flow 6.

# %% nbgrader={"grade": false, "grade_id": "todo1", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 1")
def waits_and_flows(jobs: list[dict], trace: list[dict]) -> dict[int, tuple[int, int]]:
    """Map each job id to (wait, flow), using only its arrival and the ticks it was served."""
    ### BEGIN SOLUTION
    first, last = {}, {}
    for row in trace:
        for job_id in row["served"]:
            first.setdefault(job_id, row["tick"])
            last[job_id] = row["tick"]
    return {job["id"]: (first[job["id"]] - job["arrival"], last[job["id"]] + 1 - job["arrival"]) for job in jobs}
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo1_tests", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def test_todo1_worked_example():
    result = schedule(lab.FOUR_ON_TWO.jobs, 2, continuous=True)
    got = waits_and_flows(lab.FOUR_ON_TWO.jobs, result["trace"])
    expect(got[3], (3, 6), "TODO 1: job 3 is first served at tick 3 and finishes at 6")
    expect({k: w for k, (w, _) in got.items()}, {0: 0, 1: 0, 2: 1, 3: 3}, "TODO 1: the worked example's waits 0, 0, 1, 3")


def test_todo1_matches_schedule_records():
    for example in (lab.FOUR_ON_TWO, lab.A_TO_E, lab.NO_GAIN):
        for continuous in (False, True):
            result = schedule(example.jobs, example.slots, continuous)
            want = {rec["id"]: (rec["wait"], rec["flow"]) for rec in result["completed"]}
            expect(waits_and_flows(example.jobs, result["trace"]), want,
                   f"TODO 1: {lab.tr(example.name)}, {'continuous' if continuous else 'static'}: (wait, flow) per job")


def test_todo1_late_arrival():
    jobs = [{"id": 7, "arrival": 5, "tokens": 2}]
    expect(waits_and_flows(jobs, schedule(jobs, 1, True)["trace"]), {7: (0, 2)},
           "TODO 1: after an idle jump, wait and flow count from the arrival, not from 0")


def test_todo1_staggered_arrivals():
    jobs = [{"id": 4, "arrival": 2, "tokens": 3}, {"id": 1, "arrival": 0, "tokens": 5}, {"id": 9, "arrival": 2, "tokens": 1}]
    expect(waits_and_flows(jobs, schedule(jobs, 1, True)["trace"]), {4: (3, 6), 1: (0, 5), 9: (6, 7)},
           "TODO 1: staggered arrivals on 1 slot: each job counts from its own arrival")


def test_todo1_another_scheduler():
    jobs = [{"id": 0, "arrival": 0, "tokens": 3}, {"id": 1, "arrival": 1, "tokens": 1}]
    trace = [{"tick": 0, "served": [0]}, {"tick": 1, "served": [1]}, {"tick": 2, "served": [0]}, {"tick": 3, "served": [0]}]
    expect(waits_and_flows(jobs, trace), {0: (0, 4), 1: (0, 1)},
           "TODO 1: another scheduler pauses job 0 for job 1: job 0 finishes after its last serve")


test_todo1_worked_example()
test_todo1_matches_schedule_records()
test_todo1_late_arrival()
test_todo1_staggered_arrivals()
test_todo1_another_scheduler()
passed("TODO 1", 5)
### BEGIN HIDDEN TESTS
def test_todo1_hidden_static_staggered():
    jobs = [{"id": 2, "arrival": 1, "tokens": 2}, {"id": 5, "arrival": 0, "tokens": 4}, {"id": 8, "arrival": 1, "tokens": 1}]
    trace = schedule(jobs, 2, False)["trace"]
    assert waits_and_flows(jobs, trace) == {5: (0, 4), 2: (3, 5), 8: (3, 4)}


test_todo1_hidden_static_staggered()
### END HIDDEN TESTS

# %% [markdown] key="md-invariants-make-simulation"
# ## Invariants that make the simulation falsifiable |
#
# A simulator that only prints a makespan can be wrong without anyone noticing. These must hold for every run:
#
# - **no duplicate active id**: one id is never active twice in one tick;
# - **no start before arrival**;
# - **active ≤ slots** in every tick;
# - **each job completed exactly once**, after being served exactly `tokens` times;
# - **work conservation**: the slots used, summed over all ticks, equal the total tokens. The model has no
#   cancellation or failure, so this holds exactly. A model that adds cancellation must count served,
#   cancelled and remaining work separately.
#
# `lab.check_schedule(jobs, slots, result)` checks them all. Here it is on a correct result, then on a
# result with one serve removed:

# %% key="code-jobs"
jobs, slots = lab.FOUR_ON_TWO.jobs, 2
good = schedule(jobs, slots, continuous=True)
check_schedule(jobs, slots, good)
print("the correct result passes")
broken = {**good, "trace": [dict(row, served=[i for i in row["served"] if (row["tick"], i) != (5, 3)]) for row in good["trace"]]}
try:
    check_schedule(jobs, slots, broken)
except ScheduleInvariantError as err:
    print("caught:", err)

# %% [markdown] key="md-metamorphic-evidence"
# Invariants check one run. **Metamorphic checks** compare runs whose relation is known in advance:
# with a single job, both policies must agree; with more slots than jobs, all arriving together, there is
# nothing to refill; with jobs of equal length arriving together, static groups leave no short-job holes.
# In all three cases continuous batching can gain nothing, so a simulator that shows a gain there is wrong:

# %% key="code-same-makespan"
def same_makespan(jobs, slots):
    """Static and continuous makespans of one workload, and whether they are equal."""
    static, cont = (schedule(jobs, slots, c)["makespan_ticks"] for c in (False, True))
    return {"static": static, "continuous": cont, "equal": static == cont}


pd.DataFrame({
    "a single job": same_makespan(jobs_from_tokens([7]), 3),
    "more slots than jobs": same_makespan(jobs_from_tokens([2, 9, 4]), 5),
    "equal lengths": same_makespan(jobs_from_tokens([3] * 7), 2),
}).T

# %% [markdown] key="md-todo-2-check"
# Passing examples are evidence, not a proof for every input; the course's own tests
# (`tests/lab/test_batching.py`) check the same relations on random workloads with hypothesis.
#
# ### TODO 2 · `check_served_exactly`: write one checker yourself
#
# **Build:** raise `ValueError` if any job of `jobs` is served a number of times different from its `tokens`
# (too few, too many, or never), or if `trace` serves an id that is not a job. Each appearance of an id in a
# tick's `served` list is one serve, so an id listed twice in one tick is served twice. Return `None` for a
# valid trace, whichever scheduler made it: `schedule` or another one, which may serve jobs in another order
# or pause them. Do not call `check_schedule`; count the serves yourself. The message is yours to word (the
# offending id helps you debug): the hidden tests check only that `ValueError` is raised.
#
# **Check:** the test cell feeds your checker a correct trace, a correct trace of another scheduler, and
# traces broken in each of these ways.

# %% nbgrader={"grade": false, "grade_id": "todo2", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 2")
def check_served_exactly(jobs: list[dict], trace: list[dict]) -> None:
    """Raise ValueError unless every job is served exactly `tokens` times and nothing else is served."""
    ### BEGIN SOLUTION
    tokens = {job["id"]: job["tokens"] for job in jobs}
    served = dict.fromkeys(tokens, 0)
    for row in trace:
        for job_id in row["served"]:
            if job_id not in tokens:
                raise ValueError(f"tick {row['tick']} serves {job_id}, which is not a job")
            served[job_id] += 1
    for job_id, need in tokens.items():
        if served[job_id] != need:
            raise ValueError(f"job {job_id} is served {served[job_id]} times but needs {need}")
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo2_tests", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def broken_traces():
    jobs = lab.A_TO_E.jobs
    trace = schedule(jobs, 2, continuous=True)["trace"]
    fewer = [dict(row, served=row["served"][1:]) if row["tick"] == 0 else row for row in trace]
    more = trace + [{"tick": trace[-1]["tick"] + 1, "served": [1]}]
    stranger = [dict(row, served=row["served"] + [99]) if row["tick"] == 2 else row for row in trace]
    never = [dict(row, served=[i for i in row["served"] if i != 4]) for row in trace]
    twice = [dict(row, served=row["served"] + row["served"][:1]) if row["tick"] == 0 else row for row in trace]
    return jobs, trace, {"a job served too few times": fewer, "a job served too many times": more,
                         "an id that is not a job": stranger, "a job never served": never,
                         "an id listed twice in one tick": twice}


def test_todo2_valid_trace_passes():
    jobs, trace, _ = broken_traces()
    expect(check_served_exactly(jobs, trace), None, "TODO 2: a correct trace passes and returns None")


def test_todo2_another_scheduler_passes():
    jobs = [{"id": 0, "arrival": 0, "tokens": 3}, {"id": 1, "arrival": 1, "tokens": 1}]
    trace = [{"tick": 0, "served": [0]}, {"tick": 1, "served": [1]}, {"tick": 2, "served": [0]}, {"tick": 3, "served": [0]}]
    expect(check_served_exactly(jobs, trace), None, "TODO 2: a valid trace of another scheduler passes too")


def test_todo2_catches_each_break():
    jobs, _, broken = broken_traces()
    for how, trace in broken.items():
        expect_raises(ValueError, lambda: check_served_exactly(jobs, trace), f"TODO 2: check_served_exactly must raise ValueError on a trace with {how}")


test_todo2_valid_trace_passes()
test_todo2_another_scheduler_passes()
test_todo2_catches_each_break()
passed("TODO 2", 3)
### BEGIN HIDDEN TESTS
def test_todo2_hidden_extra_in_same_tick():
    jobs = [{"id": 3, "arrival": 0, "tokens": 2}]
    try:
        check_served_exactly(jobs, [{"tick": 0, "served": [3, 3]}, {"tick": 1, "served": [3]}])
    except ValueError:
        pass
    else:
        raise AssertionError("a job served twice in one tick is served too often")


test_todo2_hidden_extra_in_same_tick()
### END HIDDEN TESTS

# %% [markdown] key="md-input-validation-part"
# ## Why input validation is part of correctness |
#
# `schedule` first checks that `slots` is a positive int, and that each job has exactly the keys id, arrival and
# tokens, each of type `int` (so `True` is rejected), with arrival ≥ 0, tokens ≥ 1 and unique ids. Floats,
# NaN, infinities, strings and missing keys raise `ValueError` at once.
#
# This is not pedantry: it is what the **termination argument** needs. Let *W* be the remaining work, summed
# over the unfinished jobs. A tick that runs serves at least one token, so *W* falls by at least one. An idle
# clock jumps to a finite next arrival and admits at least one job. *W* starts as a finite non-negative
# integer, so there are at most Σ tokens running ticks and every job completes exactly once. With
# `tokens = 1.5`, the remaining work goes 0.5, −0.5, … and never equals zero: the completion test never fires.

# %% key="code-bad-inputs"
for bad in ({"id": 0, "arrival": 0, "tokens": 1.5}, {"id": 0, "arrival": 0, "tokens": True}, {"id": 0, "arrival": -1, "tokens": 2}):
    try:
        schedule([bad], 1, continuous=True)
    except ValueError as err:
        print(f"{str(bad):45s} -> ValueError: {err}")

# %% [markdown] key="md-todo-3-design"
# ### TODO 3 · Design the workload: no gain, and at least 2× |
#
# **Build:** two functions, each returning a `(jobs, slots)` pair that `schedule` accepts.
#
# - `no_gain_case()`: static and continuous FIFO give the **same** makespan, although the case is not trivial:
#   at least 2 slots, more jobs than slots, and not all jobs of the same length.
# - `double_gain_case()`: static FIFO takes **at least twice** as many ticks as continuous FIFO.
#
# The grader simulates your workloads, so keep each one small: at most 200 jobs and 64 slots, each job at most
# 1,000 tokens and arriving by tick 1,000, and 20,000 tokens in all.
#
# Think before you search: when does a freed slot have nobody to take it, and how can each static group hold
# one long job and several short ones? **Check:** the test cell runs both policies on your workloads.

# %% nbgrader={"grade": false, "grade_id": "todo3", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 3")
def no_gain_case() -> tuple[list[dict], int]:
    """A non-trivial workload on which continuous batching gains nothing."""
    ### BEGIN SOLUTION
    return jobs_from_tokens([4, 4, 1]), 2  # the short job comes last: no slot is freed before it runs
    ### END SOLUTION


@todo("TODO 3")
def double_gain_case() -> tuple[list[dict], int]:
    """A workload on which static batching needs at least twice the ticks of continuous batching."""
    ### BEGIN SOLUTION
    return jobs_from_tokens([8, 1, 1, 1] * 3), 4  # each static group waits 8 ticks for its one long job
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo3_tests", "locked": true, "points": 3, "schema_version": 3, "solution": false}
def makespans(case):
    jobs, slots = case
    return schedule(jobs, slots, False)["makespan_ticks"], schedule(jobs, slots, True)["makespan_ticks"]


def check_small(case, name):
    jobs, slots = case
    expect_true(len(jobs) <= 200 and 1 <= slots <= 64 and sum(j["tokens"] for j in jobs) <= 20_000
                and all(j["tokens"] <= 1_000 and j["arrival"] <= 1_000 for j in jobs),
                f"TODO 3: {name} is small: at most 200 jobs, 64 slots, 1,000 tokens and arrival 1,000 per job, 20,000 tokens in all",
                (len(jobs), slots))


def test_todo3_no_gain():
    jobs, slots = no_gain_case()
    expect_true(slots >= 2 and len(jobs) > slots and len({j["tokens"] for j in jobs}) > 1,
                "TODO 3: no_gain_case needs >= 2 slots, more jobs than slots, not all the same length", (len(jobs), slots))
    static, cont = makespans((jobs, slots))
    expect(static, cont, "TODO 3: no_gain_case: static and continuous makespans are equal")


def test_todo3_double_gain():
    static, cont = makespans(double_gain_case())
    expect_true(static >= 2 * cont, "TODO 3: double_gain_case: static needs at least 2x the ticks of continuous",
                f"static {static}, continuous {cont}")


check_small(no_gain_case(), "no_gain_case")
check_small(double_gain_case(), "double_gain_case")
test_todo3_no_gain()
test_todo3_double_gain()
print("makespans (static, continuous): no_gain_case {}, double_gain_case {}".format(
    makespans(no_gain_case()), makespans(double_gain_case())))
passed("TODO 3", 4)
### BEGIN HIDDEN TESTS
def test_todo3_hidden_valid_inputs():
    for case in (no_gain_case(), double_gain_case()):
        jobs, slots = case
        check_schedule(jobs, slots, schedule(jobs, slots, True))


test_todo3_hidden_valid_inputs()
### END HIDDEN TESTS

# %% [markdown] key="md-todo-4-predicted"
# ### TODO 4 · `predicted_makespan`: predict before you run
#
# **Build:** for jobs that **all arrive at tick 0** with the given `tokens` (in id order), compute the makespan
# of static or continuous FIFO on `slots` slots **without calling `schedule`**. Static: consecutive groups of
# `slots` jobs, each group lasting as long as its longest job. Continuous: each job, in order, starts in the
# slot that frees first (`heapq` helps: the set-up cell imports it, and the grader runs that cell before your
# TODO). With more slots than jobs, every job starts at once. An empty list has makespan 0. The inputs are
# always valid (`tokens` holds positive ints, `slots` is a positive int), so you need not check them; the
# hidden tests never pass bad input. Compute from the jobs' lengths, not tick by tick: some hidden tests have
# jobs of up to a billion tokens, where a loop over ticks (or a call to `schedule`) runs out of time.
#
# **Check:** the test cell compares your prediction with `schedule` itself, and asks for jobs of a billion
# tokens (a loop over ticks would keep that cell running for minutes).
# *Worked example:* tokens `[2, 6, 3, 2, 4]` on 2 slots, static: groups (2, 6), (3, 2), (4) → 6 + 3 + 4 = 13.

# %% nbgrader={"grade": false, "grade_id": "todo4", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    ### BEGIN SOLUTION
    if not continuous:
        return sum(max(tokens[i:i + slots]) for i in range(0, len(tokens), slots))
    free_at = [0] * min(slots, len(tokens))
    makespan = 0
    for need in tokens:
        start = heapq.heappop(free_at)
        heapq.heappush(free_at, start + need)
        makespan = max(makespan, start + need)
    return makespan
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo4_tests", "locked": true, "points": 3, "schema_version": 3, "solution": false}
def test_todo4_worked_examples():
    expect(predicted_makespan([2, 6, 3, 2, 4], 2, False), 13, "TODO 4: A-E static is 6 + 3 + 4")
    expect(predicted_makespan([2, 6, 3, 2, 4], 2, True), 10, "TODO 4: A-E continuous")
    expect(predicted_makespan([1, 4, 2, 3], 2, True), 6, "TODO 4: 4 requests on 2 slots, continuous")


def test_todo4_agrees_with_schedule():
    for tokens, slots in (([5, 1, 1, 1, 1], 2), ([3, 3, 3], 5), ([7], 1), ([1, 2, 3, 4, 5, 6], 3)):
        for continuous in (False, True):
            want = schedule(jobs_from_tokens(tokens), slots, continuous)["makespan_ticks"]
            expect(predicted_makespan(tokens, slots, continuous), want,
                   f"TODO 4: tokens {tokens} on {slots} slots, {'continuous' if continuous else 'static'}")
    expect(predicted_makespan([], 2, True), 0, "TODO 4: no jobs, no ticks")


def test_todo4_long_jobs():
    expect(predicted_makespan([10**9, 1, 1, 10**9], 2, True), 10**9 + 2, "TODO 4: a billion tokens, continuous: 2 + 10**9")
    expect(predicted_makespan([10**9, 1, 1, 10**9], 2, False), 2 * 10**9, "TODO 4: a billion tokens, static: 2 groups of 10**9")


test_todo4_worked_examples()
test_todo4_agrees_with_schedule()
test_todo4_long_jobs()
passed("TODO 4", 3)
### BEGIN HIDDEN TESTS
def test_todo4_hidden_uneven():
    assert predicted_makespan([9, 1, 1, 9, 1, 1, 9, 1, 1], 3, False) == 27
    assert predicted_makespan([9, 1, 1, 9, 1, 1, 9, 1, 1], 3, True) == 12


test_todo4_hidden_uneven()
### END HIDDEN TESTS

# %% [markdown] key="md-where-real-engines"
# ## Where real engines go further |
#
# The tick model isolates one mechanism: when a freed slot is refilled. Real continuous batching adds:
#
# - **Three budgets per step.** `max_num_seqs` caps the requests in one step; `max_num_batched_tokens` caps
#   the tokens processed in one step, prefill tokens included (a decode request costs 1 token, a new prompt
#   may cost thousands); and the free **KV blocks** decide whether a new request can prefill and a running one
#   can grow. These are vLLM's names (`vllm/v1/core/sched/scheduler.py`) and nano-vllm's
#   (`nanovllm/engine/scheduler.py`). Accepting 1,000 connections is not computing 1,000 requests at once: the
#   rest wait in a queue, and a longer queue only means longer waits.
# - **Slots and memory are admitted together.** A free slot is not enough: the request also needs KV room
#   for the tokens it will generate, and the reverse holds too. Memory does not buy compute, and an idle slot
#   does not buy memory. Our tick model has slots only.
# - **Prefill and decode in one step.** nano-vllm is *prefill-first*: its `Scheduler.schedule` admits waiting
#   requests first, and if it admitted any, the step is a pure prefill step (short time to first token, but
#   running requests stall). Since its pull request #204 (April 2026) it also chunks: the first prompt of
#   such a step may be cut to the token budget left, and a later prompt must fit whole (as of November 2026).
#   vLLM V1 *mixes* them: its `Scheduler.schedule`
#   first gives running requests their decode tokens, then fills the rest of the token budget with prefill,
#   splitting a long prompt into chunks (**chunked prefill**: `enable_chunked_prefill`, on by default in
#   `vllm/config/scheduler.py`), so neither side waits long. Without chunks, one long prompt makes its whole step long, and the gaps
#   between the tokens of the requests already running grow.
# - **Preemption when KV runs out.** *Recompute* frees the victim's blocks and later prefills its prompt plus the
#   tokens it already generated; *swap* copies blocks to CPU memory and back. vLLM V1 (`_preempt_request` in
#   `vllm/v1/core/sched/scheduler.py`) and nano-vllm (`Scheduler.preempt`) only recompute. Under FCFS both
#   preempt the **last admitted** running request (the tail of their running list): vLLM's comment calls it
#   "the lowest-priority request", and under FCFS the latest arrival is the lowest, so FCFS order is kept.
#   (This course adds that it has usually generated least, so recompute usually costs least; a long prompt
#   admitted last is the exception.) For its user, the answer pauses mid-sentence: one cause of bad P99.
#   Frequent preemptions mean the configuration does not fit the load; the usual remedies are a lower
#   `max_num_seqs`, a higher `gpu_memory_utilization`, a shorter allowed context, or a quantized KV cache.
# - **Admission control, priority, backpressure, cancellation.** Reject early when the queue is too long or
#   the input is longer than the model accepts (a clear refusal beats a timeout a minute later); serve
#   interactive requests before batch jobs; let the gateway see that the backend is saturated; and remove a
#   cancelled request from the queue and the batch at once, freeing its KV blocks.
# - **Fairness vs cache hits.** Serving requests that hit the prefix cache first raises throughput, but
#   requests that never hit can wait for ever (this course's argument). SGLang offers longest-prefix-match
#   (`lpm`) ordering and keeps FCFS as its default. When more than 128 requests wait it falls back to FCFS,
#   and its stated reason is cost: prefix matching and sorting a long queue take time
#   (`SchedulePolicy._determine_active_policy` in `python/sglang/srt/managers/schedule_policy.py`, as of
#   November 2026).
#
# The goal is not maximum throughput alone but throughput within the latency targets (goodput). The next
# notebook, `02_decode_scheduling`, adds priorities, deadlines, KV capacity and preemption to the picture.

# %% [markdown] key="md-explanations-todo-1" tags=["solution-edition"]
# ## Explanations of TODO 1–4 (solved edition) |
#
# **TODO 1.** One pass over the trace records the first and the last tick each id is served; wait is first −
# arrival, flow is last + 1 − arrival. It needs no slot assignment and no knowledge of the policy, which is why
# it works for static and continuous runs alike, idle jumps included, and for any other scheduler's trace.
#
# **TODO 2.** Count serves per id (an unknown id fails at once), then compare with `tokens`: too few, too many
# and never served are all the same inequality. A duplicate in one tick counts twice, as it should; a separate
# check (`check_schedule`'s "no id active twice") says *why* it is wrong.
#
# **TODO 3.** *No gain:* a freed slot must find nobody to take it, e.g. `[4, 4, 1]` on 2 slots: the short job is
# last, so it waits for a slot in both policies. *At least 2×:* put one long job in every static group,
# e.g. `[8, 1, 1, 1] × 3` on 4 slots: static pays 8 per group (24 ticks), while continuous runs the 3 long
# jobs side by side and streams the 9 short ones through the 1 slot left (10 ticks).
#
# **TODO 4.** Static is a sum of group maxima. Continuous FIFO with all arrivals at 0 is list scheduling in
# order: each job takes the slot that frees first. A min-heap of free times gives the start of each job in
# O(log slots). Both match `schedule` exactly because the tick model has no per-step cost that depends on the
# batch.
