"""The class report: what the class got wrong and what to reteach, from report.json alone.

    python -m grader.class_report OUT      # again, from OUT/report.json

Written by every `make autograde` and by `grader.shard merge` (from the merged report.json, so a sharded
class gets the same report): OUT/class-report.html (self-contained and inert: PNGs embedded, no script, the
feedback pages' CSP), OUT/class-report.md with its PNGs in OUT/class-report/, and OUT/rules.csv, one row per
(student, TODO, rule). Figures are drawn with English labels only (the report is the instructor's, and
needs no CJK font). Every student of grades.csv is in the score histograms; rule shares are over the
students who attempted the TODO (not left as given) and whose TODO was judged.
"""
from __future__ import annotations

import base64
import csv
import functools
import html
import io
import json
import re
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import messages, similarity, two_cores
from .paths import assignment_names
from .safe_text import code_block, csv_cell, inert
from .verdict import Outcome

TOP_RULES = 3      # most-failed rules of a TODO shown with their sentence and a failing case
SHOWN_SIDE = 5     # clusters and near pairs of a TODO shown side by side (the rest are listed)
SIDE_LINES = 60    # lines of each answer shown side by side
SIDE_WIDTH = 60    # characters of a line in the Markdown's side-by-side block
HTML_SIDE_WIDTH = 160   # characters of a line in the HTML's side-by-side table
LISTED = 50        # further clusters and near pairs of a TODO listed without their code
RETEACH = 5        # items of "what to reteach"
BINS = 10          # bins of the totals histogram
CSS = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
       "img{max-width:100%}table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}"
       "pre{background:#f5f5f5;padding:6px;overflow-x:auto;white-space:pre-wrap}blockquote{color:#555;margin-left:1em}")


@dataclass
class RuleStats:
    task: str
    answer_id: str
    name: str
    cost: float                                       # points one failure of it costs
    judged: int = 0
    failed: list[str] = field(default_factory=list)   # student ids
    quote: str = ""
    case: tuple[str, str, str] = ("", "", "")          # (student, detail, snippet) of the shortest failing case

    @property
    def share(self) -> float:
        return len(self.failed) / self.judged if self.judged else 0.0

    @property
    def lost(self) -> float:
        return len(self.failed) * self.cost


@dataclass
class Misconception:
    name: str
    answer_id: str
    task: str
    mistake: str
    hint: str
    students: list[str] = field(default_factory=list)
    lost: float = 0.0


def _judged(verdict: dict) -> bool:
    """A verdict that says something about the answer (a grading error says nothing)."""
    return verdict.get("status") != Outcome.GRADING_ERROR


def blank(verdict: dict) -> bool:
    """A TODO left as given: every rule fails, and the stub's NotImplementedError is seen (it says nothing of a
    misconception; a scenario that calls the stub deep inside may end another way, as a crash)."""
    rules = verdict["rules"]
    return bool(rules) and not any(r["passed"] for r in rules) and any("NotImplementedError" in r["detail"] for r in rules)


def summarize(report: dict) -> dict:
    """Everything the report shows, from report.json: tasks, scores, rule statistics, mistakes, operations."""
    columns, students = report["task_columns"], report["students"]
    tasks = _tasks(students, columns)
    scores = {s["student_id"]: {c: 0.0 for c in columns} | {v["answer_id"]: v["score"] for v in s["verdicts"]} for s in students}
    penalties = {s["student_id"]: (s.get("late") or {}).get("penalty", 0) for s in students}
    totals = {sid: round(sum(by.values()) - penalties[sid], 2) for sid, by in scores.items()}  # as grades.csv's total
    rules = {(a, name): RuleStats(t["task"], a, name, t["points"] / len(t["rules"])) for a, t in tasks.items() for name in t["rules"]}
    mistakes = _tally(students, rules)
    return {"assignment": report["assignment"], "max_total": report["max_total"], "columns": columns, "tasks": tasks,
            "scores": scores, "totals": totals, "histogram": histogram(list(totals.values()), report["max_total"]),
            "rules": rules, "blank": _blanks(students, tasks),
            "mistakes": sorted(mistakes.values(), key=lambda m: (-len(m.students), m.name)),
            "operations": operations(students), "sandbox": f"{report.get('sandbox', 'unknown')} ({report.get('sandbox_means', '')})",
            "deadline": report.get("deadline"), "late": [(s["student_id"], s["late"]) for s in students if s.get("late")],
            **_similar(report)}


