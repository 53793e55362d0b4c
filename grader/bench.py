"""`make bench`: wall-clock figures, measured once each on this machine. Not a test: nothing here asserts a time."""
from __future__ import annotations

import gc
import random
import shutil
import sys
import time

from lab import schedule

from . import autograde, build, examples, masters
from .grade import Grader
from .paths import BUILD_DIR, assignment_names

ASSIGNMENT = "02_decode_scheduling"


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - started, result


def best_of(repeat: int, fn, *args) -> tuple[float, object]:
    """Least wall time of `repeat` runs: the run least disturbed by the rest of a shared machine."""
    runs = [timed(fn, *args) for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def workload(n: int) -> list[dict]:
    rng = random.Random(n)
    return [{"id": i, "arrival": rng.randrange(max(n // 8, 1)), "tokens": rng.randint(1, 64)} for i in range(n)]


def bench_schedule() -> None:
    print("== schedule(): 64 slots, random arrivals in [0, n/8), tokens in [1, 64]; best of 3 ==")
    sizes = (10_000, 100_000)
    jobs = {n: workload(n) for n in sizes}
    for continuous in (False, True):
        label = "continuous" if continuous else "static"
        runs = {}
        for n in sizes:
            seconds, result = best_of(3, schedule, jobs[n], 64, continuous)
            gc.disable()  # the same run with Python's cyclic GC paused: the algorithm's own cost
            try:
                paused, _ = best_of(3, schedule, jobs[n], 64, continuous)
            finally:
                gc.enable()
            runs[n] = (seconds, paused, result["makespan_ticks"])
            print(f"  n={n:>7,}  {label:<10}  {seconds:6.3f} s  ({seconds / n * 1e6:5.1f} us/job)   GC paused: {paused:6.3f} s")
        (s1, p1, t1), (s2, p2, t2) = runs[sizes[0]], runs[sizes[1]]
        print(f"  {label}: 10x the jobs, {t2 / t1:.1f}x the ticks: {s2 / s1:.1f}x the time ({p2 / p1:.1f}x with the GC paused)")


def bench_notebook() -> None:
    print("\n== solved notebooks, executed top to bottom ==")
    out = BUILD_DIR / "bench"
    for name in assignment_names():
        seconds, _ = timed(build.execute, masters.solved_edition(name), out)
        print(f"  {name}: {seconds:.1f} s (kernel start included)")


def bench_autograde() -> None:
    print("\n== autograde ==")
    seconds, grader = timed(Grader, ASSIGNMENT)
    print(f"  hidden suite + reference observations: {seconds:.2f} s ({sum(len(t.scenarios) for t in grader.tasks)} scenarios, sandbox: {grader.sandbox})")
    seconds, _ = timed(grader.grade, masters.reference_answers(ASSIGNMENT))
    print(f"  sandboxed per-TODO verdicts for one submission: {seconds:.2f} s")
    subs = BUILD_DIR / "bench" / "submissions"
    shutil.rmtree(subs, ignore_errors=True)
    paths = examples.write(examples.demo_submissions(ASSIGNMENT), subs)
    for jobs in (1, 0):
        seconds, outcomes = timed(autograde.run, ASSIGNMENT, subs, BUILD_DIR / "bench" / f"grades-{jobs}", jobs=jobs)
        each = sorted(o.seconds for o in outcomes)
        print(f"  jobs={jobs or 'all cores'}: {len(paths)} submissions in {seconds:.1f} s wall = {seconds / len(paths):.1f} s each "
              f"(per submission {each[0]:.1f}-{each[-1]:.1f} s, batch set-up included in the wall time)")


def bench_fast_engine() -> None:
    """Issue 14: the event-driven engine against notebook 03's step-by-step one, in the same run."""
    from policybench.fast_engine import FastEngine
    from policybench.teaching import teaching_records
    from policybench.workloads import make_trace

    print("\n== policy benchmark engine: notebook 03's step model, Poisson 8 req/s, FCFS, default engine ==")
    teaching_records(make_trace(10, 8, seed=0))  # build the reference teaching engine once, outside the timings
    fast = {}
    for n in (1_000, 10_000, 100_000):
        trace = make_trace(n, 8, seed=1)
        fast[n], records = best_of(3 if n < 100_000 else 1, lambda t=trace: FastEngine().run(t))
        steps = max(r["finish_step"] for r in records) + 1
        print(f"  fast engine  n={n:>7,}: {fast[n]:6.2f} s  ({fast[n] / n * 1e6:5.1f} us/request, {steps:,} engine steps)")
    print(f"  growth: 10x the requests -> {fast[10_000] / fast[1_000]:.1f}x, then {fast[100_000] / fast[10_000]:.1f}x the time")
    trace = make_trace(10_000, 8, seed=1)
    gc.disable()  # the fast engine pauses the cyclic GC inside run(); give the teaching engine the same
    try:
        teach, slow = timed(teaching_records, trace)
    finally:
        gc.enable()
    quick, same = timed(FastEngine().run, trace)
    print(f"  teaching engine n=10,000: {teach:.1f} s; fast engine right after it: {quick:.2f} s -> {teach / quick:.0f}x "
          f"(records identical: {same == slow})")


def main() -> int:
    bench_fast_engine()
    bench_schedule()
    bench_notebook()
    bench_autograde()
    return 0


if __name__ == "__main__":
    sys.exit(main())
