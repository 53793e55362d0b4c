"""Run untrusted code (student cells, the nbgrader kernel) where it cannot reach the verdict or the host.

Level "bwrap" (root, with Debian's bubblewrap and util-linux's setpriv): an allow-list view.
The sandbox sees, read-only, the system libraries, the Python prefix, the venv, `lab` and its own
inputs; a private size-capped tmpfs on /tmp and /dev/shm; nothing else. It has its own mount,
pid, network (loopback only), IPC, UTS and cgroup namespaces, runs in a new session as a uid of
its own (one per running sandbox, from a reserved range) with no capabilities and no-new-privs,
a seccomp filter (grader/seccomp.py) and a fresh session keyring, and dies with its parent. When it
ends, everything it started and wrote ends with it; the sweep removes whatever its uid left in the
kernel (processes, keys, SysV IPC).

Level "process" (no root, no bubblewrap, or a machine the filter does not know): a separate process
with rlimits, a scrubbed environment, its own scratch folder, the seccomp filter where the kernel allows
it, and limits enforced from outside. It still cannot change a verdict (the parent judges from validated
observations), but running as the grader's own user it can read what that user can, and see or signal
the grader's processes.

`sandbox_argv` is the one wrapper both levels' callers share; it can also wrap a kernel launch.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import kernel_state, seccomp
from .paths import ROOT
from .schema import Protocol

CHILD_SOURCE = Path(__file__).with_name("child.py").read_text()
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
UID_BASE = int(os.environ.get("GRADER_UID_BASE", "1900000000"))  # far above any login or subuid range
UID_COUNT = 4096
SCRATCH_BYTES = 256 << 20
SHM_BYTES = 64 << 20
MAX_RESULT = 64 << 20
MAX_STDERR = 256 << 10
INPUTS = "/inputs"          # where a bwrap sandbox sees its read-only inputs


@dataclass(frozen=True)
class Limits:
    """rlimits set from outside (a hard limit cannot be raised by the code under test)."""

    cpu_seconds: int
    memory_bytes: int = 2 << 30
    processes: int = 256       # per uid: with a uid per sandbox, a fork bomb exhausts only its own
    file_bytes: int = 64 << 20
    open_files: int = 512


@dataclass
class Finished:
    """How a sandboxed command ended, and what it wrote."""

    returncode: int | None
    timed_out: bool
    output: bytes = b""          # what it wrote to the result pipe
    stderr: bytes = b""
    why: str = ""                # "" | "wall" | "stall" (CPU without progress) | "idle" (wall time without progress) | "watcher"
    cpu: float = 0.0             # CPU seconds its processes (and its watcher's extra ones) had used, as last read
    waited: float = 0.0          # seconds they were ready to run but waited for a CPU: how loaded the machine was
    elapsed: float = 0.0         # wall seconds it ran


class Watcher:
    """Hooks a caller can give a run: its start, each record as it arrives, and a periodic check."""

    def on_start(self, members) -> None:
        """The run has started; `members()` lists its processes (host pids)."""

    def extra_pids(self) -> list[int]:
        """Processes outside the run whose CPU counts as the run's in its no-progress limit."""
        return []

    def record(self, record: dict) -> None:
        pass

    def tick(self, now: float, cpu: float) -> str | None:
        """None to go on, 'interrupt' to send SIGINT to the run, 'kill' to end it."""
        return None


class Usage:
    """CPU time and run-queue wait of a run's processes, read from /proc (outside their control)."""

    def __init__(self):
        self.waits: dict[int, int] = {}

    def read(self, pids: list[int]) -> float:
        """CPU seconds of `pids` (and their reaped children); notes how long each waited for a CPU so far."""
        for pid in pids:
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{pid}/schedstat", "rb") as handle:
                self.waits[pid] = max(self.waits.get(pid, 0), int(handle.read().split()[1]))
        return _cpu_seconds(pids)

    @property
    def waited(self) -> float:
        return sum(self.waits.values()) / 1e9


