"""lab.schedule against the numbers of the source chapters on continuous batching and budgets, input validation and properties."""
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from lab import A_TO_E, BATCHING_EXAMPLES, FOUR_ON_TWO, NO_GAIN, check_schedule, schedule


def both(example):
    return schedule(example.jobs, example.slots, False), schedule(example.jobs, example.slots, True)


@pytest.mark.parametrize("example", BATCHING_EXAMPLES, ids=lambda e: e.name)
def test_seed_makespan_and_utilization(example):
    for result in both(example):
        assert result["makespan_ticks"] == example.makespan[result["policy"]]
        assert Fraction(result["busy_slots"], example.slots * result["makespan_ticks"]) == example.utilization[result["policy"]]
        assert math.isclose(result["utilization"], float(example.utilization[result["policy"]]))
        check_schedule(example.jobs, example.slots, result)


def test_four_on_two_details():
    static, cont = both(FOUR_ON_TWO)
    assert static["busy_slots"] == cont["busy_slots"] == 10
    assert [r["finish"] for r in cont["completed"]] == [1, 4, 3, 6]
    assert [r["wait"] for r in cont["completed"]] == [0, 0, 1, 3]
    assert [r["flow"] for r in cont["completed"]] == [1, 4, 3, 6]
    # Static: 0 and 1 run as a group; 2 and 3 only start at tick 4.
    assert [r["start"] for r in static["completed"]] == [0, 0, 4, 4]
    assert Fraction(static["makespan_ticks"], cont["makespan_ticks"]) == Fraction(7, 6)


def test_no_gain_keeps_the_idle_prefix():
    static, cont = both(NO_GAIN)
    assert static["completed"] == cont["completed"]
    assert [r["start"] for r in cont["completed"]] == [3, 3]
    assert cont["trace"][0]["tick"] == 3  # the clock jumped, but makespan counts from 0
    busy_window = cont["makespan_ticks"] - min(j["arrival"] for j in NO_GAIN.jobs)
    assert Fraction(cont["busy_slots"], 2 * busy_window) == NO_GAIN.extra["utilization_from_first_arrival"]


def test_a_to_e_rounds_to_seed_percentages():
    static, cont = both(A_TO_E)
    assert round(100 * static["utilization"]) == 65 and round(100 * cont["utilization"]) == 85
    assert static["busy_slots"] == cont["busy_slots"] == 17


def test_trace_records_every_served_tick():
    _, cont = both(FOUR_ON_TWO)
    assert [row["served"] for row in cont["trace"]] == [[0, 1], [1, 2], [1, 2], [1, 3], [3], [3]]


def test_late_arrival_joins_at_its_tick_boundary():
    jobs = [{"id": 0, "arrival": 0, "tokens": 3}, {"id": 1, "arrival": 2, "tokens": 1}]
    cont = schedule(jobs, 2, True)
    assert cont["completed"][1]["start"] == 2
    static = schedule(jobs, 2, False)
    assert static["completed"][1]["start"] == 3  # waits for the group of job 0


GOOD = {"id": 0, "arrival": 0, "tokens": 1}
BAD_JOBS = {
    "bool id": {**GOOD, "id": True},
    "bool tokens": {**GOOD, "tokens": True},
    "float tokens": {**GOOD, "tokens": 1.5},
    "NaN arrival": {**GOOD, "arrival": float("nan")},
    "inf arrival": {**GOOD, "arrival": float("inf")},
    "str tokens": {**GOOD, "tokens": "3"},
    "missing key": {"id": 0, "arrival": 0},
    "extra key": {**GOOD, "priority": 1},
    "negative arrival": {**GOOD, "arrival": -1},
    "zero tokens": {**GOOD, "tokens": 0},
}


@pytest.mark.parametrize("name", BAD_JOBS)
@pytest.mark.parametrize("continuous", [False, True])
def test_rejects_bad_job(name, continuous):
    bad = BAD_JOBS[name]
    with pytest.raises(ValueError) as err:
        schedule([GOOD | {"id": 7}, bad], 2, continuous)
    message = str(err.value)
    assert "job" in message
    field = {"missing key": "tokens", "extra key": "priority"}.get(name, name.split()[-1])
    assert field in message, message


def test_rejects_duplicate_id():
    with pytest.raises(ValueError, match="job 0: field 'id' is a duplicate"):
        schedule([GOOD, dict(GOOD)], 1, True)


@pytest.mark.parametrize("slots", [0, -1, True, False, 2.0, "2", None])
def test_rejects_bad_slots(slots):
    with pytest.raises(ValueError, match="slots"):
        schedule([GOOD], slots, True)


@pytest.mark.parametrize("jobs", ["abc", {"id": 0}, None, [3]])
def test_rejects_non_list_jobs(jobs):
    with pytest.raises(ValueError):
        schedule(jobs, 1, True)


def test_rejects_non_bool_policy_flag():
    with pytest.raises(ValueError, match="continuous"):
        schedule([GOOD], 1, 1)


