"""check_schedule must catch every broken invariant in a corrupted result."""
import copy

import pytest

from lab import FOUR_ON_TWO, ScheduleInvariantError, check_schedule, schedule


@pytest.fixture
def good():
    return FOUR_ON_TWO.jobs, FOUR_ON_TWO.slots, schedule(FOUR_ON_TWO.jobs, FOUR_ON_TWO.slots, True)


def corrupt(result, how):
    bad = copy.deepcopy(result)
    how(bad)
    return bad


CORRUPTIONS = {
    "no id active twice": lambda r: r["trace"][0]["served"].append(0),
    "active <= slots": lambda r: r["trace"][1]["served"].append(0),
    "served exactly tokens times": lambda r: r["trace"][5]["served"].clear(),
    "known ids only": lambda r: r["trace"][4]["served"].append(99),
    "completed exactly once": lambda r: r["completed"].append(dict(r["completed"][0])),
    "work conservation": lambda r: r.update(busy_slots=r["busy_slots"] + 1),
    "wait and flow": lambda r: r["completed"][2].update(wait=0),
}


@pytest.mark.parametrize("rule", CORRUPTIONS)
def test_checker_catches_corruption(good, rule):
    jobs, slots, result = good
    check_schedule(jobs, slots, result)  # the untouched result passes
    with pytest.raises(ScheduleInvariantError, match=rule):
        check_schedule(jobs, slots, corrupt(result, CORRUPTIONS[rule]))


def test_checker_catches_start_before_arrival():
    jobs = [{"id": 0, "arrival": 2, "tokens": 1}]
    result = schedule(jobs, 1, True)
    bad = corrupt(result, lambda r: (r["trace"][0].update(tick=1), r["completed"][0].update(start=1, wait=-1)))
    with pytest.raises(ScheduleInvariantError, match="no start before arrival"):
        check_schedule(jobs, 1, bad)


def test_checker_catches_missing_completion(good):
    jobs, slots, result = good
    with pytest.raises(ScheduleInvariantError, match="completed exactly once"):
        check_schedule(jobs, slots, corrupt(result, lambda r: r["completed"].pop()))
