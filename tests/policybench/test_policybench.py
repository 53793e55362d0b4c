"""The event-driven engine agrees with notebook 03's teaching engine; policies, workloads, grid, report."""
from __future__ import annotations

import csv
import inspect
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policybench import grid, policies, quiet_run
from policybench.decode_group import DecodeGroup
from policybench.fast_engine import FastEngine
from policybench.metrics import summarize
from policybench.teaching import teaching_records
from lab.engine.slo import SLO_EXERCISE
from lab.engine.workloads import ideal_latency_us, make_trace


@st.composite
def scenarios(draw):
    """A random trace, engine configuration, time model and policy, small enough for the teaching engine."""
    n = draw(st.integers(1, 30))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1_000, 9_000, 30_000, 120_000]), min_size=n, max_size=n))
    reqs, clock = [], 0
    for i, gap in enumerate(gaps):
        clock += gap
        reqs.append({"seq_id": i, "arrival_us": clock, "num_prompt_tokens": draw(st.integers(1, 150)),
                     "max_tokens": draw(st.integers(1, 60)), "priority": draw(st.integers(0, 2)),
                     "deadline_us": clock + draw(st.integers(0, 1_000_000))})
    block_size = draw(st.sampled_from([1, 2, 4, 16]))
    longest = max(r["num_prompt_tokens"] + r["max_tokens"] for r in reqs)
    chunked = draw(st.booleans())
    budget = draw(st.integers(1, 300))
    config = {"num_blocks": -(-longest // block_size) + draw(st.integers(0, 40)), "block_size": block_size,
              "max_num_seqs": draw(st.integers(1, 10)), "enable_chunked_prefill": chunked,
              "max_num_batched_tokens": budget if chunked else max(budget, longest),
              "long_prefill_token_threshold": draw(st.sampled_from([0, 0, 5, 64])) if chunked else 0}
    timing = {"step_overhead_us": draw(st.sampled_from([0, 1, 8_000])), "per_token_us": draw(st.sampled_from([0, 3, 100]))}
    return reqs, config, timing, draw(st.sampled_from(sorted(policies.POLICIES)))


@pytest.fixture
def short_hrrn_window(monkeypatch):
    """hrrn's FCFS fallback above 128 waiting, brought down to 3 so that small traces cross it."""
    monkeypatch.setattr(policies, "HRRN_MAX_SORTED", 3)
    monkeypatch.setitem(policies.DYNAMIC, "hrrn", (3, policies.fcfs))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_fast_engine_matches_teaching_engine(short_hrrn_window, scenario):
    reqs, config, timing, policy = scenario
    assert FastEngine(policy=policy, **config, **timing).run(reqs) == teaching_records(reqs, policy, **timing, **config)


@pytest.mark.slow
def test_differential_covers_long_decode_runs_and_preemption():
    """Longer traces: the jumps, preemption storms and every policy, against the teaching engine."""
    for seed, policy in enumerate(sorted(policies.POLICIES)):
        reqs = make_trace(150, 12, seed=seed, max_prompt=400, max_output=200)
        config = {"num_blocks": 60, "block_size": 16, "max_num_batched_tokens": 256, "max_num_seqs": 16}
        fast = FastEngine(policy=policy, **config).run(reqs)
        assert fast == teaching_records(reqs, policy, **config), policy
        assert sum(r["num_preemptions"] for r in fast) > 0, policy  # the pool is small enough to preempt


def test_differential_covers_steps_whose_budget_runs_out():
    """Long prompts, a small budget and ample KV: the budget runs out inside the running pass on most steps, which
    the engine takes in bulk only when no decoding request would go without; records as the teaching engine's."""
    for seed, policy in enumerate(("fcfs", "priority", "hrrn")):
        reqs = make_trace(200, 30, seed=seed, max_prompt=400)
        config = {"num_blocks": 2000, "max_num_batched_tokens": 128, "long_prefill_token_threshold": seed * 40}
        assert FastEngine(policy=policy, **config).run(reqs) == teaching_records(reqs, policy, **config), policy


def test_fast_engine_takes_long_jumps():
    """Decode-only runs are applied at once: far fewer loop turns than engine steps."""
    engine = FastEngine()
    turns = {"step": 0}
    original = engine._step

    def counting():
        turns["step"] += 1
        original()

    engine._step = counting
    engine.run(make_trace(300, 4, seed=1))
    assert turns["step"] * 5 < engine.step


QUIET_JUMP = "steps, step, clock = steps + j, step + j, clock + j * duration"


@pytest.mark.parametrize("where", ["general loop", "quiet loop"])
def test_a_broken_fast_engine_is_caught(where, monkeypatch):
    """The differential comparison fails when a jump miscounts one step (the checker can fail), in either loop."""
    reqs = make_trace(40, 8, seed=3)
    good = teaching_records(reqs, "fcfs")
    assert FastEngine().run(reqs) == good
    if where == "general loop":
        monkeypatch.setattr(FastEngine, "_quiet_run", lambda engine, reqs, arrival_us, nxt: nxt)
        assert FastEngine().run(reqs) == good
        advance = DecodeGroup.advance
        monkeypatch.setattr(DecodeGroup, "advance", lambda group, k: advance(group, k + 1 if k > 1 else k))  # jumps: k > 1
    else:  # a mutant of quiet_run.py: each jump counts one engine step too many
        source = inspect.getsource(quiet_run)
        assert source.count(QUIET_JUMP) == 1
        namespace = {"__name__": "policybench.quiet_run", "__package__": "policybench"}
        exec(compile(source.replace(QUIET_JUMP, QUIET_JUMP.replace("step + j,", "step + j + 1,")), "quiet_run mutant", "exec"),
             namespace)
        monkeypatch.setattr(FastEngine, "_quiet_run", namespace["QuietRun"]._quiet_run)
    assert FastEngine().run(reqs) != good


def test_policies_order_the_queue():
    class R:
        def __init__(self, seq_id, arrival_us, priority=0, deadline_us=0, max_tokens=1, prompt=10, stamp=0, arrived_at=0):
            self.seq_id, self.arrival_us, self.priority, self.deadline_us = seq_id, arrival_us, priority, deadline_us
            self.max_tokens, self.num_prompt_tokens, self.preempt_stamp, self.arrival_prefill_tokens = max_tokens, prompt, stamp, arrived_at

    class S:
        prefill_tokens, num_waiting = 1000, 2

    old, urgent = R(1, 0, priority=2, deadline_us=900, max_tokens=50, prompt=500), R(2, 10, priority=0, deadline_us=50, max_tokens=5, prompt=10)
    first = {name: min([old, urgent], key=lambda r: key(r, S())).seq_id for name, key in policies.POLICIES.items()}
    assert first == {"fcfs": 1, "priority": 2, "aging": 2, "edf": 2, "sjf_oracle": 2, "hrrn": 2}
    waited_long = R(1, -3 * policies.AGING_US, priority=2)
    assert min([waited_long, urgent], key=lambda r: policies.aging(r, S())) is waited_long  # aging overtakes priority
    assert policies.fcfs(R(5, 99, stamp=2), S()) < policies.fcfs(R(6, 98, stamp=1), S()) < policies.fcfs(R(7, 0), S())
    with pytest.raises(ValueError, match="unknown policy"):
        FastEngine(policy="lifo")


def test_workloads_are_seeded_and_shaped():
    a, b = make_trace(2000, 10, seed=7), make_trace(2000, 10, seed=7)
    assert a == b and a != make_trace(2000, 10, seed=8)
    rate = len(a) / (a[-1]["arrival_us"] / 1e6)
    assert 9 < rate < 11
    prompts = sorted(r["num_prompt_tokens"] for r in a)
    assert 220 < prompts[len(prompts) // 2] < 290  # lognormal median 256
    assert all(r["deadline_us"] > r["arrival_us"] for r in a)
    assert {r["priority"] for r in a} == {0, 1, 2}
    gaps = lambda t: [y["arrival_us"] - x["arrival_us"] for x, y in zip(t, t[1:])]
    cv = lambda g: (sum((x - sum(g) / len(g)) ** 2 for x in g) / len(g)) ** 0.5 / (sum(g) / len(g))
    assert cv(gaps(make_trace(4000, 10, seed=1, arrival="gamma", cv=3.0))) > 2 > cv(gaps(a))
    assert ideal_latency_us(100, 3) == 8_000 + 100 * 100 + 2 * 8_100
    with pytest.raises(ValueError):
        make_trace(10, 0)
    with pytest.raises(ValueError):
        make_trace(10, 5, arrival="uniform")


def test_metrics_from_records():
    records = [{"seq_id": 0, "arrival_us": 0, "first_token_us": 100_000, "finish_us": 400_000, "num_output_tokens": 4,
                "priority": 0, "num_preemptions": 1, "num_recomputed_tokens": 30},
               {"seq_id": 1, "arrival_us": 0, "first_token_us": 600_000, "finish_us": 600_000, "num_output_tokens": 1,
                "priority": 1, "num_preemptions": 0, "num_recomputed_tokens": 0}]
    trace = [{"seq_id": 0, "deadline_us": 500_000}, {"seq_id": 1, "deadline_us": 500_000}]
    row = summarize(records, trace)
    assert row["p50_tpot_ms"] == 100.0 and row["max_wait_ms"] == 600.0
    assert row["deadline_miss_rate"] == 0.5 and row["slo_attainment"] == 0.0  # 0: TPOT 100 > 50; 1: TTFT 600 > 500
    assert summarize(records, trace, ttft_slo_ms=600, tpot_slo_ms=100)["slo_attainment"] == 1.0
    assert (row["num_preemptions"], row["num_recomputed_tokens"]) == (1, 30)
    assert row["wait_quantiles_ms"][0] == 100.0 and row["wait_quantiles_ms"][-1] == 600.0


@pytest.mark.slow
def test_grid_runs_and_writes_a_report(tmp_path):
    from policybench.report import write_report
    task_list = grid.tasks(["fcfs", "priority"], [6, 14], [0], num_requests=300)
    rows = grid.run_grid(task_list, backend="serial", progress=False)
    assert [(r["policy"], r["rate_req_s"]) for r in rows] == [("fcfs", 6), ("fcfs", 14), ("priority", 6), ("priority", 14)]
    assert rows == grid.run_grid(task_list, backend="serial", progress=False) or all(
        {k: v for k, v in a.items() if k != "sim_seconds"} == {k: v for k, v in b.items() if k != "sim_seconds"}
        for a, b in zip(rows, grid.run_grid(task_list, backend="serial", progress=False)))
    path = grid.write_csv(rows, tmp_path / "results.csv")
    with path.open() as fh:
        assert len(list(csv.DictReader(fh))) == 4
    report = write_report(rows, tmp_path)
    text = report.read_text()
    assert text.index("Model assumptions") < text.index("## Tail latency") and "hardware" in text
    assert all((tmp_path / name).exists() for name in ("tails_vs_load.png", "wait_cdf.png", "starvation_deadlines_preemption.png"))


def test_local_backend_matches_serial():
    task_list = grid.tasks(["edf"], [9], [0, 1], num_requests=200)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "sim_seconds"} for r in rows]
    assert strip(grid.run_grid(task_list, backend="local", workers=2, progress=False)) == \
        strip(grid.run_grid(task_list, backend="serial", progress=False))


