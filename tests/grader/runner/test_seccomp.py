"""What namespaces do not separate is closed in every sandbox (seccomp filter, fresh session
keyring, a sweep of what sandbox uids leave in the kernel). Each check has a control that shows it can fail."""
import ast
import ctypes
import json
import os
import platform
import re
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, needs_level
from grader.runner import UID_BASE, Limits, Warm, kernel_state, leftovers, run_sandboxed, seccomp, sweep_all

bwrap_only = needs_level("bwrap")   # root: plain processes as other uids (the controls), and the sweep by uid
COLUMN = seccomp.ARCHES.get(platform.machine(), (0, 0))[0]
NR = {name: numbers[COLUMN] for table in (seccomp.DENIED, seccomp.LOCKS, seccomp.FILTERED, seccomp.NO_CLONE3)
      for name, numbers in table.items() if numbers[COLUMN] is not None}
LAB = str((ROOT / "lab" / "__init__.py").resolve())   # read-only in every sandbox, at the same path
DENY, LOCK, NOSYS = (f"E{name}" for name in ("PERM", "NOLCK", "NOSYS"))
NAMESPACES = {"newns": 0x20000, "newcgroup": 0x2000000, "newuts": 0x4000000, "newipc": 0x8000000,
              "newuser": 0x10000000, "newpid": 0x20000000, "newnet": 0x40000000}


# --- the program itself, on both architectures (an interpreter of the classic BPF it uses) -----------------

