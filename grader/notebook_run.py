"""The feedback run: a submission executed top to bottom in a fork of the warm parent (grader/runner/warm.py).

One budget per notebook, not one per cell: each cell may use `cell_cpu` CPU seconds and `cell_timeout`
wall seconds before it is interrupted (SIGINT, from outside), and the whole notebook `feedback_wall` wall
seconds (the settings of grader/config.py, by their names there). Once a TODO has hung, the later cells that use it are not run into the same limit again:
neither when its grading already timed out (they are skipped up front), nor after the cell that hung
here. Every cell not run says so on the page, with the reason.

Which cells use a TODO is found statically: a later code cell uses TODO k when it names a function or
class that k's answer cell defines, or one defined by an answer that uses k, or k's label ("TODO k",
as `lab.require_todos` takes it). That may over-approximate; the page says when a cell was skipped.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
import threading
import time

import nbformat

from . import caches, definitions, editions
from .config import DEFAULTS
from .messages import Message
from .safe_text import inert
from .runner.limits import CPU_MARGIN, Limits
from .runner.warm import Warm
from .runner.watch import Watcher
from .sanitize import clean_output

GRACE = 2.0            # seconds a cell has to stop after SIGINT before the run is ended
LIMITS = Limits(memory_bytes=4 << 30)   # a feedback run's rlimits: IPython, pandas and plots need more memory


def defined_names(source: str) -> set[str]:
    """Top-level functions, classes and assigned names of a cell (empty if it does not parse)."""
    try:
        tree = definitions.parse(editions.strip_solution_marks(source))
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _uses(source: str, names: set[str], labels: set[str]) -> bool:
    return bool(definitions.words(source) & names) or any(re.search(re.escape(label) + r"\b", source) for label in labels)


def dependents(nb, answer_ids: list[str]) -> dict[int, list[int]]:
    """Answer cell index -> the later code cells that use it (directly or through another answer)."""
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    answers = {i: c for i, c in cells if editions.grade_id(c) in answer_ids}
    deps = {}
    for start, cell in answers.items():
        names, labels = set(defined_names(cell.source)), set(re.findall(r"TODO \d+", cell.source))
        found = []
        for index, other in cells:
            if index <= start or not _uses(other.source, names, labels):
                continue
            if index in answers:  # an answer that calls this one hangs with it (defining it costs nothing)
                names |= defined_names(other.source)
            else:
                found.append(index)
        deps[start] = found
    return deps


class CellLimits(Watcher):
    """Interrupts the running cell past its CPU or wall limit; ends the run past the budget or the grace."""

    def __init__(self, cell_cpu: float, cell_timeout: float, feedback_wall: float):
        self.cell_cpu, self.cell_timeout, self.feedback_wall = cell_cpu, cell_timeout, feedback_wall
        self.started = time.monotonic()
        self.current: tuple[int, float, float] | None = None   # (cell index, wall at start, cpu at start)
        self.cpu = 0.0
        self.interrupted_at: float | None = None
        self.interrupted: dict[int, str] = {}
        self.stopped: Message | None = None   # why the whole run was stopped, if it was

    def progress(self, line: bytes) -> bool:
        record = runner_record(line)
        if record is not None:
            self.record(record)
        return record is not None

    def record(self, record: dict) -> None:
        """A record of the cell runner (runner_record)."""
        if record["kind"] == "start":
            self.current, self.interrupted_at = (record["index"], time.monotonic(), self.cpu), None
        else:
            self.current, self.interrupted_at = None, None

    def tick(self, now: float, cpu: float) -> str | None:
        self.cpu = cpu
        if now - self.started > self.feedback_wall:
            self.stopped = Message("why_budget", {"seconds": f"{self.feedback_wall:g}"})
            return "kill"
        if self.current is None:
            return None
        index, wall0, cpu0 = self.current
        if self.interrupted_at is not None:
            if now - self.interrupted_at > GRACE:
                self.stopped = Message("why_no_stop", {"index": index})
                return "kill"
            return None
        if cpu - cpu0 > self.cell_cpu or now - wall0 > self.cell_timeout:
            limit = f"{self.cell_cpu:g} s of CPU time" if cpu - cpu0 > self.cell_cpu else f"{self.cell_timeout:g} s"
            self.interrupted[index] = f"ran past its limit of {limit} and was interrupted"
            self.interrupted_at = now
            return "interrupt"
        return None


STATUSES = ("ok", "error", "interrupted", "skipped")   # of a cell record (grader/runner/notebook.py)


def runner_record(line: bytes) -> dict | None:
    """A line of a feedback run's result pipe as a record of its cell runner (grader/runner/notebook.py: a cell's start,
    its end, the run's end), or None: only those are its progress, and anything else is read as nothing (_records)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("kind") not in ("start", "cell", "done"):
        return None
    if record["kind"] != "done" and (type(record.get("index")) is not int
                                     or record["kind"] == "cell" and record.get("status") not in STATUSES):
        return None
    return record


