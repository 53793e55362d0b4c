"""Run untrusted code (student cells, the nbgrader kernel) where it cannot reach the verdict.

Level "namespace" (root on Linux with util-linux): private mount, network and pid
namespaces; tmpfs over /tmp, /var/tmp, /dev/shm and over every instructor path
(the repository except .venv and lab, the submissions, the output) except the
folders the command must use; then it drops to `nobody` with no-new-privs, so it
cannot unmount them, read the reference, reach the network or outlive its run.

Level "process" (anything else): a separate process with rlimits, a scrubbed
environment and a wall-clock timeout. It still cannot change a verdict (the
parent judges from observations), but running as the grader's own user it
could read instructor files or find and signal the grading process.
"""
from __future__ import annotations

import functools
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .paths import ROOT

CHILD_SOURCE = (Path(__file__).with_name("child.py")).read_text()
MAX_CAPTURE = 16 * 1024 * 1024
NOBODY = 65534
# The child imports lab from the venv, whose interpreter lives under the base prefix.
ALWAYS_VISIBLE = (ROOT / ".venv", ROOT / "lab", Path(sys.base_prefix).resolve())

TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def private_dirs() -> list[str]:
    """Folders replaced by an empty tmpfs: the shared temp dirs and the invoking user's home."""
    home = str(Path.home().resolve())
    return [d for d in (*TMP_DIRS, home) if os.path.isdir(d) and d != "/"]


def mount_script(restore: list[str], private: list[str], hidden: list[str], stash: str) -> str:
    """Shell run as root in the new mount namespace, ending in exec of the command as nobody."""
    q = shlex.quote
    lines = ["set -e", f"mount -t tmpfs -o size=1m tmpfs {q(stash)}"]
    for i, path in enumerate(restore):  # park what must stay visible inside a folder about to be replaced
        lines += [f"mkdir {q(stash)}/{i}", f"mount --bind {q(path)} {q(stash)}/{i}"]
    for folder in private:
        mode = "1777" if folder in TMP_DIRS else "0755"
        lines.append(f"mount -t tmpfs -o mode={mode},size=256m tmpfs {q(folder)}")
    for i, path in enumerate(restore):
        lines += [f"mkdir -p {q(path)}", f"mount --bind {q(stash)}/{i} {q(path)}"]
    lines.append(f"umount -l {q(stash)}")
    for path in hidden:
        lines.append(f"if [ -d {q(path)} ]; then mount -t tmpfs -o size=1m,mode=0755 tmpfs {q(path)}; "
                     f"elif [ -e {q(path)} ]; then mount --bind /dev/null {q(path)}; fi")
    lines += ['if [ "$GRADER_LOOPBACK" = 1 ]; then ip link set lo up; fi', 'cd "$GRADER_CWD"',
              'exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs "$@"']
    return "\n".join(lines)


@dataclass
class Finished:
    """How a sandboxed command ended, and what it wrote."""

    returncode: int | None
    timed_out: bool
    output: bytes = b""          # what it wrote to the result pipe (or stdout)
    stderr: bytes = b""


def hidden_paths(keep: list[Path], roots: list[Path]) -> list[str]:
    """Paths to cover so that, under each root, only `keep` (and what leads to it) stays visible."""
    keep = [Path(k).resolve() for k in keep]
    hidden: list[str] = []

    def visit(folder: Path) -> None:
        for path in sorted(entry.absolute() for entry in folder.iterdir()):
            if any(path.is_relative_to(k) for k in keep):
                continue  # kept, or inside a kept folder
            if any(k.is_relative_to(path) for k in keep):
                visit(path)  # leads to something kept: hide its other entries
            else:
                hidden.append(str(path))

    for root in roots:
        root = Path(root).resolve()
        if not root.exists():
            continue
        if any(root.is_relative_to(k) for k in keep):
            continue
        if any(k.is_relative_to(root) for k in keep):
            visit(root)
        else:
            hidden.append(str(root))
    return hidden