def verdict(program: bytes, arch: int, nr: int, *args: int) -> int:
    """What the filter returns for one system call (struct seccomp_data: nr, arch, ip, args[6])."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    code = [struct.unpack_from("<HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == seccomp.RET:
            return k
        if op == seccomp.LD_ABS:
            acc, pc = struct.unpack_from("<I", data, k)[0], pc + 1
            continue
        hit = {seccomp.JEQ: acc == k, seccomp.JGE: acc >= k, seccomp.JSET: bool(acc & k)}[op]
        pc += 1 + (jt if hit else jf)


def test_the_program_denies_what_it_lists_and_nothing_else():
    perm, nolck, nosys = (seccomp.RET_ERRNO | e for e in (seccomp.EPERM, seccomp.ENOLCK, seccomp.ENOSYS))
    ordinary = {"x86_64": (0, 1, 9, 202, 257, 231), "aarch64": (63, 64, 222, 98, 56, 94)}  # read write mmap futex openat exit_group
    for machine, (column, arch) in seccomp.ARCHES.items():
        def number(table, name):
            return table[name][column]

        run = lambda nr, *args: verdict(seccomp.PROGRAM, arch, nr, *args)  # noqa: E731
        assert [run(numbers[column]) for numbers in seccomp.DENIED.values() if numbers[column] is not None] == \
            [perm] * sum(numbers[column] is not None for numbers in seccomp.DENIED.values())
        assert run(number(seccomp.LOCKS, "flock")) == nolck and run(number(seccomp.NO_CLONE3, "clone3")) == nosys
        clone, unshare, fcntl = (number(seccomp.FILTERED, name) for name in ("clone", "unshare", "fcntl"))
        for flag in NAMESPACES.values():
            assert run(clone, flag | 17) == perm and run(unshare, flag) == perm, hex(flag)
        assert run(unshare, 0x80) == perm                          # CLONE_NEWTIME
        assert run(clone, 17) == run(clone, 0x3D0F00) == seccomp.RET_ALLOW   # fork, and a thread as glibc makes it
        assert run(unshare, 0x400) == seccomp.RET_ALLOW           # CLONE_FILES
        for cmd in seccomp.LOCK_COMMANDS:
            assert run(fcntl, 3, cmd) == run(fcntl, 3, cmd | (1 << 32)) == nolck  # the kernel reads an unsigned int
        assert [run(fcntl, 3, cmd) for cmd in seccomp.NOTIFY_COMMANDS] == [perm] * 3
        assert {run(fcntl, 3, cmd) for cmd in (0, 1, 2, 3, 4, 1030)} == {seccomp.RET_ALLOW}  # dup, fd flags, fl flags
        assert {run(nr) for nr in ordinary[machine]} == {seccomp.RET_ALLOW}
        madvise, preadv2 = (number(seccomp.FILTERED, name) for name in ("madvise", "preadv2"))
        assert [run(madvise, 0, 4096, advice) for advice in (20, 21)] == [perm] * 2     # MADV_COLD, MADV_PAGEOUT
        assert {run(madvise, 0, 4096, advice) for advice in (0, 4, 8, 14)} == {seccomp.RET_ALLOW}  # DONTNEED, FREE, HUGEPAGE
        assert run(preadv2, 3, 0, 1, 0, 0, 8) == run(preadv2, 3, 0, 1, 0, 0, 8 | 1) == perm   # RWF_NOWAIT
        assert run(preadv2, 3, 0, 1, 0, 0, 0) == run(preadv2, 3, 0, 1, 0, 0, 1) == seccomp.RET_ALLOW
    assert verdict(seccomp.PROGRAM, 0xC000003E, 0x40000000 | 39) == nosys            # x32 getpid
    for other in (0x40000003, 0x40000028, 0x800000B7):                               # i386, arm, aarch64 big-endian
        assert verdict(seccomp.PROGRAM, other, 39) == seccomp.RET_KILL_PROCESS


def _header_numbers(path: Path) -> dict[str, int]:
    text = path.read_text() if path.exists() else ""
    return {name: int(nr) for name, nr in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)}


@pytest.mark.parametrize("machine,header", [("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
                                            ("aarch64", "/usr/include/asm-generic/unistd.h")])
def test_the_syscall_tables_match_the_kernel_headers(machine, header):
    known = _header_numbers(Path(header))
    if not known:
        pytest.skip(f"{header} is not installed (linux-libc-dev)")
    column = seccomp.ARCHES[machine][0]
    ours = {name: numbers[column] for table in (seccomp.DENIED, seccomp.LOCKS, seccomp.FILTERED, seccomp.NO_CLONE3)
            for name, numbers in table.items() if name not in seccomp.NEWER_THAN_HEADERS or name in known}
    assert ours == {name: known.get(name) for name in ours}


def test_the_keyring_code_calls_keyctl_by_the_filters_number():
    # kernel_state keeps its own copy of keyctl's number so that it need not import the filter
    assert kernel_state.KEYCTL_NUMBERS == {machine: seccomp.DENIED["keyctl"][column] for machine, (column, _) in seccomp.ARCHES.items()}
    assert kernel_state.SYS_KEYCTL == seccomp.number("keyctl")
    # and the warm parent's program (boot.py, sent as text) joins its keyring by the same numbers
    boot = (ROOT / "grader" / "runner" / "boot.py").read_text()
    assert ast.literal_eval(re.search(r"^SYS_KEYCTL, .* = (\{[^}]*\})", boot, re.M).group(1)) == kernel_state.KEYCTL_NUMBERS
    # the check can fail: a copy that drifted from the table
    assert {**kernel_state.KEYCTL_NUMBERS, "aarch64": 218} != {m: seccomp.DENIED["keyctl"][c] for m, (c, _) in seccomp.ARCHES.items()}


# --- each denied call fails in each kind of sandbox; the same probe passes outside ---------------------------

PROBES = r'''
import ctypes, errno, fcntl, io, json, os, struct, subprocess, threading
_libc = ctypes.CDLL(None, use_errno=True)
_NR, _LAB, _NS = %(nr)r, %(lab)r, %(namespaces)r
_FLOCK = "@hhqqi4x"   # struct flock: type, whence, start, len, pid


def _sys(name, *args):
    ctypes.set_errno(0)
    result = _libc.syscall(_NR[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def _fcntl(cmd, arg, path=_LAB):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, cmd, arg)
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
    finally:
        os.close(fd)


def _on_lab(name, *args):
    fd = os.open(_LAB, os.O_RDONLY)
    try:
        return _sys(name, fd, *args)
    finally:
        os.close(fd)


def _flock():
    fd = os.open(_LAB, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
    finally:
        os.close(fd)


def _forks():
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return "ok" if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7 else "fork failed"


def _life():
    import numpy, pandas, sqlite3
    import matplotlib
    from matplotlib.figure import Figure
    ran = []
    thread = threading.Thread(target=ran.append, args=[1])
    thread.start()
    thread.join()
    figure = Figure()
    figure.add_subplot().plot([0, 1], [1, 0])
    figure.savefig(io.BytesIO(), format="png")
    db = sqlite3.connect(":memory:")
    db.execute("create table t (x)")
    return {"thread": "ok" if ran else "no", "fork": _forks(), "numpy": "ok" if (numpy.ones((300, 300)) @ numpy.ones((300, 300))).sum() == 300 ** 3 else "no",
            "pandas": "ok" if pandas.DataFrame({"a": [1, 2]}).a.sum() == 3 else "no", "matplotlib": "ok",
            "subprocess": "ok" if subprocess.run(["/usr/bin/true"]).returncode == 0 else "no",
            "sqlite_memory": "ok", "read_lab": "ok" if open(_LAB).read() else "no", "fcntl_getfd": _fcntl(fcntl.F_GETFD, 0),
            "fcntl_dupfd": _fcntl(fcntl.F_DUPFD_CLOEXEC, 100), "unshare_files": _sys("unshare", 0x400),
            "madvise_dontneed": _sys("madvise", 0, 0, 4), "preadv2": _on_lab("preadv2", None, 0, 0, 0, 0)}


def probes():
    lock = lambda kind: struct.pack(_FLOCK, kind, 0, 0, 1, 0)
    found = {
        "add_key": _sys("add_key", b"user", b"seccomp-probe", b"x", 1, -2), "keyctl": _sys("keyctl", 0, -3, 0),
        "request_key": _sys("request_key", b"user", b"seccomp-probe-absent", None, 0),
        "ptrace": _sys("ptrace", 2, 0x3FFFFFF0, 0, 0), "process_vm_readv": _sys("process_vm_readv", os.getpid(), None, 0, None, 0, 0),
        "process_vm_writev": _sys("process_vm_writev", os.getpid(), None, 0, None, 0, 0), "bpf": _sys("bpf", 0xFFFF, None, 0),
        "setns": _sys("setns", -1, 0), "mount": _sys("mount", 1, 1, 1, 0, None), "umount2": _sys("umount2", 1, 0),
        "pivot_root": _sys("pivot_root", 1, 1), "open_tree": _sys("open_tree", -1, 1, 0),
        "move_mount": _sys("move_mount", -1, 1, -1, 1, 0), "fsopen": _sys("fsopen", 1, 0),
        "fsconfig": _sys("fsconfig", -1, 0, None, None, 0), "fsmount": _sys("fsmount", -1, 0, 0),
        "fspick": _sys("fspick", -1, 1, 0), "mount_setattr": _sys("mount_setattr", -1, 1, 0, None, 0),
        "perf_event_open": _sys("perf_event_open", None, 0, -1, -1, 0), "userfaultfd": _sys("userfaultfd", 0xFFFF),
        "kexec_load": _sys("kexec_load", 0, 0, None, 0xFFFF), "kexec_file_load": _sys("kexec_file_load", -1, -1, 0, None, 0xFFFF),
        "init_module": _sys("init_module", None, 0, b""), "finit_module": _sys("finit_module", -1, b"", 0),
        "delete_module": _sys("delete_module", 1, 0), "io_uring_setup": _sys("io_uring_setup", 0, None),
        "io_uring_enter": _sys("io_uring_enter", -1, 0, 0, 0, None, 0), "io_uring_register": _sys("io_uring_register", -1, 0, None, 0),
        "inotify_init1": _sys("inotify_init1", 0), "fanotify_init": _sys("fanotify_init", 0, 0),
        "flock": _flock(), "clone3": _sys("clone3", None, 0),
        "fadvise64": _on_lab("fadvise64", 0, 0, 4), "readahead": _on_lab("readahead", 0, 4096),
        "mincore": _sys("mincore", 0, 4096, None), "process_madvise": _sys("process_madvise", -1, None, 0, 21, 0),
        "cachestat": _sys("cachestat", -1, None, None, 0), "madvise_pageout": _sys("madvise", 0, 4096, 21),
        "preadv2_nowait": _on_lab("preadv2", None, 0, 0, 0, 8),
        "fcntl_getlk": _fcntl(5, lock(fcntl.F_WRLCK)), "fcntl_setlk": _fcntl(6, lock(fcntl.F_RDLCK)),
        "fcntl_setlkw": _fcntl(7, lock(fcntl.F_UNLCK)), "fcntl_getlk64": _fcntl(12, lock(fcntl.F_WRLCK)),
        "fcntl_setlk64": _fcntl(13, lock(fcntl.F_RDLCK)), "fcntl_setlkw64": _fcntl(14, lock(fcntl.F_UNLCK)),
        "fcntl_ofd_getlk": _fcntl(36, lock(fcntl.F_WRLCK)), "fcntl_ofd_setlk": _fcntl(37, lock(fcntl.F_RDLCK)),
        "fcntl_ofd_setlkw": _fcntl(38, lock(fcntl.F_UNLCK)), "fcntl_setlease": _fcntl(1024, fcntl.F_UNLCK),
        "fcntl_getlease": _fcntl(1025, 0), "fcntl_notify": _fcntl(1026, 0, os.path.dirname(_LAB)),
        "setsid": _sys("setsid"),   # last: outside, it makes this probe a session of its own (harmless here)
    }
    if "inotify_init" in _NR:
        found["inotify_init"] = _sys("inotify_init")
    for name, flag in _NS.items():  # flags that fail before anything is created: CLONE_THREAD without CLONE_SIGHAND, bit 0
        found[f"clone_{name}"], found[f"unshare_{name}"] = _sys("clone", flag | 0x10000, 0, None, None, 0), _sys("unshare", flag | 1)
    return {"denied": found, "life": _life()}
''' % {"nr": NR, "lab": LAB, "namespaces": NAMESPACES}


def denials() -> dict[str, str]:
    """What each probe gets from the filter."""
    expected = {name: DENY for name in seccomp.DENIED if name in NR}
    expected.update({"flock": LOCK, "clone3": NOSYS, "fcntl_setlease": DENY, "fcntl_getlease": DENY, "fcntl_notify": DENY,
                     "madvise_pageout": DENY, "preadv2_nowait": DENY})
    expected.update({f"fcntl_{cmd}": LOCK for cmd in ("getlk", "setlk", "setlkw", "getlk64", "setlk64", "setlkw64",
                                                      "ofd_getlk", "ofd_setlk", "ofd_setlkw")})
    expected.update({f"{call}_{name}": DENY for call in ("clone", "unshare") for name in NAMESPACES})
    return expected


def host_switched_off() -> set[str]:
    """Calls this kernel refuses even to root (sysctls), so that outside they fail like inside."""
    def sysctl(name):
        try:
            return int(Path(f"/proc/sys/kernel/{name}").read_text())
        except (OSError, ValueError):
            return 0
    return ({"kexec_load", "kexec_file_load"} if sysctl("kexec_load_disabled") else set()) | \
        ({"init_module", "finit_module", "delete_module"} if sysctl("modules_disabled") else set()) | \
        ({"io_uring_setup"} if sysctl("io_uring_disabled") == 2 else set())


def probe_outside() -> dict:
    done = subprocess.run([sys.executable, "-I", "-c", PROBES + "\nprint(json.dumps(probes()))"], capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": "/tmp"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def probe_cold(level: str | None = None) -> dict:
    code = PROBES + "\nos.write(int(os.environ['GRADER_RESULT_FD']), json.dumps(probes()).encode())"
    done = run_sandboxed([sys.executable, "-I", "-c", code], Limits(wall=120), level=level)
    assert done.output, done.stderr.decode()[-2000:]
    return json.loads(done.output)


def grade_payload(cell: str, driver: str = "def observe(ns, ops):\n    return ns['probe']()\n") -> dict:
    return {"setup": [], "cells": [["c", cell]], "driver": driver, "scenarios": [{"name": "p", "ops": []}],
            "scenario_cpu": 60}


def run_grade(zygote: Warm, cell: str, timeout: float = 120):
    done = zygote.run("grade", grade_payload(cell), Limits(wall=timeout, cpu_seconds=120))
    records = [json.loads(line) for line in done.output.splitlines()]
    assert records[0] == {"kind": "cells", "errors": {}}, records
    return records[1]["obs"]


def probe_warm_grade(zygote: Warm) -> dict:
    return run_grade(zygote, PROBES + "\nprobe = probes\n")


def probe_warm_notebook(zygote: Warm) -> dict:
    payload = {"cells": [{"index": 0, "source": PROBES + "\nprint('PROBES ' + json.dumps(probes()))"}]}
    done = zygote.run("notebook", payload, Limits(wall=120, cpu_seconds=120))
    records = [json.loads(line) for line in done.output.splitlines()]
    text = "".join(o.get("text", "") for r in records if r["kind"] == "cell" for o in r["outputs"])
    assert "PROBES " in text, records
    return json.loads(text.split("PROBES ", 1)[1])



@pytest.mark.slow
@bwrap_only
def test_outside_the_sandbox_every_probe_gets_through():
    """The control: as root without the filter, no probe gets the answer the filter gives (so each can fail)."""
    seen, expected, off = probe_outside(), denials(), host_switched_off()
    assert set(seen["denied"]) == set(expected)
    same = {name for name, result in seen["denied"].items() if result == expected[name] and name not in off}
    assert same == set(), {name: seen["denied"][name] for name in same}
    assert set(seen["life"].values()) == {"ok"}, seen["life"]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["grading child", "feedback run", "cold sandbox"])
def test_each_denied_call_fails_in_the_sandbox_and_life_goes_on(zygote, where):
    seen = {"grading child": probe_warm_grade, "feedback run": probe_warm_notebook}.get(where, lambda z: probe_cold(z.level))(zygote)
    assert seen["denied"] == denials()
    assert set(seen["life"].values()) == {"ok"}, seen["life"]


# --- a relay between two sandboxes that run at the same time: through a key, through byte-range locks ---------

RELAY_TEMPLATE = r'''
import ctypes, errno, fcntl, os, struct, time
_libc = ctypes.CDLL(None, use_errno=True)
_ADD_KEY, _KEYCTL, _LAB = %(add_key)d, %(keyctl)d, %(lab)r
_FLOCK, _BASE = "@hhqqi4x", 1 << 40   # a byte of the message at offset _BASE + 256 * index + byte


def publish(channel, message):
    """Make `message` visible to every other process; the kernel's answer."""
    data = message.encode()
    if channel == "key":  # a user key in this process's keyring, that anyone may view and read
        key = _libc.syscall(_ADD_KEY, b"user", b"relay-probe", data, ctypes.c_size_t(len(data)), ctypes.c_long(-2))
        if key < 0:
            return errno.errorcode[ctypes.get_errno()]
        _libc.syscall(_KEYCTL, ctypes.c_long(5), ctypes.c_long(key), ctypes.c_long(0x3F3F3F3F))  # KEYCTL_SETPERM
        return "ok"
    global _held
    _held = os.open(_LAB, os.O_RDONLY)  # read locks on a read-only file: they last while this fd is open
    try:
        for index, byte in enumerate(data):
            fcntl.fcntl(_held, fcntl.F_SETLK, struct.pack(_FLOCK, fcntl.F_RDLCK, 0, _BASE + 256 * index + byte, 1, 0))
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "ok"