def test_empty_workload():
    result = schedule([], 3, True)
    assert result["makespan_ticks"] == 0 and result["completed"] == [] and result["utilization"] == 0.0


job_lists = st.lists(
    st.tuples(st.integers(0, 30), st.integers(1, 12)), min_size=0, max_size=25,
).map(lambda rows: [{"id": i, "arrival": a, "tokens": t} for i, (a, t) in enumerate(rows)])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(job_lists, st.integers(1, 6), st.booleans())
def test_invariants_hold_on_random_inputs(jobs, slots, continuous):
    result = schedule(jobs, slots, continuous)
    check_schedule(jobs, slots, result)
    assert result["makespan_ticks"] <= max([j["arrival"] for j in jobs], default=0) + sum(j["tokens"] for j in jobs)
    for rec in result["completed"]:
        assert rec["flow"] == rec["wait"] + rec["tokens"]  # no preemption gaps in this model


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20), st.integers(1, 20), st.integers(1, 4))
def test_single_job_same_under_both(arrival, tokens, slots):
    jobs = [{"id": 5, "arrival": arrival, "tokens": tokens}]
    static, cont = schedule(jobs, slots, False), schedule(jobs, slots, True)
    assert static["completed"] == cont["completed"] and static["makespan_ticks"] == arrival + tokens


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 10), min_size=1, max_size=8), st.integers(0, 5), st.integers(0, 3))
def test_enough_slots_same_under_both(tokens, arrival, spare):
    jobs = [{"id": i, "arrival": arrival, "tokens": t} for i, t in enumerate(tokens)]
    slots = len(jobs) + spare
    static, cont = schedule(jobs, slots, False), schedule(jobs, slots, True)
    assert static["completed"] == cont["completed"] and static["trace"] == cont["trace"]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 10), st.integers(1, 8), st.integers(0, 5))
def test_equal_lengths_same_under_both(num_jobs, tokens, slots, arrival):
    jobs = [{"id": i, "arrival": arrival, "tokens": tokens} for i in range(num_jobs)]
    static, cont = schedule(jobs, slots, False), schedule(jobs, slots, True)
    assert static["completed"] == cont["completed"] and static["makespan_ticks"] == cont["makespan_ticks"]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(job_lists, st.integers(1, 6))
def test_continuous_never_slower_when_all_arrive_together(jobs, slots):
    """With one common arrival, refilling a freed slot can only help the makespan."""
    together = [dict(j, arrival=0) for j in jobs]
    assert schedule(together, slots, True)["makespan_ticks"] <= schedule(together, slots, False)["makespan_ticks"]


def tick_by_tick(jobs: list[dict], slots: int, continuous: bool) -> dict:
    """The one-tick transition of notebook 01, tick by tick and job by job (idle ticks too): obviously right, slow."""
    waiting = sorted(jobs, key=lambda j: (j["arrival"], j["id"]))
    served = {j["id"]: 0 for j in jobs}
    start, finish, running, trace, clock = {}, {}, [], [], 0
    while waiting or running:
        running = [i for i in running if i not in finish]  # reclaim the slots freed in the previous tick
        while waiting and waiting[0]["arrival"] <= clock and len(running) < slots and (continuous or not running
                                                                                        or start[running[0]] == clock):
            job = waiting.pop(0)
            start[job["id"]] = clock
            running.append(job["id"])
        if running:
            trace.append({"tick": clock, "served": list(running)})
        for i in running:
            served[i] += 1
            if served[i] == next(j["tokens"] for j in jobs if j["id"] == i):
                finish[i] = clock + 1
        running = [i for i in running if i not in finish]
        clock += 1
    busy = sum(len(row["served"]) for row in trace)
    makespan = max(finish.values(), default=0)
    completed = [{"id": j["id"], "arrival": j["arrival"], "tokens": j["tokens"], "start": start[j["id"]], "finish": finish[j["id"]],
                  "wait": start[j["id"]] - j["arrival"], "flow": finish[j["id"]] - j["arrival"]}
                 for j in sorted(jobs, key=lambda j: j["id"])]
    return {"policy": "continuous" if continuous else "static", "slots": slots, "makespan_ticks": makespan, "busy_slots": busy,
            "utilization": busy / (slots * makespan) if makespan else 0.0, "completed": completed, "trace": trace}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(job_lists, st.integers(1, 6), st.booleans())
def test_schedule_gives_what_the_tick_by_tick_model_gives(jobs, slots, continuous):
    """The heap of finish ticks changes nothing: every field, every trace row, equals the plain per-tick model."""
    assert schedule(jobs, slots, continuous) == tick_by_tick(jobs, slots, continuous)


def test_the_tick_by_tick_comparison_catches_an_off_by_one():
    jobs = [{"id": 0, "arrival": 0, "tokens": 2}, {"id": 1, "arrival": 0, "tokens": 1}]
    wrong = tick_by_tick(jobs, 1, True)
    wrong["completed"][0]["finish"] += 1
    assert schedule(jobs, 1, True) != wrong and schedule(jobs, 1, True) == tick_by_tick(jobs, 1, True)
