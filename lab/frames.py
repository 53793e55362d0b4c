"""pandas views of schedules and decode events."""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from .decode import EVENT_KEYS
from .i18n import HEADERS_ZH, get_language


def events_frame(events: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per scheduler step; the step number is the clock before it."""
    frame = pd.DataFrame(list(events), columns=list(EVENT_KEYS))
    frame["preempted_request_id"] = frame["preempted_request_id"].astype("Int64")  # ids, not floats, beside None
    frame.insert(0, "step", range(len(frame)))
    return frame


def request_summary(events: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Per request: first/finish step, total wait, preemptions, deadline missed."""
    frame = events_frame(events)
    rows = []
    for rid, own in frame.groupby("request_id", sort=True):
        finished = own[own["action"] == "finish"]
        rows.append({
            "request_id": rid,
            "first_step": int(own["step"].iloc[0]),
            "finish_step": int(finished["step"].iloc[0]) if len(finished) else None,
            "total_wait": int(own["wait_steps"].iloc[-1]),
            "preemptions": int((frame["preempted_request_id"] == rid).sum()),
            "deadline_missed": bool(own["deadline_missed"].any()),
        })
    columns = ["request_id", "first_step", "finish_step", "total_wait", "preemptions", "deadline_missed"]
    return pd.DataFrame(rows, columns=columns).set_index("request_id")


def schedule_frame(result: dict[str, Any]) -> pd.DataFrame:
    """The per-job records of a `schedule` result, indexed by id."""
    return pd.DataFrame(result["completed"]).set_index("id")


def compare_policies(jobs: list[dict], slots: int) -> pd.DataFrame:
    """Makespan, busy slots and utilization of static vs continuous FIFO."""
    from .batching import schedule

    rows = []
    for continuous in (False, True):
        res = schedule(jobs, slots, continuous)
        waits = [rec["wait"] for rec in res["completed"]]
        rows.append({"policy": res["policy"], "makespan_ticks": res["makespan_ticks"],
                     "busy_slots": res["busy_slots"], "utilization": res["utilization"],
                     "mean_wait": sum(waits) / len(waits) if waits else 0.0,
                     "max_wait": max(waits, default=0)})
    return pd.DataFrame(rows).set_index("policy")


VALUE_COLUMNS = {"phase", "action", "status"}  # columns whose values are names, shown as row labels are


def _gloss(label: Any, names: dict[str, str] = HEADERS_ZH) -> str | None:
    """The Chinese name of a table label in `names` (lab's, or an assignment's beside them), if it has one."""
    return names.get(label) if isinstance(label, str) else None


def _named(label: Any, names: dict[str, str] = HEADERS_ZH) -> Any:
    """A row label or an axis name in this edition: its Chinese name before the code name, if it has one."""
    gloss = _gloss(label, names)
    if gloss is None:
        return label
    return f"{gloss} {label}" if label.isidentifier() else gloss  # "static start" is no code name


def table(frame: pd.DataFrame, headers_zh: dict[str, str] | None = None) -> pd.DataFrame:
    """A table as this edition shows it: in zh, each header that is a code name gets its Chinese name above it, and
    row labels and axis names get theirs before them (`静态 static`); in en, the table itself. Only for showing:
    keep computing on the table you passed. `headers_zh`: an assignment's own code names in Chinese, beside lab's."""
    if get_language() != "zh":
        return frame
    names = {**HEADERS_ZH, **headers_zh} if headers_zh else HEADERS_ZH   # merged once, not per label
    named = lambda label: _named(label, names)  # noqa: E731
    shown = frame.rename(index=named).rename_axis(index=[named(n) for n in frame.index.names])
    for column in VALUE_COLUMNS.intersection(c for c in frame.columns if isinstance(c, str)):
        shown[column] = frame[column].map(named)  # the event names in 02's tables: prefill, decode, finish
    columns = list(frame.columns)
    glosses = [_gloss(c, names) for c in columns]
    if not isinstance(frame.columns, pd.MultiIndex) and any(glosses):
        shown.columns = pd.MultiIndex.from_arrays([[g or c for g, c in zip(glosses, columns)],
                                                   [c if g and c.isidentifier() else "" for g, c in zip(glosses, columns)]])
    return shown
