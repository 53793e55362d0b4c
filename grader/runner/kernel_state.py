"""Kernel state that is not namespaced and can outlive a sandbox's processes: keyrings and SysV IPC.

A run starts with a fresh session keyring of its own (never its parent's, e.g. root's login keyring), and
the sweep finds and removes keys and IPC objects a sandbox uid left behind. Processes are swept in
grader/runner/sandbox.py; the seccomp filter (grader/runner/seccomp.py) keeps a sandbox from making keys in the first place.
"""
from __future__ import annotations

import contextlib
import ctypes
import platform
import shutil
import subprocess
import time

# keyctl's number per machine, as seccomp.py's tables have it (test_seccomp checks they agree): kept here so that
# the keyring code does not import the filter, and the sandbox, which sweeps keys, stays one import level lower
KEYCTL_NUMBERS = {"x86_64": 250, "aarch64": 219}
SYS_KEYCTL = KEYCTL_NUMBERS.get(platform.machine())
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_INVALIDATE = 0, 1, 7, 21
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -4, -5
IPC_RMID = 0
_libc = ctypes.CDLL(None, use_errno=True)

def new_session_keyring() -> bool:
    """Join a new anonymous session keyring (KEYCTL_JOIN_SESSION_KEYRING, NULL); True if it worked."""
    return SYS_KEYCTL is not None and _libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) > 0


def keys_by_uid() -> dict[int, int]:
    """uid -> keys it owns (keyrings included), from /proc/key-users; empty where keys are not built in."""
    found = {}
    with contextlib.suppress(OSError), open("/proc/key-users") as handle:
        for line in handle:  # "  1000:     5 5/5 4/200 37/20000"
            uid, rest = line.split(":", 1)
            found[int(uid)] = int(rest.split()[1].split("/")[0])
    return found


def ipc_objects() -> list[tuple[str, int, int]]:
    """(kind, id, uid) for every SysV IPC object of this IPC namespace, once per owner and creator uid."""
    found = []
    for kind in ("shm", "sem", "msg"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}") as handle:
            header = handle.readline().split()
            for line in handle:
                row = dict(zip(header, line.split()))
                ident = int(row["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"])
                found += [(kind, ident, uid) for uid in sorted({int(row["uid"]), int(row["cuid"])})]
    return found


def remove_ipc(kind: str, ident: int) -> None:
    """IPC_RMID, as root (a segment still attached goes once its last process detaches)."""
    call = {"shm": lambda: _libc.shmctl(ident, IPC_RMID, None), "sem": lambda: _libc.semctl(ident, 0, IPC_RMID),
            "msg": lambda: _libc.msgctl(ident, IPC_RMID, None)}[kind]
    call()


def _clear_own_keyrings() -> None:
    """In a helper that runs as the swept uid (a key yields to its owner, not to root as such): empty and
    invalidate its user and user-session keyrings, the two that outlive its processes."""
    # Both are looked up first: a lookup after one is invalidated would make a fresh pair.
    rings = [_libc.syscall(SYS_KEYCTL, KEYCTL_GET_KEYRING_ID, spec, 0) for spec in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING)]
    for ring in rings:
        _libc.syscall(SYS_KEYCTL, KEYCTL_CLEAR, ring)
    for ring in rings:
        _libc.syscall(SYS_KEYCTL, KEYCTL_INVALIDATE, ring)  # collected now, not after the 5-minute delay


def clear_keys(uid: int, wait: float = 5.0) -> int:
    """Remove the keys `uid` left in its user keyrings; returns how many keys it still owns afterwards."""
    if SYS_KEYCTL is not None and uid in keys_by_uid():
        # The work happens between fork and exec, after the switch to `uid` (the interpreter may sit where
        # that uid cannot read, e.g. under /root); what is executed then is only `true`.
        subprocess.run([shutil.which("true", path="/usr/bin:/bin") or "/bin/true"], user=uid, group=uid, extra_groups=[],
                       preexec_fn=_clear_own_keyrings, env={}, cwd="/", timeout=60, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    deadline = time.monotonic() + wait
    while uid in keys_by_uid() and time.monotonic() < deadline:  # the kernel's key collector runs asynchronously
        time.sleep(0.05)
    return keys_by_uid().get(uid, 0)


def sweep_uid(uid: int) -> None:
    """Remove the keys and the IPC objects of `uid` (its processes are already gone)."""
    clear_keys(uid)
    for kind, ident, owner in ipc_objects():
        if owner == uid:
            remove_ipc(kind, ident)
