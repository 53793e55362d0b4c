"""The seccomp filter of every sandboxed run, as a classic BPF program built here (no libseccomp needed).

It closes the kernel state that namespaces do not separate: keyrings, ptrace and cross-process memory, BPF,
new namespaces, mounts, perf, userfaultfd, module and kexec loading, io_uring, and the lock and notification
relays on shared read-only inodes (flock, POSIX/OFD byte-range locks, leases, dnotify, inotify, fanotify), and
the calls that evict pages of the shared page cache or ask which are cached (a relay between runs that read the
same files; timing a read remains, see docs/architecture.md).
Everything else is allowed. The program checks the architecture first: x86_64 and aarch64 have a table
each; any other (i386 `int 0x80`, arm32 compat) kills the process, and x86_64's x32 numbers are refused.
grader/runner/boot.py installs it in each forked run; bwrap's --seccomp installs it for a cold run.
"""
from __future__ import annotations

import base64
import ctypes
import os
import platform
import struct

EPERM, ENOLCK, ENOSYS = 1, 37, 38
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, BPF_JMP|{JEQ,JGE,JSET}|K, BPF_RET|K
NR, ARCH = 0, 4                                               # offsets in struct seccomp_data
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def arg(index: int) -> int:
    """Offset of the low 32 bits of syscall argument `index` (both architectures are little-endian)."""
    return 16 + 8 * index


# Namespace flags: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also takes NEWTIME
# (0x80, which in clone's flags is part of the exit signal instead).
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
UNSHARE_NAMESPACES = CLONE_NAMESPACES | 0x80
# fcntl: F_GETLK, F_SETLK, F_SETLKW, their 32-bit-ABI 64 twins, F_OFD_GETLK/SETLK/SETLKW; then leases, F_NOTIFY.
LOCK_COMMANDS = (5, 6, 7, 12, 13, 14, 36, 37, 38)
NOTIFY_COMMANDS = (1024, 1025, 1026)

# name -> (x86_64 number, aarch64 number); None where the architecture lacks the call.
DENIED = {
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "bpf": (321, 280), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "open_tree": (428, 428),
    "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "mount_setattr": (442, 442), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "inotify_init": (253, None),
    "inotify_init1": (294, 26), "fanotify_init": (300, 262),
    # the page cache of the read-only view is shared by every run: a run that evicts pages (fadvise, process_madvise)
    # or asks which are cached (mincore, cachestat) can leave a message for a later run (issue 39's red team relayed
    # a TODO's body from one cell's child to another's); reading pages, and timing reads, cannot be refused
    "fadvise64": (221, 223), "readahead": (187, 213), "mincore": (27, 232), "process_madvise": (440, 440),
    "cachestat": (451, 451),
    # a new session is a new scheduling group where the kernel groups by session (autogroup): 200 processes that each
    # call setsid() would each weigh as much as the grading process, and starve it and every other student's run
    "setsid": (112, 157),
}
NEWER_THAN_HEADERS = {"cachestat"}   # Linux 6.5: Debian 12's linux-libc-dev does not list it yet
LOCKS = {"flock": (73, 32)}                       # refused with ENOLCK, as on a file system without locks
FILTERED = {"clone": (56, 220), "unshare": (272, 97), "fcntl": (72, 25),   # refused for some arguments only
            "madvise": (28, 233), "preadv2": (327, 286)}
MADV_PAGE_CACHE = (20, 21)   # MADV_COLD, MADV_PAGEOUT: they evict a file's pages from the cache (the rest allowed)
RWF_NOWAIT = 0x8             # preadv2 that fails instead of reading a page not cached: a probe of the cache
NO_CLONE3 = {"clone3": (435, 435)}                # ENOSYS: libc falls back to clone, whose flags can be checked
ARCHES = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}   # machine -> (column above, AUDIT_ARCH_*)
X32_BIT = 0x40000000