@pytest.mark.parametrize("name", ["dask", "ray"])
def test_optional_backends_are_extras(name):
    """Dask and Ray are never required: without the package the error says what to install."""
    try:
        __import__("dask.distributed" if name == "dask" else "ray")
    except ImportError:
        with pytest.raises(RuntimeError, match="optional extra"):
            grid.choose_backend(name)
    else:  # installed: the grid runs on it and gives the local rows
        task_list = grid.tasks(["fcfs"], [6], [0], num_requests=100)
        assert grid.run_grid(task_list, backend=name, workers=1, progress=False)[0]["p50_ttft_ms"] == \
            grid.run_task(task_list[0])["p50_ttft_ms"]
    with pytest.raises(ValueError, match="backend must be"):
        grid.choose_backend("spark")


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="may grow"):
        FastEngine(num_blocks=1, block_size=4).run([{"seq_id": 0, "arrival_us": 0, "num_prompt_tokens": 4, "max_tokens": 2}])
    with pytest.raises(ValueError, match="duplicate"):
        FastEngine().run([{"seq_id": 0, "arrival_us": 0, "num_prompt_tokens": 4, "max_tokens": 2}] * 2)
    with pytest.raises(ValueError, match="must be an int"):
        FastEngine(max_num_seqs=0)
    with pytest.raises(ValueError, match="must be an int"):
        FastEngine().run([{"seq_id": 0, "arrival_us": 0.5, "num_prompt_tokens": 4, "max_tokens": 2}])
    rng = random.Random(0)
    assert FastEngine().run([]) == []
    assert len(FastEngine().run([{"seq_id": i, "arrival_us": rng.randrange(10**6), "num_prompt_tokens": 9, "max_tokens": 3}
                                 for i in range(20)])) == 20


