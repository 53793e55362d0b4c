"""A grading child as the grader sees it: the exact records it may send, how its run ended, and its reference server.

The child (grader/runner/child.py) and the bridge to its reference server (bridge.py) are sent as text into the
sandbox; this module runs them through a runner (cold.py or warm.py) and reads what comes back. A child runs
student code, so everything it writes is hostile until Protocol has checked it: its observations are decoded
with their Python types (grader/observed.py) and bounded (grader/child_values.py).
"""
from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import select
import struct
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..messages import Message
from ..observed import CHILD_ENDINGS, INVALID, Malformed, NoValue, decode_hook
from ..child_values import MAX_LINE, MAX_STRING, error_name, problem
from .cold import Cold
from .feed import Fed, Feeder
from .limits import Limits
from .watch import Finished, Watcher

BRIDGE_SOURCE = Path(__file__).with_name("bridge.py").read_text()
# A grading child: its own CPU alarm can be cancelled, so 10 CPU seconds without a record end it; a sleep uses no
# CPU, so 60 wall seconds without one do too (honest children report in milliseconds).
CHILD = Limits(wall=120.0, stall=10.0, idle=60.0)
SERVER_GRACE = 1.0   # wall seconds a reference server has to end by itself once its grading child has ended


class Protocol:
    """The exact record sequence of one child: cells, then each named scenario in order, then done."""

    def __init__(self, cell_ids: list[str], names: list[str], known: dict[str, tuple[bytes, object]] | None = None):
        self.cell_ids, self.names = set(cell_ids), names
        self.known = known or {}   # scenario name -> (the reference's record line, its observation): see expected_lines
        self.records: list[dict] = []
        self.lines: dict[str, bytes] = {}   # scenario name -> the line its record came in (see expected_lines)
        self.error: Message | str = ""   # what the child wrote that is not the protocol ('': nothing yet)

    @property
    def finished(self) -> bool:
        return bool(self.records) and self.records[-1]["kind"] == "done"

    def feed(self, line: bytes) -> bool:
        """Accept one line; False (with self.error) stops the channel for good."""
        if self.error:
            return False
        self.error = self._check(line)
        return not self.error

    def _check(self, line: bytes) -> Message | str:
        if self.finished:
            return Message("record_after_end")
        if len(line) > MAX_LINE:
            return Message("record_too_long", {"size": len(line)})
        done = len(self.records)
        if 0 < done <= len(self.names) and self.known.get(self.names[done - 1], (None,))[0] == line:
            name = self.names[done - 1]   # byte for byte the reference's record: trusted as it is, nothing to check
            self.records.append({"kind": "scenario", "name": name, "obs": self.known[name][1]})
            self.lines[name] = line
            return ""
        malformed = ""
        try:
            try:
                record = json.loads(line, object_hook=decode_hook)
            except Malformed as exc:   # a tag the encoder never writes: the record may still be in its place
                record, malformed = json.loads(line), Message(exc.key, exc.params)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return Message("record_unreadable")
        if type(record) is not dict:
            return Message("record_malformed")
        if done == 0:
            return Message("record_cells_malformed") if malformed else self._cells(record)
        if done <= len(self.names):
            found = self._scenario(record, self.names[done - 1], malformed)
            if not found:
                self.lines[self.names[done - 1]] = line
            return found
        if record != {"kind": "done"}:
            return Message("record_not_end")
        self.records.append(record)
        return ""

    def _cells(self, record: dict) -> Message | str:
        errors = record.get("errors")
        if set(record) != {"kind", "errors"} or record["kind"] != "cells" or type(errors) is not dict \
                or not set(errors) <= self.cell_ids:
            return Message("record_cells_malformed")
        self.records.append({"kind": "cells", "errors": {k: error_name(v) for k, v in errors.items()}})
        return ""

    def _scenario(self, record: dict, name: str, malformed: Message | str = "") -> Message | str:
        """A scenario's record: its value ("obs"), or how it gave none ("ended": [how, detail]); either way the record
        kept holds "obs", the value or a NoValue (grader/observed.py)."""
        fields = set(record) - {"kind", "name"}
        if fields not in ({"obs"}, {"ended"}) or record["kind"] != "scenario" or record["name"] != name:
            return Message("record_not_scenario")
        if "ended" in record:
            ended = record["ended"]
            if malformed or type(ended) is not list or len(ended) != 2 or ended[0] not in CHILD_ENDINGS \
                    or type(ended[1]) is not str or len(ended[1]) > MAX_STRING:
                return Message("record_end_malformed")
            self.records.append({"kind": "scenario", "name": name, "obs": NoValue(*ended)})
            return ""
        why = malformed or problem(record["obs"])
        obs = record["obs"] if not why else NoValue(INVALID, why)
        self.records.append({"kind": "scenario", "name": name, "obs": obs})
        return ""


