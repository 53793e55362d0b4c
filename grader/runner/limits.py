"""What one sandboxed run may use: its time limits, rlimits and sizes, in one dataclass with described defaults."""
from __future__ import annotations

import resource
from dataclasses import dataclass

CPU_MARGIN = 5   # RLIMIT_CPU is the wall limit plus this many seconds when not set: the watcher stops a run first
# RLIMIT_NPROC: an honest run needs 1-3 tasks (measured at level bwrap while the solved notebooks of 01, 02 and 03 were
# graded: a grading child 2 at most, a feedback run 3, numpy, IPython and matplotlib included, with the sandbox's
# OPENBLAS_NUM_THREADS=1: sandbox.ONE_THREAD); a shell escape or a subprocess adds one or two, and level userns's cold
# runs count bwrap's own init. With a uid per sandbox a fork bomb exhausts only its own; but where the kernel does not
# group CPU time by session (no autogroup), each busy task weighs as much as the grading process: 256 left it a 257th.


@dataclass(frozen=True)
class Limits:
    """Every limit of one run, enforced from outside it (a hard rlimit cannot be raised by the code under test)."""

    wall: float = 120.0                # wall seconds the whole run may take
    stall: float | None = None         # CPU seconds it may spend while its result pipe brings no record (None: no limit)
    idle: float | None = None          # wall seconds it may go without a record; a sleep uses no CPU (None: no limit)
    cpu_seconds: int | None = None     # RLIMIT_CPU of each process (None: the wall limit plus CPU_MARGIN)
    memory_bytes: int = 2 << 30        # RLIMIT_AS of each process
    processes: int = 16                # RLIMIT_NPROC (threads count too), per uid: see above
    file_bytes: int = 64 << 20         # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 512              # RLIMIT_NOFILE
    scratch_bytes: int = 256 << 20     # size of its private /tmp (bwrap level)
    shm_bytes: int = 64 << 20          # size of its private /dev/shm (bwrap level)
    result_bytes: int = 64 << 20       # what it may write to its result pipe: the run ends there
    result_lines: int = 1 << 16        # lines of its result pipe: the run ends there too (each waits in the grader's memory)
    stderr_bytes: int = 256 << 10      # what of its stderr is kept (cold runs)

    @property
    def cpu(self) -> int:
        return self.cpu_seconds if self.cpu_seconds is not None else int(self.wall) + CPU_MARGIN

    def rlimits(self) -> list[tuple[str, int]]:
        """(RLIMIT_ name, value) for each rlimit a run gets, soft and hard alike; cores are never written."""
        return [("RLIMIT_CPU", self.cpu), ("RLIMIT_AS", self.memory_bytes), ("RLIMIT_FSIZE", self.file_bytes),
                ("RLIMIT_NPROC", self.processes), ("RLIMIT_NOFILE", self.open_files), ("RLIMIT_CORE", 0)]


def apply_rlimits(pairs: list[tuple[str, int]]) -> None:
    """Set each (RLIMIT_ name, value) as both soft and hard limit of this process (grader/runner/boot.py has a copy)."""
    for name, value in pairs:
        resource.setrlimit(getattr(resource, name), (value, value))
