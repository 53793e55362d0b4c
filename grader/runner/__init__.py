"""The execution layer: untrusted code run in a sandbox, cold or warm, under one Limits, watched from outside.

- limits.py: Limits, every limit of one run with its default;
- sandbox.py: the bwrap view, /etc files, one uid per running sandbox and the sweep (kernel_state.py, seccomp.py);
- watch.py: the one watcher (its protocol's records as progress; wall, stall and idle limits; CPU and wait);
- cold.py: a fresh interpreter per run (Cold, run_sandboxed, sandbox_level); warm.py: forks of one warm parent
  (Warm, shared), whose own program is boot.py. Cold and Warm have the same run(kind, payload, limits, ...);
- child.py, bridge.py, notebook.py: programs sent as text into the sandbox (a grading child, the bridge to its
  reference server, the feedback run's cell runner); so are driver_common.py and driver_visible.py, the prelude and
  the visible checks' cases around each assignment's driver (grader/contract.py's driver_source);
- protocol.py: the grader's side of a grading child; feed.py: the grader's end of a child's feed (items a
  scenario's child gets one at a time, each after answering the last).
"""
from .cold import LEVELS, Cold, NoSandbox, likely_level, run_sandboxed, sandbox_level
from .limits import CPU_MARGIN, Limits
from .protocol import BRIDGE_SOURCE, CHILD, SERVER_GRACE, ChildRun, Pair, Protocol, expected_lines, parse_child_output, run_child, run_pair
from .sandbox import UID_BASE, UID_COUNT, leftovers, python_view, sandbox_argv, sweep, sweep_all
from .warm import Warm, shared
from .watch import Finished, Watcher

__all__ = ["BRIDGE_SOURCE", "CHILD", "CPU_MARGIN", "LEVELS", "NoSandbox", "SERVER_GRACE", "ChildRun", "Cold", "Finished", "Limits", "Pair", "Protocol", "UID_BASE",
           "UID_COUNT", "Warm", "Watcher", "expected_lines", "leftovers", "parse_child_output", "python_view", "run_child", "run_pair",
           "likely_level", "run_sandboxed", "sandbox_argv", "sandbox_level", "shared", "sweep", "sweep_all"]
