"""Broken variants of 01_continuous_batching's reference answers: each must lose points on its own TODO and no other."""
from grader.contract import Mutant

MUTANTS = [
    Mutant("todo1", "flow forgets the + 1", 'last[job["id"]] + 1 - job["arrival"]', 'last[job["id"]] - job["arrival"]'),
    Mutant("todo1", "wait counts from tick 0", 'first[job["id"]] - job["arrival"]', 'first[job["id"]]'),
    Mutant("todo1", "start is the last serve", 'first.setdefault(job_id, row["tick"])', 'first[job_id] = row["tick"]'),
    Mutant("todo2", "only catches too few serves", "if served[job_id] != need:", "if served[job_id] < need:"),
    Mutant("todo2", "ignores ids that are not jobs",
           "            if job_id not in tokens:\n                raise ValueError(f\"tick {row['tick']} serves {job_id}, which is not a job\")\n"
           "            served[job_id] += 1\n",
           "            if job_id in tokens:\n                served[job_id] += 1\n"),
    Mutant("todo2", "forgets jobs never served", "served = dict.fromkeys(tokens, 0)", "served = {}"),
    Mutant("todo3", "trivial no-gain case (one slot)", "return jobs_from_tokens([4, 4, 1]), 2", "return jobs_from_tokens([4, 4, 1]), 1"),
    Mutant("todo3", "gain below 2x", "return jobs_from_tokens([8, 1, 1, 1] * 3), 4", "return jobs_from_tokens([2, 6, 3, 2, 4]), 2"),
    Mutant("todo3", "invalid workload (float tokens)", "return jobs_from_tokens([8, 1, 1, 1] * 3), 4",
           "return [{'id': 0, 'arrival': 0, 'tokens': 8.0}], 4"),
    Mutant("todo4", "static uses the mean, not the max", "sum(max(tokens[i:i + slots])",
           "sum(sum(tokens[i:i + slots]) // len(tokens[i:i + slots])"),
    Mutant("todo4", "continuous ignores the slot count", "free_at = [0] * min(slots, len(tokens))", "free_at = [0] * len(tokens)"),
    Mutant("todo4", "continuous assigns slots round-robin",
           "        start = heapq.heappop(free_at)\n        heapq.heappush(free_at, start + need)\n",
           "        start = free_at.pop(0)\n        free_at.append(start + need)\n"),
]

# Bugs no mutant models: each must cost points, and none may be diagnosed as a mutant (tests/grader/test_diagnose.py).
OUTSIDE = [
    Mutant("todo1", "flow counts two ticks too many", 'last[job["id"]] + 1 - job["arrival"]', 'last[job["id"]] + 2 - job["arrival"]'),
    Mutant("todo1", "wait one tick too long", 'first[job["id"]] - job["arrival"]', 'first[job["id"]] - job["arrival"] + 1'),
    Mutant("todo2", "only catches too many serves", "if served[job_id] != need:", "if served[job_id] > need:"),
    Mutant("todo4", "static uses the shortest job", "sum(max(tokens[i:i + slots])", "sum(min(tokens[i:i + slots])"),
    Mutant("todo4", "continuous makespan is the last start", "makespan = max(makespan, start + need)", "makespan = max(makespan, start)"),
]
