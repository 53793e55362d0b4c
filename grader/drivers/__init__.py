"""Observation drivers: their *source text* is sent to grading children (see grader/child.py)."""
from pathlib import Path


def driver_source(name: str) -> str:
    return (Path(__file__).with_name(f"{name}.py")).read_text()
