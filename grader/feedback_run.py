"""The feedback run: nbgrader executes a submission in the sandbox; the grader renders an inert page.

The sandbox gets a read-only course built from the *release* edition (no solutions, no hidden
tests, so its kernel holds nothing worth stealing) plus the submission, and sends the executed
notebook back through a pipe. No host path is writable from the sandbox; the grader parses what
came back as untrusted data and renders it in a fresh folder only the grader can write.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nbformat

from . import masters
from .build import nbgrader
from .paths import NBGRADER_CONFIG, NOTEBOOKS_DIR
from .safe_io import write_new
from .sandbox import Limits, run_sandboxed

BOOT_SOURCE = Path(__file__).with_name("feedback_boot.py").read_text()
WALL_SECONDS = 600
STALL_SECONDS = None      # the run reports once, at the end: the wall limit bounds it
MAX_NOTEBOOK = 48 << 20


def make_feedback_course(course: Path, assignment: str) -> Path:
    """An nbgrader course whose source is the student edition: nothing in it is secret."""
    course.mkdir(parents=True, exist_ok=True)
    shutil.copy(NBGRADER_CONFIG, course / "nbgrader_config.py")
    source = course / "source" / assignment
    source.mkdir(parents=True, exist_ok=True)
    release = nbformat.read(NOTEBOOKS_DIR / f"{assignment}.ipynb", as_version=4)
    leaked = [gid for gid, cells in masters.cells_by_grade_id(release).items()
              if any("BEGIN HIDDEN TESTS" in c.source or "BEGIN SOLUTION" in c.source for c in cells)]
    if leaked:
        raise RuntimeError(f"the release edition of {assignment} holds hidden code in {leaked}: run make notebooks")
    nbformat.write(release, source / f"{assignment}.ipynb")
    nbgrader(course, "generate_assignment", assignment, "--force", "--log-level=WARN")
    for path in [course, *course.rglob("*")]:  # readable by the sandbox's uid, writable by nobody but us
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return course


def execute_in_sandbox(template: Path, staging: Path, submission: bytes, assignment: str, student: str,
                       cell_timeout: int, wall: float = WALL_SECONDS) -> tuple[nbformat.NotebookNode | None, str]:
    """(the executed notebook, '') or (None, why not). `staging` is a fresh grader-only folder."""
    course = staging / "course"
    shutil.copytree(template, course)
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True)
    write_new(folder / f"{assignment}.ipynb", submission)
    for path in [staging, *staging.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    done = run_sandboxed([sys.executable, "-I", "-c", BOOT_SOURCE, assignment, student, str(cell_timeout)],
                         timeout=wall, stall=STALL_SECONDS, inputs={"course": course},
                         limits=Limits(cpu_seconds=int(wall) + 5, memory_bytes=4 << 30, processes=512))
    if done.timed_out:
        return None, f"ran past the {wall:.0f} s limit"
    head, _, body = done.output.partition(b"\n")
    try:
        header = json.loads(head)
        if set(header) != {"returncode", "stderr"} or type(header["returncode"]) is not int:
            raise ValueError
    except (ValueError, TypeError, UnicodeDecodeError):
        return None, "the sandbox sent no readable result"
    if not body:
        return None, " ".join(str(header["stderr"]).split())[:200] or f"exit code {header['returncode']}"
    if len(body) > MAX_NOTEBOOK:
        return None, f"the executed notebook is larger than {MAX_NOTEBOOK >> 20} MiB"
    try:
        return nbformat.reads(body.decode("utf-8"), as_version=4), ""
    except Exception as exc:  # noqa: BLE001 - whatever came back is the student's, and may be anything
        return None, f"the executed notebook could not be read ({type(exc).__name__})"