@pytest.mark.slow
def test_slo_exercise_separates_policies():
    """The exercise's property (notebook 03's TODO 5) holds for aging at 3-7 s per level, on the stated traces and
    on trace 5, and fails for FCFS, fixed priority, aging at 1 s, 2.5 s on trace 5 (its interactive tail), 8 s on
    trace 0 and on 5 (a wait) and a minute: what the solved edition's explanation of TODO 5 says of the four traces,
    and what its cell shows on trace 5. The same holds on the public held-out traces (grader/term.py's public mode),
    trace A of them missed at 2.5 s and 8 s as trace 5 is."""
    from grader.assignment import load
    public = load("03_batch_scheduling").suite.PUBLIC_HELD_OUT
    from policybench.exercise import aging_key, judge
    unseen = 5   # the solved edition's aging cell: a trace the notebook does not use before it
    four = (*SLO_EXERCISE["seeds"], unseen)
    assert "class-0 p99 TTFT" in judge("fcfs") and "class-0 p99 TTFT" in judge(aging_key(1))
    assert "max wait" in judge("priority") and "class-0" not in judge("priority")
    for rate in (3, 4, 5, 6, 7):
        assert judge(aging_key(rate), seeds=(*four, *public)) == "", rate
    for trace in (unseen, public[0]):
        assert judge(aging_key(2.5)) == "" and judge(aging_key(2.5), seeds=(trace,)).startswith(f"trace {trace}: class-0 p99 TTFT")
        assert judge(aging_key(8), seeds=(trace,)).startswith(f"trace {trace}: max wait")
    assert judge(aging_key(8), seeds=(0,)).startswith("trace 0: max wait")
    # "1 s comes close to FCFS and misses three of the four, a minute comes close to fixed priority and misses two"
    for rate, count in ((1, 3), (60, 2)):
        missed = {seed for seed in four if judge(aging_key(rate), seeds=(seed,))}
        assert len(missed) == count, (rate, missed)
    with pytest.raises(ValueError):
        aging_key(0)