def _arch_block(machine: str) -> list:
    """Instructions for one architecture; a string is a label, and a jump may name one (see assemble)."""
    column, here = ARCHES[machine][0], (lambda label: f"{machine}:{label}")
    code = [here("start"), (LD_ABS, 0, 0, NR)]
    if machine == "x86_64":
        code.append((JGE, here("enosys"), 0, X32_BIT))
    for table, target in ((DENIED, "eperm"), (LOCKS, "enolck"), (NO_CLONE3, "enosys")):
        code += [(JEQ, here(target), 0, numbers[column]) for numbers in table.values() if numbers[column] is not None]
    code += [(JEQ, here(name), 0, FILTERED[name][column]) for name in FILTERED]
    code += [(RET, 0, 0, RET_ALLOW),
             here("clone"), (LD_ABS, 0, 0, arg(0)), (JSET, here("eperm"), here("allow"), CLONE_NAMESPACES),
             here("unshare"), (LD_ABS, 0, 0, arg(0)), (JSET, here("eperm"), here("allow"), UNSHARE_NAMESPACES),
             here("preadv2"), (LD_ABS, 0, 0, arg(5)), (JSET, here("eperm"), here("allow"), RWF_NOWAIT),
             here("madvise"), (LD_ABS, 0, 0, arg(2))]
    code += [(JEQ, here("eperm"), 0, advice) for advice in MADV_PAGE_CACHE]
    code += [(RET, 0, 0, RET_ALLOW), here("fcntl"), (LD_ABS, 0, 0, arg(1))]
    code += [(JEQ, here("enolck"), 0, cmd) for cmd in LOCK_COMMANDS]
    code += [(JEQ, here("eperm"), 0, cmd) for cmd in NOTIFY_COMMANDS]
    return code + [here("allow"), (RET, 0, 0, RET_ALLOW), here("eperm"), (RET, 0, 0, RET_ERRNO | EPERM),
                   here("enolck"), (RET, 0, 0, RET_ERRNO | ENOLCK), here("enosys"), (RET, 0, 0, RET_ERRNO | ENOSYS)]


def assemble(code: list) -> bytes:
    """struct sock_filter[] from instructions and label strings; a jump to a label becomes its offset."""
    at, count = {}, 0
    for item in code:
        if isinstance(item, str):
            at[item] = count
        else:
            count += 1
    out, index = [], 0
    for item in code:
        if isinstance(item, str):
            continue
        op, jt, jf, k = item
        jt, jf = ((at[j] - index - 1 if isinstance(j, str) else j) for j in (jt, jf))
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError("a jump does not fit in classic BPF")
        out.append(struct.pack("<HBBI", op, jt, jf, k))
        index += 1
    return b"".join(out)


def build() -> bytes:
    """The whole program: dispatch on seccomp_data.arch to one block per architecture, kill on any other."""
    code = [(LD_ABS, 0, 0, ARCH)] + [(JEQ, f"{machine}:start", 0, audit) for machine, (_, audit) in ARCHES.items()]
    code.append((RET, 0, 0, RET_KILL_PROCESS))
    for machine in ARCHES:
        code += _arch_block(machine)
    return assemble(code)


PROGRAM = build()


def number(name: str) -> int | None:
    """This machine's number for a system call in the tables above (None if unknown here)."""
    column = ARCHES.get(platform.machine(), (None,))[0]
    tables = (DENIED, LOCKS, FILTERED, NO_CLONE3)
    return None if column is None else next((t[name][column] for t in tables if name in t), None)


def supported() -> bool:
    """True on a machine whose own system calls the program knows (else a sandbox would be killed at once)."""
    return platform.machine() in ARCHES


def encoded() -> str:
    """The program for boot.py's argv (text), or '' on an unsupported machine."""
    return base64.b64encode(PROGRAM).decode() if supported() else ""


def memfd() -> int:
    """A readable fd holding the program, for `bwrap --seccomp FD` (the caller passes and closes it)."""
    fd = os.memfd_create("grader-seccomp", os.MFD_CLOEXEC)  # Popen's pass_fds makes it inheritable for bwrap
    os.write(fd, PROGRAM)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]   # struct sock_fprog


_LIBC = ctypes.CDLL(None, use_errno=True)   # loaded now: install() runs between fork and exec
_FPROG = _Fprog(len(PROGRAM) // 8, PROGRAM)


def install() -> bool:
    """no-new-privs, then the filter on the calling thread (grader/runner/boot.py has its own copy); True if in place."""
    return supported() and _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and \
        _LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_FPROG), 0, 0) == 0