def todo_name(grade_id: str) -> str:
    """An answer cell as a student knows it: "TODO 4" for todo4 (another id as it is)."""
    match = re.fullmatch(r"todo(\d+)", grade_id or "")
    return f"TODO {match[1]}" if match else grade_id


def _label(nb, index: int, short: bool = False) -> str:
    """How notes name a cell: its grade_id, or its index and first line (both the student's: made inert)."""
    cell = nb.cells[index]
    if editions.grade_id(cell):
        return inert(editions.grade_id(cell), 64)
    first = cell.source.lstrip()[:200].split("\n", 1)[0]
    return f"cell {index}" if short else f"cell {index} ({inert(first, 40)})"


def unused_later(nb, index: int) -> bool:
    """True when no later code cell names anything cell `index` binds at top level (an import, a loop variable too),
    so not running it changes no other cell; a cell that does not parse is run."""
    try:
        names = definitions.bound(definitions.parse(editions.strip_solution_marks(nb.cells[index].source)))
    except (SyntaxError, ValueError):
        return False
    return not any(_uses(c.source, names, set()) for c in nb.cells[index + 1:] if c.cell_type == "code")


# Figures the release's worked examples draw before the first answer cell, by the release's code cells up to
# each one: in a fresh kernel they are the same for every submission that has those cells, so each is drawn once
# per process and reused (the run leaves the cell out). Only a cell that draws and binds nothing a later cell reads.
_DRAWN: dict[tuple[str, ...], list[dict]] = {}
_DRAWN_LOCK = threading.Lock()
# Figures a run in flight is drawing: a run that can reuse one waits for it (DRAW_WAIT s at most), instead of drawing
# it too (the class's first runs start together). It is stored as soon as its cell reports (Publishing).
_DRAWING: dict[tuple[str, ...], threading.Event] = {}
DRAW_WAIT = 5.0
READS_ALL = {"globals", "locals", "vars", "eval", "exec", "dir", "get_ipython", "__import__", "__main__", "modules"}


def forget() -> None:
    """Draw every figure again (a fresh grader reuses nothing); a run still waiting for a figure draws it itself."""
    with _DRAWN_LOCK:
        _DRAWN.clear()
        events = list(_DRAWING.values())
        _DRAWING.clear()
    for event in events:
        event.set()


caches.register("_DRAWN", "the release's code cells up to the figure's cell (their sources, in order)",
                "in a fresh kernel those cells draw the same figure for every submission that has them; kept only for a "
                "cell that draws and binds nothing a later cell reads. forget() also wakes the runs waiting in _DRAWING", forget)


def release_prefix(release, answer_ids: list[str]) -> tuple[str, ...]:
    """The sources of the release's code cells before its first answer cell."""
    prefix = []
    for cell in release.cells:
        if editions.grade_id(cell) in answer_ids:
            break
        if cell.cell_type == "code":
            prefix.append(cell.source)
    return tuple(prefix)


def unread_later(nb, index: int) -> bool:
    """True when cell `index` only binds names (assignments of a call, calls, imports: no attribute set, no del)
    and no other code cell can read one of them after it: a later cell before binding it again itself, or a
    function of any cell. A cell that does not parse, or that reads names indirectly (globals(), eval, ...), reads
    them all. (A cell whose new binding raises before it is made would read the old value: the page shows a
    NameError there instead.)"""
    tree = _tree(nb.cells[index].source)
    if tree is None or not _only_binds(tree):
        return False
    names = definitions.bound(tree)
    return not _read_by_a_function(nb.cells[:index], names) and not _read_later(nb.cells[index + 1:], names)


def _read_by_a_function(cells: list, names: set[str]) -> bool:
    """Can a function defined in one of `cells` read one of `names` (when a later cell calls it)? A code cell that
    names them or reads names indirectly, and does not parse, may."""
    for cell in cells:
        if cell.cell_type != "code" or not _uses(cell.source, names | READS_ALL, set()):
            continue
        earlier = _tree(cell.source)
        if earlier is None or any(_reads(n, names) for n in ast.walk(earlier)
                                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))):
            return True
    return False


