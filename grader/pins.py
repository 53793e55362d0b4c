"""The Pythons the course claims, the pins, and where each claimed Python lives on this machine.

`make check-pins` (grader/check_pins.py) checks the claims. Standard library only: the Makefile runs
`python -m grader.pins which 3.10` with the base Python, before any venv exists.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .paths import ROOT

LOCK = ROOT / "requirements.lock"
REQUIREMENTS = ROOT / "requirements.txt"
STUDENT = ROOT / "requirements-student.txt"
# What the README, the Makefile (make venv refuses others), environment.yml and lab's metadata claim.
# pip reads "3.11" as 3.11.0: the oldest release of each line is the one resolved for.
INSTRUCTOR_PYTHONS = ("3.11", "3.12", "3.13")
STUDENT_PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def pins(path: Path) -> dict[str, str]:
    """name -> version of each `name==version` line (names normalised as pip does)."""
    found = {}
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.split("#")[0].strip())
        if m:
            found[normalise(m.group(1))] = m.group(2)
    return found


def student_lines() -> list[str]:
    """The requirement lines of requirements-student.txt: ranges that `make check-pins` resolves on each student Python."""
    return [line.strip() for line in STUDENT.read_text().splitlines() if line.strip() and not line.startswith("#")]


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version_of(python: str) -> str | None:
    """X.Y.Z of an interpreter, or None if it does not run (pyenv's shim for a version not selected does not)."""
    try:
        proc = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def which(minor: str) -> tuple[str, str] | None:
    """(path, X.Y.Z) of the oldest interpreter of Python `minor` on this machine, or None."""
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    paths = [shutil.which(f"python{minor}"), f"/usr/bin/python{minor}",
             *glob.glob(f"{pyenv}/versions/{minor}.*/bin/python{minor}")]
    found = {}
    for path in dict.fromkeys(p for p in paths if p and os.path.exists(p)):
        version = version_of(path)
        if version and version.rsplit(".", 1)[0] == minor:
            found.setdefault(version, path)
    if not found:
        return None
    oldest = min(found, key=lambda v: tuple(map(int, v.split("."))))
    return found[oldest], oldest


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "which":
        print("usage: python -m grader.pins which 3.10   (the oldest interpreter of that Python here; exit 1 if none)")
        return 2
    found = which(argv[1])
    if found:
        print(found[0])
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
