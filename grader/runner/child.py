# Bootstrap of a grading child process. The sandbox passes this file's text to `python -I -c`;
# it imports nothing from grader/, so a child never needs (or sees) instructor files.
#
# stdin:  JSON {setup: [src], cells: [[grade_id, src]], checks: [src], driver: src, scenarios: [{name, ops[, cpu_seconds]}], scenario_cpu,
#                retry_cpu (grader/config.py's settings of those names),
#                bridge: {source, owned: [export], parity, pure: [export], logs: [Class.field], holds_logs: bool}, serve: bool}
# fd $GRADER_RESULT_FD: one JSON record per line: {"kind": "cells", ...}, {"kind": "scenario", ...}, {"kind": "done"}; a
# scenario's record holds what it observed ("obs"), or how it gave no value ("ended": ["timeout" | "skipped" | "crash", detail])
# fds $GRADER_BRIDGE_FDS ("read,write"): the bridge (bridge.py, beside this file) to the reference server. The child holds the
# student's answer for one TODO and stand-ins for the others; the server ("serve": true) holds the reference of the
# others and a stand-in for this one, and answers the child's calls until the child ends.
# fds $GRADER_FEED_FDS ("read,write"), if set: the grading process's feed (grader/runner/feed.py), items of a scenario
# that never go in the payload; the driver reads them as FEED.items(), one at a time, answering each with FEED.reply().
# The parent judges; this process only reports what the code under test did.
import json
import os
import signal
import sys


class ScenarioTimeout(BaseException):
    """Raised by the CPU-time alarm; a BaseException so that `except Exception` in student code cannot eat it."""


# CPU time, not wall time: a loaded machine must not turn a correct answer into a timeout.
# A hang that sleeps instead of spinning is ended by the parent's wall-clock limit.
TIMER, SIGNAL = signal.ITIMER_PROF, signal.SIGPROF


def _on_alarm(signum, frame):
    raise ScenarioTimeout()


def _strip_magics(src):
    # IPython magics and shell escapes are not Python; a stray `%time` must not cost a TODO.
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines())


def main():
    payload = json.loads(sys.stdin.read())
    out = os.fdopen(int(os.environ.pop("GRADER_RESULT_FD")), "w", buffering=1)

    def emit(record):
        out.write(json.dumps(record, default=repr) + "\n")
        out.flush()

    grade(payload, emit)


class Feed:
    """This side of the grading process's feed: the running scenario's items, each sent once the one before is answered."""

    def __init__(self, fds):
        self.fds, self.buffer, self.scenario = fds, b"", None

    def items(self):
        """The running scenario's items (then the ones asked again); answer each with reply() to get the next."""
        if self.fds is None:
            raise RuntimeError("this run has no feed")
        name = self.scenario
        self._send({"open": name})
        while True:
            message = self._receive()
            if message.get("n") != name:
                continue   # left over from a scenario that stopped half way
            if "item" in message:
                yield message["item"]
            elif message.get("end") is True:
                return
            else:
                raise RuntimeError(str(message.get("refused")))

    def reply(self, value):
        self._send({"reply": value})

    def _send(self, message):
        data = memoryview((json.dumps(message, separators=(",", ":")) + "\n").encode())
        while data:
            data = data[os.write(self.fds[1], data):]

    def _receive(self):
        while b"\n" not in self.buffer:
            chunk = os.read(self.fds[0], 65536)
            if not chunk:
                raise EOFError("the grading process ended the feed")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


def _feed():
    fds = os.environ.pop("GRADER_FEED_FDS", "")
    return Feed(tuple(int(fd) for fd in fds.split(",")) if fds else None)


def _bridge(payload, namespace):
    """This side's end of the bridge, in the namespace as __bridge__ (before any cell runs)."""
    spec = payload.get("bridge")
    if not spec:
        return None
    module = {"__name__": "grader_bridge"}
    exec(compile(spec["source"], "<bridge>", "exec"), module)
    read_fd, write_fd = (int(fd) for fd in os.environ.pop("GRADER_BRIDGE_FDS").split(","))
    bridge = module["Bridge"](read_fd, write_fd, namespace, spec["parity"], ScenarioTimeout, spec.get("pure", ()),
                              spec.get("logs", ()), spec.get("holds_logs", False))
    namespace["__bridge__"] = bridge
    return bridge


