"""Cold runs: a fresh interpreter per run, started in the sandbox (bwrap and setpriv, or a plain process)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from . import kernel_state, seccomp
from .limits import Limits, apply_rlimits
from .sandbox import INPUTS, environment, processes_of, python_view, sandbox_argv, sandbox_uid, tool
from .watch import Finished, Watcher, feed, group_of, kill_group, watch

PROGRAMS = {kind: Path(__file__).with_name(name).read_text() for kind, name in (("grade", "child.py"), ("notebook", "notebook.py"))}


def _may_probe() -> bool:
    """Root, bwrap and setpriv, a seccomp filter for this machine, and no GRADER_SANDBOX=process: what the probe needs."""
    if os.environ.get("GRADER_SANDBOX") == "process" or os.geteuid() != 0:
        return False
    return bool(tool("bwrap") and tool("setpriv")) and seccomp.supported()


def likely_level() -> str:
    """sandbox_level() once probed; before that, what it will be unless the probe fails (nothing is started)."""
    return sandbox_level() if sandbox_level.cache_info().currsize else "bwrap" if _may_probe() else "process"


@functools.lru_cache(maxsize=1)
def sandbox_level() -> str:
    """'bwrap' if the full sandbox works here (probed once), else 'process'."""
    if not _may_probe():
        return "process"
    try:
        done = run_sandboxed([sys.executable, "-I", "-c", "import os, lab; os.write(int(os.environ['GRADER_RESULT_FD']), b'ok')"],
                             Limits(wall=60), level="bwrap")
    except (OSError, RuntimeError):
        return "process"
    return "bwrap" if done.returncode == 0 and done.output == b"ok" else "process"


class Cold:
    """Runs each payload in a fresh interpreter: the same call as grader/runner/warm.py's Warm.run, nothing kept warm."""

    def __init__(self, level: str | None = None):
        self.level = level or sandbox_level()

    def run(self, kind: str, payload: dict, limits: Limits, *, watcher: Watcher | None = None,
            bridge_fds: tuple[int, int] = ()) -> Finished:
        """Run `kind` ('grade': grader/runner/child.py, 'notebook': notebook.py) on `payload`, given on stdin."""
        return run_sandboxed([sys.executable, "-I", "-c", PROGRAMS[kind]], limits, stdin=json.dumps(payload).encode(),
                             level=self.level, bridge_fds=bridge_fds, watcher=watcher)


def _env(scratch: str, result_fd: int, inputs: dict[str, str]) -> dict[str, str]:
    env = environment(scratch) | {"MPLBACKEND": "Agg", "GRADER_RESULT_FD": str(result_fd)}
    env.update({f"GRADER_INPUT_{name.upper()}": path for name, path in inputs.items()})
    return env


def _preexec(limits: Limits, level: str):
    rlimits = limits.rlimits()

    def apply() -> None:  # in the child before exec: own session and keyring, and caps the code cannot raise
        os.setsid()
        kernel_state.new_session_keyring()
        apply_rlimits(rlimits)
        if level == "process":  # bwrap installs it itself (--seccomp), after its own unshare and mounts
            seccomp.install()
    return apply


def _drain(stream, sink: bytearray, cap: int) -> None:
    while chunk := stream.read1(65536):
        if len(sink) < cap:
            sink.extend(chunk[: cap - len(sink)])


def _exited(proc: subprocess.Popen, seconds: float) -> bool:
    """Has the run's process ended? Waits up to `seconds` for it."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=seconds) if seconds else proc.poll()
    return proc.returncode is not None


def run_sandboxed(argv: list[str], limits: Limits, *, stdin: bytes = b"", inputs: dict[str, Path] | None = None,
                  level: str | None = None, bridge_fds: tuple[int, int] = (), watcher: Watcher | None = None) -> Finished:
    """Run `argv` at the sandbox level under `limits`; its results go to the fd named by $GRADER_RESULT_FD.

    `inputs` are seen read-only (bwrap: under /inputs/<name>), named by $GRADER_INPUT_<NAME>.
    `bridge_fds` (read, write) reach the command as $GRADER_BRIDGE_FDS; this process closes them.
    `watcher` (a Watcher): hooks on the run's start and records, and a periodic check that may end it."""
    level = level or sandbox_level()
    inputs = {name: Path(path) for name, path in (inputs or {}).items()}
    read_fd, write_fd = os.pipe()
    with contextlib.ExitStack() as stack:
        passed = [write_fd]
        if level == "bwrap":
            uid, etc_dir = stack.enter_context(sandbox_uid())
            members = functools.partial(processes_of, uid)
            scratch = "/tmp"
            env = _env(scratch, write_fd, {n: f"{INPUTS}/{n}" for n in inputs})
            program = seccomp.memfd()
            stack.callback(os.close, program)
            passed.append(program)
            cmd = sandbox_argv(argv, uid=uid, ro=python_view(), inputs=inputs, cwd=scratch,
                               limits=limits, etc_dir=etc_dir, seccomp_fd=program)
            cmd[0] = tool("bwrap")
            cwd = "/"
        else:
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="grader-scratch-"))
            env = _env(scratch, write_fd, {n: str(p) for n, p in inputs.items()})
            # A throwaway shell between us and the command, so that its parent pid is not the grader.
            cmd, cwd = ["sh", "-c", '"$@"; exit $?', "grader-process", *argv], scratch
            members = None  # the process group it starts
        if bridge_fds:
            env["GRADER_BRIDGE_FDS"] = ",".join(map(str, bridge_fds))
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    cwd=cwd, env=env, pass_fds=[*passed, *bridge_fds], preexec_fn=_preexec(limits, level))
        finally:
            for fd in (write_fd, *bridge_fds):
                os.close(fd)
        err = bytearray()
        stderr = threading.Thread(target=_drain, args=(proc.stderr, err, limits.stderr_bytes), daemon=True)
        stderr.start()
        threading.Thread(target=feed, args=(os.dup(proc.stdin.fileno()), stdin), daemon=True).start()
        proc.stdin.close()
        members = members or functools.partial(group_of, proc.pid)
        watcher = watcher or Watcher()
        watcher.on_start(members)
        # bwrap's --die-with-parent takes its namespace down with it
        done = watch(read_fd, members, functools.partial(kill_group, proc.pid), limits, watcher,
                     exited=functools.partial(_exited, proc))
        proc.wait()
        stderr.join(timeout=5)
        done.returncode, done.stderr = proc.returncode, bytes(err)
        return done
