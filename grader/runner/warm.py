"""Warm runs: forks of one warm parent per batch, so IPython, matplotlib, pandas and lab are imported once.

The parent (grader/runner/boot.py) runs in the sandbox's allow-list view; each run is a fork of it that
enters namespaces, a fresh scratch and a uid of its own before it reads its payload (see that file). This
process allocates the uid (level "bwrap"), has the run watched from outside (grader/runner/watch.py) and kills
whatever runs under the uid when the run ends (at level "userns": the run's process tree, whose pid namespace
ends with it). Its result records arrive on a pipe.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO

from .. import caches
from . import seccomp
from .cold import PROGRAMS, sandbox_level
from .limits import Limits
from .sandbox import STUDENT_UID, environment, python_view, sandbox_argv, sandbox_uid, sweep, sweep_all, tool
from .watch import Finished, Watcher, cpu_seconds, feed, kill_group, kill_tree, tree, watch

BOOT_SOURCE = Path(__file__).with_name("boot.py").read_text()


class Warm:
    """One warm parent (started on first use); run() may be called from several threads, as Cold.run."""

    def __init__(self, level: str | None = None):
        self.level = level or sandbox_level()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._scratch: tempfile.TemporaryDirectory | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fonts = font_list()
        argv = [sys.executable, "-I", "-c", BOOT_SOURCE, self.level, str(theirs.fileno()), PROGRAMS["grade"], PROGRAMS["notebook"],
                seccomp.encoded(), str(fonts.fileno()) if fonts else "-1", Path(fonts.name).name if fonts else ""]
        if self.level in ("bwrap", "userns"):
            cmd, cwd = sandbox_argv(argv, uid=0, ro=python_view(), privileged=True, userns=self.level == "userns"), "/"
            cmd[0] = tool("bwrap")
            env = environment("/tmp")
        else:
            self._scratch = tempfile.TemporaryDirectory(prefix="grader-warm-")
            cmd, cwd = argv, self._scratch.name
            env = environment(cwd)
        self._err = tempfile.TemporaryFile()
        with fonts or contextlib.nullcontext():   # the parent reads its own copy of the descriptor
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err,
                                          pass_fds=(theirs.fileno(), *([fonts.fileno()] if fonts else [])), env=env, cwd=cwd,
                                          start_new_session=True)
        theirs.close()
        self._sock = ours

    def start(self) -> "Warm":
        """Start the warm parent now (it imports in the background); returns self."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
        return self

    def cpu_seconds(self) -> float:
        """CPU time of the warm parent and of every run it has forked so far (from /proc)."""
        return cpu_seconds(tree(self._proc.pid)) if self._proc is not None and self._proc.poll() is None else 0.0

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._sock.close()  # the parent's recv returns empty: it exits
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self._proc.pid, signal.SIGKILL)
                    self._proc.wait()
                self._proc = None
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None
            if self.level == "bwrap":  # the end of a batch (at exit for shared()): what any sandbox uid left goes
                sweep_all()

    def _fork(self, request: dict, fds: list[int]) -> int:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()], fds)
                reply = self._sock.recv(4096)
            except OSError:
                reply = b""
            if not reply:
                self._err.seek(0)
                tail = self._err.read()[-400:].decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
                self._proc.kill()
                raise RuntimeError(f"the warm parent of the sandbox stopped: {tail[0]}")
            return json.loads(reply)["pid"]

    def run(self, kind: str, payload: dict, limits: Limits, *, watcher: Watcher | None = None,
            bridge_fds: tuple[int, int] = (), feed_fds: tuple[int, int] = ()) -> Finished:
        """Fork a run of `kind` ('grade' or 'notebook') on `payload`; return when it ends or is stopped.

        `bridge_fds` (read, write) go to the run as its bridge (grader/runner/bridge.py), `feed_fds` as its feed
        (grader/runner/feed.py); this process closes them."""
        watcher = watcher or Watcher()
        with contextlib.ExitStack() as stack:
            uid = stack.enter_context(sandbox_uid())[0] if self.level == "bwrap" else \
                STUDENT_UID if self.level == "userns" else os.getuid()
            payload_r, payload_w = os.pipe()
            result_r, result_w = os.pipe()
            request = {"kind": kind, "uid": uid, "rlimits": limits.rlimits(), "scratch": limits.scratch_bytes,
                       "shm": limits.shm_bytes, "bridge": bool(bridge_fds), "feed": bool(feed_fds)}
            try:
                pid = self._fork(request, [payload_r, result_w, *bridge_fds, *feed_fds])
            finally:
                for fd in (payload_r, result_w, *bridge_fds, *feed_fds):
                    os.close(fd)
            # The run's processes are found by walking the process tree down from it: a few reads of /proc,
            # where a scan of every process (by uid or group) would cost more than the run itself.
            root = _host_pid(self._proc.pid, pid) if self.level != "process" else pid
            members = functools.partial(tree, root) if root else list
            watcher.on_start(members)
            kill = functools.partial(sweep, uid) if self.level == "bwrap" else \
                functools.partial(kill_tree, root) if self.level == "userns" and root else functools.partial(kill_group, pid)
            threading.Thread(target=feed, args=(payload_w, json.dumps(payload).encode()), daemon=True).start()
            try:
                return watch(result_r, members, kill, limits, watcher)
            finally:
                if self.level != "bwrap":   # at bwrap, leaving sandbox_uid sweeps the uid (once is enough)
                    kill()


def font_list() -> BinaryIO | None:
    """matplotlib's font list as this process's matplotlib caches it (the newest fontlist-v*.json in its cache folder,
    found without importing matplotlib), open for reading; None if there is none. The warm parent copies it."""
    with contextlib.suppress(OSError, RuntimeError):   # RuntimeError: no home folder to be found
        home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"
        folder = Path(os.environ["MPLCONFIGDIR"]) if os.environ.get("MPLCONFIGDIR") else home
        found = sorted(folder.glob("fontlist-v*.json"), key=lambda p: p.stat().st_mtime)
        if found:
            return open(found[-1], "rb")
    return None


def _host_pid(bwrap_pid: int, ns_pid: int) -> int | None:
    """The host pid of the zygote's child that is `ns_pid` inside the zygote's pid namespace."""
    for pid in tree(bwrap_pid):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as handle:
            line = next((row for row in handle if row.startswith("NSpid:")), "")
            ids = line.split()[1:]
            if len(ids) == 3 and int(ids[2]) == ns_pid:  # host, bwrap's namespace, (the zygote's is the same)
                return pid
            if len(ids) == 2 and int(ids[1]) == ns_pid:
                return pid
    return None


_SHARED: dict[str | None, Warm] = {}
_SHARED_LOCK = threading.Lock()


def shared(level: str | None = None) -> Warm:
    """The process's warm parent for `level` (default: the sandbox level found here), closed at exit."""
    with _SHARED_LOCK:   # one per level, even when the first runs of a class ask together
        warm = _SHARED.get(level)
        if warm is None:
            warm = _SHARED[level] = Warm(level)
            atexit.register(warm.close)
    return warm


def _forget_shared() -> None:
    """Stop every warm parent (each is started again, fresh, on first use): a run in flight on one fails."""
    with _SHARED_LOCK:
        warms = list(_SHARED.values())
        _SHARED.clear()
    for warm in warms:
        warm.close()


caches.register("shared", "the sandbox level asked for (None: the one found here)",
                "a parent is a process started with the grader's programs (child.py, notebook.py) and lab as imported "
                "then: forget() stops it, and the next run starts a new one", _forget_shared)