def _tasks(students: list[dict], columns: list[str]) -> dict[str, dict]:
    """Each TODO's task id, points and rule names (from its first verdict), in the report's column order."""
    tasks: dict[str, dict] = {}
    for s in students:
        for v in s["verdicts"]:
            tasks.setdefault(v["answer_id"], {"task": v["task_id"], "points": v["points"], "rules": [r["name"] for r in v["rules"]]})
    return {c: tasks[c] for c in columns if c in tasks}


def _blanks(students: list[dict], tasks: dict[str, dict]) -> dict[str, int]:
    """How many students left each TODO as given."""
    return {c: sum(blank(v) for s in students for v in s["verdicts"] if v["answer_id"] == c) for c in tasks}


def _similar(report: dict) -> dict:
    """"similar": the findings of grader/similarity.py; "answers": each student's answers and the solved edition's
    (as similarity.SOLVED), shown side by side. Stubs and solved answers come from the course where the assignment is
    at hand; a report.json read away from its course is compared among its students only."""
    stubs, solved = course_answers(report["assignment"])
    return {"similar": similarity.of_report(report, stubs, solved),
            "answers": _answers(report["students"]) | {(similarity.SOLVED, gid): source for gid, source in solved.items()}}


def course_answers(assignment: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(Assignment.stubs, Assignment.reference) of `assignment` as this course has it; {} for either that cannot be
    read here (a report.json read away from its course, or of an assignment this course does not have)."""
    from .assignment import get

    def read(part) -> dict:
        try:
            return dict(part(get(assignment)))
        except Exception:  # noqa: BLE001 - compared without it: the stubs, or the solved edition's answers
            return {}

    if assignment not in assignment_names():   # get() would stop the run (SystemExit) on a name it does not know
        return {}, {}
    return read(lambda a: a.stubs), read(lambda a: a.reference)


def _answers(students: list[dict]) -> dict[tuple[str, str], str]:
    """{(student, answer cell): source} of the answers report.json keeps."""
    return {(s["student_id"], gid): source for s in students for gid, source in (s.get("answers") or {}).items()}


def _tally(students: list[dict], rules: dict[tuple[str, str], RuleStats]) -> dict[str, Misconception]:
    """Counts each judged, attempted verdict into its rules' statistics; returns the misconceptions found."""
    mistakes: dict[str, Misconception] = {}
    for s in students:
        for v in s["verdicts"]:
            if not _judged(v) or blank(v):
                continue
            _count_rules(s["student_id"], v, rules)
            _count_mistake(s["student_id"], v, mistakes)
    return mistakes


def _count_rules(student: str, verdict: dict, rules: dict[tuple[str, str], RuleStats]) -> None:
    """Adds one judged verdict to its rules' statistics: judged, failed, the quote and the shortest failing case."""
    for r in verdict["rules"]:
        stats = rules.get((verdict["answer_id"], r["name"]))
        if stats is None:
            continue
        stats.judged += 1
        if not r["passed"]:
            stats.failed.append(student)
            stats.quote = stats.quote or " ".join(r.get("quotes", {}).get("en", []))
            case = (student, r["detail"], r.get("snippet", ""))
            if not stats.case[0] or _case_size(case) < _case_size(stats.case):
                stats.case = case


def _count_mistake(student: str, verdict: dict, mistakes: dict[str, Misconception]) -> None:
    """Adds one judged verdict to the misconception it was diagnosed with, if any."""
    said = verdict.get("mistake") or {}
    if said.get("name"):
        m = mistakes.setdefault(said["name"], Misconception(said["name"], verdict["answer_id"], verdict["task_id"],
                                                           said.get("en", {}).get("mistake", ""), said.get("en", {}).get("hint", "")))
        m.students.append(student)
        m.lost = round(m.lost + verdict["points"] - verdict["score"], 2)


def _case_size(case: tuple[str, str, str]) -> tuple:
    """Shortest failing case first: fewest snippet lines, then characters, then the student id (a stable choice)."""
    student, detail, snippet = case
    code = snippet or detail
    return (not snippet, len(code.splitlines()), len(code), student)


def histogram(values: list[float], top: float, bins: int = BINS) -> list[tuple[float, float, int]]:
    """(low, high, count) over [0, top] in `bins` equal bins; the last bin includes `top`."""
    width = (top or 1) / bins
    counts = [0] * bins
    for value in values:
        counts[min(max(int(value // width), 0), bins - 1)] += 1
    return [(round(i * width, 2), round((i + 1) * width, 2), n) for i, n in enumerate(counts)]


def operations(students: list[dict]) -> dict:
    """Statuses, timeouts, crashes, layout warnings (free repairs apart from deleted answer cells), languages and
    grading time of the batch."""
    ops = {"status": Counter(s["status"] for s in students),
           "language": Counter(s.get("language", "en") for s in students if s["status"] == "graded"),
           "timeouts": [], "crashes": [], "grading_errors": [], "layout": [], "answer_deleted": [], "other_notes": [],
           "not_graded": [(s["student_id"], s["reason"]) for s in students if s["status"] != "graded"],
           "seconds": [s.get("seconds", 0.0) for s in students]}
    for s in students:
        _verdict_operations(s, ops)
        _warning_operations(s, ops)
    return ops


def _verdict_operations(student: dict, ops: dict) -> None:
    """Adds a student's timeouts, grading errors and crashes to `ops`."""
    for v in student["verdicts"]:
        if v.get("hung"):
            ops["timeouts"].append((student["student_id"], v["task_id"]))
        if v.get("status") == Outcome.GRADING_ERROR:
            ops["grading_errors"].append((student["student_id"], v["task_id"]))
        elif v.get("status") in (Outcome.RAISED, Outcome.CRASHED):
            ops["crashes"].append((student["student_id"], v["task_id"]))


def _warning_operations(student: dict, ops: dict) -> None:
    """Adds a student's warnings to `ops`, each under its kind."""
    # by catalogue key, never by wording (a warning without a key is counted with the other notes)
    keys = student.get("warning_keys") or []
    for i, w in enumerate(student["warnings"]):
        key = keys[i] if i < len(keys) else ""  # a short list drops no warning
        kind = "answer_deleted" if key in messages.LOST_TODO else "layout" if key in messages.LAYOUT else "other_notes"
        ops[kind].append((student["student_id"], w))


def reteach(summary: dict) -> list[tuple[float, str]]:
    """The rules and misconceptions that cost the class the most points: (points lost, what)."""
    items = [(round(r.lost, 2), f"rule \"{r.name}\" ({r.task}): failed by {len(r.failed)} of {r.judged}")
             for r in summary["rules"].values() if r.failed]
    items += [(m.lost, f"misconception \"{m.name}\" ({m.task}): {len(m.students)} student(s); {m.mistake}")
              for m in summary["mistakes"]]
    return sorted(items, key=lambda item: (-item[0], item[1]))[:RETEACH]


# Figures: matplotlib's object API (no pyplot state), English labels, drawn once per report.

def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def warm() -> None:
    """Import matplotlib and draw one labelled figure, so that the report's first figure costs what the others do."""
    fig = _figure(1, 1)
    fig.add_subplot().set(title="warm", xlabel="points")
    _png(fig)


def figures(summary: dict) -> dict[str, tuple[str, bytes]]:
    """{file name: (alt text, PNG)}: totals, each TODO's scores, each TODO's rules, and the misconceptions."""
    import matplotlib.figure  # noqa: F401 - imported once, before the fork, not in both processes

    drawings = _drawings(summary)
    pngs = two_cores.produce([draw for _, _, draw in drawings])  # on two cores: the class is graded, one would idle
    return {name: (alt, png) for (name, alt, _), png in zip(drawings, pngs)}


def _drawings(summary: dict) -> list[tuple[str, str, Callable[[], bytes]]]:
    """(file name, alt text, what draws its PNG) for each figure of the report, in the report's order."""
    columns = [c for c in summary["columns"] if c in summary["tasks"]]
    out = [("totals.png", "Histogram of the students' totals", lambda: _totals(summary))]
    if columns:
        out.append(("todo-scores.png", "Each TODO's scores: how many students got each score", lambda: _todo_scores(summary, columns)))
    out += [(f"rules-{column}.png", f"{summary['tasks'][column]['task']}: share of students failing each rule",
             functools.partial(_rules, summary, column)) for column in columns]
    if summary["mistakes"]:
        out.append(("misconceptions.png", "How many students have each misconception", lambda: _mistakes(summary["mistakes"])))
    return out


def _totals(summary: dict) -> bytes:
    fig = _figure(6, 3)
    ax = fig.add_subplot()
    bars = summary["histogram"]
    ax.bar([lo for lo, _, _ in bars], [n for _, _, n in bars], width=[hi - lo for lo, hi, _ in bars], align="edge", edgecolor="white")
    ax.set(xlabel="total points", ylabel="students", title=f"Totals (max {summary['max_total']:g})")
    return _png(fig)


def _todo_scores(summary: dict, columns: list[str]) -> bytes:
    fig = _figure(2.4 * len(columns), 2.6)
    for i, column in enumerate(columns):
        ax = fig.add_subplot(1, len(columns), i + 1)
        counts = Counter(by[column] for by in summary["scores"].values())
        ax.bar([f"{v:g}" for v in sorted(counts)], [counts[v] for v in sorted(counts)])
        ax.set(title=f"{summary['tasks'][column]['task']} (of {summary['tasks'][column]['points']:g})", xlabel="points")
        ax.tick_params(axis="x", labelrotation=45)
    fig.axes[0].set_ylabel("students")
    return _png(fig)


def _rules(summary: dict, column: str) -> bytes:
    stats = sorted((r for r in summary["rules"].values() if r.answer_id == column), key=lambda r: (-r.share, r.name))
    fig = _figure(8, 0.45 * len(stats) + 1.2)
    ax = fig.add_subplot()
    ax.barh([_short(r.name) for r in reversed(stats)], [100 * r.share for r in reversed(stats)], color="#c0504d")
    ax.set(xlim=(0, 100), xlabel="% of judged students failing the rule", title=f"{summary['tasks'][column]['task']}: rules by failure share")
    ax.tick_params(axis="y", labelsize=8)
    return _png(fig)


def _mistakes(mistakes: list) -> bytes:
    fig = _figure(8, 0.45 * len(mistakes) + 1.2)
    ax = fig.add_subplot()
    ax.barh([_short(f"{m.task}: {m.name}") for m in reversed(mistakes)], [len(m.students) for m in reversed(mistakes)], color="#4f81bd")
    ax.set(xlabel="students", title="Misconceptions found")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.tick_params(axis="y", labelsize=8)
    return _png(fig)


def _short(text: str, limit: int = 70) -> str:
    """A label that fits beside a bar (ASCII: DejaVu draws it on any machine)."""
    text = inert(text, 10 * limit).replace("&#124;", "|").replace("&lt;", "<").replace("&gt;", ">")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# The two documents: the same sections, as Markdown (beside its PNGs) and as one inert HTML page.

def sections(summary: dict, images: dict[str, tuple[str, bytes]]) -> list[tuple[str, list]]:
    """(heading, blocks); a block is ("p", text) | ("h3", text) | ("img", name) | ("table", header, rows) | ("pre", code)
    | ("quote", text) | ("list", items) | ("case", student, detail), the last holding text of the student's run."""
    teach = [("list", [f"{what} ({lost:g} points lost)" for lost, what in reteach(summary)] or ["nothing: no rule failed"])]
    return [(f"{summary['assignment']}: class report", _head_blocks(summary)), ("What to reteach", teach),
            ("Scores", _score_blocks(summary, images)), ("Rules by failure share", _rule_blocks(summary)),
            ("Misconceptions", _mistake_blocks(summary)), ("Answers to look at", look_at(summary)),
            ("Operations", _operation_blocks(summary))] + late_section(summary)


def _head_blocks(summary: dict) -> list:
    """The class size, the maximum, and the mean and median totals."""
    totals = list(summary["totals"].values())
    return [("p", f"{len(totals)} students; max {summary['max_total']:g} points"
                  + (f"; mean total {statistics.mean(totals):.2f}, median {statistics.median(totals):g}" if totals else ""))]


def _score_blocks(summary: dict, images: dict[str, tuple[str, bytes]]) -> list:
    """The totals histogram (figure and table), each TODO's scores, and a table of each TODO's figures."""
    scores = [("img", "totals.png"), ("table", ["total points", "students"],
                                      [[f"{lo:g} to {hi:g}" + (" (incl.)" if i == len(summary["histogram"]) - 1 else ""), str(n)]
                                       for i, (lo, hi, n) in enumerate(summary["histogram"])])]
    if "todo-scores.png" in images:
        scores.append(("img", "todo-scores.png"))
    scores.append(("table", ["TODO", "points", "mean", "full marks", "zero", "left blank"],
                   [[t["task"], f"{t['points']:g}", f"{statistics.mean(by[c] for by in summary['scores'].values()):.2f}",
                     str(sum(by[c] >= t["points"] for by in summary["scores"].values())),
                     str(sum(by[c] == 0 for by in summary["scores"].values())), str(summary["blank"][c])]
                    for c, t in summary["tasks"].items()]))
    return scores


def _rule_blocks(summary: dict) -> list:
    """Per TODO: its rules figure and table, then its most-failed rules with their sentence and a failing case."""
    rules = []
    for column, task in summary["tasks"].items():
        stats = sorted((r for r in summary["rules"].values() if r.answer_id == column), key=lambda r: (-r.share, r.name))
        rules += [("h3", task["task"]), ("img", f"rules-{column}.png"),
                  ("table", ["rule", "failed (of those who attempted it)", "share"], [[r.name, f"{len(r.failed)} of {r.judged}", f"{100 * r.share:.0f}%"] for r in stats])]
        for r in [r for r in stats if r.failed][:TOP_RULES]:
            rules += _top_rule(r)
    return rules


def _top_rule(r: RuleStats) -> list:
    """One of a TODO's most-failed rules: how often, the text's sentence, and its shortest failing case."""
    blocks = [("p", f"**{r.name}**: failed by {len(r.failed)} of {r.judged} students ({100 * r.share:.0f}%).")]
    if r.quote:
        blocks.append(("quote", f"The text says: \"{r.quote}\""))
    blocks.append(("case", *r.case[:2]))
    snippet = r.case[2]
    if snippet:
        blocks.append(("pre", snippet))
    return blocks


def _mistake_blocks(summary: dict) -> list:
    """The misconceptions found: figure and table, or a sentence saying there are none."""
    mistakes = [("p", "A failing TODO is diagnosed when it behaves exactly like a catalogued mistake (grader/diagnose.py); "
                      "answers whose bug is not in the catalogue are not counted here.")]
    if summary["mistakes"]:
        mistakes += [("img", "misconceptions.png"),
                     ("table", ["TODO", "misconception", "hint the students were given", "students", "points lost", "who"],
                      [[m.task, f"{m.name}: {m.mistake}", m.hint, str(len(m.students)), f"{m.lost:g}", ", ".join(map(inert, m.students))]
                       for m in summary["mistakes"]])]
    else:
        mistakes.append(("p", "No failing TODO behaves like a catalogued mistake."))
    return mistakes


def _operation_blocks(summary: dict) -> list:
    """The batch's sandbox, statuses, languages, what went wrong, warnings and grading time, as one list."""
    ops = summary["operations"]
    seconds = ops["seconds"]
    pairs = lambda items: ", ".join(f"{inert(a)} ({inert(b, 120)})" for a, b in items) or "none"  # noqa: E731
    return [("list", [f"sandbox: {summary['sandbox']}",
                      f"status: {', '.join(f'{k} {n}' for k, n in sorted(ops['status'].items()))}",
                      f"language of the graded submissions: {', '.join(f'{k} {n}' for k, n in sorted(ops['language'].items())) or 'none'}",
                      f"not graded: {pairs(ops['not_graded'])}",
                      f"timeouts (a TODO ran past its time limit): {pairs(ops['timeouts'])}",
                      f"crashes (an answer cell raised, or its grading child crashed): {pairs(ops['crashes'])}",
                      f"grading errors (re-run these): {pairs(ops['grading_errors'])}",
                      f"layout warnings (cost nothing): {len(ops['layout'])} in {len({s for s, _ in ops['layout']})} submission(s)",
                      f"answer cells deleted (that TODO scores 0): {pairs(ops['answer_deleted'])}",
                      f"other notes of the feedback runs: {len(ops['other_notes'])} in {len({s for s, _ in ops['other_notes']})} submission(s)",
                      f"grading time: {sum(seconds):.1f} s of worker time, {max(seconds, default=0):.1f} s at most per student"])]


def late_section(summary: dict) -> list[tuple[str, list]]:
    """With a due date: who was late, what it cost and why, who had an extension, and whose time is not known."""
    policy = summary.get("deadline")
    if not policy:
        return []
    shown = [(sid, late) for sid, late in summary["late"] if late["kind"] != "on_time"]
    by_kind = Counter(late["kind"] for _, late in summary["late"])
    blocks = [("p", f"Due {policy['due']}; penalty {100 * policy['per_day']:g}%/day, {100 * policy['flat']:g}% once late, "
                    f"at most {100 * policy['max_penalty']:g}% of the raw score; {policy['extensions']} extension(s). "
                    f"On time {by_kind['on_time']}, late {by_kind['late']}, late within an extension {by_kind['extension']}, "
                    f"**no usable submission time {by_kind['no_time']}** (graded with no penalty: check these by hand)."),
              ("table", ["student", "submitted", "raw total", "penalty", "total", "reason"],
               [[inert(sid), late["submitted"] or "unknown", f"{late['raw_total']:g}", f"{late['penalty']:g}",
                 f"{late['raw_total'] - late['penalty']:g}", inert(late["note"], 200)] for sid, late in shown])]
    return [("Late submissions", blocks if shown else blocks[:1])]


def look_at(summary: dict) -> list:
    """Per TODO, answers that are the same code once names, comments, strings and layout are set aside, and pairs
    that are nearly so (grader/similarity.py), side by side: for the instructor to read, not a finding."""
    blocks = [("p", "Answers that are the same code once names, comments, strings and layout are set aside, and pairs "
                    f"that are nearly so (a similarity of {similarity.THRESHOLD:g} or more of what each adds to the given code; "
                    "grader/similarity.py), and those like the solved edition's answer, which self-learners can read, listed as "
                    f"{similarity.SOLVED}. Answers written independently can coincide, above all short answers to a "
                    "TODO whose given code lays out each step: this is a list of answers to read side by side, not a "
                    "finding about anyone. Answers left as given, and answers that add fewer than "
                    f"{similarity.MIN_OWN} tokens to the given code, are not compared.")]
    answers = summary.get("answers", {})
    side = lambda a, b, gid: ("side", a, answers.get((a, gid), ""), b, answers.get((b, gid), ""))  # noqa: E731
    for gid, found in summary.get("similar", {}).items():
        if not found.clusters and not found.near:
            continue
        task = summary["tasks"].get(gid, {}).get("task", gid)
        blocks += [("h3", task), ("p", f"{found.compared} answers compared; {len(found.clusters)} group(s) of the same code, "
                                       f"{len(found.near)} pair(s) nearly the same.")]
        for group in found.clusters[:SHOWN_SIDE]:
            students = [s for s in group if s != similarity.SOLVED]   # the solved edition is named, never counted
            also = ", and the solved edition's answer" if len(students) < len(group) else ""
            blocks += [("p", f"The same code apart from names, comments, strings and layout ({len(students)} students{also}): "
                             + ", ".join(map(inert, group)) + "."), side(group[0], group[1], gid)]
        for ratio, a, b in found.near[:SHOWN_SIDE]:
            blocks += [("p", f"Nearly the same code (similarity {ratio:.2f}): {inert(a)} and {inert(b)}."), side(a, b, gid)]
        rest = [["same code", ", ".join(map(inert, g))] for g in found.clusters[SHOWN_SIDE:]]
        rest += [[f"similarity {r:.2f}", f"{inert(a)}, {inert(b)}"] for r, a, b in found.near[SHOWN_SIDE:]]
        if rest:
            more = [[f"and {len(rest) - LISTED} more", ""]] if len(rest) > LISTED else []
            blocks.append(("table", ["also to look at", "students"], rest[:LISTED] + more))
    if len(blocks) == 1:
        blocks.append(("p", "No two answers of a TODO are the same or nearly so."))
    return blocks


def answer_lines(text: str, lines: int = SIDE_LINES, width: int = SIDE_WIDTH) -> list[str]:
    """A student's answer as its first `lines` lines, each printable ASCII on its own (as inert() makes it, cut to
    `width`): no bidi override (U+202E, U+2066-2069) or control character (ESC) reaches a report as it is."""
    return [inert(line, width, markup=False) for line in text.expandtabs(4).splitlines()[:lines]] or [""]


def side_by_side(left: str, right: str, lines: int = SIDE_LINES, width: int = SIDE_WIDTH) -> list[str]:
    """Two answers as lines of one monospaced column each (printable ASCII, as inert() makes them), cut to `lines`."""
    a, b = answer_lines(left, lines, width), answer_lines(right, lines, width)
    return [f"{x:<{width}} | {y}".rstrip() for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b)))]


def markdown(summary: dict, images: dict, folder: str) -> str:
    """The report as Markdown, its figures linked from `folder`."""
    lines = []
    for i, (heading, blocks) in enumerate(sections(summary, images)):
        lines += [f"{'#' if i == 0 else '##'} {heading}", ""]
        for block in blocks:
            lines += _MARKDOWN[block[0]](block, images, folder)
    return "\n".join(lines)


def _md_side(block: tuple) -> list[str]:
    """Two answers side by side in a text fence longer than any run of backticks in them."""
    rows = side_by_side(block[2], block[4])
    head = f"{inert(block[1], SIDE_WIDTH, markup=False):<{SIDE_WIDTH}} | {inert(block[3], SIDE_WIDTH, markup=False)}"
    fence = "`" * max(3, 1 + max((len(run) for row in [head, *rows] for run in re.findall(r"`+", row)), default=0))
    return [fence + "text", head, "-" * len(head), *rows, fence, ""]


def _md_table(block: tuple) -> list[str]:
    """A Markdown table, a "|" in a cell escaped."""
    return (["| " + " | ".join(block[1]) + " |", "|" + "---|" * len(block[1])]
            + ["| " + " | ".join(cell.replace("|", "&#124;") for cell in row) + " |" for row in block[2]] + [""])


# Each block kind's Markdown lines: (block, images, folder) -> lines; a figure not drawn is left out.
_MARKDOWN: dict[str, Callable[[tuple, dict, str], list[str]]] = {
    "h3": lambda block, images, folder: [f"### {block[1]}", ""],
    "p": lambda block, images, folder: [block[1], ""],
    "quote": lambda block, images, folder: [f"> {block[1]}", ""],
    # the code as it is
    "case": lambda block, images, folder: [f"A failing case (of {inert(block[1])}):", "", *code_block(block[2], 600), ""],
    "pre": lambda block, images, folder: ["```python", block[1].rstrip("\n").replace("```", "'''"), "```", ""],
    "side": lambda block, images, folder: _md_side(block),
    "img": lambda block, images, folder: [f"![{images[block[1]][0]}]({folder}/{block[1]})", ""] if block[1] in images else [],
    "list": lambda block, images, folder: [f"- {item}" for item in block[1]] + [""],
    "table": lambda block, images, folder: _md_table(block),
}


def _inline(text: str) -> str:
    """Escaped text with **bold** (our own markup, around our own rule names) as <strong>."""
    parts = html.escape(text).split("**")
    return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))