def _read_later(cells: list, names: set[str]) -> bool:
    """Does one of `cells` (those after the cell, in order) read one of `names` before binding it again itself? A code
    cell that names them and does not parse may."""
    names = set(names)   # each name bound again is taken out as the cells go
    for cell in cells:
        if not names:
            return False
        if cell.cell_type != "code" or not _uses(cell.source, names | READS_ALL, set()):
            continue
        later = _tree(cell.source)
        if later is None:
            return True
        for node in later.body:
            if _reads(node, names):
                return True
            if isinstance(node, ast.Assign):   # bound again before any read: what the cell bound is gone
                names -= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return False


def _tree(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None if it does not parse (a magic, a typo)."""
    try:
        return definitions.parse(source)
    except (SyntaxError, ValueError):
        return None


def _only_binds(tree: ast.Module) -> bool:
    """Assignments to plain names, bare expressions and imports: no attribute or item set, no del, no loop."""
    return all(all(isinstance(t, ast.Name) for t in node.targets) if isinstance(node, ast.Assign)
               else isinstance(node, (ast.Expr, ast.Import, ast.ImportFrom)) for node in tree.body)


def _reads(node: ast.AST, names: set[str]) -> bool:
    """Does `node` read one of `names`, or read names indirectly?"""
    loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    loads |= {n.target.id for n in ast.walk(node) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    return bool(loads & (names | READS_ALL)) or any(isinstance(n, ast.Attribute) and n.attr in READS_ALL for n in ast.walk(node))


def _only_draws(outputs: list[dict]) -> bool:
    return bool(outputs) and all(o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in outputs)


Claim = tuple[tuple[str, ...], threading.Event]   # a figure's key, and the event its waiters wait on


def _drawn(nb, code: list[int], prefix: tuple[str, ...], skip: dict[int, str]) -> tuple[dict[int, Claim], dict[int, list[dict]]]:
    """({index: claim} of the leading code cells that are the release's own and not drawn yet, which this run claims
    (release them with _done_drawing), {index: outputs} of those to reuse, once drawn by a run in flight if need be).
    The chain stops at a cell left out for another reason (`skip`): the cells after it do not run as in the release."""
    keys = _release_keys(nb, code, prefix, skip)
    usable = {index: key for index, key in keys.items() if unread_later(nb, index)}
    with _DRAWN_LOCK:
        pending = {_DRAWING[key] for key in usable.values() if key not in _DRAWN and key in _DRAWING}
        mine = {index: (key, threading.Event()) for index, key in keys.items() if key not in _DRAWN and key not in _DRAWING}
        _DRAWING.update(mine.values())
    deadline = time.monotonic() + DRAW_WAIT
    for event in pending:   # claimed by runs that wait for none of this run's claims: no cycle
        event.wait(max(0.0, deadline - time.monotonic()))
    with _DRAWN_LOCK:   # never changed once stored: each page gets its own nodes (nbformat.from_dict)
        reuse = {index: _DRAWN[key] for index, key in usable.items() if key in _DRAWN}
    return mine, reuse


def _release_keys(nb, code: list[int], prefix: tuple[str, ...], skip: dict[int, str]) -> dict[int, tuple[str, ...]]:
    """{index: the release's code cells up to it} of the leading code cells (`code`) that are the release's own
    (`prefix`), up to the first that is not or is left out (`skip`)."""
    keys = {}
    for position, index in enumerate(code):
        if position >= len(prefix) or nb.cells[index].source != prefix[position] or index in skip:
            break
        keys[index] = prefix[: position + 1]
    return keys


def _release(claim: Claim) -> None:
    """Wake the runs waiting on this claim; the key is free again, unless another run has claimed it since."""
    key, event = claim
    with _DRAWN_LOCK:
        if _DRAWING.get(key) is event:
            del _DRAWING[key]
    event.set()


def _store_drawn(claim: Claim, rec: dict) -> None:
    """Keep a worked example's figure (a checked record, _checked), if that is all its cell showed; wake its waiters."""
    with _DRAWN_LOCK:   # the records are this run's own: nothing else holds them
        if rec["status"] == "ok" and _only_draws(rec["outputs"]):
            _DRAWN.setdefault(claim[0], rec["outputs"])
    _release(claim)


def _done_drawing(claimed: dict[int, Claim]) -> None:
    """Release what a run claimed and did not draw (it failed, or ended early): its waiters draw it themselves."""
    for claim in claimed.values():
        _release(claim)


class Publishing(Watcher):
    """CellLimits, and each claimed figure stored as soon as its cell reports, so that the runs waiting for it go on."""

    def __init__(self, limits: CellLimits, claimed: dict[int, Claim], code: set[int]):
        self.limits, self.claimed, self.code, self.seen = limits, claimed, code, set()

    def progress(self, line: bytes) -> bool:
        record = runner_record(line)
        if record is None:
            return False
        self.limits.record(record)
        index = record.get("index")
        if index not in self.claimed or index in self.seen:
            return True
        rec = _checked(record, self.code)
        if rec is not None:
            self.seen.add(index)   # a release cell before any answer: no student code has run yet
            if index not in self.limits.interrupted:
                _store_drawn(self.claimed[index], rec)
        return True

    def tick(self, now: float, cpu: float) -> str | None:
        return self.limits.tick(now, cpu)


def execute(warm: Warm, nb, answer_ids: list[str], hung: set[str] | frozenset[str] = frozenset(), *, unneeded: frozenset[str] = frozenset(),
            prefix: tuple[str, ...] = (), cell_cpu: float = DEFAULTS.cell_cpu, cell_timeout: float = DEFAULTS.cell_timeout,
            feedback_wall: float = DEFAULTS.feedback_wall, language: str = "en") -> list[str]:
    """Run `nb` in place (outputs filled in); `hung`: grade_ids of the answers known to hang (graded past their time
    limit); `unneeded`: grade_ids of cells whose outputs the page replaces anyway, left out (without a note) when no later cell uses them;
    `prefix`: release_prefix() of the release: a figure of its worked examples is drawn once per process (_DRAWN).

    A cell not run says why in `language` (the page's); the notes returned, one per cell that was interrupted or
    not run, are in English (report.md)."""
    deps = dependents(nb, answer_ids)
    skip, quiet = _left_out(nb, deps, hung, unneeded)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    claimed, reused = _drawn(nb, code, prefix, skip)
    try:
        numbers = _numbers(code, skip)
        skip.update({i: "" for i in reused})
        payload = _payload(nb, code, skip, deps, numbers, reused)
        limits = CellLimits(cell_cpu, cell_timeout, feedback_wall)
        run_limits = dataclasses.replace(LIMITS, wall=feedback_wall + 2 * GRACE, cpu_seconds=int(feedback_wall) + CPU_MARGIN)
        done = warm.run("notebook", payload, run_limits, watcher=Publishing(limits, claimed, set(code)))
    finally:
        _done_drawing(claimed)
    records = _records(done.output, set(code))
    labels = set(payload["labels"].values())
    notes, not_run = [], {}
    for index in code:
        cell, rec = nb.cells[index], records.get(index)
        if index in quiet:
            cell.outputs, cell.execution_count = [], None
        elif index in reused:
            cell.outputs, cell.execution_count = [nbformat.from_dict(o) for o in reused[index]], numbers[index]
        elif rec is None or rec["status"] == "skipped":
            why = skip.get(index) or _why(rec, limits, done.timed_out, labels)
            cell.outputs, cell.execution_count = [_note(why, language)], None
            not_run.setdefault(f"not run: {why}", []).append(_label(nb, index, short=True))
        else:
            _show_ran(cell, rec, numbers[index])
            if index in limits.interrupted:
                notes.append(f"{_label(nb, index)} {limits.interrupted[index]}")
    # One note per reason, naming the cells: "todo1_tests, todo3_tests, cell 28 not run: todo1 ran past ..."
    return notes + [f"{', '.join(cells)} {why}" for why, cells in not_run.items()]


def _left_out(nb, deps: dict[int, list[int]], hung: set[str] | frozenset[str],
              unneeded: frozenset[str]) -> tuple[dict[int, Message | str], set[int]]:
    """The cells left out before the run, {index: why ('' for none the page shows)}: those that use a TODO known to
    hang, and the `unneeded` answer cells no later cell uses (also returned on their own: their outputs are emptied)."""
    by_gid = {editions.grade_id(c): i for i, c in enumerate(nb.cells) if editions.grade_id(c)}
    skip: dict[int, Message | str] = {}
    for gid in hung or {}:
        for later in deps.get(by_gid.get(gid, -1), []):
            skip.setdefault(later, Message("why_uses_graded_hang", {"todo": todo_name(gid)}))
    quiet = {i for gid, i in by_gid.items()
             if gid in unneeded and i not in skip and nb.cells[i].cell_type == "code" and unused_later(nb, i)}
    skip.update({i: "" for i in quiet})
    return skip, quiet


def _numbers(code: list[int], skip: dict[int, Message | str]) -> dict[int, int]:
    """{index: its number} of the code cells not left out."""
    # Numbered as if every cell not left out ran: a reused figure keeps its number, and a traceback names the same.
    return {i: n for n, i in enumerate([i for i in code if i not in skip], 1)}


def _payload(nb, code: list[int], skip: dict[int, Message | str], deps: dict[int, list[int]], numbers: dict[int, int],
             reused: dict[int, list[dict]]) -> dict:
    """What the child runs: the code cells, which to leave out (True: with the page's note), which cells use each
    answer and its name, and each cell's number (a reused figure's cell is not run, so it gets none)."""
    return {"cells": [{"index": i, "source": nb.cells[i].source} for i in code],
            "skip": {str(i): bool(why) for i, why in skip.items()}, "deps": {str(i): later for i, later in deps.items()},
            "labels": {str(i): todo_name(editions.grade_id(nb.cells[i])) for i in deps},
            "counts": {str(i): n for i, n in numbers.items() if i not in reused}}


def _show_ran(cell, rec: dict, number: int) -> None:
    """A cell that ran shows its outputs (cleaned) and its number, as its result does."""
    cell.outputs = [nbformat.from_dict(o) for o in rec["outputs"]]
    cell.execution_count = number
    for output in cell.outputs:   # the kernel was given the same number (payload "counts")
        if output.get("output_type") == "execute_result":
            output.execution_count = number


def _why(rec: dict | None, limits: CellLimits, timed_out: bool, labels: set[str]) -> Message:
    """Why a cell did not run: the run stopped before it (no record), or the child left it out because a cell it
    uses ran past its time limit in this run (the child names that cell; any other name is not shown)."""
    if rec is None:
        return limits.stopped or Message("why_stopped" if timed_out else "why_ended")
    uses = rec.get("why", {}).get("uses") if isinstance(rec.get("why"), dict) else None
    named = uses in labels or (isinstance(uses, str) and re.fullmatch(r"cell \d+", uses) is not None)
    return Message("why_uses_hang", {"todo": uses}) if named else Message("why_ended")


def _note(why: Message, language: str):
    """The output a cell not run shows on the page, in `language`."""
    return nbformat.v4.new_output("stream", name="stdout", text=Message("skipped_cell", {"why": why}).text(language) + "\n")


def _records(output: bytes, code: set[int]) -> dict[int, dict]:
    """The cell records the run sent, checked for shape (outputs are cleaned later by grader/sanitize.py).

    A cell's record is taken only where it closes that cell's own start record at the outermost level; a skipped
    cell's record (the runner writes no start for it) only between cells. Student code runs inside its cell's window,
    between the runner's start and cell records, so whatever records it writes there are nested in that window and
    taken for nothing: a scratch cell that forges records for later cells does not replace theirs. (A cell that
    first forges the end of its own window writes at the outer level; the last window of a cell then wins, so a later
    cell's own window, which the runner opens after it, replaces the forgery. What such a cell forges for an earlier
    cell stands: it garbles only its own student's page, as rewriting that cell's code would.)"""
    found: dict[int, dict] = {}
    opened: list[int] = []   # start records not yet closed, innermost last
    for line in output.split(b"\n"):
        raw = runner_record(line)   # the same reading as the run's progress
        if raw is not None and raw["kind"] == "start":
            opened.append(raw["index"])
            continue
        rec = _checked(raw, code)
        if rec is None:
            continue
        if rec["status"] == "skipped":
            if not opened:
                found[rec["index"]] = rec
        elif rec["index"] in opened:
            del opened[len(opened) - 1 - opened[::-1].index(rec["index"]):]   # starts left open inside it end with it
            if not opened:
                found[rec["index"]] = rec
    return found


def _checked(rec: dict | None, code: set[int]) -> dict | None:
    """A cell record (runner_record) of one of `code`'s cells, with its outputs cleaned (a new dict), or None if it is
    not one."""
    if rec is None or rec["kind"] != "cell" or rec["index"] not in code:
        return None
    outputs = rec.get("outputs") if isinstance(rec.get("outputs"), list) else []
    return {**rec, "outputs": [clean_output(o) for o in outputs[:200] if isinstance(o, dict)]}
