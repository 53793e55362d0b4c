"""Byte-producing jobs on two cores: half of them in a forked child of this process, half here.

For the class report's figures, which are drawn after every submission is graded, while one core would idle.
The child only runs the jobs and writes their bytes to a pipe; it never returns into the caller's code (os._exit).
Where fork is missing (not Linux), or the child fails or outlives `timeout`, its jobs run here: the result is
the same bytes, only later.
"""
from __future__ import annotations

import os
import select
import signal
import struct
import sys
import time
from typing import Callable

HEADER = struct.Struct("!Q")   # each result: its length, then its bytes


def produce(jobs: list[Callable[[], bytes]], timeout: float = 60.0) -> list[bytes]:
    """[job() for job in jobs], with every second job run in a forked child when there are two jobs or more."""
    theirs = list(range(1, len(jobs), 2))
    if not theirs or sys.platform != "linux":
        return [job() for job in jobs]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: its coverage is not collected
        _child([jobs[i] for i in theirs], read_end, write_end)
    os.close(write_end)
    results: dict[int, bytes] = {i: jobs[i]() for i in range(0, len(jobs), 2)}
    received = _receive(read_end, pid, len(theirs), timeout)
    for i, data in zip(theirs, received or [jobs[i]() for i in theirs]):
        results[i] = data
    return [results[i] for i in range(len(jobs))]


def _child(jobs: list[Callable[[], bytes]], read_end: int, write_end: int) -> None:
    """Run the jobs, send their bytes, and leave without running anything of the parent's (atexit, finally)."""
    status = 1
    try:
        os.close(read_end)
        with os.fdopen(write_end, "wb") as pipe:
            for job in jobs:
                data = job()
                pipe.write(HEADER.pack(len(data)) + data)
        status = 0
    finally:
        os._exit(status)


def _receive(read_end: int, pid: int, count: int, timeout: float) -> list[bytes] | None:
    """The child's `count` results, or None if it failed or ran past `timeout` (then it is killed)."""
    deadline, chunks = time.monotonic() + timeout, []
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while (left := deadline - time.monotonic()) > 0 and select.select([pipe], [], [], left)[0]:
            chunk = pipe.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    if time.monotonic() >= deadline:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    results, offset = [], 0
    while offset + HEADER.size <= len(data):
        (size,) = HEADER.unpack_from(data, offset)
        results.append(data[offset + HEADER.size: offset + HEADER.size + size])
        offset += HEADER.size + size
    complete = status == 0 and offset == len(data) and len(results) == count
    return results if complete else None