@dataclass
class ChildRun:
    """What a grading child reported, and how it ended."""

    records: list[dict] = field(default_factory=list)
    status: str = "ok"          # ok | timeout | crashed | garbled
    detail: Message | str = ""  # how it ended, when not cleanly ('' when it did)
    why: str = ""               # the limit that stopped it (Finished.why)
    lines: dict[str, bytes] = field(default_factory=dict)   # scenario name -> the line its record came in
    cpu: float = 0.0            # CPU seconds it (and its reference server) used
    waited: float = 0.0         # seconds it waited for a CPU while ready to run
    elapsed: float = 0.0        # wall seconds it ran
    fed: dict[str, Fed] = field(default_factory=dict)   # scenario name -> the replies its feed received (feed.py)


def expected_lines(run: ChildRun) -> dict[str, tuple[bytes, object]]:
    """The line the reference's child wrote for each of its observations, and the observation as decoded: a student's
    line equal to it byte for byte is taken without parsing, checking or comparing. The line itself, not the
    observation written again: JSON writes a tuple as a list, and the tags that tell them apart are the child's."""
    observed = {rec["name"]: rec["obs"] for rec in run.records if rec.get("kind") == "scenario"}
    return {name: (line, observed[name]) for name, line in run.lines.items() if name in observed}


def run_child(payload: dict, limits: Limits = CHILD, runner=None, *, bridge_fds: tuple[int, int] = (),
              watcher: Watcher | None = None, known: dict[str, tuple[bytes, object]] | None = None,
              feeds: dict[str, dict] | None = None) -> ChildRun:
    """Run grader/runner/child.py on `payload` in the sandbox; never raises for anything the child does.

    `runner`: a warm.Warm to fork the run from (default: a cold run, a fresh interpreter).
    `bridge_fds`: the run's end of the bridge to its reference server (bridge.py); `watcher`: see Pair;
    `known`: expected_lines() of the reference's observations; `feeds`: scenario name -> the items its scenario
    reads one at a time from this process (feed.py), never in the payload; what they received is the run's `fed`."""
    feeder = Feeder(feeds) if feeds else None
    protocol = Protocol([gid for gid, _ in payload["cells"]], [sc["name"] for sc in payload["scenarios"]], known)
    try:
        done = (runner or Cold()).run("grade", payload, limits, watcher=Reading(protocol, watcher), bridge_fds=bridge_fds,
                                      **({"feed_fds": feeder.child_fds} if feeder else {}))
    finally:
        fed = feeder.close() if feeder else {}
    run = _child_run(done, protocol, limits)   # the protocol has read every line of the output as it came
    run.fed = fed
    return run


class Reading(Watcher):
    """A grading child's records read by its Protocol as they arrive, around the caller's watcher (or none): a line is
    progress only where the protocol takes it, a record of its own kind in its place. The first line it refuses has
    garbled the run whatever follows (parse_child_output reads no further), so the run is ended there."""

    def __init__(self, protocol: Protocol, watcher: Watcher | None = None):
        self.protocol, self.watcher = protocol, watcher or Watcher()

    def on_start(self, members) -> None:
        self.watcher.on_start(members)

    def extra_pids(self) -> list[int]:
        return self.watcher.extra_pids()

    def progress(self, line: bytes) -> bool:
        return self.protocol.feed(line)

    def tick(self, now: float, cpu: float) -> str | None:
        return "kill" if self.protocol.error else self.watcher.tick(now, cpu)


def parse_child_output(done: Finished, protocol: Protocol, limits: Limits) -> ChildRun:
    """A finished run's output read by `protocol` (a fresh one), and how the run ended."""
    for line in done.output.split(b"\n"):
        if line.strip() and not protocol.feed(line):
            break
    return _child_run(done, protocol, limits)


