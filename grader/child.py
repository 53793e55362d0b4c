# Bootstrap of a grading child process. The sandbox passes this file's text to `python -I -c`;
# it imports nothing from grader/, so a child never needs (or sees) instructor files.
#
# stdin:  JSON {setup: [src], cells: [[grade_id, src]], driver: src, scenarios: [{name, ops[, cpu_seconds]}], scenario_timeout}
# fd $GRADER_RESULT_FD: one JSON record per line: {"kind": "cells", ...}, {"kind": "scenario", ...}, {"kind": "done"}
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


def grade(payload, emit):
    """Run the cells, then the scenarios; emit one record per step (the warm parent calls this after a fork)."""
    sys.stdout = open(os.devnull, "w")  # prints of the code under test are not part of the verdict
    namespace = {"__name__": "__graded__"}
    for index, src in enumerate(payload["setup"]):
        exec(compile(_strip_magics(src), f"<given cell {index}>", "exec"), namespace)
    errors = {}
    signal.signal(SIGNAL, _on_alarm)
    for grade_id, src in payload["cells"]:
        signal.setitimer(TIMER, payload["scenario_timeout"])
        try:
            exec(compile(_strip_magics(src), f"<cell {grade_id}>", "exec"), namespace)
        except ScenarioTimeout:
            errors[grade_id] = "the cell itself ran past the time limit"
        except BaseException as exc:  # noqa: BLE001 - any failure of the cell is reported, not raised
            errors[grade_id] = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            signal.setitimer(TIMER, 0)
    emit({"kind": "cells", "errors": errors})
    driver = {"__name__": "__driver__"}
    exec(compile(payload["driver"], "<driver>", "exec"), driver)
    consecutive_timeouts = 0
    for scenario in payload["scenarios"]:
        if consecutive_timeouts >= 3:  # a hang is not worth waiting for again and again
            emit({"kind": "scenario", "name": scenario["name"], "obs": "skipped after 3 timeouts in a row"})
            continue
        # After a timeout the next scenarios get a short limit: honest code needs milliseconds, a hang costs little.
        limit = scenario.get("cpu_seconds", payload["scenario_timeout"])  # a suite may give a big scenario more
        signal.setitimer(TIMER, limit if not consecutive_timeouts else payload.get("retry_timeout", 0.25))
        try:
            observed = driver["observe"](namespace, scenario["ops"])
        except ScenarioTimeout:
            observed = "timeout"
        except BaseException as exc:  # noqa: BLE001
            observed = f"crash: {type(exc).__name__}"
        finally:
            signal.setitimer(TIMER, 0)
        consecutive_timeouts = consecutive_timeouts + 1 if observed == "timeout" else 0
        emit({"kind": "scenario", "name": scenario["name"], "obs": observed})
    emit({"kind": "done"})


if __name__ == "__main__":
    main()
