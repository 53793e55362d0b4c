"""Plots that return matplotlib figures; safe on headless machines."""
from __future__ import annotations

from typing import Any, Iterable

import matplotlib.pyplot as plt  # matplotlib itself falls back to Agg when there is no display
from matplotlib.patches import FancyBboxPatch, Patch

from .batching import schedule
from .i18n import label

IDLE = "#d9d9d9"
WAIT = "#f0e6c8"


def color_of(request_id: int) -> Any:
    """A colour fixed by id, so a request looks the same in every plot."""
    return plt.get_cmap("tab10")(int(request_id) % 10)


def slot_spans(trace: list[dict[str, Any]], num_slots: int) -> list[tuple[int, int, int, int]]:
    """(slot, job id, start tick, length) per run of consecutive served ticks."""
    runs: dict[int, list[list[int]]] = {}
    for row in trace:
        for job_id in row["served"]:
            job_runs = runs.setdefault(job_id, [])
            if job_runs and job_runs[-1][0] + job_runs[-1][1] == row["tick"]:
                job_runs[-1][1] += 1
            else:
                job_runs.append([row["tick"], 1])
    ordered = sorted((start, job_id, length) for job_id, rs in runs.items() for start, length in rs)
    free_at = [0] * num_slots
    spans = []
    for start, job_id, length in ordered:
        slot = next(s for s in range(num_slots) if free_at[s] <= start)
        free_at[slot] = start + length
        spans.append((slot, job_id, start, length))
    return spans


def _draw_slots(ax, result: dict[str, Any], labels: dict[int, str]) -> None:
    slots, makespan = result["slots"], result["makespan_ticks"]
    for slot in range(slots):  # idle background first; served spans cover it
        ax.broken_barh([(0, makespan)], (slot - 0.4, 0.8), facecolors=IDLE, hatch="//", edgecolor="white", gid=f"idle:{slot}")
    for slot, job_id, start, length in slot_spans(result["trace"], slots):
        ax.broken_barh([(start, length)], (slot - 0.4, 0.8), facecolors=color_of(job_id), edgecolor="black",
                       gid=f"span:{job_id}")
        ax.text(start + length / 2, slot, labels.get(job_id, str(job_id)), ha="center", va="center", fontsize=9)
    ax.set_yticks(range(slots), [label("slot {slot}", slot=s) for s in range(slots)])
    ax.set_xlim(0, max(makespan, 1))
    ax.set_xticks(range(0, makespan + 1))
    ax.set_xlabel(label("tick"))
    ax.set_title(label("{policy}: makespan {makespan} ticks, utilization {utilization}", policy=label(result["policy"]),
                       makespan=makespan, utilization=f"{result['utilization']:.0%}"))


def plot_slots(jobs: list[dict], slots: int, labels: dict[int, str] | None = None):
    """Slot x tick Gantt charts, static vs continuous; hatched grey = idle slot-tick."""
    labels = labels or {}
    results = [schedule(jobs, slots, False), schedule(jobs, slots, True)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.9 * slots + 1.8), sharey=True)
    for ax, result in zip(axes, results):
        _draw_slots(ax, result, labels)
    fig.legend(handles=[Patch(facecolor=IDLE, hatch="//", label=label("idle slot-tick"))], loc="lower right")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def _lane_spans(events: list[dict[str, Any]], arrivals: dict[int, int]):
    """Per request: served steps by kind, plus wait spans and markers."""
    lanes: dict[int, dict[str, list]] = {}
    for step, ev in enumerate(events):
        lane = lanes.setdefault(ev["request_id"], {"prefill": [], "decode": [], "marks": []})
        lane["prefill" if ev["action"] == "prefill_to_decode" else "decode"].append(step)
        if ev["action"] == "finish":
            lane["marks"].append((step + 1, "finish"))
        victim = ev["preempted_request_id"]
        if victim is not None:
            lanes.setdefault(victim, {"prefill": [], "decode": [], "marks": []})["marks"].append((step, "preempted"))
    for rid, lane in lanes.items():
        served = sorted(lane["prefill"] + lane["decode"])
        preempt_steps = [s for s, kind in lane["marks"] if kind == "preempted"]
        for p in preempt_steps:
            resumed = [s for s in served if s > p]
            if resumed:
                lane["marks"].append((resumed[0], "resumed"))
        missed = [s for s, ev in enumerate(events) if ev["request_id"] == rid and ev["deadline_missed"]]
        if missed:
            lane["marks"].append((missed[0], "deadline missed"))
        end = (served[-1] + 1) if served else len(events)
        start = arrivals.get(rid, served[0] if served else 0)
        lane["wait"] = [s for s in range(start, end) if s not in set(served)]
    return lanes