@pytest.mark.slow
def test_slo_traces_named_in_todo_5():
    """Notebook 03's TODO 5 text: the rates that meet the SLO need not form one interval (trace 6: aging at 3 s and
    at 4 s per level meets both parts, 3.5 s misses the interactive one), and some traces of the exercise's kind no
    policy tried meets (trace 17: FCFS, fixed priority, and aging from one second to a minute per level)."""
    from policybench.exercise import aging_key, judge
    assert judge(aging_key(3), seeds=(6,)) == "" and judge(aging_key(4), seeds=(6,)) == ""
    assert judge(aging_key(3.5), seeds=(6,)).startswith("trace 6: class-0 p99 TTFT")
    for policy in ("fcfs", "priority", *(aging_key(rate) for rate in (1, 2, 3, 3.5, 4, 4.25, 4.5, 5, 5.5, 6, 8, 60))):
        assert judge(policy, seeds=(17,)) != "", policy


@st.composite
def key_runs(draw):
    """A trace, an engine configuration and a key function given as any order of the trace's requests."""
    trace = [{k: v for k, v in r.items() if k != "deadline_us"}
             for r in make_trace(draw(st.integers(2, 30)), draw(st.sampled_from([5, 40, 200])), seed=draw(st.integers(0, 10_000)),
                                 max_prompt=60, max_output=40)]
    place = dict(zip(draw(st.permutations([r["seq_id"] for r in trace])), range(len(trace))))
    ties = draw(st.booleans())  # keys with ties: then seq_id decides
    longest = max(-(-(r["num_prompt_tokens"] + r["max_tokens"]) // 16) for r in trace)
    chunked = draw(st.booleans())
    config = {"num_blocks": longest + draw(st.integers(0, 30)), "max_num_seqs": draw(st.sampled_from([1, 3, 12, 40])),
              # unchunked, a recomputed request (prompt + output so far) must still fit one step's budget
              "max_num_batched_tokens": draw(st.sampled_from([64, 256])) if chunked else 256, "enable_chunked_prefill": chunked,
              "long_prefill_token_threshold": draw(st.sampled_from([0, 24])) if chunked else 0}
    return trace, (lambda info: (place[info.seq_id] // 3,) if ties else place[info.seq_id]), config


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key_runs())
def test_a_key_function_runs_the_same_on_both_engines(run):
    """How TODO 5 is graded: the teaching engine under a key function equals the fast engine under the order
    `lab.engine.serving_order` (the grader's reading of the key) gives, preemptions included."""
    from lab.engine import LLMEngine, Sequence, serving_order
    from policybench.exercise import ranked_policy
    from policybench.teaching import _namespace

    trace, key, config = run
    teaching = LLMEngine(_namespace()["Scheduler"](policy=key, **config)).run([Sequence(**r) for r in trace]).records
    order = serving_order(key, [Sequence(**r).info() for r in trace])
    assert FastEngine(policy=ranked_policy(order), **config).run(trace) == teaching


GENERAL_PASSES_ONLY = {"_quiet_run": lambda engine, reqs, arrival_us, nxt: nxt,
                       "_group_step": lambda engine, arrival=None: False, "_group_preempts": lambda engine: False}


@pytest.mark.slow
@pytest.mark.parametrize("shortcut", [*GENERAL_PASSES_ONLY, "all"])
def test_group_step_shortcuts_match_the_general_passes(shortcut, monkeypatch):
    """quiet_run.py's loop and group_step.py's shortcuts give the records the general passes give, on traces too
    long for the teaching engine: saturated, preempting, chunked, under several policies."""
    cases = [("fcfs", 14, {"num_blocks": 300}), ("priority", 14, {"num_blocks": 300}), ("hrrn", 10, {"num_blocks": 400}),
             ("edf", 8, {"max_num_batched_tokens": 512, "long_prefill_token_threshold": 96}),
             ("fcfs", 6, {"enable_chunked_prefill": False, "max_num_batched_tokens": 4096, "num_blocks": 500})]
    expected = [FastEngine(policy=policy, **config).run(make_trace(1500, rate, seed=7)) for policy, rate, config in cases]
    assert sum(r["num_preemptions"] for r in expected[0]) > 0  # the first case preempts
    for name, general in GENERAL_PASSES_ONLY.items():
        if shortcut in (name, "all"):
            monkeypatch.setattr(FastEngine, name, general)
    for (policy, rate, config), records in zip(cases, expected):
        assert FastEngine(policy=policy, **config).run(make_trace(1500, rate, seed=7)) == records, (policy, rate, config)


def test_a_broken_shortcut_is_caught(monkeypatch):
    """The comparison above can fail: the group's bulk preemption evicting the first admitted instead of the last
    (only there: the general passes keep the right victim)."""
    trace, config = make_trace(1500, 14, seed=7), {"num_blocks": 300}
    good = FastEngine(**config).run(trace)
    group_preempts = FastEngine._group_preempts

    def evicts_the_first(engine):
        engine._victim = lambda: next(iter(engine.running))  # for this call only
        try:
            return group_preempts(engine)
        finally:
            del engine._victim

    monkeypatch.setattr(FastEngine, "_group_preempts", evicts_the_first)
    assert FastEngine(**config).run(trace) != good


def test_fcfs_queue_orders_as_the_fcfs_key():
    """FCFS runs on a deque (vLLM's FCFSRequestQueue); the same key through the heap gives the same records."""
    trace, config = make_trace(1500, 14, seed=3), {"num_blocks": 300}
    by_key = FastEngine(policy=lambda req, sched: policies.fcfs(req, sched), **config).run(trace)
    assert sum(r["num_preemptions"] for r in by_key) > 0
    assert FastEngine(policy="fcfs", **config).run(trace) == by_key


def test_custom_key_function_is_a_policy():
    """Adding a policy = one function: a key function runs as is, and agrees with the named policy it copies."""
    reqs = make_trace(300, 14, seed=2)
    copy = lambda req, sched: (req.deadline_us, req.arrival_us, req.seq_id)  # noqa: E731  (edf, by hand)
    assert FastEngine(policy=copy).run(reqs) == FastEngine(policy="edf").run(reqs)


def aging_cell_source() -> str:
    from grader import editions
    (cell,) = [c for c in editions.read_master("03_batch_scheduling").cells if c.metadata.get("key") == "code-aging-rates"]
    return cell.source


@pytest.mark.slow  # reads the master (jupytext asks pandoc for its version)
@pytest.mark.parametrize("broken", [False, True])
def test_notebook_03s_aging_cell_runs_the_fast_engine_only_once_it_matches_yours(broken):
    """The solved edition's aging cell runs its three rates on the fast engine after comparing that engine's records with
    the reader's engine on part of the trace: the reference passes and draws the table; an engine with another victim
    rule (a mutant of TODO 3 that preempts under a key function) stops the cell at that check."""
    from grader import reference
    from grader.assignment import get, mutated_answers
    from lab.checks import CheckFailed

    name = "03_batch_scheduling"
    mutant = next(m for m in get(name).mutants if m.name == "FCFS preempts the first admitted")
    ns = reference.namespace(name, mutated_answers(name, mutant) if broken else None)
    if broken:
        with pytest.raises(CheckFailed, match="the fast engine's records are your engine's"):
            exec(aging_cell_source(), ns)
    else:
        exec(aging_cell_source(), ns)  # its table's verdicts: tests/course/test_prose_numbers.py, on the executed edition
        assert ns["aging_rates"] == [2.5, 4, 8]


@pytest.mark.slow
def test_notebook_03s_aging_cell_runs_on_your_engine_without_the_course_repository(monkeypatch):
    """Opened alone (a cloud notebook has lab, not policybench), the aging cell gives the same records on the reader's
    engine: test_cloud runs the solved edition so; here, the fallback's records against the fast engine's."""
    import sys

    from grader import reference
    import lab.engine

    ns = reference.namespace("03_batch_scheduling")
    source = aging_cell_source().split("\naging_traces = ")[0]  # the imports and helpers, not the runs
    exec(source, with_fast := dict(ns))
    for module in ("policybench.exercise", "policybench.fast_engine"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails, as where policybench is not installed
    exec(source, alone := dict(ns))
    assert with_fast["FastEngine"] is not None and alone["FastEngine"] is None
    requests = lab.engine.exercise_trace(5)[:300]
    key = alone["aging_key"](4)
    assert alone["fast_records"](key, requests) == with_fast["fast_records"](key, requests)
