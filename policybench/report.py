"""The Markdown report and its plots, from the grid's rows (means over seeds; the CSV keeps every run)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .metrics import SLO  # noqa: E402

ASSUMPTIONS = """\
**Model assumptions (read first).** Everything here is a *simulation* of notebook 03's step model, not a
measurement of any GPU or engine:

- One engine, vLLM V1's step rules as notebook 03 models them: running requests first, then admission under
  `max_num_seqs` and `max_num_batched_tokens` with chunked prefill, head-of-line stop, paged KV blocks,
  preemption by recompute (victim: last admitted; lowest priority under `priority`). No prefix caching, no
  swapping, no speculative decoding, no CPU or network time.
- Step time = {a} µs + {b} µs × batched tokens (notebook 03's affine cost model, not a roofline; attention cost
  ignored). Absolute milliseconds are model units; compare policies and shapes, not numbers with hardware.
- Workload: {arrival} arrivals; lognormal prompt (median 256 tokens) and output (median 64) lengths, sigma
  0.8, clipped to 2048 / 512 (assumptions, not fitted to a published trace); priority classes 0/1/2 with
  shares 20/50/30 %; deadline = arrival + slack × ideal latency with slack 4 / 8 / 30 per class. Output
  lengths are exact, so `sjf_oracle` knows what no real engine knows.
