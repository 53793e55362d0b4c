"""Observation drivers: their *source text* is sent to grading children (see grader/runner/child.py).

Each assignment's driver is grader/assignments/<name>/driver.py; common.py is the prelude all of them share, and
visible.py, appended to each, replays the cases of the visible check cells (grader/suites/visible.py)."""
from pathlib import Path

HERE = Path(__file__).parent


def driver_source(folder: Path) -> str:
    """The shared prelude, the assignment's driver and the visible checks' cases, as one script for a child."""
    return "\n\n".join((path.read_text() for path in (HERE / "common.py", folder / "driver.py", HERE / "visible.py")))
