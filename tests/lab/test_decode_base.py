"""lab.decode: the seed's RequestState and event keys, the base's guards, and the student-facing API."""
import dataclasses
import inspect

import pytest

from grader import reference
from lab import EVENT_KEYS, DecodeSchedulerBase, RequestState, TodoNotFinished, add_to_class, require_todos, todo

SEED_FIELDS = [("request_id", None), ("prompt_len", None), ("max_new_tokens", None), ("generated_len", 0),
               ("phase", "prefill"), ("priority", 0), ("cache_hit", False), ("wait_steps", 0), ("required_blocks", 1),
               ("admitted", False), ("deadline_step", None), ("preemptible", True), ("status", "waiting"), ("preemptions", 0)]


def test_request_state_has_exactly_the_seed_fields():
    fields = [(f.name, None if f.default is dataclasses.MISSING else f.default) for f in dataclasses.fields(RequestState)]
    assert fields == SEED_FIELDS
    req = RequestState(1, 3, 2, generated_len=1)
    assert req.total_len == 4 and not req.done and RequestState(1, 3, 2, generated_len=2).done


@pytest.mark.parametrize("bad", [{"phase": "decoding"}, {"status": "done"}])
def test_request_state_rejects_unknown_phase_or_status(bad):
    with pytest.raises(ValueError):
        RequestState(1, 2, 2, **bad)


def test_event_keys_are_the_seeds():
    assert EVENT_KEYS == ("request_id", "phase", "action", "prompt_len", "generated_len", "max_new_tokens",
                          "wait_steps", "free_kv_blocks", "preempted_request_id", "deadline_missed")
    base = DecodeSchedulerBase(policy="deadline")
    req = RequestState(4, 2, 1, deadline_step=1)
    event = base._record_event(req, "prefill_to_decode", None)
    assert tuple(event) == EVENT_KEYS and base.timeline == [event] and base.clock == 1
    assert event["phase"] == "prefill" and event["deadline_missed"] is True


@pytest.mark.parametrize("kwargs", [{"policy": "fifo"}, {"free_kv_blocks": -1}, {"free_kv_blocks": 2.0},
                                    {"free_kv_blocks": True}, {"aging_interval": 0}, {"aging_interval": "4"}])
def test_constructor_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        DecodeSchedulerBase(**kwargs)


def test_priority_helpers():
    req = RequestState(1, 5, 3, priority=2, wait_steps=9)
    assert DecodeSchedulerBase("fixed_priority")._effective_priority(req) == 2
    assert DecodeSchedulerBase("aging", aging_interval=4)._effective_priority(req) == 4
    assert DecodeSchedulerBase()._remaining_steps(req) == 4
    assert DecodeSchedulerBase()._remaining_steps(dataclasses.replace(req, phase="decode", generated_len=3)) == 0


@pytest.mark.parametrize("max_steps", [-1, 1.5, True, "3"])
def test_run_rejects_bad_max_steps(max_steps):
    with pytest.raises(ValueError):
        DecodeSchedulerBase().run(max_steps=max_steps)


@pytest.mark.parametrize("kwargs", [{"prompt_len": 1.0}, {"max_new_tokens": True}, {"priority": 0.5},
                                    {"cache_hit": 1}, {"preemptible": None}, {"deadline_step": 2.5}, {"request_id": "7"}])
def test_enqueue_guard_rejects_wrong_types(kwargs):
    sim = reference.namespace()["DecodeSchedulerSim"]()
    args = {"request_id": 1, "prompt_len": 2} | kwargs
    with pytest.raises(ValueError):
        sim.enqueue(**args)
    assert sim.queue == []


SEED_SIGNATURES = {
    "__init__": [("policy", "fixed_priority"), ("free_kv_blocks", 1_000_000), ("aging_interval", 4)],
    "enqueue": [("request_id", None), ("prompt_len", None), ("max_new_tokens", 2), ("priority", 0), ("cache_hit", False),
                ("required_blocks", 1), ("deadline_step", None), ("preemptible", True)],
    "_effective_priority": [("req", None)], "_remaining_steps": [("req", None)], "_schedule_key": [("req", None)],
    "_ensure_capacity": [("challenger", None)], "step": [], "run": [("max_steps", 100)],
}


def test_student_api_is_the_seeds():
    """Names, parameters and defaults of DecodeSchedulerSim are exactly the Decode Scheduling chapter's."""
    cls = reference.namespace()["DecodeSchedulerSim"]
    for name, expected in SEED_SIGNATURES.items():
        params = list(inspect.signature(getattr(cls, name)).parameters.values())[1:]
        got = [(p.name, None if p.default is inspect.Parameter.empty else p.default) for p in params]
        assert got == expected, name
    sim = cls()
    assert (sim.policy, sim.free_kv_blocks, sim.aging_interval, sim.clock, sim.queue, sim.timeline) == \
        ("fixed_priority", 1_000_000, 4, 0, [], [])


def test_add_to_class_and_todo_message():
    class Thing:
        pass

    @add_to_class(Thing)
    @todo("TODO 9")
    def method(self):
        """Doc survives."""
        raise NotImplementedError()

    assert Thing.method is method and method.__doc__ == "Doc survives." and method.task_id == "TODO 9"
    with pytest.raises(NotImplementedError, match=r"TODO 9 \(method\) is not implemented yet"):
        Thing().method()


def test_require_todos_names_only_the_blank_ones_in_one_line():
    @todo("TODO 8")
    def blank():
        raise NotImplementedError()

    @todo("TODO 9")
    def done():
        return 1

    require_todos("TODO 8", "TODO 9")  # nothing has failed yet
    assert done() == 1
    with pytest.raises(NotImplementedError):
        blank()
    with pytest.raises(TodoNotFinished, match=r"needs TODO 8 first") as caught:
        require_todos("TODO 9", "TODO 8")
    assert caught.value._render_traceback_() == [f"TodoNotFinished: {caught.value}"]

    @todo("TODO 8")
    def blank():  # noqa: F811 - the student re-runs the cell with an answer
        return 2

    require_todos("TODO 8")  # a new definition is not blank until it fails
    assert blank() == 2


def test_todo_wraps_only_an_answer_that_still_raises_not_implemented():
    """A finished answer runs as written (no extra frame on each of the simulator's calls); one that still has its
    stub, even in a nested function, is wrapped, and a finished one calling a blank one shows the blank one's name."""
    def answer(x):
        return x + 1

    def partial(x):
        if x:
            return x
        raise NotImplementedError()

    def nested(x):
        return [NotImplementedError for _ in range(x)]

    assert todo("TODO 7")(answer) is answer and answer.task_id == "TODO 7"
    wrapped = todo("TODO 7")(partial)
    assert wrapped is not partial and wrapped(3) == 3 and wrapped.task_id == "TODO 7"
    with pytest.raises(NotImplementedError, match=r"TODO 7 \(partial\) is not implemented yet"):
        wrapped(0)
    assert todo("TODO 7")(nested) is not nested

    class Thing:
        def method(self):
            return 1

    bound = todo("TODO 7")(Thing().method)   # not a plain function: wrapped, as before
    assert bound() == 1 and bound.task_id == "TODO 7"

    @todo("TODO 6")
    def blank():
        raise NotImplementedError()

    @todo("TODO 5")
    def caller():
        return blank()

    with pytest.raises(NotImplementedError, match=r"TODO 6 \(blank\) is not implemented yet"):
        caller()
    with pytest.raises(TodoNotFinished, match=r"needs TODO 6 first"):
        require_todos("TODO 5", "TODO 6")
