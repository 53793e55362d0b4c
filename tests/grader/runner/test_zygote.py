"""The warm parent: each fork is a sandbox of its own; nothing one run leaves is seen by the next. A cold run is called alike."""
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from grader import notebook_run
from grader.runner import CHILD, UID_BASE, UID_COUNT, Cold, Limits, run_child
from grader.runner.watch import tree

DRIVER = "def observe(ns, ops):\n    return ns['probe']()\n"

LEAVE = """
import ctypes, os, subprocess
def probe():
    try:   # the view's own folders are read-only: at userns the run's uid owns them (a relay between forks otherwise)
        open('/left-behind', 'w').write('x')
        root = True
    except OSError:
        root = False
    open('/tmp/left-behind', 'w').write('x')
    open('/dev/shm/left-behind', 'w').write('x')
    libc = ctypes.CDLL(None)
    segment = libc.shmget(0x5eed, 4096, 0o1666)      # IPC_CREAT | 0666: a SysV segment that would outlive us
    try:   # a process that tries to leave the run's session: seccomp refuses setsid (grader/runner/seccomp.py)
        subprocess.Popen(['sleep', '600'], start_new_session=True)
        new_session = True
    except (OSError, subprocess.SubprocessError):
        new_session = False
    subprocess.Popen(['sleep', '600'])   # and one that stays in it, left running
    status = dict(line.split(':', 1) for line in open('/proc/self/status') if ':' in line)
    return {'uid': os.getuid(), 'pid': os.getpid(), 'caps': [status['CapEff'].strip(), status['CapPrm'].strip(),
            status['CapBnd'].strip()], 'no_new_privs': status['NoNewPrivs'].strip(), 'segment': segment >= 0,
            'grader': os.path.exists(%(grader)r), 'solutions': os.path.exists(%(solutions)r), 'root': root,
            'new_session': new_session}
"""

LOOK = """
import os
def probe():
    shm = open('/proc/sysvipc/shm').read()
    sleeping = [p for p in os.listdir('/proc') if p.isdigit() and open(f'/proc/{p}/cmdline').read().startswith('sleep')]
    return {'uid': os.getuid(), 'tmp': os.path.exists('/tmp/left-behind'), 'shm': os.path.exists('/dev/shm/left-behind'),
            'segment': '5eed' in shm or str(0x5eed) in shm, 'sleeping': sleeping}
"""


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:   # it ended between the listing and the read
        return b""


def probe(zygote, cell, limits=Limits(wall=60, cpu_seconds=60)):
    payload = {"setup": [], "cells": [["c", cell]], "driver": DRIVER, "scenarios": [{"name": "p", "ops": []}],
               "scenario_cpu": 5}
    done = zygote.run("grade", payload, limits)
    records = [json.loads(line) for line in done.output.splitlines()]
    assert records[0] == {"kind": "cells", "errors": {}}, records
    return records[1]["obs"]



@pytest.mark.slow
def test_a_fork_drops_every_privilege_and_sees_no_instructor_file(zygote):
    first = probe(zygote, LEAVE % {"grader": str(ROOT / "grader"), "solutions": str(ROOT / "solutions")})
    assert UID_BASE <= first["uid"] < UID_BASE + UID_COUNT and first["pid"] == 1  # its own uid, its own pid namespace
    assert first["caps"] == ["0000000000000000"] * 3 and first["no_new_privs"] == "1"
    assert first["grader"] is False and first["solutions"] is False and first["segment"] is True and first["root"] is False
    assert first["new_session"] is False   # no session of its own, so no scheduling group of its own (autogroup)
    left = [pid for pid in tree(zygote._proc.pid) if cmdline(pid).startswith(b"sleep\0")]
    assert left == []  # its background process ended with it (bwrap: swept by uid; userns: with its pid namespace)


@pytest.mark.slow
def test_nothing_a_fork_leaves_reaches_the_next(zygote):
    first = probe(zygote, LEAVE % {"grader": "/", "solutions": "/"})
    second = probe(zygote, LOOK)
    assert second["uid"] != first["uid"] or zygote.level == "userns"   # userns: one uid, in a namespace of each run's own
    assert second == {"uid": second["uid"], "tmp": False, "shm": False, "segment": False, "sleeping": []}