def look(channel):
    """What another process published, or ''."""
    if channel == "key":
        for line in open("/proc/keys"):
            if "relay-probe" in line:
                buffer = ctypes.create_string_buffer(4096)
                size = _libc.syscall(_KEYCTL, ctypes.c_long(11), ctypes.c_long(int(line.split()[0], 16)), buffer, ctypes.c_long(4096))
                return buffer.raw[:size].decode() if size > 0 else ""
        return ""
    fd, found = os.open(_LAB, os.O_RDONLY), bytearray()
    try:
        for index in range(4096):
            answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(_FLOCK, fcntl.F_WRLCK, 0, _BASE + 256 * index, 256, 0))
            kind, _, start = struct.unpack(_FLOCK, answer)[:3]
            if kind == fcntl.F_UNLCK:
                break
            found.append(start - _BASE - 256 * index)
    except OSError:
        pass
    finally:
        os.close(fd)
    return found.decode(errors="replace")


def produce(channel, message, hold):
    started, said = time.time(), publish(channel, message)
    time.sleep(hold)
    return {"said": said, "from": started, "to": time.time()}


def consume(channel, wait):
    started = time.time()
    while True:
        got = look(channel)
        if got or time.time() > started + wait:
            return {"got": got, "from": started, "to": time.time()}
        time.sleep(0.05)
