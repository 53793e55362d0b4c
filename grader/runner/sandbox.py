"""The sandbox's view and identity: the bwrap argv, its read-only views and /etc files, a uid per running sandbox, the sweep.

Level "bwrap" (root, with Debian's bubblewrap and util-linux's setpriv): an allow-list view.
The sandbox sees, read-only, the system libraries, the Python prefix, the venv, `lab` and its own
inputs; a private size-capped tmpfs on /tmp and /dev/shm; nothing else. It has its own mount,
pid, network (loopback only), IPC, UTS and cgroup namespaces, runs in a new session as a uid of
its own (one per running sandbox, from a reserved range) with no capabilities and no-new-privs,
a seccomp filter (grader/runner/seccomp.py) and a fresh session keyring, and dies with its parent. When it
ends, everything it started and wrote ends with it; the sweep removes whatever its uid left in the
kernel (processes, keys, SysV IPC).

Level "userns" (no root: bubblewrap and unprivileged user namespaces): the same view, namespaces, seccomp
filter, scratch /tmp, keyring and rlimits, inside a user namespace that bwrap makes. Each run also has a user
namespace of its own in which it is STUDENT_UID, and a pid namespace whose first process takes every other
with it when it ends: a run is killed by its namespace, not by its uid. What it cannot do without root, as
the grader's one uid is all the kernel lets it map: runs are charged to the instructor's uid outside (its
RLIMIT_NPROC total and key quota; the instructor's other processes may count against a run's RLIMIT_NPROC), and
the instructor's supplementary groups stay (setgroups is denied in a user namespace).

Level "process" (only when asked for: GRADER_SANDBOX=process, `make autograde SANDBOX=process`): a separate
process with rlimits, a scrubbed environment, its own scratch folder, the seccomp filter where the kernel allows
it, and limits enforced from outside. It still cannot change a verdict (the parent judges from validated
observations), but running as the grader's own user it can read what that user can (the reference among it),
and see or signal the grader's processes. grader/runner/cold.py refuses to grade there unless asked.

`sandbox_argv` is the one wrapper both runners (grader/runner/cold.py, warm.py) share; it can also wrap a kernel launch.
"""
from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from ..paths import ROOT
from . import kernel_state
from .limits import Limits

SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
UID_BASE = int(os.environ.get("GRADER_UID_BASE", "1900000000"))  # far above any login or subuid range
UID_COUNT = 4096
HIDDEN_PROC = ("/proc/keys", "/proc/key-users")   # /dev/null over them: the run's uid may be the grader's (userns)
STUDENT_UID = UID_BASE      # level "userns": the uid a run has inside its own user namespace (the only one mapped)
INPUTS = "/inputs"          # where a bwrap sandbox sees its read-only inputs


# numpy's OpenBLAS starts a thread per core (up to 64) when it loads or when a fork first multiplies matrices: on a
# many-core grader that alone would pass a run's process limit (limits.py), and the grader runs two workers per core.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def environment(scratch: str) -> dict[str, str]:
    """The whole environment of a sandboxed process (nothing of the grader's): `scratch` is its home and temp folder."""
    return {"PATH": f"{Path(sys.executable).parent}:{SYSTEM_PATH}", "LANG": "C.UTF-8", "HOME": scratch, "TMPDIR": scratch,
            "USER": "student", "LOGNAME": "student", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
            "JUPYTER_PLATFORM_DIRS": "1", "GRADER_SCRATCH": scratch, **ONE_THREAD}


def tool(name: str) -> str | None:
    """A system binary (bwrap, setpriv) by its full path, never one of a venv or of the caller's PATH."""
    return shutil.which(name, path=SYSTEM_PATH)


# --- the view ---------------------------------------------------------------------------------

def system_view() -> list[str]:
    """bwrap arguments for the OS part of the view: libraries and binaries, no data folders."""
    args: list[str] = []
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for usr in ("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec"):
        if os.path.isdir(usr) and not os.path.islink(usr):
            args += ["--ro-bind", usr, usr]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        if os.path.exists(name):
            args += ["--ro-bind", name, name]
    return args


def python_view() -> list[Path]:
    """The interpreter's prefix, the venv and `lab` (an editable install points into the repo).

    The venv also at the path it is run by: a `.venv` that is a link (a copy of the checkout that borrows this one's
    venv) has `sys.executable` under the link, which bwrap binds by its target."""
    venv = Path(sys.prefix).absolute()
    paths = {Path(sys.base_prefix).resolve(), venv.resolve(), venv, (ROOT / "lab").resolve(), *_installed_lab()}
    return sorted(p for p in paths if p.exists())


