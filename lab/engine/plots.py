"""Plots of an engine run's step log (matplotlib; loaded on first use)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection

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


def _bars(ax, x, heights, bottoms, color: str, name: str) -> None:
    """Bars of width 0.9, as ax.bar draws them, but one artist for all (ax.bar's one per step is slow to draw at 10^2+ steps)."""
    x, top, bottom = (np.asarray(v, dtype=float).reshape(-1) for v in (x, np.add(bottoms, heights), bottoms))
    left, right = x - 0.45, x + 0.45
    corners = np.stack([np.column_stack(c) for c in ((left, bottom), (left, top), (right, top), (right, bottom))], axis=1)
    bars = PolyCollection(corners.reshape(-1, 4, 2), facecolors=color, edgecolors="none", label=name)
    bars.sticky_edges.y.extend(bottom.tolist())  # as ax.bar: no axis margin past any bar's base
    ax.add_collection(bars)
    ax.autoscale_view()


def plot_batch_composition(steps: list[dict], title: str | None = None, ax=None):
    """Stacked bars per step: decode tokens, prefill (chunk) tokens, and the unused token budget."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3))
    x = [s["step"] for s in steps]
    decode = [s["num_decode_tokens"] for s in steps]
    prefill = [s["num_prefill_tokens"] for s in steps]
    unused = [s["max_num_batched_tokens"] - s["num_batched_tokens"] for s in steps]
    _bars(ax, x, decode, [0] * len(x), "#1f77b4", label("decode tokens"))
    _bars(ax, x, prefill, decode, "#ff7f0e", label("prefill (chunk) tokens"))
    _bars(ax, x, unused, [d + p for d, p in zip(decode, prefill)], "#dddddd", label("unused budget"))
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
