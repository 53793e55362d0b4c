"""`python -m policybench` (`make bench-policies`): run the grid, write results.csv, report.md and the plots."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from .grid import BACKENDS, DEFAULT_RATES, DEFAULT_SEEDS, run_grid, tasks, write_csv
from .policies import POLICIES
from .report import write_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policybench", description=__doc__)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--rates", nargs="+", type=float, default=list(DEFAULT_RATES), help="arrival rates, req/s")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS))
    parser.add_argument("--requests", type=int, default=10_000, help="requests per run")
    parser.add_argument("--arrival", choices=("poisson", "gamma"), default="poisson")
    parser.add_argument("--backend", choices=BACKENDS, default="local", help="local = every core of this machine")
    parser.add_argument("--workers", type=int, default=0, help="0 = every core")
    parser.add_argument("--out", type=Path, default=Path("build/policy-bench"))
    args = parser.parse_args(argv)
    grid = tasks(args.policies, [r if r != int(r) else int(r) for r in args.rates], args.seeds, args.requests, args.arrival)
    workers = args.workers or os.cpu_count() or 1
    print(f">> {len(grid)} runs on backend {args.backend!r} with {workers} worker(s)")
    started = time.perf_counter()
    rows = run_grid(grid, backend=args.backend, workers=workers)
    wall = time.perf_counter() - started
    for row in rows:
        row["engine"] = grid[0]["engine"]
    csv_path = write_csv([{k: v for k, v in r.items() if k != "engine"} for r in rows], args.out / "results.csv")
    report = write_report(rows, args.out, wall_seconds=wall, workers=workers)
    cpu = sum(r["sim_seconds"] for r in rows)
    print(f">> {wall:.1f} s wall, {cpu:.1f} s of simulation summed over runs; wrote {csv_path} and {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