def page(summary: dict, images: dict) -> str:
    """The report as one inert HTML page, its figures embedded."""
    from .sanitize import CSP

    body = []
    for i, (heading, blocks) in enumerate(sections(summary, images)):
        body.append(f"<h{1 if i == 0 else 2}>{html.escape(heading)}</h{1 if i == 0 else 2}>")
        body += [html_block for block in blocks for html_block in _HTML[block[0]](block, images)]
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            f"<title>{html.escape(summary['assignment'])}: class report</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _html_side(block: tuple) -> str:
    """Two answers side by side, each line inert as in the Markdown's block (wider: an HTML cell wraps nothing here,
    it scrolls)."""
    code = lambda text: html.escape("\n".join(answer_lines(text, SIDE_LINES, HTML_SIDE_WIDTH)))  # noqa: E731
    who = lambda sid: html.escape(inert(sid, SIDE_WIDTH, markup=False))  # noqa: E731
    return (f"<table><tr><th>{who(block[1])}</th><th>{who(block[3])}</th></tr>"
            f"<tr><td><pre>{code(block[2])}</pre></td><td><pre>{code(block[4])}</pre></td></tr></table>")


def _html_img(block: tuple, images: dict) -> list[str]:
    """A drawn figure as an embedded PNG; one not drawn is left out."""
    if block[1] not in images:
        return []
    alt, png = images[block[1]]
    return [f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"></p>']


def _html_table(block: tuple) -> str:
    """A table of escaped cells."""
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in block[2])
    return "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in block[1]) + f"</tr>{rows}</table>"