def _installed_lab() -> list[Path]:
    """The `lab` the venv's editable install imports (PEP 610's direct_url.json), if it is another checkout's."""
    try:
        found = json.loads(importlib.metadata.distribution("decode-scheduling-lab").read_text("direct_url.json") or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    url = found.get("url", "")
    if not (found.get("dir_info", {}).get("editable") and url.startswith("file://")):
        return []
    return [(Path(urllib.parse.unquote(url[len("file://"):])) / "lab").resolve()]


def sandbox_argv(argv: list[str], *, uid: int, ro: list[Path] = (), inputs: dict[str, Path] | None = None,
                 cwd: str = "/tmp", limits: Limits = Limits(), etc_dir: Path | None = None,
                 share_net: bool = False, privileged: bool = False, seccomp_fd: int | None = None,
                 userns: bool = False) -> list[str]:
    """bwrap + setpriv argv that runs `argv` in an allow-list view as `uid` (see the module docstring).

    `ro` is bound read-only at the same path, `inputs` read-only under /inputs/<name>; /tmp and
    /dev/shm are private tmpfs of `limits`' sizes. `privileged` keeps root and its capabilities (for the warm parent of
    grader/runner/warm.py, which never runs student code). share_net keeps the host network (a kernel launcher might need
    it); by default the sandbox has only its own loopback. `seccomp_fd` (from grader.runner.seccomp.memfd, passed to
    bwrap) installs the filter just before `argv` starts; the privileged parent installs it per child instead.
    `userns` (level "userns") has bwrap make a user namespace in which `uid` is the grader's own uid (0 for the
    privileged parent, whose capabilities then reach only the namespaces it owns), and no setpriv is needed.
    """
    args = _namespaces(0 if privileged else uid, limits, share_net, userns) + _view(ro, inputs, etc_dir)
    if userns:  # bwrap's own root folder belongs to the run's uid there (and a warm parent's, to every fork's): read-only
        args += ["--remount-ro", "/"]
    if privileged:  # root with capabilities in the view: only for grader/runner/boot.py, which drops them per child
        return [*args, "--cap-add", "ALL", "--chdir", cwd, "--", *argv]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    if userns:  # bwrap itself is the uid change: a user namespace with no capabilities and no-new-privs.
        # RLIMIT_NPROC only inside it: set before bwrap made it, the limit would also be the namespace's ceiling on
        # the grader's uid outside, so the instructor's own processes counted against it (a run forked 0 of 20).
        return [*args, "--cap-drop", "ALL", "--chdir", cwd, "--", tool("prlimit") or "prlimit",
                f"--nproc={limits.processes}", "--", *argv]
    args += ["--chdir", cwd, "--", tool("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={uid}",
             "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]
    return args


def _namespaces(shown: int, limits: Limits, share_net: bool, userns: bool) -> list[str]:
    """bwrap and its namespaces, /proc (its revealing files hidden), /dev, and the private /tmp and /dev/shm."""
    return ["bwrap", *(["--unshare-user", "--uid", str(shown), "--gid", str(shown)] if userns else []), "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
            *([] if share_net else ["--unshare-net"]),
            "--die-with-parent", "--new-session", "--hostname", "sandbox",
            "--proc", "/proc", "--dev", "/dev", *[a for name in HIDDEN_PROC for a in ("--ro-bind", "/dev/null", name)],
            "--perms", "1777", "--size", str(limits.scratch_bytes), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]


def _view(ro: list[Path], inputs: dict[str, Path] | None, etc_dir: Path | None) -> list[str]:
    """The read-only view: folders leading to each bind, the system's files, `ro`, `inputs` and the /etc files."""
    binds = [(str(path), str(path)) for path in ro] + [(str(path), f"{INPUTS}/{name}") for name, path in (inputs or {}).items()]
    system = system_view()
    etc = ["/etc/passwd"] if etc_dir is not None else []
    args = _parents([dest for _, dest in binds] + [system[i + 2] for i, a in enumerate(system) if a == "--ro-bind"] + etc)
    args += system
    for src, dest in binds:  # after the tmpfs, so that a repository under /tmp stays visible
        args += ["--ro-bind", src, dest]
    if etc_dir is not None:
        for name in ("passwd", "group", "hosts"):
            args += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
    return args


def _parents(dests: list[str]) -> list[str]:
    """Traversable (0755) folders leading to each bind target: bwrap would copy a 0700 /root otherwise."""
    args, made = [], {"/", "/tmp", "/dev", "/proc"}
    for dest in dests:
        for parent in reversed(Path(dest).parents):
            name = str(parent)
            if name not in made and not any(Path(name).is_relative_to(d) for d in dests if d != dest):
                args += ["--perms", "0755", "--dir", name]
            made.add(name)
    return args


# --- one uid per running sandbox --------------------------------------------------------------

def _state_dir() -> Path:
    """Root-only folder for uid locks and the sandbox's /etc files."""
    for base in (Path("/run/grader-sandbox"), Path(tempfile.gettempdir()) / f"grader-sandbox-{os.geteuid()}"):
        try:
            base.mkdir(mode=0o700, exist_ok=True)
            info = base.lstat()
            if info.st_uid == os.geteuid() and not base.is_symlink():
                os.chmod(base, 0o700)
                return base
        except OSError:
            continue
    raise RuntimeError("no private state folder for the sandbox (tried /run and the temp dir)")


_UID_LOCK = threading.Lock()
_UIDS_HERE: set[int] = set()


def processes_of(uid: int) -> list[int]:
    """Live processes (zombies excluded) whose real uid is `uid`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status", "rb") as handle:
                    status = handle.read()
                # "State:\tS (sleeping)" and "Uid:\t<real>\t<effective>..." lines, found without splitting the rest
                real = status[status.index(b"\nUid:") + 5:].split(None, 1)[0]
                state = status[status.index(b"\nState:") + 7:].split(None, 1)[0]
                if int(real) == uid and state != b"Z":
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def sweep(uid: int) -> None:
    """Kill whatever still runs as a sandbox uid, wait until it is gone, then remove its keys and SysV IPC
    objects (normally nothing is left: the seccomp filter and the IPC namespace see to that)."""
    for _ in range(100):
        left = processes_of(uid)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    kernel_state.sweep_uid(uid)


def leftovers() -> dict[str, dict]:
    """What sandbox uids hold in the kernel now: {"processes": {uid: [pid]}, "keys": {uid: n}, "ipc": {uid: [(kind, id)]}}."""
    ours = range(UID_BASE, UID_BASE + UID_COUNT)
    processes: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, KeyError, ValueError, IndexError):
            if entry.name.isdigit():
                with open(f"/proc/{entry.name}/status", "rb") as handle:
                    fields = dict(line.split(b":", 1) for line in handle if line.startswith((b"Uid:", b"State:")))
                uid = int(fields[b"Uid"].split()[0])
                if uid in ours and not fields[b"State"].strip().startswith(b"Z"):
                    processes.setdefault(uid, []).append(int(entry.name))
    ipc: dict[int, list[tuple[str, int]]] = {}
    for kind, ident, uid in kernel_state.ipc_objects():
        if uid in ours:
            ipc.setdefault(uid, []).append((kind, ident))
    return {"processes": processes, "keys": {u: n for u, n in kernel_state.keys_by_uid().items() if u in ours}, "ipc": ipc}


def sweep_all() -> dict[str, dict]:
    """After a batch: sweep every sandbox uid that holds something and that no running sandbox holds; returns leftovers()."""
    state = _state_dir()
    found = leftovers()
    for uid in sorted(set().union(*found.values())):
        with _UID_LOCK:
            if uid in _UIDS_HERE:
                continue
        fd = os.open(state / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a sandbox of another grading process runs as it
            sweep(uid)
        except BlockingIOError:
            continue
        finally:
            os.close(fd)
    return leftovers()


@contextlib.contextmanager
def sandbox_uid():
    """A uid no other running sandbox (of this or another grading process) holds, with its /etc files."""
    state = _state_dir()
    with _UID_LOCK:
        start = random.randrange(UID_COUNT)
        for offset in range(UID_COUNT):
            uid = UID_BASE + (start + offset) % UID_COUNT
            if uid in _UIDS_HERE:
                continue
            fd = os.open(state / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if processes_of(uid):  # left over from a crashed grader: not ours to reuse yet
                os.close(fd)
                continue
            _UIDS_HERE.add(uid)
            break
        else:
            raise RuntimeError(f"all {UID_COUNT} sandbox uids are busy")
    try:
        yield uid, _etc_files(state, uid)
    finally:
        sweep(uid)
        with _UID_LOCK:
            _UIDS_HERE.discard(uid)
        os.close(fd)


def etc_files(uid: int) -> Path:
    """The sandbox's passwd, group and hosts for `uid` (a folder bound over /etc/{passwd,group,hosts})."""
    return _etc_files(_state_dir(), uid)


def _etc_files(state: Path, uid: int) -> Path:
    folder = state / "etc"
    folder.mkdir(mode=0o755, exist_ok=True)
    files = {"passwd": f"root:x:0:0::/:/bin/sh\nstudent:x:{uid}:{uid}::/tmp:/bin/sh\n",
             "group": f"root:x:0:\nstudent:x:{uid}:\n", "hosts": "127.0.0.1 localhost\n::1 localhost\n"}
    target = folder / str(uid)
    if not target.is_dir():
        tmp = Path(tempfile.mkdtemp(dir=folder))
        for name, text in files.items():
            (tmp / name).write_text(text)
            os.chmod(tmp / name, 0o644)
        os.chmod(tmp, 0o755)
        with contextlib.suppress(OSError):
            os.rename(tmp, target)
        shutil.rmtree(tmp, ignore_errors=True)
    return target