@pytest.mark.slow
def test_a_hung_fork_is_stopped_from_outside(zygote):
    """A run that spins without reporting is ended by the stall limit, and the warm parent goes on serving."""
    payload = {"setup": [], "cells": [["c", "import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)\nwhile True:\n    pass\n"]],
               "driver": DRIVER, "scenarios": [], "scenario_cpu": 1000}
    done = zygote.run("grade", payload, Limits(wall=60, stall=1.0, cpu_seconds=60))
    assert done.timed_out and done.why == "stall"
    assert probe(zygote, LOOK)["tmp"] is False


NOTEBOOK = {"cells": [{"index": 0, "source": "x = 6 * 7\nprint(x)"}, {"index": 1, "source": "x"},
                      {"index": 2, "source": "1 / 0"}, {"index": 3, "source": "while True:\n    pass"},
                      {"index": 4, "source": "print('after')"}]}


def cells(done) -> dict[int, tuple]:
    """index -> (status, the outputs' text and error names) of a notebook run's cell records."""
    found = {}
    for rec in map(json.loads, done.output.splitlines()):
        if rec["kind"] == "cell":
            found[rec["index"]] = (rec["status"], [o.get("text") or o.get("data", {}).get("text/plain") or o.get("ename")
                                                   for o in rec["outputs"]])
    return found


@pytest.mark.slow
def test_a_cold_and_a_warm_run_take_the_same_call_and_report_the_same_cells(zygote):
    """One runner interface: the same notebook payload, Limits and watcher, cold (a fresh interpreter) and warm (a fork).

    The same watcher interrupts the spinning cell in both (SIGINT from outside), and the run goes on to the next cell."""
    seen = {}
    for name, runner in (("cold", Cold(zygote.level)), ("warm", zygote)):
        watcher = notebook_run.CellLimits(cell_cpu=1.0, cell_timeout=30, feedback_wall=120)
        seen[name] = cells(runner.run("notebook", NOTEBOOK, Limits(wall=120), watcher=watcher))
        assert list(watcher.interrupted) == [3], (name, watcher.interrupted)
    assert seen["cold"] == seen["warm"], seen
    assert seen["warm"] == {0: ("ok", ["42\n"]), 1: ("ok", ["42"]), 2: ("error", ["ZeroDivisionError"]),
                            3: ("interrupted", ["KeyboardInterrupt"]), 4: ("ok", ["after\n"])}, seen["warm"]


NOISE = '''
import os, signal, stat, time
signal.setitimer(signal.ITIMER_PROF, 0)
pipes = []
for name in os.listdir('/proc/self/fd'):   # every pipe this run holds: its result pipe among them
    try:
        if int(name) > 2 and stat.S_ISFIFO(os.fstat(int(name)).st_mode):
            pipes.append(int(name))
    except OSError:
        pass
while True:   # a line of noise a millisecond of CPU: below the line limit (Limits.result_lines) within the stall limit
    spent = time.process_time()
    while time.process_time() - spent < 0.001:
        pass
    for fd in pipes:
        try:
            os.write(fd, b'[1]\\n')
        except OSError:
            pass
'''


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["cold", "warm"])
def test_one_watcher_stops_a_run_that_only_writes_noise(zygote, kind):
    """Only a record is progress, cold or warm: a run that spins while it writes lines that are no record is stalled."""
    cell = NOISE
    payload = {"setup": [], "cells": [["c", cell]], "driver": DRIVER, "scenarios": [], "scenario_cpu": 1000}
    runner = Cold(zygote.level) if kind == "cold" else zygote
    done = runner.run("grade", payload, Limits(wall=60, stall=1.0, cpu_seconds=60))
    assert done.timed_out and done.why == "stall", (done.why, done.output[:200])
    assert b"[1]" in done.output   # the noise did arrive: it was not counted as progress