# Each block kind's HTML: (block, images) -> elements.
_HTML: dict[str, Callable[[tuple, dict], list[str]]] = {
    "h3": lambda block, images: [f"<h3>{html.escape(block[1])}</h3>"],
    "p": lambda block, images: [f"<p>{_inline(block[1])}</p>"],
    "quote": lambda block, images: [f"<blockquote>{html.escape(block[1])}</blockquote>"],
    # as the Markdown shows it
    "case": lambda block, images: [f"<p>A failing case (of {html.escape(inert(block[1], markup=False))}): "
                                   f"<code>{html.escape(inert(block[2], 600, markup=False))}</code></p>"],
    "pre": lambda block, images: [f"<pre>{html.escape(block[1])}</pre>"],
    "side": lambda block, images: [_html_side(block)],
    "img": _html_img,
    "list": lambda block, images: ["<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block[1]) + "</ul>"],
    "table": lambda block, images: [_html_table(block)],
}


def write_rules_csv(path: Path, report: dict, summary: dict) -> None:
    """One row per (student, TODO, rule): passed is 1 or 0, or empty where the TODO was not judged; left_blank is 1
    where the TODO was left as given (those rows are not in the rules' failure shares)."""
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "todo", "rule", "passed", "misconception", "left_blank"])
        for s in report["students"]:
            verdicts = {v["answer_id"]: v for v in s["verdicts"]}
            for column, task in summary["tasks"].items():
                v = verdicts.get(column)
                results = {r["name"]: r["passed"] for r in v["rules"]} if v and _judged(v) else {}
                mistake = (v.get("mistake") or {}).get("name", "") if v else ""
                left = str(int(blank(v))) if v and _judged(v) else ""
                for rule in task["rules"]:
                    passed = "" if rule not in results else str(int(results[rule]))
                    writer.writerow([csv_cell(inert(s["student_id"])), column, rule, passed, mistake, left])


def write(out: Path, report: dict) -> Path:
    """class-report.html, class-report.md (+ class-report/*.png) and rules.csv in `out`, from `report` (report.json)."""
    summary = summarize(report)
    images = figures(summary)
    folder = out / "class-report"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.png"):
        stale.unlink()
    for name, (_, png) in images.items():
        (folder / name).write_bytes(png)
    (out / "class-report.md").write_text(markdown(summary, images, folder.name), encoding="utf-8", errors="backslashreplace")
    (out / "class-report.html").write_text(page(summary, images), encoding="utf-8", errors="backslashreplace")
    write_rules_csv(out / "rules.csv", report, summary)
    return out / "class-report.html"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__)
        return 2
    out = Path(args[0])
    print(write(out, json.loads((out / "report.json").read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