'''
RELAY = RELAY_TEMPLATE % {"add_key": NR["add_key"], "keyctl": NR["keyctl"], "lab": LAB}
# The controls' plain processes run as other uids, which may not reach the checkout (a clone in a 0700 folder):
# their read-only file is one every uid can read.
RELAY_ANYONE = RELAY_TEMPLATE % {"add_key": NR["add_key"], "keyctl": NR["keyctl"], "lab": "/etc/passwd"}
MESSAGE = "def step(self): return self.reference_answer()  # TODO 3"


def as_uid(uid: int, call: str) -> tuple[int, int]:
    """Fork a plain process (no sandbox, no filter) that runs RELAY's `call` as `uid`; returns (pid, read fd)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            scope = {}
            exec(RELAY_ANYONE, scope)
            os.write(write, json.dumps(eval(call, scope)).encode())
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def collect(pid: int, read: int) -> dict:
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@bwrap_only
@pytest.mark.parametrize("channel", ["key", "lock"])
def test_two_plain_processes_relay_a_string(channel):
    """The control: the same producer and consumer, as two sandbox uids without the sandbox, do relay."""
    producer = as_uid(UID_BASE + 11, f"produce({channel!r}, {MESSAGE!r}, 10)")
    consumer = collect(*as_uid(UID_BASE + 12, f"consume({channel!r}, 10)"))
    os.kill(producer[0], 9)
    os.waitpid(producer[0], 0)
    os.close(producer[1])
    assert consumer["got"] == MESSAGE


@pytest.mark.slow
@pytest.mark.parametrize("channel", ["key", "lock"])
def test_two_sandboxes_at_the_same_time_relay_nothing(zygote, channel):
    results = {}

    def run(role, call):
        results[role] = run_grade(zygote, RELAY + f"\ndef probe():\n    return {call}\n")

    producer = threading.Thread(target=run, args=("producer", f"produce({channel!r}, {MESSAGE!r}, 3)"))
    consumer = threading.Thread(target=run, args=("consumer", f"consume({channel!r}, 3)"))
    producer.start()
    consumer.start()
    producer.join()
    consumer.join()
    made, seen = results["producer"], results["consumer"]
    assert seen["from"] < made["to"] and made["from"] < seen["to"]  # they did run at the same time
    assert made["said"] == {"key": DENY, "lock": LOCK}[channel] and seen["got"] == ""


# --- the session keyring of the grader (root's login keyring, under pam_keyinit) is not the sandbox's ----------

IN_LOGIN_KEYRING = r'''
import ctypes, json, os, struct, sys
sys.path.insert(0, %(root)r)
sys.path.insert(0, %(helpers)r)
sys.path.insert(0, %(tests)r)
import test_seccomp as t
from grader.runner import Limits, Warm, run_sandboxed
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
keyctl = lambda *args: libc.syscall(t.NR["keyctl"], *[L(a) if isinstance(a, int) else a for a in args])
ring = keyctl(1, b"grader-login-probe")                       # KEYCTL_JOIN_SESSION_KEYRING, as pam_keyinit does
key = libc.syscall(t.NR["add_key"], b"user", b"instructor-secret", b"the instructor's token", ctypes.c_size_t(22), L(-3))
LOOK = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
def attempt(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
def listing():
    try:
        return open("/proc/keys").read()
    except OSError:   # hidden (a sandbox binds /dev/null over it)
        return ""
def probe():
    buffer = ctypes.create_string_buffer(256)
    return {"listed": "instructor-secret" in listing(),
            "read": attempt(libc.syscall(%%(keyctl)d, L(11), L(%%(key)d), buffer, L(256))),
            "added": attempt(libc.syscall(%%(add_key)d, b"user", b"planted", b"x", ctypes.c_size_t(1), L(-3))),
            "revoked": attempt(libc.syscall(%%(keyctl)d, L(3), L(%%(key)d)))}
""" %% {"keyctl": t.NR["keyctl"], "add_key": t.NR["add_key"], "key": key}
seen = {}
read, write = os.pipe()
pid = os.fork()
if pid == 0:  # the control: a plain child as a sandbox uid, in the login keyring (only the read-only probes)
    os.setgroups([]); os.setresgid(%(uid)d, %(uid)d, %(uid)d); os.setresuid(%(uid)d, %(uid)d, %(uid)d)
    scope = {}
    exec(LOOK.replace('"revoked"', '"not_revoked"').replace("L(3)", "L(0)").replace('L(-3)))', 'L(-2)))'), scope)
    os.write(write, json.dumps(scope["probe"]()).encode())
    os._exit(0)
os.close(write)
seen["plain"] = json.loads(os.read(read, 4096))
os.waitpid(pid, 0)
done = run_sandboxed([sys.executable, "-I", "-c", LOOK + "\nimport os, json\nos.write(int(os.environ['GRADER_RESULT_FD']), json.dumps(probe()).encode())"], Limits(wall=60), level=%(level)r)
seen["cold"] = json.loads(done.output)
warm = Warm(%(level)r)
seen["warm"] = t.run_grade(warm, LOOK)
warm.close()
buffer, members = ctypes.create_string_buffer(256), ctypes.create_string_buffer(64)
size, count = keyctl(11, key, buffer, 256), keyctl(11, ring, members, 64)   # KEYCTL_READ: the value; the ring's members
seen["after"] = {"value": buffer.raw[:max(size, 0)].decode(), "ring": list(struct.unpack(f"{max(count, 0) // 4}i", members.raw[:max(count, 0)]))}
seen["key"] = key
print(json.dumps(seen))
'''


@pytest.mark.slow
@bwrap_only
@pytest.mark.parametrize("level", ["bwrap", pytest.param("userns", marks=needs_level("userns"))])
def test_a_sandbox_does_not_possess_the_graders_session_keyring(level):
    """At userns the run's uid outside is the grader's own: the keys are then not even listed (/proc/keys hidden)."""
    code = IN_LOGIN_KEYRING % {"root": str(ROOT), "tests": str(Path(__file__).parent), "helpers": str(ROOT / "tests"),
                               "uid": UID_BASE + 13, "level": level}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT, env=os.environ)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["plain"] == {"listed": True, "read": "ok", "added": "ok", "not_revoked": "ok"}  # the control sees and uses it
    for where in ("cold", "warm"):
        assert seen[where] == {"listed": False, "read": DENY, "added": DENY, "revoked": DENY}, where
    assert seen["after"] == {"value": "the instructor's token", "ring": [seen["key"]]}  # unread, unrevoked, nothing added


# --- the sweep: what sandbox uids leave in the kernel goes ---------------------------------------------------

def plant(uid: int) -> int:
    """As `uid`, outside any sandbox: a key in its user keyring, a SysV segment, semaphore set and queue, and a
    process left running. Returns that process's pid."""
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        key = libc.syscall(NR["add_key"], b"user", b"planted", b"reference", ctypes.c_size_t(9), ctypes.c_long(-4))
        made = [key, libc.shmget(0x5EED00 + uid % 256, 4096, 0o1600), libc.semget(0x5EED00 + uid % 256, 1, 0o1600),
                libc.msgget(0x5EED00 + uid % 256, 0o1600)]
        if os.fork() == 0:
            os.setsid()
            time.sleep(300)
        os._exit(0 if min(made) >= 0 else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    return pid


@pytest.mark.slow
@bwrap_only
def test_the_sweep_removes_keys_ipc_and_processes_a_sandbox_uid_left():
    uid = UID_BASE + 17
    plant(uid)
    found = leftovers()
    assert uid in found["processes"] and found["keys"].get(uid, 0) >= 1   # the checker sees what was planted
    assert sorted(kind for kind, _ in found["ipc"][uid]) == ["msg", "sem", "shm"]
    after = sweep_all()
    assert after == {"processes": {}, "keys": {}, "ipc": {}}


# --- one submission's TODO children never run at the same time ---------------------------------------------

@pytest.mark.slow
def test_one_submissions_todo_children_run_one_after_another(monkeypatch):
    """Two children of one submission (each with its reference server) are never alive together."""
    from grader import editions, grade, sample_submissions
    from grader.assignment import get
    grader = grade.Grader("02_decode_scheduling")
    running, most, calls, lock = [0], [0], [0], threading.Lock()
    real = grade.Grader._run_bridged   # every bridged pair: a TODO's child and its reference server

    def counted(self, task, *args, **kwargs):
        with lock:
            running[0] += 1
            calls[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.2)  # long enough for a sibling started in parallel to overlap
            return real(self, task, *args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(grade.Grader, "_run_bridged", counted)
    answers = {gid: src + "\n# mine\n" for gid, src in editions.reference_answers("02_decode_scheduling").items()}
    bug = next(m for m in get("02_decode_scheduling").mutants if m.answer_id == "todo1")
    verdicts = grader.grade(answers | {"todo1": bug.apply(answers["todo1"])})
    assert [v.score == v.points for v in verdicts] == [False, True, True, True]
    assert calls[0] >= 4 and most[0] == 1, "each TODO apart (and the wrong one's failing cases cut down): one after the other"
    before = calls[0]
    # stubs of the student's own (a stub as released is not run: its verdict ships with the assignment)
    stubs = grader.grade({gid: src.replace("raise NotImplementedError()", "raise NotImplementedError('mine')")
                          for gid, src in sample_submissions.release_answers("02_decode_scheduling").items()})
    assert all(v.score == 0 for v in stubs) and grader.as_released == 0
    assert calls[0] >= before + 4 and most[0] == 1, "four stubs, each apart (and any failing case cut down)"