def _tool(name: str) -> str | None:
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
    """The interpreter's prefix, the venv and `lab` (an editable install points into the repo)."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), (ROOT / "lab").resolve()}
    return sorted(p for p in paths if p.exists())


def sandbox_argv(argv: list[str], *, uid: int, ro: list[Path] = (), inputs: dict[str, Path] | None = None,
                 cwd: str = "/tmp", scratch_bytes: int = SCRATCH_BYTES, etc_dir: Path | None = None,
                 share_net: bool = False, privileged: bool = False, seccomp_fd: int | None = None) -> list[str]:
    """bwrap + setpriv argv that runs `argv` in an allow-list view as `uid` (see the module docstring).

    `ro` is bound read-only at the same path, `inputs` read-only under /inputs/<name>; /tmp and
    /dev/shm are private tmpfs. `privileged` keeps root and its capabilities (for the warm parent of
    grader/zygote.py, which never runs student code). share_net keeps the host network (a kernel launcher might need
    it); by default the sandbox has only its own loopback. `seccomp_fd` (from grader.seccomp.memfd, passed to
    bwrap) installs the filter just before `argv` starts; the privileged parent installs it per child instead.
    """
    args = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
            *([] if share_net else ["--unshare-net"]),
            "--die-with-parent", "--new-session", "--hostname", "sandbox",
            "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(scratch_bytes), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    binds = [(str(path), str(path)) for path in ro] + [(str(path), f"{INPUTS}/{name}") for name, path in (inputs or {}).items()]
    system = system_view()
    etc = ["/etc/passwd"] if etc_dir is not None else []
    args += _parents([dest for _, dest in binds] + [system[i + 2] for i, a in enumerate(system) if a == "--ro-bind"] + etc)
    args += system
    for src, dest in binds:  # after the tmpfs, so that a repository under /tmp stays visible
        args += ["--ro-bind", src, dest]
    if etc_dir is not None:
        for name in ("passwd", "group", "hosts"):
            args += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
    if privileged:  # root with capabilities in the view: only for grader/zygote_boot.py, which drops them per child
        return [*args, "--cap-add", "ALL", "--chdir", cwd, "--", *argv]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", cwd, "--", _tool("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={uid}",
             "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]
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


def _processes_of(uid: int) -> list[int]:
    """Live processes (zombies excluded) whose real uid is `uid`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status", "rb") as handle:
                    fields = dict(line.split(b":", 1) for line in handle if line.startswith((b"Uid:", b"State:")))
                if int(fields[b"Uid"].split()[0]) == uid and not fields[b"State"].strip().startswith(b"Z"):
                    found.append(int(entry.name))
            except (OSError, KeyError, ValueError, IndexError):
                continue
    return found


def sweep(uid: int) -> None:
    """Kill whatever still runs as a sandbox uid, wait until it is gone, then remove its keys and SysV IPC
    objects (normally nothing is left: the seccomp filter and the IPC namespace see to that)."""
    for _ in range(100):
        left = _processes_of(uid)
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
            if _processes_of(uid):  # left over from a crashed grader: not ours to reuse yet
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


# --- levels -----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def sandbox_level() -> str:
    """'bwrap' if the full sandbox works here (probed once), else 'process'."""
    if os.environ.get("GRADER_SANDBOX") == "process" or os.geteuid() != 0:
        return "process"
    if not (_tool("bwrap") and _tool("setpriv")) or not seccomp.supported():
        return "process"
    try:
        done = run_sandboxed([sys.executable, "-I", "-c", "import os, lab; os.write(int(os.environ['GRADER_RESULT_FD']), b'ok')"],
                             timeout=60, level="bwrap")
    except (OSError, RuntimeError):
        return "process"
    return "bwrap" if done.returncode == 0 and done.output == b"ok" else "process"


def _env(scratch: str, result_fd: int, inputs: dict[str, str]) -> dict[str, str]:
    env = {"PATH": f"{Path(sys.executable).parent}:{SYSTEM_PATH}", "LANG": "C.UTF-8", "HOME": scratch,
           "TMPDIR": scratch, "USER": "student", "LOGNAME": "student", "MPLBACKEND": "Agg",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "JUPYTER_PLATFORM_DIRS": "1",
           "GRADER_SCRATCH": scratch, "GRADER_RESULT_FD": str(result_fd)}
    env.update({f"GRADER_INPUT_{name.upper()}": path for name, path in inputs.items()})
    return env


def _preexec(limits: Limits, level: str):
    def apply() -> None:  # in the child before exec: own session and keyring, and caps the code cannot raise
        os.setsid()
        kernel_state.new_session_keyring()
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if level == "process":  # bwrap installs it itself (--seccomp), after its own unshare and mounts
            seccomp.install()
    return apply


def _drain(stream, sink: bytearray, cap: int, progress: list[float]) -> None:
    while chunk := stream.read1(65536):
        if chunk.strip():  # blank lines are no record: they are not progress
            progress[0] = time.monotonic()
        if len(sink) < cap:
            sink.extend(chunk[: cap - len(sink)])


