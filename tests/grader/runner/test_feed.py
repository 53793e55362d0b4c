"""The feed (grader/runner/feed.py): a child gets a scenario's items one at a time, each only after it answered the one
before, and a child that breaks the protocol ends its own channel without holding up the grading process.

These run the child's end (child.py's Feed, the text the sandbox runs) in a thread of this process: the protocol is
what is tested here; tests/grader/test_online_key.py runs it in the sandbox."""
import os
import select
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.observed import CRASH, NoValue
from grader.runner import child as child_program
from grader.runner.feed import MAX_REPLY, Fed, Feeder

ROWS = [[i, 1000 * i, i % 3, 10 + i] for i in range(30)]


def _child(fds, name="s"):
    feed = child_program.Feed(fds)
    feed.scenario = name
    return feed


def _run(feeds, body, name="s"):
    """Run `body(feed)` as the child would, in a thread; return what the feeder received and what body returned."""
    feeder, out = Feeder(feeds), {}
    fds = feeder.child_fds

    def child():
        try:
            out["value"] = body(_child(fds, name))
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            out["error"] = exc
        finally:
            for fd in fds:
                os.close(fd)

    thread = threading.Thread(target=child)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the child's end hung"
    return feeder.close(), out


def test_items_come_one_at_a_time_each_after_the_reply_to_the_one_before_then_the_ones_asked_again():
    def body(feed):
        seen, ahead = [], []
        for item in feed.items():
            seen.append(item)
            ahead.append(bool(feed.buffer) or bool(select.select([feed.fds[0]], [], [], 0)[0]))  # nothing beyond this item
            feed.reply({"$tuple": [item[1]]})
        return seen, ahead

    fed, out = _run({"s": {"items": ROWS, "again": [29, 28, 27]}}, body)
    seen, ahead = out["value"]
    assert seen == ROWS + [ROWS[29], ROWS[28], ROWS[27]] and not any(ahead)
    assert fed["s"].complete and fed["s"].replies == [(row[1],) for row in ROWS] + [(29000,), (28000,), (27000,)]


def test_a_child_that_stops_half_way_leaves_an_incomplete_feed_and_a_feed_is_opened_once():
    def body(feed):
        for n, item in enumerate(feed.items()):
            feed.reply(item[0])
            if n == 4:
                break
        return list(feed.items())   # a second pass over the same scenario: refused

    fed, out = _run({"s": {"items": ROWS}}, body)
    assert isinstance(out["error"], RuntimeError) and "opened before" in str(out["error"])
    assert not fed["s"].complete and fed["s"].replies == [0, 1, 2, 3, 4]


def test_a_stale_item_of_a_scenario_left_half_way_is_not_taken_for_the_next_ones():
    def body(feed):
        for item in feed.items():
            feed.reply(item[0])
            break   # the next item of "a" is on its way, unread
        feed.scenario = "b"
        got = []
        for item in feed.items():
            got.append(item)
            feed.reply(0)
        return got

    fed, out = _run({"a": {"items": ROWS}, "b": {"items": ROWS[:3]}}, body, name="a")
    assert out["value"] == ROWS[:3] and fed["b"].complete and not fed["a"].complete


@pytest.mark.parametrize("line", [b"not json", b'{"reply": 1}', b'{"open": 3}', b'{"open": "s", "reply": 1}',
                                  b'[1, 2]', b'{"reply": {"$bogus": 1}}', b"x" * (MAX_REPLY + 10)])
def test_a_line_that_breaks_the_protocol_ends_the_channel_for_the_child(line):
    def body(feed):
        os.write(feed.fds[1], line + b"\n")
        return os.read(feed.fds[0], 100)   # EOF: the grading process closed its end

    fed, out = _run({"s": {"items": ROWS}}, body)
    assert out["value"] == b"" and fed == {}


def test_a_child_that_sends_replies_without_reading_cannot_block_the_grading_process():
    def body(feed):
        os.write(feed.fds[1], b'{"open":"s"}\n')
        os.set_blocking(feed.fds[1], False)   # once the grading process stops reading, this side must not hang either
        for _ in range(3000):   # far more than the pipe holds of the items it would be sent
            try:
                os.write(feed.fds[1], b'{"reply":0}\n')
            except (BrokenPipeError, BlockingIOError):
                return "stopped"
        return "wrote"

    items = [[i] * 40 for i in range(3000)]
    fed, out = _run({"s": {"items": items}}, body)
    assert "error" not in out and not fed["s"].complete and len(fed["s"].replies) < 3000


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=4), min_size=1, max_size=20), st.data())
def test_any_honest_child_gets_every_item_in_order_and_the_feeder_keeps_every_reply(items, data):
    again = data.draw(st.lists(st.integers(0, len(items) - 1), max_size=5))

    def body(feed):
        got = []
        for item in feed.items():
            got.append(item)
            feed.reply({"$tuple": [sum(item), len(got)]})
        return got

    fed, out = _run({"s": {"items": items, "again": again}}, body)
    assert out["value"] == items + [items[i] for i in again]
    assert fed["s"] == Fed([(sum(item), n) for n, item in enumerate(out["value"], 1)], True)


def test_a_message_too_long_to_be_written_whole_is_refused_up_front():
    with pytest.raises(ValueError, match="feed message"):
        Feeder({"s": {"items": [list(range(2000))]}})


def test_the_childs_end_raises_without_a_feed():
    feed = child_program.Feed(None)
    feed.scenario = "s"
    with pytest.raises(RuntimeError, match="no feed"):
        next(feed.items())


def test_replies_keep_their_types():
    def body(feed):
        for _ in feed.items():
            feed.reply({"$tuple": [1, 1.0, {"$numpy": ["float32", 0.5]}, [1, 3]]})

    fed, _ = _run({"s": {"items": ROWS[:1]}}, body)
    (reply,) = fed["s"].replies
    assert [type(v).__name__ for v in reply] == ["int", "float", "float32", "list"], reply


DRIVER = '''
def observe(namespace, ops):
    got = []
    for item in FEED.items():
        got.append(item)
        FEED.reply(item[0] * 2)
    return len(got)
'''


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["cold", "warm"])
def test_a_sandboxed_child_reads_its_feed_through_either_runner(kind):
    """The feed's fds reach the child at the sandbox level found here, from a fresh interpreter and from the warm parent;
    a scenario without a feed of its own gets a refusal."""
    from grader import runner
    payload = {"setup": [], "cells": [], "driver": DRIVER, "scenario_cpu": 5,
               "scenarios": [{"name": "fed", "ops": []}, {"name": "other", "ops": []}]}
    feeds = {"fed": {"items": ROWS, "again": [1, 0]}}
    run = runner.run_child(payload, runner.Limits(wall=120), runner.Cold() if kind == "cold" else runner.shared(), feeds=feeds)
    assert run.status == "ok", run
    assert [r.get("obs") for r in run.records[1:3]] == [len(ROWS) + 2, NoValue(CRASH, "RuntimeError")]
    assert run.fed == {"fed": Fed([2 * row[0] for row in ROWS] + [2, 0], True)}