# A JSON object that is no record of the grading protocol, written to the result pipe every 0.2 s while the run spins.
NOT_A_RECORD = '''
import os, signal, sys, time
signal.setitimer(signal.ITIMER_PROF, 0)
_f = sys._getframe()
while _f is not None and "emit" not in _f.f_locals:
    _f = _f.f_back
_fd = _f.f_locals["emit"].__closure__[0].cell_contents.fileno()   # the result pipe
while True:
    _start = time.monotonic()
    while time.monotonic() - _start < 0.2:
        pass
    os.write(_fd, %r + b"\\n")
'''


@pytest.mark.slow
@pytest.mark.parametrize("line", [b"{}", b'{"kind": "nonsense"}'])
def test_a_json_object_that_is_no_record_of_the_protocol_is_not_progress(zygote, line):
    """Only a record the grading protocol takes is progress: a child that spins while it writes {} every 0.2 s was
    held for the whole wall limit (120 s in grading); the first line the protocol refuses garbles the run, so it ends there."""
    payload = {"setup": [], "cells": [["c", NOT_A_RECORD % line]], "driver": DRIVER, "scenarios": [], "scenario_cpu": 1000}
    run = run_child(payload, Limits(wall=30, stall=1.0, idle=5.0, cpu_seconds=60), zygote)
    assert run.why != "wall" and run.elapsed < 10, (run.why, run.elapsed)
    assert run.status == "garbled", (run.status, run.detail)


RLIMITS = """
import os, resource
def probe():
    names = ('CPU', 'AS', 'NPROC', 'FSIZE', 'NOFILE', 'CORE')
    found = {name: list(resource.getrlimit(getattr(resource, 'RLIMIT_' + name))) for name in names}
    for folder in ('/tmp', '/dev/shm'):
        size = os.statvfs(folder)
        found[folder] = size.f_blocks * size.f_frsize
    return found
"""


@pytest.mark.slow
def test_every_limit_reaches_a_run_cold_or_warm(zygote):
    """Limits is passed whole: each rlimit, and the size of /tmp and /dev/shm, is the Limits' own, cold and warm."""
    limits = Limits(wall=60, cpu_seconds=33, memory_bytes=3 << 30, processes=77, file_bytes=5 << 20, open_files=99,
                    scratch_bytes=48 << 20, shm_bytes=24 << 20)
    want = {"CPU": 33, "AS": 3 << 30, "NPROC": 77, "FSIZE": 5 << 20, "NOFILE": 99, "CORE": 0}
    for runner in (Cold(zygote.level), zygote):
        seen = probe(runner, RLIMITS, limits)
        assert seen == {**{k: [v, v] for k, v in want.items()}, "/tmp": 48 << 20, "/dev/shm": 24 << 20}, (runner, seen)


FORKS = """
import os, time
def probe():
    forks = 0
    try:
        for _ in range(100):
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            forks += 1
    except OSError:
        pass
    return forks
"""


@pytest.mark.slow
def test_the_graders_own_processes_do_not_count_against_a_runs_process_limit(zygote):
    """userns: with 40 processes of the grader's uid running outside, a run limited to 20 processes, cold or warm,
    still forks up to its limit less what its user namespace already holds. The limit is set inside the run's own user
    namespace (cold: prlimit in sandbox_argv; warm: boot.py after _own_user_namespace); set before bwrap made the
    namespace, it was also the namespace's ceiling on the grader's uid outside, and such a run forked none."""
    if zygote.level != "userns" or os.geteuid() == 0:
        pytest.skip("userns as a user who is not root (make test-rootless): the kernel enforces no RLIMIT_NPROC on uid 0")
    outside = [subprocess.Popen(["sleep", "120"]) for _ in range(40)]
    try:
        forks = {kind: probe(runner, FORKS, Limits(wall=60, cpu_seconds=60, processes=20))
                 for kind, runner in (("cold", Cold(zygote.level)), ("warm", zygote))}
    finally:
        for proc in outside:
            proc.kill()
            proc.wait()
    print(f"runs limited to 20 processes, with 40 of the grader's own outside, forked {forks}")
    assert forks == {"cold": 18, "warm": 19}, forks   # cold: bwrap's init and the run; warm: the run alone