def run_sandboxed(argv: list[str], *, timeout: float, stall: float | None = None, idle: float | None = None, stdin: bytes = b"",
                  inputs: dict[str, Path] | None = None, limits: Limits | None = None, level: str | None = None,
                  scratch_bytes: int = SCRATCH_BYTES, bridge_fds: tuple[int, int] = (), watcher: Watcher | None = None) -> Finished:
    """Run `argv` at the sandbox level; its results go to the fd named by $GRADER_RESULT_FD.

    Limits are enforced from outside: rlimits set before exec, a wall-clock `timeout`, `stall`:
    the CPU seconds the sandbox may spend while its result pipe stays silent (CPU, so that a loaded
    machine cannot stop a correct answer), and `idle`: the wall seconds it may stay silent.
    `bridge_fds` (read, write) reach the command as $GRADER_BRIDGE_FDS; this process closes them.
    `watcher` (a Watcher): hooks on the run's start and a periodic check that may end it.
    """
    level = level or sandbox_level()
    limits = limits or Limits(cpu_seconds=int(timeout) + 5)
    inputs = {name: Path(path) for name, path in (inputs or {}).items()}
    read_fd, write_fd = os.pipe()
    with contextlib.ExitStack() as stack:
        passed = [write_fd]
        if level == "bwrap":
            uid, etc_dir = stack.enter_context(sandbox_uid())
            members = functools.partial(_processes_of, uid)
            scratch = "/tmp"
            env = _env(scratch, write_fd, {n: f"{INPUTS}/{n}" for n in inputs})
            program = seccomp.memfd()
            stack.callback(os.close, program)
            passed.append(program)
            cmd = sandbox_argv(argv, uid=uid, ro=python_view(), inputs=inputs, cwd=scratch,
                               scratch_bytes=scratch_bytes, etc_dir=etc_dir, seccomp_fd=program)
            cmd[0] = _tool("bwrap")
            cwd = "/"
        else:
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="grader-scratch-"))
            env = _env(scratch, write_fd, {n: str(p) for n, p in inputs.items()})
            # A throwaway shell between us and the command, so that its parent pid is not the grader.
            cmd, cwd = ["sh", "-c", '"$@"; exit $?', "grader-process", *argv], scratch
            members = None  # filled in by _watch: the process group it starts
        if bridge_fds:
            env["GRADER_BRIDGE_FDS"] = ",".join(map(str, bridge_fds))
        return _watch(cmd, env=env, cwd=cwd, stdin=stdin, timeout=timeout, stall=stall, idle=idle, limits=limits,
                      read_fd=read_fd, write_fds=(write_fd, *bridge_fds), members=members,
                      passed=[*passed, *bridge_fds], level=level, watcher=watcher or Watcher())


