# The warm parent ("zygote"): namespace entry and forking. The grader passes this file's text to `python -I -c`
# inside the sandbox; it imports nothing from grader/. It imports what every run needs once (IPython, matplotlib,
# pandas, lab), then serves requests: each request forks a child that enters a sandbox of its own (below) and
# runs one grading task (child.py) or one notebook for the feedback page (notebook.py). The zygote itself never
# runs student code and never holds a payload: the child reads its payload after the fork.
#
# argv: level ("bwrap" | "userns" | "process"), the fd of a SOCK_SEQPACKET socket, the text of child.py, the text of notebook.py,
# the seccomp program of seccomp.py in base64 ("" on a machine it does not know: then only "process"), and the fd and
# file name of the grader's matplotlib font list ("-1" and "" if it has none).
# Request: JSON {kind: "grade" | "notebook", uid, rlimits: [[RLIMIT_ name, value]], scratch, shm, bridge, feed} + fds
# [payload in, results out] (+ [bridge in, bridge out] if bridge: a grading child and its reference server, bridge.py)
# (+ [feed in, feed out] if feed: the grading process's feed of held-back scenario items, feed.py).
# Reply: JSON {"pid": pid}. The child writes JSON lines to `results out` and ends; the grader watches it (watch.py).
#
# Level "bwrap": this process runs as root with capabilities, inside bubblewrap's allow-list view (read-only
# system, Python, venv and lab; no network). Each child, before any student code runs: new mount, IPC, UTS,
# network and pid namespaces; fresh size-capped tmpfs on /tmp and /dev/shm; its own /proc; rlimits; every
# capability dropped from the bounding set; a fresh session keyring; the uid the grader allocated for it;
# no-new-privs; the seccomp filter (no keyrings, locks, namespaces, ptrace, ...: see seccomp.py).
# So children share nothing with each other or with the zygote but the read-only view, and cannot signal
# each other through what the kernel shares beyond namespaces (keys, locks on the shared files).
#
# Level "userns" (no root): the same, but this process is root only inside the user namespace bwrap made (its
# capabilities reach the namespaces it owns, nothing of the host's), and the uid each child takes is STUDENT_UID
# in a user namespace of the child's own, mapped to the grader's one uid (see sandbox.py for what that leaves).
import base64
import ctypes
import gc
import importlib.util
import io
import json
import os
import resource
import select
import signal
import socket
import sys

LEVEL, SOCK_FD, CHILD_SOURCE, NOTEBOOK_SOURCE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
SECCOMP = base64.b64decode(sys.argv[5])
FONTS_FD, FONTS_NAME = int(sys.argv[6]), os.path.basename(sys.argv[7])
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x20000000, 0x40000000
CLONE_NEWUSER, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 0x10000000, 47, 4
HIDDEN_PROC = ("/proc/keys", "/proc/key-users")   # as sandbox.py's HIDDEN_PROC
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_PDEATHSIG, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 24, 1, 22, 2
SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine), 1


def _copy_font_list():
    """The grader's matplotlib font list, copied to where this process's matplotlib keeps its cache (notebook.py sets
    MPLCONFIGDIR), so that it is not built again from the system's fonts in this fresh /tmp (0.2-0.3 s of each start).
    Only the fonts whose files this view holds are kept: a font the grader's machine has and the sandbox does not see
    (a CJK font under /usr/share/fonts, say) is not offered, as a scan here would not find it. matplotlib checks the
    list's version itself and builds its own if the copy does not match."""
    if FONTS_FD < 0:
        return
    with open(FONTS_FD, "rb") as source:
        data = source.read()
    if not (FONTS_NAME.startswith("fontlist-") and FONTS_NAME.endswith(".json")):
        return
    try:
        fonts = json.loads(data)   # the grader's own cache file, never a student's
    except ValueError:
        return
    # matplotlib stores its own fonts' paths relative to its data folder (found here without importing it)
    data_path = os.path.join(os.path.dirname(importlib.util.find_spec("matplotlib").origin), "mpl-data")
    for key in ("ttflist", "afmlist"):
        if isinstance(fonts, dict) and isinstance(fonts.get(key), list):
            fonts[key] = [entry for entry in fonts[key] if isinstance(entry, dict)
                          and os.path.isfile(os.path.join(data_path, str(entry.get("fname", ""))))]
    folder = os.environ.setdefault("MPLCONFIGDIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "mpl"))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, FONTS_NAME), "w") as target:
        json.dump(fonts, target)


_copy_font_list()
NOTEBOOK = {"__name__": "grader_notebook"}   # the cell runner: imports IPython and matplotlib, makes its shell
exec(compile(NOTEBOOK_SOURCE, "<notebook>", "exec"), NOTEBOOK)

import matplotlib.pyplot as plt  # noqa: E402
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401

import lab  # noqa: E402,F401

libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(source, target, fstype, flags, data=None):
    _check(libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), ctypes.c_ulong(flags),
                      data and data.encode()), f"mount {target}")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _seccomp():
    """Install the filter on this (single-threaded, just forked) process; no-new-privs must be set."""
    program = SockFprog(len(SECCOMP) // 8, SECCOMP)
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) if SECCOMP else -1, "seccomp")