FORK_ALL = """
import errno, os, time
def probe():
    forks = 0
    while True:
        try:
            pid = os.fork()
        except OSError as exc:
            return [forks, errno.errorcode[exc.errno]]
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        forks += 1
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["grading", "feedback"])
def test_a_run_forks_up_to_its_process_limit_and_no_further(zygote, kind):
    """A fork past RLIMIT_NPROC is refused (EAGAIN) and the run goes on; the limit is a few times what an honest run
    needs (limits.py): where the kernel does not group CPU time by session (no autogroup), each busy process of a
    run weighs as much as the grading process, and 255 of them starved it."""
    if zygote.level == "userns" and os.geteuid() == 0:
        pytest.skip("userns as root: the kernel enforces no RLIMIT_NPROC on uid 0 (make test-rootless runs it)")
    limits = CHILD if kind == "grading" else notebook_run.LIMITS
    seen = probe(zygote, FORK_ALL, dataclasses.replace(limits, wall=60, stall=None, idle=None, cpu_seconds=60))
    assert seen == [limits.processes - 1, "EAGAIN"], seen   # the run itself is the one more
    assert limits.processes <= 16, limits.processes


THREADS = """
def probe():
    import numpy
    a = numpy.ones((400, 400))
    a @ a   # OpenBLAS starts its threads (one per core) at its first product
    return [line.split()[1] for line in open('/proc/self/status') if line.startswith('Threads:')]
"""


@pytest.mark.slow
def test_numpy_runs_on_one_thread_in_a_run_cold_or_warm(zygote):
    """The sandbox sets OPENBLAS_NUM_THREADS and OMP_NUM_THREADS to 1: a run's task count does not grow with the
    grader's cores (OpenBLAS would start one thread per core, up to 64), so its process limit fits every machine."""
    for runner in (Cold(zygote.level), zygote):
        assert probe(runner, THREADS) == ["1"], runner


FONT_SEEN = """
from matplotlib import font_manager
def probe():
    return sorted({f.name for f in font_manager.fontManager.ttflist if f.name.startswith('CourseKit')})
"""


@pytest.mark.slow
@pytest.mark.parametrize("version", ["same", "other"])
def test_the_warm_parent_starts_from_the_graders_font_list_when_matplotlib_takes_it(monkeypatch, tmp_path, version):
    """The warm parent copies the grader's matplotlib font list instead of scanning the system's fonts in its fresh /tmp.
    A list doctored with a second name for one of matplotlib's own files shows which list the forks hold; a font whose
    file the sandbox cannot see (the grader's machine may have fonts its view lacks) is left out of the copy. A list
    of another version is refused by matplotlib itself, which then builds its own (and neither name is there)."""
    import matplotlib
    from matplotlib import font_manager

    from grader.runner import Warm, sandbox_level, warm as warm_module

    cached = json.loads((Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json").read_text())
    own = next(entry for entry in cached["ttflist"] if not entry["fname"].startswith("/"))   # under matplotlib's data folder
    unseen = tmp_path / "not-in-the-sandbox.ttf"   # a real font file here; the sandbox has its own /tmp
    unseen.write_bytes((Path(matplotlib.get_data_path()) / own["fname"]).read_bytes())
    cached["ttflist"] += [{**own, "name": "CourseKitDoctored"}, {**own, "name": "CourseKitUnseen", "fname": str(unseen)}]
    if version == "other":
        cached["_version"] = "0"
    doctored = tmp_path / f"fontlist-v{font_manager.FontManager.__version__}.json"
    doctored.write_text(json.dumps(cached))
    monkeypatch.setattr(warm_module, "font_list", lambda: open(doctored, "rb"))
    zygote = Warm(sandbox_level())
    try:
        seen = probe(zygote, FONT_SEEN)
    finally:
        zygote.close()
    assert seen == (["CourseKitDoctored"] if version == "same" else []), seen
