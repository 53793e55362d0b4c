"""The one watcher of a sandboxed run: its protocol's records as progress, its wall, stall and idle limits, its CPU and wait.

Both runners (grader/runner/cold.py, warm.py) hand it the run's result pipe, how to list the run's processes,
how to tell that it ended and how to kill it; it reads the records, checks the limits from outside (from
/proc, which the run cannot touch), calls the caller's Watcher hooks, and says how the run ended.
"""
from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from dataclasses import dataclass

from .limits import Limits

CHECK_EVERY = 0.25   # seconds between two reads of /proc: a scan per record would cost more than the run


@dataclass
class Finished:
    """How a sandboxed run ended, and what it wrote."""

    returncode: int | None
    timed_out: bool
    output: bytes = b""          # what it wrote to the result pipe
    stderr: bytes = b""
    why: str = ""                # "" | "wall" | "stall" (CPU without progress) | "idle" (wall time without progress) | "watcher"
    cpu: float = 0.0             # CPU seconds its processes (and its watcher's extra ones) had used, as last read
    waited: float = 0.0          # seconds they were ready to run but waited for a CPU: how loaded the machine was
    elapsed: float = 0.0         # wall seconds it ran


class Watcher:
    """Hooks a caller can give a run: its start, each line of its result pipe as it arrives, and a periodic check."""

    def on_start(self, members) -> None:
        """The run has started; `members()` lists its processes (host pids)."""

    def extra_pids(self) -> list[int]:
        """Processes outside the run whose CPU counts as the run's in its no-progress limit."""
        return []

    def progress(self, line: bytes) -> bool:
        """Each line the run writes to its result pipe (its newline stripped; not a blank one), in order: whether it
        is progress, a record of the run's own protocol in its place. Only the caller knows that protocol (a grading
        child's: protocol.py; a feedback run's: grader/notebook_run.py); a JSON object is no more than noise (a run
        that wrote {} every 0.2 s held a worker for the whole wall limit), so here nothing is."""
        return False

    def tick(self, now: float, cpu: float) -> str | None:
        """None to go on, 'interrupt' to send SIGINT to the run, 'kill' to end it."""
        return None


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of these processes and of their reaped children, read from /proc (outside their control)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            ticks += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


class Usage:
    """CPU time and run-queue wait of a run's processes, read from /proc (outside their control)."""

    def __init__(self):
        self.waits: dict[int, int] = {}

    def read(self, pids: list[int]) -> float:
        """CPU seconds of `pids` (and their reaped children); notes how long each waited for a CPU so far."""
        for pid in pids:
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{pid}/schedstat", "rb") as handle:
                self.waits[pid] = max(self.waits.get(pid, 0), int(handle.read().split()[1]))
        return cpu_seconds(pids)

    @property
    def waited(self) -> float:
        """The longest any one of them waited: a run's own crowd of processes queueing behind each other is not a
        busy machine (200 forks that each wait a little summed to minutes, and made a wrong answer a grading fault)."""
        return max(self.waits.values(), default=0) / 1e9


# --- a run's processes ------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    found = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as handle:
                found += [int(c) for c in handle.read().split()]
    return found


def tree(root: int) -> list[int]:
    """`root` and its descendants (host pids)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children(pid)
    return found[1:] if not os.path.exists(f"/proc/{root}") else found


def inside(root: int) -> list[int]:
    """The descendants of bwrap process `root` that are not bwrap's own: the run's processes, which a signal meant
    for the run may reach (SIGINT to bwrap itself would end the whole sandbox)."""
    found = []
    for pid in tree(root):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/comm", "rb") as handle:
            if handle.read().strip() != b"bwrap":
                found.append(pid)
    return found


def group_of(pgid: int) -> list[int]:
    """Every process of a process group (a scan of /proc)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ProcessLookupError):
                if os.getpgid(int(entry.name)) == pgid:
                    found.append(int(entry.name))
    return found


def kill_tree(root: int) -> None:
    """SIGKILL `root` and every descendant, then wait (5 s at most) until none is left. At level "userns" a run's
    processes all sit in a pid namespace whose first process is among them (or dies with `root`: boot.py), and the
    kernel ends a namespace with its first process: nothing the run started outlives this."""
    pids = tree(root)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if not any(_alive(pid) for pid in pids):
            return
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def feed(fd: int, data: bytes) -> None:
    """Write `data` to `fd` and close it (in a thread: the run reads it when it likes, or never)."""
    with contextlib.suppress(OSError), os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


FULL = "full"   # what the reader queues once the run has written its limits.result_bytes or result_lines


