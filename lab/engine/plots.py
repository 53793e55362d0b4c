"""Plots of an engine run's step log (matplotlib; loaded on first use)."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ..i18n import label
from .slo import SLO_EXERCISE


def _labelled(ax, xlabel: str, ylabel: str, title: str, legend_loc: str):
    """Axis labels, title and a small legend; the figure laid out and returned."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc=legend_loc, fontsize=8)
    ax.figure.tight_layout()
    return ax.figure


def plot_batch_composition(steps: list[dict], title: str | None = None, ax=None):
    """Stacked bars per step: decode tokens, prefill (chunk) tokens, and the unused token budget."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3))
    x = [s["step"] for s in steps]
    decode = [s["num_decode_tokens"] for s in steps]
    prefill = [s["num_prefill_tokens"] for s in steps]
    unused = [s["max_num_batched_tokens"] - s["num_batched_tokens"] for s in steps]
    ax.bar(x, decode, color="#1f77b4", label=label("decode tokens"), width=0.9)
    ax.bar(x, prefill, bottom=decode, color="#ff7f0e", label=label("prefill (chunk) tokens"), width=0.9)
    ax.bar(x, unused, bottom=[d + p for d, p in zip(decode, prefill)], color="#dddddd", label=label("unused budget"), width=0.9)
    return _labelled(ax, label("engine step"), label("tokens"), title or label("What each step computes"), "upper right")


def plot_kv_occupancy(steps: list[dict], title: str | None = None, ax=None):
    """Blocks in use per step against the pool size; a red x marks each step with a preemption."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3))
    x = [s["step"] for s in steps]
    ax.step(x, [s["num_used_blocks"] for s in steps], where="mid", label=label("blocks in use"))
    ax.axhline(steps[0]["num_blocks"] if steps else 0, color="black", linestyle="--", linewidth=1, label=label("pool size"))
    hits = [(s["step"], s["num_used_blocks"]) for s in steps if s["preempted"]]
    if hits:
        ax.scatter(*zip(*hits), marker="x", color="red", s=50, zorder=3,
                   label=label("preemption ({count} in all)", count=sum(len(s["preempted"]) for s in steps)))
    return _labelled(ax, label("engine step"), label("blocks"), title or label("KV blocks in use"), "lower right")


def plot_slo(rows: list[dict], exercise: dict = SLO_EXERCISE, title: str | None = None, ax=None):
    """One point per (policy, trace): max wait against class-0 p99 TTFT; the SLO is the shaded corner."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between([0, exercise["max_wait_ms"] / 1000], 0, exercise["class0_p99_ttft_ms"], color="#2ca02c", alpha=0.15,
                    label=label("meets the SLO"))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == policy]
        # a row's name is printed too, so it comes in the edition's language (tr); drawn, it may need English
        ax.scatter([r["max_wait_ms"] / 1000 for r in mine], [r["class0_p99_ttft_ms"] for r in mine], label=label(str(policy)), s=40)
    return _labelled(ax, label("max wait of any request (s)"), label("class-0 p99 TTFT (ms)"),
                     title or label("Policies against the SLO"), "best")
