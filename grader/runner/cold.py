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

from .. import caches
from . import kernel_state, seccomp
from .limits import Limits, apply_rlimits
from .sandbox import INPUTS, STUDENT_UID, environment, etc_files, processes_of, python_view, sandbox_argv, sandbox_uid, tool
from .watch import Finished, Watcher, feed, group_of, inside, kill_group, kill_tree, watch

PROGRAMS = {kind: Path(__file__).with_name(name).read_text() for kind, name in (("grade", "child.py"), ("notebook", "notebook.py"))}


# The levels, strongest first, each as the instructor is told it; "process" isolates nothing and is used only when asked for.
LEVELS = {"bwrap": "root: bubblewrap, a uid per student",
          "userns": "no root: bubblewrap in user namespaces, one uid for all students (docs in grader/runner/sandbox.py)",
          "process": "NO ISOLATION, as asked: a submission can read what you can, the reference included"}
ASKED = ("auto", "userns", "process")     # what GRADER_SANDBOX (and Config.sandbox) may say


class NoSandbox(RuntimeError):
    """No level that isolates a submission works here, and the process level was not asked for."""


def asked() -> str:
    """What GRADER_SANDBOX asks for ('auto' when unset); an unknown value is an error, never a weaker sandbox."""
    value = os.environ.get("GRADER_SANDBOX") or "auto"
    if value not in ASKED:
        raise NoSandbox(f"GRADER_SANDBOX={value!r} is not one of {', '.join(ASKED)}")
    return value


def why_not(level: str) -> str:
    """'' where `level`'s tools and privileges are here (not yet probed), else why not."""
    if not seccomp.supported():
        return f"the seccomp filter does not know this machine ({os.uname().machine})"
    if not tool("bwrap"):
        return "bubblewrap (bwrap) is not installed"
    if level == "bwrap" and os.geteuid() != 0:
        return "not root: no uid per student"
    if level == "bwrap" and not tool("setpriv"):
        return "util-linux's setpriv is missing (the root level needs it)"
    if level == "userns" and not tool("prlimit"):   # a run's RLIMIT_NPROC is set inside its user namespace with it
        return "util-linux's prlimit is missing (the userns level needs it)"
    return ""


def _candidates() -> tuple[list[str], str]:
    """The isolating levels worth probing here, strongest first, and why the others are not."""
    if asked() == "process":
        return [], "the process level was asked for"
    wanted = ["bwrap", "userns"] if asked() == "auto" else ["userns"]
    why = {level: why_not(level) for level in wanted}
    if len(set(why.values())) == 1 and why[wanted[0]]:   # one cause for all (no bwrap, no seccomp): said once
        return [], why[wanted[0]]
    return [level for level in wanted if not why[level]], "; ".join(w for w in why.values() if w)


def likely_level() -> str:
    """sandbox_level() once probed; before that, what it will be unless the probe fails (nothing is started)."""
    if sandbox_level.cache_info().currsize:
        return sandbox_level()
    return (_candidates()[0] or ["process"])[0]


@caches.cached("nothing (one level per process)", "the probe's answer holds while GRADER_SANDBOX and the machine stay as they "
               "are: use_sandbox() and Gradescope's run clear it when they set GRADER_SANDBOX", maxsize=1)
def sandbox_level() -> str:
    """The strongest level that works here (probed once): 'bwrap', 'userns', or 'process' where asked for.

    Raises NoSandbox, with what was found and how to get a sandbox, where no level isolates a submission and
    GRADER_SANDBOX=process was not set: grading then stops instead of running students as the grader's user."""
    if asked() == "process":
        return "process"
    levels, why = _candidates()
    found = [why] if why else []
    for level in levels:
        problem = _probe(level)
        if not problem:
            return level
        found.append(f"{level}: {problem}")
    raise NoSandbox(refusal("; ".join(found)))


