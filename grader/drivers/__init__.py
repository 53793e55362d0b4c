"""Observation drivers: their *source text* is sent to grading children (see grader/runner/child.py).

Each assignment's driver is grader/assignments/<name>/driver.py; common.py is the prelude all of them share."""
from pathlib import Path

HERE = Path(__file__).parent


def driver_source(folder: Path) -> str:
    """The shared prelude plus the assignment's driver, as one script for a child."""
    return (HERE / "common.py").read_text() + "\n\n" + (folder / "driver.py").read_text()
