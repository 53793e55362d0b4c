"""A failing case small enough to read: delta debugging of a hidden scenario (Zeller's ddmin, batched).

A scenario is an op script (an assignment's driver.py). A candidate keeps part of one of its lists: the ops after the
first (which builds the object under test), the requests of an engine run, the items of a list argument
of a call; or it runs fewer steps. The grader runs a round of candidates in the sandbox, the student's
answer and the reference side by side, keeps the smallest on which they still disagree, and goes on from
it until the case fits on the page (grader/snippets.py) or the budget is spent.
"""
from __future__ import annotations

import copy
import json
import math

from .compare import STRICT, same

SHRINK_ROUNDS = 6         # rounds per TODO; each is one sandboxed run of the student's answer and one of the reference
SHRINK_CANDIDATES = 48    # candidates per round, over every rule of the TODO being cut down
SINGLES = 16              # lists up to this long also try keeping (and dropping) each item alone


def _lists(driver: str, ops: list) -> list[tuple]:
    """Paths to the lists of a scenario whose items may be dropped; () is the op list itself."""
    paths = [()]
    for i, op in enumerate(ops):
        kind = op[0]
        if driver == "engine" and kind == "engine":
            paths.append((i, 2))
        elif driver == "engine" and kind == "call":
            paths += [(i, 2, j) for j, arg in enumerate(op[2]) if type(arg) is list]
        elif driver == "batching":
            paths += [(i, 1, j) for j, arg in enumerate(op[1]) if type(arg) is list]
    return paths


def _get(ops: list, path: tuple) -> list:
    for key in path:
        ops = ops[key]
    return ops


def _kept(n: int) -> list[list[int]]:
    """Index sets to keep of n items, fewest first within each kind: items alone, chunks, all but a chunk or an item."""
    if n < 2:
        return []
    chunks = []
    parts = 2
    while parts <= n:
        size = math.ceil(n / parts)
        chunks += [list(range(start, min(start + size, n))) for start in range(0, n, size)]
        parts *= 2
    singles = [[i] for i in range(n)] if n <= SINGLES else []
    complements = [[i for i in range(n) if i not in chunk] for chunk in chunks]
    all_but_one = [[j for j in range(n) if j != i] for i in range(n)] if n <= SINGLES else []
    unique = {tuple(keep): keep for keep in singles + chunks + complements + all_but_one if 0 < len(keep) < n}
    return list(unique.values())


def _is_jobs_and_trace(args) -> bool:
    """(jobs, trace, ...) as 01's functions take them: job dicts with ids, then tick dicts with served lists."""
    return (len(args) >= 2 and type(args[0]) is list and type(args[1]) is list
            and all(type(j) is dict and "id" in j for j in args[0])
            and all(type(t) is dict and type(t.get("served")) is list for t in args[1]))


def _jobs_with_their_serves(driver: str, ops: list) -> list[list]:
    """Cases with some jobs dropped together with every serve of theirs, so that a valid trace stays valid."""
    stream = []
    for i, op in enumerate(ops):
        if driver != "batching" or not _is_jobs_and_trace(op[1]):
            continue
        jobs, trace = op[1][0], op[1][1]
        for keep in _kept(len(jobs)):
            ids = [jobs[k]["id"] for k in keep]
            new = copy.deepcopy(ops)
            new[i][1][0] = [jobs[k] for k in keep]
            served = [{**tick, "served": [x for x in tick["served"] if x in ids]} for tick in trace]
            new[i][1][1] = [tick for tick in served if tick["served"]]
            stream.append(new)
    return stream


def candidates(driver: str, ops: list) -> list[list]:
    """Smaller versions of `ops`, one change each, coarse and fine interleaved (the caller takes a bounded prefix)."""
    streams = [_jobs_with_their_serves(driver, ops)]
    for path in _lists(driver, ops):
        items = _get(ops, path)
        first = 1 if path == () else 0  # the op that builds the object under test stays
        stream = []
        for keep in _kept(len(items) - first):
            new = copy.deepcopy(ops)
            target = _get(new, path)
            target[first:] = [items[first + k] for k in keep]
            stream.append(new)
        streams.append(stream)
    for i, op in enumerate(ops):
        if driver != "batching" and op[0] == "run" and type(op[1]) is int and op[1] > 1:  # fewer steps: halves, down to one
            stream, count = [], op[1] // 2
            while count >= 1:
                new = copy.deepcopy(ops)
                new[i][1] = count
                stream.append(new)
                count //= 2
            streams.append(stream)
    longest = max(map(len, streams), default=0)  # round robin: the first of each stream, then the second, ...
    return [stream[i] for i in range(longest) for stream in streams if i < len(stream)]


def key(ops: list) -> str:
    return json.dumps(ops, sort_keys=True)


def size(code: str) -> tuple[int, int]:
    """How long a case is on the page: lines, then characters."""
    return len(code.splitlines()), len(code)


def errors(observed) -> set:
    """The exception names an observation records."""
    return {op.get("error") for op in observed if isinstance(op, dict) and op.get("error")} if isinstance(observed, list) else set()


def disagrees(expected, actual, original_expected, allow: frozenset = STRICT) -> bool:
    """Both ran to the end and differ (under the looser types `allow` allows), and the reference raised nothing it did
    not raise on the original case (dropping an op that a later one needs makes a case about something else)."""
    return (isinstance(expected, list) and isinstance(actual, list) and not same(expected, actual, allow)
            and errors(expected) <= errors(original_expected))
