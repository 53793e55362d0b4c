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


def test_a_runs_wait_is_its_longest_waiting_process_not_the_sum():
    usage = watch.Usage()
    usage.waits = {pid: 10 ** 9 for pid in range(200)}   # 200 processes that each waited 1 s behind each other
    usage.waits[7] = 3 * 10 ** 9
    assert usage.waited == 3.0   # the sum (202 s) read a crowd of the run's own forks as a busy machine
    assert watch.Usage().waited == 0


def test_feed_writes_everything_and_closes_the_pipe():
    read_fd, write_fd = os.pipe()
    watch.feed(write_fd, b"payload")
    with os.fdopen(read_fd, "rb") as pipe:
        assert pipe.read() == b"payload"   # the end: the writer's side is closed


def test_the_reader_stops_at_the_line_limit_as_at_the_byte_limit():
    # the reader alone (a private name): a whole watch needs a run, and test_sandbox's runs never write this much
    import queue
    import threading

    def read(data: bytes, cap: int, max_lines: int) -> list:
        read_fd, write_fd = os.pipe()
        writer = threading.Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)))
        writer.start()
        lines: queue.Queue = queue.Queue()
        watch._read_lines(read_fd, lines, cap, max_lines)
        writer.join()
        return [lines.get_nowait() for _ in range(lines.qsize())]

    flood = b"{}\n" * 1000
    assert read(flood, 1 << 20, 10) == [b"{}\n"] * 10 + [watch.FULL]      # 1,000 two-byte records: ended at 10 lines
    assert read(flood, 30, 1 << 16) == [b"{}\n"] * 10 + [watch.FULL]      # the byte limit, as before
    assert read(b"{}\n" * 3, 1 << 20, 10) == [b"{}\n"] * 3 + [None]       # an honest run's end