def _new_session_keyring():
    """Leave the zygote's session keyring (root's login keyring, under pam_keyinit) for an empty one of our own."""
    if SYS_KEYCTL is None or libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        raise OSError(ctypes.get_errno(), "new session keyring")


def _last_cap():
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        return int(handle.read())


def _mounts_under(folder):
    """Mount points below `folder` (not `folder` itself), outermost first, from this namespace's mountinfo."""
    with open("/proc/self/mountinfo") as handle:
        points = [line.split()[4].encode().decode("unicode_escape") for line in handle]
    below = sorted({p for p in points if p.startswith(folder.rstrip("/") + "/")}, key=lambda p: (p.count("/"), p))
    return [p for p in below if not any(p != q and p.startswith(q + "/") for q in below)]  # nested ones come along (MS_REC)


def enter_bwrap_child(req):
    """In the forked child (root): namespaces of its own, then fork; the grandchild drops to req['uid']."""
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    kept = _mounts_under("/tmp")  # the read-only view (venv, lab) of a repository that lives under /tmp
    stash = []
    for index, path in enumerate(kept):  # park them in the old /dev/shm before /tmp is replaced
        parked = f"/dev/shm/.kept-{index}"
        os.makedirs(parked, exist_ok=True)
        _mount(path, parked, None, MS_BIND | MS_REC)
        stash.append((parked, path))
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={req['scratch']},mode=1777")
    for parked, path in stash:
        os.makedirs(path, exist_ok=True)
        _mount(parked, path, None, MS_BIND | MS_REC)
        _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={req['shm']},mode=1777")
    alive_r, alive_w = os.pipe()   # held open by this process only: its end tells the first process below
    pid = os.fork()  # the first process in the new pid namespace: when it ends, everything it started ends
    if pid:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # an interrupt is for the run's cell; this one only holds it
        os.close(alive_r)
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    os.close(alive_w)
    # Killing this run's host process (what the grader sees) must end the namespace: it dies with its parent.
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    if select.select([alive_r], [], [], 0)[0]:   # the parent ended before the line above: so does this run
        os._exit(70)
    os.close(alive_r)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in HIDDEN_PROC:   # at level userns they would list the grader's own kernel keys (its uid is the run's)
        _mount("/dev/null", name, None, MS_BIND)
    socket.sethostname("sandbox")
    uid = req["uid"]
    if LEVEL == "userns":
        _own_user_namespace(uid)   # before the rlimits: RLIMIT_NPROC then counts this run's processes alone
    _limits(req)
    for cap in range(_last_cap() + 1):
        _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "drop capability")
    _new_session_keyring()  # as root, before the uid changes: the keyring belongs to root, charged to no sandbox uid
    if LEVEL == "bwrap":   # a user namespace denies setgroups: the grader's own groups stay (sandbox.py)
        os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from root to another uid: effective and permitted capabilities are cleared
    _drop_capabilities()   # in its own user namespace the uid was never root: cleared here instead
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _seccomp()  # before the payload is read: nothing of the student's runs without it
    with open("/proc/self/status") as handle:
        status = dict(line.split(":", 1) for line in handle if ":" in line)
    if int(status["CapEff"], 16) or int(status["CapPrm"], 16) or os.getuid() != uid or status["Seccomp"].strip() != "2":
        raise SystemExit("the sandbox did not drop its privileges")
    os.chdir("/tmp")