def _probe(level: str) -> str:
    """'' if a run at `level` starts, imports lab and reports; else what went wrong."""
    try:
        done = run_sandboxed([sys.executable, "-I", "-c", "import os, lab; os.write(int(os.environ['GRADER_RESULT_FD']), b'ok')"],
                             Limits(wall=60), level=level)
    except (OSError, RuntimeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0 and done.output == b"ok":
        return ""
    tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
    return tail[0][:300]


def refusal(found: str) -> str:
    """Why grading stops where no sandbox works, and the ways to get one."""
    return ("no grading sandbox works here, so grading stops: without one, a submission runs as you and can read the "
            f"reference solution and score with it.\n  found: {found}\n"
            "  get one of:\n"
            "  - bubblewrap with unprivileged user namespaces (no root needed): `sudo apt-get install bubblewrap`; where "
            "they are restricted (Ubuntu 24.04: `sysctl kernel.apparmor_restrict_unprivileged_userns`), allow them for bwrap "
            "or set that to 0;\n"
            "  - root (`make sandbox-deps`, then grade as root): a uid per student as well;\n"
            "  - a throwaway container or VM in which you are root.\n"
            "  Or grade without isolation, knowingly: `make autograde ... SANDBOX=process`, `--sandbox process`, "
            "GRADER_SANDBOX=process, or c.SandboxedAutograde.sandbox = 'process' in nbgrader_config.py.")


class Cold:
    """Runs each payload in a fresh interpreter: the same call as grader/runner/warm.py's Warm.run, nothing kept warm."""

    def __init__(self, level: str | None = None):
        self.level = level or sandbox_level()

    def run(self, kind: str, payload: dict, limits: Limits, *, watcher: Watcher | None = None,
            bridge_fds: tuple[int, int] = (), feed_fds: tuple[int, int] = ()) -> Finished:
        """Run `kind` ('grade': grader/runner/child.py, 'notebook': notebook.py) on `payload`, given on stdin."""
        return run_sandboxed([sys.executable, "-I", "-c", PROGRAMS[kind]], limits, stdin=json.dumps(payload).encode(),
                             level=self.level, bridge_fds=bridge_fds, feed_fds=feed_fds, watcher=watcher)


def _env(scratch: str, result_fd: int, inputs: dict[str, str]) -> dict[str, str]:
    env = environment(scratch) | {"MPLBACKEND": "Agg", "GRADER_RESULT_FD": str(result_fd)}
    env.update({f"GRADER_INPUT_{name.upper()}": path for name, path in inputs.items()})
    return env


def _preexec(limits: Limits, level: str):
    # userns: RLIMIT_NPROC is set inside the run's user namespace (sandbox.sandbox_argv), where it counts its processes alone
    rlimits = [(name, value) for name, value in limits.rlimits() if level != "userns" or name != "RLIMIT_NPROC"]

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
                  level: str | None = None, bridge_fds: tuple[int, int] = (), feed_fds: tuple[int, int] = (),
                  watcher: Watcher | None = None) -> Finished:
    """Run `argv` at the sandbox level under `limits`; its results go to the fd named by $GRADER_RESULT_FD.

    `inputs` are seen read-only (bwrap: under /inputs/<name>), named by $GRADER_INPUT_<NAME>.
    `bridge_fds` (read, write) reach the command as $GRADER_BRIDGE_FDS, `feed_fds` (grader/runner/feed.py) as
    $GRADER_FEED_FDS; this process closes them.
    `watcher` (a Watcher): hooks on the run's start and records, and a periodic check that may end it."""
    level = level or sandbox_level()
    inputs = {name: Path(path) for name, path in (inputs or {}).items()}
    read_fd, write_fd = os.pipe()
    with contextlib.ExitStack() as stack:
        passed = [write_fd]
        if level in ("bwrap", "userns"):
            if level == "bwrap":
                uid, etc_dir = stack.enter_context(sandbox_uid())
                members = functools.partial(processes_of, uid)
            else:  # killed by its pid namespace: bwrap's --die-with-parent takes it down with bwrap
                uid, etc_dir, members = STUDENT_UID, etc_files(STUDENT_UID), None
            scratch = "/tmp"
            env = _env(scratch, write_fd, {n: f"{INPUTS}/{n}" for n in inputs})
            program = seccomp.memfd()
            stack.callback(os.close, program)
            passed.append(program)
            cmd = sandbox_argv(argv, uid=uid, ro=python_view(), inputs=inputs, cwd=scratch,
                               limits=limits, etc_dir=etc_dir, seccomp_fd=program, userns=level == "userns")
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
        if feed_fds:
            env["GRADER_FEED_FDS"] = ",".join(map(str, feed_fds))
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    cwd=cwd, env=env, pass_fds=[*passed, *bridge_fds, *feed_fds], preexec_fn=_preexec(limits, level))
        finally:
            for fd in (write_fd, *bridge_fds, *feed_fds):
                os.close(fd)
        err = bytearray()
        stderr = threading.Thread(target=_drain, args=(proc.stderr, err, limits.stderr_bytes), daemon=True)
        stderr.start()
        threading.Thread(target=feed, args=(os.dup(proc.stdin.fileno()), stdin), daemon=True).start()
        proc.stdin.close()
        if level == "userns":
            members, kill = functools.partial(inside, proc.pid), functools.partial(kill_tree, proc.pid)
        else:
            members, kill = members or functools.partial(group_of, proc.pid), functools.partial(kill_group, proc.pid)
        watcher = watcher or Watcher()
        watcher.on_start(members)
        # bwrap's --die-with-parent takes its namespace down with it
        done = watch(read_fd, members, kill, limits, watcher, exited=functools.partial(_exited, proc))
        proc.wait()
        stderr.join(timeout=5)
        done.returncode, done.stderr = proc.returncode, bytes(err)
        return done