- Engine: {engine}. SLO for goodput: TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms. "Wait" = TTFT (queueing + prefill).
"""

METRICS_VS_LOAD = [("p50_ttft_ms", "p50 TTFT"), ("p95_ttft_ms", "p95 TTFT"), ("p99_ttft_ms", "p99 TTFT"),
                   ("p50_tpot_ms", "p50 TPOT"), ("p95_tpot_ms", "p95 TPOT"), ("p99_tpot_ms", "p99 TPOT")]


def _by_load(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.groupby(["rate_req_s", "policy"])[column].mean().unstack("policy")


def _lines(ax, table: pd.DataFrame, title: str, ylabel: str, log: bool = False) -> None:
    for policy in table.columns:
        ax.plot(table.index, table[policy], marker="o", markersize=3, label=policy)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("arrival rate (req/s)", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.tick_params(labelsize=7)


def plots(frame: pd.DataFrame, out: Path) -> dict[str, str]:
    """Write the PNGs; return {name: file name}."""
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5))
    for ax, (column, label) in zip(axes.flat, METRICS_VS_LOAD):
        _lines(ax, _by_load(frame, column), label + " vs load", "ms (log)", log=True)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    files["tails"] = _save(fig, out / "tails_vs_load.png")

    load = sorted(frame["rate_req_s"].unique())[len(frame["rate_req_s"].unique()) // 2]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for policy, group in frame[(frame["rate_req_s"] == load)].groupby("policy", sort=False):
        quantiles = np.array(group.sort_values("seed").iloc[0]["wait_quantiles_ms"])
        ax.plot(np.maximum(quantiles, 1e-3), np.linspace(0, 1, len(quantiles)), label=policy)
    ax.set_xscale("log")
    ax.set_xlabel("wait = TTFT (ms, log)")
    ax.set_ylabel("fraction of requests")
    ax.set_title(f"CDF of waits at {load} req/s (seed {frame['seed'].min()})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    files["cdf"] = _save(fig, out / "wait_cdf.png")

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5))
    _lines(axes[0, 0], _by_load(frame, "max_wait_ms"), "Max wait (starvation)", "ms (log)", log=True)
    _lines(axes[0, 1], _by_load(frame, "deadline_miss_rate"), "Deadline-miss rate", "fraction")
    _lines(axes[1, 0], _by_load(frame, "num_preemptions"), "Preemptions", "count per run")
    _lines(axes[1, 1], _by_load(frame, "num_recomputed_tokens"), "Recomputed tokens (wasted work)", "tokens per run")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    files["costs"] = _save(fig, out / "starvation_deadlines_preemption.png")
    return files


def _save(fig, path: Path) -> str:
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _table(frame: pd.DataFrame, column: str, digits: int = 0) -> str:
    table = _by_load(frame, column).round(digits)
    header = "| rate (req/s) | " + " | ".join(table.columns) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    lines = [f"| {rate} | " + " | ".join(f"{v:g}" for v in row) + " |" for rate, row in table.iterrows()]
    return "\n".join([header, rule, *lines])


def _reading(frame: pd.DataFrame) -> list[str]:
    """Sentences computed from the results (the best and worst policy per metric at the lowest and highest load)."""
    lines = []
    for rate in (frame["rate_req_s"].min(), frame["rate_req_s"].max()):
        at = frame[frame["rate_req_s"] == rate].groupby("policy").mean(numeric_only=True)
        parts = []
        for column, label in (("p50_ttft_ms", "median wait"), ("p99_ttft_ms", "p99 TTFT"), ("max_wait_ms", "max wait"),
                              ("deadline_miss_rate", "deadline misses"), ("num_recomputed_tokens", "recomputed tokens")):
            best, worst = at[column].idxmin(), at[column].idxmax()
            spread = at[column].max() / at[column].min() if at[column].min() > 0 else float("inf")
            if at[column].max() == at[column].min() or spread < 1.05:
                parts.append(f"{label}: all policies within 5 %")
                continue
            parts.append(f"{label}: lowest `{best}`, highest `{worst}`" + (f" ({spread:.1f}x)" if spread != float("inf") else ""))
        lines.append(f"- At {rate} req/s: " + "; ".join(parts) + ".")
    return lines


def write_report(rows: list[dict], out: Path, wall_seconds: float | None = None, workers: int | None = None) -> Path:
    """report.md with the assumptions first, the plots and the key tables."""
    frame = pd.DataFrame(rows)
    files = plots(frame, out)
    first = rows[0]
    engine = ", ".join(f"`{k}={v}`" for k, v in first.get("engine", {}).items()) or "see the CSV"
    runs = f"{len(rows)} runs ({frame['policy'].nunique()} policies × {frame['rate_req_s'].nunique()} loads × " \
           f"{frame['seed'].nunique()} seeds, {int(frame['num_requests'].iloc[0]):,} requests each)"
    timing = f" in {wall_seconds:.0f} s wall on {workers} worker(s)" if wall_seconds is not None else ""
    text = ["# Policy benchmark", "", ASSUMPTIONS.format(a=8000, b=100, arrival=first["arrival"], engine=engine, ttft=SLO["ttft_slo_ms"], tpot=SLO["tpot_slo_ms"]),
            f"{runs}{timing}. Values are means over seeds; `results.csv` has every run.", "",
            "## Tail latency vs load", "", f"![tails]({files['tails']})", "",
            "p99 TTFT (ms):", "", _table(frame, "p99_ttft_ms"), "",
            "p99 TTFT of the batch class (priority 2, ms): who waits when the urgent go first", "",
            _table(frame, "p99_ttft_ms_class2") if "p99_ttft_ms_class2" in frame else "(no class 2)", "",
            "## Waits and starvation", "", f"![cdf]({files['cdf']})", "", f"![costs]({files['costs']})", "",
            "Max wait (ms):", "", _table(frame, "max_wait_ms"), "",
            "Deadline-miss rate:", "", _table(frame, "deadline_miss_rate", 3), "",
            "SLO attainment (fraction of requests with TTFT and TPOT within the SLO):", "", _table(frame, "slo_attainment", 3), "",
            "Recomputed tokens per run (the cost of preemption):", "", _table(frame, "num_recomputed_tokens"), "",
            "## Reading it", "", *_reading(frame), "",
            "These are properties of the model, read from the tables above; check them on a real engine before acting.", ""]
    path = out / "report.md"
    path.write_text("\n".join(text))
    return path
