"""`make bench`'s grading section: stock `nbgrader autograde` against `make autograde` on classes whose answers
all differ, where each CPU second of ours goes, and how the time grows with the class. Nothing here asserts a time.

    python -m grader.bench autograde   (this, then a hang)   or   python -m grader.throughput   (this alone)

The class (sample_submissions.varied_class) signs every answer cell with its student, so no verdict is reused; the reuse
case (the same 8 as before, most sharing answers) is a second line. Each figure is from one `make bench` on this
machine: the varied-class ratio is the median of PAIRS stock/ours pairs run side by side (every pair printed).
Stock and ours are each timed as a new process, as a user starts them (`command`); only the breakdown of CPU
seconds is measured inside this process (`ours`), where each part can be timed.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from . import autograde, build, diagnose, pipeline, report, sample_submissions
from .assignment import get
from .grade import Grader
from .paths import BUILD_DIR, ROOT
from .runner import sandbox_level, shared, warm

ASSIGNMENTS = ("02_decode_scheduling", "03_batch_scheduling")
CLASS = 8
SCALES = (8, 32, 128)
PAIRS = 5   # stock/ours pairs per varied class, alternating which runs first; the median pair is reported
OUT = BUILD_DIR / "bench" / "throughput"


def own_cpu() -> float:
    """CPU time of this process and of every child it has waited for."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def children_cpu() -> float:
    """CPU time of every child process this one has waited for (and of theirs that they waited for)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


STOCK_CPU: dict[str, list[float]] = defaultdict(list)   # assignment -> CPU seconds per submission of each stock run
VARIED_STOCK_CPU: dict[str, float] = {}   # assignment -> the median of those of the varied class (bench_ratio)


def all_cpu() -> float:
    """This process's CPU time and the warm sandbox parent's, with every run it has forked (they are its children)."""
    return own_cpu() + shared(sandbox_level()).cpu_seconds()


def fresh() -> None:
    """A new grader and warm parent: nothing is reused from an earlier class, and set-up is paid again
    (pipeline.forget() clears every cache, the warm parents among them: grader/caches.py)."""
    pipeline.forget()


def stock_nbgrader(name: str, subs: dict) -> float:
    """Seconds for stock `nbgrader autograde` (one process, its own kernel per notebook) on our course folder."""
    work = OUT / f"stock-{name[:2]}"
    shutil.rmtree(work, ignore_errors=True)
    course = build.make_course(work, [name], with_db=True)
    for sid, nb in subs.items():
        sample_submissions.write({name: nb}, course / "submitted" / sid / name)
    started, cpu = time.perf_counter(), children_cpu()
    build.nbgrader(course, "autograde", name, "--force", "--log-level=WARN", timeout=3600)
    wall = time.perf_counter() - started
    STOCK_CPU[name].append((children_cpu() - cpu) / len(subs))   # nbgrader and its kernels, which it waits for
    return wall


def ours(name: str, subs: dict, label: str, **changes) -> tuple[float, float, Grader]:
    """(wall seconds, CPU seconds, its Grader) for grading `subs` in this process, set-up and reports included (not
    the start of a new process and its imports: `command` times those too)."""
    folder, out = OUT / f"{label}-subs", OUT / f"{label}-grades"
    shutil.rmtree(folder, ignore_errors=True)
    sample_submissions.write(subs, folder)
    fresh()
    cpu, started = all_cpu(), time.perf_counter()
    with contextlib.redirect_stdout(open(os.devnull, "w")):
        autograde.run(name, folder, out, **changes)
    wall = time.perf_counter() - started
    grader = pipeline.grader_for(name)
    return wall, all_cpu() - cpu, grader


@dataclass
class Run:
    """One grading run of a class: its wall seconds and how its verdicts came. (A command's CPU seconds are in the
    breakdown: read from this process's rusage of its children, they miss the sandboxed runs.)"""

    wall: float
    reused: int
    released: int
    sandbox: str
    tasks: int

    @classmethod
    def of(cls, grader: Grader, wall: float) -> "Run":
        """A run graded in this process, from its Grader's counters."""
        return cls(wall, grader.reused, grader.as_released, grader.sandbox, len(grader.tasks))


SAID = re.compile(r"verdicts: (\d+) reused .*?; (\d+) TODO verdict\(s\) of answers left as released")


def command(name: str, subs: dict, label: str) -> Run:
    """`python -m grader.autograde` in a new process, as `make autograde` runs it: its start and imports count too
    (stock nbgrader is timed the same way)."""
    folder, out = OUT / f"{label}-subs", OUT / f"{label}-grades"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    sample_submissions.write(subs, folder)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader.autograde", "--assignment", name, "--submissions", str(folder),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    said, sandbox = SAID.search(proc.stdout), re.search(r"sandbox: (\w+)", proc.stdout)
    if proc.returncode != 0 or not said or not sandbox:
        raise RuntimeError(f"make autograde failed on {folder} (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return Run(wall, *map(int, said.groups()), sandbox.group(1), len(get(name).todos))


def times(stock: float, ours: float) -> str:
    """stock / ours to two decimals, cut down rather than rounded: 2.994 reads 2.99x, never 3.00x."""
    return f"{math.floor(stock / ours * 100 + 1e-9) / 100:.2f}x"   # 1e-9: 3.0 computed as 2.9999... still reads 3.00x


def reused_share(run: Run, count: int) -> str:
    verdicts = count * run.tasks
    return f"{run.reused} of {verdicts} TODO verdicts reused ({run.reused / verdicts:.0%})"


def released(run: Run, count: int) -> str:
    return (f"{run.released} of {count * run.tasks} TODO verdicts of answers left as released, given the stub's verdict "
            "graded when the assignment was built")


def alternated(rounds: int) -> list[tuple[str, str]]:
    """The order of each pair's two runs: stock first, then ours first, and so on (a drift favours neither side)."""
    return [("stock", "ours") if i % 2 == 0 else ("ours", "stock") for i in range(rounds)]


def median_pair(pairs: list[tuple[float, "Run"]]) -> tuple[float, "Run"]:
    """The pair (stock seconds, our Run) whose ratio is the median of an odd number of pairs."""
    if len(pairs) % 2 == 0:
        raise ValueError(f"an odd number of pairs has one median; got {len(pairs)}")
    return sorted(pairs, key=lambda pair: pair[0] / pair[1].wall)[len(pairs) // 2]


def bench_ratio(name: str, kind: str = "varied") -> None:
    """PAIRS pairs of runs, stock and ours side by side, each a new process as a user starts it (imports and caches
    cold). The machine's speed drifts by tens of percent within minutes (stock alone took 18 to 31 s on one class in
    an hour): two runs next to each other see the same machine, and the median pair is the figure.

    `kind`: "varied" (sample_submissions.varied_class) or "one bug" (sample_submissions.one_bug_class: six of eight with
    one wrong TODO)."""
    subs = sample_submissions.varied_class(name, CLASS) if kind == "varied" else sample_submissions.one_bug_class(name, CLASS)
    said = "no two answers alike" if kind == "varied" else "six with one wrong TODO each, no two answers alike"
    pairs, STOCK_CPU[name] = [], []
    for order in alternated(PAIRS):
        timed = {side: stock_nbgrader(name, subs) if side == "stock" else command(name, subs, f"{kind.replace(' ', '-')}-{name[:2]}")
                 for side in order}
        pairs.append((timed["stock"], timed["ours"]))
    stock, run = median_pair(pairs)
    if kind == "varied":
        VARIED_STOCK_CPU[name] = statistics.median(STOCK_CPU[name])
    print(f"  {name}, {CLASS} submissions, {said}: stock nbgrader {stock:.1f} s, ours {run.wall:.1f} s "
          f"-> {times(stock, run.wall)} stock, the median of {PAIRS} pairs  ({reused_share(run, CLASS)}; "
          f"{released(run, CLASS)}; sandbox {run.sandbox})")
    print("    each pair, in the order run: " + ", ".join(f"{s:.1f} / {r.wall:.1f} s = {times(s, r.wall)}" for s, r in pairs))


def bench_reuse(name: str) -> None:
    subs = sample_submissions.class_submissions(name)
    stock = stock_nbgrader(name, subs)
    run = command(name, subs, f"reuse-{name[:2]}")
    print(f"  {name}, the {len(subs)} of the reuse case (perfect, blank, 6 with one bug: most answers shared): stock "
          f"{stock:.1f} s, ours {run.wall:.1f} s -> {times(stock, run.wall)}  ({reused_share(run, len(subs))})")


class Ledger:
    """CPU seconds by part of the work, measured around each part in a one-worker run (so each delta is its own)."""

    def __init__(self):
        self.parts: dict[str, float] = defaultdict(float)
        self.cells: dict[str, float] = defaultdict(float)
        self.patches: list[tuple[object, str, object]] = []

    def wrap(self, owner, attr: str, part) -> None:
        original = getattr(owner, attr)

        def timed(*args, **kwargs):
            name = part(*args, **kwargs) if callable(part) else part
            if name is None:   # counted by the part that calls it
                return original(*args, **kwargs)
            before = all_cpu()
            try:
                return original(*args, **kwargs)
            finally:
                self.parts[name] += all_cpu() - before

        self.patches.append((owner, attr, original))
        setattr(owner, attr, timed)

    def cell_times(self, owner) -> None:
        """Read each feedback cell's own CPU time from the notebook runner's records."""
        original = owner.run

        def run(runner, kind, payload, limits, **kwargs):
            done = original(runner, kind, payload, limits, **kwargs)
            if kind == "notebook":
                self._cells(payload, done.output)
            return done

        self.patches.append((owner, "run", original))
        owner.run = run

    def _cells(self, payload: dict, output: bytes) -> None:
        sources = {cell["index"]: cell["source"] for cell in payload["cells"]}
        for line in output.split(b"\n"):
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                if isinstance(rec, dict) and rec.get("kind") == "cell" and "cpu" in rec:
                    self.cells[cell_kind(sources.get(rec["index"], ""), rec.get("outputs", []))] += rec["cpu"]

    def undo(self) -> None:
        for owner, attr, original in reversed(self.patches):
            setattr(owner, attr, original)


def cell_kind(source: str, outputs: list) -> str:
    if any("image/png" in (o.get("data") or {}) for o in outputs if isinstance(o, dict)):
        return "cells that draw plots"
    if source.lstrip().startswith(("import ", "from ", "# Set-up", "#Set-up")) or "import lab" in source:
        return "set-up and imports"
    return "cells that run code (answers, checks, experiments)"


def bench_breakdown(name: str) -> None:
    """Where the CPU goes, per submission, for the varied class graded by one worker."""
    ledger = Ledger()
    ledger.wrap(autograde.Batch, "__init__", "set-up: hidden suite, reference observations, warm sandbox parent (once)")
    ledger.wrap(Grader, "_run_bridged", lambda g, task, src, scenarios=None, timeout=None:
                f"grading: {task.task_id} child and its reference server" if scenarios is None else None)
    ledger.wrap(Grader, "_shrink", "grading: cutting down failing cases to show")
    ledger.wrap(report, "write_outputs", "grades, report and class report (once per class)")
    for step in ("execute", "sanitise", "redact", "render"):
        ledger.wrap(pipeline, step, f"feedback: {step}")
    pipeline.run.__defaults__ = (pipeline.run.__defaults__[0], tuple(getattr(pipeline, s.__name__) for s in pipeline.STEPS))
    ledger.cell_times(warm.Warm)
    try:
        subs = sample_submissions.varied_class(name, CLASS)
        wall, cpu, grader = ours(name, subs, f"breakdown-{name[:2]}", jobs=1)
    finally:
        ledger.undo()
        pipeline.run.__defaults__ = (pipeline.run.__defaults__[0], pipeline.STEPS)
    parts = dict(ledger.parts)
    rest = cpu - sum(parts.values())
    print(f"\n  {name}: CPU seconds per submission, {CLASS} varied submissions, one worker (total {cpu / CLASS:.2f} s; "
          f"{released(Run.of(grader, wall), CLASS)})")
    if name in VARIED_STOCK_CPU:
        print(cpu_versus(VARIED_STOCK_CPU[name], cpu / CLASS))
    if not diagnose.shipped_is_current(grader):   # then every command above graded the mutants first
        print("    warning: the shipped mistakes catalogue is stale (run make notebooks): the runs of ours above computed it")
    for label, seconds in sorted(parts.items()):
        print(f"    {label:<78} {seconds / CLASS:6.3f}")
        if label == "feedback: execute":
            for kind, cell_cpu in sorted(ledger.cells.items()):
                print(f"      {kind:<76} {cell_cpu / CLASS:6.3f}")
            print(f"      {'kernel start, cell runner, records':<76} {(seconds - sum(ledger.cells.values())) / CLASS:6.3f}")
    print(f"    {'the rest: reading, layout repair, verdict bookkeeping, the watchers of each run':<78} {rest / CLASS:6.3f}")
    print("    nbgrader's own steps: none (make autograde runs grader/pipeline.py; the page is nbgrader's template, in render)")


def cpu_versus(stock: float, ours: float) -> str:
    """Stock's CPU seconds per submission beside ours: on a loaded machine CPU time, not wall time, says which does
    more work (stock runs one notebook at a time, ours as many as --jobs, so its wall ratio can pass this one)."""
    return (f"    stock nbgrader on the varied class: {stock:.2f} CPU s per submission (its process and kernels; the median "
            f"of its runs above) against ours {ours:.2f} here (one worker, in this process) -> stock uses {times(stock, ours)} "
            "our CPU")


def bench_scaling(name: str) -> None:
    print(f"\n  {name}: ours alone on larger varied classes (each run a new make autograde; all cores)")
    first = None
    for size in SCALES:
        run = command(name, sample_submissions.varied_class(name, size), f"scale-{name[:2]}-{size}")
        first = first or run.wall / size
        print(f"    {size:>4} submissions: {run.wall:6.1f} s = {run.wall / size:.2f} s each ({run.wall / size / first:.2f}x the "
              f"per-submission time at {SCALES[0]}); {reused_share(run, size)}")


def main() -> None:
    os.environ["LAB_TERM_SECRET"] = "public"   # made-up classes, graded on the repository's own cases (as grader/bench.py sets it)
    print(f"\n== autograde throughput: stock nbgrader vs ours, {os.cpu_count()} cores ==")
    for name in ASSIGNMENTS:
        bench_ratio(name)
    for name in ASSIGNMENTS:
        bench_ratio(name, "one bug")
    bench_reuse(ASSIGNMENTS[0])
    for name in ASSIGNMENTS:
        bench_breakdown(name)
    bench_scaling(ASSIGNMENTS[0])
    fresh()
    print(f"  (load average now {os.getloadavg()[0]:.1f}; outputs under {OUT})")


if __name__ == "__main__":
    main()
