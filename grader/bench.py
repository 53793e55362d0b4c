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


def bench_schedule() -> None:
    print("== schedule(): 64 slots, random arrivals in [0, n/8), tokens in [1, 64] ==")
    rows = []
    for n in (10_000, 100_000):
        rng = random.Random(n)
        jobs = [{"id": i, "arrival": rng.randrange(max(n // 8, 1)), "tokens": rng.randint(1, 64)} for i in range(n)]
        for continuous in (False, True):
            seconds, result = timed(schedule, jobs, 64, continuous)
            rows.append((n, continuous, seconds, result["makespan_ticks"]))
            print(f"  n={n:>7,}  {'continuous' if continuous else 'static    '}  {seconds:7.3f} s  "
                  f"({seconds / n * 1e6:5.1f} us/job, {seconds / result['makespan_ticks'] * 1e6:5.1f} us/tick)")
    for continuous in (False, True):
        small, large = (r for r in rows if r[1] == continuous)
        print(f"  {'continuous' if continuous else 'static'}: 10x the jobs took {large[2] / small[2]:.1f}x the time "
              f"({large[3] / small[3]:.1f}x the ticks)")
    # Any excess over linear is Python's cyclic GC rescanning the growing trace; pausing it shows the algorithm alone.
    gc.disable()
    try:
        paused = [timed(schedule, [{"id": i, "arrival": random.Random(n + i).randrange(max(n // 8, 1)), "tokens": 1 + (i * 7919) % 64}
                                   for i in range(n)], 64, False)[0] for n in (10_000, 100_000)]
    finally:
        gc.enable()
    print(f"  static with the GC paused: {paused[0]:.3f} s -> {paused[1]:.3f} s, {paused[1] / paused[0]:.1f}x for 10x the jobs")


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


def main() -> int:
    bench_schedule()
    bench_notebook()
    bench_autograde()
    return 0


if __name__ == "__main__":
    sys.exit(main())
