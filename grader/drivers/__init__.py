"""Observation drivers: their *source text* is sent to grading children (see grader/runner/child.py)."""
from pathlib import Path

HERE = Path(__file__).parent


def driver_source(name: str) -> str:
    """The shared prelude plus the named driver, as one script for a child."""
    return (HERE / "common.py").read_text() + "\n\n" + (HERE / f"{name}.py").read_text()
