"""Where things live in the repository."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS_DIR = ROOT / "grader" / "assignments"
NOTEBOOKS_DIR = ROOT / "notebooks"
SOLUTIONS_DIR = ROOT / "solutions"
BUILD_DIR = ROOT / "build"
NBGRADER_CONFIG = ROOT / "grader" / "nbgrader_config.py"
MASTER = "master.py"   # an assignment is a folder of ASSIGNMENTS_DIR with this file in it (grader/assignment.py)


def assignment_names() -> list[str]:
    """Every assignment folder (one with a master source), in course order; other files there are ignored."""
    return sorted(p.name for p in ASSIGNMENTS_DIR.iterdir() if (p / MASTER).is_file())


def assignment_dir(name: str) -> Path:
    """The folder of an assignment; raises with the known names if absent."""
    path = ASSIGNMENTS_DIR / name
    if "/" in name or name.startswith(".") or not (path / MASTER).is_file():
        raise SystemExit(f"error: unknown assignment {name!r}; known: {', '.join(assignment_names())}")
    return path


def master_path(name: str) -> Path:
    """The master source of an assignment; raises with the known names if absent."""
    return assignment_dir(name) / MASTER