def _read_lines(fd: int, lines: queue.Queue, cap: int, max_lines: int) -> None:
    """Each line of the pipe, then None at its end, or FULL once it has brought `cap` bytes or `max_lines` lines (the
    run ends there: 64 MiB of two-byte lines took 1.2 GB of the grader's memory in the queue)."""
    total = count = 0
    with os.fdopen(fd, "rb") as pipe:
        for line in pipe:
            total, count = total + len(line), count + 1
            if total > cap or count > max_lines:
                lines.put(FULL)
                return
            lines.put(line)
    lines.put(None)


# --- the watch --------------------------------------------------------------------------------

def watch(result_fd: int, members, kill, limits: Limits, watcher: Watcher, exited=None) -> Finished:
    """Read the run's records from `result_fd` and stop it at the first limit it passes; returns how it ended.

    Only what the watcher calls progress (Watcher.progress: a record of the run's protocol) is. `members()` lists the
    run's processes; `kill()` ends them all. The run has ended when its result pipe closes or passes
    `limits.result_bytes`, or, given `exited` (a cold run, whose last records may follow), when `exited(seconds)`,
    which may wait that long for the run's own process, says so."""
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(result_fd, lines, limits.result_bytes, limits.result_lines),
                              daemon=True)
    reader.start()
    out, usage = bytearray(), Usage()
    started = time.monotonic()
    why, eof, full, cpu = _until_it_ends(lines, out, usage, started, members, limits, watcher, exited)
    if why or exited is not None:  # a cold run is ended with all it started; a warm one by its runner's sweep
        kill()
    if exited is not None and not full:  # a cold run's last records may still be in the pipe
        reader.join(timeout=5)
        while not lines.empty():
            line = lines.get_nowait()
            if line and line is not FULL:
                _take(line, out, watcher)   # shown to the watcher too, whose protocol has then read all of `out`
    return Finished(0 if eof and not why else None, bool(why), bytes(out), b"", why, cpu, usage.waited, time.monotonic() - started)


EXITED = "exited"   # what _next_line gives once a cold run's process has exited after its pipe closed


def _until_it_ends(lines: queue.Queue, out: bytearray, usage: Usage, started: float, members, limits: Limits,
                   watcher: Watcher, exited) -> tuple[str, bool, bool, float]:
    """Takes the run's lines into `out` until it ends or passes a limit: (why it was stopped or "", whether its pipe
    closed, whether it passed limits.result_bytes, its CPU seconds at the last check)."""
    last = checked = started
    cpu, cpu_at_progress, why, eof, full, fresh = 0.0, 0.0, "", False, False, False
    while not why:
        line = _next_line(lines, eof, exited)
        if line is EXITED:
            break
        eof, full = eof or line is None or line is FULL, full or line is FULL
        now = time.monotonic()
        if line and line is not FULL and _take(line, out, watcher):
            last, fresh = now, True
        if full or _ended(eof, exited):
            break
        if now - checked < CHECK_EVERY and now - started <= limits.wall:
            continue
        checked, cpu = now, usage.read(members() + watcher.extra_pids())
        if fresh:
            cpu_at_progress, fresh = cpu, False
        why = _limit_passed(limits, now - started, cpu - cpu_at_progress, now - last) or _ask(watcher, now, cpu, members)
    return why, eof, full, cpu


def _next_line(lines: queue.Queue, eof: bool, exited):
    """The reader's next line (b"" when none came within 0.1 s); once a cold run's pipe has closed, b"" while its
    process runs and EXITED once it has exited."""
    if eof and exited is not None:   # a cold run's pipe has closed: wait for its process instead
        return EXITED if exited(0.1) else b""
    try:
        return lines.get(timeout=0.1)
    except queue.Empty:
        return b""


def _ended(eof: bool, exited) -> bool:
    """Whether the run has ended: a cold run's process has exited, a warm run's pipe has closed."""
    return exited(0) if exited is not None else eof


def _take(line: bytes, out: bytearray, watcher: Watcher) -> bool:
    """Adds a line to `out`; whether the watcher calls it progress (a blank line never is, and is not shown)."""
    out += line
    line = line[:-1] if line.endswith(b"\n") else line
    return bool(line.strip()) and watcher.progress(line)


def _limit_passed(limits: Limits, ran: float, cpu_since_progress: float, idle: float) -> str:
    """The first of the wall, stall and idle limits the run has passed, or ""."""
    if ran > limits.wall:
        return "wall"
    if limits.stall is not None and cpu_since_progress > limits.stall:
        return "stall"
    if limits.idle is not None and idle > limits.idle:
        return "idle"
    return ""


def _ask(watcher: Watcher, now: float, cpu: float, members) -> str:
    """The watcher's word on the run: "watcher" when it says to kill it, "" otherwise (after interrupting the run's
    processes if it says so)."""
    action = watcher.tick(now, cpu)
    if action == "interrupt":
        for pid in members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGINT)
    return "watcher" if action == "kill" else ""