def _own(bridge, namespace, exports):
    """Register what this side answers for: the functions its cells defined under these names."""
    for export in exports:
        owner, _, name = export.rpartition(".")
        found = getattr(namespace.get(owner), name, None) if owner else namespace.get(name)
        if callable(found):
            bridge.owned[export] = found


def _driver(source, feed):
    """The driver's observe(), loaded before any cell runs: a cell that rewrites the payload changes nothing it reports."""
    driver = {"__name__": "__driver__", "FEED": feed}
    exec(compile(source, "<driver>", "exec"), driver)
    return driver.get("observe")


def _run_cells(cells, namespace, limit):
    """Run the answer cells in order; {grade_id: error} for those that raised. Their sources end with this frame."""
    errors = {}
    for grade_id, src in cells:
        signal.setitimer(TIMER, limit)
        try:
            exec(compile(_strip_magics(src), f"<cell {grade_id}>", "exec"), namespace)
        except ScenarioTimeout:
            errors[grade_id] = "the cell itself ran past the time limit"
        except BaseException as exc:  # noqa: BLE001 - any failure of the cell is reported, not raised
            errors[grade_id] = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            signal.setitimer(TIMER, 0)
    return errors


def grade(payload, emit):
    """Run the cells, then the scenarios; emit one record per step (the warm parent calls this after a fork).

    What the parent uses is taken out of the payload before any cell runs (the driver, the scenarios, the exports),
    and the cells' sources are dropped once they ran: the reference server keeps no copy of its reference's text."""
    sys.stdout = open(os.devnull, "w")  # prints of the code under test are not part of the verdict
    namespace = {"__name__": "__graded__"}
    bridge = _bridge(payload, namespace)
    feed = _feed()
    observe = _driver(payload.pop("driver"), feed)
    scenarios, owned = payload.pop("scenarios"), tuple(payload.get("bridge", {}).get("owned", ()))
    for index, src in enumerate(payload["setup"]):
        exec(compile(_strip_magics(src), f"<given cell {index}>", "exec"), namespace)
    signal.signal(SIGNAL, _on_alarm)
    errors = _run_cells(payload.pop("cells"), namespace, payload["scenario_cpu"])
    # The check cells' definitions (helpers and test functions of the visible checks, no student code), on both sides
    # of the bridge: a case of a visible check is a scenario (grader/contract.py). Their errors are the cases'.
    _run_cells([(f"check {i}", src) for i, src in enumerate(payload.pop("checks", []))], namespace, payload["scenario_cpu"])
    emit({"kind": "cells", "errors": errors})
    if bridge is not None:
        _own(bridge, namespace, owned)
        if payload.get("serve"):
            bridge.serve_forever(payload["scenario_cpu"], TIMER)
            emit({"kind": "done"})
            return
    consecutive_timeouts = 0
    for scenario in scenarios:
        # A scenario that gave no value says how in "ended" ([how, detail]), never in "obs": a returned value is only ever a value.
        if consecutive_timeouts >= 3:  # a hang is not worth waiting for again and again
            emit({"kind": "scenario", "name": scenario["name"], "ended": ["skipped", ""]})
            continue
        # After a timeout the next scenarios get a short limit: honest code needs milliseconds, a hang costs little.
        limit = scenario.get("cpu_seconds", payload["scenario_cpu"])  # a suite may give a big scenario more
        signal.setitimer(TIMER, limit if not consecutive_timeouts else payload.get("retry_cpu", payload["scenario_cpu"]))
        feed.scenario = scenario["name"]
        ended = None
        try:
            observed = observe(namespace, scenario["ops"])
        except ScenarioTimeout:
            ended = ["timeout", ""]
        except BaseException as exc:  # noqa: BLE001
            ended = ["crash", type(exc).__name__]
        finally:
            signal.setitimer(TIMER, 0)
        consecutive_timeouts = consecutive_timeouts + 1 if ended and ended[0] == "timeout" else 0
        emit({"kind": "scenario", "name": scenario["name"], **({"ended": ended} if ended else {"obs": observed})})
    emit({"kind": "done"})


if __name__ == "__main__":
    main()
