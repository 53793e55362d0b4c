"""The warm parent: each fork is a sandbox of its own; nothing one run leaves is seen by the next."""
import json

import pytest

from conftest import ROOT
from grader.runner import UID_BASE, UID_COUNT, Limits
from grader.runner.sandbox import processes_of

DRIVER = "def observe(ns, ops):\n    return ns['probe']()\n"

LEAVE = """
import ctypes, os, subprocess
def probe():
    open('/tmp/left-behind', 'w').write('x')
    open('/dev/shm/left-behind', 'w').write('x')
    libc = ctypes.CDLL(None)
    segment = libc.shmget(0x5eed, 4096, 0o1666)      # IPC_CREAT | 0666: a SysV segment that would outlive us
    subprocess.Popen(['sleep', '600'], start_new_session=True)  # and a process that tries to
    status = dict(line.split(':', 1) for line in open('/proc/self/status') if ':' in line)
    return {'uid': os.getuid(), 'pid': os.getpid(), 'caps': [status['CapEff'].strip(), status['CapPrm'].strip(),
            status['CapBnd'].strip()], 'no_new_privs': status['NoNewPrivs'].strip(), 'segment': segment >= 0,
            'grader': os.path.exists(%(grader)r), 'solutions': os.path.exists(%(solutions)r)}
"""

LOOK = """
import os
def probe():
    shm = open('/proc/sysvipc/shm').read()
    sleeping = [p for p in os.listdir('/proc') if p.isdigit() and open(f'/proc/{p}/cmdline').read().startswith('sleep')]
    return {'uid': os.getuid(), 'tmp': os.path.exists('/tmp/left-behind'), 'shm': os.path.exists('/dev/shm/left-behind'),
            'segment': '5eed' in shm or str(0x5eed) in shm, 'sleeping': sleeping}
"""


def probe(zygote, cell):
    payload = {"setup": [], "cells": [["c", cell]], "driver": DRIVER, "scenarios": [{"name": "p", "ops": []}],
               "scenario_timeout": 5}
    done = zygote.run("grade", payload, Limits(wall=60, cpu_seconds=60))
    records = [json.loads(line) for line in done.output.splitlines()]
    assert records[0] == {"kind": "cells", "errors": {}}, records
    return records[1]["obs"]



def test_a_fork_drops_every_privilege_and_sees_no_instructor_file(zygote):
    first = probe(zygote, LEAVE % {"grader": str(ROOT / "grader"), "solutions": str(ROOT / "solutions")})
    assert UID_BASE <= first["uid"] < UID_BASE + UID_COUNT and first["pid"] == 1  # its own uid, its own pid namespace
    assert first["caps"] == ["0000000000000000"] * 3 and first["no_new_privs"] == "1"
    assert first["grader"] is False and first["solutions"] is False and first["segment"] is True
    assert processes_of(first["uid"]) == []  # its background process ended with it


def test_nothing_a_fork_leaves_reaches_the_next(zygote):
    first = probe(zygote, LEAVE % {"grader": "/", "solutions": "/"})
    second = probe(zygote, LOOK)
    assert second["uid"] != first["uid"]
    assert second == {"uid": second["uid"], "tmp": False, "shm": False, "segment": False, "sleeping": []}


def test_a_hung_fork_is_stopped_from_outside(zygote):
    """A run that spins without reporting is ended by the stall limit, and the warm parent goes on serving."""
    payload = {"setup": [], "cells": [["c", "import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)\nwhile True:\n    pass\n"]],
               "driver": DRIVER, "scenarios": [], "scenario_timeout": 1000}
    done = zygote.run("grade", payload, Limits(wall=60, stall=1.0, cpu_seconds=60))
    assert done.timed_out and done.why == "stall"
    assert probe(zygote, LOOK)["tmp"] is False