def _cpu_seconds(pids: list[int]) -> float:
    """CPU time of these processes and of their reaped children, read from /proc (outside their control)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            ticks += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def _group_of(pgid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ProcessLookupError):
                if os.getpgid(int(entry.name)) == pgid:
                    found.append(int(entry.name))
    return found


def _watch(cmd, *, env, cwd, stdin, timeout, stall, idle, limits, read_fd, write_fds, members, passed, level, watcher) -> Finished:
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                cwd=cwd, env=env, pass_fds=passed, preexec_fn=_preexec(limits, level))
    finally:
        for fd in write_fds:
            os.close(fd)
    out, err, progress = bytearray(), bytearray(), [time.monotonic()]
    result = os.fdopen(read_fd, "rb")
    readers = [threading.Thread(target=_drain, args=(result, out, MAX_RESULT, progress), daemon=True),
               threading.Thread(target=_drain, args=(proc.stderr, err, MAX_STDERR, [0.0]), daemon=True)]
    for reader in readers:
        reader.start()
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
    feeder.start()
    members = members or functools.partial(_group_of, proc.pid)
    watcher.on_start(members)
    started, usage = time.monotonic(), Usage()
    deadline, why, seen, cpu, cpu_at_progress = started + timeout, "", progress[0], 0.0, 0.0
    while proc.poll() is None:
        now = time.monotonic()
        cpu = usage.read(members() + watcher.extra_pids())
        if progress[0] != seen:
            seen, cpu_at_progress = progress[0], cpu
        if now > deadline:
            why = "wall"
        elif stall is not None and cpu - cpu_at_progress > stall:
            why = "stall"
        elif idle is not None and now - progress[0] > idle:
            why = "idle"
        elif watcher.tick(now, cpu) == "kill":
            why = "watcher"
        if why:
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.2)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # bwrap's --die-with-parent takes its namespace down with it
    proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    result.close()
    return Finished(proc.returncode, bool(why), bytes(out), bytes(err), why, cpu, usage.waited, time.monotonic() - started)


def _feed(pipe, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.write(data)
        pipe.close()


# --- grading children -------------------------------------------------------------------------

@dataclass
class ChildRun:
    """What a grading child reported, and how it ended."""

    records: list[dict] = field(default_factory=list)
    status: str = "ok"          # ok | timeout | crashed | garbled
    detail: str = ""
    why: str = ""               # the limit that stopped it (Finished.why)
    cpu: float = 0.0            # CPU seconds it (and its reference server) used
    waited: float = 0.0         # seconds it waited for a CPU while ready to run
    elapsed: float = 0.0        # wall seconds it ran


CHILD_STALL = 10.0     # CPU seconds a child may spend without reporting (its own CPU alarm can be cancelled)
CHILD_IDLE = 60.0      # wall seconds it may stay silent (a sleep uses no CPU); honest children report in milliseconds


def run_child(payload: dict, timeout: float, stall: float | None = CHILD_STALL, idle: float | None = CHILD_IDLE, warm=None,
              bridge_fds: tuple[int, int] = (), watcher: Watcher | None = None) -> ChildRun:
    """Run grader/child.py on `payload` in the sandbox; never raises for anything the child does.

    `warm` (a grader.zygote.Zygote): fork the run from that warm parent instead of starting an interpreter.
    `bridge_fds`: the run's end of the bridge to its reference server (grader/bridge.py); `watcher`: see Pair."""
    limits = Limits(cpu_seconds=int(timeout) + 5)
    if warm is not None:
        done = warm.run("grade", payload, timeout=timeout, stall=stall, idle=idle, limits=limits, bridge_fds=bridge_fds,
                        watcher=watcher)
    else:
        done = run_sandboxed([sys.executable, "-I", "-c", CHILD_SOURCE], timeout=timeout, stall=stall, idle=idle,
                             stdin=json.dumps(payload).encode(), limits=limits, bridge_fds=bridge_fds, watcher=watcher)
    protocol = Protocol([gid for gid, _ in payload["cells"]], [sc["name"] for sc in payload["scenarios"]])
    return parse_child_output(done, protocol, timeout, stall, idle)


def parse_child_output(done: Finished, protocol: Protocol, timeout: float, stall: float | None = None,
                       idle: float | None = None) -> ChildRun:
    for line in done.output.split(b"\n"):
        if line.strip() and not protocol.feed(line):
            break
    run = ChildRun(protocol.records, why=done.why, cpu=done.cpu, waited=done.waited, elapsed=done.elapsed)
    if protocol.error:
        run.status, run.detail = "garbled", f"the child wrote {protocol.error}"
    elif done.timed_out:
        run.status = "timeout"
        limit = {"wall": timeout, "stall": stall, "idle": idle}.get(done.why)   # only the limit that fired is set
        run.detail = {"wall": "stopped after {:.0f} s", "stall": "stopped: no progress in {:g} s of CPU time",
                      "idle": "stopped: no progress for {:g} s"}.get(done.why, "stopped ({})").format(limit or done.why)
    elif not protocol.finished:
        run.status, run.detail = "crashed", f"ended early (exit code {done.returncode})"
    return run


SERVER_GRACE = 1.0   # wall seconds a reference server has to end by itself once its grading child has ended


class Pair:
    """A grading child and its reference server (grader/bridge.py), watched as one run.

    The server only answers its child, so it must not outlive or outrun it: its CPU counts toward the child's
    no-progress limit, and once the child has ended the server has SERVER_GRACE s to end, then it is killed with
    everything its uid runs. Give `child` and `server` to run_child as their watchers; call child_ended() after."""

    def __init__(self):
        self.server_members, self.child_end, self.server_killed = list, None, False
        self.child, self.server = _PairChild(self), _PairServer(self)

    def child_ended(self) -> None:
        self.child_end = time.monotonic()


class _PairChild(Watcher):
    def __init__(self, pair: Pair):
        self.pair = pair

    def extra_pids(self) -> list[int]:
        return self.pair.server_members()


class _PairServer(Watcher):
    def __init__(self, pair: Pair):
        self.pair = pair

    def on_start(self, members) -> None:
        self.pair.server_members = members

    def tick(self, now: float, cpu: float) -> str | None:
        end = self.pair.child_end
        if end is not None and now - end > SERVER_GRACE:
            self.pair.server_killed = True
            return "kill"
        return None
