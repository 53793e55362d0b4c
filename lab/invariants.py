"""Invariants that make the tick simulation falsifiable (seed 002)."""
from __future__ import annotations

from collections import Counter
from typing import Any

from .batching import parse_jobs, validate_slots


class ScheduleInvariantError(AssertionError):
    """A schedule result broke one of the safety or conservation invariants."""


def _fail(rule: str, detail: str) -> None:
    raise ScheduleInvariantError(f"{rule}: {detail}")


def _check_trace_rows(trace: list[dict[str, Any]], slots: int, arrival: dict[int, int]) -> Counter:
    """Per tick: no duplicate id, active <= slots, nobody before arrival, no unknown id."""
    served: Counter = Counter()
    last_tick = None
    for row in trace:
        tick, ids = row["tick"], list(row["served"])
        if last_tick is not None and tick <= last_tick:
            _fail("ticks increase", f"tick {tick} follows tick {last_tick}")
        last_tick = tick
        if len(ids) != len(set(ids)):
            dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
            _fail("no id active twice", f"tick {tick} serves {dupes} more than once")
        if len(ids) > slots:
            _fail("active <= slots", f"tick {tick} serves {len(ids)} jobs on {slots} slots")
        for job_id in ids:
            if job_id not in arrival:
                _fail("known ids only", f"tick {tick} serves unknown job {job_id}")
            if tick < arrival[job_id]:
                _fail("no start before arrival", f"job {job_id} served at tick {tick}, arrives at {arrival[job_id]}")
        served.update(ids)
    return served


def _check_completed(records: list[dict[str, Any]], arrival: dict[int, int]) -> None:
    """Each job completed exactly once, with start >= arrival and consistent wait/flow."""
    counts = Counter(rec["id"] for rec in records)
    for job_id in arrival:
        if counts[job_id] != 1:
            _fail("completed exactly once", f"job {job_id} has {counts[job_id]} completion records")
    for rec in records:
        if rec["id"] not in arrival:
            _fail("completed exactly once", f"completion record for unknown job {rec['id']}")
        if rec["start"] < arrival[rec["id"]]:
            _fail("no start before arrival", f"job {rec['id']} starts at {rec['start']}, arrives at {arrival[rec['id']]}")
        if rec["wait"] != rec["start"] - rec["arrival"] or rec["flow"] != rec["finish"] - rec["arrival"]:
            _fail("wait and flow", f"job {rec['id']}: wait/flow disagree with start/finish")


def check_schedule(jobs: list[dict], slots: int, result: dict[str, Any]) -> None:
    """Raise ScheduleInvariantError if `result` breaks any invariant for `jobs`."""
    slots = validate_slots(slots)
    parsed = parse_jobs(jobs)
    arrival = {job.id: job.arrival for job in parsed}
    tokens = {job.id: job.tokens for job in parsed}
    served = _check_trace_rows(result["trace"], slots, arrival)
    for job_id, need in tokens.items():
        if served[job_id] != need:
            _fail("served exactly tokens times", f"job {job_id} served {served[job_id]} times, needs {need}")
    total_served = sum(len(row["served"]) for row in result["trace"])
    if total_served != sum(tokens.values()) or result["busy_slots"] != total_served:
        _fail("work conservation", f"served {total_served}, busy_slots {result['busy_slots']}, tokens {sum(tokens.values())}")
    _check_completed(result["completed"], arrival)