def _child_run(done: Finished, protocol: Protocol, limits: Limits) -> ChildRun:
    run = ChildRun(protocol.records, lines=protocol.lines, why=done.why, cpu=done.cpu, waited=done.waited, elapsed=done.elapsed)
    if protocol.error:
        run.status, run.detail = "garbled", Message("run_wrote", {"what": protocol.error})
    elif done.timed_out:
        run.status = "timeout"
        limit = {"wall": limits.wall, "stall": limits.stall, "idle": limits.idle}.get(done.why)   # only the limit that fired is set
        if limit is None:   # the watcher (a Pair's) ended it; any other why is shown as it is
            run.detail = Message("run_stopped_watcher") if done.why == "watcher" else Message("run_stopped", {"why": done.why})
        else:
            key, number = {"wall": ("run_stopped_after", "{:.0f}"), "stall": ("run_no_progress_cpu", "{:g}"),
                           "idle": ("run_no_progress", "{:g}")}[done.why]
            run.detail = Message(key, {"seconds": number.format(limit)})
    elif not protocol.finished:
        run.status, run.detail = "crashed", Message("run_ended_early", {"code": done.returncode})
    return run


def run_pair(child: dict, server: dict, limits: Limits = CHILD, runner=None,
             known: dict[str, tuple[bytes, object]] | None = None, feeds: dict[str, dict] | None = None) -> tuple[ChildRun, ChildRun]:
    """A grading child and its reference server, bridged and watched as one run (see Pair); returns both runs.

    The server starts when the child first writes to the bridge (its first call of another TODO's function), so a
    child that calls none (a TODO whose scenarios use only its own functions and lab) never has one: its run and its
    verdict are those a server beside it would have given, since nothing reached it. The server gets no limit of its
    own on progress (its CPU counts as the child's) and a wall limit past the child's. `feeds` are the child's (run_child);
    the server gets none."""
    to_server, from_server, woken = os.pipe(), os.pipe(), os.pipe()
    pair, served = Pair(), []
    server_limits = dataclasses.replace(limits, wall=limits.wall + 10 * SERVER_GRACE, stall=None, idle=None)

    def serve() -> None:
        ready, _, _ = select.select([to_server[0], woken[0]], [], [])
        if woken[0] in ready or not _pending(to_server[0]):   # the child ended (its end closed) without a call: no server
            os.close(to_server[0])
            os.close(from_server[1])
            served.append(ChildRun(status="ok", detail=Message("server_not_needed")))
            return
        served.append(run_child(server, server_limits, runner, bridge_fds=(to_server[0], from_server[1]), watcher=pair.server))

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        run = run_child(child, limits, runner, bridge_fds=(from_server[0], to_server[1]), watcher=pair.child, known=known,
                        feeds=feeds)
    finally:
        pair.child_ended()
        os.write(woken[1], b"x")
        thread.join()
        os.close(woken[0])
        os.close(woken[1])
    server_run = served[0] if served else ChildRun(status="crashed", detail=Message("server_not_started"))
    if pair.server_killed and server_run.why == "watcher":
        server_run = ChildRun(server_run.records, "ok")   # it was still there after its child: ended, not failed
    return run, server_run


def _pending(fd: int) -> int:
    """Bytes waiting in a pipe (0 at its end)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


class Pair:
    """A grading child and its reference server (bridge.py), watched as one run.

    The server only answers its child, so it must not outlive or outrun it: its CPU counts toward the child's
    no-progress limit, and once the child has ended the server has SERVER_GRACE s to end, then it is killed with
    everything its uid runs. Give `child` and `server` to run_child as their watchers; call child_ended() after."""

    def __init__(self):
        self.server_members, self.child_end, self.server_killed = list, None, False
        self.child, self.server = _PairChild(self), _PairServer(self)

    def child_ended(self) -> None:
        self.child_end = time.monotonic()


class _PairChild(Watcher):
    def __init__(self, pair: Pair):
        self.pair = pair

    def extra_pids(self) -> list[int]:
        return self.pair.server_members()


class _PairServer(Watcher):
    def __init__(self, pair: Pair):
        self.pair = pair

    def on_start(self, members) -> None:
        self.pair.server_members = members

    def tick(self, now: float, cpu: float) -> str | None:
        end = self.pair.child_end
        if end is not None and now - end > SERVER_GRACE:
            self.pair.server_killed = True
            return "kill"
        return None
