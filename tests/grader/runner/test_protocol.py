"""grader/runner/protocol.py through its public names, with no child started: the exact record sequence a grading
child may write (Protocol), and how a finished run is read (parse_child_output, expected_lines). Real children are
run in test_sandbox.py, test_zygote.py and test_bridge.py."""
import json

from grader.messages import Message
from grader.observed import CRASH, INVALID, SKIPPED, TIMEOUT, NoValue
from grader.runner import CHILD, Finished, Protocol, expected_lines, parse_child_output


def lines(*records) -> bytes:
    return b"\n".join(r if isinstance(r, bytes) else json.dumps(r).encode() for r in records) + b"\n"


CELLS = {"kind": "cells", "errors": {}}
DONE = {"kind": "done"}


def scenario(name, obs):
    return {"kind": "scenario", "name": name, "obs": obs}


def read(output: bytes, *, timed_out=False, why="", returncode=0, known=None):
    protocol = Protocol(["todo1"], ["a", "b"], known)
    return parse_child_output(Finished(returncode, timed_out, output, why=why), protocol, CHILD)


def test_a_whole_run_in_order_is_ok_and_its_lines_are_kept():
    run = read(lines(CELLS, scenario("a", 1), scenario("b", [2, 3]), DONE))
    assert run.status == "ok" and [r["kind"] for r in run.records] == ["cells", "scenario", "scenario", "done"]
    assert run.records[2]["obs"] == [2, 3] and set(run.lines) == {"a", "b"}
    assert expected_lines(run) == {"a": (json.dumps(scenario("a", 1)).encode(), 1), "b": (run.lines["b"], [2, 3])}


def test_any_record_out_of_its_place_garbles_the_run():
    for output, says in [
            (lines(scenario("a", 1)), "a malformed cells record"),
            (lines({"kind": "cells", "errors": {"todo9": "x"}}), "a malformed cells record"),   # not one of its cells
            (lines(CELLS, scenario("b", 1)), "an unexpected record where a scenario belongs"),  # out of order
            (lines(CELLS, scenario("a", 1), scenario("b", 2), {"kind": "done", "extra": 1}), "where the end belongs"),
            (lines(CELLS, scenario("a", 1), scenario("b", 2), DONE, DONE), "a record after the end"),
            (lines(CELLS, b"not json"), "something that is not a result record"),
            (lines(CELLS, [1, 2]), "a malformed result record")]:
        run = read(output)
        assert run.status == "garbled" and says in str(run.detail), (output, run.detail)


def test_a_run_that_stops_early_crashed_and_one_stopped_by_a_limit_timed_out():
    crashed = read(lines(CELLS, scenario("a", 1)), returncode=-9)
    assert crashed.status == "crashed" and str(crashed.detail) == "ended early (exit code -9)"
    stalled = read(lines(CELLS), timed_out=True, why="stall")
    assert stalled.status == "timeout" and str(stalled.detail) == f"stopped: no progress in {CHILD.stall:g} s of CPU time"
    assert str(read(b"", timed_out=True, why="wall").detail) == f"stopped after {CHILD.wall:.0f} s"


def test_a_line_equal_to_the_references_is_taken_as_it_is():
    reference = read(lines(CELLS, scenario("a", (1, 2)), scenario("b", 0), DONE))
    known = expected_lines(reference)
    again = read(lines(CELLS, known["a"][0], scenario("b", 0), DONE), known=known)
    assert again.status == "ok" and again.records[1]["obs"] == known["a"][1]


def test_a_scenario_that_gave_no_value_says_so_apart_from_any_value():
    """A crash or timeout comes in "ended", read as a NoValue; a value in "obs" stays a value whatever it spells
    (before NoValue, a returned "crash: boom" was the child's word for a crash)."""
    ended = {"kind": "scenario", "name": "a", "ended": ["crash", "ValueError"]}
    run = read(lines(CELLS, ended, scenario("b", "crash: boom"), DONE))
    assert run.status == "ok"
    assert run.records[1]["obs"] == NoValue(CRASH, "ValueError") and run.records[2]["obs"] == "crash: boom"
    timed_out = read(lines(CELLS, {**ended, "ended": ["timeout", ""]}, {**ended, "name": "b", "ended": ["skipped", ""]}, DONE))
    assert [r["obs"] for r in timed_out.records[1:3]] == [NoValue(TIMEOUT), NoValue(SKIPPED)]
    refused = read(lines(CELLS, scenario("a", ["y" * 10_000]), scenario("b", 1), DONE))
    assert refused.records[1]["obs"] == NoValue(INVALID, Message("problem_string", {"length": 10000}))
    for wrong in (["invalid", "x"], ["crash"], ["crash", 3], ["boom", ""], ["crash", "E" * 401], "crash"):   # "invalid" is the protocol's
        run = read(lines(CELLS, {**ended, "ended": wrong}))
        assert run.status == "garbled" and "a malformed end of a scenario" in str(run.detail), wrong
    both = read(lines(CELLS, {**ended, "obs": 1}))
    assert both.status == "garbled" and "where a scenario belongs" in str(both.detail)


def test_progress_is_a_record_the_protocol_takes_in_its_place_and_a_refused_line_ends_the_run():
    """What the watcher of a grading child calls progress (protocol.Reading): a JSON object is not enough."""
    from grader.runner.protocol import Reading

    for noise in (b"{}", b'{"kind": "nonsense"}', json.dumps(DONE).encode(), b"[1]"):   # done before the cells: out of place
        reading = Reading(Protocol(["todo1"], ["a"]))
        assert reading.progress(noise) is False and reading.tick(0.0, 0.0) == "kill", noise
    reading = Reading(Protocol(["todo1"], ["a"]))
    assert [reading.progress(json.dumps(r).encode()) for r in (CELLS, scenario("a", 1), DONE)] == [True] * 3
    assert reading.tick(0.0, 0.0) is None
    assert reading.progress(json.dumps(DONE).encode()) is False   # a record after the end