MARKERS = {"preempted": ("X", "black"), "resumed": (">", "black"),
           "finish": ("|", "black"), "deadline missed": ("v", "red")}


def plot_timeline(events: Iterable[dict[str, Any]], arrivals: dict[int, int] | None = None, title: str | None = None):
    """One lane per request: waiting, prefill and decode steps, with event markers."""
    events = list(events)
    lanes = _lane_spans(events, arrivals or {})
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(events) + 2), 0.7 * max(len(lanes), 1) + 1.8))
    for row, rid in enumerate(sorted(lanes)):
        lane, colour = lanes[rid], color_of(rid)
        ax.broken_barh([(s, 1) for s in lane["wait"]], (row - 0.3, 0.6), facecolors=WAIT, edgecolor="none",
                       gid=f"req{rid}:wait")
        ax.broken_barh([(s, 1) for s in lane["prefill"]], (row - 0.4, 0.8), facecolors=colour, hatch="xx",
                       edgecolor="white", gid=f"req{rid}:prefill")
        ax.broken_barh([(s, 1) for s in lane["decode"]], (row - 0.4, 0.8), facecolors=colour, edgecolor="white",
                       gid=f"req{rid}:decode")
        for step, kind in lane["marks"]:
            marker, mcolour = MARKERS[kind]
            ax.scatter([step + (0.5 if kind in {"preempted", "deadline missed"} else 0)], [row + 0.45],
                       marker=marker, color=mcolour, s=60, zorder=3, gid=f"req{rid}:{kind}")
    ax.set_yticks(range(len(lanes)), [label("req {id}", id=rid) for rid in sorted(lanes)])
    ax.set_xlim(0, max(len(events), 1) + 0.5)
    ax.set_xlabel(label("scheduler step (clock)"))
    ax.invert_yaxis()
    handles = [Patch(facecolor=WAIT, label=label("waiting")), Patch(facecolor="grey", hatch="xx", label=label("prefill")),
               Patch(facecolor="grey", label=label("decode"))]
    handles += [plt.Line2D([], [], marker=m, color=c, linestyle="", label=label(k)) for k, (m, c) in MARKERS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.set_title(title or label("decode timeline"))
    fig.tight_layout()
    return fig


def plot_lifecycle():
    """The request lifecycle: waiting -> admitted -> prefill -> decode -> finished, with preemption."""
    fig, ax = plt.subplots(figsize=(10, 3.2))
    boxes = {"waiting": (0.5, 2), "admitted": (2.5, 2), "prefill": (4.5, 2), "decode": (6.5, 2),
             "finished": (8.5, 2), "preempted": (4.5, 0.4)}
    for name, (x, y) in boxes.items():
        ax.add_patch(FancyBboxPatch((x - 0.75, y - 0.3), 1.5, 0.6, boxstyle="round,pad=0.05",
                                    facecolor="#eef3fb" if name != "preempted" else "#fbeeee", edgecolor="black"))
        ax.text(x, y, label(name), ha="center", va="center", fontsize=11)
    arrows = [("waiting", "admitted", "KV blocks free"), ("admitted", "prefill", ""), ("prefill", "decode", "1 step"),
              ("decode", "finished", "max_new_tokens reached")]
    for a, b, text in arrows:
        (x1, y1), (x2, y2) = boxes[a], boxes[b]
        ax.annotate("", xy=(x2 - 0.8, y2), xytext=(x1 + 0.8, y1), arrowprops={"arrowstyle": "->"})
        ax.text((x1 + x2) / 2, y1 + 0.4, label(text) if text else "", ha="center", fontsize=8)
    ax.annotate("", xy=(4.2, 0.75), xytext=(2.7, 1.65), arrowprops={"arrowstyle": "->", "color": "firebrick"})
    ax.text(2.6, 1.0, label("preempted: frees blocks,\nkeeps phase + progress"), fontsize=8, color="firebrick", ha="center")
    ax.annotate("", xy=(2.9, 1.65), xytext=(4.8, 0.75), arrowprops={"arrowstyle": "->", "color": "seagreen"})
    ax.text(5.9, 0.9, label("re-admitted: resumes\nwhere it stopped"), fontsize=8, color="seagreen", ha="center")
    ax.set_xlim(-0.5, 9.5)
    ax.set_ylim(-0.2, 2.8)
    ax.axis("off")
    ax.set_title(label("Request lifecycle in DecodeSchedulerSim"))
    fig.tight_layout()
    return fig
