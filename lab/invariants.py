"""Invariants that make the tick simulation falsifiable (notebook 01)."""
from __future__ import annotations

from collections import Counter
from typing import Any

from .batching import parse_jobs, validate_slots
from .i18n import tr


class ScheduleInvariantError(AssertionError):
    """A schedule result broke one of the safety or conservation invariants."""


def _fail(rule: str, detail: str, **fields: Any) -> None:
    raise ScheduleInvariantError(tr("{rule}: {detail}", rule=tr(rule), detail=tr(detail, **fields)))


def _check_trace_rows(trace: list[dict[str, Any]], slots: int, arrival: dict[int, int]) -> Counter:
    """Per tick: no duplicate id, active <= slots, nobody before arrival, no unknown id."""
    served: Counter = Counter()
    last_tick = None
    for row in trace:
        tick, ids = row["tick"], list(row["served"])
        if last_tick is not None and tick <= last_tick:
            _fail("ticks increase", "tick {tick} follows tick {last}", tick=tick, last=last_tick)
        last_tick = tick
        if len(ids) != len(set(ids)):
            dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
            _fail("no id active twice", "tick {tick} serves {ids} more than once", tick=tick, ids=dupes)
        if len(ids) > slots:
            _fail("active <= slots", "tick {tick} serves {count} jobs on {slots} slots", tick=tick, count=len(ids), slots=slots)
        for job_id in ids:
            if job_id not in arrival:
                _fail("known ids only", "tick {tick} serves unknown job {id}", tick=tick, id=job_id)
            if tick < arrival[job_id]:
                _fail("no start before arrival", "job {id} served at tick {tick}, arrives at {arrival}", id=job_id, tick=tick,
                      arrival=arrival[job_id])
        served.update(ids)
    return served


def _check_completed(records: list[dict[str, Any]], arrival: dict[int, int]) -> None:
    """Each job completed exactly once, with start >= arrival and consistent wait/flow."""
    counts = Counter(rec["id"] for rec in records)
    for job_id in arrival:
        if counts[job_id] != 1:
            _fail("completed exactly once", "job {id} has {count} completion records", id=job_id, count=counts[job_id])
    for rec in records:
        if rec["id"] not in arrival:
            _fail("completed exactly once", "completion record for unknown job {id}", id=rec["id"])
        if rec["start"] < arrival[rec["id"]]:
            _fail("no start before arrival", "job {id} starts at {start}, arrives at {arrival}", id=rec["id"], start=rec["start"],
                  arrival=arrival[rec["id"]])
        if rec["wait"] != rec["start"] - rec["arrival"] or rec["flow"] != rec["finish"] - rec["arrival"]:
            _fail("wait and flow", "job {id}: wait/flow disagree with start/finish", id=rec["id"])


def check_schedule(jobs: list[dict], slots: int, result: dict[str, Any]) -> None:
    """Raise ScheduleInvariantError if `result` breaks any invariant for `jobs`."""
    slots = validate_slots(slots)
    parsed = parse_jobs(jobs)
    arrival = {job.id: job.arrival for job in parsed}
    tokens = {job.id: job.tokens for job in parsed}
    served = _check_trace_rows(result["trace"], slots, arrival)
    for job_id, need in tokens.items():
        if served[job_id] != need:
            _fail("served exactly tokens times", "job {id} served {served} times, needs {need}", id=job_id, served=served[job_id],
              need=need)
    total_served = sum(len(row["served"]) for row in result["trace"])
    if total_served != sum(tokens.values()) or result["busy_slots"] != total_served:
        _fail("work conservation", "served {served}, busy_slots {busy}, tokens {tokens}", served=total_served,
              busy=result["busy_slots"], tokens=sum(tokens.values()))
    _check_completed(result["completed"], arrival)
