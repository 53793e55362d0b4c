"""The grid policy x load x seed: one task per cell, run on every core (or on Dask / Ray, optional extras).

Each task regenerates its own seeded trace, so a task is a small dict and any worker anywhere gives the
same row. `run_grid()` is the Python API; `python -m policybench` the command line (`make bench-policies`).
"""
from __future__ import annotations

import csv
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from .fast_engine import FastEngine
from .metrics import SLO, summarize
from .policies import POLICIES
from lab.engine.workloads import make_trace

DEFAULT_RATES = (6, 9, 12, 14, 16)  # requests/s; the default engine's knee is near 12-14 (see the report)
DEFAULT_SEEDS = (0, 1, 2)
ENGINE = {"num_blocks": 1024, "block_size": 16, "max_num_seqs": 256, "max_num_batched_tokens": 2048}
BACKENDS = ("local", "serial", "dask", "ray")


def tasks(policies=tuple(POLICIES), rates=DEFAULT_RATES, seeds=DEFAULT_SEEDS, num_requests: int = 10_000,
          arrival: str = "poisson", engine: dict | None = None) -> list[dict]:
    """The grid as a list of task dicts, in a fixed order."""
    for policy in policies:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose from {sorted(POLICIES)}")
    engine = {**ENGINE, **(engine or {})}
    return [{"policy": p, "rate_req_s": rate, "seed": seed, "num_requests": num_requests, "arrival": arrival, "engine": engine}
            for p in policies for rate in rates for seed in seeds]


def run_task(task: dict) -> dict:
    """Simulate one cell; return its metrics row (plus the task's own fields)."""
    started = time.perf_counter()
    engine = task["engine"]
    trace = make_trace(task["num_requests"], task["rate_req_s"], seed=task["seed"], arrival=task["arrival"],
                       max_num_batched_tokens=engine["max_num_batched_tokens"])
    records = FastEngine(policy=task["policy"], **engine).run(trace)
    row = {"policy": task["policy"], "rate_req_s": task["rate_req_s"], "seed": task["seed"], "arrival": task["arrival"]}
    row.update(summarize(records, trace))
    row["sim_seconds"] = round(time.perf_counter() - started, 3)
    return row


def choose_backend(name: str):
    """A function map(fn, tasks, workers, on_done) for the backend name; a clear error if its extra is missing."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "serial":
        return _serial
    if name == "local":
        return _local
    module = "dask.distributed" if name == "dask" else "ray"
    try:
        __import__(module)
    except ImportError as exc:
        raise RuntimeError(f"backend {name!r} needs the optional extra: pip install {'dask[distributed]' if name == 'dask' else 'ray'}") from exc
    return _dask if name == "dask" else _ray


def _serial(fn, items, workers, on_done):
    for item in items:
        on_done(fn(item))


def _local(fn, items, workers, on_done):
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(fn, item) for item in items]):
            on_done(future.result())


def _dask(fn, items, workers, on_done):  # pragma: no cover - optional extra
    from dask.distributed import Client, as_completed as dask_completed
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")  # a cluster, if one is given; else a local one
    with (Client(address) if address else Client(n_workers=workers, threads_per_worker=1)) as client:
        for future in dask_completed(client.map(fn, items, pure=False)):
            on_done(future.result())


def _ray(fn, items, workers, on_done):  # pragma: no cover - optional extra
    import ray
    ray.init(address=os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
    remote = ray.remote(fn)
    pending = [remote.remote(item) for item in items]
    while pending:
        done, pending = ray.wait(pending)
        for ref in done:
            on_done(ray.get(ref))


class Progress:
    """A plain-text progress bar on stderr (no extra dependency)."""

    def __init__(self, total: int, stream=sys.stderr, width: int = 30):
        self.total, self.done, self.stream, self.width, self.started = total, 0, stream, width, time.perf_counter()

    def __call__(self, _row=None) -> None:
        self.done += 1
        filled = self.width * self.done // max(self.total, 1)
        elapsed = time.perf_counter() - self.started
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} runs, {elapsed:5.1f} s")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def run_grid(task_list: list[dict], backend: str = "local", workers: int | None = None, progress: bool = True) -> list[dict]:
    """Run every task; rows sorted as the tasks were."""
    runner = choose_backend(backend)
    workers = workers or os.cpu_count() or 1
    rows, bar = [], Progress(len(task_list)) if progress else None

    def on_done(row):
        rows.append(row)
        if bar:
            bar(row)

    runner(run_task, task_list, workers, on_done)
    order = {(t["policy"], t["rate_req_s"], t["seed"]): i for i, t in enumerate(task_list)}
    return sorted(rows, key=lambda r: order[(r["policy"], r["rate_req_s"], r["seed"])])


def write_csv(rows: list[dict], path: Path) -> Path:
    """Tidy CSV: one row per run, one column per metric; the wait quantiles as a JSON list."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
    return path


__all__ = ["tasks", "run_task", "run_grid", "write_csv", "choose_backend", "SLO", "DEFAULT_RATES", "DEFAULT_SEEDS", "ENGINE"]