def _own_user_namespace(uid):
    """Level 'userns': bwrap mapped the grader's one uid to root here; a user namespace of this run's own maps it to
    `uid` (the mount, pid and other namespaces stay those made above, owned by the outer one)."""
    _check(libc.unshare(CLONE_NEWUSER), "unshare user namespace")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} 0 1"), ("gid_map", f"{uid} 0 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities():
    """Effective, permitted, inheritable and ambient capabilities all empty (capset, version 3)."""
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    _check(libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), (CapData * 2)()), "capset")


def enter_process_child(req):
    """Level 'process': its own session and scratch folder, rlimits; nothing more is possible without root."""
    os.setsid()
    scratch = os.path.join(os.environ["GRADER_SCRATCH"], f"run-{os.getpid()}")
    os.mkdir(scratch, 0o700)
    os.chdir(scratch)
    os.environ.update(HOME=scratch, TMPDIR=scratch, GRADER_SCRATCH=scratch)
    _limits(req)
    try:  # best effort: this level promises no isolation, but closes what an unprivileged process can
        _new_session_keyring()
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _seccomp()
    except OSError:
        pass


def _limits(req):
    """The run's rlimits, soft and hard alike (as limits.py's apply_rlimits)."""
    for name, value in req["rlimits"]:
        resource.setrlimit(getattr(resource, name), (value, value))


def serve(req, fds, listener):
    """In the forked child: enter the sandbox, read the payload, run it, report."""
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    payload_fd, result_fd, *more = fds
    bridge_fds, feed_fds = (more[:2], more[2:]) if req.get("bridge") else ([], more)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = sorted(fds)
    for low, high in zip([2, *keep], [*keep, 1 << 16]):  # close every fd but the ones this run was given
        os.closerange(low + 1, high)
    if bridge_fds:
        os.environ["GRADER_BRIDGE_FDS"] = ",".join(map(str, bridge_fds))
    if feed_fds:
        os.environ["GRADER_FEED_FDS"] = ",".join(map(str, feed_fds))
    if LEVEL in ("bwrap", "userns"):
        enter_bwrap_child(req)
    else:
        enter_process_child(req)
    with os.fdopen(payload_fd, "rb") as handle:
        payload = json.loads(handle.read())
    out = os.fdopen(result_fd, "w", buffering=1)

    def emit(record):
        out.write(json.dumps(record, default=repr) + "\n")
        out.flush()

    if req["kind"] == "grade":
        CHILD["grade"](payload, emit)
    else:
        NOTEBOOK["run_notebook"](payload, emit)
    out.close()


_figure = plt.figure()  # drawn once here, so that every child starts with fonts and the Agg renderer loaded
plt.plot([0, 1], [0, 1])
_figure.canvas.print_png(io.BytesIO())
plt.close("all")

CHILD = {"__name__": "grader_child"}
exec(compile(CHILD_SOURCE, "<child>", "exec"), CHILD)


def _reap(block):
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main():
    gc.freeze()  # what was imported stays out of the collector's reach: a child does not copy those pages by touching them
    listener = socket.socket(fileno=SOCK_FD)
    signal.signal(signal.SIGCHLD, lambda signum, frame: _reap(block=False))
    while True:
        _reap(block=False)  # ended runs are waited for, so that their CPU time is accounted to this process
        try:
            message, fds, _, _ = socket.recv_fds(listener, 1 << 16, 6)
        except OSError:
            message = b""
        if not message:
            _reap(block=True)
            return
        req = json.loads(message)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                serve(req, fds, listener)
            except BaseException:  # noqa: BLE001 - the grader sees a run that ended without 'done'
                code = 70
            os._exit(code)
        for fd in fds:
            os.close(fd)
        listener.send(json.dumps({"pid": pid}).encode())


main()
