"""The fast engine's waiting queue, in three forms, each with push(r), peek() (the head), pop(r) (r: the head just
peeked) and len().

- `FCFSQueue`: vLLM's default order as a deque, like vLLM's own `FCFSRequestQueue`
  (`vllm/v1/core/sched/request_queue.py`): arrivals at the back, a preempted request back at the front.
  The same order as the `policies.fcfs` key, without computing keys.
- `HeapQueue`: any key that stays fixed while a request waits, smallest first (a heap of (key, seq_id,
  request), like vLLM's `PriorityRequestQueue` for "priority").
- `DynamicQueue`: a key that changes while requests wait (hrrn, which reads the scheduler's counters):
  an ordered set scanned at each look while short, plus a lazily cleaned heap of the fixed key it
  falls back to when long.
"""
from __future__ import annotations

from collections import deque
from heapq import heappop, heappush


class FCFSQueue(deque):
    """Arrival order; a preempted request goes to the front (the most recently preempted first)."""

    def __init__(self, sched, key=None):
        super().__init__()

    def push(self, r) -> None:
        if r.preempt_stamp:
            self.appendleft(r)
        else:
            self.append(r)

    def peek(self):
        return self[0]

    def pop(self, r) -> None:
        self.popleft()


class HeapQueue(list):
    """The smallest key(request, scheduler) first; ties by seq_id."""

    def __init__(self, sched, key):
        super().__init__()
        self.sched, self.key = sched, key

    def push(self, r) -> None:
        heappush(self, (self.key(r, self.sched), r.seq_id, r))

    def peek(self):
        return self[0][2]

    def pop(self, r) -> None:
        heappop(self)


class DynamicQueue(dict):
    """A key that changes while requests wait, exact up to `sorted_up_to` waiting, then `fixed_key`."""

    def __init__(self, sched, key, sorted_up_to: int, fixed_key):
        super().__init__()
        self.sched, self.key, self.sorted_up_to, self.fixed_key = sched, key, sorted_up_to, fixed_key
        self.fallback: list = []

    def push(self, r) -> None:
        self[r] = None
        heappush(self.fallback, (self.fixed_key(r, self.sched), r.seq_id, r))

    def peek(self):
        if len(self) <= self.sorted_up_to:
            return min(self, key=lambda r: self.key(r, self.sched))
        heap = self.fallback
        while heap[0][2] not in self or heap[0][0] != self.fixed_key(heap[0][2], self.sched):
            heappop(heap)  # stale: admitted, or pushed again with a new key
        return heap[0][2]

    def pop(self, r) -> None:
        del self[r]