@functools.lru_cache(maxsize=1)
def sandbox_level() -> str:
    """'namespace' if the full sandbox works here (probed once), else 'process'."""
    if os.environ.get("GRADER_SANDBOX") == "process" or os.geteuid() != 0:
        return "process"
    if not all(shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin") for tool in ("unshare", "setpriv", "ip")):
        return "process"
    try:
        done = _run("namespace", [sys.executable, "-I", "-c", "import lab; print('ok')"], cwd=Path("/tmp"),
                    keep=[], hide=[], timeout=30, stdin=b"", loopback=True, result_pipe=False, limits=None)
    except OSError:
        return "process"
    return "namespace" if done.returncode == 0 and done.output.strip() == b"ok" else "process"


def _env(cwd: Path, loopback: bool) -> dict[str, str]:
    return {"PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "JUPYTER_PLATFORM_DIRS": "1",
            "GRADER_CWD": str(cwd), "GRADER_LOOPBACK": "1" if loopback else "0"}


def _limits(cpu_seconds: int, memory_bytes: int) -> None:
    """In the child before exec: its own process group and resource caps."""
    os.setsid()
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    resource.setrlimit(resource.RLIMIT_NPROC, (1024, 1024))


def _drain(stream, sink: bytearray) -> None:
    while chunk := stream.read(65536):
        if len(sink) < MAX_CAPTURE:
            sink.extend(chunk[: MAX_CAPTURE - len(sink)])


def _run(level: str, argv: list[str], *, cwd: Path, keep: list[Path], hide: list[Path], timeout: float,
         stdin: bytes, loopback: bool, result_pipe: bool, limits: tuple[int, int] | None) -> Finished:
    env = _env(cwd, loopback)
    pass_fds: tuple[int, ...] = ()
    if result_pipe:
        read_fd, write_fd = os.pipe()
        env["GRADER_RESULT_FD"], pass_fds = str(write_fd), (write_fd,)
    stash = None
    if level == "namespace":
        visible = [Path(p).resolve() for p in [*keep, *ALWAYS_VISIBLE]]
        private = private_dirs()
        restore = [str(p) for p in visible if any(p.is_relative_to(d) for d in private)]
        stash = tempfile.mkdtemp(prefix="grader-stash-", dir=_stash_parent())
        script = mount_script(restore, private, hidden_paths(visible, [ROOT, *hide]), stash)
        cmd = ["unshare", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation",
               "private", "--", "sh", "-c", script, "grader-sandbox", *argv]
    else:
        # A throwaway shell between us and the command, so that its parent pid is not the grader.
        cmd = ["sh", "-c", '"$@"; exit $?', "grader-process", *argv]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd if level != "namespace" else "/", env=env, pass_fds=pass_fds,
                            preexec_fn=(lambda: _limits(*limits)) if limits else os.setsid)
    out, err = bytearray(), bytearray()
    sources = [(proc.stdout, out if not result_pipe else bytearray()), (proc.stderr, err)]
    if result_pipe:
        os.close(write_fd)
        sources.append((os.fdopen(read_fd, "rb"), out))
    readers = [threading.Thread(target=_drain, args=src, daemon=True) for src in sources]
    for reader in readers:
        reader.start()
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        proc.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever the command left running in its group ends now
    except ProcessLookupError:
        pass
    proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    if stash:
        os.rmdir(stash)
    return Finished(proc.returncode, timed_out, bytes(out), bytes(err))


def _stash_parent() -> str:
    """A host folder outside the private dirs, where kept paths wait while /tmp is replaced."""
    return next(d for d in ("/run", "/var/lib", "/mnt", "/") if os.path.isdir(d) and os.access(d, os.W_OK))


def run_sandboxed(argv: list[str], *, cwd: Path, keep: list[Path], hide: list[Path] = (), timeout: float,
                  loopback: bool = False, memory_gb: int = 4) -> Finished:
    """Run a command as `nobody` with only `keep` writable/visible among the instructor paths."""
    level = sandbox_level()
    if level == "namespace":
        for folder in keep:
            for path in [Path(folder), *Path(folder).rglob("*")]:
                os.chown(path, NOBODY, NOBODY)
    return _run(level, argv, cwd=Path(cwd), keep=list(keep), hide=list(hide), timeout=timeout, stdin=b"",
                loopback=loopback, result_pipe=False, limits=(int(timeout) + 5, memory_gb << 30))


@dataclass
class ChildRun:
    """What a grading child reported, and how it ended."""

    records: list[dict] = field(default_factory=list)
    status: str = "ok"          # ok | timeout | crashed | garbled
    detail: str = ""


def run_child(payload: dict, timeout: float, hide: list[Path] = ()) -> ChildRun:
    """Run grader/child.py on `payload` in the sandbox; never raises for anything the child does."""
    level = sandbox_level()
    with tempfile.TemporaryDirectory(prefix="grader-child-") as workdir:
        cwd = Path("/tmp") if level == "namespace" else Path(workdir)  # /tmp is a fresh tmpfs in the namespace
        done = _run(level, [sys.executable, "-I", "-c", CHILD_SOURCE], cwd=cwd, keep=[], hide=list(hide), timeout=timeout,
                    stdin=json.dumps(payload).encode(), loopback=False, result_pipe=True,
                    limits=(int(timeout) + 5, 2 << 30))
    return parse_child_output(done, timeout)


def parse_child_output(done: Finished, timeout: float) -> ChildRun:
    run = ChildRun()
    for line in done.output.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return ChildRun(run.records, "garbled", "the child wrote something that is not a result record")
        if not isinstance(record, dict) or "kind" not in record:
            return ChildRun(run.records, "garbled", "the child wrote a malformed result record")
        run.records.append(record)
    finished = bool(run.records) and run.records[-1].get("kind") == "done"
    if done.timed_out:
        run.status, run.detail = "timeout", f"stopped after {timeout:.0f} s"
    elif not finished:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        run.status, run.detail = "crashed", tail[0][:300]
    return run
