"""grader/two_cores.py: half the jobs in a forked child, the same bytes in the same order whatever the child does."""
import os
import sys
import time

import pytest

from grader import two_cores

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the jobs are forked on Linux only")
PARENT = os.getpid()


def job(i):
    return lambda: f"result {i} from {'parent' if os.getpid() == PARENT else 'child'}".encode()


def strip(results):
    return [r.split(b" from ")[0] for r in results]


@pytest.mark.parametrize("count", [0, 1, 2, 5])
def test_results_come_back_in_order(count, capfd):
    results = two_cores.produce([job(i) for i in range(count)])
    assert strip(results) == [f"result {i}".encode() for i in range(count)]
    if count >= 2:  # the odd ones were produced in the child: that is the point of it
        assert results[1].endswith(b"child") and results[0].endswith(b"parent")
    assert "run again here" not in capfd.readouterr().err


def test_empty_and_large_results_survive_the_pipe():
    big = os.urandom(3 << 20)  # larger than the pipe's buffer and the read size
    assert two_cores.produce([lambda: b"", lambda: big, lambda: b"x", lambda: b""]) == [b"", big, b"x", b""]


def failing_in_child(i):
    def run():
        if os.getpid() != PARENT:
            raise RuntimeError("fails in the child only")
        return f"result {i}".encode()
    return run


def test_a_child_that_fails_leaves_its_jobs_to_the_parent(capfd):
    assert two_cores.produce([failing_in_child(i) for i in range(4)]) == [f"result {i}".encode() for i in range(4)]
    assert "note: 2 of 4 jobs are run again here" in capfd.readouterr().err


@pytest.mark.slow
def test_a_child_that_hangs_is_killed_and_its_jobs_run_here():
    def hangs_in_child():
        if os.getpid() != PARENT:
            time.sleep(600)
        return b"late"
    assert two_cores.produce([lambda: b"a", hangs_in_child], timeout=1.0) == [b"a", b"late"]


def test_a_child_that_exits_cleanly_without_its_results_is_not_believed():
    def leaves_early():
        if os.getpid() != PARENT:
            os._exit(0)  # status 0, but no record sent
        return b"whole"
    assert two_cores.produce([lambda: b"a", leaves_early]) == [b"a", b"whole"]


def test_without_fork_everything_runs_here(monkeypatch):
    monkeypatch.setattr(two_cores.sys, "platform", "darwin")
    results = two_cores.produce([job(i) for i in range(3)])
    assert all(r.endswith(b"parent") for r in results)


def test_a_child_that_fails_after_sending_some_results_leaves_all_its_jobs_to_the_parent():
    jobs = [job(0), job(1), job(2), failing_in_child(3)]  # the child runs 1, then fails on 3
    results = two_cores.produce(jobs)
    assert strip(results) == [b"result 0", b"result 1", b"result 2", b"result 3"]
    assert results[1].endswith(b"parent")  # its result from the failed child was not mixed in


def test_when_a_job_of_ours_raises_the_child_is_reaped_and_no_descriptor_is_left_open(monkeypatch):
    forks = []

    def fork():
        forks.append(real_fork())
        return forks[-1]

    def ours_fails():
        if os.getpid() == PARENT:
            raise ValueError("a job of the parent's")
        return b""

    real_fork = os.fork
    monkeypatch.setattr(two_cores.os, "fork", fork)
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(ValueError):
        two_cores.produce([ours_fails, lambda: b"x" * (1 << 20)])  # the child's megabyte cannot fit in the pipe
    assert set(os.listdir("/proc/self/fd")) == before
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)  # reaped: not running, not even a zombie
