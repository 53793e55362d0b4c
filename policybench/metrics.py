"""Per-run metrics from the engine's records and the trace: tails, waits, starvation, deadlines, preemption cost."""
from __future__ import annotations

import numpy as np

SLO = {"ttft_slo_ms": 500, "tpot_slo_ms": 50}  # notebook 03's SLO
CDF_POINTS = 101  # wait quantiles kept per run, for the CDF plot


def summarize(records: list[dict], trace: list[dict], ttft_slo_ms: float = SLO["ttft_slo_ms"],
              tpot_slo_ms: float = SLO["tpot_slo_ms"]) -> dict:
    """One row of metrics (ms unless named otherwise) plus `wait_quantiles_ms` for the CDF of waits."""
    if not records:
        raise ValueError("no records to summarize")
    deadline = {r["seq_id"]: r.get("deadline_us") for r in trace}
    arrival = np.array([r["arrival_us"] for r in records], dtype=np.int64)
    first = np.array([r["first_token_us"] for r in records], dtype=np.int64)
    finish = np.array([r["finish_us"] for r in records], dtype=np.int64)
    out = np.array([r["num_output_tokens"] for r in records], dtype=np.int64)
    prio = np.array([r["priority"] for r in records], dtype=np.int64)
    ttft, e2e = (first - arrival) / 1000, (finish - arrival) / 1000
    multi = out > 1
    tpot = (finish[multi] - first[multi]) / 1000 / (out[multi] - 1)
    tpot_all = np.zeros(len(records))
    tpot_all[multi] = tpot
    met = (ttft <= ttft_slo_ms) & (tpot_all <= tpot_slo_ms)
    span_s = (finish.max() - arrival.min()) / 1e6
    row = {"num_requests": len(records)}
    for name, values in (("ttft_ms", ttft), ("tpot_ms", tpot), ("e2e_ms", e2e)):
        for q in (50, 95, 99):
            row[f"p{q}_{name}"] = float(np.percentile(values, q)) if len(values) else float("nan")
    row["max_wait_ms"] = float(ttft.max())  # wait = TTFT: queueing plus prefill (starvation shows here)
    for cls in sorted(set(prio.tolist())):
        row[f"p99_ttft_ms_class{cls}"] = float(np.percentile(ttft[prio == cls], 99))
    if all(deadline.get(r["seq_id"]) for r in records):
        due = np.array([deadline[r["seq_id"]] for r in records], dtype=np.int64)
        row["deadline_miss_rate"] = float(np.mean(finish > due))
    else:
        row["deadline_miss_rate"] = float("nan")
    row["throughput_tok_s"] = float(out.sum() / span_s) if span_s else float("nan")
    row["goodput_req_s"] = float(met.sum() / span_s) if span_s else float("nan")
    row["slo_attainment"] = float(met.mean())
    row["num_preemptions"] = int(sum(r["num_preemptions"] for r in records))
    row["num_recomputed_tokens"] = int(sum(r["num_recomputed_tokens"] for r in records))
    row["wait_quantiles_ms"] = np.percentile(ttft, np.linspace(0, 100, CDF_POINTS)).tolist()
    return row
