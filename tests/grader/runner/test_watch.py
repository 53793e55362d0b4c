"""grader/runner/watch.py's process helpers through its public names, on a family forked from this process (a fork
starts no program, so these stay in make test-fast). The watch of a sandboxed run itself is tested where runs are
started: test_sandbox.py, test_zygote.py, test_bridge.py."""
import os
import time

from grader.runner import watch


def family() -> tuple[int, int]:
    """A forked child that forks a grandchild; both sleep. (child pid, grandchild pid), once both exist."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: nothing of pytest's runs here
        try:
            os.close(ready_r)
            grandchild = os.fork()
            if grandchild == 0:
                os.close(ready_w)
                time.sleep(60)
                os._exit(0)
            os.write(ready_w, str(grandchild).encode())
            os.close(ready_w)
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(ready_w)
    with os.fdopen(ready_r, "rb") as ready:
        return pid, int(ready.read())


def test_the_tree_holds_every_descendant_and_kill_tree_ends_them_all():
    pid, grandchild = family()
    try:
        assert watch.tree(pid) == [pid, grandchild] and watch.children(pid) == [grandchild]
        assert pid in watch.children(os.getpid()) and grandchild not in watch.children(os.getpid())
        watch.kill_tree(pid)
        assert not os.path.exists(f"/proc/{grandchild}") or open(f"/proc/{grandchild}/stat").read().split(") ")[1][0] == "Z"
    finally:
        watch.kill_tree(pid)
        os.waitpid(pid, 0)
    assert watch.tree(pid) == []   # reaped: gone, and so is everything below it


def test_cpu_is_read_from_proc_and_a_gone_process_counts_nothing():
    spent = time.process_time()
    while time.process_time() - spent < 0.05:
        pass
    mine = watch.cpu_seconds([os.getpid()])
    assert mine >= 0.05 and watch.cpu_seconds([2 ** 22 + 7]) == 0   # a pid no process has counts nothing
    both = watch.cpu_seconds([os.getpid(), 2 ** 22 + 7])   # this process keeps running between the two reads
    assert mine <= both < mine + 1
    usage = watch.Usage()
    assert usage.read([os.getpid()]) >= mine and usage.waited >= 0


def test_feed_writes_everything_and_closes_the_pipe():
    read_fd, write_fd = os.pipe()
    watch.feed(write_fd, b"payload")
    with os.fdopen(read_fd, "rb") as pipe:
        assert pipe.read() == b"payload"   # the end: the writer's side is closed
