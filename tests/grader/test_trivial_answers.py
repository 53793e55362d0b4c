"""A constant answer earns nothing: no hidden rule of any TODO holds for a body that ignores its input.

Each TODO's functions keep their decorators, signature and docstring; their bodies become one trivial
statement. A rule whose cases all expect the same outcome (every case must raise, or every case must return
None) would pass such a body: every rule needs a case that refutes each of them.
"""
import pytest

from grader import editions, grade, i18n
from grader.check_assignment import passing_rules, trivial   # make check-assignment's item too
from grader.assignment import load
from grader.grade import Grader
from grader.paths import assignment_names


def test_trivial_keeps_the_signature_and_replaces_every_body():
    source = ('@todo("TODO 9")\ndef f(a: int,\n      b: int) -> int:\n    """Doc."""\n    x = a + b\n    return x\n\n\n'
              "@todo(\"TODO 9\")\ndef g(self):\n    return 1\n")
    got = trivial(source, "raise ValueError")
    assert got == ('@todo("TODO 9")\ndef f(a: int,\n      b: int) -> int:\n    """Doc."""\n    raise ValueError\n\n\n'
                   "@todo(\"TODO 9\")\ndef g(self):\n    raise ValueError\n")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignment_names())
def test_no_rule_holds_for_a_trivial_answer(assignment):
    found = passing_rules(Grader(assignment), editions.reference_answers(assignment))
    assert not found, "rules a trivial answer passes:\n" + "\n".join(found)


@pytest.mark.slow
def test_the_check_finds_a_rule_of_only_must_raise_cases(monkeypatch):
    """01's TODO 2 rules cut down to their corrupted traces: an answer that always raises passes them all."""
    assignment = load("01_continuous_batching")
    tasks = assignment.tasks

    def must_raise_only(seed):
        task = tasks(seed)[1]
        rules = [type(rule)(rule.name, [dict(sc, ops=sc["ops"][-1:]) for sc in rule.scenarios])  # the broken trace only
                 for rule in task.rules[1:]]
        return [type(task)(task.task_id, task.answer_id, task.test_id, task.points, rules)]

    monkeypatch.setattr(assignment, "tasks", must_raise_only)
    answers = editions.reference_answers("01_continuous_batching")
    found = passing_rules(Grader("01_continuous_batching"), answers)
    assert "TODO 2 `raise ValueError`: a job served too few times is caught" in found


# ------------------------------------------------------------------ 01: answers that forward to lab.schedule
FORWARDS = {
    "todo1": '''@todo("TODO 1")
def waits_and_flows(jobs: list[dict], trace: list[dict]) -> dict[int, tuple[int, int]]:
    """Map each job id to (wait, flow), using only its arrival and the ticks it was served."""
    for slots in range(1, len(jobs) + 2):
        for continuous in (False, True):
            result = lab.schedule(jobs, slots, continuous)
            if result["trace"] == trace:
                return {rec["id"]: (rec["wait"], rec["flow"]) for rec in result["completed"]}
    raise ValueError("not a trace of lab.schedule")
''',
    "todo2": '''@todo("TODO 2")
def check_served_exactly(jobs: list[dict], trace: list[dict]) -> None:
    """Raise ValueError unless every job is served exactly `tokens` times and nothing else is served."""
    for slots in range(1, len(jobs) + 2):
        for continuous in (False, True):
            if lab.schedule(jobs, slots, continuous)["trace"] == trace:
                return None
    raise ValueError("not a trace lab.schedule would make")
''',
    "todo4": '''@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    return lab.schedule(lab.jobs_from_tokens(tokens), slots, continuous)["makespan_ticks"]
''',
    "todo4 tick loop": '''@todo("TODO 4")
def predicted_makespan(tokens: list[int], slots: int, continuous: bool) -> int:
    """Makespan of FIFO batching when every job arrives at tick 0, computed without simulating ticks."""
    left, running, tick = list(tokens), [], 0
    while left or running:
        if continuous or not running:
            while left and len(running) < slots:
                running.append(left.pop(0))
        running = [need - 1 for need in running if need > 1]
        tick += 1
    return tick
''',
}


@pytest.mark.slow
def test_forwarding_to_lab_schedule_earns_nothing():
    """Traces no FIFO run makes (TODO 1, 2) and jobs of a billion tokens (TODO 4) leave a forward nothing to copy."""
    grader = Grader("01_continuous_batching")
    tasks = {task.answer_id: task for task in grader.tasks}
    for name, source in FORWARDS.items():
        verdict = grader.grade_task(tasks[name.split()[0]], source)
        assert verdict.score == 0 and not any(rule.passed for rule in verdict.rules), (name, i18n.summary(verdict))


def valid(jobs: list[dict], trace: list[dict]) -> bool:
    """A trace any scheduler could make: rising ticks, one serve a tick per job, none before arrival, exact counts."""
    arrival = {job["id"]: job["arrival"] for job in jobs}
    served = [(row["tick"], job_id) for row in trace for job_id in row["served"]]
    ticks = [row["tick"] for row in trace]
    return (ticks == sorted(set(ticks)) and all(len(set(row["served"])) == len(row["served"]) for row in trace)
            and all(job_id in arrival and tick >= arrival[job_id] for tick, job_id in served)
            and all(sum(job_id == job["id"] for _, job_id in served) == job["tokens"] for job in jobs))


def test_every_trace_rule_holds_a_valid_trace_fifo_cannot_make():
    suite = load("01_continuous_batching").suite
    for task in load("01_continuous_batching").tasks(1)[:2]:
        for rule in task.rules:
            others = [args for sc in rule.scenarios if not grade.visible(sc) for _, args in sc["ops"]
                      if valid(*args) and not suite.made_by_fifo(*args)]
            assert others, f"{task.task_id} / {rule.name}: every valid trace is one FIFO makes"


def test_another_schedulers_trace_never_equals_fifo():
    from lab import jobs_from_tokens, schedule

    made_by_fifo, other_trace = load("01_continuous_batching").suite.made_by_fifo, load("01_continuous_batching").suite.other_trace
    jobs = jobs_from_tokens([5, 3, 1])  # longest first is FIFO's order here: the trace starts one tick late instead
    assert made_by_fifo(jobs, schedule(jobs, 2, True)["trace"]) and not valid(jobs, schedule(jobs, 2, True)["trace"][1:])
    trace = other_trace(jobs, 2, "longest first")
    assert valid(jobs, trace) and not made_by_fifo(jobs, trace) and trace[0]["tick"] == 1
    paused = other_trace([{"id": 0, "arrival": 0, "tokens": 3}, {"id": 1, "arrival": 1, "tokens": 1}], 1,
                         "shortest remaining first", preemptive=True)
    assert [row["served"] for row in paused] == [[0], [1], [0], [0]]
